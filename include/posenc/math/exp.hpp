// exp in double-double, double and float.
// Method: x = k ln2 + r with |r| <= ln2/2 (Cody & Waite 1980, "Software Manual for the Elementary
// Functions", additive reduction with ln2 split in three doubles so k*ln2 is exact to ~160 bits);
// then r = 32 s and exp(r) = (1 + expm1(s))^32, expm1(s) by its Taylor series (|s| < 2^-6.5, 13
// terms leave a truncation error below 2^-106), squaring as q <- q(q + 2) to keep relative
// precision.
#pragma once

#include <posenc/math/detail/fp_bits.hpp>
#include <posenc/math/detail/series.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/rounding.hpp>

namespace posenc::math {

constexpr dd exp(dd x) {
  using namespace detail;
  if (is_nan(x.hi)) return {x.hi, 0.0};
  if (x.hi > 709.79) return {kInf, 0.0};  // exp(709.79) > DBL_MAX
  if (x.hi < -745.2) return {0.0, 0.0};   // below half the smallest subnormal
  const double k = nearest(x.hi / ln2_0);
  dd r = x - two_prod(k, ln2_0);
  r = r - two_prod(k, ln2_1);
  r = r - product(k, ln2_2);
  const dd s{r.hi * 0x1p-5, r.lo * 0x1p-5};
  dd acc = inv_factorial[13];
  for (int n = 12; n >= 1; --n) acc = acc * s + inv_factorial[static_cast<unsigned>(n)];
  dd q = acc * s;  // expm1(s)
  for (int i = 0; i < 5; ++i) q = q * (q + 2.0);
  const dd y = q + 1.0;
  const int ki = static_cast<int>(k);
  if (ki < -1021) {  // subnormal result: rounded twice (y, then the scaling), within 1 ulp
    return {ldexp(to_double(y), ki), 0.0};
  }
  if (ki >= 1024) {  // y 2^k >= 2^1023 * 0.7: overflows unless y 2 rounds below 2
    const dd twice{y.hi * 2.0, y.lo * 2.0};  // k is 1024 here: x < 709.79
    if (to_double(twice) >= 2.0) return {kInf, 0.0};
    return {twice.hi * pow2(1023), twice.lo * pow2(1023)};
  }
  return {ldexp(y.hi, ki), ldexp(y.lo, ki)};
}

// e^x, within 1 ulp: correctly rounded except within ~2^-95 relative of a midpoint, and except
// for subnormal results (below 2^-1022), which are rounded twice.
constexpr double exp(double x) {
  return to_double(exp(dd{x, 0.0}));
}

// e^x correctly rounded to float.
constexpr float exp(float x) {
  return to_float(exp(dd{static_cast<double>(x), 0.0}));
}

}  // namespace posenc::math
