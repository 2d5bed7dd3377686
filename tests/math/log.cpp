// posenc/math/log.hpp against MPFR: log(double) within 1 ulp on every positive finite double
// (subnormals included), log(float) correctly rounded, log(dd) within 2^-90 relative; the law
// log(exp(x)) = x within 2 ulp; exact and special values.
#include <posenc/math/exp.hpp>
#include <posenc/math/log.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "support/check.hpp"
#include "support/gen.hpp"
#include "support/mpfr_check.hpp"
#include "support/mpfr_ref.hpp"

namespace pm = posenc::math;
using namespace posenc_test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr float kInfF = std::numeric_limits<float>::infinity();

}  // namespace

TEST_CASE("log(double) is within 1 ulp on all positive finite doubles", "[log][mpfr]") {
  UlpReport r("log(double)");
  const auto g = rc::gen::weightedOneOf<double>({
      {5, log_uniform(-1074, 1023, 0)},  // every binade, subnormals included
      {1, subnormal()},
      {2, uniform(0.5, 2.0)},
      {2, near_one()},
      {1, around(1.4142135623730951, 8)},  // the reduction's switch point sqrt(2)
      {1, around(std::nextafter(std::numeric_limits<double>::max(), 0.0), 1)},  // top binade edge
  });
  mpfr_property(
      r, "log(double) within 1 ulp", g,
      [](double x, Mpfr& e) {
        if (!(x > 0.0) || !std::isfinite(x)) return false;  // around() may step past the domain
        mpfr_set_d(e, x, MPFR_RNDN);
        mpfr_log(e, e, MPFR_RNDN);
        return true;
      },
      [](double x) { return pm::log(x); });
  if (r.ran()) CHECK(r.count() >= 95000);
}

TEST_CASE("log(float) is correctly rounded", "[log][mpfr]") {
  RoundReport r("log(float)");
  const auto g = rc::gen::weightedOneOf<float>({
      {5, log_uniform_f(-149, 127, 0)},
      {2, uniform_f(0.5f, 2.0f)},
      {2, near_one_f()},
  });
  mpfr_property(r, "log(float) correctly rounded", g, mpfr_log, [](float x) { return pm::log(x); });
  if (r.ran()) CHECK(r.count() >= 100000);
}

TEST_CASE("log(dd) is within 2^-90 relative of log(hi+lo)", "[log][mpfr][dd]") {
  DdReport r("log(dd)");
  const auto g = dd_arg(rc::gen::weightedOneOf<double>({
      {4, log_uniform(-1022, 1023, 0)},
      {2, uniform(0.5, 2.0)},
      {2, near_one()},
  }));
  mpfr_property(
      r, "log(dd) within 2^-90 relative", g,
      [](const DdArg& a, Mpfr& e) {
        if (a.hi == 1.0 && a.lo == 0.0) return false;  // log 1 = 0 exactly: no relative error
        Mpfr x;
        set_dd(x, a.hi, a.lo);
        mpfr_log(e, x, MPFR_RNDN);
        return true;
      },
      [](const DdArg& a) {
        return pm::log(pm::dd{a.hi, a.lo});
      });
  if (r.ran()) CHECK(r.count() >= 99000);
  CHECK(r.max_rel() <= kResidue);
}

TEST_CASE("law: log(exp(x)) == x within 2 ulp for 1 <= |x| <= 700", "[log][exp][law]") {
  // exp(x) is within 1 ulp, i.e. relative 2^-52, so log(exp(x)) is within 2^-52 + 2^-53 of x
  // absolutely, and ulp(x) >= 2^-52 for |x| >= 1: at most 1.5 ulp. (Below |x| = 1 the same
  // absolute error is many ulps of x; that is a property of the composition, not a defect.)
  UlpReport r("log(exp(x)) vs x", 2.0);
  const auto g = rc::gen::weightedOneOf<double>({
      {1, uniform(1.0, 700.0)},
      {1, uniform(-700.0, -1.0)},
      {1, log_uniform(0, 8, 2)},
  });
  mpfr_property(
      r, "log(exp(x)) within 2 ulp of x", g, [](double x, Mpfr& e) { mpfr_set_d(e, x, MPFR_RNDN); },
      [](double x) { return pm::log(pm::exp(x)); });
  if (r.ran()) CHECK(r.count() >= 90000);
}

TEST_CASE("log: exact and special values", "[log]") {
  CHECK(same_bits(pm::log(1.0), 0.0));
  CHECK(same_bits(pm::log(1.0f), 0.0f));
  CHECK(same_bits(pm::log(pm::dd{1.0, 0.0}), pm::dd{0.0, 0.0}));

  CHECK(same_bits(pm::log(0.0), -kInf));
  CHECK(same_bits(pm::log(-0.0), -kInf));
  CHECK(same_bits(pm::log(0.0f), -kInfF));
  CHECK(same_bits(pm::log(-0.0f), -kInfF));
  CHECK(same_bits(pm::log(kInf), kInf));
  CHECK(same_bits(pm::log(kInfF), kInfF));
  CHECK(std::isnan(pm::log(-1.0)));
  CHECK(std::isnan(pm::log(-0x1p-1074)));
  CHECK(std::isnan(pm::log(-kInf)));
  CHECK(std::isnan(pm::log(std::numeric_limits<double>::quiet_NaN())));
  CHECK(std::isnan(pm::log(-1.0f)));
  CHECK(std::isnan(pm::log(std::numeric_limits<float>::quiet_NaN())));
  CHECK(std::isnan(pm::log(pm::dd{-2.0, 0.0}).hi));
  CHECK(same_bits(pm::log(pm::dd{0.0, 0.0}).hi, -kInf));

  // The smallest subnormal: log 2^-1074 = -1074 ln 2.
  Mpfr e;
  mpfr_set_d(e, 0x1p-1074, MPFR_RNDN);
  mpfr_log(e, e, MPFR_RNDN);
  CHECK(ulp_error(pm::log(0x1p-1074), e) <= 1.0);
}
