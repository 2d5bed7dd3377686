// Argument reduction modulo pi/2 for every finite double, exact enough for double-double results.
// Payne & Hanek (1983), "Radian reduction for trigonometric functions": write |x| = M 2^E (M a
// 53-bit integer); bits of 2/pi whose product with x is a multiple of 4 are skipped, and a 256-bit
// window of 2/pi times M is formed exactly in integer arithmetic (32-bit limbs, 64-bit products:
// also exact on 32-bit targets). The 2 bits above the binary point give the quadrant; the fraction
// (>= 222 bits, tail error < 2^-170 quadrants) is normalised before conversion, so the reduced
// argument keeps ~2^-104 relative accuracy even for the doubles closest to multiples of pi/2
// (~2^-61 away).
#pragma once

#include <bit>
#include <cstdint>

#include <posenc/math/detail/fp_bits.hpp>
#include <posenc/math/detail/series.hpp>
#include <posenc/math/detail/two_over_pi.hpp>
#include <posenc/math/double_double.hpp>

namespace posenc::math::detail {

struct reduced_pio2 {
  unsigned quadrant;  // x = (4n + quadrant) pi/2 + r
  dd r;               // |r| <= pi/4 (plus a rounding hair)
};

inline constexpr double pio4_hi = 0x1.921fb54442d18p-1;

// Requires finite x.
constexpr reduced_pio2 reduce_pio2(double x) {
  const double ax = fabs(x);
  if (ax <= pio4_hi) return {0u, {x, 0.0}};

  const std::uint64_t bits = std::bit_cast<std::uint64_t>(ax);
  const int E = static_cast<int>(bits >> 52) - 1075;  // ax > pi/4 is normal
  const std::uint64_t M = (bits & 0xFFFFFFFFFFFFFull) | (1ull << 52);

  constexpr int L = 8;  // window limbs
  const int j0 = E >= 2 ? (E - 2) / 32 : 0;
  const int s = 32 * (j0 + L) - E;  // fraction bits of the product, in (222, 309]

  // P = M * window, little-endian 32-bit limbs.
  std::uint32_t P[L + 2] = {};
  const std::uint64_t m[2] = {M & 0xFFFFFFFFu, M >> 32};
  for (int k = 0; k < L; ++k) {
    const std::uint64_t w = two_over_pi_bits[j0 + L - 1 - k];
    std::uint64_t carry = 0;
    for (int t = 0; t < 2; ++t) {
      const std::uint64_t cur = static_cast<std::uint64_t>(P[k + t]) + w * m[t] + carry;
      P[k + t] = static_cast<std::uint32_t>(cur);
      carry = cur >> 32;
    }
    for (int t = k + 2; carry != 0 && t < L + 2; ++t) {
      const std::uint64_t cur = static_cast<std::uint64_t>(P[t]) + carry;
      P[t] = static_cast<std::uint32_t>(cur);
      carry = cur >> 32;
    }
  }

  auto bit = [&](int pos) -> unsigned { return (P[pos / 32] >> (pos % 32)) & 1u; };
  unsigned q = bit(s) | (bit(s + 1) << 1);

  // Fraction F = P mod 2^s; if F >= 1/2 use F - 1 (negative) and bump the quadrant.
  const int top = s / 32;  // limb holding bit s
  std::uint32_t F[L + 2] = {};
  for (int t = 0; t < top; ++t) F[t] = P[t];
  F[top] = P[top] & ((1u << (s % 32)) - 1u);
  const bool negative = bit(s - 1) != 0;
  if (negative) {
    q = (q + 1u) & 3u;
    // F <- 2^s - F (two's complement within s bits)
    std::uint64_t borrow = 0;
    for (int t = 0; t <= top; ++t) {
      const std::uint64_t cur = 0ull - static_cast<std::uint64_t>(F[t]) - borrow;
      F[t] = static_cast<std::uint32_t>(cur);
      borrow = (cur >> 32) != 0 ? 1u : 0u;
    }
    F[top] &= (1u << (s % 32)) - 1u;
  }

  int h = top;
  while (h >= 0 && F[h] == 0) --h;
  dd frac{0.0, 0.0};
  for (int t = (h - 4 > 0 ? h - 4 : 0); t <= h; ++t) {
    frac = frac + ldexp(static_cast<double>(F[t]), 32 * t - s);
  }
  dd r = frac * dd{pio2_0, pio2_1};
  r = r + product(frac.hi, pio2_2);
  if (negative) r = -r;
  if (x < 0.0) {
    r = -r;
    q = (4u - q) & 3u;
  }
  return {q, r};
}

}  // namespace posenc::math::detail
