#include "support/mpfr_ref.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>

namespace posenc_test {

namespace {

// Bits needed to hold hi + lo exactly: from the top bit of the larger part down to the last bit
// of the smaller one.
mpfr_prec_t exact_sum_prec(double hi, double lo) {
  if (hi == 0.0 || lo == 0.0 || !std::isfinite(hi) || !std::isfinite(lo)) return 64;
  const int top = std::max(std::ilogb(hi), std::ilogb(lo));
  const int bottom = std::min(std::ilogb(hi), std::ilogb(lo)) - 52;
  return static_cast<mpfr_prec_t>(top - bottom + 2);
}

}  // namespace

void set_dd(Mpfr& out, double hi, double lo) {
  mpfr_set_prec(out, std::max<mpfr_prec_t>(kPrec, exact_sum_prec(hi, lo)));
  mpfr_set_d(out, hi, MPFR_RNDN);
  mpfr_add_d(out, out, lo, MPFR_RNDN);  // exact at this precision
}

void set_product(Mpfr& out, std::uint64_t p, double hi, double lo) {
  Mpfr sum;
  set_dd(sum, hi, lo);
  Mpfr factor(64);
  static_assert(sizeof(unsigned long) == 8, "LP64 assumed: p is set through mpfr_set_ui");
  mpfr_set_ui(factor, static_cast<unsigned long>(p), MPFR_RNDN);  // exact: 64 bits
  mpfr_set_prec(out, mpfr_get_prec(sum) + 64);
  mpfr_mul(out, sum, factor, MPFR_RNDN);  // exact: the product of a and b bits fits a+b bits
}

void set_pow_ratio(Mpfr& out, double base, std::int64_t num, std::int64_t den) {
  // base^num may lie far outside MPFR's default exponent range (|num| up to 2^53).
  static const bool wide = [] {
    mpfr_set_emax(mpfr_get_emax_max());
    mpfr_set_emin(mpfr_get_emin_min());
    return true;
  }();
  (void)wide;
  if (den < 0) {
    num = -num;
    den = -den;
  }
  Mpfr b(64);
  mpfr_set_d(b, base, MPFR_RNDN);
  Mpfr t(kPrec + 64);
  mpfr_pow_si(t, b, static_cast<long>(num), MPFR_RNDN);
  mpfr_set_prec(out, kPrec);
  mpfr_rootn_ui(out, t, static_cast<unsigned long>(den), MPFR_RNDN);
}

double round_double(mpfr_srcptr exact) {
  return mpfr_get_d(exact, MPFR_RNDN);
}
float round_float(mpfr_srcptr exact) {
  return mpfr_get_flt(exact, MPFR_RNDN);
}

double ulp_double_of(mpfr_srcptr exact) {
  const double y = round_double(exact);
  if (std::isinf(y) || std::isnan(y)) return std::ldexp(1.0, 1023 - 52);
  if (y == 0.0) return std::ldexp(1.0, -1074);
  return std::ldexp(1.0, std::max(std::ilogb(y), -1022) - 52);
}

double ulp_float_of(mpfr_srcptr exact) {
  const float y = round_float(exact);
  if (std::isinf(y) || std::isnan(y)) return std::ldexp(1.0, 127 - 23);
  if (y == 0.0f) return std::ldexp(1.0, -149);
  return std::ldexp(1.0, std::max(std::ilogb(y), -126) - 23);
}

namespace {

double ulp_error_impl(double got, double rounded, double ulp, mpfr_srcptr exact) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (mpfr_nan_p(exact)) return std::isnan(got) ? 0.0 : kInf;
  if (std::isnan(got)) return kInf;
  if (std::isinf(got)) return got == rounded ? 0.0 : kInf;
  if (mpfr_inf_p(exact)) return kInf;
  Mpfr d(kPrec + 64);
  mpfr_set_d(d, got, MPFR_RNDN);
  mpfr_sub(d, d, exact, MPFR_RNDN);
  mpfr_div_d(d, d, ulp, MPFR_RNDN);  // exact: ulp is a power of two
  return std::fabs(mpfr_get_d(d, MPFR_RNDN));
}

}  // namespace

double ulp_error(double got, mpfr_srcptr exact) {
  return ulp_error_impl(got, round_double(exact), ulp_double_of(exact), exact);
}

double ulp_error(float got, mpfr_srcptr exact) {
  return ulp_error_impl(static_cast<double>(got), static_cast<double>(round_float(exact)),
                        ulp_float_of(exact), exact);
}

bool correctly_rounded(double got, mpfr_srcptr exact) {
  if (mpfr_nan_p(exact)) return std::isnan(got);
  return std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(round_double(exact));
}

bool correctly_rounded(float got, mpfr_srcptr exact) {
  if (mpfr_nan_p(exact)) return std::isnan(got);
  return std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(round_float(exact));
}

bool interval_straddles_float_midpoint(mpfr_srcptr lo, mpfr_srcptr hi) {
  if (mpfr_nan_p(lo) || mpfr_nan_p(hi)) return false;
  // == rather than bitwise: an interval around 0 rounds to -0 and +0, which is no midpoint.
  return round_float(lo) != round_float(hi);
}

bool near_float_midpoint(mpfr_srcptr exact, double rel) {
  if (!mpfr_number_p(exact) || mpfr_zero_p(exact)) return false;
  const mpfr_prec_t prec = mpfr_get_prec(exact) + 128;
  Mpfr delta(prec), lo(prec), hi(prec);
  mpfr_mul_d(delta, exact, rel, MPFR_RNDN);
  mpfr_abs(delta, delta, MPFR_RNDN);
  mpfr_sub(lo, exact, delta, MPFR_RNDN);
  mpfr_add(hi, exact, delta, MPFR_RNDN);
  return interval_straddles_float_midpoint(lo, hi);
}

double dd_abs_error(double hi, double lo, mpfr_srcptr exact) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (!std::isfinite(hi) || !std::isfinite(lo) || !mpfr_number_p(exact)) return kInf;
  Mpfr s;
  set_dd(s, hi, lo);
  Mpfr d(std::max(mpfr_get_prec(s), mpfr_get_prec(exact)) + 64);
  mpfr_sub(d, s, exact, MPFR_RNDN);
  return std::fabs(mpfr_get_d(d, MPFR_RNDN));
}

double dd_rel_error(double hi, double lo, mpfr_srcptr exact) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (!std::isfinite(hi) || !std::isfinite(lo) || !mpfr_number_p(exact)) return kInf;
  if (mpfr_zero_p(exact)) return (hi == 0.0 && lo == 0.0) ? 0.0 : kInf;
  Mpfr s;
  set_dd(s, hi, lo);
  Mpfr d(std::max(mpfr_get_prec(s), mpfr_get_prec(exact)) + 64);
  mpfr_sub(d, s, exact, MPFR_RNDN);
  mpfr_div(d, d, exact, MPFR_RNDN);
  return std::fabs(mpfr_get_d(d, MPFR_RNDN));
}

std::string hex(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

std::string hex(float x) {
  return hex(static_cast<double>(x)) + "f";
}

std::string hex_dd(double hi, double lo) {
  return "{" + hex(hi) + ", " + hex(lo) + "}";
}

std::string dec(mpfr_srcptr x) {
  char buf[128];
  mpfr_snprintf(buf, sizeof buf, "%.40Rg", x);
  return buf;
}

std::string log2_str(double x) {
  if (x == 0.0) return "0";
  if (!std::isfinite(x)) return "inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "2^%.2f", std::log2(x));
  return buf;
}

}  // namespace posenc_test
