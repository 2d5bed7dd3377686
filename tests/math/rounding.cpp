// posenc/math/rounding.hpp against MPFR: to_double and to_float round the exact value hi + lo of
// a double-double once, to nearest with ties to even, including when hi is itself exactly a float
// midpoint (where converting hi alone would round twice), for subnormal floats and at overflow.
#include <posenc/math/rounding.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "support/check.hpp"
#include "support/gen.hpp"
#include "support/mpfr_ref.hpp"

namespace pm = posenc::math;
using namespace posenc_test;

namespace {

// A double exactly halfway between two adjacent floats (or an exact float), with a low part of
// random sign and size (or zero): the cases where rounding hi first would round twice.
rc::Gen<DdArg> float_midpoint_dd(int emin, int emax) {
  return rc::gen::exec([=] {
    const float f = *log_uniform_f(emin, emax, 2);
    const float up = std::nextafter(f, std::numeric_limits<float>::infinity());
    const auto kind = *int_in(0, 2);
    double hi = static_cast<double>(f);
    if (kind > 0 && std::isfinite(up)) {
      hi = (static_cast<double>(f) + static_cast<double>(up)) / 2;  // exact midpoint
    }
    double lo = 0.0;
    const auto lo_kind = *int_in(0, 3);
    if (lo_kind == 1) lo = *dd_lo(hi);
    if (lo_kind == 2) lo = std::ldexp(hi, -static_cast<int>(*int_in(54, 200)));
    if (lo_kind == 3) lo = -std::ldexp(hi, -static_cast<int>(*int_in(54, 200)));
    return DdArg{hi, lo};
  });
}

// Not normalized on purpose: |lo| up to 2^8 ulp(hi) (to_double/to_float renormalize first).
rc::Gen<DdArg> loose_dd() {
  return rc::gen::exec([] {
    const double hi = *log_uniform(-140, 127, 2);
    const double lo = std::ldexp(*dd_lo(hi), static_cast<int>(*int_in(0, 9)));
    return DdArg{hi, lo};
  });
}

}  // namespace

TEST_CASE("to_double and to_float are correctly rounded", "[rounding][mpfr]") {
  // The input is exact, so there is no residue: every result must be the correctly rounded one.
  RoundReport rf("to_float(dd)", 0.0);
  UlpReport rd("to_double(dd)", 0.5);
  std::uint64_t d_not_cr = 0;
  const auto g = rc::gen::weightedOneOf<DdArg>({
      {3, float_midpoint_dd(-126, 127)},
      {2, float_midpoint_dd(-149, -120)},  // subnormal floats
      {1, float_midpoint_dd(126, 127)},    // next to FLT_MAX
      {2, dd_arg(log_uniform(-160, 130, 2))},
      {1, loose_dd()},
  });
  rc::prop("to_float and to_double correctly rounded", [&] {
    const auto b = *batch(g);
    Mpfr e;
    for (const DdArg& a : b.args) {
      set_dd(e, a.hi, a.lo);
      const pm::dd x{a.hi, a.lo};
      auto desc = [&] { return "x=" + hex_dd(a.hi, a.lo); };
      rf.check(pm::to_float(x), e, desc);
      rd.check(pm::to_double(x), e, desc);
      if (!correctly_rounded(pm::to_double(x), e)) {
        ++d_not_cr;
        RC_FAIL("to_double(" + hex_dd(a.hi, a.lo) + ") = " + hex(pm::to_double(x)) +
                " is not the correctly rounded " + hex(round_double(e)));
      }
      RC_ASSERT(same_bits(pm::round_to<float>(x), pm::to_float(x)));
      RC_ASSERT(same_bits(pm::round_to<double>(x), pm::to_double(x)));
    }
    assert_batch(rf, rd);
  });
  if (rf.ran()) CHECK(rf.count() >= 100000);
  CHECK(d_not_cr == 0);
}

TEST_CASE("to_float: midpoint and overflow cases", "[rounding]") {
  // 1 + 2^-24 is halfway between 1 and 1 + 2^-23: the low part decides, zero means ties to even.
  CHECK(same_bits(pm::to_float(pm::dd{1.0 + 0x1p-24, 0.0}), 1.0f));
  CHECK(same_bits(pm::to_float(pm::dd{1.0 + 0x1p-24, 0x1p-80}), 1.0f + 0x1p-23f));
  CHECK(same_bits(pm::to_float(pm::dd{1.0 + 0x1p-24, -0x1p-80}), 1.0f));
  CHECK(same_bits(pm::to_float(pm::dd{-(1.0 + 0x1p-24), -0x1p-80}), -(1.0f + 0x1p-23f)));
  // 1 + 3 * 2^-24: ties to even goes up.
  CHECK(same_bits(pm::to_float(pm::dd{1.0 + 3 * 0x1p-24, 0.0}), 1.0f + 0x1p-22f));
  CHECK(same_bits(pm::to_float(pm::dd{1.0 + 3 * 0x1p-24, -0x1p-80}), 1.0f + 0x1p-23f));
  // Subnormal: 2^-150 is halfway between 0 and the smallest subnormal float.
  CHECK(same_bits(pm::to_float(pm::dd{0x1p-150, 0.0}), 0.0f));
  CHECK(same_bits(pm::to_float(pm::dd{0x1p-150, 0x1p-200}), 0x1p-149f));
  CHECK(same_bits(pm::to_float(pm::dd{-0x1p-150, -0x1p-200}), -0x1p-149f));
  // Overflow: FLT_MAX + ulp/2 = 0x1.ffffffp+127 is the rounding boundary to +inf.
  const float fmax = std::numeric_limits<float>::max();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(same_bits(pm::to_float(pm::dd{0x1.fffffe8p+127, 0.0}), fmax));
  CHECK(same_bits(pm::to_float(pm::dd{0x1.ffffffp+127, 0.0}), inf));
  CHECK(same_bits(pm::to_float(pm::dd{0x1.ffffffp+127, 0x1p+60}), inf));
  CHECK(same_bits(pm::to_float(pm::dd{0x1.ffffffp+127, -0x1p+60}), fmax));
  CHECK(same_bits(pm::to_float(pm::dd{-0x1.ffffffp+127, 0x1p+60}), -fmax));
  CHECK(same_bits(pm::to_float(pm::dd{1e300, 0.0}), inf));
  CHECK(same_bits(pm::to_double(pm::dd{1.0, 0x1p-53}), 1.0));
  CHECK(same_bits(pm::to_double(pm::dd{1.0, 0x1p-53 + 0x1p-100}), 1.0 + 0x1p-52));
}
