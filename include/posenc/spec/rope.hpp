// A RoPE configuration: head_dim, rotary_dim, base, layout and a scaling, with HF transformers'
// parameter names (src/transformers/modeling_rope_utils.py) so that a config.json maps onto it
// field by field; and its rules, written once: the runtime check returns the first broken rule
// (validate), and a compile-time spec states each rule in a static_assert with the same message
// (checked_rope). tests/compile_fail checks that the two messages agree.
//
// The same struct describes a runtime encoding and a compile-time one, a type with a
// `static constexpr rope_config config` member:
//
//   struct my_model { static constexpr posenc::rope_config config{128, 128, 10000.0,
//                                                                 posenc::rope_layout::half}; };
//
// (a type rather than a value template argument: Clang 16 accepts no floating-point non-type
// template arguments). checked_rope<S> is S::config after every rule has been asserted, each with
// its own readable message.
#pragma once

#include <cstdint>
#include <span>

#include <posenc/math/detail/fp_bits.hpp>
#include <posenc/math/detail/series.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/exp.hpp>
#include <posenc/math/log.hpp>
#include <posenc/math/pow.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/spec/rules.hpp>

namespace posenc {

// Which channels form a rotation pair (docs/formulas.md §1).
enum class rope_layout : std::uint8_t {
  interleaved,  // (2i, 2i+1): RoFormer paper, GPT-J, Meta's reference LLaMA, ggml NORM
  half,         // (i, i + R/2): GPT-NeoX, HF Llama "rotate_half", ggml NEOX
};

// The two channels that one rotary pair turns together.
struct channel_pair {
  std::uint32_t first = 0;
  std::uint32_t second = 0;
};

// Channels of pair i < rotary_dim/2 (docs/formulas.md §1): interleaved (2i, 2i+1), half
// (i, i + R/2). The one definition of the layout; tables, kernels and laws all use it.
constexpr channel_pair pair_channels(rope_layout layout, std::uint32_t rotary_dim,
                                     std::uint32_t i) {
  if (layout == rope_layout::interleaved) return {2 * i, 2 * i + 1};
  return {i, i + rotary_dim / 2};
}

// HF rope_type.
enum class scaling_type : std::uint8_t { none, linear, ntk, dynamic, yarn, llama3, longrope };

// The names used by the command-line tool and the docs: "interleaved", "half"; and the scaling's
// name ("none" where HF says "default"; "ntk" for the NTK-aware base change).
constexpr const char* layout_name(rope_layout l) {
  return l == rope_layout::interleaved ? "interleaved" : "half";
}
constexpr const char* scaling_name(scaling_type t) {
  switch (t) {
    case scaling_type::none:
      return "none";
    case scaling_type::linear:
      return "linear";
    case scaling_type::ntk:
      return "ntk";
    case scaling_type::dynamic:
      return "dynamic";
    case scaling_type::yarn:
      return "yarn";
    case scaling_type::llama3:
      return "llama3";
    case scaling_type::longrope:
      return "longrope";
  }
  return "?";
}

// Every value of each enum, in declaration order (for name tables, e.g. the tool's flags).
inline constexpr rope_layout all_rope_layouts[] = {rope_layout::interleaved, rope_layout::half};
inline constexpr scaling_type all_scaling_types[] = {
    scaling_type::none, scaling_type::linear, scaling_type::ntk,     scaling_type::dynamic,
    scaling_type::yarn, scaling_type::llama3, scaling_type::longrope};

// Every scaling's parameters in one literal struct (a field a scaling does not use is ignored).
// Build one with the helpers below rather than by hand.
struct rope_scaling {
  scaling_type type = scaling_type::none;
  double factor = 1.0;
  // yarn, llama3, longrope: the context the model was pre-trained with.
  std::uint32_t original_max_position_embeddings = 0;
  // dynamic, longrope: config.max_position_embeddings.
  std::uint32_t max_position_embeddings = 0;
  // yarn (HF defaults: beta_fast 32, beta_slow 1, truncate true).
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  bool truncate = true;
  // yarn: DeepSeek's pair; 0 means absent (HF treats 0 and None alike).
  double mscale = 0.0;
  double mscale_all_dim = 0.0;
  // yarn, longrope: an explicit attention_factor; 0 means "derive it" (HF: None).
  double attention_factor = 0.0;
  // llama3 (HF's documented defaults: 1 and 4).
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  // longrope: per-pair rescale factors, R/2 each (span over static storage for compile time).
  std::span<const double> short_factor{};
  std::span<const double> long_factor{};
};

namespace spec_detail {
// A scaling of type t with its factor; every other parameter keeps its default.
constexpr rope_scaling scaling_with_factor(scaling_type t, double factor) {
  rope_scaling s;
  s.type = t;
  s.factor = factor;
  return s;
}
}  // namespace spec_detail

namespace scaling {
constexpr rope_scaling none() {
  return {};
}
// inv_freq / factor (HF "linear", position interpolation).
constexpr rope_scaling linear(double factor) {
  return spec_detail::scaling_with_factor(scaling_type::linear, factor);
}
// Static NTK-aware: base * factor^(R/(R-2)).
constexpr rope_scaling ntk(double factor) {
  return spec_detail::scaling_with_factor(scaling_type::ntk, factor);
}
// HF dynamic NTK: the base grows once the sequence exceeds max_position_embeddings.
constexpr rope_scaling dynamic(double factor, std::uint32_t max_position_embeddings) {
  rope_scaling s = spec_detail::scaling_with_factor(scaling_type::dynamic, factor);
  s.max_position_embeddings = max_position_embeddings;
  return s;
}
constexpr rope_scaling yarn(double factor, std::uint32_t original_max_position_embeddings,
                            double beta_fast = 32.0, double beta_slow = 1.0, bool truncate = true,
                            double mscale = 0.0, double mscale_all_dim = 0.0,
                            double attention_factor = 0.0) {
  rope_scaling s = spec_detail::scaling_with_factor(scaling_type::yarn, factor);
  s.original_max_position_embeddings = original_max_position_embeddings;
  s.beta_fast = beta_fast;
  s.beta_slow = beta_slow;
  s.truncate = truncate;
  s.mscale = mscale;
  s.mscale_all_dim = mscale_all_dim;
  s.attention_factor = attention_factor;
  return s;
}
constexpr rope_scaling llama3(double factor, double low_freq_factor, double high_freq_factor,
                              std::uint32_t original_max_position_embeddings) {
  rope_scaling s = spec_detail::scaling_with_factor(scaling_type::llama3, factor);
  s.low_freq_factor = low_freq_factor;
  s.high_freq_factor = high_freq_factor;
  s.original_max_position_embeddings = original_max_position_embeddings;
  return s;
}
// factor = max_position_embeddings / original_max_position_embeddings (HF v5 and Phi-3).
constexpr rope_scaling longrope(std::span<const double> short_factor,
                                std::span<const double> long_factor,
                                std::uint32_t original_max_position_embeddings,
                                std::uint32_t max_position_embeddings,
                                double attention_factor = 0.0) {
  rope_scaling s = spec_detail::scaling_with_factor(
      scaling_type::longrope, original_max_position_embeddings == 0
                                  ? 0.0
                                  : static_cast<double>(max_position_embeddings) /
                                        static_cast<double>(original_max_position_embeddings));
  s.short_factor = short_factor;
  s.long_factor = long_factor;
  s.original_max_position_embeddings = original_max_position_embeddings;
  s.max_position_embeddings = max_position_embeddings;
  s.attention_factor = attention_factor;
  return s;
}
}  // namespace scaling

struct rope_config {
  std::uint32_t head_dim = 0;
  std::uint32_t rotary_dim = 0;  // R <= head_dim, even; channels >= R pass through
  double base = 10000.0;         // HF rope_theta
  rope_layout layout = rope_layout::half;
  rope_scaling scaling{};
};

// Channels of pair i < c.rotary_dim/2 in c's layout.
constexpr channel_pair pair_channels(const rope_config& c, std::uint32_t i) {
  return pair_channels(c.layout, c.rotary_dim, i);
}

// HF's rotary width for a partial rotary factor: int(head_dim * factor), truncated
// (GPT-NeoX rotary_pct 0.25, Phi-2 0.4). Returns 0 for factors outside (0, 1].
constexpr std::uint32_t rotary_dim_from_factor(std::uint32_t head_dim,
                                               double partial_rotary_factor) {
  if (!(partial_rotary_factor > 0.0 && partial_rotary_factor <= 1.0)) return 0;
  return static_cast<std::uint32_t>(static_cast<double>(head_dim) * partial_rotary_factor);
}

// ---- frequencies ------------------------------------------------------------------------------
// theta_i and the attention factor of every scaling, in double-double (docs/formulas.md §2, HF
// transformers src/transformers/modeling_rope_utils.py). They are here, not in frequencies/,
// because the rules below check what they derive (inv_freq, the attention factor, YaRN's correction
// range); frequencies/rope.hpp rounds them (inv_freq<T>, attention_factor) and evaluates them per
// spec.
//
// seq_len is HF's runtime sequence length (max(position_ids) + 1); 0 means "none" (HF
// seq_len=None). Only dynamic and longrope depend on it.

namespace spec_detail {
using math::dd;

// base^(-2i/R)
constexpr dd default_inv_freq(const rope_config& c, std::uint32_t i) {
  return math::pow_ratio(c.base, -2 * static_cast<std::int64_t>(i),
                         static_cast<std::int64_t>(c.rotary_dim));
}

// x^(-2i/(R-2)) from log_x = ln x: the NTK base change base' = base * x^(R/(R-2)) turns
// base'^(-2i/R) into base^(-2i/R) * x^(-2i/(R-2)).
constexpr dd ntk_correction(dd log_x, const rope_config& c, std::uint32_t i) {
  const dd e = dd{-2.0 * static_cast<double>(i)} / static_cast<double>(c.rotary_dim - 2);
  return math::exp(log_x * e);
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
// 1 below the second (theta unchanged), (L/wavelen - low_ff)/(high_ff - low_ff) between. With
// low_ff == high_ff (Llama-4 Scout's 1 and 1) the band is empty: a pair is divided by the factor
// iff its wavelength exceeds L/low_ff, and a wavelength of exactly L keeps theta (where HF's
// blend divides 0 by 0).
constexpr dd llama3_smooth(const rope_config& c, dd theta) {
  const rope_scaling& s = c.scaling;
  const double L = static_cast<double>(s.original_max_position_embeddings);
  const dd wavelen = math::detail::two_pi / theta;
  const dd low_wavelen = dd{L} / s.low_freq_factor;
  const dd high_wavelen = dd{L} / s.high_freq_factor;
  if (low_wavelen < wavelen) return dd{0.0};
  if (wavelen < high_wavelen || !(s.low_freq_factor < s.high_freq_factor)) return dd{1.0};
  return (dd{L} / wavelen - s.low_freq_factor) / (dd{s.high_freq_factor} - s.low_freq_factor);
}
}  // namespace spec_detail

namespace spec_detail {
// What theta_i needs besides base^(-2i/R) that is the same for every pair at one seq_len: YaRN's
// correction range, and the log of the NTK base ratio x of ntk_correction (ntk: the factor;
// dynamic: HF's bracket). Evaluated once for all pairs by the rules (inv_freqs_ok).
struct scaling_terms {
  yarn_range range{};
  dd log_ntk{};
};
constexpr scaling_terms scaling_terms_of(const rope_config& c, std::uint64_t seq_len) {
  const rope_scaling& s = c.scaling;
  scaling_terms t;
  if (s.type == scaling_type::yarn) t.range = yarn_correction_range(c);
  if (s.type == scaling_type::ntk) t.log_ntk = math::log(dd{s.factor});
  if (s.type == scaling_type::dynamic) {
    // HF _compute_dynamic_ntk_parameters: seq = max(seq_len, max_pos);
    // base' = base * (factor seq / max_pos - (factor - 1))^(R/(R-2)).
    const double max_pos = static_cast<double>(s.max_position_embeddings);
    const double seq = seq_len > s.max_position_embeddings ? static_cast<double>(seq_len) : max_pos;
    const dd bracket = (dd{s.factor} * seq) / max_pos - (dd{s.factor} - 1.0);
    t.log_ntk = math::log(bracket);
  }
  return t;
}

// theta_i after scaling, from theta = default_inv_freq(c, i) and t = scaling_terms_of(c, seq_len).
constexpr dd scaled_inv_freq(const rope_config& c, std::uint32_t i, dd theta,
                             const scaling_terms& t, std::uint64_t seq_len) {
  const rope_scaling& s = c.scaling;
  switch (s.type) {
    case scaling_type::none:
      return theta;
    case scaling_type::linear:
      return theta / s.factor;
    case scaling_type::ntk:
    case scaling_type::dynamic:
      return theta * ntk_correction(t.log_ntk, c, i);
    case scaling_type::yarn: {
      // HF _compute_yarn_parameters: inv = (theta/factor) ramp + theta (1 - ramp).
      const dd ramp = yarn_ramp(t.range, i);
      return (theta / s.factor) * ramp + theta * (dd{1.0} - ramp);
    }
    case scaling_type::llama3: {
      // HF _compute_llama3_parameters: (1 - smooth) theta/factor + smooth theta, the two outer
      // bands taken whole.
      const dd smooth = llama3_smooth(c, theta);
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
}  // namespace spec_detail

// theta_i of pair i < rotary_dim/2 as a double-double. c must satisfy validate(c) == ok.
constexpr math::dd inv_freq_dd(const rope_config& c, std::uint32_t i, std::uint64_t seq_len = 0) {
  return spec_detail::scaled_inv_freq(c, i, spec_detail::default_inv_freq(c, i),
                                      spec_detail::scaling_terms_of(c, seq_len), seq_len);
}

// The factor HF multiplies cos and sin by (so attention logits scale by its square).
constexpr math::dd attention_factor_dd(const rope_config& c) {
  using math::dd;
  namespace fd = spec_detail;
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

// ---- rules -----------------------------------------------------------------------------------

enum class rope_error : std::uint8_t {
  ok,
  head_dim,
  rotary_dim,
  base,
  factor,
  rotary_dim_for_ntk,
  original_max_position_embeddings,
  max_position_embeddings,
  yarn_beta,
  yarn_mscale,
  llama3_freq_factors,
  longrope_factor_length,
  longrope_factor_value,
  longrope_context,
  attention_factor,
  attention_factor_float32,
  yarn_correction_range,
  inv_freq_float32,
};

// One line naming the rule; also the text of the matching static_assert.
constexpr const char* message(rope_error e) {
  switch (e) {
    case rope_error::ok:
      return "posenc: ok";
    case rope_error::head_dim:
      return "posenc: head_dim must be positive";
    case rope_error::rotary_dim:
      return "posenc: rotary_dim must be even, >= 2 and <= head_dim";
    case rope_error::base:
      return "posenc: base must be finite and > 1";
    case rope_error::factor:
      return "posenc: scaling factor must be finite and >= 1";
    case rope_error::rotary_dim_for_ntk:
      return "posenc: ntk and dynamic scaling need rotary_dim >= 4 (the exponent is R/(R-2))";
    case rope_error::original_max_position_embeddings:
      return "posenc: yarn, llama3 and longrope need original_max_position_embeddings > 0";
    case rope_error::max_position_embeddings:
      return "posenc: dynamic and longrope need max_position_embeddings > 0";
    case rope_error::yarn_beta:
      return "posenc: yarn needs finite beta_fast > beta_slow > 0";
    case rope_error::yarn_mscale:
      return "posenc: yarn mscale and mscale_all_dim must be finite and >= 0";
    case rope_error::llama3_freq_factors:
      return "posenc: llama3 needs finite high_freq_factor >= low_freq_factor > 0";
    case rope_error::longrope_factor_length:
      return "posenc: longrope short_factor and long_factor need rotary_dim/2 entries each";
    case rope_error::longrope_factor_value:
      return "posenc: longrope factors must be finite and > 0";
    case rope_error::longrope_context:
      return "posenc: longrope needs max_position_embeddings >= original_max_position_embeddings "
             ">= 2";
    case rope_error::attention_factor:
      return "posenc: attention_factor must be finite and >= 0 (0 derives it)";
    case rope_error::attention_factor_float32:
      return "posenc: the attention factor (given or derived) must be <= FLT_MAX, with mscale and "
             "mscale_all_dim <= 2^512";
    case rope_error::yarn_correction_range:
      return "posenc: yarn needs beta_fast and beta_slow in [2^-900, 2^900] (a finite correction "
             "range)";
    case rope_error::inv_freq_float32:
      return "posenc: every inv_freq must be a normal float32 (FLT_MIN <= inv_freq <= FLT_MAX) at "
             "every seq_len; factor, low_freq_factor and high_freq_factor within [2^-512, 2^512]";
  }
  return "posenc: unknown error";
}

constexpr bool satisfies(const rope_config& c, rope_error e);

namespace spec_detail {
constexpr bool uses_factor(scaling_type t) {
  return t == scaling_type::linear || t == scaling_type::ntk || t == scaling_type::dynamic ||
         t == scaling_type::yarn || t == scaling_type::llama3 || t == scaling_type::longrope;
}
constexpr bool factors_ok(std::span<const double> f) {
  for (double x : f)
    if (!(math::detail::is_finite(x) && x > 0.0)) return false;
  return true;
}

// Every rule up to attention_factor (the enumerators head_dim .. attention_factor: the rules on the
// configuration's own fields) holds for c.
constexpr bool input_rules_hold(const rope_config& c) {
  for (auto k = static_cast<std::uint8_t>(rope_error::head_dim);
       k <= static_cast<std::uint8_t>(rope_error::attention_factor); ++k)
    if (!satisfies(c, static_cast<rope_error>(k))) return false;
  return true;
}

// The derived rules (attention_factor_float32, yarn_correction_range, inv_freq_float32) evaluate
// the formulas above, in the same constexpr code at compile time and at run time. A constant
// expression may not overflow or produce a NaN, so each first refuses the inputs whose evaluation
// would (bounds of 2^512 and 2^900, far beyond any model); the bounds are part of the rule and its
// message. Each holds vacuously while an input rule before it is broken (validate reports that
// one, and a compile-time spec stops with that one's message alone).
inline constexpr double float32_min = 0x1p-126;        // FLT_MIN
inline constexpr double float32_max = 0x1.fffffep127;  // FLT_MAX
inline constexpr double derived_bound = 0x1p512;
inline constexpr double yarn_beta_min = 0x1p-900, yarn_beta_max = 0x1p900;

constexpr bool normal_float32(double x) {
  return x >= float32_min && x <= float32_max;
}

// theta_i of pair i at seq_len (t = scaling_terms_of(c, seq_len)) in float32's normal range.
// Checked before the division where the quotient could leave double (longrope: theta_i / factor_i
// with factor_i in (0, 2^1024)).
constexpr bool inv_freq_ok(const rope_config& c, std::uint32_t i, dd theta, const scaling_terms& t,
                           std::uint64_t seq_len) {
  const rope_scaling& s = c.scaling;
  if (s.type == scaling_type::longrope) {
    const bool long_factors = s.original_max_position_embeddings < seq_len;
    const double ext = long_factors ? s.long_factor[i] : s.short_factor[i];
    // theta <= 1: above 2^512 the quotient is below FLT_MIN; theta > FLT_MAX ext: above FLT_MAX.
    if (ext > derived_bound || theta.hi > float32_max * ext) return false;
  } else if (!normal_float32(theta.hi)) {
    // Every other scaling divides theta_i by a factor >= 1 or blends it with that quotient.
    return false;
  }
  return normal_float32(scaled_inv_freq(c, i, theta, t, seq_len).hi);
}

// A sufficient test of inv_freqs_ok without a pow per pair (the per-pair test costs a
// double-double pow for each of the rotary_dim/2 pairs, at compile time in every spec). theta_i =
// base^(-2i/R) lies in [1/base, 1]. Every scaling but longrope multiplies it by a number in
// [1/x, 1]: linear, YaRN and llama3 blend theta_i with theta_i/factor (x = factor >= 1); NTK and
// dynamic multiply by x^(-2i/(R-2)) for i <= R/2 - 1, which falls from 1 to 1/x (x = the NTK base
// ratio >= 1: the factor, or dynamic's bracket at its largest seq_len). longrope divides by its
// per-pair short or long factor. When these bounds, evaluated in double, clear float32's normal
// range by a factor of 2 (far more than the rounding of either evaluation), every pair passes;
// otherwise inv_freqs_ok checks each pair. Input rules and the 2^512 bounds of inv_freqs_ok hold.
constexpr bool inv_freqs_clear_of_float32_limits(const rope_config& c) {
  const rope_scaling& s = c.scaling;
  double low = 1.0 / c.base;  // a lower bound of every theta_i (base > 1)
  double high = 1.0;          // an upper bound of every theta_i
  switch (s.type) {
    case scaling_type::none:
      break;
    case scaling_type::linear:
    case scaling_type::yarn:
    case scaling_type::llama3:
    case scaling_type::ntk:
      low /= s.factor;
      break;
    case scaling_type::dynamic: {
      // HF's bracket at seq_len 2^64 (scaling_terms_of; it only grows with seq_len).
      const double max_pos = static_cast<double>(s.max_position_embeddings);
      low /= s.factor * (static_cast<double>(~std::uint64_t{0}) / max_pos) - (s.factor - 1.0);
      break;
    }
    case scaling_type::longrope: {
      double largest = 0.0, smallest = derived_bound;
      for (const std::span<const double> f : {s.short_factor, s.long_factor})
        for (double ext : f) {
          largest = ext > largest ? ext : largest;
          smallest = ext < smallest ? ext : smallest;
        }
      if (largest > derived_bound) return false;
      low /= largest;
      high /= smallest;
      break;
    }
  }
  return low >= 2.0 * float32_min && high <= 0.5 * float32_max;
}

// inv_freqs_ok pair by pair, once its bounds on the factors hold.
constexpr bool inv_freqs_each_ok(const rope_config& c) {
  const rope_scaling& s = c.scaling;
  const scaling_type type = s.type;
  const std::uint64_t long_seq = std::uint64_t{s.original_max_position_embeddings} + 1;
  const std::uint64_t max_seq = ~std::uint64_t{0};
  const scaling_terms at_0 = scaling_terms_of(c, 0);
  const scaling_terms at_max = type == scaling_type::dynamic ? scaling_terms_of(c, max_seq) : at_0;
  for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i) {
    const dd theta = default_inv_freq(c, i);
    if (!inv_freq_ok(c, i, theta, at_0, 0)) return false;
    if (type == scaling_type::longrope && !inv_freq_ok(c, i, theta, at_0, long_seq)) return false;
    if (type == scaling_type::dynamic && !inv_freq_ok(c, i, theta, at_max, max_seq)) return false;
  }
  return true;
}

// Every theta_i at every seq_len: longrope's short factors (seq_len 0) and long factors (past the
// original context); dynamic NTK at seq_len 0 and at its largest base (seq_len 2^64 - 1; theta_i
// only falls as seq_len grows); the other scalings do not depend on seq_len. The bounds of
// inv_freqs_clear_of_float32_limits settle most configurations without evaluating a pair.
constexpr bool inv_freqs_ok(const rope_config& c) {
  const rope_scaling& s = c.scaling;
  const scaling_type type = s.type;
  if ((type == scaling_type::linear || type == scaling_type::dynamic ||
       type == scaling_type::yarn || type == scaling_type::llama3) &&
      s.factor > derived_bound)
    return false;
  if (type == scaling_type::llama3 &&
      (s.low_freq_factor < 1.0 / derived_bound || s.high_freq_factor > derived_bound))
    return false;
  if (inv_freqs_clear_of_float32_limits(c)) return true;
  return inv_freqs_each_ok(c);
}

// YaRN's correction range: the betas within [2^-900, 2^900] keep L / (2 pi beta) and its log
// finite for every L < 2^32 and base > 1; the range is then checked itself.
constexpr bool yarn_range_ok(const rope_config& c) {
  const rope_scaling& s = c.scaling;
  if (s.type != scaling_type::yarn) return true;
  for (double beta : {s.beta_fast, s.beta_slow})
    if (!(beta >= yarn_beta_min && beta <= yarn_beta_max)) return false;
  const yarn_range r = yarn_correction_range(c);
  return math::detail::is_finite(r.low.hi) && math::detail::is_finite(r.low.lo) &&
         math::detail::is_finite(r.high.hi) && math::detail::is_finite(r.high.lo);
}

// The attention factor within [0, FLT_MAX] (it multiplies float32 cos and sin); DeepSeek's ratio
// of two mscales is evaluated only for mscale and mscale_all_dim <= 2^512.
constexpr bool attention_factor_ok(const rope_config& c) {
  const rope_scaling& s = c.scaling;
  if (s.type == scaling_type::yarn && !(s.attention_factor > 0.0) &&
      (s.mscale > derived_bound || s.mscale_all_dim > derived_bound))
    return false;
  const dd af = attention_factor_dd(c);
  return af.hi >= 0.0 && af.hi <= float32_max;
}
}  // namespace spec_detail

// Whether config c satisfies rule e (rope_error::ok always holds).
constexpr bool satisfies(const rope_config& c, rope_error e) {
  using math::detail::is_finite;
  const rope_scaling& s = c.scaling;
  const scaling_type t = s.type;
  switch (e) {
    case rope_error::ok:
      return true;
    case rope_error::head_dim:
      return c.head_dim > 0;
    case rope_error::rotary_dim:
      return c.rotary_dim >= 2 && c.rotary_dim % 2 == 0 && c.rotary_dim <= c.head_dim;
    case rope_error::base:
      return is_finite(c.base) && c.base > 1.0;
    case rope_error::factor:
      return !spec_detail::uses_factor(t) || (is_finite(s.factor) && s.factor >= 1.0);
    case rope_error::rotary_dim_for_ntk:
      return !(t == scaling_type::ntk || t == scaling_type::dynamic) || c.rotary_dim >= 4;
    case rope_error::original_max_position_embeddings:
      return !(t == scaling_type::yarn || t == scaling_type::llama3 ||
               t == scaling_type::longrope) ||
             s.original_max_position_embeddings > 0;
    case rope_error::max_position_embeddings:
      return !(t == scaling_type::dynamic || t == scaling_type::longrope) ||
             s.max_position_embeddings > 0;
    case rope_error::yarn_beta:
      return t != scaling_type::yarn || (is_finite(s.beta_fast) && is_finite(s.beta_slow) &&
                                         s.beta_slow > 0.0 && s.beta_fast > s.beta_slow);
    case rope_error::yarn_mscale:
      return t != scaling_type::yarn || (is_finite(s.mscale) && s.mscale >= 0.0 &&
                                         is_finite(s.mscale_all_dim) && s.mscale_all_dim >= 0.0);
    case rope_error::llama3_freq_factors:
      return t != scaling_type::llama3 ||
             (is_finite(s.low_freq_factor) && is_finite(s.high_freq_factor) &&
              s.low_freq_factor > 0.0 && s.high_freq_factor >= s.low_freq_factor);
    case rope_error::longrope_factor_length:
      return t != scaling_type::longrope || (s.short_factor.size() == c.rotary_dim / 2 &&
                                             s.long_factor.size() == c.rotary_dim / 2);
    case rope_error::longrope_factor_value:
      return t != scaling_type::longrope ||
             (spec_detail::factors_ok(s.short_factor) && spec_detail::factors_ok(s.long_factor));
    case rope_error::longrope_context:
      // >= 2: the attention factor divides by ln(original_max_position_embeddings).
      return t != scaling_type::longrope ||
             (s.original_max_position_embeddings >= 2 &&
              s.max_position_embeddings >= s.original_max_position_embeddings);
    case rope_error::attention_factor:
      return is_finite(s.attention_factor) && s.attention_factor >= 0.0;
    case rope_error::attention_factor_float32:
      return !spec_detail::input_rules_hold(c) || spec_detail::attention_factor_ok(c);
    case rope_error::yarn_correction_range:
      return !spec_detail::input_rules_hold(c) || spec_detail::yarn_range_ok(c);
    case rope_error::inv_freq_float32:
      return !spec_detail::input_rules_hold(c) || !spec_detail::yarn_range_ok(c) ||
             spec_detail::inv_freqs_ok(c);
  }
  return false;
}

inline constexpr rope_error all_rope_rules[] = {
    rope_error::head_dim,
    rope_error::rotary_dim,
    rope_error::base,
    rope_error::factor,
    rope_error::rotary_dim_for_ntk,
    rope_error::original_max_position_embeddings,
    rope_error::max_position_embeddings,
    rope_error::yarn_beta,
    rope_error::yarn_mscale,
    rope_error::llama3_freq_factors,
    rope_error::longrope_factor_length,
    rope_error::longrope_factor_value,
    rope_error::longrope_context,
    rope_error::attention_factor,
    rope_error::attention_factor_float32,
    rope_error::yarn_correction_range,
    rope_error::inv_freq_float32,
};

// The first rule c breaks, or rope_error::ok.
constexpr rope_error validate(const rope_config& c) {
  return spec_detail::first_broken_rule(c, all_rope_rules);
}

// ---- compile-time specs ----------------------------------------------------------------------

// A compile-time RoPE encoding is a type with `static constexpr rope_config config`.
template <class S>
concept rope_spec = spec_detail::spec_of<S, rope_config>;

namespace spec_detail {
template <rope_spec S>
struct rope_spec_check {
  static constexpr rope_config c = S::config;
  // One static_assert per rule; the messages equal message(rope_error::...).
  static_assert(satisfies(c, rope_error::head_dim), "posenc: head_dim must be positive");
  static_assert(satisfies(c, rope_error::rotary_dim),
                "posenc: rotary_dim must be even, >= 2 and <= head_dim");
  static_assert(satisfies(c, rope_error::base), "posenc: base must be finite and > 1");
  static_assert(satisfies(c, rope_error::factor), "posenc: scaling factor must be finite and >= 1");
  static_assert(satisfies(c, rope_error::rotary_dim_for_ntk),
                "posenc: ntk and dynamic scaling need rotary_dim >= 4 (the exponent is R/(R-2))");
  static_assert(satisfies(c, rope_error::original_max_position_embeddings),
                "posenc: yarn, llama3 and longrope need original_max_position_embeddings > 0");
  static_assert(satisfies(c, rope_error::max_position_embeddings),
                "posenc: dynamic and longrope need max_position_embeddings > 0");
  static_assert(satisfies(c, rope_error::yarn_beta),
                "posenc: yarn needs finite beta_fast > beta_slow > 0");
  static_assert(satisfies(c, rope_error::yarn_mscale),
                "posenc: yarn mscale and mscale_all_dim must be finite and >= 0");
  static_assert(satisfies(c, rope_error::llama3_freq_factors),
                "posenc: llama3 needs finite high_freq_factor >= low_freq_factor > 0");
  static_assert(satisfies(c, rope_error::longrope_factor_length),
                "posenc: longrope short_factor and long_factor need rotary_dim/2 entries each");
  static_assert(satisfies(c, rope_error::longrope_factor_value),
                "posenc: longrope factors must be finite and > 0");
  static_assert(
      satisfies(c, rope_error::longrope_context),
      "posenc: longrope needs max_position_embeddings >= original_max_position_embeddings >= 2");
  static_assert(satisfies(c, rope_error::attention_factor),
                "posenc: attention_factor must be finite and >= 0 (0 derives it)");
  static_assert(satisfies(c, rope_error::attention_factor_float32),
                "posenc: the attention factor (given or derived) must be <= FLT_MAX, with mscale "
                "and mscale_all_dim <= 2^512");
  static_assert(satisfies(c, rope_error::yarn_correction_range),
                "posenc: yarn needs beta_fast and beta_slow in [2^-900, 2^900] (a finite "
                "correction range)");
  static_assert(
      satisfies(c, rope_error::inv_freq_float32),
      "posenc: every inv_freq must be a normal float32 (FLT_MIN <= inv_freq <= FLT_MAX) "
      "at every seq_len; factor, low_freq_factor and high_freq_factor within [2^-512, 2^512]");
  static constexpr bool valid = validate(c) == rope_error::ok;
};
}  // namespace spec_detail

// S::config, validated at compile time (a broken rule stops compilation with its message).
template <rope_spec S>
inline constexpr rope_config checked_rope =
    spec_detail::checked_form<spec_detail::rope_spec_check<S>>;

// The name checked_rope had before every encoding's checked form was named checked_<encoding>.
template <rope_spec S>
[[deprecated("posenc: use posenc::checked_rope<S>")]] inline constexpr rope_config checked_config =
    checked_rope<S>;

}  // namespace posenc
