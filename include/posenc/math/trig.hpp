// sin, cos and sincos in double-double, double and float.
// Method: reduce x modulo pi/2 (Payne-Hanek, detail/reduce_pio2.hpp), then the Taylor series of sin
// and cos on |r| <= pi/4 in double-double: sin to z^14/29!, cos to z^15/30! (z = r^2), truncation
// below 2^-113 ((pi/4)^31/31! < 2^-120), by Horner's rule in z; the quadrant picks signs and roles.
#pragma once

#include <posenc/math/detail/fp_bits.hpp>
#include <posenc/math/detail/reduce_pio2.hpp>
#include <posenc/math/detail/series.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/rounding.hpp>

namespace posenc::math {

template <class T>
struct sincos_result {
  T sin;
  T cos;
};

namespace detail {
// (-1)^n / n! as double-double.
constexpr dd alternating_inv_factorial(int n) {
  const dd c = inv_factorial[static_cast<unsigned>(n)];
  return ((n / 2) % 2 == 0) ? c : -c;
}

// sin r and cos r for |r| <= pi/4 (plus a rounding hair).
constexpr sincos_result<dd> sincos_kernel(dd r) {
  const dd z = r * r;
  dd s = alternating_inv_factorial(29);
  for (int k = 13; k >= 0; --k) s = s * z + alternating_inv_factorial(2 * k + 1);
  dd c = alternating_inv_factorial(30);
  for (int k = 14; k >= 0; --k) c = c * z + alternating_inv_factorial(2 * k);
  return {r * s, c};
}

// Rotate a first-quadrant result into quadrant q.
constexpr sincos_result<dd> to_quadrant(sincos_result<dd> v, unsigned q) {
  switch (q & 3u) {
    case 0:
      return {v.sin, v.cos};
    case 1:
      return {v.cos, -v.sin};
    case 2:
      return {-v.sin, -v.cos};
    default:
      return {-v.cos, v.sin};
  }
}
}  // namespace detail

// sin x and cos x of a double-double argument (finite), to ~2^-104 relative.
constexpr sincos_result<dd> sincos(dd x) {
  using namespace detail;
  if (!is_finite(x.hi)) return {{kNaN, 0.0}, {kNaN, 0.0}};
  if (x.hi == 0.0) return {{x.hi, 0.0}, {1.0, 0.0}};  // keeps the sign of zero
  reduced_pio2 red = reduce_pio2(x.hi);
  if (x.lo != 0.0) {
    // x.lo is below ulp(x.hi)/2, which exceeds pi/4 once |x.hi| >= 2^53: reduce it too.
    const reduced_pio2 low = reduce_pio2(x.lo);
    red.quadrant += low.quadrant;
    red.r = red.r + low.r;
    if (red.r.hi > pio4_hi) {
      red.r = (red.r - dd{pio2_0, pio2_1}) - pio2_2;
      red.quadrant += 1u;
    } else if (red.r.hi < -pio4_hi) {
      red.r = (red.r + dd{pio2_0, pio2_1}) + pio2_2;
      red.quadrant += 3u;
    }
  }
  return to_quadrant(sincos_kernel(red.r), red.quadrant);
}

// sin x and cos x, each within 1 ulp.
constexpr sincos_result<double> sincos(double x) {
  const sincos_result<dd> v = sincos(dd{x, 0.0});
  return {to_double(v.sin), to_double(v.cos)};
}
constexpr double sin(double x) {
  return sincos(x).sin;
}
constexpr double cos(double x) {
  return sincos(x).cos;
}

// sin x and cos x correctly rounded to float.
constexpr sincos_result<float> sincos(float x) {
  const sincos_result<dd> v = sincos(dd{static_cast<double>(x), 0.0});
  return {to_float(v.sin), to_float(v.cos)};
}
constexpr float sin(float x) {
  return sincos(x).sin;
}
constexpr float cos(float x) {
  return sincos(x).cos;
}

}  // namespace posenc::math
