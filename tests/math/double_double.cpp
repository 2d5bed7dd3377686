// posenc/math/double_double.hpp against MPFR: two_sum, fast_two_sum and two_prod are exact
// error-free transformations; +, -, *, / and mul(n, x) are within 2^-100 relative and return
// normalized pairs; comparisons agree with the exact values.
#include <posenc/math/double_double.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>

#include "support/check.hpp"
#include "support/gen.hpp"
#include "support/mpfr_ref.hpp"

namespace pm = posenc::math;
using namespace posenc_test;

namespace {

// Arithmetic results: about 2^-104 relative in theory (Joldes, Muller, Popescu 2017 give
// 3u^2 for this addition and below 5u^2 for this multiplication, u = 2^-53); 2^-100 leaves room
// and is still far below kResidue.
constexpr double kArithBound = 0x1p-100;

// Exact value of a + b, a - b etc. for two pairs (precision grown to hold the exact result).
void set_exact(Mpfr& out, const DdArg& a, const DdArg& b, char op) {
  Mpfr x, y;
  set_dd(x, a.hi, a.lo);
  set_dd(y, b.hi, b.lo);
  mpfr_set_prec(out, 4400);  // any sum/product of two exact double-doubles of moderate exponents
  switch (op) {
    case '+':
      mpfr_add(out, x, y, MPFR_RNDN);
      break;
    case '-':
      mpfr_sub(out, x, y, MPFR_RNDN);
      break;
    case '*':
      mpfr_mul(out, x, y, MPFR_RNDN);
      break;
    default:
      mpfr_div(out, x, y, MPFR_RNDN);
      break;
  }
}

struct TwoArgs {
  double a;
  double b;
};

rc::Gen<TwoArgs> two_doubles(int emin, int emax) {
  return rc::gen::exec([=] {
    const double a = *log_uniform(emin, emax, 2);
    // Half the time b close to -a or a (cancellation), else independent.
    const auto kind = *int_in(0, 3);
    const double b = kind == 0   ? *around(-a, 1000)
                     : kind == 1 ? *around(a, 1000)
                                 : *log_uniform(emin, emax, 2);
    return TwoArgs{a, b};
  });
}

struct TwoDd {
  DdArg a;
  DdArg b;
};

rc::Gen<TwoDd> two_dds() {
  return rc::gen::exec([] {
    const DdArg a = *dd_arg(log_uniform(-300, 300, 2));
    const auto kind = *int_in(0, 3);
    DdArg b{};
    if (kind == 0) {
      b = *dd_arg(around(-a.hi, 4));  // a + b cancels the high parts
    } else if (kind == 1) {
      b = DdArg{-a.hi, *dd_lo(a.hi)};  // exact cancellation of hi, only the lo parts remain
    } else {
      b = *dd_arg(log_uniform(-300, 300, 2));
    }
    return TwoDd{a, b};
  });
}

}  // namespace

TEST_CASE("two_sum, fast_two_sum and two_prod are exact", "[double_double][mpfr]") {
  std::uint64_t n = 0;
  rc::prop("s + e == a + b and p + e == a * b exactly, s = fl(a + b), p = fl(a * b)", [&] {
    // Exponents in [-480, 480]: the product's error term stays a normal double (two_prod's
    // precondition: no overflow or underflow).
    const auto b = *batch(two_doubles(-480, 480));
    Mpfr exact(2200), got(2200);
    for (const TwoArgs& t : b.args) {
      ++n;
      const pm::dd s = pm::two_sum(t.a, t.b);
      RC_ASSERT(same_bits(s.hi, t.a + t.b));
      set_dd(got, s.hi, s.lo);
      mpfr_set_d(exact, t.a, MPFR_RNDN);
      mpfr_add_d(exact, exact, t.b, MPFR_RNDN);
      if (!mpfr_equal_p(got, exact)) RC_FAIL("two_sum(" + hex(t.a) + ", " + hex(t.b) + ") inexact");

      const double big = std::fabs(t.a) >= std::fabs(t.b) ? t.a : t.b;
      const double small = std::fabs(t.a) >= std::fabs(t.b) ? t.b : t.a;
      const pm::dd f = pm::fast_two_sum(big, small);
      set_dd(got, f.hi, f.lo);
      if (!same_bits(f.hi, t.a + t.b) || !mpfr_equal_p(got, exact)) {
        RC_FAIL("fast_two_sum(" + hex(big) + ", " + hex(small) + ") inexact");
      }

      const pm::dd p = pm::two_prod(t.a, t.b);
      RC_ASSERT(same_bits(p.hi, t.a * t.b));
      set_dd(got, p.hi, p.lo);
      mpfr_set_d(exact, t.a, MPFR_RNDN);
      mpfr_mul_d(exact, exact, t.b, MPFR_RNDN);
      if (!mpfr_equal_p(got, exact)) {
        RC_FAIL("two_prod(" + hex(t.a) + ", " + hex(t.b) + ") = " + hex_dd(p.hi, p.lo) +
                " inexact");
      }
    }
  });
  if (n > 0) std::cout << "[accuracy] two_sum, fast_two_sum, two_prod: " << n << " args exact\n";
  if (n > 0) CHECK(n >= 100000);
}

TEST_CASE("double-double +, -, *, / are within 2^-100 relative and normalized",
          "[double_double][mpfr]") {
  DdReport add("dd + dd", kArithBound);
  DdReport sub("dd - dd", kArithBound);
  DdReport mul("dd * dd", kArithBound);
  DdReport div("dd / dd", kArithBound);
  DdReport mul_d("dd * double", kArithBound);
  DdReport add_d("dd + double", kArithBound);
  DdReport mul_n("mul(n < 2^53, dd)", kArithBound);
  rc::prop("dd arithmetic within 2^-100 relative", [&] {
    const auto b = *batch(two_dds());
    Mpfr e;
    for (const TwoDd& t : b.args) {
      const pm::dd x{t.a.hi, t.a.lo};
      const pm::dd y{t.b.hi, t.b.lo};
      auto desc = [&] { return "a=" + hex_dd(x.hi, x.lo) + " b=" + hex_dd(y.hi, y.lo); };
      const auto check = [&](DdReport& r, pm::dd got, const DdArg& ea, const DdArg& eb, char op) {
        set_exact(e, ea, eb, op);
        if (mpfr_zero_p(e) && got.hi == 0.0 && got.lo == 0.0) {
          r.check(0.0, 0.0, e, desc);
          return;
        }
        r.check(got.hi, got.lo, e, desc);
      };
      check(add, x + y, t.a, t.b, '+');
      check(sub, x - y, t.a, t.b, '-');
      check(mul, x * y, t.a, t.b, '*');
      if (y.hi != 0.0) check(div, x / y, t.a, t.b, '/');
      check(mul_d, x * y.hi, t.a, DdArg{y.hi, 0.0}, '*');
      check(add_d, x + y.hi, t.a, DdArg{y.hi, 0.0}, '+');
      const std::uint64_t n = std::bit_cast<std::uint64_t>(y.hi) >> 11;  // < 2^53
      check(mul_n, pm::mul(n, x), t.a, DdArg{static_cast<double>(n), 0.0}, '*');
    }
    assert_batch(add, sub, mul, div, mul_d, add_d, mul_n);
  });
  if (add.ran()) CHECK(add.count() >= 100000);
}

TEST_CASE("double-double comparisons and negation", "[double_double]") {
  rc::prop("a < b and a == b agree with the exact values", [] {
    const auto b = *batch(two_dds());
    Mpfr x, y;
    for (const TwoDd& t : b.args) {
      const pm::dd a{t.a.hi, t.a.lo};
      const pm::dd c{t.b.hi, t.b.lo};
      set_dd(x, a.hi, a.lo);
      set_dd(y, c.hi, c.lo);
      RC_ASSERT((a < c) == (mpfr_less_p(x, y) != 0));
      RC_ASSERT((a == a));
      RC_ASSERT((a == c) == (mpfr_equal_p(x, y) != 0));
      const pm::dd na = -a;
      RC_ASSERT(same_bits(na.hi, -a.hi));
      RC_ASSERT(same_bits(na.lo, -a.lo));
    }
  });
  CHECK(pm::dd{} == pm::dd{0.0, 0.0});
  CHECK(pm::dd{1.0, 0x1p-60} < pm::dd{1.0, 0x1p-59});
  CHECK_FALSE(pm::dd{1.0, 0x1p-59} < pm::dd{1.0, 0x1p-60});
}
