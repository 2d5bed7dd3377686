// The frequencies theta_i of a compile-time spec, evaluated once, as the table builders consume
// them. Internal to the tables layer.
#pragma once

#include <array>

#include <posenc/frequencies/rope.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/spec/rope.hpp>

namespace posenc::tables_detail {

// The thetas of compile-time spec S at seq_len 0, evaluated once per spec and shared by
// rope_cache_v and the spec forms of the rotation functions: each inv_freq_dd costs milliseconds
// of constant evaluation (a double-double pow; yarn adds its correction range), and GCC caches
// variable templates where Clang re-evaluates every call.
template <rope_spec S>
inline constexpr std::array<math::dd, checked_rope<S>.rotary_dim / 2> spec_thetas_v =
    frequencies_detail::inv_freq_dd_array<checked_rope<S>.rotary_dim / 2>(checked_rope<S>, 0);

}  // namespace posenc::tables_detail
