// The laws every RoPE rotation is held to, written once. Each law is a constexpr function that
// returns the worst deviation it finds, so that a caller compares it with a tolerance: in a
// static_assert (proofs/laws.cpp) and in a RapidCheck property (tests/laws) under the same name.
// The tolerances are error bounds derived beside each law (docs/laws.md collects them):
//
//   orthogonality(rot, m)                    max |R_m^T R_m - I| over the pair blocks
//   norm_preservation(rot, m, x)             | ||R_m x|| - ||x|| |
//   relative_dependence(rot, m, n, s, q, k)  |<R_m q, R_n k> - <R_{m+s} q, R_{n+s} k>|
//   relative_dependence_blocks(rot, m, n)    max |R_m^T R_n - R_{n-m}| over the pair blocks
//   decay_below_origin(src, r_last)          max_{1 <= r <= r_last} f(r) - f(0)        (< 0)
//   decay_below(src, r0, r_last)             max_{r0 < r <= r_last} f(r) - f(r0)       (< 0)
//   decay_decreasing(src, r_first, r_last)   max_{r_first <= r < r_last} f(r+1) - f(r) (< 0)
//   dyadic_means_decreasing(src, k_last)     max_{0 <= k < k_last} M_{k+1} - M_k       (< 0)
//
// A rotation is any type with head_dim(), pairs(), channels(i) and pair(i).at(m) (the 2x2 block of
// pair i at position m); rope_rotation<T> is R_m of a rope_config with its cos/sin entries rounded
// to T, as in a table of T. The attention factor (which multiplies cos and sin alike) is not part
// of R_m: a table scaled by a has R^T R = a^2 I. Positions m, n, m + s, n + s < 2^32.
//
// f is the RoFormer decay bound of analysis/decay.hpp; src is the frequencies (any theta_sequence,
// or rope_thetas{config}; a rope_config for decay_below_origin) or decay_samples computed once, and
// a decay law holds when its result is below -decay_tolerance(n).
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <posenc/analysis/decay.hpp>
#include <posenc/frequencies/rope.hpp>
#include <posenc/math/angle.hpp>
#include <posenc/math/angle_grid.hpp>
#include <posenc/math/detail/fp_bits.hpp>
#include <posenc/math/detail/sqrt.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/math/trig.hpp>
#include <posenc/spec/rope.hpp>

namespace posenc::analysis {

// One 2x2 block acting on the pair (x, y): x' = a x + b y, y' = c x + d y.
struct block2 {
  double a = 1.0;
  double b = 0.0;
  double c = 0.0;
  double d = 1.0;
};

// The names these had before pair_channels moved next to rope_layout (spec/rope.hpp).
using channel_pair [[deprecated("posenc: use posenc::channel_pair (spec/rope.hpp)")]] =
    posenc::channel_pair;
[[deprecated("posenc: use posenc::pair_channels (spec/rope.hpp)")]] constexpr posenc::channel_pair
channels_of(rope_layout layout, std::uint32_t rotary_dim, std::uint32_t i) {
  return posenc::pair_channels(layout, rotary_dim, i);
}

// A block-diagonal rotation: pairs() blocks on the channels channels(i), the channels from
// 2 pairs() to head_dim() pass through. pair(i) may do the per-pair work (e.g. theta_i) once.
template <class R>
concept block_rotation = requires(const R& r, std::uint32_t i, std::uint64_t m) {
  { r.head_dim() } -> std::convertible_to<std::uint32_t>;
  { r.pairs() } -> std::convertible_to<std::uint32_t>;
  { r.channels(i) } -> std::convertible_to<posenc::channel_pair>;
  { r.pair(i).at(m) } -> std::convertible_to<block2>;
};

// Pair i of a RoPE rotation: [[cos, -sin], [sin, cos]] of m theta_i, entries rounded to T.
template <class T>
struct rope_pair {
  math::dd theta;
  constexpr block2 at(std::uint64_t m) const {
    const math::sincos_result<T> v = math::sincos_of_product<T>(m, theta);
    const auto c = static_cast<double>(v.cos);
    const auto s = static_cast<double>(v.sin);
    return {c, -s, s, c};
  }
};

namespace detail {
template <class Thetas>
constexpr Thetas default_thetas(const rope_config& c) {
  if constexpr (std::is_same_v<Thetas, rope_thetas>) {
    return rope_thetas{c, 0};
  } else {
    return Thetas{};
  }
}
}  // namespace detail

// R_m of a RoPE configuration (validate(config) == ok) with entries rounded to T (float or
// double): the entries of the cos/sin tables of T, i.e. math::sincos_of_product<T>(m, theta_i).
// The frequencies come from inv_freq_dd on demand (rope_rotation<T>{config}), or from a sequence
// computed once, e.g. rope_rotation<T, std::array<math::dd, N>>{config, thetas_of<N>(config)}
// (cheaper in constant evaluation); for dynamic and longrope pass rope_thetas{config, seq_len}.
template <class T = double, theta_sequence Thetas = rope_thetas>
struct rope_rotation {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "posenc: rotation entries are float or double");
  rope_config config;
  Thetas thetas = detail::default_thetas<Thetas>(config);
  constexpr std::uint32_t head_dim() const { return config.head_dim; }
  constexpr std::uint32_t pairs() const { return config.rotary_dim / 2; }
  constexpr posenc::channel_pair channels(std::uint32_t i) const {
    return posenc::pair_channels(config.layout, config.rotary_dim, i);
  }
  constexpr rope_pair<T> pair(std::uint32_t i) const { return {thetas[i]}; }
};

// The R/2 frequencies of config (N == rotary_dim / 2) as an array.
template <std::size_t N>
constexpr std::array<math::dd, N> thetas_of(const rope_config& c, std::uint64_t seq_len = 0) {
  return frequencies_detail::inv_freq_dd_array<N>(c, seq_len);
}

// R_m read from a table: a math::sincos_grid<T, P, F> (cos[p * F + i], e.g. built at compile time
// by math::make_sincos_grid from thetas_of<F>(config)) for positions m < P, with the layout and
// head_dim of config (rotary_dim == 2F). A position beyond the table gives NaN entries, so every
// law fails there (Clang stops constant evaluation at the NaN; GCC and run time return NaN).
template <class T, std::size_t P, std::size_t F>
struct grid_rotation {
  const math::sincos_grid<T, P, F>* grid;
  rope_config config;
  struct pair_view {
    const math::sincos_grid<T, P, F>* grid;
    std::uint32_t i;
    constexpr block2 at(std::uint64_t m) const {
      if (m >= P) {
        constexpr double nan = std::numeric_limits<double>::quiet_NaN();
        return {nan, nan, nan, nan};
      }
      const auto c = static_cast<double>(grid->cos[m * F + i]);
      const auto s = static_cast<double>(grid->sin[m * F + i]);
      return {c, -s, s, c};
    }
  };
  constexpr std::uint32_t head_dim() const { return config.head_dim; }
  constexpr std::uint32_t pairs() const { return static_cast<std::uint32_t>(F); }
  constexpr posenc::channel_pair channels(std::uint32_t i) const {
    return posenc::pair_channels(config.layout, 2 * static_cast<std::uint32_t>(F), i);
  }
  constexpr pair_view pair(std::uint32_t i) const { return {grid, i}; }
};

// ---------------------------------------------------------------------------------------------
// Error bounds. u = 2^-53 is the unit roundoff of double, in which every law is evaluated.
// entry_error<T> bounds the relative error of one cos/sin entry of type T against the exact
// cos/sin of the angle m theta_i (theta_i the double-double frequency itself):
// - float: correctly rounded, |e| <= 2^-24 |x|, except where the exact value lies within the
//   double-double residue (~2^-90 relative) of a midpoint: 2^-24 (1 + 2^-40);
// - double: within 1 ulp (math::sincos_of_product, docs/math.md), |e| <= 2^-52 |x| (1 + 2^-40).
// The angle m theta_i itself is exact to ~2^-104 relative for m < 2^32 and enters the entries only
// through that promise: it does not grow into the laws, which compare rotations of one and the same
// theta_i. (An engine that rounds the angle to float32 breaks relative_dependence by about
// |angle| 2^-24, growing with position; tests/laws shows it.)
// For a block E = [[dc, -ds], [ds, dc]] of entry errors, ||E||_2 = sqrt(dc^2 + ds^2) <= eps.

namespace detail {
inline constexpr double u = 0x1p-53;

// The math layer's helpers, as the laws call them: |x| (+0 for -0; a law's deviation is never
// -0), the larger of two values that keeps a NaN (so that a law fed a NaN entry fails), a product
// rounded once, a0 b0 + a1 b1 with both products rounded, and sqrt within 1 ulp.
using math::detail::dot2;
using math::detail::fabs;
using math::detail::max;
using math::detail::product;
using math::detail::sqrt;
}  // namespace detail

template <class T>
inline constexpr double entry_error =
    std::is_same_v<T, float> ? 0x1.0000000001p-24 : 0x1.0000000001p-52;

// Euclidean norm of x (size() and operator[]), in double, relative error <= (D/2 + 1) u.
template <class Vec>
constexpr double vector_norm(const Vec& x) {
  double s = 0.0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    const auto v = static_cast<double>(x[j]);
    s += detail::product(v, v);
  }
  return detail::sqrt(s);
}

// ---------------------------------------------------------------------------------------------
// orthogonality: R_m^T R_m = I. Returns max |(B^T B - I)_jk| over the blocks B of R_m (the
// pass-through channels are the identity).
template <block_rotation Rot>
constexpr double orthogonality(const Rot& rot, std::uint64_t m) {
  double worst = 0.0;
  for (std::uint32_t i = 0; i < rot.pairs(); ++i) {
    const block2 b = rot.pair(i).at(m);
    worst = detail::max(worst, detail::fabs(detail::dot2(b.a, b.c, b.a, b.c) - 1.0));
    worst = detail::max(worst, detail::fabs(detail::dot2(b.a, b.c, b.b, b.d)));
    worst = detail::max(worst, detail::fabs(detail::dot2(b.b, b.d, b.b, b.d) - 1.0));
  }
  return worst;
}
constexpr double orthogonality(const rope_config& c, std::uint64_t m) {
  return orthogonality(rope_rotation<double>{c}, m);
}

// Tolerance of orthogonality for RoPE entries of type T. The off-diagonal entry is
// cos (-sin) + sin cos = 0 exactly (the same product twice). On the diagonal, with c = cos + dc and
// s = sin + ds: c^2 + s^2 - 1 = 2(cos dc + sin ds) + dc^2 + ds^2, at most 2 eps + eps^2; the two
// squares, their sum and the subtraction of 1 (exact, Sterbenz) add at most 4 u.
template <class T>
constexpr double orthogonality_tolerance() {
  constexpr double e = entry_error<T>;
  return 2.0 * e + e * e + 4.0 * detail::u;
}

// ---------------------------------------------------------------------------------------------
// norm_preservation: ||R_m x|| = ||x||. x has head_dim() entries. Returns | ||R_m x|| - ||x|| |.
template <block_rotation Rot, class Vec>
constexpr double norm_preservation(const Rot& rot, std::uint64_t m, const Vec& x) {
  double ny = 0.0;
  double nx = 0.0;
  for (std::uint32_t i = 0; i < rot.pairs(); ++i) {
    const block2 b = rot.pair(i).at(m);
    const posenc::channel_pair ch = rot.channels(i);
    const auto x0 = static_cast<double>(x[ch.first]);
    const auto x1 = static_cast<double>(x[ch.second]);
    const double y0 = detail::dot2(b.a, b.b, x0, x1);
    const double y1 = detail::dot2(b.c, b.d, x0, x1);
    ny += detail::dot2(y0, y1, y0, y1);
    nx += detail::dot2(x0, x1, x0, x1);
  }
  for (std::uint32_t j = 2 * rot.pairs(); j < rot.head_dim(); ++j) {
    const auto v = static_cast<double>(x[j]);
    ny += detail::product(v, v);
    nx += detail::product(v, v);
  }
  return detail::fabs(detail::sqrt(ny) - detail::sqrt(nx));
}
template <class Vec>
constexpr double norm_preservation(const rope_config& c, std::uint64_t m, const Vec& x) {
  return norm_preservation(rope_rotation<double>{c}, m, x);
}

// Tolerance of norm_preservation for RoPE entries of type T, head_dim D and ||x|| = norm_x.
// - The rounded rotation: each block is B + E with ||E|| <= eps, so
//   | ||R~ x|| - ||x|| | <= eps ||x||.
// - Applying it in double: y0 = a x0 + b x1 has error <= 2u (|a x0| + |b x1|), at most
//   2u (1 + eps) ||x_p|| (Cauchy-Schwarz), so the pair's error vector is at most
//   2 sqrt(2) u (1 + eps) ||x_p||: 2.83 u ||x|| in all.
// - Each norm: D squares summed (relative error <= D u, to first order) and one sqrt (u/2 + u):
//   (D/2 + 1.5) u relative, for ||y|| and for ||x||.
// Total, with second-order terms inside the last 2 u: (eps + (D + 8) u) ||x||.
template <class T>
constexpr double norm_tolerance(std::size_t head_dim, double norm_x) {
  return (entry_error<T> + (static_cast<double>(head_dim) + 8.0) * detail::u) * norm_x;
}

// ---------------------------------------------------------------------------------------------
// relative_dependence: <R_m q, R_n k> depends on n - m only. Returns
// |<R_m q, R_n k> - <R_{m+s} q, R_{n+s} k>| for vectors q, k of head_dim() entries.
template <block_rotation Rot, class Vec>
constexpr double relative_dependence(const Rot& rot, std::uint64_t m, std::uint64_t n,
                                     std::uint64_t s, const Vec& q, const Vec& k) {
  double lhs = 0.0;
  double rhs = 0.0;
  for (std::uint32_t i = 0; i < rot.pairs(); ++i) {
    const auto p = rot.pair(i);
    const posenc::channel_pair ch = rot.channels(i);
    const auto q0 = static_cast<double>(q[ch.first]);
    const auto q1 = static_cast<double>(q[ch.second]);
    const auto k0 = static_cast<double>(k[ch.first]);
    const auto k1 = static_cast<double>(k[ch.second]);
    const block2 bm = p.at(m);
    const block2 bn = p.at(n);
    const block2 bms = p.at(m + s);
    const block2 bns = p.at(n + s);
    lhs += detail::dot2(detail::dot2(bm.a, bm.b, q0, q1), detail::dot2(bm.c, bm.d, q0, q1),
                        detail::dot2(bn.a, bn.b, k0, k1), detail::dot2(bn.c, bn.d, k0, k1));
    rhs += detail::dot2(detail::dot2(bms.a, bms.b, q0, q1), detail::dot2(bms.c, bms.d, q0, q1),
                        detail::dot2(bns.a, bns.b, k0, k1), detail::dot2(bns.c, bns.d, k0, k1));
  }
  for (std::uint32_t j = 2 * rot.pairs(); j < rot.head_dim(); ++j) {
    const double t = detail::product(static_cast<double>(q[j]), static_cast<double>(k[j]));
    lhs += t;
    rhs += t;
  }
  return detail::fabs(lhs - rhs);
}
template <class Vec>
constexpr double relative_dependence(const rope_config& c, std::uint64_t m, std::uint64_t n,
                                     std::uint64_t s, const Vec& q, const Vec& k) {
  return relative_dependence(rope_rotation<double>{c}, m, n, s, q, k);
}

// Tolerance of relative_dependence for RoPE entries of type T, head_dim D, norms of q and k.
// - The rounded rotations: per pair, B~_m^T B~_n = B_{n-m} + B_m^T E_n + E_m^T B_n + E_m^T E_n is
//   within 2 eps + eps^2 of B_{n-m} (spectral norm); the same for m + s, n + s. So the two exact
//   inner products of the rounded rotations differ by <= 2 (2 eps + eps^2) sum_p ||q_p|| ||k_p||
//   <= (4 eps + 2 eps^2) ||q|| ||k||. This does not depend on m, n or s: every entry is rounded
//   once from an angle that is exact to ~2^-104 (see above).
// - Each inner product in double: R~ q and R~ k are each within 2.83 u (1 + eps) of their exact
//   values (as in norm_tolerance), and the dot product of length D adds <= D u ||y|| ||z||
//   (first order): (D + 5.7) u (1 + eps)^2 ||q|| ||k|| each.
// Total, second-order terms inside the last 2 u: (4 eps + 2 eps^2 + 2 (D + 7) u) ||q|| ||k||.
template <class T>
constexpr double relative_tolerance(std::size_t head_dim, double norm_q, double norm_k) {
  constexpr double e = entry_error<T>;
  return (4.0 * e + 2.0 * e * e + 2.0 * (static_cast<double>(head_dim) + 7.0) * detail::u) *
         norm_q * norm_k;
}

// relative_dependence in matrix form: R_m^T R_n = R_{n-m} (for n < m, R_{n-m} = R_{m-n}^T). Returns
// max |(B_m^T B_n - B_{n-m})_jk| over the blocks (the pass-through channels agree exactly).
template <block_rotation Rot>
constexpr double relative_dependence_blocks(const Rot& rot, std::uint64_t m, std::uint64_t n) {
  double worst = 0.0;
  for (std::uint32_t i = 0; i < rot.pairs(); ++i) {
    const auto p = rot.pair(i);
    const block2 bm = p.at(m);
    const block2 bn = p.at(n);
    block2 t = n >= m ? block2(p.at(n - m)) : block2(p.at(m - n));
    if (n < m) t = {t.a, t.c, t.b, t.d};  // transpose
    // B_m^T B_n with B_m = [[a, b], [c, d]]: [[a a' + c c', a b' + c d'], [b a' + d c', b b' + d
    // d']].
    worst = detail::max(worst, detail::fabs(detail::dot2(bm.a, bm.c, bn.a, bn.c) - t.a));
    worst = detail::max(worst, detail::fabs(detail::dot2(bm.a, bm.c, bn.b, bn.d) - t.b));
    worst = detail::max(worst, detail::fabs(detail::dot2(bm.b, bm.d, bn.a, bn.c) - t.c));
    worst = detail::max(worst, detail::fabs(detail::dot2(bm.b, bm.d, bn.b, bn.d) - t.d));
  }
  return worst;
}
constexpr double relative_dependence_blocks(const rope_config& c, std::uint64_t m,
                                            std::uint64_t n) {
  return relative_dependence_blocks(rope_rotation<double>{c}, m, n);
}

// Tolerance of relative_dependence_blocks for RoPE entries of type T: B~_m^T B~_n is within
// 2 eps + eps^2 of B_{n-m} (above) and B~_{n-m} within eps of it, entrywise at most the spectral
// norm; each entry of the product is two rounded products and a sum (2u (1 + eps)^2) and the
// difference one more rounding of a tiny number: 3 eps + eps^2 + 3 u.
template <class T>
constexpr double relative_blocks_tolerance() {
  constexpr double e = entry_error<T>;
  return 3.0 * e + e * e + 3.0 * detail::u;
}

// ---------------------------------------------------------------------------------------------
// Decay (analysis/decay.hpp). Each law returns a maximum of differences that the statement wants
// negative; f comes from for_each_decay_bound, within decay_error(n) of exact, so a difference of
// two values is within 2 decay_error(n), and the statement is proven when the result is below
// -decay_tolerance(n). (The dyadic means are summed in double-double: the mean of values within
// decay_error(n) is within decay_error(n) plus ~2^-90 n, which the slack of decay_error covers.)
constexpr double decay_tolerance(std::size_t n) {
  return 2.0 * decay_error(n);
}

// f(r) < f(0) for 1 <= r <= r_last. True for every r >= 1 when n >= 2 (docs/formulas.md §8:
// |S_j| <= j, and |S_2| = 2 would need r (theta_0 - theta_1) in 2 pi Z); false for n = 1 and for
// equal (or commensurate) frequencies. Returns max f(r) - f(0) (f(0) = (n + 1)/2 exactly).
template <decay_source Source>
constexpr double decay_below_origin(const Source& source, std::uint64_t r_last) {
  const double f0 = decay_at_origin(pairs_of(source));
  double worst = -std::numeric_limits<double>::infinity();
  visit_decay(source, 1, r_last,
              [&](std::uint64_t, double f) { worst = detail::max(worst, f - f0); });
  return worst;
}
constexpr double decay_below_origin(const rope_config& c, std::uint64_t r_last) {
  return decay_below_origin(rope_thetas{c}, r_last);
}

// f(r) < f(r0) for r0 < r <= r_last ("r0 is a record"). For d = 128, base 10^4 this holds up to
// r_last = 65536 for r0 in {0..17, 19, 20, 21} and for no other r0 < 30950 (formulas.md §8).
// Returns max f(r) - f(r0).
template <decay_source Source>
constexpr double decay_below(const Source& source, std::uint64_t r0, std::uint64_t r_last) {
  double f0 = 0.0;
  double worst = -std::numeric_limits<double>::infinity();
  visit_decay(source, r0, r_last - r0 + 1, [&](std::uint64_t r, double f) {
    if (r == r0) {
      f0 = f;
    } else {
      worst = detail::max(worst, f - f0);
    }
  });
  return worst;
}

// f strictly decreasing on [r_first, r_last]: f(r + 1) < f(r). For d = 128, base 10^4 it is on
// [0, 18] and not on [0, 19] (f(19) > f(18)): f is not monotone. Returns max f(r + 1) - f(r).
template <decay_source Source>
constexpr double decay_decreasing(const Source& source, std::uint64_t r_first,
                                  std::uint64_t r_last) {
  double prev = 0.0;
  double worst = -std::numeric_limits<double>::infinity();
  visit_decay(source, r_first, r_last - r_first + 1, [&](std::uint64_t r, double f) {
    if (r != r_first) worst = detail::max(worst, f - prev);
    prev = f;
  });
  return worst;
}

// The means M_k of f over the dyadic windows [2^k, 2^(k+1)) strictly decrease for
// k = 0..k_last: M_{k+1} < M_k for k < k_last. For d = 128, base 10^4 they do up to k_last = 13
// (r < 16384) and then level off (M_14 > M_13, formulas.md §8). Returns max M_{k+1} - M_k.
template <decay_source Source>
constexpr double dyadic_means_decreasing(const Source& source, unsigned k_last) {
  double prev = 0.0;
  double worst = -std::numeric_limits<double>::infinity();
  math::dd sum{0.0, 0.0};
  unsigned k = 0;
  const std::uint64_t r_end = std::uint64_t{2} << k_last;  // 2^(k_last + 1)
  visit_decay(source, 1, r_end - 1, [&](std::uint64_t r, double f) {
    sum = sum + f;
    if (r + 1 == (std::uint64_t{2} << k)) {  // the last r of window k
      const double mean = math::to_double(sum / static_cast<double>(std::uint64_t{1} << k));
      if (k > 0) worst = detail::max(worst, mean - prev);
      prev = mean;
      sum = {0.0, 0.0};
      ++k;
    }
  });
  return worst;
}

}  // namespace posenc::analysis
