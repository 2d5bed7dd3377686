// ALiBi slopes, one per head (docs/formulas.md §5), as constexpr functions and tables.
//
// Reference (the paper's get_slopes, ofirpress/attention_with_linear_biases,
// fairseq/models/transformer.py): with c the largest power of two <= n heads,
//   start(c) = fl64(2^(-8/c))  (Python 2**(-2**-(log2(c)-3)); -8/c is exact),
//   head h < c:       fl64(start(c) * fl64(start(c)^h)),             h = 0 .. c-1,
//   head c + j < n:   fl64(start(2c) * fl64(start(2c)^(2j))),         j = 0 .. n-c-1,
// i.e. the Python list `start*ratio**i` with ratio = start, taken for 2c at even i ([0::2]).
// Mathematically these are 2^(-8(h+1)/c) and the odd powers 2^(-8(2j+1)/(2c)); in float64 they
// are products of rounded values, which this reproduces operation for operation (pow correctly
// rounded: math::pow, the double-double path, rounded once). The float32 slopes are those
// doubles rounded once (torch.Tensor of the Python list).
//
// BLOOM (HF models/bloom/modeling_bloom.py, build_alibi_tensor): base = fl32(fl64(2^(-8/c)))
// (a Python float put in a float32 tensor), slopes = torch.pow(base, 1..c) in float32; extra heads
// use fl32(fl64(2^(-8/(2c)))) raised to the odd powers 1, 3, ..., 2(n-c)-1. torch evaluates the
// float32 pow with a libm or SLEEF powf (within 1 ulp, not always correctly rounded); we define the
// slope as the exact power of the float32 base rounded once to float32 (math::pow in
// double-double), which equals torch wherever its powf rounds correctly. For n <= 15 every BLOOM
// slope is a power of two (base 2^-8, 2^-4, 2^-2, 2^-1) or an odd power of 2^-1/2 rounded, see
// tests/additive.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <posenc/math/double_double.hpp>
#include <posenc/math/pow.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/spec/alibi.hpp>
#include <posenc/spec/rules.hpp>
#include <posenc/tables/detail/owning.hpp>

namespace posenc {

// The largest power of two <= n (n > 0).
constexpr std::uint32_t alibi_power_of_two_heads(std::uint32_t n) {
  std::uint32_t c = 1;
  while (c <= n / 2) c *= 2;
  return c;
}

namespace tables_detail {
// fl64(2^(-8/c)) for c a power of two (math::pow is correctly rounded here: the exact value is
// 2^(-2^-e), a power of two or irrational).
constexpr double alibi_start(std::uint64_t c) {
  return math::pow(2.0, -8.0 / static_cast<double>(c));
}
// fl64(start * fl64(start^i)), Python's start*ratio**i.
constexpr double alibi_reference_power(std::uint64_t c, std::uint64_t i) {
  const double s = alibi_start(c);
  const double r = math::pow(s, static_cast<double>(i));
  return s * r;
}
}  // namespace tables_detail

// Slope of head h (0-based, h < heads) as the reference get_slopes returns it (float64).
constexpr double alibi_reference_slope(std::uint32_t heads, std::uint32_t h) {
  const std::uint32_t c = alibi_power_of_two_heads(heads);
  if (h < c) return tables_detail::alibi_reference_power(c, h);
  return tables_detail::alibi_reference_power(std::uint64_t{2} * c, std::uint64_t{2} * (h - c));
}

// Slope of head h in BLOOM's float32 form (see the header comment).
constexpr float alibi_bloom_slope(std::uint32_t heads, std::uint32_t h) {
  const std::uint32_t c = alibi_power_of_two_heads(heads);
  const std::uint64_t base_heads = h < c ? std::uint64_t{c} : std::uint64_t{2} * c;
  const std::uint64_t power = h < c ? std::uint64_t{h} + 1 : std::uint64_t{2} * (h - c) + 1;
  const float base = static_cast<float>(tables_detail::alibi_start(base_heads));
  const math::dd v = math::pow(math::dd{static_cast<double>(base), 0.0},
                               math::dd{static_cast<double>(power), 0.0});
  return math::to_float(v);
}

// Slope of head h of config c as T (float or double): the reference float64 value (rounded once
// for float), or BLOOM's float32 value (exact in double). c valid, h < c.heads.
template <class T>
constexpr T alibi_slope(const alibi_config& c, std::uint32_t h) {
  static_assert(math::detail::is_float_or_double<T>, "posenc: slopes are float or double");
  if (c.slopes == alibi_slope_kind::bloom) return static_cast<T>(alibi_bloom_slope(c.heads, h));
  return static_cast<T>(alibi_reference_slope(c.heads, h));
}

// Fills out[0 .. c.heads) with the slopes of c. Validates c first; on error returns the rule and
// writes nothing. No allocation.
template <class T>
constexpr alibi_error build_alibi_slopes(const alibi_config& c, T* out) {
  return spec_detail::write_if_valid(c, [&] {
    for (std::uint32_t h = 0; h < c.heads; ++h) out[h] = alibi_slope<T>(c, h);
  });
}

// The slopes of compile-time spec S (validated first) as a constexpr array (lands in .rodata).
template <alibi_spec S, class T>
inline constexpr std::array<T, checked_alibi<S>.heads> alibi_slopes_v = [] {
  std::array<T, checked_alibi<S>.heads> a{};
  static_cast<void>(build_alibi_slopes<T>(checked_alibi<S>, a.data()));
  return a;
}();

// Owning slopes built at run time (hosted code); the same values as build_alibi_slopes.
template <class T>
std::vector<T> make_alibi_slopes(const alibi_config& c, alibi_error* error = nullptr) {
  const alibi_error e = validate(c);
  if (error != nullptr) *error = e;
  if (e != alibi_error::ok) {
#if defined(__cpp_exceptions)
    if (error == nullptr) tables_detail::throw_if_broken(e);
#endif
    return {};
  }
  std::vector<T> v(c.heads);
  static_cast<void>(build_alibi_slopes<T>(c, v.data()));
  return v;
}

}  // namespace posenc
