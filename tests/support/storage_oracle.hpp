// Expected values in 16-bit storage, computed without posenc's conversions (storage.hpp): a float
// is rounded to binary16 or bfloat16 by the FPU's own round-to-nearest-even (std::nearbyint on the
// value scaled to an integer count of the format's quantum, exact in double), then encoded from
// its fields. The NaN rule is written out from storage.hpp's documented contract (NaN stays NaN,
// quiet, sign and top payload bits kept). tests/kernels/storage checks posenc's conversions against
// the CPU's instructions and MPFR; this header lets the kernel and additive tests state expected
// outputs with no conversion shared with the code under test.
#pragma once

#include <posenc/kernels/storage.hpp>

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace posenc_test {

namespace storage_oracle_detail {

// x rounded to nearest even into a binary format with `prec` significand bits (hidden bit
// included), smallest normal exponent `emin` (values in [2^emin, 2^(emin+1)) are normal) and
// overflow at 2^(emax+1); then encoded as sign | exponent field | fraction, `frac_bits` =
// prec - 1 wide, exponent bias -emin + 1. Returns the bits in the low 16 (sign at bit 15).
inline std::uint16_t round_encode(float x, int prec, int emin, int emax) {
  const int frac_bits = prec - 1;
  const std::uint32_t sign = std::signbit(x) ? 0x8000u : 0u;
  const std::uint32_t exp_all_ones = ((1u << (15 - frac_bits)) - 1u) << frac_bits;
  const double a = std::fabs(static_cast<double>(x));
  if (std::isinf(a)) return static_cast<std::uint16_t>(sign | exp_all_ones);
  if (a == 0.0) return static_cast<std::uint16_t>(sign);
  int ex = 0;
  (void)std::frexp(a, &ex);  // a in [2^(ex-1), 2^ex)
  const int e = ex - 1 < emin ? emin : ex - 1;
  const int quantum = e - frac_bits;  // the spacing of the format's values near a
  const double n = std::nearbyint(std::ldexp(a, -quantum));  // FPU rounding: nearest even
  const double r = std::ldexp(n, quantum);
  if (r >= std::ldexp(1.0, emax + 1)) return static_cast<std::uint16_t>(sign | exp_all_ones);
  if (r < std::ldexp(1.0, emin)) {
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(n));  // subnormal (or 0)
  }
  int rex = 0;
  const double m = std::frexp(r, &rex);  // r = m 2^rex, m in [0.5, 1)
  const auto field = static_cast<std::uint32_t>(rex - 1 - emin + 1);
  const auto frac = static_cast<std::uint32_t>(std::ldexp(m, prec) - std::ldexp(1.0, frac_bits));
  return static_cast<std::uint16_t>(sign | (field << frac_bits) | frac);
}

}  // namespace storage_oracle_detail

// binary16 bits of x: 11 significand bits, normal from 2^-14, largest finite 65504.
inline std::uint16_t oracle_f16_bits(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if (std::isnan(x)) {
    return static_cast<std::uint16_t>(((u >> 16) & 0x8000u) | 0x7e00u | ((u >> 13) & 0x3ffu));
  }
  return storage_oracle_detail::round_encode(x, 11, -14, 15);
}

// bfloat16 bits of x: 8 significand bits, float's exponent range.
inline std::uint16_t oracle_bf16_bits(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if (std::isnan(x)) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  return storage_oracle_detail::round_encode(x, 8, -126, 127);
}

// x as storage type T, rounded by the oracle (float: x itself).
template <class T>
T expected_as(float x) {
  if constexpr (std::is_same_v<T, float>) {
    return x;
  } else if constexpr (std::is_same_v<T, posenc::bf16>) {
    return posenc::bf16{oracle_bf16_bits(x)};
  } else if constexpr (std::is_same_v<T, posenc::f16>) {
    return posenc::f16{oracle_f16_bits(x)};
  } else {
    static_assert(sizeof(T) == 2, "expected_as: float, bf16, f16 or _Float16");
    return std::bit_cast<T>(oracle_f16_bits(x));
  }
}

}  // namespace posenc_test
