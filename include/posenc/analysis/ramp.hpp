// Per-pair interpolation weights of the scalings that blend two frequencies, YaRN and llama3: how
// much of pair i is position-interpolated (theta_i / factor) and how much is left as it was
// (theta_i = base^(-2i/R)). The values are those inv_freq_dd blends with (spec/rope.hpp,
// whose spec_detail functions compute them), so that
//
//   inv_freq_dd(c, i) = theta_i / factor * w + theta_i * (1 - w),   w = interpolation_weight(c, i)
//
// holds for both scalings (up to the double-double rounding of the blend, ~2^-104 relative).
// Each is also given in its source's own convention:
//   yarn_ramp_factor      HF linear_ramp_factor over find_correction_range (docs/formulas.md
//                         §2 "yarn"; Peng et al. 2023, "YaRN", §3.2 NTK-by-parts, whose gamma is
//                         1 - ramp):
//                         0 = theta_i unchanged (extrapolated; the fast pairs i <= low),
//                         1 = theta_i / factor (interpolated; the slow pairs i >= high).
//                         HF's inv_freq_extrapolation_factor is 1 - ramp.
//   llama3_smooth_factor  HF _compute_llama3_parameters' smooth_factor (formulas.md §2 "llama3"):
//                         1 = theta_i unchanged (wavelength < L / high_freq_factor),
//                         0 = theta_i / factor (wavelength > L / low_freq_factor),
//                         (L / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
//                         between, continuous at both edges. It is 1 - interpolation_weight.
#pragma once

#include <cstdint>
#include <limits>

#include <posenc/math/double_double.hpp>
#include <posenc/spec/rope.hpp>

namespace posenc::analysis {

// HF linear_ramp_factor at pair i of a yarn config (validate(c) == ok, scaling yarn): 0 keeps
// theta_i, 1 divides it by the factor.
constexpr math::dd yarn_ramp_factor(const rope_config& c, std::uint32_t i) {
  return spec_detail::yarn_ramp(spec_detail::yarn_correction_range(c), i);
}

// The correction range [low, high] of a yarn config in pair indices, as HF find_correction_range
// returns it (floor/ceil with truncate, clamped to [0, R - 1], widened by 0.001 if empty).
constexpr spec_detail::yarn_range yarn_ramp_range(const rope_config& c) {
  return spec_detail::yarn_correction_range(c);
}

// HF smooth_factor at pair i of a llama3 config (validate(c) == ok, scaling llama3): 1 keeps
// theta_i, 0 divides it by the factor.
constexpr math::dd llama3_smooth_factor(const rope_config& c, std::uint32_t i) {
  return spec_detail::llama3_smooth(c, spec_detail::default_inv_freq(c, i));
}

// The weight w of theta_i / factor in pair i's frequency: yarn_ramp_factor for yarn,
// 1 - llama3_smooth_factor for llama3; 1 for linear (every pair interpolated) and 0 for none. NaN
// for ntk, dynamic and longrope, whose frequencies are not such a blend.
constexpr math::dd interpolation_weight(const rope_config& c, std::uint32_t i) {
  switch (c.scaling.type) {
    case scaling_type::none:
      return {0.0, 0.0};
    case scaling_type::linear:
      return {1.0, 0.0};
    case scaling_type::yarn:
      return yarn_ramp_factor(c, i);
    case scaling_type::llama3:
      return math::dd{1.0, 0.0} - llama3_smooth_factor(c, i);
    default:
      break;
  }
  return {std::numeric_limits<double>::quiet_NaN(), 0.0};
}

// Whether interpolation_weight is a meaningful per-pair ramp for c (yarn or llama3).
constexpr bool has_ramp(const rope_config& c) {
  return c.scaling.type == scaling_type::yarn || c.scaling.type == scaling_type::llama3;
}

}  // namespace posenc::analysis
