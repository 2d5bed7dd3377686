// cos and sin of the angle p * theta, the quantity in every RoPE table, rounded once.
// theta is a double-double (e.g. pow_ratio(base, -2i, R)); the product with an integer p < 2^32 is
// formed as two_prod(p, theta.hi) + p * theta.lo, so its only error is ~2^-106 relative, then
// reduced modulo pi/2 exactly and evaluated in double-double. For float results this is correctly
// rounded except when the exact value lies within ~p*theta*2^-100 of a float midpoint (the
// double-double residue of theta and the product); see docs/math.md.
#pragma once

#include <cstdint>

#include <posenc/math/double_double.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/math/trig.hpp>

namespace posenc::math {

// p * theta as double-double.
constexpr dd angle_of(std::uint64_t p, dd theta) {
  const double pd = static_cast<double>(p);
  const dd a = two_prod(pd, theta.hi);
  return a + detail::product(pd, theta.lo);
}

// sin and cos of p * theta, in double-double.
constexpr sincos_result<dd> sincos_of_product_dd(std::uint64_t p, dd theta) {
  return sincos(angle_of(p, theta));
}

// sin and cos of p * theta, each rounded once to T (float or double).
template <class T>
constexpr sincos_result<T> sincos_of_product(std::uint64_t p, dd theta) {
  const sincos_result<dd> v = sincos_of_product_dd(p, theta);
  return {round_to<T>(v.sin), round_to<T>(v.cos)};
}

// scale * sin and scale * cos of p * theta, each rounded once to T: the entries of a RoPE table
// whose attention factor is `scale` (HF multiplies both cos and sin by it).
template <class T>
constexpr sincos_result<T> sincos_of_product(std::uint64_t p, dd theta, dd scale) {
  const sincos_result<dd> v = sincos_of_product_dd(p, theta);
  return {round_to<T>(v.sin * scale), round_to<T>(v.cos * scale)};
}

}  // namespace posenc::math
