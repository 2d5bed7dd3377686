// The numbers each command prints, computed in full before anything is written (so an error never
// leaves partial output): inv_freq of every pair, and cos/sin tables with the attention factor
// applied, from posenc/frequencies, posenc/tables and posenc/math (each value rounded once).
#pragma once

#include <posenc/spec/rope.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cli/options.hpp"

namespace posenc::cli {

struct freqs_result {
  std::uint32_t rotary_dim = 0;
  std::vector<float> inv_freq;       // posenc::inv_freq<float>
  std::vector<double> inv_freq_f64;  // posenc::inv_freq<double>
  double attention_factor = 1.0;     // posenc::attention_factor
};

// The quantities every RoPE command derives from a valid configuration, checked before any work
// or output (docs/cli.md, "Finite or an error"): the library's derived rules (spec/rope.hpp:
// attention_factor_float32, yarn_correction_range, inv_freq_float32, each at every seq_len);
// throws cli_error (exit 1) with the rule's message.
void check_derived(const rope_config& c, std::uint64_t seq_len);

// c must be valid. Throws cli_error (exit 1) when a frequency does not fit in float32.
freqs_result compute_freqs(const rope_config& c, std::uint64_t seq_len);

// One `table` call covers at most this many entries (positions x rotary_dim/2 pairs):
// 128 MiB of float32 cos and sin.
inline constexpr std::uint64_t max_table_entries = std::uint64_t{1} << 24;

struct table_result {
  position_range positions;
  std::uint32_t pairs = 0;
  // Row-major [position - positions.first][pair]: scale * cos/sin(p * theta_i), rounded once to
  // float, scale = the attention factor (as math::sincos_of_product<float>).
  std::vector<float> cos;
  std::vector<float> sin;
};

// c must be valid; r as parse_args checks it. Throws cli_error (exit 1) when the table would
// exceed max_table_entries, or its values do not fit in float32.
table_result compute_table(const rope_config& c, position_range r, std::uint64_t seq_len);

}  // namespace posenc::cli
