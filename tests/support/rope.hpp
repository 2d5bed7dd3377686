// Generators and MPFR references for the RoPE angle path: theta_i = base^(-2i/R), angle p theta_i.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <string>

#include "support/mpfr_ref.hpp"

namespace posenc_test {

struct RopeArg {
  std::uint64_t p;  // position
  double base;
  std::int64_t R;  // rotary dimension, even
  std::int64_t i;  // pair index in [0, R/2)
};

// base in [2, 10^7]: well-known integer bases (10000, 500000, 10^6, ...), random integers, and
// arbitrary doubles (uniform and log-uniform).
rc::Gen<double> rope_base();
// p uniform below 2^bits, or log-uniform (random bit length, then random bits).
rc::Gen<std::uint64_t> position(int bits);
// p < 2^24, R even in [2, 512], i in [0, R/2), base from rope_base().
rc::Gen<RopeArg> rope_arg();

std::string describe(const RopeArg& a);

// Exact sin and cos of an angle (optionally times a scale, the attention factor of a table
// entry), and whether each could lie on the other side of a float (double) rounding midpoint given
// the double-double residue: the angle is known to relative kResidue (theta is, and the product
// p * theta adds ~2^-106), and each result to relative kResidue again. Decided by evaluating at
// angle * (1 -+ kResidue), widening each value by kResidue and comparing the roundings of the
// extremes (sin and cos are monotone on so short an interval except at their extrema, where they
// are flat to second order).
struct ExactSinCos {
  Mpfr s{kPrec + 64}, c{kPrec + 64};
  bool sin_near = false;  // float midpoint within the residue
  bool cos_near = false;
  bool sin_near_double = false;  // double midpoint within the residue
  bool cos_near_double = false;

  void set(mpfr_srcptr angle);
  // scale * sin(angle) and scale * cos(angle).
  void set(mpfr_srcptr angle, mpfr_srcptr scale);
  // The table entry af * sin / cos (p * theta) for double-double theta and af (exact inputs).
  void set_entry(std::uint64_t p, double theta_hi, double theta_lo, double af_hi = 1.0,
                 double af_lo = 0.0);
};

}  // namespace posenc_test
