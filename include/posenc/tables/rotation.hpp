// The RoPE rotation R_m for position m, as a dense head_dim x head_dim matrix and as a list of
// 2x2 pair rotations, and the scalar reference that applies it (the reference the SIMD kernels are
// checked against).
//
// R_m is block-diagonal up to a permutation: pair i < R/2 rotates channels (first, second) by the
// angle m * theta_i, and channels >= R (partial rotary) pass through unchanged. The pairs are
// (2i, 2i+1) for rope_layout::interleaved and (i, i + R/2) for rope_layout::half
// (docs/formulas.md §1). With y = R_m x (row-major matrix, column vector x):
//   y[first]  = x[first] cos(m theta_i) - x[second] sin(m theta_i)
//   y[second] = x[first] sin(m theta_i) + x[second] cos(m theta_i).
// The two layouts' matrices are conjugate by the permutation that sends channel 2i to i and 2i+1
// to i + R/2: R_half[pi(r)][pi(c)] == R_interleaved[r][c].
//
// These are pure rotations: cos and sin are cos/sin(m * theta_i) rounded once to T (the
// correctly rounded values of math::sincos_of_product<T>), WITHOUT the attention factor. The
// cos/sin caches (tables/rope_cache.hpp) carry the attention factor, as HF and ggml do; a cache
// entry equals the matching pair_rotation entry bit for bit when the factor is 1.
//
// seq_len: as for the caches (only dynamic and longrope depend on it; 0 means none).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

#include <posenc/frequencies/rope.hpp>
#include <posenc/math/angle.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/math/trig.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/spec/rules.hpp>
#include <posenc/tables/detail/thetas.hpp>

namespace posenc {

// Before channel_pair and pair_channels moved next to rope_layout (spec/rope.hpp).
using rope_pair_channels [[deprecated("posenc: use posenc::channel_pair (spec/rope.hpp)")]] =
    channel_pair;

// One 2x2 rotation: channels (first, second) by the angle whose cos and sin these are.
template <class T>
struct pair_rotation {
  T cos{};
  T sin{};
  std::uint32_t first = 0;
  std::uint32_t second = 0;
};

namespace tables_detail {
// theta_i of a runtime config, computed on demand (no storage needed for any rotary_dim).
struct config_thetas {
  const rope_config& c;
  std::uint64_t seq_len;
  constexpr math::dd operator()(std::uint32_t i) const { return inv_freq_dd(c, i, seq_len); }
};
// theta_i of a compile-time spec, evaluated once (tables/detail/thetas.hpp).
template <rope_spec S>
struct spec_thetas {
  constexpr math::dd operator()(std::uint32_t i) const { return spec_thetas_v<S>[i]; }
};

// Pair i of a valid config at position m.
template <class T>
constexpr pair_rotation<T> pair_rotation_at(const rope_config& c, std::uint32_t i, std::uint64_t m,
                                            math::dd theta) {
  const math::sincos_result<T> v = math::sincos_of_product<T>(m, theta);
  const channel_pair ch = pair_channels(c, i);
  return {v.cos, v.sin, ch.first, ch.second};
}

template <class T, class Thetas>
constexpr void fill_rotation_pairs(const rope_config& c, std::uint64_t m, Thetas theta,
                                   pair_rotation<T>* out) {
  for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i)
    out[i] = pair_rotation_at<T>(c, i, m, theta(i));
}

template <class T, class Thetas>
constexpr void fill_rotation_matrix(const rope_config& c, std::uint64_t m, Thetas theta, T* out) {
  const std::size_t d = c.head_dim;
  for (std::size_t k = 0; k < d * d; ++k) out[k] = T(0);
  for (std::size_t k = c.rotary_dim; k < d; ++k) out[k * d + k] = T(1);
  for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i) {
    const pair_rotation<T> r = pair_rotation_at<T>(c, i, m, theta(i));
    const std::size_t a = r.first;
    const std::size_t b = r.second;
    out[a * d + a] = r.cos;
    out[a * d + b] = -r.sin;
    out[b * d + a] = r.sin;
    out[b * d + b] = r.cos;
  }
}

// Deliberately not constexpr: an array-returning function below calls it when its precondition
// fails, so that constant evaluation stops here, naming the problem.
inline void rotation_precondition_failed_invalid_config_or_size_mismatch() {}

// What an array form returns at run time when its precondition fails: NaN entries.
template <class T>
constexpr void set_nan(T& v) {
  v = std::numeric_limits<T>::quiet_NaN();
}
template <class T>
constexpr void set_nan(pair_rotation<T>& r) {
  r.cos = r.sin = std::numeric_limits<T>::quiet_NaN();
}

// The array form of a rotation function: fill(out.data()) when c is valid and size_matches; else
// constant evaluation stops (rotation_precondition_failed_...), and at run time every entry is NaN.
template <class Array, class Fill>
constexpr Array checked_array(const rope_config& c, bool size_matches, Fill fill) {
  Array out{};
  if (validate(c) != rope_error::ok || !size_matches) {
    rotation_precondition_failed_invalid_config_or_size_mismatch();
    for (auto& v : out) set_nan(v);
    return out;
  }
  fill(out.data());
  return out;
}
}  // namespace tables_detail

// Applies one pair rotation: y[first] = x[first] cos - x[second] sin and
// y[second] = x[first] sin + x[second] cos, in T, each product rounded once (never fused into an
// FMA: math::detail::product) and then the sum or difference rounded once. Both inputs are read
// before either output is written, so x == y is allowed.
template <class T>
constexpr void apply_pair_rotation(const pair_rotation<T>& r, const T* x, T* y) {
  const T a = x[r.first];
  const T b = x[r.second];
  y[r.first] = math::detail::product(a, r.cos) - math::detail::product(b, r.sin);
  y[r.second] = math::detail::product(a, r.sin) + math::detail::product(b, r.cos);
}

namespace tables_detail {
template <class T, class Thetas>
constexpr void apply_rotation_with(const rope_config& c, std::uint64_t m, Thetas theta, const T* x,
                                   T* y) {
  for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i)
    apply_pair_rotation(pair_rotation_at<T>(c, i, m, theta(i)), x, y);
  for (std::size_t k = c.rotary_dim; k < c.head_dim; ++k) y[k] = x[k];
}
}  // namespace tables_detail

// ---- runtime configs -------------------------------------------------------------------------

// Writes the rotary_dim/2 pair rotations of position m to out[0 .. R/2), in pair order. If c is
// invalid, returns the broken rule and writes nothing.
template <class T>
constexpr rope_error rotation_pairs(const rope_config& c, std::uint64_t m, pair_rotation<T>* out,
                                    std::uint64_t seq_len = 0) {
  static_assert(math::detail::is_float_or_double<T>, "posenc: tables are float or double");
  return spec_detail::write_if_valid(c, [&] {
    tables_detail::fill_rotation_pairs<T>(c, m, tables_detail::config_thetas{c, seq_len}, out);
  });
}

// The same as an array, for constant evaluation. Precondition: c is valid and Pairs ==
// rotary_dim/2. If it fails, constant evaluation stops with an error (a call to a non-constexpr
// function), and at run time every cos and sin is NaN.
template <class T, std::size_t Pairs>
constexpr std::array<pair_rotation<T>, Pairs> rotation_pairs(const rope_config& c, std::uint64_t m,
                                                             std::uint64_t seq_len = 0) {
  static_assert(math::detail::is_float_or_double<T>, "posenc: tables are float or double");
  return tables_detail::checked_array<std::array<pair_rotation<T>, Pairs>>(
      c, c.rotary_dim / 2 == Pairs, [&](pair_rotation<T>* out) {
        tables_detail::fill_rotation_pairs<T>(c, m, tables_detail::config_thetas{c, seq_len}, out);
      });
}

// Writes the dense R_m (head_dim x head_dim, row-major: out[r * head_dim + k], y = R_m x) to out.
// If c is invalid, returns the broken rule and writes nothing.
template <class T>
constexpr rope_error rotation_matrix(const rope_config& c, std::uint64_t m, T* out,
                                     std::uint64_t seq_len = 0) {
  static_assert(math::detail::is_float_or_double<T>, "posenc: tables are float or double");
  return spec_detail::write_if_valid(c, [&] {
    tables_detail::fill_rotation_matrix<T>(c, m, tables_detail::config_thetas{c, seq_len}, out);
  });
}

// The same as an array, for constant evaluation. Precondition: c is valid and D == head_dim. If it
// fails, constant evaluation stops with an error (a call to a non-constexpr function), and at run
// time every entry is NaN.
template <class T, std::size_t D>
constexpr std::array<T, D * D> rotation_matrix(const rope_config& c, std::uint64_t m,
                                               std::uint64_t seq_len = 0) {
  static_assert(math::detail::is_float_or_double<T>, "posenc: tables are float or double");
  return tables_detail::checked_array<std::array<T, D * D>>(c, c.head_dim == D, [&](T* out) {
    tables_detail::fill_rotation_matrix<T>(c, m, tables_detail::config_thetas{c, seq_len}, out);
  });
}

// y = R_m x for one head vector x of head_dim channels: every pair by apply_pair_rotation (cos and
// sin correctly rounded to T, no attention factor), channels >= rotary_dim copied. x == y (in
// place) is allowed; other overlaps are not. If c is invalid, returns the broken rule and writes
// nothing.
//
// Equal by value (==) to the dense product sum_k R_m[r][k] x[k] accumulated in T from +0 in
// increasing k: each row has at most two non-zero entries (first < second), adding a zero term to
// a non-zero sum is exact and (-s) x == -(s x), so both round the same two products and the same
// sum; only the sign of a zero result may differ.
template <class T>
constexpr rope_error apply_rotation(const rope_config& c, std::uint64_t m, const T* x, T* y,
                                    std::uint64_t seq_len = 0) {
  static_assert(math::detail::is_float_or_double<T>, "posenc: tables are float or double");
  return spec_detail::write_if_valid(c, [&] {
    tables_detail::apply_rotation_with(c, m, tables_detail::config_thetas{c, seq_len}, x, y);
  });
}

// ---- compile-time specs ----------------------------------------------------------------------
// The same for a compile-time spec S (validated at compile time; seq_len 0). The thetas of S are
// evaluated once per spec and shared with rope_cache_v, which makes these much cheaper in constant
// evaluation than the runtime-config forms when called repeatedly. Same values, bit for bit.

template <rope_spec S, class T>
constexpr std::array<pair_rotation<T>, checked_rope<S>.rotary_dim / 2> rotation_pairs(
    std::uint64_t m) {
  static_assert(math::detail::is_float_or_double<T>, "posenc: tables are float or double");
  std::array<pair_rotation<T>, checked_rope<S>.rotary_dim / 2> out{};
  tables_detail::fill_rotation_pairs<T>(checked_rope<S>, m, tables_detail::spec_thetas<S>{},
                                        out.data());
  return out;
}

template <rope_spec S, class T>
constexpr std::array<T, std::size_t{checked_rope<S>.head_dim} * checked_rope<S>.head_dim>
rotation_matrix(std::uint64_t m) {
  static_assert(math::detail::is_float_or_double<T>, "posenc: tables are float or double");
  std::array<T, std::size_t{checked_rope<S>.head_dim} * checked_rope<S>.head_dim> out{};
  tables_detail::fill_rotation_matrix<T>(checked_rope<S>, m, tables_detail::spec_thetas<S>{},
                                         out.data());
  return out;
}

// x and y have head_dim channels each; x == y is allowed.
template <rope_spec S, class T>
constexpr void apply_rotation(std::uint64_t m, const T* x, T* y) {
  static_assert(math::detail::is_float_or_double<T>, "posenc: tables are float or double");
  tables_detail::apply_rotation_with(checked_rope<S>, m, tables_detail::spec_thetas<S>{}, x, y);
}

}  // namespace posenc
