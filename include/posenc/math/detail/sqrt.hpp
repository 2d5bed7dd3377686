// Square roots in double and double-double without <cmath>, for the laws' norms and the decay
// bound's moduli (analysis/): run time gives the same bits as compile time.
#pragma once

#include <bit>
#include <cstdint>

#include <posenc/math/detail/fp_bits.hpp>
#include <posenc/math/double_double.hpp>

namespace posenc::math::detail {

// sqrt(x) for finite x >= 0 (0 for x <= 0): a first guess from the bits (halve the biased
// exponent; relative error < 6%), three Newton steps y <- (y + x/y)/2 (error < 2^-39), then one
// more with the exact residual x - y^2 (two_prod), which squares that error. Within 1 ulp, and
// exact when sqrt(x) is a double (the decay bound's |S_j| = j at r = 0 relies on it). Tiny x are
// scaled by 2^200 first.
constexpr double sqrt(double x) {
  if (!(x > 0.0)) return 0.0;
  if (is_inf(x)) return x;
  if (x < 0x1p-900) return sqrt(x * 0x1p200) * 0x1p-100;
  double y = std::bit_cast<double>((std::bit_cast<std::uint64_t>(x) >> 1) + 0x1FF8000000000000ull);
  y = 0.5 * (y + x / y);
  y = 0.5 * (y + x / y);
  y = 0.5 * (y + x / y);
  const dd y2 = two_prod(y, y);
  const double r = (x - y2.hi) - y2.lo;  // x - y2.hi is exact (Sterbenz)
  return y + r / (2.0 * y);
}

// sqrt of a double-double: y = sqrt(x.hi) corrected once by (x - y^2) / (2y); relative error
// below 2^-103.
constexpr dd sqrt(dd x) {
  if (!(x.hi > 0.0)) return {0.0, 0.0};
  const double y = sqrt(x.hi);
  const dd r = x - two_prod(y, y);
  return fast_two_sum(y, r.hi / (2.0 * y));
}

}  // namespace posenc::math::detail
