// Exact values for the analysis tests, in MPFR at tests/support's working precision (256 bits):
// the frequencies theta_i = base^(-2i/R), 2 pi, and the RoFormer decay bound f(r). Nothing here
// calls posenc; the formulas are those of docs/formulas.md §1, §2 and §8.
#pragma once

#include <mpfr.h>

#include <cstdint>
#include <vector>

#include "support/mpfr_ref.hpp"

namespace posenc_test {

inline void set_two_pi(Mpfr& out) {
  mpfr_const_pi(out, MPFR_RNDN);
  mpfr_mul_ui(out, out, 2, MPFR_RNDN);
}

// theta_i = base^(-2i/R).
inline void set_theta(Mpfr& out, double base, std::uint32_t i, std::uint32_t rotary_dim) {
  set_pow_ratio(out, base, -2 * static_cast<std::int64_t>(i),
                static_cast<std::int64_t>(rotary_dim));
}

// f(r) = (1/n) sum_{j=1}^{n} |S_j|, S_j = sum_{k<j} e^{i r theta_k} (RoFormer §3.4.3), for the
// unscaled frequencies of (base, R), rounded to double. Each term is correctly rounded at 256
// bits, so the result is exact to far below a double ulp.
inline double exact_decay_bound(double base, std::uint32_t rotary_dim, std::uint64_t r) {
  const std::uint32_t n = rotary_dim / 2;
  Mpfr theta, angle, c, s, re, im, mag, acc;
  mpfr_set_zero(re, 1);
  mpfr_set_zero(im, 1);
  mpfr_set_zero(acc, 1);
  for (std::uint32_t k = 0; k < n; ++k) {
    set_theta(theta, base, k, rotary_dim);
    mpfr_mul_ui(angle, theta, static_cast<unsigned long>(r), MPFR_RNDN);
    mpfr_sin_cos(s, c, angle, MPFR_RNDN);
    mpfr_add(re, re, c, MPFR_RNDN);
    mpfr_add(im, im, s, MPFR_RNDN);
    mpfr_hypot(mag, re, im, MPFR_RNDN);
    mpfr_add(acc, acc, mag, MPFR_RNDN);
  }
  mpfr_div_ui(acc, acc, n, MPFR_RNDN);
  return mpfr_get_d(acc, MPFR_RNDN);
}

}  // namespace posenc_test
