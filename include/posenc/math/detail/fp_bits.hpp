// Bit-level helpers on IEEE-754 binary64/binary32 that are usable in constant expressions.
// std::bit_cast is constexpr (C++20), so exponent extraction and scaling by powers of two need no
// libm.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace posenc::math::detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr bool is_nan(double x) {
  return x != x;
}
constexpr bool is_inf(double x) {
  return x == kInf || x == -kInf;
}
constexpr bool is_finite(double x) {
  return !is_nan(x) && !is_inf(x);
}
constexpr bool sign_bit(double x) {
  return (std::bit_cast<std::uint64_t>(x) >> 63) != 0;
}
constexpr double fabs(double x) {
  return x < 0.0 ? -x : (x == 0.0 ? 0.0 : x);
}
// The larger of a and b; NaN if either is NaN (a worst case fed a NaN stays NaN, so that a bound
// checked against it fails).
constexpr double max(double a, double b) {
  if (is_nan(b)) return b;
  return a < b ? b : a;
}

// 2^k for k in [-1022, 1023], built from its bit pattern (exact).
constexpr double pow2(int k) {
  return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52);
}

// x * 2^k. Exact while the result is a normal double; a result in the subnormal range is rounded
// once (the scaling is split so that only the last multiplication can round).
constexpr double ldexp(double x, int k) {
  while (k > 1023) {
    x *= pow2(1023);
    k -= 1023;
  }
  if (k < -1022) {
    x *= pow2(-1022 + 53);  // exact for the values this library scales (|x| < 2^970)
    k += 1022 - 53;
    while (k < -1022) {
      x *= pow2(-1022);
      k += 1022;
    }
  }
  return x * pow2(k);
}

// Unbiased binary exponent of a finite non-zero x: x = m * 2^e with 1 <= |m| < 2 (subnormals too).
constexpr int ilogb(double x) {
  const auto b = std::bit_cast<std::uint64_t>(x);
  const int biased = static_cast<int>((b >> 52) & 0x7FF);
  if (biased == 0) return ilogb(x * pow2(54)) - 54;
  return biased - 1023;
}

// Nearest integer (ties to even) of |x| < 2^51, as a double; uses the 1.5 * 2^52 shift.
constexpr double nearest(double x) {
  constexpr double shift = 6755399441055744.0;  // 1.5 * 2^52
  const double t = x + shift;
  return t - shift;
}

constexpr double floor(double x) {  // |x| < 2^51
  const double n = nearest(x);
  return n > x ? n - 1.0 : n;
}

}  // namespace posenc::math::detail
