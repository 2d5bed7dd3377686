// The frequencies theta_i of a whole config, as the table builders consume them. Internal to the
// tables layer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include <posenc/frequencies/rope.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/spec/rope_spec.hpp>

namespace posenc::detail {

// theta_0 .. theta_{Pairs-1} of a valid config at sequence length seq_len.
template <std::size_t Pairs>
constexpr std::array<math::dd, Pairs> rope_thetas(const rope_config& c, std::uint64_t seq_len) {
  std::array<math::dd, Pairs> th{};
  for (std::size_t i = 0; i < Pairs; ++i)
    th[i] = inv_freq_dd(c, static_cast<std::uint32_t>(i), seq_len);
  return th;
}

// The thetas of compile-time spec S at seq_len 0, evaluated once per spec and shared by
// rope_cache_v and the spec forms of the rotation functions: each inv_freq_dd costs milliseconds
// of constant evaluation (a double-double pow; yarn adds its correction range), and GCC caches
// variable templates where Clang re-evaluates every call.
template <rope_spec S>
inline constexpr std::array<math::dd, checked_rope<S>.rotary_dim / 2> spec_thetas_v =
    rope_thetas<checked_rope<S>.rotary_dim / 2>(checked_rope<S>, 0);

}  // namespace posenc::detail
