// Natural logarithm in double-double, double and float.
// Method: x = 2^e m with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s), s = (m-1)/(m+1), |s| <=
// 0.1716, by the odd series atanh(s) = sum s^(2k+1)/(2k+1) (22 terms: truncation below 2^-110
// relative); log x = e ln2 + log m. The series keeps full relative precision near x = 1.
#pragma once

#include <posenc/math/detail/fp_bits.hpp>
#include <posenc/math/detail/series.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/rounding.hpp>

namespace posenc::math {

constexpr dd log(dd x) {
  using namespace detail;
  if (is_nan(x.hi) || x.hi < 0.0) return {kNaN, 0.0};
  if (x.hi == 0.0) return {-kInf, 0.0};
  if (x.hi == kInf) return {kInf, 0.0};
  int e = ilogb(x.hi);
  dd m{ldexp(x.hi, -e), ldexp(x.lo, -e)};
  if (m.hi > 1.4142135623730951) {
    m = dd{m.hi * 0.5, m.lo * 0.5};
    e += 1;
  }
  const dd s = (m - 1.0) / (m + 1.0);
  const dd z = s * s;
  dd acc = inv_odd[21];
  for (int k = 20; k >= 0; --k) acc = acc * z + inv_odd[static_cast<unsigned>(k)];
  const dd log_m = (s * acc) * 2.0;
  if (e == 0) return log_m;
  const double ed = static_cast<double>(e);
  dd e_ln2 = two_prod(ed, ln2_0);
  e_ln2 = e_ln2 + product(ed, ln2_1);
  return e_ln2 + log_m;
}

// log x, within 1 ulp.
constexpr double log(double x) {
  return to_double(log(dd{x, 0.0}));
}

// log x correctly rounded to float.
constexpr float log(float x) {
  return to_float(log(dd{static_cast<double>(x), 0.0}));
}

}  // namespace posenc::math
