// The rules a RoPE configuration must satisfy, written once: the runtime check returns the first
// broken rule (validate), and a compile-time spec states each rule in a static_assert with the same
// message (spec/rope_spec.hpp). tests/compile_fail checks that the two messages agree.
#pragma once

#include <cstdint>
#include <limits>

#include <posenc/spec/rope.hpp>

namespace posenc {

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

namespace detail {
constexpr bool finite(double x) {
  return x == x && x < std::numeric_limits<double>::infinity() &&
         x > -std::numeric_limits<double>::infinity();
}
constexpr bool uses_factor(scaling_type t) {
  return t == scaling_type::linear || t == scaling_type::ntk || t == scaling_type::dynamic ||
         t == scaling_type::yarn || t == scaling_type::llama3 || t == scaling_type::longrope;
}
constexpr bool factors_ok(std::span<const double> f) {
  for (double x : f)
    if (!(finite(x) && x > 0.0)) return false;
  return true;
}
}  // namespace detail

// Whether config c satisfies rule e (rope_error::ok always holds).
constexpr bool satisfies(const rope_config& c, rope_error e) {
  using detail::finite;
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
      return finite(c.base) && c.base > 1.0;
    case rope_error::factor:
      return !detail::uses_factor(t) || (finite(s.factor) && s.factor >= 1.0);
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
      return t != scaling_type::yarn || (finite(s.beta_fast) && finite(s.beta_slow) &&
                                         s.beta_slow > 0.0 && s.beta_fast > s.beta_slow);
    case rope_error::yarn_mscale:
      return t != scaling_type::yarn || (finite(s.mscale) && s.mscale >= 0.0 &&
                                         finite(s.mscale_all_dim) && s.mscale_all_dim >= 0.0);
    case rope_error::llama3_freq_factors:
      return t != scaling_type::llama3 ||
             (finite(s.low_freq_factor) && finite(s.high_freq_factor) && s.low_freq_factor > 0.0 &&
              s.high_freq_factor > s.low_freq_factor);
    case rope_error::longrope_factor_length:
      return t != scaling_type::longrope || (s.short_factor.size() == c.rotary_dim / 2 &&
                                             s.long_factor.size() == c.rotary_dim / 2);
    case rope_error::longrope_factor_value:
      return t != scaling_type::longrope ||
             (detail::factors_ok(s.short_factor) && detail::factors_ok(s.long_factor));
    case rope_error::longrope_context:
      // >= 2: the attention factor divides by ln(original_max_position_embeddings).
      return t != scaling_type::longrope ||
             (s.original_max_position_embeddings >= 2 &&
              s.max_position_embeddings >= s.original_max_position_embeddings);
    case rope_error::attention_factor:
      return finite(s.attention_factor) && s.attention_factor >= 0.0;
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
  for (rope_error e : all_rope_rules)
    if (!satisfies(c, e)) return e;
  return rope_error::ok;
}

}  // namespace posenc
