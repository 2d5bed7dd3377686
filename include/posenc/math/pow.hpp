// pow in double and float, and base^(num/den) in double-double (the shape of every RoPE frequency,
// theta_i = base^(-2i/R)). Method: b^x = exp(x log b) entirely in double-double; the error of
// x log b (|x log b| < 710, relative 2^-104) is amplified into at most ~2^-93 relative in the
// result.
#pragma once

#include <cstdint>

#include <posenc/math/detail/fp_bits.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/exp.hpp>
#include <posenc/math/log.hpp>
#include <posenc/math/rounding.hpp>

namespace posenc::math {

namespace detail {
constexpr bool is_integer(double x) {
  const double a = fabs(x);
  if (a >= 0x1p52) return true;
  return floor(a) == a;
}
constexpr bool is_odd_integer(double x) {
  const double a = fabs(x);
  if (a >= 0x1p53 || !is_integer(a)) return false;
  return !is_integer(a * 0.5);
}

// Special cases of pow as in C99 Annex F.9.4.4; returns true when *out was set.
constexpr bool pow_special(double b, double x, double& out) {
  if (x == 0.0 || b == 1.0) {
    out = 1.0;
    return true;
  }
  if (is_nan(b) || is_nan(x)) {
    out = kNaN;
    return true;
  }
  const double ab = fabs(b);
  if (is_inf(x)) {
    if (ab == 1.0)
      out = 1.0;
    else
      out = ((ab > 1.0) == (x > 0.0)) ? kInf : 0.0;
    return true;
  }
  const bool odd = is_odd_integer(x);
  if (b == 0.0 || is_inf(b)) {
    const bool big = (b == 0.0) == (x < 0.0);  // 0^neg and inf^pos are infinite
    double r = big ? kInf : 0.0;
    if (odd && sign_bit(b)) r = -r;
    out = r;
    return true;
  }
  if (b < 0.0 && !is_integer(x)) {
    out = kNaN;
    return true;
  }
  return false;
}
}  // namespace detail

// b^x as double-double for finite b > 0.
constexpr dd pow(dd b, dd x) {
  return exp(log(b) * x);
}

// b^x, within 1 ulp.
constexpr double pow(double b, double x) {
  double special = 0.0;
  if (detail::pow_special(b, x, special)) return special;
  const double r = to_double(pow(dd{detail::fabs(b), 0.0}, dd{x, 0.0}));
  return (b < 0.0 && detail::is_odd_integer(x)) ? -r : r;
}

// b^x correctly rounded to float.
constexpr float pow(float b, float x) {
  const double bd = static_cast<double>(b);
  const double xd = static_cast<double>(x);
  double special = 0.0;
  if (detail::pow_special(bd, xd, special)) return static_cast<float>(special);
  const dd r = pow(dd{detail::fabs(bd), 0.0}, dd{xd, 0.0});
  return (bd < 0.0 && detail::is_odd_integer(xd)) ? -to_float(r) : to_float(r);
}

// base^(num/den) as double-double (relative error ~2^-100) for finite base > 0 and den != 0;
// NaN otherwise. |num|, |den| < 2^53.
constexpr dd pow_ratio(double base, std::int64_t num, std::int64_t den) {
  if (!(base > 0.0) || detail::is_inf(base) || den == 0) return {detail::kNaN, 0.0};
  if (num == 0) return {1.0, 0.0};
  const dd e = dd{static_cast<double>(num), 0.0} / static_cast<double>(den);
  return exp(log(dd{base, 0.0}) * e);
}

}  // namespace posenc::math
