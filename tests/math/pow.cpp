// posenc/math/pow.hpp against MPFR: pow(double) within 1 ulp for base > 0 and |x ln base| < 700,
// pow(float) correctly rounded, pow_ratio within 2^-90 relative of base^(num/den) with the
// exponent an exact rational; laws pow(x, 0) = 1, pow(x, 1) = x, pow(2, k) = 2^k; special values.
#include <posenc/math/pow.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "support/check.hpp"
#include "support/gen.hpp"
#include "support/mpfr_check.hpp"
#include "support/mpfr_ref.hpp"
#include "support/rope.hpp"

namespace pm = posenc::math;
using namespace posenc_test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// pow(b, x) of double or float arguments.
template <class T>
struct PowArgOf {
  T b;
  T x;
};
using PowArg = PowArgOf<double>;
template <class T>
std::string describe_arg(const PowArgOf<T>& a) {
  return "b=" + hex(a.b) + " x=" + hex(a.x);
}
// b^x in MPFR for b > 0 and both finite (other arguments are skipped: pow's domain here).
template <class T>
bool exact_pow(const PowArgOf<T>& a, Mpfr& e) {
  if (!(a.b > T(0)) || !std::isfinite(a.b) || !std::isfinite(a.x)) return false;
  Mpfr base, ex;
  set_arg(base, a.b);
  set_arg(ex, a.x);
  mpfr_pow(e, base, ex, MPFR_RNDN);
  return true;
}
template <class T>
T pow_of(const PowArgOf<T>& a) {
  return pm::pow(a.b, a.x);
}

// base > 0 and an exponent with |x ln b| <= limit: x = t / ln b, t uniform in [-limit, limit]
// (t / ln b is rounded, so |x ln b| may exceed limit by a few ulps; limit leaves room).
rc::Gen<PowArg> pow_arg(rc::Gen<double> base, double limit) {
  return rc::gen::exec([=] {
    const double b = *base;
    const double t = *uniform(-limit, limit);
    const double lb = std::log(b);
    return PowArg{b, lb == 0.0 ? t : t / lb};
  });
}

// Small integer and half-integer exponents x, with the base from `base` when |x ln b| <= limit,
// else b = e^(t / x) with |t| <= limit and |t / x| <= max_ln_base (so b stays representable).
rc::Gen<PowArg> pow_arg_integer(rc::Gen<double> base, double limit, double max_ln_base) {
  return rc::gen::exec([=] {
    const double x = static_cast<double>(*int_in(-200, 200)) * (*uint_in(0, 1) == 1 ? 0.5 : 1.0);
    const double b = *base;
    if (std::fabs(x * std::log(b)) <= limit) return PowArg{b, x};
    const double t_max = std::min(limit, max_ln_base * std::fabs(x));
    return PowArg{std::exp(*uniform(-t_max, t_max) / x), x};
  });
}

}  // namespace

TEST_CASE("pow(double) is within 1 ulp for base > 0 and |x ln base| < 700", "[pow][mpfr]") {
  UlpReport r("pow(double)");
  const auto g = rc::gen::weightedOneOf<PowArg>({
      {4, pow_arg(log_uniform(-1074, 1023, 0), 699.0)},
      {2, pow_arg(uniform(0.0, 16.0), 699.0)},
      {2, pow_arg(near_one(), 699.0)},  // bases near 1, with large exponents
      {1, pow_arg(uniform(2.0, 1e7), 699.0)},
      {1, pow_arg_integer(log_uniform(-1074, 1023, 0), 699.0, 700.0)},
  });
  mpfr_property(r, "pow(double) within 1 ulp", g, exact_pow<double>, pow_of<double>);
  if (r.ran()) CHECK(r.count() >= 99000);
}

TEST_CASE("pow(float) is correctly rounded for base > 0", "[pow][mpfr]") {
  RoundReport r("pow(float)");
  // |x ln b| up to 104: results from the float subnormals to past FLT_MAX (rounding to +inf).
  const auto g = rc::gen::weightedOneOf<PowArg>({
      {4, pow_arg(rc::gen::map(log_uniform_f(-149, 127, 0),
                               [](float f) { return static_cast<double>(f); }),
                  104.0)},
      {2, pow_arg(rc::gen::map(uniform_f(0x1p-10f, 16.0f),
                               [](float f) { return static_cast<double>(f); }),
                  104.0)},
      {1, pow_arg_integer(rc::gen::map(log_uniform_f(-149, 127, 0),
                                       [](float f) { return static_cast<double>(f); }),
                          104.0, 87.0)},
  });
  const auto gf = rc::gen::map(g, [](const PowArg& a) {
    return PowArgOf<float>{static_cast<float>(a.b), static_cast<float>(a.x)};
  });
  mpfr_property(r, "pow(float) correctly rounded", gf, exact_pow<float>, pow_of<float>);
  if (r.ran()) CHECK(r.count() >= 99000);
}

namespace {

struct RatioArg {
  double base;
  std::int64_t num;
  std::int64_t den;
};

rc::Gen<RatioArg> rope_ratio_arg() {
  return rc::gen::exec([] {
    const std::int64_t R = 2 * *int_in(1, 256);
    const std::int64_t i = *int_in(0, R / 2 - 1);
    return RatioArg{*rope_base(), -2 * i, R};
  });
}

// General: any base > 0, num/den with |num|, |den| up to 2^20 (den of either sign), the result
// kept a normal double-double: |num/den ln base| <= 650.
rc::Gen<RatioArg> general_ratio_arg() {
  return rc::gen::exec([] {
    const double base = *log_uniform(-1022, 1023, 0);
    std::int64_t den = *int_in(1, std::int64_t{1} << 20);
    if (*uint_in(0, 1) == 1) den = -den;
    const double lb = std::log(base);
    const double t = *uniform(-650.0, 650.0);
    double num_d = lb == 0.0 ? t : std::nearbyint(t / lb * static_cast<double>(den));
    const double lim = 0x1p40;
    num_d = num_d > lim ? lim : (num_d < -lim ? -lim : num_d);
    return RatioArg{base, static_cast<std::int64_t>(num_d), den};
  });
}

}  // namespace

TEST_CASE("pow_ratio is within 2^-90 relative of base^(num/den)", "[pow][mpfr][dd]") {
  DdReport rope("pow_ratio(base in [2, 1e7], -2i, R)");
  DdReport general("pow_ratio(general)");
  const auto g =
      rc::gen::weightedOneOf<RatioArg>({{3, rope_ratio_arg()}, {1, general_ratio_arg()}});
  rc::prop("pow_ratio within 2^-90 relative", [&] {
    const auto b = *batch(g);
    Mpfr e;
    for (const RatioArg& a : b.args) {
      set_pow_ratio(e, a.base, a.num, a.den);
      if (std::fabs(std::log(mpfr_get_d(e, MPFR_RNDN))) > 655.0) continue;
      const pm::dd got = pm::pow_ratio(a.base, a.num, a.den);
      const bool is_rope =
          a.den > 0 && a.den <= 512 && a.num <= 0 && a.base >= 2.0 && a.base <= 1e7;
      (is_rope ? rope : general).check(got.hi, got.lo, e, [&] {
        return "base=" + hex(a.base) + " num=" + std::to_string(a.num) +
               " den=" + std::to_string(a.den);
      });
    }
    assert_batch(rope, general);
  });
  if (rope.ran()) CHECK(rope.count() + general.count() >= 99000);
  CHECK(rope.max_rel() <= kResidue);
  CHECK(general.max_rel() <= kResidue);
}

TEST_CASE("laws: pow(x, 0) == 1, pow(x, 1) == x, pow(2, k) == 2^k", "[pow][law]") {
  std::uint64_t n = 0;
  rc::prop("pow(x, 0) == 1 and pow(x, 1) == x for every finite x", [&] {
    const auto b = *batch(rc::gen::weightedOneOf<double>({
        {4, log_uniform(-1074, 1023, 2)},
        {1, uniform(-10.0, 10.0)},
    }));
    for (double x : b.args) {
      ++n;
      RC_ASSERT(same_bits(pm::pow(x, 0.0), 1.0));
      RC_ASSERT(same_bits(pm::pow(x, -0.0), 1.0));
      const double p1 = pm::pow(x, 1.0);
      if (!same_bits(p1, x)) RC_FAIL("pow(" + hex(x) + ", 1) = " + hex(p1));
      const auto xf = static_cast<float>(x);
      if (std::isfinite(xf)) {
        RC_ASSERT(same_bits(pm::pow(xf, 0.0f), 1.0f));
        const float p1f = pm::pow(xf, 1.0f);
        if (!same_bits(p1f, xf)) RC_FAIL("pow(" + hex(xf) + ", 1) = " + hex(p1f));
      }
    }
  });
  if (n > 0) std::cout << "[accuracy] pow(x, 0) == 1, pow(x, 1) == x: " << n << " args\n";
  if (n > 0) CHECK(n >= 100000);
  for (int k = -1074; k <= 1023; ++k) {
    INFO("k = " << k);
    CHECK(same_bits(pm::pow(2.0, static_cast<double>(k)), std::ldexp(1.0, k)));
    if (k >= -149 && k <= 127) {
      CHECK(same_bits(pm::pow(2.0f, static_cast<float>(k)), std::ldexp(1.0f, k)));
    }
  }
}

TEST_CASE("pow: exact and special values", "[pow]") {
  CHECK(same_bits(pm::pow(2.0, 10.0), 1024.0));
  CHECK(same_bits(pm::pow(2.0f, 10.0f), 1024.0f));
  CHECK(same_bits(pm::pow(10.0, 3.0), 1000.0));
  CHECK(same_bits(pm::pow(4.0, 0.5), 2.0));
  CHECK(same_bits(pm::pow(-2.0, 3.0), -8.0));
  CHECK(same_bits(pm::pow(-2.0, 2.0), 4.0));
  CHECK(same_bits(pm::pow(1.0, kNaN), 1.0));
  CHECK(same_bits(pm::pow(kNaN, 0.0), 1.0));
  CHECK(std::isnan(pm::pow(kNaN, 1.0)));
  CHECK(std::isnan(pm::pow(2.0, kNaN)));
  CHECK(std::isnan(pm::pow(-8.0, 1.0 / 3.0)));
  CHECK(std::isnan(pm::pow(-2.0f, 0.5f)));
  CHECK(same_bits(pm::pow(0.0, -1.0), kInf));
  CHECK(same_bits(pm::pow(-0.0, -1.0), -kInf));
  CHECK(same_bits(pm::pow(0.0, 2.0), 0.0));
  CHECK(same_bits(pm::pow(kInf, -1.0), 0.0));
  CHECK(same_bits(pm::pow(2.0, kInf), kInf));
  CHECK(same_bits(pm::pow(0.5, kInf), 0.0));
  CHECK(same_bits(pm::pow(10.0, 400.0), kInf));  // overflow
  CHECK(same_bits(pm::pow(10.0, -400.0), 0.0));  // underflow
  CHECK(same_bits(pm::pow(10.0f, 50.0f), std::numeric_limits<float>::infinity()));
  CHECK(same_bits(pm::pow(10.0f, -50.0f), 0.0f));

  CHECK(same_bits(pm::pow_ratio(10000.0, 0, 64), pm::dd{1.0, 0.0}));
  CHECK(same_bits(pm::pow_ratio(4.0, 1, 2).hi, 2.0));
  CHECK(same_bits(pm::pow_ratio(10000.0, -1, 2).hi, 0.01));  // 0.01 is far from a double midpoint
  CHECK(std::isnan(pm::pow_ratio(-2.0, 1, 2).hi));
  CHECK(std::isnan(pm::pow_ratio(0.0, 1, 2).hi));
  CHECK(std::isnan(pm::pow_ratio(kInf, 1, 2).hi));
  CHECK(std::isnan(pm::pow_ratio(2.0, 1, 0).hi));
}
