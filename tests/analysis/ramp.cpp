// posenc/analysis/ramp.hpp against exact math and published numbers (docs/formulas.md §2):
// - YaRN: HF's worked correction ranges (d = 128, base 10^4, L = 4096: (20, 46) truncated; gpt-oss
//   d = 64, base 150000, L = 4096: 8.092779 / 17.398025 kept as floats), the ramp of every pair
//   against HF's formula evaluated in MPFR, and its convention: 0 for pairs at or below low
//   (theta kept), 1 at or above high (theta / factor);
// - llama3: d = 128, base 5e5, L = 8192: smooth_factor 1 for pairs 0..28, 0 for 35..63, strictly
//   between for 29..34, each against HF's formula in MPFR;
// - interpolation_weight is the blend weight of inv_freq_dd: theta/s w + theta (1 - w) == inv_freq.
//
// Tolerances. The correction dims come from logs in double-double (~2^-100 relative), so low and
// high are within ~2^-98 (|dim| < 2^7); the ramp (i - low) / (high - low) then has an absolute
// error below 2^-90 (kRamp) for ranges wider than 2^-3. smooth_factor = (L / wavelength - 1) / 3
// has L / wavelength < 4 within ~2^-98 relative, so below 2^-94 absolute (kRamp covers it). The
// blend identity adds two roundings of double-doubles: 2^-96 relative (kDd).
#include <posenc/analysis/ramp.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "support/exact.hpp"
#include "support/mpfr_ref.hpp"

namespace {
using posenc::rope_config;
using posenc::rope_layout;
using posenc_test::Mpfr;
namespace pa = posenc::analysis;
namespace pm = posenc::math;

constexpr double kRamp = 0x1p-90;
constexpr double kDd = 0x1p-96;

// HF find_correction_range of c's YaRN scaling (support/exact.hpp).
void correction_range(Mpfr& low, Mpfr& high, const rope_config& c) {
  bool near_discrete = false;
  posenc_test::set_yarn_range(low, high, c, near_discrete);
  REQUIRE_FALSE(near_discrete);  // these configs' dims are far from integers
}

double abs_diff(pm::dd got, const Mpfr& exact) {
  return posenc_test::dd_abs_error(got.hi, got.lo, exact);
}

}  // namespace

TEST_CASE("ramp: YaRN correction ranges as published (formulas.md §2)", "[ramp][yarn]") {
  const rope_config c{128, 128, 10000.0, rope_layout::half, posenc::scaling::yarn(4.0, 4096)};
  const auto r = pa::yarn_ramp_range(c);
  CHECK(r.low == pm::dd{20.0, 0.0});
  CHECK(r.high == pm::dd{46.0, 0.0});
  const rope_config c2{128, 128, 10000.0, rope_layout::half, posenc::scaling::yarn(4.0, 2048)};
  CHECK(pa::yarn_ramp_range(c2).low == pm::dd{16.0, 0.0});
  CHECK(pa::yarn_ramp_range(c2).high == pm::dd{41.0, 0.0});
  // Untruncated: raw dims 20.944 / 45.027 (published to 3 decimals), and in MPFR.
  const rope_config raw{128, 128, 10000.0, rope_layout::half,
                        posenc::scaling::yarn(4.0, 4096, 32.0, 1.0, false)};
  const auto rr = pa::yarn_ramp_range(raw);
  CHECK(std::fabs(rr.low.hi - 20.944) <= 0.0005);
  CHECK(std::fabs(rr.high.hi - 45.027) <= 0.0005);
  Mpfr lo, hi;
  posenc_test::set_correction_dim(lo, 32.0, raw);
  posenc_test::set_correction_dim(hi, 1.0, raw);
  CHECK(abs_diff(rr.low, lo) <= kRamp);
  CHECK(abs_diff(rr.high, hi) <= kRamp);
  // gpt-oss: d = 64, base 150000, L = 4096, truncate false: 8.092779 / 17.398025.
  const rope_config oss{64, 64, 150000.0, rope_layout::half,
                        posenc::scaling::yarn(32.0, 4096, 32.0, 1.0, false)};
  const auto ro = pa::yarn_ramp_range(oss);
  CHECK(std::fabs(ro.low.hi - 8.092779) <= 5e-7);
  CHECK(std::fabs(ro.high.hi - 17.398025) <= 5e-7);
}

TEST_CASE("ramp: YaRN ramp of every pair == HF linear_ramp_factor in MPFR; 0 keeps theta",
          "[ramp][yarn]") {
  for (const bool truncate : {true, false}) {
    for (const std::uint32_t L : {2048u, 4096u}) {
      const rope_config c{128, 128, 10000.0, rope_layout::half,
                          posenc::scaling::yarn(4.0, L, 32.0, 1.0, truncate)};
      Mpfr lo, hi, t;
      correction_range(lo, hi, c);
      for (std::uint32_t i = 0; i < 64; ++i) {
        INFO("L = " << L << ", truncate " << truncate << ", pair " << i);
        posenc_test::set_yarn_ramp(t, lo, hi, i);
        const pm::dd got = pa::yarn_ramp_factor(c, i);
        CHECK(abs_diff(got, t) <= kRamp);
        CHECK(pa::interpolation_weight(c, i) == got);
        // The convention: below the range theta is kept, above it divided by the factor.
        const pm::dd theta = posenc::inv_freq_dd(posenc::rope_config{128, 128, 10000.0}, i);
        if (mpfr_cmp_ui(lo, i) >= 0) {
          CHECK(got == pm::dd{0.0, 0.0});
          CHECK(posenc::inv_freq_dd(c, i) == theta);
        }
        if (mpfr_cmp_ui(hi, i) <= 0) CHECK(got == pm::dd{1.0, 0.0});
        // The blend identity.
        const pm::dd blend = (theta / 4.0) * got + theta * (pm::dd{1.0, 0.0} - got);
        Mpfr want;
        posenc_test::set_dd(want, blend.hi, blend.lo);
        CHECK(posenc_test::dd_rel_error(posenc::inv_freq_dd(c, i).hi, posenc::inv_freq_dd(c, i).lo,
                                        want) <= kDd);
      }
    }
  }
}

TEST_CASE("ramp: llama3 smooth_factor bands (29..34 for d=128, base 5e5) and values == MPFR",
          "[ramp][llama3]") {
  const rope_config c{128, 128, 500000.0, rope_layout::half,
                      posenc::scaling::llama3(8.0, 1.0, 4.0, 8192)};
  for (std::uint32_t i = 0; i < 64; ++i) {
    INFO("pair " << i);
    const pm::dd s = pa::llama3_smooth_factor(c, i);
    const pm::dd w = pa::interpolation_weight(c, i);
    CHECK(w == pm::dd{1.0, 0.0} - s);
    if (i <= 28) {
      CHECK(s == pm::dd{1.0, 0.0});  // wavelength < L/4: theta kept
    } else if (i >= 35) {
      CHECK(s == pm::dd{0.0, 0.0});  // wavelength > L: theta / factor
    } else {
      CHECK(s.hi > 0.0);
      CHECK(s.hi < 1.0);
      // (L / wavelength - low_ff) / (high_ff - low_ff), wavelength = 2 pi / theta.
      Mpfr theta, t;
      posenc_test::set_theta(theta, 500000.0, i, 128);
      posenc_test::set_two_pi(t);
      mpfr_div(t, theta, t, MPFR_RNDN);
      mpfr_mul_ui(t, t, 8192, MPFR_RNDN);
      mpfr_sub_ui(t, t, 1, MPFR_RNDN);
      mpfr_div_ui(t, t, 3, MPFR_RNDN);
      CHECK(abs_diff(s, t) <= kRamp);
    }
    // The blend identity with the frequencies layer.
    const pm::dd theta = posenc::inv_freq_dd(posenc::rope_config{128, 128, 500000.0}, i);
    const pm::dd blend = (theta / 8.0) * w + theta * (pm::dd{1.0, 0.0} - w);
    Mpfr want;
    posenc_test::set_dd(want, blend.hi, blend.lo);
    CHECK(posenc_test::dd_rel_error(posenc::inv_freq_dd(c, i).hi, posenc::inv_freq_dd(c, i).lo,
                                    want) <= kDd);
  }
}

TEST_CASE("ramp: interpolation_weight of the other scalings", "[ramp]") {
  const rope_config none{64, 64, 10000.0};
  const rope_config lin{64, 64, 10000.0, rope_layout::half, posenc::scaling::linear(2.0)};
  const rope_config ntk{64, 64, 10000.0, rope_layout::half, posenc::scaling::ntk(2.0)};
  CHECK(pa::interpolation_weight(none, 3) == pm::dd{0.0, 0.0});
  CHECK(pa::interpolation_weight(lin, 3) == pm::dd{1.0, 0.0});
  CHECK(std::isnan(pa::interpolation_weight(ntk, 3).hi));
  CHECK(!pa::has_ramp(none));
  CHECK(!pa::has_ramp(ntk));
  CHECK(pa::has_ramp(
      rope_config{64, 64, 10000.0, rope_layout::half, posenc::scaling::yarn(2.0, 4096)}));
}
