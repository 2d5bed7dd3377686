// Rounding a double-double value once to float or double (round to nearest, ties to even), and
// down or up to an integer.
#pragma once

#include <limits>
#include <type_traits>

#include <posenc/math/detail/fp_bits.hpp>
#include <posenc/math/double_double.hpp>

namespace posenc::math {

namespace detail {
// The types a result is rounded to (round_to<T>): the entry types of every table.
template <class T>
inline constexpr bool is_float_or_double = std::is_same_v<T, float> || std::is_same_v<T, double>;
}  // namespace detail

// The double nearest to hi + lo (hi + lo is renormalised first, so hi is the rounded sum).
constexpr double to_double(dd x) {
  if (detail::is_nan(x.hi) || detail::is_inf(x.hi) || x.lo == 0.0) return x.hi;  // keeps -0
  return fast_two_sum(x.hi, x.lo).hi;
}

// The float nearest to hi + lo. Converting hi alone could round twice when hi is exactly halfway
// between two floats; then the sign of lo decides. No float midpoint lies strictly between hi and
// hi + lo because |lo| <= ulp(hi)/2 and midpoints are themselves doubles.
constexpr float to_float(dd x) {
  if (detail::is_nan(x.hi)) return std::numeric_limits<float>::quiet_NaN();
  // Beyond the float range: from (FLT_MAX + 2^128)/2 on, the float is infinite (a tie there goes
  // to the even significand, 2^128), except just below that midpoint.
  constexpr double overflow = 0x1.ffffffp+127;
  constexpr float inf = std::numeric_limits<float>::infinity();
  if (detail::fabs(x.hi) >= overflow) {
    const bool below =
        detail::fabs(x.hi) == overflow && (x.lo != 0.0) && ((x.lo < 0.0) != (x.hi < 0.0));
    if (below)
      return x.hi < 0.0 ? -std::numeric_limits<float>::max() : std::numeric_limits<float>::max();
    return x.hi < 0.0 ? -inf : inf;
  }
  if (x.lo == 0.0) return static_cast<float>(x.hi);  // keeps -0
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

namespace detail {
// The largest integer <= x, as a double-double (|x| < 2^51): floor(hi), one less when hi is an
// integer and lo < 0.
constexpr dd floor(dd x) {
  const double f = floor(x.hi);
  if (f != x.hi) return {f, 0.0};
  return x.lo < 0.0 ? dd{f - 1.0, 0.0} : dd{f, 0.0};
}
// The smallest integer >= x (|x| < 2^51).
constexpr dd ceil(dd x) {
  return -floor(-x);
}
}  // namespace detail

template <class T>
constexpr T round_to(dd x) {
  static_assert(detail::is_float_or_double<T>, "posenc: results round to float or double only");
  if constexpr (std::is_same_v<T, float>) {
    return to_float(x);
  } else {
    return to_double(x);
  }
}

}  // namespace posenc::math
