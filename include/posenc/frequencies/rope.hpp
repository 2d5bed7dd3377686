// RoPE inverse frequencies theta_i and the attention factor, for every scaling, as exact as the
// double-double math allows (relative error ~2^-100 before the final rounding). One constexpr
// function each, used by compile-time tables and at run time alike. Formulas and defaults follow
// HF transformers src/transformers/modeling_rope_utils.py (docs/formulas.md §2); HF evaluates
// them in float32 and lands up to a few ulp from the exact values that these functions round once.
//
// seq_len is HF's runtime sequence length (max(position_ids) + 1); 0 means "none" (HF
// seq_len=None). Only dynamic and longrope depend on it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include <posenc/math/detail/series.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/exp.hpp>
#include <posenc/math/log.hpp>
#include <posenc/math/pow.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/spec/rope.hpp>

namespace posenc {

namespace frequencies_detail {
using math::dd;

// base^(-2i/R)
constexpr dd default_inv_freq(const rope_config& c, std::uint32_t i) {
  return math::pow_ratio(c.base, -2 * static_cast<std::int64_t>(i),
                         static_cast<std::int64_t>(c.rotary_dim));
}

// x^(-2i/(R-2)): the NTK base change base' = base * x^(R/(R-2)) turns base'^(-2i/R) into
// base^(-2i/R) * x^(-2i/(R-2)).
constexpr dd ntk_correction(dd x, const rope_config& c, std::uint32_t i) {
  const dd e = dd{-2.0 * static_cast<double>(i)} / static_cast<double>(c.rotary_dim - 2);
  return math::exp(math::log(x) * e);
}

// HF get_mscale: 1 for s <= 1, else 0.1 m ln(s) + 1.
constexpr dd yarn_get_mscale(double s, double m) {
  if (s <= 1.0) return dd{1.0};
  return math::log(dd{s}) * (0.1 * m) + 1.0;
}

// HF find_correction_dim: R ln(L / (r 2 pi)) / (2 ln base), the pair whose wavelength makes r
// turns over the original context L.
constexpr dd yarn_correction_dim(double r, const rope_config& c) {
  const double L = static_cast<double>(c.scaling.original_max_position_embeddings);
  const dd turns = dd{L} / (math::detail::two_pi * r);
  return math::log(turns) * static_cast<double>(c.rotary_dim) / (math::log(dd{c.base}) * 2.0);
}

struct yarn_range {
  dd low;
  dd high;
};

// HF find_correction_range (with truncate: floor/ceil), clamped to [0, R-1] as HF and ggml do,
// and HF linear_ramp_factor's guard against a zero-width range.
constexpr yarn_range yarn_correction_range(const rope_config& c) {
  dd low = yarn_correction_dim(c.scaling.beta_fast, c);
  dd high = yarn_correction_dim(c.scaling.beta_slow, c);
  if (c.scaling.truncate) {
    low = math::detail::floor(low);
    high = math::detail::ceil(high);
  }
  if (low < dd{0.0}) low = dd{0.0};
  const dd top = dd{static_cast<double>(c.rotary_dim) - 1.0};
  if (top < high) high = top;
  if (low == high) high = high + 0.001;
  return {low, high};
}

// HF linear_ramp_factor at pair i: clamp((i - low) / (high - low), 0, 1).
constexpr dd yarn_ramp(const yarn_range& r, std::uint32_t i) {
  dd t = (dd{static_cast<double>(i)} - r.low) / (r.high - r.low);
  if (t < dd{0.0}) t = dd{0.0};
  if (dd{1.0} < t) t = dd{1.0};
  return t;
}

// HF _compute_llama3_parameters' smooth factor of a pair of frequency theta, by its wavelength
// 2 pi / theta against L/low_freq_factor and L/high_freq_factor: 0 above the first (theta/factor),
// 1 below the second (theta unchanged), (L/wavelen - low_ff)/(high_ff - low_ff) between.
constexpr dd llama3_smooth(const rope_config& c, dd theta) {
  const rope_scaling& s = c.scaling;
  const double L = static_cast<double>(s.original_max_position_embeddings);
  const dd wavelen = math::detail::two_pi / theta;
  const dd low_wavelen = dd{L} / s.low_freq_factor;
  const dd high_wavelen = dd{L} / s.high_freq_factor;
  if (low_wavelen < wavelen) return dd{0.0};
  if (wavelen < high_wavelen) return dd{1.0};
  return (dd{L} / wavelen - s.low_freq_factor) / (dd{s.high_freq_factor} - s.low_freq_factor);
}
}  // namespace frequencies_detail

// theta_i of pair i < rotary_dim/2 as a double-double. c must satisfy validate(c) == ok.
constexpr math::dd inv_freq_dd(const rope_config& c, std::uint32_t i, std::uint64_t seq_len = 0) {
  using math::dd;
  namespace fd = frequencies_detail;
  const rope_scaling& s = c.scaling;
  const dd theta = fd::default_inv_freq(c, i);
  switch (s.type) {
    case scaling_type::none:
      return theta;
    case scaling_type::linear:
      return theta / s.factor;
    case scaling_type::ntk:
      return theta * fd::ntk_correction(dd{s.factor}, c, i);
    case scaling_type::dynamic: {
      // HF _compute_dynamic_ntk_parameters: seq = max(seq_len, max_pos);
      // base' = base * (factor seq / max_pos - (factor - 1))^(R/(R-2)).
      const double max_pos = static_cast<double>(s.max_position_embeddings);
      const double seq =
          seq_len > s.max_position_embeddings ? static_cast<double>(seq_len) : max_pos;
      const dd bracket = (dd{s.factor} * seq) / max_pos - (dd{s.factor} - 1.0);
      return theta * fd::ntk_correction(bracket, c, i);
    }
    case scaling_type::yarn: {
      // HF _compute_yarn_parameters: inv = (theta/factor) ramp + theta (1 - ramp).
      const dd ramp = fd::yarn_ramp(fd::yarn_correction_range(c), i);
      return (theta / s.factor) * ramp + theta * (dd{1.0} - ramp);
    }
    case scaling_type::llama3: {
      // HF _compute_llama3_parameters: (1 - smooth) theta/factor + smooth theta, the two outer
      // bands taken whole.
      const dd smooth = fd::llama3_smooth(c, theta);
      if (smooth == dd{0.0}) return theta / s.factor;
      if (smooth == dd{1.0}) return theta;
      return (dd{1.0} - smooth) * (theta / s.factor) + smooth * theta;
    }
    case scaling_type::longrope: {
      // HF _compute_longrope_parameters: long factors once seq_len > original context.
      const bool use_long = seq_len > s.original_max_position_embeddings;
      const double ext = use_long ? s.long_factor[i] : s.short_factor[i];
      return theta / ext;
    }
  }
  return theta;
}

// theta_i rounded once to T (float or double).
template <class T>
constexpr T inv_freq(const rope_config& c, std::uint32_t i, std::uint64_t seq_len = 0) {
  return math::round_to<T>(inv_freq_dd(c, i, seq_len));
}

// The factor HF multiplies cos and sin by (so attention logits scale by its square).
constexpr math::dd attention_factor_dd(const rope_config& c) {
  using math::dd;
  namespace fd = frequencies_detail;
  const rope_scaling& s = c.scaling;
  switch (s.type) {
    case scaling_type::yarn:
      if (s.attention_factor > 0.0) return dd{s.attention_factor};
      if (s.mscale > 0.0 && s.mscale_all_dim > 0.0)  // DeepSeek: the ratio of two mscales
        return fd::yarn_get_mscale(s.factor, s.mscale) /
               fd::yarn_get_mscale(s.factor, s.mscale_all_dim);
      return fd::yarn_get_mscale(s.factor, 1.0);
    case scaling_type::longrope: {
      if (s.attention_factor > 0.0) return dd{s.attention_factor};
      if (s.factor <= 1.0) return dd{1.0};
      // sqrt(1 + ln(factor) / ln(original_max_position_embeddings))
      const dd x = math::log(dd{s.factor}) /
                       math::log(dd{static_cast<double>(s.original_max_position_embeddings)}) +
                   1.0;
      return math::exp(math::log(x) * 0.5);
    }
    default:
      return dd{1.0};
  }
}
constexpr double attention_factor(const rope_config& c) {
  return math::to_double(attention_factor_dd(c));
}

namespace frequencies_detail {
// theta_0 .. theta_{N-1} of a valid config (those below rotary_dim/2; the rest stay 0) at sequence
// length seq_len, as an array: what tables and laws evaluate once and read many times.
template <std::size_t N>
constexpr std::array<math::dd, N> inv_freq_dd_array(const rope_config& c, std::uint64_t seq_len) {
  std::array<math::dd, N> th{};
  for (std::size_t i = 0; i < N && i < c.rotary_dim / 2; ++i)
    th[i] = inv_freq_dd(c, static_cast<std::uint32_t>(i), seq_len);
  return th;
}
}  // namespace frequencies_detail

// All R/2 frequencies of a compile-time spec S, validated, as a constexpr array.
template <rope_spec S, class T>
inline constexpr auto inv_freq_v = [] {
  constexpr rope_config c = checked_rope<S>;
  std::array<T, c.rotary_dim / 2> out{};
  for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i) out[i] = inv_freq<T>(c, i);
  return out;
}();

}  // namespace posenc
