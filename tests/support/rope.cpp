#include "support/rope.hpp"

#include <cmath>

#include "support/gen.hpp"

namespace posenc_test {

rc::Gen<double> rope_base() {
  return rc::gen::weightedOneOf<double>({
      {2, rc::gen::element(10000.0, 500000.0, 1000000.0, 10000000.0, 2.0, 10.0, 100000.0, 1000.0,
                           5000000.0, 8192.0, 75000.0, 250000.0)},
      {2, rc::gen::map(int_in(2, 10000000), [](std::int64_t v) { return static_cast<double>(v); })},
      {2, uniform(2.0, 1e7)},
      {1, rc::gen::map(uniform(1.0, 23.253496664211536),  // log2(10^7)
                       [](double e) { return std::exp2(e); })},
  });
}

rc::Gen<std::uint64_t> position(int bits) {
  return rc::gen::weightedOneOf<std::uint64_t>({
      {3, uint_in(0, (std::uint64_t{1} << bits) - 1)},
      {2, rc::gen::exec([=] {
         const auto len = static_cast<int>(*int_in(1, bits));
         const std::uint64_t top = std::uint64_t{1} << (len - 1);
         return *uint_in(top, 2 * top - 1);
       })},
  });
}

rc::Gen<RopeArg> rope_arg() {
  return rc::gen::exec([] {
    const std::int64_t R = 2 * *int_in(1, 256);
    const std::uint64_t p = *position(24);
    const double base = *rope_base();
    return RopeArg{p, base, R, *int_in(0, R / 2 - 1)};
  });
}

std::string describe(const RopeArg& a) {
  return "p=" + std::to_string(a.p) + " base=" + hex(a.base) + " (" + std::to_string(a.base) +
         ") R=" + std::to_string(a.R) + " i=" + std::to_string(a.i);
}

namespace {

bool near(mpfr_srcptr v0, mpfr_srcptr v1, mpfr_srcptr v2) {
  Mpfr lo(kPrec + 64), hi(kPrec + 64), w(kPrec + 64);
  mpfr_min(lo, v0, v1, MPFR_RNDN);
  mpfr_min(lo, lo, v2, MPFR_RNDN);
  mpfr_max(hi, v0, v1, MPFR_RNDN);
  mpfr_max(hi, hi, v2, MPFR_RNDN);
  mpfr_abs(w, lo, MPFR_RNDN);
  mpfr_mul_d(w, w, kResidue, MPFR_RNDN);
  mpfr_sub(lo, lo, w, MPFR_RNDN);
  mpfr_abs(w, hi, MPFR_RNDN);
  mpfr_mul_d(w, w, kResidue, MPFR_RNDN);
  mpfr_add(hi, hi, w, MPFR_RNDN);
  return interval_straddles_float_midpoint(lo, hi);
}

}  // namespace

void ExactSinCos::set(mpfr_srcptr angle) {
  mpfr_sin_cos(s, c, angle, MPFR_RNDN);
  const mpfr_prec_t prec = mpfr_get_prec(angle) + 128;
  Mpfr d(prec), a0(prec), a1(prec), s0, c0, s1, c1;
  mpfr_mul_d(d, angle, kResidue, MPFR_RNDN);
  mpfr_sub(a0, angle, d, MPFR_RNDN);
  mpfr_add(a1, angle, d, MPFR_RNDN);
  mpfr_sin_cos(s0, c0, a0, MPFR_RNDN);
  mpfr_sin_cos(s1, c1, a1, MPFR_RNDN);
  sin_near = near(s0, s, s1);
  cos_near = near(c0, c, c1);
}

}  // namespace posenc_test
