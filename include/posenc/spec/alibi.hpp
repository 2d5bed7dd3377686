// ALiBi (Press, Smith, Lewis 2022, "Train Short, Test Long: Attention with Linear Biases"): the
// configuration and its rules (run time: validate; compile time: alibi_spec's static_asserts, with
// the same messages). The slopes themselves are in tables/alibi.hpp (docs/formulas.md §5).
//
// - slopes: `reference` reproduces the paper's reference code, get_slopes in
//   ofirpress/attention_with_linear_biases (fairseq/models/transformer.py), value for value in
//   float64 (the float32 slopes are those values rounded once, as torch.Tensor(list) stores them);
//   `bloom` reproduces HF BLOOM's build_alibi_tensor (models/bloom/modeling_bloom.py), which
//   raises a float32 base to integer powers in float32.
// - variant: `causal` adds -m (i - j) for keys j <= i and leaves the scores of later keys as they
//   are (the causal mask removes them); `symmetric` adds -m |i - j| everywhere (bidirectional
//   encoders, llama.cpp's KQ-mask form).
#pragma once

#include <cstdint>

#include <posenc/spec/rules.hpp>

namespace posenc {

enum class alibi_variant : std::uint8_t { causal, symmetric };
enum class alibi_slope_kind : std::uint8_t { reference, bloom };

// "causal", "symmetric" and "reference", "bloom": the words of the tool and the docs; every
// value of each enum in declaration order.
constexpr const char* alibi_variant_name(alibi_variant v) {
  return v == alibi_variant::causal ? "causal" : "symmetric";
}
constexpr const char* alibi_slope_kind_name(alibi_slope_kind k) {
  return k == alibi_slope_kind::reference ? "reference" : "bloom";
}
inline constexpr alibi_variant all_alibi_variants[] = {alibi_variant::causal,
                                                       alibi_variant::symmetric};
inline constexpr alibi_slope_kind all_alibi_slope_kinds[] = {alibi_slope_kind::reference,
                                                             alibi_slope_kind::bloom};

struct alibi_config {
  std::uint32_t heads = 0;
  alibi_variant variant = alibi_variant::causal;
  alibi_slope_kind slopes = alibi_slope_kind::reference;
};

enum class alibi_error : std::uint8_t {
  ok,
  heads,  // heads must be positive
};

constexpr const char* message(alibi_error e) {
  switch (e) {
    case alibi_error::ok:
      return "posenc: ok";
    case alibi_error::heads:
      return "posenc: alibi heads must be positive";
  }
  return "posenc: unknown error";
}

constexpr bool satisfies(const alibi_config& c, alibi_error e) {
  switch (e) {
    case alibi_error::ok:
      return true;
    case alibi_error::heads:
      return c.heads > 0;
  }
  return false;
}

inline constexpr alibi_error all_alibi_rules[] = {alibi_error::heads};

// The first rule c breaks, or alibi_error::ok.
constexpr alibi_error validate(const alibi_config& c) {
  return spec_detail::first_broken_rule(c, all_alibi_rules);
}

// A compile-time ALiBi encoding is a type with `static constexpr alibi_config config`.
template <class S>
concept alibi_spec = spec_detail::spec_of<S, alibi_config>;

namespace spec_detail {
template <alibi_spec S>
struct alibi_spec_check {
  static constexpr alibi_config c = S::config;
  static_assert(satisfies(c, alibi_error::heads), "posenc: alibi heads must be positive");
  static constexpr bool valid = validate(c) == alibi_error::ok;
};
}  // namespace spec_detail

// S::config, validated at compile time (a broken rule stops compilation with its message).
template <alibi_spec S>
inline constexpr alibi_config checked_alibi =
    spec_detail::checked_form<spec_detail::alibi_spec_check<S>>;

}  // namespace posenc
