// Coefficient tables for the double-double power series, computed once per translation unit in
// double-double so that no decimal constant has to be trusted.
#pragma once

#include <array>
#include <cstddef>

#include <posenc/math/double_double.hpp>

namespace posenc::math::detail {

// inv_factorial[n] = 1/n!
template <std::size_t N>
constexpr std::array<dd, N> make_inv_factorials() {
  std::array<dd, N> c{};
  dd f{1.0, 0.0};
  for (std::size_t n = 0; n < N; ++n) {
    if (n > 0) f = f * static_cast<double>(n);
    c[n] = dd{1.0, 0.0} / f;
  }
  return c;
}
inline constexpr auto inv_factorial = make_inv_factorials<32>();

// inv_odd[k] = 1/(2k+1)
template <std::size_t N>
constexpr std::array<dd, N> make_inv_odd() {
  std::array<dd, N> c{};
  for (std::size_t k = 0; k < N; ++k) c[k] = dd{1.0, 0.0} / static_cast<double>(2 * k + 1);
  return c;
}
inline constexpr auto inv_odd = make_inv_odd<32>();

// Constants to ~160 bits as a sum of three doubles (digits from MPFR at 2000 bits).
inline constexpr double ln2_0 = 0x1.62e42fefa39efp-1;
inline constexpr double ln2_1 = 0x1.abc9e3b39803fp-56;
inline constexpr double ln2_2 = 0x1.7b57a079a1934p-111;
inline constexpr double pio2_0 = 0x1.921fb54442d18p+0;
inline constexpr double pio2_1 = 0x1.1a62633145c07p-54;
inline constexpr double pio2_2 = -0x1.f1976b7ed8fbcp-110;

// 2 pi as a double-double, 4 (pio2_0 + pio2_1) (exact scaling; relative error below 2^-107).
inline constexpr dd two_pi{0x1.921fb54442d18p+2, 0x1.1a62633145c07p-52};

}  // namespace posenc::math::detail
