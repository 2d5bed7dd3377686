// Properties of the scalings of posenc/frequencies/rope.hpp on random configurations
// (support/random_rope.hpp): factor 1 is the default, NTK moves the lowest frequency by exactly
// 1/factor, YaRN keeps the pairs below its correction range and divides those above it, llama3 is
// continuous at its band edges, dynamic is the default up to max_position_embeddings. Tag
// [scaling].
#include <posenc/frequencies/rope.hpp>
#include <posenc/spec/rope.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <vector>

#include "support/exact.hpp"
#include "support/gen.hpp"
#include "support/mpfr_ref.hpp"
#include "support/random_rope.hpp"

namespace pm = posenc::math;
using posenc::rope_config;
using posenc::rope_error;
using posenc::scaling_type;
using namespace posenc_test;

namespace {

rope_config without_scaling(const rope_config& c) {
  rope_config d = c;
  d.scaling = posenc::scaling::none();
  return d;
}

// |a - b| <= rel |b| in double-double.
bool close_dd(pm::dd a, pm::dd b, double rel) {
  const pm::dd d = a - b;
  const double ad = d.hi < 0 ? -d.hi : d.hi;
  const double ab = b.hi < 0 ? -b.hi : b.hi;
  return ad <= rel * ab;
}

// Two double-double evaluations of the same number agree to ~2^-100; 2^-96 leaves margin.
constexpr double kDdClose = 0x1p-96;

}  // namespace

TEST_CASE("scaling: factor 1 is the default (linear, ntk, yarn, llama3, longrope of ones)",
          "[scaling]") {
  rc::prop("factor 1 gives the default frequencies and attention factor 1", [] {
    const scaling_type type =
        *rc::gen::element(scaling_type::linear, scaling_type::ntk, scaling_type::yarn,
                          scaling_type::llama3, scaling_type::longrope, scaling_type::dynamic);
    RandomRope r = *random_rope(type);
    rope_config& c = r.config;
    std::vector<double> ones(c.rotary_dim / 2, 1.0);
    if (type == scaling_type::longrope) {
      c.scaling = posenc::scaling::longrope(ones, ones, 4096, 4096);
    } else {
      c.scaling.factor = 1.0;
      c.scaling.attention_factor = 0.0;
    }
    // HF dynamic: the bracket is factor seq / max_pos - (factor - 1) = seq / max_pos at factor 1,
    // so dynamic is the default at factor 1 only up to max_pos (the next test).
    if (type == scaling_type::dynamic) r.seq_len = 0;
    RC_ASSERT(posenc::validate(c) == rope_error::ok);
    const rope_config d = without_scaling(c);
    for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i) {
      const pm::dd got = posenc::inv_freq_dd(c, i, r.seq_len);
      const pm::dd want = posenc::inv_freq_dd(d, i);
      RC_ASSERT(close_dd(got, want, kDdClose));
      if (type == scaling_type::linear || type == scaling_type::ntk ||
          type == scaling_type::longrope || type == scaling_type::dynamic)
        RC_ASSERT(got == want);  // exactly: a division by 1, or a correction of exactly 1
    }
    RC_ASSERT(posenc::attention_factor(c) == 1.0);
  });
}

TEST_CASE("scaling: dynamic is the default up to max_position_embeddings", "[scaling]") {
  rc::prop("dynamic with seq_len <= max_position_embeddings gives the default frequencies", [] {
    RandomRope r = *random_rope(scaling_type::dynamic);
    r.seq_len = *uint_in(0, r.config.scaling.max_position_embeddings);
    const rope_config d = without_scaling(r.config);
    for (std::uint32_t i = 0; i < r.config.rotary_dim / 2; ++i)
      RC_ASSERT(posenc::inv_freq_dd(r.config, i, r.seq_len) == posenc::inv_freq_dd(d, i));
  });
}

TEST_CASE("scaling: NTK moves the lowest frequency by exactly 1/factor, keeps the highest",
          "[scaling]") {
  rc::prop("ntk: theta'_{R/2-1} = theta_{R/2-1} / factor and theta'_0 = theta_0", [] {
    const RandomRope r = *random_rope(scaling_type::ntk);
    const rope_config& c = r.config;
    const rope_config d = without_scaling(c);
    const std::uint32_t last = c.rotary_dim / 2 - 1;
    RC_ASSERT(close_dd(posenc::inv_freq_dd(c, last),
                       posenc::inv_freq_dd(d, last) / c.scaling.factor, kDdClose));
    RC_ASSERT(posenc::inv_freq_dd(c, 0) == posenc::inv_freq_dd(d, 0));
    // Every other pair lies in between: theta_i / factor <= theta'_i <= theta_i.
    for (std::uint32_t i = 1; i < last; ++i) {
      const pm::dd t = posenc::inv_freq_dd(d, i);
      const pm::dd s = posenc::inv_freq_dd(c, i);
      RC_ASSERT(!(t < s) && !(s < t / c.scaling.factor));
    }
  });
  // The same for dynamic past max_pos, whose base change is NTK's with factor = bracket.
  rc::prop("dynamic past max_pos: the lowest frequency is divided by the bracket", [] {
    RandomRope r = *random_rope(scaling_type::dynamic);
    const posenc::rope_scaling& s = r.config.scaling;
    r.seq_len = *uint_in(s.max_position_embeddings + 1ull, 16ull * s.max_position_embeddings);
    // HF: factor seq / max_pos - (factor - 1), here in double-double.
    const pm::dd factor{s.factor, 0.0};
    const pm::dd bracket =
        factor * static_cast<double>(r.seq_len) / static_cast<double>(s.max_position_embeddings) -
        (factor - 1.0);
    const rope_config d = without_scaling(r.config);
    const std::uint32_t last = r.config.rotary_dim / 2 - 1;
    const pm::dd got = posenc::inv_freq_dd(r.config, last, r.seq_len);
    const pm::dd want = posenc::inv_freq_dd(d, last) / bracket;
    RC_ASSERT(close_dd(got, want, kDdClose));
  });
}

TEST_CASE("scaling: YaRN keeps the pairs below its correction range and divides those above",
          "[scaling]") {
  std::uint64_t below = 0;
  std::uint64_t inside = 0;
  std::uint64_t above = 0;
  rc::prop("yarn: ramp 0 below the range (theta), 1 above it (theta / factor)", [&] {
    const RandomRope r = *random_rope(scaling_type::yarn);
    const rope_config& c = r.config;
    const rope_config d = without_scaling(c);
    for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i) {
      bool near_discrete = false;
      Mpfr ramp(kPrec + 64);
      set_yarn_ramp(ramp, c, i, near_discrete);
      if (near_discrete) continue;
      const pm::dd theta = posenc::inv_freq_dd(d, i);
      const pm::dd got = posenc::inv_freq_dd(c, i);
      if (mpfr_zero_p(ramp.get())) {
        ++below;
        RC_ASSERT(got == theta);
      } else if (mpfr_cmp_ui(ramp, 1) == 0) {
        ++above;
        RC_ASSERT(got == theta / c.scaling.factor);
      } else {
        ++inside;
        // Interpolated: strictly between theta / factor and theta (for factor > 1).
        if (c.scaling.factor > 1.0) RC_ASSERT(got < theta && theta / c.scaling.factor < got);
      }
    }
  });
  std::cout << "[scaling] yarn: " << below << " pairs below the correction range, " << inside
            << " inside, " << above << " above\n"
            << std::flush;
  CHECK(below > 0);
  CHECK(inside > 0);
  CHECK(above > 0);
}

TEST_CASE("scaling: llama3 is continuous at its band edges", "[scaling]") {
  // Pair i >= 1 sits on an edge when its wavelength 2 pi / theta_i equals L / low_freq_factor (or
  // L / high_freq_factor), i.e. for the base b* = (W / 2 pi)^(R / 2i). Just below and just above
  // b* (relative 2^-30) theta_i moves by at most 2^-30; a continuous inv_freq moves by at most
  // (1 + factor high / (high - low)) 2^-30 relative (the blend's slope in log theta is at most
  // factor times L theta / (2 pi (high - low)) <= factor high / (high - low) on the band), while a
  // jump would be 1 - 1/factor >= 1/3 (factor >= 1.5 here).
  std::uint64_t edges = 0;
  rc::prop("llama3: no jump across either band edge", [&] {
    RandomRope r = *random_rope(scaling_type::llama3);
    rope_config& c = r.config;
    c.scaling.factor = *uniform(1.5, 64.0);
    const posenc::rope_scaling& s = c.scaling;
    const std::uint32_t i =
        static_cast<std::uint32_t>(*int_in(1, c.rotary_dim / 2 - 1 + 1)) % (c.rotary_dim / 2);
    RC_PRE(i >= 1u);
    const bool low_edge = *rc::gen::arbitrary<bool>();
    const double W = static_cast<double>(s.original_max_position_embeddings) /
                     (low_edge ? s.low_freq_factor : s.high_freq_factor);
    const double b_edge = std::pow(W / (2.0 * M_PI), static_cast<double>(c.rotary_dim) / (2.0 * i));
    // Below 10^35 every theta_j >= base^-1 and theta_j / factor (factor <= 64) stay normal
    // float32, as validate's inv_freq_float32 requires.
    RC_PRE(std::isfinite(b_edge) && b_edge > 1.5 && b_edge < 1e35);
    ++edges;
    rope_config lo = c;
    rope_config hi = c;
    lo.base = b_edge * (1.0 - 0x1p-30);
    hi.base = b_edge * (1.0 + 0x1p-30);
    RC_ASSERT(posenc::validate(lo) == rope_error::ok);
    RC_ASSERT(posenc::validate(hi) == rope_error::ok);
    const double a = pm::to_double(posenc::inv_freq_dd(lo, i));
    const double b = pm::to_double(posenc::inv_freq_dd(hi, i));
    const double slope =
        1.0 + s.factor * s.high_freq_factor / (s.high_freq_factor - s.low_freq_factor);
    const double bound = 2.0 * slope * 0x1p-30;
    RC_ASSERT(std::fabs(a - b) <= bound * a);
    // The edge is straddled: on its outer side the result is exactly the outer band's.
    const pm::dd outer_lo = posenc::inv_freq_dd(without_scaling(lo), i);
    const pm::dd outer_hi = posenc::inv_freq_dd(without_scaling(hi), i);
    if (low_edge) {
      // The larger base gives the longer wavelength: hi is in the low-frequency band.
      RC_ASSERT(posenc::inv_freq_dd(hi, i) == outer_hi / s.factor);
      RC_ASSERT(!(posenc::inv_freq_dd(lo, i) == outer_lo / s.factor));
      // Negative control: the step function (no blend) jumps by 1 - 1/factor here.
      RC_ASSERT(std::fabs(pm::to_double(outer_hi / s.factor) - pm::to_double(outer_lo)) >
                bound * a);
    } else {
      RC_ASSERT(posenc::inv_freq_dd(lo, i) == outer_lo);
      RC_ASSERT(!(posenc::inv_freq_dd(hi, i) == outer_hi));
      RC_ASSERT(std::fabs(pm::to_double(outer_lo) - pm::to_double(outer_hi / s.factor)) >
                bound * a);
    }
  });
  std::cout << "[scaling] llama3: " << edges << " band edges crossed\n" << std::flush;
}
