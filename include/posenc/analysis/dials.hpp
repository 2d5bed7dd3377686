// "Dials": each rotary pair i of RoPE is a clock hand turning by theta_i radians per token. Over a
// context of N tokens it completes N theta_i / (2 pi) turns, one turn every 2 pi / theta_i tokens
// (its wavelength). Pairs whose wavelength exceeds N never complete a turn within the context:
// their angle stays below 2 pi, so they act as absolute rather than periodic position signals
// (Peng et al. 2023, "YaRN", §3.2, which chooses which pairs to interpolate by exactly this
// count of turns over the original context; docs/formulas.md §2 "yarn" and "llama3").
//
// The slowest pair, i = R/2 - 1, has theta = base^(-(R-2)/R), so its wavelength is
// 2 pi base^((R-2)/R), which tends to 2 pi base as R grows (62831.85 tokens for base 10^4).
//
// A scaled configuration is shown next to its default: the same head_dim, rotary_dim and base with
// no scaling (theta_i = base^(-2i/R)), so that the YaRN and llama3 bands (pairs whose theta is
// divided by the factor, kept, or blended; analysis/ramp.hpp) and the NTK base shift (every pair
// but the first slowed, the last by exactly 1/factor) show as the ratio of the two.
//
// Everything is in double-double (math::dd): theta_i from inv_freq_dd, 2 pi to 106 bits, so a
// wavelength or a count of turns is within ~2^-100 relative of exact before rounding to double.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include <posenc/frequencies/rope.hpp>
#include <posenc/math/detail/series.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/spec/rope.hpp>

namespace posenc::analysis {

// 2 pi as a double-double (relative error below 2^-107).
inline constexpr math::dd two_pi = math::detail::two_pi;

// Tokens per turn of a pair of frequency theta > 0: 2 pi / theta.
constexpr math::dd wavelength_of(math::dd theta) {
  return two_pi / theta;
}

// Turns a pair of frequency theta completes over `context` tokens (context < 2^53):
// context theta / (2 pi).
constexpr math::dd turns_of(math::dd theta, std::uint64_t context) {
  return theta * static_cast<double>(context) / two_pi;
}

// One pair's dial over a context.
struct dial {
  math::dd inv_freq;         // theta_i, radians per token
  math::dd wavelength;       // 2 pi / theta_i, tokens per turn
  math::dd turns;            // context theta_i / (2 pi)
  bool never_turns = false;  // turns < 1: no full turn within the context (wavelength > context)
};

constexpr dial dial_of_theta(math::dd theta, std::uint64_t context) {
  const math::dd turns = turns_of(theta, context);
  return {theta, wavelength_of(theta), turns, turns < math::dd{1.0, 0.0}};
}

// The configuration without its scaling: head_dim, rotary_dim, base and layout kept.
constexpr rope_config unscaled(const rope_config& c) {
  rope_config d = c;
  d.scaling = rope_scaling{};
  return d;
}

// Pair i (< rotary_dim/2) of a valid configuration over `context` tokens; seq_len as for
// inv_freq_dd (dynamic, longrope).
constexpr dial dial_of(const rope_config& c, std::uint32_t i, std::uint64_t context,
                       std::uint64_t seq_len = 0) {
  return dial_of_theta(inv_freq_dd(c, i, seq_len), context);
}

// The scaled dial next to the default one.
struct dial_pair {
  dial scaled;
  dial unscaled;
};

constexpr dial_pair dial_pair_of(const rope_config& c, std::uint32_t i, std::uint64_t context,
                                 std::uint64_t seq_len = 0) {
  return {dial_of(c, i, context, seq_len), dial_of(unscaled(c), i, context)};
}

// The largest wavelength over the pairs (the slowest pair; the last one unless a longrope factor
// list reorders them).
constexpr math::dd slowest_wavelength(const rope_config& c, std::uint64_t seq_len = 0) {
  math::dd worst{0.0, 0.0};
  for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i) {
    const math::dd w = wavelength_of(inv_freq_dd(c, i, seq_len));
    if (worst < w) worst = w;
  }
  return worst;
}

// How many pairs never complete a turn within `context` tokens.
constexpr std::uint32_t pairs_never_turning(const rope_config& c, std::uint64_t context,
                                            std::uint64_t seq_len = 0) {
  std::uint32_t count = 0;
  for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i)
    count += dial_of(c, i, context, seq_len).never_turns ? 1u : 0u;
  return count;
}

// Every pair's dials as an array (N == rotary_dim / 2), e.g. for a static_assert on a preset.
template <std::size_t N>
constexpr std::array<dial_pair, N> dials_of(const rope_config& c, std::uint64_t context,
                                            std::uint64_t seq_len = 0) {
  std::array<dial_pair, N> out{};
  for (std::size_t i = 0; i < N && i < c.rotary_dim / 2; ++i)
    out[i] = dial_pair_of(c, static_cast<std::uint32_t>(i), context, seq_len);
  return out;
}

}  // namespace posenc::analysis
