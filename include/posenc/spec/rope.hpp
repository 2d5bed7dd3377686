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
      return "posenc: llama3 needs finite high_freq_factor > low_freq_factor > 0";
    case rope_error::longrope_factor_length:
      return "posenc: longrope short_factor and long_factor need rotary_dim/2 entries each";
    case rope_error::longrope_factor_value:
      return "posenc: longrope factors must be finite and > 0";
    case rope_error::longrope_context:
      return "posenc: longrope needs max_position_embeddings >= original_max_position_embeddings "
             ">= 2";
    case rope_error::attention_factor:
      return "posenc: attention_factor must be finite and >= 0 (0 derives it)";
  }
  return "posenc: unknown error";
}

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
              s.low_freq_factor > 0.0 && s.high_freq_factor > s.low_freq_factor);
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
                "posenc: llama3 needs finite high_freq_factor > low_freq_factor > 0");
  static_assert(satisfies(c, rope_error::longrope_factor_length),
                "posenc: longrope short_factor and long_factor need rotary_dim/2 entries each");
  static_assert(satisfies(c, rope_error::longrope_factor_value),
                "posenc: longrope factors must be finite and > 0");
  static_assert(
      satisfies(c, rope_error::longrope_context),
      "posenc: longrope needs max_position_embeddings >= original_max_position_embeddings >= 2");
  static_assert(satisfies(c, rope_error::attention_factor),
                "posenc: attention_factor must be finite and >= 0 (0 derives it)");
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
