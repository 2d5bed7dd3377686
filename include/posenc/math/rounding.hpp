// Rounding a double-double value once to float or double (round to nearest, ties to even).
#pragma once

#include <posenc/math/double_double.hpp>

namespace posenc::math {

// The double nearest to hi + lo (hi + lo is renormalised first, so hi is the rounded sum).
constexpr double to_double(dd x) { return fast_two_sum(x.hi, x.lo).hi; }

// The float nearest to hi + lo. Converting hi alone could round twice when hi is exactly halfway
// between two floats; then the sign of lo decides. No float midpoint lies strictly between hi and
// hi + lo because |lo| <= ulp(hi)/2 and midpoints are themselves doubles.
constexpr float to_float(dd x) {
  x = fast_two_sum(x.hi, x.lo);
  const float f = static_cast<float>(x.hi);
  if (x.lo == 0.0) return f;
  const double fd = static_cast<double>(f);
  const double d = x.hi - fd;  // exact
  if (d == 0.0) return f;
  const double other = fd + 2.0 * d;  // exact; a float only when hi is a midpoint
  if (static_cast<double>(static_cast<float>(other)) != other) return f;
  const bool toward_other = (x.lo > 0.0) == (other > fd);
  return toward_other ? static_cast<float>(other) : f;
}

template <class T>
constexpr T round_to(dd x) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "posenc: results round to float or double only");
  if constexpr (std::is_same_v<T, float>) {
    return to_float(x);
  } else {
    return to_double(x);
  }
}

}  // namespace posenc::math
