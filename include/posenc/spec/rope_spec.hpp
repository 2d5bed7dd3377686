// A compile-time RoPE encoding is a type with a `static constexpr rope_config config` member:
//
//   struct my_model { static constexpr posenc::rope_config config{128, 128, 10000.0,
//                                                                 posenc::rope_layout::half}; };
//
// (a type rather than a value template argument: Clang 16 accepts no floating-point non-type
// template arguments). checked_rope<S> is S::config after every rule of spec/validate.hpp has
// been asserted, each with its own readable message.
#pragma once

#include <concepts>

#include <posenc/spec/rope.hpp>
#include <posenc/spec/validate.hpp>

namespace posenc {

template <class S>
concept rope_spec = requires {
  { S::config } -> std::convertible_to<rope_config>;
};

namespace detail {
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
}  // namespace detail

// S::config, validated at compile time (a broken rule stops compilation with its message).
template <rope_spec S>
inline constexpr rope_config checked_rope = (static_cast<void>(detail::rope_spec_check<S>::valid),
                                             detail::rope_spec_check<S>::c);

// The name checked_rope had before every encoding's checked form was named checked_<encoding>.
template <rope_spec S>
[[deprecated("posenc: use posenc::checked_rope<S>")]] inline constexpr rope_config checked_config =
    checked_rope<S>;

}  // namespace posenc
