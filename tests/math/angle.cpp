// posenc/math/angle.hpp against MPFR: the RoPE angle path.
//   sincos_of_product<float>(p, pow_ratio(base, -2i, R)) is the correctly rounded float of
//   sin/cos(p * base^(-2i/R)), exponent an exact rational, for p < 2^24, even R in [2, 512],
//   i in [0, R/2), base in [2, 10^7]; except where the exact value is within the double-double
//   residue of a float midpoint (counted). sincos_of_product<double> within 1 ulp.
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

TEST_CASE(
    "sincos_of_product<double> is within 1 ulp, <float> correctly rounded, for any "
    "double-double theta and p < 2^32",
    "[angle][mpfr]") {
  UlpReport ds("sincos_of_product<double>.sin");
  UlpReport dc("sincos_of_product<double>.cos");
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
  rc::prop("sincos_of_product<double> within 1 ulp and <float> correctly rounded", [&] {
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
      ds.check(d.sin, ex.s, desc);
      dc.check(d.cos, ex.c, desc);
      const pm::sincos_result<float> f = pm::sincos_of_product<float>(p, theta);
      fs.check_near(f.sin, ex.s, ex.sin_near, desc);
      fc.check_near(f.cos, ex.c, ex.cos_near, desc);
    }
    assert_batch(ds, dc, fs, fc);
  });
  if (ds.ran()) CHECK(ds.count() >= 100000);
}
