// Exact values of the RoPE formulas in MPFR, at tests/support's working precision (256 bits): the
// frequencies theta_i = base^(-2i/R), 2 pi, YaRN's correction range and ramp, and the RoFormer
// decay bound f(r). Nothing here calls posenc; the formulas are those of docs/formulas.md §1, §2
// and §8.
#pragma once

#include <mpfr.h>

#include <cstddef>
#include <cstdint>

#include "support/mpfr_ref.hpp"

namespace posenc_test {

inline void set_two_pi(Mpfr& out) {
  mpfr_const_pi(out, MPFR_RNDN);
  mpfr_mul_2ui(out, out, 1, MPFR_RNDN);
}

// theta_i = base^(-2i/R).
inline void set_theta(Mpfr& out, double base, std::uint32_t i, std::uint32_t rotary_dim) {
  set_pow_ratio(out, base, -2 * static_cast<std::int64_t>(i),
                static_cast<std::int64_t>(rotary_dim));
}

// YaRN's correction dimensions and ramp for a config `c` (a posenc::rope_config with a YaRN
// scaling, read by its fields: beta_fast, beta_slow, truncate, original_max_position_embeddings,
// rotary_dim, base).

// HF find_correction_dim: R ln(L / (beta 2 pi)) / (2 ln base), L the original context length.
template <class Config>
void set_correction_dim(Mpfr& out, double beta, const Config& c) {
  Mpfr t(kPrec + 64), lb(kPrec + 64);
  set_two_pi(t);
  mpfr_mul_d(t, t, beta, MPFR_RNDN);
  mpfr_ui_div(t, c.scaling.original_max_position_embeddings, t, MPFR_RNDN);
  mpfr_log(t, t, MPFR_RNDN);
  mpfr_mul_ui(t, t, c.rotary_dim, MPFR_RNDN);
  mpfr_set_d(lb, c.base, MPFR_RNDN);
  mpfr_log(lb, lb, MPFR_RNDN);
  mpfr_mul_2ui(lb, lb, 1, MPFR_RNDN);
  mpfr_div(out, t, lb, MPFR_RNDN);
}

// HF find_correction_range: the correction dims of beta_fast (low) and beta_slow (high), floor and
// ceil when truncating, clamped to [0, R - 1]. Sets near_discrete when a truncated dim lies within
// 2^-70 of an integer: the library's double-double dims (~2^-88 absolute here) might be floored or
// ceiled the other way.
template <class Config>
void set_yarn_range(Mpfr& low, Mpfr& high, const Config& c, bool& near_discrete) {
  const auto near_integer = [](mpfr_srcptr x) {
    Mpfr r(kPrec + 64), d(kPrec + 64);
    mpfr_round(r, x);
    mpfr_sub(d, x, r, MPFR_RNDN);
    mpfr_abs(d, d, MPFR_RNDN);
    return mpfr_cmp_d(d, 0x1p-70) < 0;
  };
  set_correction_dim(low, c.scaling.beta_fast, c);
  set_correction_dim(high, c.scaling.beta_slow, c);
  if (c.scaling.truncate) {
    near_discrete = near_discrete || near_integer(low) || near_integer(high);
    mpfr_floor(low, low);
    mpfr_ceil(high, high);
  }
  if (mpfr_sgn(low.get()) < 0) mpfr_set_zero(low, 1);
  if (mpfr_cmp_ui(high, c.rotary_dim - 1) > 0) mpfr_set_ui(high, c.rotary_dim - 1, MPFR_RNDN);
}

// HF linear_ramp_factor at pair i: clamp((i - low) / (high - low), 0, 1), with high + 0.001 where
// high == low.
inline void set_yarn_ramp(Mpfr& ramp, mpfr_srcptr low, mpfr_srcptr high, std::uint32_t i) {
  Mpfr t(kPrec + 64), width(kPrec + 64);
  mpfr_sub(width, high, low, MPFR_RNDN);
  if (mpfr_zero_p(width.get())) mpfr_set_d(width, 0.001, MPFR_RNDN);
  mpfr_ui_sub(t, i, low, MPFR_RNDN);
  mpfr_div(ramp, t, width, MPFR_RNDN);
  if (mpfr_sgn(ramp.get()) < 0) mpfr_set_zero(ramp, 1);
  if (mpfr_cmp_ui(ramp, 1) > 0) mpfr_set_ui(ramp, 1, MPFR_RNDN);
}

// The same at pair i of c, from c's range.
template <class Config>
void set_yarn_ramp(Mpfr& ramp, const Config& c, std::uint32_t i, bool& near_discrete) {
  Mpfr low(kPrec + 64), high(kPrec + 64);
  set_yarn_range(low, high, c, near_discrete);
  set_yarn_ramp(ramp, low, high, i);
}

// f(r) = (1/n) sum_{j=1}^{n} |S_j|, S_j = sum_{k<j} e^{i a_k} (RoFormer §3.4.3), with the angle
// a_k = r theta_k set by set_angle(k, a) for k < n. The exact value (each term correctly rounded at
// 256 bits) goes to `exact`; returns it rounded to double.
template <class SetAngle>
double exact_decay(std::size_t n, SetAngle&& set_angle, Mpfr& exact) {
  Mpfr angle(kPrec + 64), c, s, re, im, mag;
  mpfr_set_zero(re, 1);
  mpfr_set_zero(im, 1);
  mpfr_set_zero(exact, 1);
  for (std::size_t k = 0; k < n; ++k) {
    set_angle(k, angle);
    mpfr_sin_cos(s, c, angle, MPFR_RNDN);
    mpfr_add(re, re, c, MPFR_RNDN);
    mpfr_add(im, im, s, MPFR_RNDN);
    mpfr_hypot(mag, re, im, MPFR_RNDN);
    mpfr_add(exact, exact, mag, MPFR_RNDN);
  }
  mpfr_div_ui(exact, exact, static_cast<unsigned long>(n), MPFR_RNDN);
  return mpfr_get_d(exact, MPFR_RNDN);
}

// f(r) for the unscaled frequencies of (base, R), rounded to double.
inline double exact_decay_bound(double base, std::uint32_t rotary_dim, std::uint64_t r) {
  Mpfr theta, exact;
  return exact_decay(
      rotary_dim / 2,
      [&](std::size_t k, Mpfr& angle) {
        set_theta(theta, base, static_cast<std::uint32_t>(k), rotary_dim);
        mpfr_mul_ui(angle, theta, static_cast<unsigned long>(r), MPFR_RNDN);
      },
      exact);
}

}  // namespace posenc_test
