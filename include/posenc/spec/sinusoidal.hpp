// Sinusoidal absolute position encodings (docs/formulas.md §6): the configuration, its rules
// (checked at run time by validate and at compile time by sinusoidal_spec's static_asserts, with
// the same messages), and the frequency of each column pair as one constexpr function.
//
// Two layouts:
// - paper: Vaswani et al. 2017, "Attention Is All You Need", §3.5: PE[p, 2k] = sin(p w_k),
//   PE[p, 2k+1] = cos(p w_k), w_k = base^(-2k/d). Odd d keeps the last sin column (the shape of HF
//   DistilBERT's create_sinusoidal_embeddings, whose exponent is 2*(j//2)/d).
// - split: fairseq SinusoidalPositionalEmbedding.get_embedding
//   (fairseq/modules/sinusoidal_positional_embedding.py) and tensor2tensor get_timing_signal_1d
//   (tensor2tensor/layers/common_attention.py): half = d/2 (floor), PE[p, k] = sin(p w_k),
//   PE[p, half + k] = cos(p w_k), w_k = base^(-k/(half-1)), one zero column at the end when d is
//   odd. half = 1 (d = 2, 3) divides by zero in fairseq; we follow tensor2tensor's guard
//   max(half - 1, 1), so w_0 = 1.
// padding_idx >= 0 zeroes that row of the table (fairseq); fairseq's positions then start at
// padding_idx + 1 (make_positions), which is the caller's position offset in the kernels.
#pragma once

#include <cstdint>

#include <posenc/math/detail/fp_bits.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/pow.hpp>
#include <posenc/spec/rules.hpp>

namespace posenc {

enum class sinusoidal_layout : std::uint8_t {
  paper,  // interleaved [sin, cos, sin, cos, ...], exponent 2k/d
  split,  // [sin ... | cos ...] (+ a zero column for odd d), exponent k/(d/2 - 1)
};

// "paper", "split": the words of the tool and the docs; every value in declaration order.
constexpr const char* sinusoidal_layout_name(sinusoidal_layout l) {
  return l == sinusoidal_layout::paper ? "paper" : "split";
}
inline constexpr sinusoidal_layout all_sinusoidal_layouts[] = {sinusoidal_layout::paper,
                                                               sinusoidal_layout::split};

struct sinusoidal_config {
  std::uint32_t dim = 0;  // embedding width d
  sinusoidal_layout layout = sinusoidal_layout::paper;
  double base = 10000.0;          // 10000 in the paper, fairseq and tensor2tensor
  std::int64_t padding_idx = -1;  // a row to zero; -1 = none
};

enum class sinusoidal_error : std::uint8_t {
  ok,
  dim,          // dim must be positive
  split_dim,    // the split layout needs dim >= 2
  base,         // base must be finite and > 1
  padding_idx,  // padding_idx must be -1 (none) or >= 0
  positions,    // a table covers positions below 2^32 (runtime builders only)
};

// One line naming the rule; also the text of the matching static_assert.
constexpr const char* message(sinusoidal_error e) {
  switch (e) {
    case sinusoidal_error::ok:
      return "posenc: ok";
    case sinusoidal_error::dim:
      return "posenc: sinusoidal dim must be positive";
    case sinusoidal_error::split_dim:
      return "posenc: the split sinusoidal layout needs dim >= 2";
    case sinusoidal_error::base:
      return "posenc: sinusoidal base must be finite and > 1";
    case sinusoidal_error::padding_idx:
      return "posenc: sinusoidal padding_idx must be -1 (none) or >= 0";
    case sinusoidal_error::positions:
      return "posenc: a sinusoidal table covers positions below 2^32";
  }
  return "posenc: unknown error";
}

constexpr bool satisfies(const sinusoidal_config& c, sinusoidal_error e) {
  switch (e) {
    case sinusoidal_error::ok:
    case sinusoidal_error::positions:
      return true;
    case sinusoidal_error::dim:
      return c.dim > 0;
    case sinusoidal_error::split_dim:
      return c.layout != sinusoidal_layout::split || c.dim >= 2;
    case sinusoidal_error::base:
      return math::detail::is_finite(c.base) && c.base > 1.0;
    case sinusoidal_error::padding_idx:
      return c.padding_idx >= -1;
  }
  return false;
}

inline constexpr sinusoidal_error all_sinusoidal_rules[] = {
    sinusoidal_error::dim, sinusoidal_error::split_dim, sinusoidal_error::base,
    sinusoidal_error::padding_idx};

// The first rule c breaks, or sinusoidal_error::ok.
constexpr sinusoidal_error validate(const sinusoidal_config& c) {
  return spec_detail::first_broken_rule(c, all_sinusoidal_rules);
}

// Number of frequencies w_k: ceil(d/2) (paper) or floor(d/2) (split).
constexpr std::uint32_t sinusoidal_frequencies(const sinusoidal_config& c) {
  return c.layout == sinusoidal_layout::paper ? (c.dim + 1) / 2 : c.dim / 2;
}

// w_k as double-double (relative error ~2^-100): base^(-2k/d) (paper) or base^(-k/max(d/2-1, 1))
// (split). c valid, k < sinusoidal_frequencies(c).
constexpr math::dd sinusoidal_frequency_dd(const sinusoidal_config& c, std::uint32_t k) {
  if (c.layout == sinusoidal_layout::paper)
    return math::pow_ratio(c.base, -2 * static_cast<std::int64_t>(k), c.dim);
  const std::int64_t half = c.dim / 2;
  return math::pow_ratio(c.base, -static_cast<std::int64_t>(k), half > 1 ? half - 1 : 1);
}

// Where frequency k's sin and cos go in a row (cos_column == dim: no cos column, the last
// frequency of an odd-d paper table).
struct sinusoidal_columns {
  std::uint32_t sin_column = 0;
  std::uint32_t cos_column = 0;
};
constexpr sinusoidal_columns sinusoidal_columns_of(const sinusoidal_config& c, std::uint32_t k) {
  if (c.layout == sinusoidal_layout::paper) {
    const std::uint32_t s = 2 * k;
    return {s, s + 1 < c.dim ? s + 1 : c.dim};
  }
  return {k, c.dim / 2 + k};
}

// A compile-time sinusoidal encoding is a type with `static constexpr sinusoidal_config config`.
template <class S>
concept sinusoidal_spec = spec_detail::spec_of<S, sinusoidal_config>;

namespace spec_detail {
template <sinusoidal_spec S>
struct sinusoidal_spec_check {
  static constexpr sinusoidal_config c = S::config;
  static_assert(satisfies(c, sinusoidal_error::dim), "posenc: sinusoidal dim must be positive");
  static_assert(satisfies(c, sinusoidal_error::split_dim),
                "posenc: the split sinusoidal layout needs dim >= 2");
  static_assert(satisfies(c, sinusoidal_error::base),
                "posenc: sinusoidal base must be finite and > 1");
  static_assert(satisfies(c, sinusoidal_error::padding_idx),
                "posenc: sinusoidal padding_idx must be -1 (none) or >= 0");
  static constexpr bool valid = validate(c) == sinusoidal_error::ok;
};
}  // namespace spec_detail

// S::config, validated at compile time (a broken rule stops compilation with its message).
template <sinusoidal_spec S>
inline constexpr sinusoidal_config checked_sinusoidal =
    spec_detail::checked_form<spec_detail::sinusoidal_spec_check<S>>;

}  // namespace posenc
