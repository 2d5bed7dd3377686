// `posenc apply`: RoPE applied to a tensor read from a JSON file, with the runtime-dispatch
// kernels (posenc/kernels/dispatch.hpp; the ISA this CPU supports best, or POSENC_ISA).
//
// Input:  {"x": [flat numbers], "shape": [tokens, heads, head_dim], "positions": [ints]}
//         x row-major [tokens][heads][head_dim]; positions optional (default 0 .. tokens-1),
//         one per token, each 0 <= p < 2^32. No other keys.
// Output: {"y": [...]} in the same order (json); csv and text: one row per (token, head).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <posenc/spec/rope.hpp>

#include "cli/options.hpp"

namespace posenc::cli {

// Default limits of one call: at most 2^24 elements in x, input files of at most 1 GiB
// (--max-elements, --max-input-bytes).
inline constexpr std::uint64_t max_apply_elements = std::uint64_t{1} << 24;
inline constexpr std::uint64_t max_apply_file_bytes = std::uint64_t{1} << 30;

struct apply_input {
  std::size_t tokens = 0;
  std::size_t heads = 0;
  std::size_t head_dim = 0;
  std::vector<float> x;                 // tokens * heads * head_dim, each rounded once to float
  std::vector<std::int64_t> positions;  // tokens entries
};

// Parses and checks the input text (`name` is the file name for messages), with at most
// max_elements numbers in x. Throws cli_error (exit 1) with a one-line message on the first
// problem.
apply_input parse_apply_input(std::string_view text, const std::string& name,
                              std::uint64_t max_elements = max_apply_elements);

// An unknown POSENC_ISA, or one this CPU cannot run, is an error (exit 1) naming the ISAs this
// machine can run: the library's dispatcher would fall back to its own choice without a word.
void require_valid_isa_request();

// Reads and parses the file (at most max_bytes; --max-input-bytes, --max-elements). Throws
// cli_error (exit 1).
apply_input load_apply_input(const std::string& path,
                             std::uint64_t max_bytes = max_apply_file_bytes,
                             std::uint64_t max_elements = max_apply_elements);

struct apply_result {
  std::size_t tokens = 0;
  std::size_t heads = 0;
  std::size_t head_dim = 0;
  std::vector<std::int64_t> positions;
  std::vector<float> y;
  const char* isa = "";  // the kernels that ran (dispatch::active_isa())
};

// RoPE of c applied to in.x: a cos/sin table for positions [0, max + 1) when that has at most
// 2^24 entries (runtime_rope_cache<float>), else every row computed on the fly (the same bits).
// c must be valid. Throws cli_error (exit 1) if in does not fit c (head_dim, rotary_dim).
apply_result compute_apply(const rope_config& c, const apply_input& in, std::uint64_t seq_len);

void write_apply(std::ostream& out, const apply_result& r, output_format f);

// The whole `apply` command: input, configuration (head_dim defaults to shape[2] when no flag,
// preset or config.json gives one), kernels, output. Returns exit_ok; throws cli_error.
int run_apply(const invocation& inv, std::ostream& out);

}  // namespace posenc::cli
