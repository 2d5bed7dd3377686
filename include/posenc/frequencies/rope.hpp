// RoPE inverse frequencies theta_i and the attention factor, for every scaling, rounded once to
// float or double. Their double-double definitions, inv_freq_dd and attention_factor_dd (relative
// error ~2^-100 before the final rounding), are in spec/rope.hpp next to the rules that check them;
// formulas and defaults follow HF transformers src/transformers/modeling_rope_utils.py
// (docs/formulas.md §2). HF evaluates them in float32 and lands up to a few ulp from the exact
// values that these functions round once. One constexpr function each, used by compile-time tables
// and at run time alike.
//
// seq_len is HF's runtime sequence length (max(position_ids) + 1); 0 means "none" (HF
// seq_len=None). Only dynamic and longrope depend on it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include <posenc/math/double_double.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/spec/rope.hpp>

namespace posenc {

// theta_i rounded once to T (float or double).
template <class T>
constexpr T inv_freq(const rope_config& c, std::uint32_t i, std::uint64_t seq_len = 0) {
  return math::round_to<T>(inv_freq_dd(c, i, seq_len));
}

// The attention factor rounded once to double.
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
