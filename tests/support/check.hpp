// Accuracy checkers with running statistics. Each Report accumulates over every argument checked
// for one function and prints a one-line summary when it goes out of scope (also when a check
// failed), so the numbers land in the test log:
//
//   [accuracy] exp(double): 100000 args, max error 0.5002 ulp (x=0x1.6p+3), 0 above 1 ulp
//
// The checks themselves return false on a violation and keep the first few offending arguments
// (hex) with the expected and computed values, for the failure message.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/mpfr_ref.hpp"

namespace posenc_test {

// Bitwise equality (tells -0.0 from +0.0, and compares NaNs by payload) of doubles, floats, and
// of the structs made of them: {hi, lo} pairs and {sin, cos} pairs, member by member, and of
// std::arrays of those, element by element.
template <class T>
bool same_bits(const T& a, const T& b) {
  if constexpr (requires {
                  a.size();
                  a[0];
                }) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!same_bits(a[i], b[i])) return false;
    }
    return true;
  } else if constexpr (requires {
                         a.hi;
                         a.lo;
                       }) {
    return same_bits(a.hi, b.hi) && same_bits(a.lo, b.lo);
  } else if constexpr (requires {
                         a.sin;
                         a.cos;
                       }) {
    return same_bits(a.sin, b.sin) && same_bits(a.cos, b.cos);
  } else if constexpr (sizeof(T) == 8) {
    return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
  } else {
    static_assert(sizeof(T) == 4);
    return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
  }
}

class Report {
 public:
  explicit Report(std::string name);
  virtual ~Report() = default;
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;

  const std::string& name() const { return name_; }
  // Whether any argument was checked. (Catch runs a TEST_CASE again after a failed SECTION, and
  // rc::prop is a SECTION: on that second pass the property is skipped and the report is empty.)
  bool ran() const { return count_ > 0; }
  std::uint64_t count() const { return count_; }
  std::uint64_t violations() const { return violations_; }

  // Violations recorded since the last call (at most kKeep of them, one per line), then forgets
  // them. Empty when there were none.
  std::string take_recent();
  // The first kKeep violations of the whole run, one per line.
  std::string first_violations() const;

  // Prints the summary line to stdout.
  virtual void print() const = 0;

  static constexpr std::size_t kKeep = 8;

 protected:
  void add_violation(std::string text);

  std::string name_;
  std::uint64_t count_ = 0;
  std::uint64_t violations_ = 0;
  std::vector<std::string> first_;
  std::vector<std::string> recent_;
  std::uint64_t recent_dropped_ = 0;
};

// The violations of several reports: their number, and the first ones of each (for a failure
// message).
template <class... Reports>
std::uint64_t violations_of(const Reports&... reports) {
  return (reports.violations() + ...);
}
template <class... Reports>
std::string first_violations_of(const Reports&... reports) {
  return (reports.first_violations() + ...);
}

// Double results promised within `bound` ulp of the exact value (error measured against the ulp
// of the correctly rounded result), plus `extra_ulp` for one argument where the promise has an
// argument-dependent term (e.g. an absolute error bound divided by the ulp).
class UlpReport final : public Report {
 public:
  explicit UlpReport(std::string name, double bound = 1.0)
      : Report(std::move(name)), bound_(bound) {}
  ~UlpReport() override { print(); }

  template <class Describe>
  bool check(double got, mpfr_srcptr exact, Describe&& describe, double extra_ulp = 0.0) {
    ++count_;
    const double err = ulp_error(got, exact);
    if (err > max_ || worst_.empty()) {
      if (err > max_) max_ = err;
      worst_ = describe();
    }
    if (extra_ulp != 0.0) with_extra_ = true;
    if (!(err <= bound_ + extra_ulp)) {
      add_violation(describe() + ": got " + hex(got) + ", correctly rounded " +
                    hex(round_double(exact)) + " (exact " + dec(exact) + "), error " +
                    std::to_string(err) + " ulp (bound " + std::to_string(bound_ + extra_ulp) +
                    ")");
      return false;
    }
    return true;
  }
  double max_ulp() const { return max_; }
  void print() const override;

 private:
  double bound_;
  bool with_extra_ = false;
  double max_ = 0.0;
  std::string worst_;
};

// Float (or double) results promised correctly rounded, except where the exact value lies within
// the double-double residue of a rounding midpoint: those are counted, and may round either way.
class RoundReport final : public Report {
 public:
  // `residue`: relative uncertainty of the value the result was rounded from.
  explicit RoundReport(std::string name, double residue = kResidue)
      : Report(std::move(name)), residue_(residue) {}
  ~RoundReport() override { print(); }

  // Near-midpoint test: relative `residue` around `exact`.
  template <class Describe>
  bool check(float got, mpfr_srcptr exact, Describe&& describe) {
    return check_near(got, exact, near_float_midpoint(exact, residue_),
                      std::forward<Describe>(describe));
  }

  // Near-midpoint test done by the caller (e.g. from an interval of possible exact values, of
  // the same `residue`).
  // `got` a float or a double (a double's `near` from an interval, as for a float's).
  template <class T, class Describe>
  requires std::is_same_v<T, float> || std::is_same_v<T, double>
  bool check_near(T got, mpfr_srcptr exact, bool near, Describe&& describe) {
    ++count_;
    const double err = ulp_error(got, exact);
    if (err > max_) max_ = err;
    const bool cr = correctly_rounded(got, exact);
    if (near) {
      ++near_;
      if (!cr) ++near_differs_;
      return true;
    }
    if (!cr) {
      ++not_cr_;
      T rounded;
      if constexpr (std::is_same_v<T, float>) {
        rounded = round_float(exact);
      } else {
        rounded = round_double(exact);
      }
      add_violation(describe() + ": got " + hex(got) + ", correctly rounded " + hex(rounded) +
                    " (exact " + dec(exact) + "), error " + std::to_string(err) + " ulp");
      return false;
    }
    return true;
  }
  std::uint64_t not_correctly_rounded() const { return not_cr_; }
  std::uint64_t near_midpoint() const { return near_; }
  std::uint64_t near_midpoint_differs() const { return near_differs_; }
  void print() const override;

 private:
  double residue_;
  double max_ = 0.0;
  std::uint64_t not_cr_ = 0;
  std::uint64_t near_ = 0;
  std::uint64_t near_differs_ = 0;
};

// Double-double results promised within `rel_bound` relative error; optionally, for results that
// may be tiny (sin/cos), within `abs_bound` absolute error instead.
class DdReport final : public Report {
 public:
  explicit DdReport(std::string name, double rel_bound = kResidue, double abs_bound = 0.0,
                    double tiny = 0.0)
      : Report(std::move(name)), rel_bound_(rel_bound), abs_bound_(abs_bound), tiny_(tiny) {}
  ~DdReport() override { print(); }

  // Passes when the relative error is within rel_bound, or (abs_bound > 0) the absolute error is
  // within abs_bound. The maximum relative error is taken over results with |exact| >= tiny.
  template <class Describe>
  bool check(double hi, double lo, mpfr_srcptr exact, Describe&& describe) {
    ++count_;
    const double rel = dd_rel_error(hi, lo, exact);
    const double abs = abs_bound_ > 0.0 ? dd_abs_error(hi, lo, exact) : 0.0;
    const double rounded = std::fabs(round_double(exact));
    const bool counted = rounded != 0.0 && rounded >= tiny_;
    if (counted && rel > max_rel_) {
      max_rel_ = rel;
      worst_rel_ = describe();
    }
    if (abs > max_abs_) {
      max_abs_ = abs;
      worst_abs_ = describe();
    }
    const bool ok = rel <= rel_bound_ || (abs_bound_ > 0.0 && abs <= abs_bound_);
    const bool normalized = is_normalized(hi, lo);
    if (!normalized) ++not_normalized_;
    if (!ok || !normalized) {
      add_violation(describe() + ": got " + hex_dd(hi, lo) + ", exact " + dec(exact) +
                    ", relative error " + log2_str(rel) +
                    (abs_bound_ > 0.0 ? ", absolute error " + log2_str(abs) : std::string()) +
                    (normalized ? "" : ", not normalized (|lo| > ulp(hi)/2)"));
      return false;
    }
    return true;
  }
  double max_rel() const { return max_rel_; }
  double max_abs() const { return max_abs_; }
  std::uint64_t not_normalized() const { return not_normalized_; }
  void print() const override;

  // hi == RN(hi + lo), i.e. |lo| <= ulp(hi)/2 (ties as rounding decides).
  static bool is_normalized(double hi, double lo);

 private:
  double rel_bound_;
  double abs_bound_;
  double tiny_;
  double max_rel_ = 0.0;
  double max_abs_ = 0.0;
  std::string worst_rel_;
  std::string worst_abs_;
  std::uint64_t not_normalized_ = 0;
};

}  // namespace posenc_test
