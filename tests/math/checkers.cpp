// The accuracy checkers of tests/support, checked on their own: against MPFR and the standard
// library only (no posenc code), with a negative control for every kind of check, so that a
// passing math test means something.
#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "support/check.hpp"
#include "support/gen.hpp"
#include "support/mpfr_ref.hpp"

using namespace posenc_test;

namespace {

constexpr auto kNoArg = [] { return std::string("fixed"); };

// x moved by n ulps (n < 0: downwards).
double step(double x, int n) {
  const double inf = std::numeric_limits<double>::infinity();
  for (; n > 0; --n) x = std::nextafter(x, inf);
  for (; n < 0; ++n) x = std::nextafter(x, -inf);
  return x;
}

}  // namespace

TEST_CASE("rounding and ulp helpers agree with hand-computed values", "[checkers]") {
  Mpfr x;
  // 1.5 * 2^-1075 lies between the smallest subnormal and twice it: nearest is 2^-1074.
  mpfr_set_ui_2exp(x, 3, -1076, MPFR_RNDN);
  CHECK(round_double(x) == std::ldexp(1.0, -1074));
  CHECK(ulp_double_of(x) == std::ldexp(1.0, -1074));
  // 0.75 * 2^-149 rounds to the smallest float subnormal.
  mpfr_set_ui_2exp(x, 3, -151, MPFR_RNDN);
  CHECK(round_float(x) == std::ldexp(1.0f, -149));
  CHECK(ulp_float_of(x) == std::ldexp(1.0, -149));
  // 1 - 2^-60 rounds up to 1, whose ulp is 2^-52 (the ulp of the rounded value).
  mpfr_set_ui(x, 1, MPFR_RNDN);
  mpfr_sub_d(x, x, 0x1p-60, MPFR_RNDN);
  CHECK(round_double(x) == 1.0);
  CHECK(ulp_double_of(x) == 0x1p-52);
  CHECK(ulp_float_of(x) == 0x1p-23);
  // Past overflow: the largest finite ulp.
  mpfr_set_ui_2exp(x, 1, 1024, MPFR_RNDN);
  CHECK(std::isinf(round_double(x)));
  CHECK(ulp_double_of(x) == 0x1p971);
  // Error of a value 3/4 ulp away.
  mpfr_set_d(x, 1.0, MPFR_RNDN);
  CHECK(ulp_error(1.0 + 0x1p-52, x) == 1.0);
  CHECK(ulp_error(1.0 + 0x1p-51, x) == 2.0);
  mpfr_set_d(x, 1.0 + 0x1p-52, MPFR_RNDN);
  mpfr_sub_d(x, x, 0x1p-54, MPFR_RNDN);  // 1 + 3/4 ulp
  CHECK(ulp_error(1.0, x) == 0.75);
  CHECK(ulp_error(1.0f, x) == Approx(0.75 * 0x1p-29).epsilon(1e-12));
  // Non-finite results.
  CHECK(std::isinf(ulp_error(std::numeric_limits<double>::quiet_NaN(), x)));
  mpfr_set_nan(x);
  CHECK(ulp_error(std::numeric_limits<double>::quiet_NaN(), x) == 0.0);
  CHECK(std::isinf(ulp_error(1.0, x)));
  // Exact inputs.
  set_dd(x, 1.0, 0x1p-1000);
  CHECK(mpfr_get_prec(x) >= 1001);
  mpfr_sub_ui(x, x, 1, MPFR_RNDN);
  CHECK(mpfr_cmp_d(x, 0x1p-1000) == 0);
  set_product(x, (std::uint64_t{1} << 32) - 1, 1.0 + 0x1p-52, 0x1p-60);
  Mpfr y(512);
  mpfr_set_d(y, 1.0 + 0x1p-52, MPFR_RNDN);
  mpfr_add_d(y, y, 0x1p-60, MPFR_RNDN);
  mpfr_mul_ui(y, y, 0xFFFFFFFFul, MPFR_RNDN);
  CHECK(mpfr_equal_p(x, y));
  // The exponent is taken as an exact rational: 10000^(-3/6) = 1/100 and (2^(1/3))^3 = 2.
  set_pow_ratio(x, 10000.0, -3, 6);
  mpfr_mul_ui(x, x, 100, MPFR_RNDN);
  mpfr_sub_ui(x, x, 1, MPFR_RNDN);
  CHECK(std::fabs(mpfr_get_d(x, MPFR_RNDN)) < 0x1p-250);
  set_pow_ratio(x, 2.0, 1, 3);
  mpfr_pow_ui(x, x, 3, MPFR_RNDN);
  mpfr_sub_ui(x, x, 2, MPFR_RNDN);
  CHECK(std::fabs(mpfr_get_d(x, MPFR_RNDN)) < 0x1p-250);
  // Formatting.
  CHECK(hex(1.5) == "0x1.8p+0");
  CHECK(hex(1.5f) == "0x1.8p+0f");
  CHECK(log2_str(0x1p-100) == "2^-100.00");
}

TEST_CASE("negative control: the 1-ulp checker flags a value 2 ulp off", "[checkers][negative]") {
  Mpfr e;
  mpfr_set_ui(e, 1, MPFR_RNDN);
  mpfr_exp(e, e, MPFR_RNDN);
  const double rn = round_double(e);
  UlpReport r("negative control (expected: 1 above 1.0 ulp)");
  CHECK(r.check(rn, e, kNoArg));
  // One ulp off, on either side: within 1 ulp only on the side where the exact value lies.
  const double err_up = ulp_error(step(rn, 1), e);
  const double err_down = ulp_error(step(rn, -1), e);
  CHECK(err_up > 0.5);
  CHECK(err_down > 0.5);
  CHECK(std::min(err_up, err_down) < 1.0);
  CHECK(std::max(err_up, err_down) > 1.0);
  CHECK_FALSE(r.check(step(rn, 2), e, kNoArg));
  CHECK(r.violations() == 1);
  CHECK(r.max_ulp() > 1.5);
  CHECK(r.first_violations().find("got 0x") != std::string::npos);
}

TEST_CASE("negative control: the correct-rounding checker flags a float 1 ulp off",
          "[checkers][negative]") {
  Mpfr e;
  mpfr_set_ui(e, 1, MPFR_RNDN);
  mpfr_exp(e, e, MPFR_RNDN);
  const float rn = round_float(e);
  REQUIRE_FALSE(near_float_midpoint(e, kResidue));
  RoundReport r("negative control (expected: 2 not correctly rounded)");
  CHECK(r.check(rn, e, kNoArg));
  CHECK_FALSE(r.check(std::nextafter(rn, 4.0f), e, kNoArg));
  CHECK_FALSE(r.check(std::nextafter(rn, 0.0f), e, kNoArg));
  CHECK(r.not_correctly_rounded() == 2);
  CHECK(r.near_midpoint() == 0);
  // The sign of zero counts.
  Mpfr z;
  mpfr_set_zero(z, -1);
  CHECK_FALSE(correctly_rounded(0.0f, z));
  CHECK(correctly_rounded(-0.0f, z));
}

TEST_CASE("near-midpoint detection: within kResidue of a float midpoint, and only there",
          "[checkers][negative]") {
  Mpfr m(200);
  // 1 + 2^-24 is the midpoint between 1 and 1 + 2^-23.
  mpfr_set_d(m, 1.0 + 0x1p-24, MPFR_RNDN);
  CHECK(near_float_midpoint(m, kResidue));
  mpfr_add_d(m, m, 0x1p-100, MPFR_RNDN);
  CHECK(near_float_midpoint(m, kResidue));
  mpfr_add_d(m, m, 0x1p-80, MPFR_RNDN);
  CHECK_FALSE(near_float_midpoint(m, kResidue));
  CHECK(near_float_midpoint(m, 0x1p-70));
  // Midpoint between the two largest subnormal... any subnormal pair: (2k+1) * 2^-150.
  mpfr_set_ui_2exp(m, 7, -150, MPFR_RNDN);
  CHECK(near_float_midpoint(m, kResidue));
  mpfr_set_ui_2exp(m, 6, -150, MPFR_RNDN);
  CHECK_FALSE(near_float_midpoint(m, kResidue));
  // Zero and NaN are never near a midpoint.
  mpfr_set_zero(m, 1);
  CHECK_FALSE(near_float_midpoint(m, kResidue));
  // A near-midpoint case rounded the other way is counted, not failed; the same value away from
  // the midpoint fails.
  RoundReport r("negative control (expected: 1 not correctly rounded, 1 near a midpoint)");
  mpfr_set_d(m, 1.0 + 0x1p-24, MPFR_RNDN);
  mpfr_add_d(m, m, 0x1p-100, MPFR_RNDN);  // rounds up to 1 + 2^-23
  CHECK(r.check(1.0f, m, kNoArg));
  mpfr_add_d(m, m, 0x1p-60, MPFR_RNDN);
  CHECK_FALSE(r.check(1.0f, m, kNoArg));
  CHECK(r.near_midpoint() == 1);
  CHECK(r.near_midpoint_differs() == 1);
  CHECK(r.not_correctly_rounded() == 1);
}

TEST_CASE(
    "negative control: the double-double checker flags 2^-80 relative error and an "
    "unnormalized pair",
    "[checkers][negative]") {
  Mpfr pi;
  mpfr_const_pi(pi, MPFR_RNDN);
  const double hi = round_double(pi);
  Mpfr rest;
  mpfr_sub_d(rest, pi, hi, MPFR_RNDN);
  const double lo = round_double(rest);
  DdReport r("negative control (expected: 2 above 2^-90 relative)");
  CHECK(r.check(hi, lo, pi, kNoArg));
  CHECK(r.max_rel() < 0x1p-104);
  CHECK_FALSE(r.check(hi, lo + hi * 0x1p-80, pi, kNoArg));
  CHECK(r.max_rel() > 0x1p-81);
  // hi + lo exact in value, but lo as large as ulp(hi): not a valid double-double.
  const double ulp_hi = std::nextafter(hi, 4.0) - hi;
  CHECK_FALSE(DdReport::is_normalized(hi - ulp_hi, lo + ulp_hi));
  CHECK_FALSE(r.check(hi - ulp_hi, lo + ulp_hi, pi, kNoArg));
  CHECK(r.not_normalized() == 1);
  CHECK(r.violations() == 2);
  // Absolute-error mode: a tiny result 2^-110 off passes with abs bound 2^-100 though its
  // relative error is large; 2^-95 off fails both.
  DdReport a("negative control (expected: 1 above 2^-90 relative and 2^-100 absolute)", kResidue,
             0x1p-100, 0x1p-20);
  Mpfr tiny;
  mpfr_set_d(tiny, 0x1p-60, MPFR_RNDN);
  CHECK(a.check(0x1p-60 + 0x1p-110, 0.0, tiny, kNoArg));
  CHECK_FALSE(a.check(0x1p-60 + 0x1p-95, 0.0, tiny, kNoArg));
  CHECK(a.max_rel() == 0.0);  // results below `tiny` are not in the relative maximum
}

TEST_CASE("negative control: the bitwise comparison tells -0 from +0 and 1 ulp apart",
          "[checkers][negative]") {
  CHECK(same_bits(1.0, 1.0));
  CHECK_FALSE(same_bits(0.0, -0.0));
  CHECK_FALSE(same_bits(1.0, std::nextafter(1.0, 2.0)));
  CHECK(same_bits(1.0f, 1.0f));
  CHECK_FALSE(same_bits(0.0f, -0.0f));
  CHECK_FALSE(same_bits(1.0f, std::nextafter(1.0f, 2.0f)));
}

TEST_CASE("negative control: a batch with one bad argument fails its property case",
          "[checkers][negative]") {
  // assert_batch ends the property case with RC_FAIL (an exception that rc::prop turns into a
  // failure) when a report received a violation since the previous call.
  UlpReport r("negative control batch (expected: 1 above 1.0 ulp)");
  Mpfr e;
  for (int i = 0; i < 1000; ++i) {
    const double x = -1.0 + i / 500.0;
    mpfr_set_d(e, x, MPFR_RNDN);
    mpfr_exp(e, e, MPFR_RNDN);
    const double got = i == 17 ? step(round_double(e), 2) : round_double(e);
    r.check(got, e, [&] { return "x=" + hex(x); });
  }
  CHECK(r.violations() == 1);
  CHECK_THROWS(assert_batch(r));
  CHECK_NOTHROW(assert_batch(r));  // the violation was reported once; the next batch is clean
}

TEST_CASE("generators cover their domains from the first case on", "[checkers][gen]") {
  rc::prop("uniform, log_uniform, subnormal and near-pi/2 generators stay in range", [] {
    const auto u = *batch(uniform(-3.0, 5.0));
    double lo = 1e300, hi = -1e300;
    for (double x : u.args) {
      RC_ASSERT(x >= -3.0);
      RC_ASSERT(x <= 5.0);
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    // 1000 uniform draws: min < -2 and max > 4 fail with probability 2 * (7/8)^1000.
    RC_ASSERT(lo < -2.0);
    RC_ASSERT(hi > 4.0);

    const auto l = *batch(log_uniform(-1074, 1023, 2));
    int emin = 2000, emax = -2000, neg = 0;
    for (double x : l.args) {
      RC_ASSERT(std::isfinite(x));
      RC_ASSERT(x != 0.0);
      emin = std::min(emin, std::ilogb(x));
      emax = std::max(emax, std::ilogb(x));
      neg += x < 0.0 ? 1 : 0;
    }
    RC_ASSERT(emin < -900);
    RC_ASSERT(emax > 900);
    RC_ASSERT(neg > 300);
    RC_ASSERT(neg < 700);

    const auto s = *batch(subnormal());
    for (double x : s.args) {
      RC_ASSERT(x > 0.0);
      RC_ASSERT(x < std::numeric_limits<double>::min());
    }

    const auto f = *batch(log_uniform_f(-149, 127, 0));
    for (float x : f.args) {
      RC_ASSERT(std::isfinite(x));
      RC_ASSERT(x > 0.0f);
    }

    // k = 0: the nearest double to j * pi/2, so |x - j pi/2| <= ulp(x)/2.
    const auto p = *rc::gen::container<std::vector<double>>(20, near_half_pi_multiple(1000, 0));
    Mpfr q(2000), pi(2000);
    mpfr_const_pi(pi, MPFR_RNDN);
    for (double x : p) {
      mpfr_set_d(q, x, MPFR_RNDN);
      mpfr_div(q, q, pi, MPFR_RNDN);
      mpfr_mul_2ui(q, q, 1, MPFR_RNDN);  // x / (pi/2)
      Mpfr j(2000), d(2000);
      mpfr_round(j, q);
      mpfr_sub(d, q, j, MPFR_RNDN);
      mpfr_mul(d, d, pi, MPFR_RNDN);
      mpfr_div_2ui(d, d, 1, MPFR_RNDN);  // x - j pi/2
      const double ulp = std::nextafter(std::fabs(x), 1e308) - std::fabs(x);
      RC_ASSERT(std::fabs(mpfr_get_d(d, MPFR_RNDN)) <= ulp / 2);
    }

    const auto dds = *batch(dd_arg(uniform(-100.0, 100.0)));
    for (const auto& a : dds.args) RC_ASSERT(DdReport::is_normalized(a.hi, a.lo));
  });
}

// End-to-end plumbing on a trusted implementation: glibc's double exp/log/sin/cos are within
// 1 ulp, and a double result rounded to float is correctly rounded except within 2^-52 relative
// of a midpoint (double rounding).
TEST_CASE("the checkers pass the C library's double functions", "[checkers][libm]") {
  UlpReport exp_r("std::exp(double) [reference check]");
  UlpReport sin_r("std::sin(double) [reference check]");
  RoundReport expf_r("float(std::exp(double)) [reference check]", 0x1p-52);
  rc::prop("std::exp and std::sin are within 1 ulp", [&] {
    const auto b = *batch(
        rc::gen::weightedOneOf<double>({{3, uniform(-745.0, 709.0)}, {1, log_uniform(-60, 9, 2)}}));
    Mpfr e;
    for (double x : b.args) {
      mpfr_set_d(e, x, MPFR_RNDN);
      mpfr_exp(e, e, MPFR_RNDN);
      exp_r.check(std::exp(x), e, [&] { return "x=" + hex(x); });
      mpfr_set_d(e, x, MPFR_RNDN);
      mpfr_sin(e, e, MPFR_RNDN);
      sin_r.check(std::sin(x), e, [&] { return "x=" + hex(x); });
    }
    const auto f = *batch(uniform_f(-100.0f, 80.0f));
    for (float x : f.args) {
      mpfr_set_flt(e, x, MPFR_RNDN);
      mpfr_exp(e, e, MPFR_RNDN);
      expf_r.check_near(static_cast<float>(std::exp(static_cast<double>(x))), e,
                        near_float_midpoint(e, 0x1p-52), [&] { return "x=" + hex(x); });
    }
    assert_batch(exp_r, sin_r, expf_r);
  });
  if (exp_r.ran()) CHECK(exp_r.count() >= 100000);
}
