// MPFR oracle for the accuracy tests: exact values at high precision, the distance of a computed
// result from them, and the detection of exact values that lie near a float rounding midpoint.
//
// Nothing here depends on posenc: double-double values are passed as (hi, lo) pairs, so these
// helpers can be checked against MPFR and the standard library alone (tests/math/checkers.cpp).
#pragma once

#include <mpfr.h>

#include <cstdint>
#include <string>

namespace posenc_test {

// Double-double results carry a relative error below 2^-90 (measured max printed by the dd
// tests); only an exact value that close to a midpoint may round either way.
inline constexpr double kResidue = 0x1p-90;

// Working precision of every reference value. MPFR is correctly rounded at any precision and does
// its own argument reduction (sin/cos of 1e300 included), so 256 bits leave the reference error at
// 2^-256 relative, far below anything measured here.
inline constexpr mpfr_prec_t kPrec = 256;

// RAII owner of one mpfr_t.
class Mpfr {
 public:
  explicit Mpfr(mpfr_prec_t prec = kPrec) { mpfr_init2(v_, prec); }
  ~Mpfr() { mpfr_clear(v_); }
  Mpfr(const Mpfr&) = delete;
  Mpfr& operator=(const Mpfr&) = delete;

  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }
  operator mpfr_ptr() { return v_; }
  operator mpfr_srcptr() const { return v_; }

 private:
  mpfr_t v_;
};

// ---------------------------------------------------------------------------------------------
// Exact inputs.

// out = hi + lo exactly (out's precision is raised as far as the sum needs).
void set_dd(Mpfr& out, double hi, double lo);
// out = p * (hi + lo) exactly.
void set_product(Mpfr& out, std::uint64_t p, double hi, double lo);
// out = base^(num/den), the exponent taken as the exact rational num/den: (base^num)^(1/den),
// each step correctly rounded at kPrec + 64 bits. den != 0.
void set_pow_ratio(Mpfr& out, double base, std::int64_t num, std::int64_t den);

// ---------------------------------------------------------------------------------------------
// Rounding of exact values.

double round_double(mpfr_srcptr exact);  // round to nearest double
float round_float(mpfr_srcptr exact);    // round to nearest float (subnormals included)

// ulp of the double (float) nearest to `exact`: 2^(e-52) (2^(e-23)) for a normal result in
// [2^e, 2^(e+1)), the subnormal spacing below that, and the largest finite ulp past overflow.
double ulp_double_of(mpfr_srcptr exact);
double ulp_float_of(mpfr_srcptr exact);

// |got - exact| / ulp(round(exact)). Infinite/NaN `got` give +inf unless `exact` rounds to the
// same infinity.
double ulp_error(double got, mpfr_srcptr exact);
double ulp_error(float got, mpfr_srcptr exact);

// Bitwise equality with the correctly rounded (round-to-nearest-even) value.
bool correctly_rounded(double got, mpfr_srcptr exact);
bool correctly_rounded(float got, mpfr_srcptr exact);

// True when some value within relative distance `rel` of `exact` rounds to a different float
// than another one does, i.e. when [exact(1-rel), exact(1+rel)] contains a float rounding
// midpoint (rounding to nearest is monotone, so comparing the two ends is enough).
bool near_float_midpoint(mpfr_srcptr exact, double rel);
// Same for a value known only to lie in [lo, hi] (any order).
bool interval_straddles_float_midpoint(mpfr_srcptr lo, mpfr_srcptr hi);

// Relative error |(hi + lo) - exact| / |exact| of a double-double result (0 when exact is 0 and
// hi + lo is 0, +inf when exact is 0 and hi + lo is not).
double dd_rel_error(double hi, double lo, mpfr_srcptr exact);
// Absolute error |(hi + lo) - exact|.
double dd_abs_error(double hi, double lo, mpfr_srcptr exact);

// ---------------------------------------------------------------------------------------------
// Formatting.

std::string hex(double x);                 // "0x1.921fb54442d18p+1"
std::string hex(float x);                  // "0x1.921fb6p+1f"
std::string hex_dd(double hi, double lo);  // "{0x1.8p+0, 0x1p-60}"
std::string dec(mpfr_srcptr x);            // 40 significant digits
std::string log2_str(double x);            // "2^-104.37", "0" for 0

}  // namespace posenc_test
