// posenc/math/exp.hpp against MPFR: exp(double) within 1 ulp, exp(float) correctly rounded,
// exp(dd) within 2^-90 relative; exact and special values.
#include <posenc/math/exp.hpp>

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
constexpr double kLnDblMax = 0x1.62e42fefa39efp+9;  // 709.78271289338397, below ln(DBL_MAX)

}  // namespace

TEST_CASE("exp(double) is within 1 ulp of e^x on [-745, 709.78]", "[exp][mpfr]") {
  UlpReport r("exp(double)");
  // Whole domain evenly; magnitudes near 0; subnormal results; the overflow edge (results near
  // DBL_MAX, and just past it, where the exact value rounds to +inf).
  const auto g = rc::gen::weightedOneOf<double>({
      {5, uniform(-745.0, 709.78)},
      {2, log_uniform(-1074, 8, 2)},
      {1, uniform(-745.2, -708.0)},
      {1, uniform(709.0, 709.79)},
      {1, around(kLnDblMax, 1000)},
  });
  mpfr_property(r, "exp(double) within 1 ulp", g, mpfr_exp, [](double x) { return pm::exp(x); });
  if (r.ran()) CHECK(r.count() >= 100000);
}

TEST_CASE("exp(float) is correctly rounded", "[exp][mpfr]") {
  RoundReport r("exp(float)");
  // e^x is a finite non-zero float for x in about [-103.28, 88.72]; beyond that it rounds to 0 or
  // +inf, which is checked too.
  const auto g = rc::gen::weightedOneOf<float>({
      {5, uniform_f(-104.0f, 89.0f)},
      {2, log_uniform_f(-149, 6, 2)},
      {1, uniform_f(-104.0f, -87.0f)},  // subnormal results
      {1, uniform_f(88.0f, 89.0f)},     // overflow edge
  });
  mpfr_property(r, "exp(float) correctly rounded", g, mpfr_exp, [](float x) { return pm::exp(x); });
  if (r.ran()) CHECK(r.count() >= 100000);
}

TEST_CASE("exp(dd) is within 2^-90 relative of e^(hi+lo) on [-670, 709.78]", "[exp][mpfr][dd]") {
  // Below about e^-671 = 2^-968 the low part of the result is subnormal and a double-double no
  // longer holds 106 bits, so the relative bound is checked above that.
  DdReport r("exp(dd)");
  const auto g = dd_arg(rc::gen::weightedOneOf<double>({
      {4, uniform(-670.0, 709.78)},
      {2, log_uniform(-1000, 8, 2)},
      {1, uniform(-1.0, 1.0)},
  }));
  mpfr_property(r, "exp(dd) within 2^-90 relative", g, mpfr_exp, [](const DdArg& a) {
    return pm::exp(pm::dd{a.hi, a.lo});
  });
  if (r.ran()) CHECK(r.count() >= 100000);
  CHECK(r.max_rel() <= kResidue);
}

TEST_CASE("exp: exact and special values", "[exp]") {
  CHECK(same_bits(pm::exp(0.0), 1.0));
  CHECK(same_bits(pm::exp(-0.0), 1.0));
  CHECK(same_bits(pm::exp(0.0f), 1.0f));
  CHECK(same_bits(pm::exp(pm::dd{0.0, 0.0}), pm::dd{1.0, 0.0}));

  CHECK(std::isnan(pm::exp(std::numeric_limits<double>::quiet_NaN())));
  CHECK(std::isnan(pm::exp(std::numeric_limits<float>::quiet_NaN())));
  CHECK(std::isnan(pm::exp(pm::dd{std::numeric_limits<double>::quiet_NaN(), 0.0}).hi));
  CHECK(same_bits(pm::exp(-kInf), 0.0));
  CHECK(same_bits(pm::exp(kInf), kInf));
  CHECK(same_bits(pm::exp(-kInfF), 0.0f));
  CHECK(same_bits(pm::exp(kInfF), kInfF));

  // Overflow: e^x > DBL_MAX (+ half an ulp) from x = 709.7827128933840 on.
  CHECK(same_bits(pm::exp(std::nextafter(kLnDblMax, kInf)), kInf));
  CHECK(same_bits(pm::exp(709.79), kInf));
  CHECK(same_bits(pm::exp(710.0), kInf));
  CHECK(same_bits(pm::exp(1e300), kInf));
  CHECK(std::isfinite(pm::exp(kLnDblMax)));
  CHECK(same_bits(pm::exp(89.0f), kInfF));
  CHECK(same_bits(pm::exp(1e30f), kInfF));
  // Underflow: below e^-745.13 = 2^-1075 the result rounds to 0.
  CHECK(same_bits(pm::exp(-745.0), 0x1p-1074));
  CHECK(same_bits(pm::exp(-746.0), 0.0));
  CHECK(same_bits(pm::exp(-1e300), 0.0));
  CHECK(same_bits(pm::exp(-104.0f), 0.0f));
  CHECK(same_bits(pm::exp(-1e30f), 0.0f));
}
