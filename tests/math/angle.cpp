// posenc/math/angle.hpp against MPFR: the RoPE angle path.
//   sincos_of_product<float>(p, pow_ratio(base, -2i, R)) is the correctly rounded float of
//   sin/cos(p * base^(-2i/R)), exponent an exact rational, for p < 2^24, even R in [2, 512],
//   i in [0, R/2), base in [2, 10^7]; except where the exact value is within the double-double
//   residue of a float midpoint (counted). sincos_of_product<double> within
//   0.5 ulp + 2^-104 |p theta| (absolute): the bound derived at the test.
#include <posenc/math/angle.hpp>
#include <posenc/math/pow.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "support/check.hpp"
#include "support/gen.hpp"
#include "support/mpfr_ref.hpp"
#include "support/rope.hpp"

namespace pm = posenc::math;
using namespace posenc_test;

TEST_CASE("angle path: sincos_of_product<float>(p, pow_ratio(base, -2i, R)) is correctly rounded",
          "[angle][mpfr]") {
  RoundReport rs("sincos_of_product<float>(p, pow_ratio(base, -2i, R)).sin");
  RoundReport rc_("sincos_of_product<float>(p, pow_ratio(base, -2i, R)).cos");
  rc::prop("RoPE angle path correctly rounded", [&] {
    const auto b = *batch(rope_arg());
    Mpfr theta, angle(kPrec + 64);
    ExactSinCos ex;
    for (const RopeArg& a : b.args) {
      set_pow_ratio(theta, a.base, -2 * a.i, a.R);
      mpfr_mul_ui(angle, theta, static_cast<unsigned long>(a.p), MPFR_RNDN);  // exact
      ex.set(angle);
      const pm::sincos_result<float> got =
          pm::sincos_of_product<float>(a.p, pm::pow_ratio(a.base, -2 * a.i, a.R));
      rs.check_near(got.sin, ex.s, ex.sin_near, [&] { return describe(a); });
      rc_.check_near(got.cos, ex.c, ex.cos_near, [&] { return describe(a); });
    }
    assert_batch(rs, rc_);
  });
  if (rs.ran()) CHECK(rs.count() >= 100000);
}

// The double results' bound. The angle p * theta is a double-double whose only roundings are the
// product p * theta.lo (at most 2^-53 |p theta.lo| <= 2^-106 |p theta|, since |theta.lo| <=
// ulp(theta.hi) / 2) and the double-double sum (at most 2^-105 |p theta|), so the angle is within
// 2^-104 |p theta| of exact, and so are its sin and cos (|d sin| <= |d angle|); the double-double
// evaluation adds ~2^-100 relative (2^-40 ulp covers it), and the final rounding 0.5 ulp. The
// angle term is absolute: it exceeds an ulp only where the result is tiny next to the angle, e.g.
// p = 1358007622, |theta| = 3.29, cos = 3.7e-7, where the error is 1.74 ulp of a bound of 4.7.
// The float results' 2^-24 ulp dwarfs it: they stay correctly rounded.
double angle_term_ulp(std::uint64_t p, const DdArg& t, mpfr_srcptr exact) {
  return std::ldexp(static_cast<double>(p) * std::fabs(t.hi), -104) * 1.0000001 /
         ulp_double_of(exact);
}

TEST_CASE(
    "sincos_of_product<double> is within 0.5 ulp + 2^-104 |p theta|, <float> correctly rounded, "
    "for any double-double theta and p < 2^32",
    "[angle][mpfr]") {
  UlpReport ds("sincos_of_product<double>.sin", 0.5 + 0x1p-40);
  UlpReport dc("sincos_of_product<double>.cos", 0.5 + 0x1p-40);
  RoundReport fs("sincos_of_product<float>.sin (any theta)");
  RoundReport fc("sincos_of_product<float>.cos (any theta)");
  const auto theta_gen = rc::gen::weightedOneOf<DdArg>({
      {2, dd_arg(uniform(0.0, 1.0))},
      {2, dd_arg(log_uniform(-40, 0, 0))},
      {1, dd_arg(uniform(-4.0, 4.0))},
      {2, rc::gen::map(rope_arg(),
                       [](const RopeArg& a) {
                         const pm::dd t = pm::pow_ratio(a.base, -2 * a.i, a.R);
                         return DdArg{t.hi, t.lo};
                       })},
  });
  const auto g = rc::gen::exec([=] {
    return std::pair<std::uint64_t, DdArg>{*position(32), *theta_gen};
  });
  rc::prop("sincos_of_product<double> within its bound and <float> correctly rounded", [&] {
    const auto b = *batch(g);
    Mpfr angle;
    ExactSinCos ex;
    for (const auto& [p, t] : b.args) {
      set_product(angle, p, t.hi, t.lo);
      ex.set(angle);
      const pm::dd theta{t.hi, t.lo};
      auto desc = [pp = p, tt = t] {
        return "p=" + std::to_string(pp) + " theta=" + hex_dd(tt.hi, tt.lo);
      };
      const pm::sincos_result<double> d = pm::sincos_of_product<double>(p, theta);
      ds.check(d.sin, ex.s, desc, angle_term_ulp(p, t, ex.s));
      dc.check(d.cos, ex.c, desc, angle_term_ulp(p, t, ex.c));
      const pm::sincos_result<float> f = pm::sincos_of_product<float>(p, theta);
      fs.check_near(f.sin, ex.s, ex.sin_near, desc);
      fc.check_near(f.cos, ex.c, ex.cos_near, desc);
    }
    assert_batch(ds, dc, fs, fc);
  });
  if (ds.ran()) CHECK(ds.count() >= 100000);
}
