// `posenc accuracy`: how far the float32 cos/sin of three ways of building a RoPE table are from
// the exact values, position by position (docs/accuracy.md).
//
// For a position p the error of a method is max over pairs i of |cos_i - C_i(p)| and
// |sin_i - S_i(p)|, with C_i(p) = af cos(p theta_i), S_i(p) = af sin(p theta_i), theta_i =
// inv_freq_dd (the library's double-double frequency of the configuration) and af =
// attention_factor_dd. "Exact" is the double-double path (math::sincos_of_product_dd times af):
// its error is below 1e-25, far below a float ulp (2^-24 near 1).
//
//   posenc  the library's float32 table: math::sincos_of_product<float>, the exact value rounded
//           once (<= 0.5 ulp).
//   hf      HF transformers' float32 angle (modeling_rope_utils.py _compute_*_parameters gives
//           inv_freq as float32; models/llama/modeling_llama.py LlamaRotaryEmbedding.forward
//           multiplies fl32(p) by it in float32, takes cos/sin and multiplies them by
//           attention_scaling): a = fl32(fl32(p) * inv_freq32_i), cos/sin of a, times fl32(af)
//           in float when af != 1. inv_freq32 is hf_inv_freq32 below; cos/sin of a are taken
//           correctly rounded (torch's and libm's float cos/sin are within 1 ulp of that).
//   ggml    ggml's CPU rope cache (ggml/src/ggml-cpu/ops.cpp, ggml_rope_cache_init and
//           rope_yarn): theta_scale = powf(freq_base, -2.0f/n_dims), theta = (float)p, and per
//           pair cos = cosf(theta/ff * freq_scale) * attn_factor, then theta *= theta_scale in
//           float. powf and cosf/sinf are taken correctly rounded (glibc's are within 1 ulp).
//           Emulated for scaling none, linear (freq_scale = 1.0f/factor, llama.cpp
//           rope_freq_scale_train) and llama3 (ff = the per-pair factor rounded to float32, the
//           rope_freqs tensor of convert_hf_to_gguf.py); not for the other scalings, which ggml
//           applies differently (absent from the output).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include <posenc/spec/rope.hpp>

#include "cli/options.hpp"
#include "cli/svg.hpp"

namespace posenc::cli {

// HF's float32 inv_freq of pair i: for scaling none, linear and llama3 torch's float32 sequence
// of operations (modeling_rope_utils.py) with a correctly rounded powf (which reproduces the
// bits of tests/golden/hf_rope_params.json); for the other scalings inv_freq_dd rounded
// once to float (HF's own is within a few ulps of it, tests/golden/README.md).
bool hf_inv_freq_emulated(scaling_type t);
float hf_inv_freq32(const rope_config& c, std::uint32_t i, std::uint64_t seq_len);

// The positions of `accuracy` without --positions, and of its SVG sweep (log-spaced, 16 a decade
// from 1 to 10^7).
inline constexpr std::uint64_t accuracy_default_positions[] = {1000, 65536, 1000000};
std::vector<std::uint64_t> accuracy_sweep_positions();

struct accuracy_point {
  std::uint64_t position = 0;
  double posenc = 0.0;
  double hf = 0.0;
  std::optional<double> ggml;  // absent for scalings ggml is not emulated for
};

struct accuracy_result {
  std::uint32_t rotary_dim = 0;
  double attention_factor = 1.0;
  bool ggml = false;  // whether the ggml method is emulated for this configuration
  std::vector<accuracy_point> points;
};

// c must be valid; positions below 2^32. Throws cli_error (exit 1) when a frequency does not fit
// in float32.
accuracy_result compute_accuracy(const rope_config& c, std::span<const std::uint64_t> positions,
                                 std::uint64_t seq_len);

// json {"rotary_dim", "attention_factor", "exact", "positions": [{"position", "posenc",
//       "hf_float32_angle", "ggml_running_product" (null when not emulated)}]}
// csv  position,posenc,hf_float32_angle,ggml_running_product (empty when not emulated)
// text aligned columns. Errors printed with 17 significant digits (json, csv) or 4 (text).
void write_accuracy(std::ostream& out, const accuracy_result& r, output_format f,
                    const config_echo& echo);

// The log-log plot of the three methods' errors against position.
svg::plot accuracy_plot(const accuracy_result& r, const std::string& title);

// The work budget of one call, in (position, pair) evaluations of the double-double reference
// (about 5 us each): (positions + the sweep's, with --svg) x rotary_dim/2, checked before any work;
// --work-limit N raises it.
inline constexpr std::uint64_t accuracy_work_limit = std::uint64_t{1} << 22;

// The whole command: the table at --positions (default accuracy_default_positions) on `out`,
// and with --svg FILE the plot of the sweep. Returns exit_ok; throws cli_error.
int run_accuracy(const invocation& inv, std::ostream& out);

}  // namespace posenc::cli
