// `posenc emit --lang c|cpp`: a self-contained C99 or C++20 header holding the float32 cos/sin
// table of a configuration for positions [0, max_pos) and a small rotation function.
//
// The header carries, in its leading comment, every field of the configuration and the accuracy
// of its table, measured while emitting it: each entry's distance from the double-double value
// (math::sincos_of_product_dd times attention_factor_dd, whose own error is below 1e-25, far
// under a float ulp) in absolute terms and in ulps. The tables are exact float literals (hex
// floats), in the compact form (R/2 entries per position) or the expanded "simd" form of
// posenc/kernels/rope_table.hpp (R entries per position, by channel).
//
// The rotation functions use the operation order of posenc::kernels::rope_reference with
// fma_mode::unfused (each product rounded to float, then the sum), so they give its bits. They
// reject a position >= max_pos with an error code before writing anything; they use no libm and
// no allocation.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <posenc/spec/rope.hpp>

#include "cli/options.hpp"

namespace posenc::cli {

// One emitted header holds at most this many table entries per array (max_pos x rotary_dim), a
// header of about 40 MB at most.
inline constexpr std::uint64_t max_emit_entries = std::uint64_t{1} << 21;

// The configuration as lines "name value" (every field of rope_config and its scaling, the
// derived attention factor, seq_len), for comments and reports.
std::vector<std::string> describe_config(const rope_config& c, std::uint64_t seq_len);

// Accuracy of a float table against the double-double values.
struct table_accuracy {
  double max_abs_error = 0.0;
  std::uint64_t worst_position = 0;
  std::uint32_t worst_pair = 0;
  bool worst_is_sin = false;
  double max_ulp_error = 0.0;  // |entry - exact| / ulp(exact rounded to float)
};

// The header text. c must be valid; f as parse_args checks it. Throws cli_error: exit 1 when the
// table would exceed max_emit_entries or its values do not fit in float32, exit 2 for a --name
// that is not a usable identifier.
// `echo`, if given, adds the resolved values with their sources to the leading comment (the
// "# NAME = V (S)" lines of output.hpp's echo_header, "*/" broken up).
std::string emit_header(const rope_config& c, const emit_flags& f, std::uint64_t seq_len,
                        const config_echo* echo = nullptr);

// The whole `emit` command: configuration, header, output. Returns exit_ok; throws cli_error.
int run_emit(const invocation& inv, std::ostream& out);

}  // namespace posenc::cli
