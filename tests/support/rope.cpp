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

// The smallest interval holding v0, v1 and v2, widened by kResidue relative at each end.
void residue_interval(mpfr_srcptr v0, mpfr_srcptr v1, mpfr_srcptr v2, Mpfr& lo, Mpfr& hi) {
  Mpfr w(kPrec + 128);
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
}

// Sets near_float / near_double for the exact value v1 with neighbours v0 and v2.
void near_midpoints(mpfr_srcptr v0, mpfr_srcptr v1, mpfr_srcptr v2, bool& near_float,
                    bool& near_double) {
  Mpfr lo(kPrec + 128), hi(kPrec + 128);
  residue_interval(v0, v1, v2, lo, hi);
  near_float = interval_straddles_float_midpoint(lo, hi);
  near_double = round_double(lo) != round_double(hi);
}

}  // namespace

void ExactSinCos::set(mpfr_srcptr angle, mpfr_srcptr scale) {
  const mpfr_prec_t prec = mpfr_get_prec(angle) + 128;
  Mpfr d(prec), a0(prec), a1(prec);
  mpfr_mul_d(d, angle, kResidue, MPFR_RNDN);
  mpfr_sub(a0, angle, d, MPFR_RNDN);
  mpfr_add(a1, angle, d, MPFR_RNDN);
  Mpfr s0(kPrec + 64), c0(kPrec + 64), s1(kPrec + 64), c1(kPrec + 64);
  mpfr_sin_cos(s, c, angle, MPFR_RNDN);
  mpfr_sin_cos(s0, c0, a0, MPFR_RNDN);
  mpfr_sin_cos(s1, c1, a1, MPFR_RNDN);
  if (scale != nullptr)
    for (Mpfr* v : {&s, &c, &s0, &c0, &s1, &c1}) mpfr_mul(*v, *v, scale, MPFR_RNDN);
  near_midpoints(s0, s, s1, sin_near, sin_near_double);
  near_midpoints(c0, c, c1, cos_near, cos_near_double);
}

void ExactSinCos::set(mpfr_srcptr angle) {
  set(angle, nullptr);
}

void ExactSinCos::set_entry(std::uint64_t p, double theta_hi, double theta_lo, double af_hi,
                            double af_lo) {
  Mpfr angle(kPrec + 64), af;
  set_product(angle, p, theta_hi, theta_lo);
  set_dd(af, af_hi, af_lo);
  set(angle, af);
}

}  // namespace posenc_test
