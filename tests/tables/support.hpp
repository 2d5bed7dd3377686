// Shared by the tables tests: random RoPE configurations (every scaling, both layouts, partial
// rotary, and a sequence length, which dynamic and longrope depend on), invalid configurations,
// and the MPFR oracle for table entries that carry an attention factor.
#pragma once

#include <posenc/math/double_double.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/spec/validate.hpp>

#include <rapidcheck.h>

#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/check.hpp"
#include "support/gen.hpp"
#include "support/mpfr_ref.hpp"
#include "support/rope.hpp"

namespace posenc_test {

// A config with its longrope factor storage (shared, so copies keep the spans valid).
struct RandomRope {
  posenc::rope_config config;
  std::uint64_t seq_len = 0;
  std::shared_ptr<const std::vector<double>> short_factor;
  std::shared_ptr<const std::vector<double>> long_factor;
};

using posenc::scaling_name;

inline std::string describe(const posenc::rope_config& c, std::uint64_t seq_len = 0) {
  std::ostringstream os;
  os.precision(17);
  const posenc::rope_scaling& s = c.scaling;
  os << "{head_dim " << c.head_dim << ", rotary_dim " << c.rotary_dim << ", base " << c.base << ", "
     << (c.layout == posenc::rope_layout::interleaved ? "interleaved" : "half") << ", "
     << scaling_name(s.type) << " factor " << s.factor << " orig "
     << s.original_max_position_embeddings << " max_pos " << s.max_position_embeddings << " beta "
     << s.beta_fast << "/" << s.beta_slow << (s.truncate ? " truncate" : "") << " mscale "
     << s.mscale << "/" << s.mscale_all_dim << " attention_factor " << s.attention_factor
     << " low/high " << s.low_freq_factor << "/" << s.high_freq_factor << ", seq_len " << seq_len
     << "}";
  return os.str();
}

inline void showValue(const RandomRope& r, std::ostream& os) {
  os << describe(r.config, r.seq_len);
}

// A valid random config with head_dim <= max_head_dim (>= 2).
inline rc::Gen<RandomRope> random_rope(std::int64_t max_head_dim) {
  return rc::gen::exec([max_head_dim] {
    using posenc::scaling_type;
    RandomRope r;
    posenc::rope_config& c = r.config;
    c.head_dim = static_cast<std::uint32_t>(*int_in(2, max_head_dim));
    c.rotary_dim = static_cast<std::uint32_t>(2 * *int_in(1, c.head_dim / 2));
    // Full rotary half of the time.
    if (*int_in(0, 1) == 0) c.rotary_dim = c.head_dim & ~std::uint32_t{1};
    c.base = *rope_base();
    c.layout = *int_in(0, 1) == 0 ? posenc::rope_layout::interleaved : posenc::rope_layout::half;
    auto type = static_cast<scaling_type>(*int_in(0, 6));
    if ((type == scaling_type::ntk || type == scaling_type::dynamic) && c.rotary_dim < 4)
      type = scaling_type::linear;
    const auto ctx = [] { return static_cast<std::uint32_t>(*int_in(16, 8192)); };
    switch (type) {
      case scaling_type::none:
        break;
      case scaling_type::linear:
        c.scaling = posenc::scaling::linear(*uniform(1.0, 64.0));
        break;
      case scaling_type::ntk:
        c.scaling = posenc::scaling::ntk(*uniform(1.0, 16.0));
        break;
      case scaling_type::dynamic: {
        const std::uint32_t max_pos = ctx();
        c.scaling = posenc::scaling::dynamic(*uniform(1.0, 8.0), max_pos);
        r.seq_len = *uint_in(0, 4 * std::uint64_t{max_pos});
        break;
      }
      case scaling_type::yarn: {
        const double beta_slow = *uniform(0.25, 4.0);
        const bool defaults = *int_in(0, 1) == 0;
        const auto mscale = [] { return *int_in(0, 2) == 0 ? 0.0 : *uniform(0.05, 2.0); };
        c.scaling = posenc::scaling::yarn(*uniform(1.0, 64.0), ctx(),
                                          defaults ? 32.0 : beta_slow + *uniform(0.5, 64.0),
                                          defaults ? 1.0 : beta_slow, *int_in(0, 1) == 0, mscale(),
                                          mscale(), *int_in(0, 3) == 0 ? *uniform(0.5, 2.0) : 0.0);
        break;
      }
      case scaling_type::llama3: {
        const double low = *uniform(0.25, 4.0);
        c.scaling =
            posenc::scaling::llama3(*uniform(1.0, 32.0), low, low + *uniform(0.25, 8.0), ctx());
        break;
      }
      case scaling_type::longrope: {
        const std::size_t n = c.rotary_dim / 2;
        auto factors = [n] {
          std::vector<double> v(n);
          for (double& x : v) x = *uniform(0.5, 64.0);
          return std::make_shared<const std::vector<double>>(std::move(v));
        };
        r.short_factor = factors();
        r.long_factor = factors();
        const std::uint32_t orig = ctx();
        const auto max_pos = static_cast<std::uint32_t>(orig * *int_in(1, 32));
        c.scaling = posenc::scaling::longrope(*r.short_factor, *r.long_factor, orig, max_pos,
                                              *int_in(0, 3) == 0 ? *uniform(0.5, 2.0) : 0.0);
        r.seq_len = *uint_in(0, 2 * std::uint64_t{orig});
        break;
      }
    }
    RC_ASSERT(posenc::validate(c) == posenc::rope_error::ok);
    return r;
  });
}

// A config that breaks at least one rule (validate(c) != ok), starting from a valid one.
inline rc::Gen<posenc::rope_config> invalid_rope() {
  return rc::gen::exec([] {
    posenc::rope_config c = (*random_rope(64)).config;
    c.scaling.short_factor = {};  // no storage behind the spans after this generator returns
    c.scaling.long_factor = {};
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    constexpr double inf = std::numeric_limits<double>::infinity();
    switch (*int_in(0, 9)) {
      case 0:
        c.head_dim = 0;
        break;
      case 1:
        c.rotary_dim = c.rotary_dim + 1;
        break;  // odd
      case 2:
        c.rotary_dim = c.head_dim + 2;
        break;  // wider than the head
      case 3:
        c.rotary_dim = 0;
        break;
      case 4:
        c.base = *rc::gen::element(1.0, 0.5, -10000.0, 0.0, nan, inf);
        break;
      case 5:
        c.scaling = posenc::scaling::linear(*rc::gen::element(0.5, 0.0, nan, inf));
        break;
      case 6:
        c.scaling = posenc::scaling::yarn(4.0, 0);
        break;
      case 7:
        c.scaling = posenc::scaling::yarn(4.0, 4096, 1.0, 32.0);
        break;  // beta_fast < slow
      case 8:
        c.scaling = posenc::scaling::dynamic(2.0, 0);
        break;
      default:
        c.scaling = posenc::scaling::longrope({}, {}, 4096, 8192);  // no factors for R/2 pairs
        break;
    }
    return c;  // every case above breaks a rule (checked by the tests)
  });
}

// af * cos(p theta) and af * sin(p theta), and for each whether a float (double) rounding midpoint
// lies within the residue: evaluated at angle * (1 -+ kResidue), each value widened by kResidue.
struct ScaledExact {
  Mpfr c{kPrec + 64};
  Mpfr s{kPrec + 64};
  bool cos_near_float = false;
  bool sin_near_float = false;
  bool cos_near_double = false;
  bool sin_near_double = false;

  void set(std::uint64_t p, posenc::math::dd theta, posenc::math::dd af) {
    Mpfr angle(kPrec + 64);
    set_product(angle, p, theta.hi, theta.lo);
    Mpfr scale;
    set_dd(scale, af.hi, af.lo);
    const mpfr_prec_t prec = mpfr_get_prec(angle) + 128;
    Mpfr d(prec), a0(prec), a1(prec);
    mpfr_mul_d(d, angle, kResidue, MPFR_RNDN);
    mpfr_sub(a0, angle, d, MPFR_RNDN);
    mpfr_add(a1, angle, d, MPFR_RNDN);
    Mpfr s0(kPrec + 64), c0(kPrec + 64), s1(kPrec + 64), c1(kPrec + 64);
    mpfr_sin_cos(s, c, angle, MPFR_RNDN);
    mpfr_sin_cos(s0, c0, a0, MPFR_RNDN);
    mpfr_sin_cos(s1, c1, a1, MPFR_RNDN);
    for (Mpfr* v : {&s, &c, &s0, &c0, &s1, &c1}) mpfr_mul(*v, *v, scale, MPFR_RNDN);
    near(s0, s, s1, sin_near_float, sin_near_double);
    near(c0, c, c1, cos_near_float, cos_near_double);
  }

 private:
  static void near(mpfr_srcptr v0, mpfr_srcptr v1, mpfr_srcptr v2, bool& f, bool& d) {
    Mpfr lo(kPrec + 128), hi(kPrec + 128), w(kPrec + 128);
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
    f = interval_straddles_float_midpoint(lo, hi);
    d = round_double(lo) != round_double(hi);
  }
};

// Correct rounding of double entries (RoundReport is float-only): the same rule and summary line.
class DoubleRoundTally {
 public:
  explicit DoubleRoundTally(std::string name) : name_(std::move(name)) {}
  ~DoubleRoundTally() {
    if (count_ > 0)
      std::cout << "[accuracy] " << name_ << ": " << count_ << " args, " << violations_
                << " not correctly rounded, " << near_ << " near a midpoint (within "
                << log2_str(kResidue) << " relative)\n";
  }
  DoubleRoundTally(const DoubleRoundTally&) = delete;
  DoubleRoundTally& operator=(const DoubleRoundTally&) = delete;

  template <class Describe>
  bool check(double got, mpfr_srcptr exact, bool near, Describe&& describe) {
    ++count_;
    if (near) {
      ++near_;
      return true;
    }
    if (correctly_rounded(got, exact)) return true;
    ++violations_;
    if (first_.size() < 8)
      first_ += describe() + ": got " + hex(got) + ", correctly rounded " +
                hex(round_double(exact)) + "\n";
    return false;
  }
  std::uint64_t violations() const { return violations_; }
  std::uint64_t count() const { return count_; }
  const std::string& first_violations() const { return first_; }

 private:
  std::string name_;
  std::uint64_t count_ = 0;
  std::uint64_t near_ = 0;
  std::uint64_t violations_ = 0;
  std::string first_;
};

}  // namespace posenc_test
