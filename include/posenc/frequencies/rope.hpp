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

#include <posenc/math.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/spec/rope_spec.hpp>

namespace posenc {

namespace detail {
using math::dd;

inline constexpr dd two_pi_dd{0x1.921fb54442d18p+2, 0x1.1a62633145c07p-52};

constexpr dd ddv(double x) {
  return {x, 0.0};
}
constexpr dd dd_log(double x) {
  return math::log(ddv(x));
}

// base^(-2i/R)
constexpr dd default_inv_freq(const rope_config& c, std::uint32_t i) {
  return math::pow_ratio(c.base, -2 * static_cast<std::int64_t>(i),
                         static_cast<std::int64_t>(c.rotary_dim));
}

// x^(-2i/(R-2)): the NTK base change base' = base * x^(R/(R-2)) turns base'^(-2i/R) into
// base^(-2i/R) * x^(-2i/(R-2)).
constexpr dd ntk_correction(dd x, const rope_config& c, std::uint32_t i) {
  const dd e = ddv(-2.0 * static_cast<double>(i)) / static_cast<double>(c.rotary_dim - 2);
  return math::exp(math::log(x) * e);
}

// HF get_mscale: 1 for s <= 1, else 0.1 m ln(s) + 1.
constexpr dd yarn_get_mscale(double s, double m) {
  if (s <= 1.0) return ddv(1.0);
  return math::log(ddv(s)) * (0.1 * m) + 1.0;
}

// HF find_correction_dim: R ln(L / (r 2 pi)) / (2 ln base), the pair whose wavelength makes r
// turns over the original context L.
constexpr dd yarn_correction_dim(double r, const rope_config& c) {
  const double L = static_cast<double>(c.scaling.original_max_position_embeddings);
  const dd turns = ddv(L) / (two_pi_dd * r);
  return math::log(turns) * static_cast<double>(c.rotary_dim) / (dd_log(c.base) * 2.0);
}

constexpr dd dd_floor(dd x) {
  const double f = math::detail::floor(x.hi);
  if (f != x.hi) return ddv(f);
  return x.lo < 0.0 ? ddv(f - 1.0) : ddv(f);
}
constexpr dd dd_ceil(dd x) {
  return -dd_floor(-x);
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
    low = dd_floor(low);
    high = dd_ceil(high);
  }
  if (low < ddv(0.0)) low = ddv(0.0);
  const dd top = ddv(static_cast<double>(c.rotary_dim) - 1.0);
  if (top < high) high = top;
  if (low == high) high = high + 0.001;
  return {low, high};
}

// HF linear_ramp_factor at pair i: clamp((i - low) / (high - low), 0, 1).
constexpr dd yarn_ramp(const yarn_range& r, std::uint32_t i) {
  dd t = (ddv(static_cast<double>(i)) - r.low) / (r.high - r.low);
  if (t < ddv(0.0)) t = ddv(0.0);
  if (ddv(1.0) < t) t = ddv(1.0);
  return t;
}

// HF _compute_llama3_parameters' smooth factor of a pair of frequency theta, by its wavelength
// 2 pi / theta against L/low_freq_factor and L/high_freq_factor: 0 above the first (theta/factor),
// 1 below the second (theta unchanged), (L/wavelen - low_ff)/(high_ff - low_ff) between.
constexpr dd llama3_smooth(const rope_config& c, dd theta) {
  const rope_scaling& s = c.scaling;
  const double L = static_cast<double>(s.original_max_position_embeddings);
  const dd wavelen = two_pi_dd / theta;
  const dd low_wavelen = ddv(L) / s.low_freq_factor;
  const dd high_wavelen = ddv(L) / s.high_freq_factor;
  if (low_wavelen < wavelen) return ddv(0.0);
  if (wavelen < high_wavelen) return ddv(1.0);
  return (ddv(L) / wavelen - s.low_freq_factor) / (ddv(s.high_freq_factor) - s.low_freq_factor);
}
}  // namespace detail

// theta_i of pair i < rotary_dim/2 as a double-double. c must satisfy validate(c) == ok.
constexpr math::dd inv_freq_dd(const rope_config& c, std::uint32_t i, std::uint64_t seq_len = 0) {
  using detail::ddv;
  using math::dd;
  const rope_scaling& s = c.scaling;
  const dd theta = detail::default_inv_freq(c, i);
  switch (s.type) {
    case scaling_type::none:
      return theta;
    case scaling_type::linear:
      return theta / s.factor;
    case scaling_type::ntk:
      return theta * detail::ntk_correction(ddv(s.factor), c, i);
    case scaling_type::dynamic: {
      // HF _compute_dynamic_ntk_parameters: seq = max(seq_len, max_pos);
      // base' = base * (factor seq / max_pos - (factor - 1))^(R/(R-2)).
      const double max_pos = static_cast<double>(s.max_position_embeddings);
      const double seq =
          seq_len > s.max_position_embeddings ? static_cast<double>(seq_len) : max_pos;
      const dd bracket = (ddv(s.factor) * seq) / max_pos - (ddv(s.factor) - 1.0);
      return theta * detail::ntk_correction(bracket, c, i);
    }
    case scaling_type::yarn: {
      // HF _compute_yarn_parameters: inv = (theta/factor) ramp + theta (1 - ramp).
      const dd ramp = detail::yarn_ramp(detail::yarn_correction_range(c), i);
      return (theta / s.factor) * ramp + theta * (ddv(1.0) - ramp);
    }
    case scaling_type::llama3: {
      // HF _compute_llama3_parameters: (1 - smooth) theta/factor + smooth theta, the two outer
      // bands taken whole.
      const dd smooth = detail::llama3_smooth(c, theta);
      if (smooth == ddv(0.0)) return theta / s.factor;
      if (smooth == ddv(1.0)) return theta;
      return (ddv(1.0) - smooth) * (theta / s.factor) + smooth * theta;
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
  using detail::ddv;
  const rope_scaling& s = c.scaling;
  switch (s.type) {
    case scaling_type::yarn:
      if (s.attention_factor > 0.0) return ddv(s.attention_factor);
      if (s.mscale > 0.0 && s.mscale_all_dim > 0.0)  // DeepSeek: the ratio of two mscales
        return detail::yarn_get_mscale(s.factor, s.mscale) /
               detail::yarn_get_mscale(s.factor, s.mscale_all_dim);
      return detail::yarn_get_mscale(s.factor, 1.0);
    case scaling_type::longrope: {
      if (s.attention_factor > 0.0) return ddv(s.attention_factor);
      if (s.factor <= 1.0) return ddv(1.0);
      // sqrt(1 + ln(factor) / ln(original_max_position_embeddings))
      const math::dd x =
          math::log(ddv(s.factor)) /
              math::log(ddv(static_cast<double>(s.original_max_position_embeddings))) +
          1.0;
      return math::exp(math::log(x) * 0.5);
    }
    default:
      return ddv(1.0);
  }
}
constexpr double attention_factor(const rope_config& c) {
  return math::to_double(attention_factor_dd(c));
}

// All R/2 frequencies of a compile-time spec S, validated, as a constexpr array.
template <rope_spec S, class T>
inline constexpr auto inv_freq_v = [] {
  constexpr rope_config c = checked_rope<S>;
  std::array<T, c.rotary_dim / 2> out{};
  for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i) out[i] = inv_freq<T>(c, i);
  return out;
}();

}  // namespace posenc
