// posenc/math/trig.hpp against MPFR: sin/cos/sincos(double) within 1 ulp on all finite doubles
// (1e300 and the doubles nearest to multiples of pi/2 included), the float versions correctly
// rounded, sincos(dd) within 2^-90 relative or 2^-100 absolute; exact and special values.
#include <posenc/math/trig.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "support/check.hpp"
#include "support/gen.hpp"
#include "support/mpfr_check.hpp"
#include "support/mpfr_ref.hpp"

namespace pm = posenc::math;
using namespace posenc_test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Double-double nearest to j pi/2 (hi = RN(j pi/2), lo = RN(j pi/2 - hi)), j log-uniform in
// [1, 2^max_log2_j], lo then moved by up to k ulps: arguments within ~2^-100 |x| of a zero of
// sin or cos, where only an absolute error bound makes sense.
rc::Gen<DdArg> dd_near_half_pi_multiple(int max_log2_j, int k) {
  return rc::gen::exec([=] {
    const double hi = *near_half_pi_multiple(max_log2_j, 0);
    // Recover j from hi and form j pi/2 - hi exactly enough.
    Mpfr pi(1200), q(1200), j(1200);
    mpfr_const_pi(pi, MPFR_RNDN);
    mpfr_set_d(q, hi, MPFR_RNDN);
    mpfr_div(q, q, pi, MPFR_RNDN);
    mpfr_mul_2ui(q, q, 1, MPFR_RNDN);
    mpfr_round(j, q);
    mpfr_mul(q, j, pi, MPFR_RNDN);
    mpfr_div_2ui(q, q, 1, MPFR_RNDN);
    mpfr_sub_d(q, q, hi, MPFR_RNDN);
    double lo = mpfr_get_d(q, MPFR_RNDN);
    const std::int64_t steps = *int_in(-k, k);
    for (std::int64_t s = 0; s < (steps < 0 ? -steps : steps); ++s) {
      lo = std::nextafter(lo, steps < 0 ? -kInf : kInf);
    }
    return DdArg{hi, lo};
  });
}

// sin and cos of T (float or double) against MPFR in rs and rc_, and sincos == {sin, cos}.
template <class T, class Report>
void sin_cos_property(Report& rs, Report& rc_, const std::string& name, rc::Gen<T> g) {
  rc::prop(name, [&] {
    const auto b = *batch(g);
    Mpfr s, c, xm;
    for (T x : b.args) {
      if constexpr (std::is_same_v<T, float>) {
        mpfr_set_flt(xm, x, MPFR_RNDN);
      } else {
        mpfr_set_d(xm, x, MPFR_RNDN);
      }
      mpfr_sin_cos(s, c, xm, MPFR_RNDN);
      const T gs = pm::sin(x);
      const T gc = pm::cos(x);
      rs.check(gs, s, [&] { return describe_arg(x); });
      rc_.check(gc, c, [&] { return describe_arg(x); });
      const pm::sincos_result<T> sc = pm::sincos(x);
      if (!same_bits(sc.sin, gs) || !same_bits(sc.cos, gc)) {
        RC_FAIL("sincos(" + hex(x) + ") = {" + hex(sc.sin) + ", " + hex(sc.cos) +
                "} differs from {sin, cos} = {" + hex(gs) + ", " + hex(gc) + "}");
      }
    }
    assert_batch(rs, rc_);
  });
}

// sincos(dd) against MPFR, sin in rs and cos in rc_; arguments with |hi| <= min_abs are skipped.
void sincos_dd_property(DdReport& rs, DdReport& rc_, const std::string& name, rc::Gen<DdArg> g,
                        double min_abs) {
  rc::prop(name, [&] {
    const auto b = *batch(g);
    Mpfr s, c, xm;
    for (const DdArg& a : b.args) {
      if (std::fabs(a.hi) <= min_abs) continue;
      set_dd(xm, a.hi, a.lo);
      mpfr_sin_cos(s, c, xm, MPFR_RNDN);
      const pm::sincos_result<pm::dd> got = pm::sincos(pm::dd{a.hi, a.lo});
      rs.check(got.sin.hi, got.sin.lo, s, [&] { return describe_arg(a); });
      rc_.check(got.cos.hi, got.cos.lo, c, [&] { return describe_arg(a); });
    }
    assert_batch(rs, rc_);
  });
}

}  // namespace

TEST_CASE("sin/cos/sincos(double) are within 1 ulp on all finite doubles", "[trig][mpfr]") {
  UlpReport rs("sin(double)");
  UlpReport rc_("cos(double)");
  const auto g = rc::gen::weightedOneOf<double>({
      {3, uniform(-10.0, 10.0)},
      {2, uniform(-1e6, 1e6)},
      {3, log_uniform(-1074, 1023, 2)},     // every binade, up to DBL_MAX
      {2, near_half_pi_multiple(30, 4)},    // near zeros of sin/cos, moderate j
      {2, near_half_pi_multiple(1020, 4)},  // ... and huge j (x up to ~2^1020)
      {1, around(1e300, 4)},
      {1, around(6381956970095103.0 * 0x1p797, 4)},  // the double closest to a multiple of pi/2
  });
  sin_cos_property(rs, rc_, "sin and cos within 1 ulp, sincos == {sin, cos}", g);
  if (rs.ran()) CHECK(rs.count() >= 100000);
}

TEST_CASE("sin/cos/sincos(float) are correctly rounded on all finite floats", "[trig][mpfr]") {
  RoundReport rs("sin(float)");
  RoundReport rc_("cos(float)");
  const auto g = rc::gen::weightedOneOf<float>({
      {3, uniform_f(-10.0f, 10.0f)},
      {2, uniform_f(-1e6f, 1e6f)},
      {3, log_uniform_f(-149, 127, 2)},
      {2, near_half_pi_multiple_f(24, 4)},
      {2, near_half_pi_multiple_f(126, 4)},
  });
  sin_cos_property(rs, rc_, "sin and cos (float) correctly rounded, sincos == {sin, cos}", g);
  if (rs.ran()) CHECK(rs.count() >= 100000);
}

TEST_CASE("sincos(dd) for |x| <= 2^24: within 2^-90 relative or 2^-100 absolute",
          "[trig][mpfr][dd]") {
  // Relative error is reported over results >= 2^-10 (there 2^-100 absolute is 2^-90 relative);
  // near the zeros of sin and cos only the absolute bound is meaningful.
  DdReport rs("sincos(dd).sin, |x| <= 2^24", kResidue, 0x1p-100, 0x1p-10);
  DdReport rc_("sincos(dd).cos, |x| <= 2^24", kResidue, 0x1p-100, 0x1p-10);
  const auto g = rc::gen::weightedOneOf<DdArg>({
      {3, dd_arg(uniform(-0x1p24, 0x1p24))},
      {2, dd_arg(uniform(-10.0, 10.0))},
      {2, dd_arg(log_uniform(-1074, 23, 2))},
      {2, dd_near_half_pi_multiple(24, 8)},
  });
  sincos_dd_property(rs, rc_, "sincos(dd) within 2^-90 relative or 2^-100 absolute", g, -1.0);
  if (rs.ran()) CHECK(rs.count() >= 100000);
  CHECK(rs.max_rel() <= kResidue);
  CHECK(rc_.max_rel() <= kResidue);
}

TEST_CASE("sincos(dd) for 2^24 < |x| < 2^1023: within 2^-90 relative or 2^-100 absolute",
          "[trig][mpfr][dd]") {
  DdReport rs("sincos(dd).sin, |x| > 2^24", kResidue, 0x1p-100, 0x1p-10);
  DdReport rc_("sincos(dd).cos, |x| > 2^24", kResidue, 0x1p-100, 0x1p-10);
  const auto g = rc::gen::weightedOneOf<DdArg>({
      {3, dd_arg(log_uniform(24, 52, 2))},
      {3, dd_arg(log_uniform(53, 1022, 2))},
      {1, dd_near_half_pi_multiple(1000, 8)},
  });
  sincos_dd_property(rs, rc_, "sincos(dd), large arguments", g, 0x1p24);
}

TEST_CASE("sin/cos: exact and special values", "[trig]") {
  CHECK(same_bits(pm::sin(0.0), 0.0));
  CHECK(same_bits(pm::sin(-0.0), -0.0));
  CHECK(same_bits(pm::cos(0.0), 1.0));
  CHECK(same_bits(pm::cos(-0.0), 1.0));
  CHECK(same_bits(pm::sin(0.0f), 0.0f));
  CHECK(same_bits(pm::sin(-0.0f), -0.0f));
  CHECK(same_bits(pm::cos(0.0f), 1.0f));
  CHECK(same_bits(pm::sincos(0.0).sin, 0.0));
  CHECK(same_bits(pm::sincos(0.0).cos, 1.0));
  CHECK(same_bits(pm::sincos(pm::dd{0.0, 0.0}).cos, pm::dd{1.0, 0.0}));
  CHECK(same_bits(pm::sincos(pm::dd{0.0, 0.0}).sin, pm::dd{0.0, 0.0}));
  // sin x = x for tiny x (correctly rounded: x - x^3/6 is within 2^-1000 relative of x).
  CHECK(same_bits(pm::sin(0x1p-1074), 0x1p-1074));
  CHECK(same_bits(pm::sin(-0x1p-600), -0x1p-600));
  CHECK(same_bits(pm::cos(0x1p-600), 1.0));

  for (double x : {kInf, -kInf, kNaN}) {
    CHECK(std::isnan(pm::sin(x)));
    CHECK(std::isnan(pm::cos(x)));
    CHECK(std::isnan(pm::sincos(x).sin));
    CHECK(std::isnan(pm::sincos(x).cos));
    CHECK(std::isnan(pm::sincos(pm::dd{x, 0.0}).sin.hi));
    CHECK(std::isnan(pm::sincos(pm::dd{x, 0.0}).cos.hi));
    const auto xf = static_cast<float>(x);
    CHECK(std::isnan(pm::sin(xf)));
    CHECK(std::isnan(pm::cos(xf)));
  }
}
