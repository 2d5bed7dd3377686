// The accuracy property of the math tests, written once: batches of arguments from a generator,
// each result checked against its exact value in MPFR by a report (check.hpp).
//
// A failure names the argument through describe_arg(a): defined here for double, float and
// double-double arguments; a test with its own argument type defines describe_arg for it next to
// the type (found by argument-dependent lookup).
#pragma once

#include <rapidcheck/catch.h>

#include <string>
#include <type_traits>
#include <utility>

#include "support/check.hpp"
#include "support/gen.hpp"
#include "support/mpfr_ref.hpp"

namespace posenc_test {

inline std::string describe_arg(double x) {
  return "x=" + hex(x);
}
inline std::string describe_arg(float x) {
  return "x=" + hex(x);
}
inline std::string describe_arg(const DdArg& a) {
  return "x=" + hex_dd(a.hi, a.lo);
}

// out = the argument, exactly.
inline void set_arg(Mpfr& out, double x) {
  mpfr_set_d(out, x, MPFR_RNDN);
}
inline void set_arg(Mpfr& out, float x) {
  mpfr_set_flt(out, x, MPFR_RNDN);
}
inline void set_arg(Mpfr& out, const DdArg& a) {
  set_dd(out, a.hi, a.lo);
}

// rc::prop `name`: for every argument a of each batch drawn from g, set_exact(a, exact) sets the
// exact value (it may return false for an argument outside the function's domain, which is then
// skipped), and report checks got(a) against it (a double-double result through its hi and lo).
// The case fails on any violation, listing the offending arguments.
template <class Report, class T, class SetExact, class Got>
void mpfr_property(Report& report, const std::string& name, rc::Gen<T> g, SetExact set_exact,
                   Got got) {
  rc::prop(name, [&] {
    const auto b = *batch(g);
    Mpfr exact;
    for (const T& a : b.args) {
      if constexpr (std::is_same_v<decltype(set_exact(a, exact)), bool>) {
        if (!set_exact(a, exact)) continue;
      } else {
        set_exact(a, exact);
      }
      const auto v = got(a);
      const auto describe = [&] { return describe_arg(a); };
      if constexpr (requires {
                      v.hi;
                      v.lo;
                    }) {
        report.check(v.hi, v.lo, exact, describe);
      } else {
        report.check(v, exact, describe);
      }
    }
    assert_batch(report);
  });
}

// The same for a function of one argument whose exact value is an MPFR function (mpfr_exp,
// mpfr_log, ...) of it.
template <class Report, class T, class Got>
void mpfr_property(Report& report, const std::string& name, rc::Gen<T> g,
                   int (*exact_fn)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t), Got got) {
  mpfr_property(
      report, name, std::move(g),
      [exact_fn](const T& a, Mpfr& e) {
        Mpfr x(kPrec + 64);
        set_arg(x, a);
        exact_fn(e, x, MPFR_RNDN);
      },
      std::move(got));
}

}  // namespace posenc_test
