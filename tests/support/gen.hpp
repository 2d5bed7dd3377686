// RapidCheck generators for the accuracy tests, and the batch driver.
//
// Argument count: each rc::prop case draws one Batch of batch_size() arguments (1000 times
// POSENC_MPFR_SCALE, default 1), and RapidCheck runs 100 cases by default (RC_PARAMS=
// "max_success=N" changes that), so every function sees >= 100 * 1000 = 10^5 arguments by default.
//
// RapidCheck's own floating-point generators (and gen::inRange, whose range grows with the
// "size" of the case: case 0 only ever gets the lower bound) do not cover a domain evenly, so
// every generator here draws integers at full size and builds values from bits, ldexp or an
// affine map.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "support/check.hpp"

namespace posenc_test {

// POSENC_MPFR_SCALE (integer >= 1, default 1).
std::uint64_t mpfr_scale();
// 1000 * mpfr_scale().
std::size_t batch_size();

// Uniform integer in [lo, hi] (inclusive), independent of RapidCheck's size.
rc::Gen<std::int64_t> int_in(std::int64_t lo, std::int64_t hi);
rc::Gen<std::uint64_t> uint_in(std::uint64_t lo, std::uint64_t hi);

// Uniform in [a, b] (53 random bits mapped affinely, so every value is a multiple of
// (b - a) * 2^-53 shifted by a; fine for covering a range, not for tiny magnitudes).
rc::Gen<double> uniform(double a, double b);
// |x| = m * 2^e, e uniform in [emin, emax], m a uniform 53-bit significand in [1, 2). Exponents
// below -1022 give subnormals with the same leading-bit position. `sign` picks the sign:
// 0 -> positive, 1 -> negative, anything else -> random.
rc::Gen<double> log_uniform(int emin, int emax, int sign = 0);
// Positive subnormal doubles, uniform bit patterns.
rc::Gen<double> subnormal();
// x stepped by a uniform number of ulps in [-k, k] (nextafter steps).
rc::Gen<double> around(double x, int k);
// Same, around a generated value.
rc::Gen<double> around(rc::Gen<double> g, int k);
// The double nearest to j * pi/2, j uniform in [1, 2^max_log2_j] log-uniformly (random exponent,
// then random bits), random sign, then moved by up to k ulps.
rc::Gen<double> near_half_pi_multiple(int max_log2_j, int k);

// 1 + d with |d| log-uniform in [2^-52, 2^-1]: arguments close to 1 (log x small, where relative
// accuracy needs care; bases of pow that large exponents amplify).
rc::Gen<double> near_one();

// Float versions: built from bit patterns, all finite unless stated.
rc::Gen<float> uniform_f(float a, float b);
rc::Gen<float> log_uniform_f(int emin, int emax, int sign = 0);
// 1 + d with |d| log-uniform in [2^-23, 2^-1].
rc::Gen<float> near_one_f();
// The float nearest to j * pi/2 (as above), moved by up to k float ulps.
rc::Gen<float> near_half_pi_multiple_f(int max_log2_j, int k);

// A low part for a double-double with high part `hi`: uniform with |lo| < ulp(hi)/2.
rc::Gen<double> dd_lo(double hi);

// Double-double argument, hi from `g`, lo uniform below ulp(hi)/2.
struct DdArg {
  double hi;
  double lo;
};
rc::Gen<DdArg> dd_arg(rc::Gen<double> g);

// A batch of arguments for one property case. Not shrunk (the failure message lists the
// offending arguments themselves), and shown by size only.
template <class T>
struct Batch {
  std::vector<T> args;
};

template <class T>
void showValue(const Batch<T>& b, std::ostream& os) {
  os << "<batch of " << b.args.size() << " arguments; offending ones listed above>";
}

template <class T>
rc::Gen<Batch<T>> batch(rc::Gen<T> g) {
  // Every element is drawn at RapidCheck's nominal size, so early cases cover the whole domain
  // too (choice generators such as gen::weightedOneOf also depend on the size).
  return rc::gen::noShrink(
      rc::gen::map(rc::gen::container<std::vector<T>>(
                       batch_size(), rc::gen::resize(rc::kNominalSize, std::move(g))),
                   [](std::vector<T> v) { return Batch<T>{std::move(v)}; }));
}

// Fails the current property case (RC_FAIL) when any report received violations since the last
// call; the message lists them.
template <class... Reports>
void assert_batch(Reports&... reports) {
  std::string msg;
  ((msg += reports.take_recent()), ...);
  if (!msg.empty()) RC_FAIL("violations in this batch:\n" + msg);
}

}  // namespace posenc_test
