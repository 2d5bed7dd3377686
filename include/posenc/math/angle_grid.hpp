// Whole runs and grids of cos/sin(p * theta), each entry bit-identical to sincos_of_product<T>,
// at a small fraction of its cost: this is what RoPE tables are built from, at compile time and at
// run time alike.
//
// Method (angle addition with a proven error bound): p = 64a + b. L = sincos(b theta) comes from
// repeated angle addition in double from sincos(theta); H = sincos(64a theta) likewise from
// sincos(64 theta), restarted from the double-double path every 64 steps. After at most 63 steps
// each is within 2^-44.9 of exact (detail::add_angles). An entry is cos = Hc Lc - Hs Ls,
// sin = Hs Lc + Hc Ls in double: error below 2 * 2^-44.9 + 2 sqrt(2) 2^-53 < 2^-43.85. A float
// entry is that double rounded, unless a float rounding midpoint lies within 2^-43 of it (then no
// fast answer is certain; this happens for roughly one entry in 2^17 of magnitude above 1/2) — such
// entries, and all double entries, come from the per-element double-double path. Hence every entry
// equals sincos_of_product<T>(p, theta) whatever the loop order, and run time matches compile time.
//
// Compile-time cost: the per-entry code is written inline in the loops that own the output, because
// constant evaluation pays for each call (GCC caches every call) and for each store through a
// pointer or reference (Clang); and the grid is written in index order (GCC's constexpr array
// stores are cheap only in order), with as few named temporaries as possible. At run time every
// product goes through detail::product, which the compiler cannot fuse into an FMA. See
// docs/compile-time.md for the measured numbers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <posenc/math/angle.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/math/trig.hpp>

namespace posenc::math {

namespace detail {
inline constexpr std::size_t kAngleBlock = 64;

// Error bound of an entry before rounding to float (see the header comment): below 2^-43.85 for
// scale 1. With a scale s (the attention factor) the low values carry s (rounded: + u s) and
// s.lo is dropped (<= u s): error below s (2^-43.85 + 2 u) < s 2^-43.8, so the margin
// max(1, s) 2^-43 keeps the guard sound.
inline constexpr double kCombineEps = 0x1p-43;
constexpr double combine_eps(dd scale) {
  const double a = scale.hi < 0.0 ? -scale.hi : scale.hi;
  return kCombineEps * (a > 1.0 ? a : 1.0);
}

// cos + i sin as two doubles, the unit of angle addition in double precision.
struct unit_complex {
  double c = 1.0;
  double s = 0.0;
};

constexpr unit_complex to_unit_complex(const sincos_result<dd>& v) {
  return {v.cos.hi, v.sin.hi};
}

// (a.c + i a.s)(b.c + i b.s): the angle sum. Each component has error at most 2u|a||b| (u = 2^-53;
// |a_c b_c| + |a_s b_s| <= |a||b| by Cauchy-Schwarz), i.e. at most 2 sqrt(2) u in modulus.
constexpr unit_complex add_angles(unit_complex a, unit_complex b) {
  return {product(a.c, b.c) - product(a.s, b.s), product(a.s, b.c) + product(a.c, b.s)};
}

// scale * sincos(b theta) for b < 64: repeated angle addition from sincos(theta) rounded to
// doubles; each step adds at most 2 sqrt(2) u (the product) + sqrt(2) u (the rounded step), so after
// n <= 63 steps the error is below 63 * 4.25 u < 2^-44.9; the final product by scale adds u * scale.
struct low_angles {
  double c[kAngleBlock]{};
  double s[kAngleBlock]{};
  constexpr void init(dd theta, double scale) {
    unit_complex cur{};
    const unit_complex step = to_unit_complex(sincos_of_product_dd(1, theta));
    for (std::size_t b = 0; b < kAngleBlock; ++b) {
      c[b] = product(cur.c, scale);
      s[b] = product(cur.s, scale);
      cur = add_angles(cur, step);
    }
  }
};

// sincos(64a theta) for a = 0, 1, 2, ... in turn: the double-double path (rounded once) every 64
// steps, angle addition between; the same bound as low_angles.
struct high_angles {
  dd theta{};
  unit_complex step{};
  unit_complex cur{};
  constexpr void advance_to(std::size_t a) {
    if (a % kAngleBlock == 0) {
      cur = to_unit_complex(sincos_of_product_dd(a * kAngleBlock, theta));
      step = to_unit_complex(sincos_of_product_dd(kAngleBlock, theta));
    } else {
      cur = add_angles(cur, step);
    }
  }
};
}  // namespace detail

// sin and cos of p * theta for p in [0, count), rounded once to T, written to cos_out[p * stride]
// and sin_out[p * stride]; equal bit for bit to sincos_of_product<T>(p, theta). count < 2^32. No
// allocation, ~1.3 KiB of stack.
template <class T>
constexpr void sincos_of_products(dd theta, std::size_t count, T* cos_out, T* sin_out,
                                  std::size_t stride, dd scale = {1.0, 0.0}) {
  static_assert(detail::is_float_or_double<T>, "posenc: tables are float or double");
  constexpr std::size_t B = detail::kAngleBlock;
  const double eps = detail::combine_eps(scale);
  detail::low_angles low;
  low.init(theta, scale.hi);
  detail::high_angles high{theta, {}, {}};
  for (std::size_t a = 0; a * B < count; ++a) {
    high.advance_to(a);
    const double hc = high.cur.c;
    const double hs = high.cur.s;
    for (std::size_t b = 0; b < B && a * B + b < count; ++b) {
      const std::size_t p = a * B + b;
      if constexpr (std::is_same_v<T, float>) {
        const double c = detail::product(hc, low.c[b]) - detail::product(hs, low.s[b]);
        const double s = detail::product(hs, low.c[b]) + detail::product(hc, low.s[b]);
        const float cf = static_cast<float>(c - eps);
        const float sf = static_cast<float>(s - eps);
        if (cf == static_cast<float>(c + eps) && sf == static_cast<float>(s + eps)) {
          cos_out[p * stride] = cf;
          sin_out[p * stride] = sf;
          continue;
        }
      }
      const sincos_result<T> v = sincos_of_product<T>(p, theta, scale);
      cos_out[p * stride] = v.cos;
      sin_out[p * stride] = v.sin;
    }
  }
}

// cos/sin(p * theta[i]) for p in [0, P), i in [0, F), row-major: cos[p * F + i].
template <class T, std::size_t P, std::size_t F>
struct sincos_grid {
  T cos[P * F];
  T sin[P * F];
};

// Builds the grid (intended for constant evaluation: at run time it is a P*F*2*sizeof(T)-byte
// return value; use sincos_of_products into your own storage there). Entries equal
// sincos_of_products, hence sincos_of_product, bit for bit.
template <class T, std::size_t P, std::size_t F>
constexpr sincos_grid<T, P, F> make_sincos_grid(const std::array<dd, F>& theta,
                                               dd scale = {1.0, 0.0}) {
  static_assert(detail::is_float_or_double<T>, "posenc: tables are float or double");
  static_assert(P > 0 && F > 0, "posenc: a grid needs at least one position and one frequency");
  // In 64 bits: std::size_t is 32 bits wide on 32-bit targets (arm-none-eabi).
  static_assert(std::uint64_t{P} < (std::uint64_t{1} << 32),
                "posenc: positions must be below 2^32");
  constexpr std::size_t B = detail::kAngleBlock;
  const double eps = detail::combine_eps(scale);
  sincos_grid<T, P, F> g{};
  if (!std::is_constant_evaluated()) {
    // Run time: the same entries through the fusion-proof builder.
    for (std::size_t i = 0; i < F; ++i)
      sincos_of_products<T>(theta[i], P, g.cos + i, g.sin + i, F, scale);
    return g;
  }
  double lc[F][B]{};
  double ls[F][B]{};
  detail::high_angles high[F]{};
  double hc[F]{};
  double hs[F]{};
  for (std::size_t i = 0; i < F; ++i) {
    detail::low_angles low;
    low.init(theta[i], scale.hi);
    for (std::size_t b = 0; b < B; ++b) {
      lc[i][b] = low.c[b];
      ls[i][b] = low.s[b];
    }
    high[i].theta = theta[i];
  }
  for (std::size_t a = 0; a * B < P; ++a) {
    for (std::size_t i = 0; i < F; ++i) {
      high[i].advance_to(a);
      hc[i] = high[i].cur.c;
      hs[i] = high[i].cur.s;
    }
    for (std::size_t b = 0; b < B && a * B + b < P; ++b) {
      const std::size_t p = a * B + b;
      const std::size_t row = p * F;
      for (std::size_t i = 0; i < F; ++i) {
        if constexpr (std::is_same_v<T, float>) {
          const double c = hc[i] * lc[i][b] - hs[i] * ls[i][b];
          const double s = hs[i] * lc[i][b] + hc[i] * ls[i][b];
          const float cf = static_cast<float>(c - eps);
          const float sf = static_cast<float>(s - eps);
          if (cf == static_cast<float>(c + eps) && sf == static_cast<float>(s + eps)) {
            g.cos[row + i] = cf;
            g.sin[row + i] = sf;
            continue;
          }
        }
        const sincos_result<T> v = sincos_of_product<T>(p, theta[i], scale);
        g.cos[row + i] = v.cos;
        g.sin[row + i] = v.sin;
      }
    }
  }
  return g;
}

}  // namespace posenc::math
