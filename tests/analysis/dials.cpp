// posenc/analysis/dials.hpp against exact math: theta_i, the wavelength 2 pi / theta_i and the
// turns N theta_i / (2 pi) of every pair against MPFR; the slowest wavelength against
// 2 pi base^((R-2)/R) and its limit 2 pi base (62831.85 tokens for base 10^4); the scaled dials
// against the laws of their scalings (linear: every pair by 1/factor; NTK: pair 0 unchanged and
// the last pair by exactly 1/factor).
//
// Tolerance: inv_freq_dd is within ~2^-100 relative of exact (math/pow.hpp), 2 pi in double-double
// within 2^-107, and one double-double division or product adds below 2^-104 relative, so a
// wavelength or a count of turns is within ~2^-99 of exact; kDd = 2^-96 leaves a factor 8.
#include <posenc/analysis/dials.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "support/exact.hpp"
#include "support/mpfr_ref.hpp"

namespace {
using posenc::rope_config;
using posenc::rope_layout;
using posenc_test::Mpfr;
namespace pa = posenc::analysis;

constexpr double kDd = 0x1p-96;

double rel_error(posenc::math::dd got, const Mpfr& exact) {
  return posenc_test::dd_rel_error(got.hi, got.lo, exact);
}

struct case_t {
  std::uint32_t rotary_dim;
  double base;
  std::uint64_t context;
};

}  // namespace

TEST_CASE("dials: theta, wavelength, turns and never_turns of every pair == MPFR", "[dials]") {
  for (const case_t t :
       {case_t{128, 10000.0, 4096}, case_t{64, 150000.0, 131072}, case_t{128, 500000.0, 8192},
        case_t{80, 10000.0, 2048}, case_t{2, 10000.0, 1}}) {
    const rope_config c{t.rotary_dim, t.rotary_dim, t.base, rope_layout::half};
    std::uint32_t never = 0;
    for (std::uint32_t i = 0; i < t.rotary_dim / 2; ++i) {
      INFO("R = " << t.rotary_dim << ", base " << t.base << ", pair " << i);
      Mpfr theta, two_pi, wl, turns;
      posenc_test::set_theta(theta, t.base, i, t.rotary_dim);
      posenc_test::set_two_pi(two_pi);
      mpfr_div(wl, two_pi, theta, MPFR_RNDN);
      mpfr_mul_ui(turns, theta, static_cast<unsigned long>(t.context), MPFR_RNDN);
      mpfr_div(turns, turns, two_pi, MPFR_RNDN);
      const pa::dial d = pa::dial_of(c, i, t.context);
      CHECK(rel_error(d.inv_freq, theta) <= kDd);
      CHECK(rel_error(d.wavelength, wl) <= kDd);
      CHECK(rel_error(d.turns, turns) <= kDd);
      const bool exact_never = mpfr_cmp_ui(turns, 1) < 0;
      CHECK(d.never_turns == exact_never);
      never += exact_never ? 1 : 0;
      // The default next to the scaled one: identical without a scaling.
      const pa::dial_pair p = pa::dial_pair_of(c, i, t.context);
      CHECK(p.scaled.wavelength == p.unscaled.wavelength);
    }
    CHECK(pa::pairs_never_turning(c, t.context) == never);
  }
}

TEST_CASE("dials: the slowest wavelength is 2 pi base^((R-2)/R) and tends to 2 pi base",
          "[dials]") {
  for (const std::uint32_t R : {2u, 64u, 128u, 1024u, 65536u}) {
    INFO("R = " << R);
    const rope_config c{R, R, 10000.0, rope_layout::half};
    Mpfr want, two_pi;
    posenc_test::set_pow_ratio(want, 10000.0, static_cast<std::int64_t>(R) - 2, R);
    posenc_test::set_two_pi(two_pi);
    mpfr_mul(want, want, two_pi, MPFR_RNDN);
    const posenc::math::dd got = pa::slowest_wavelength(c);
    CHECK(rel_error(got, want) <= kDd);
    // The published limit 2 pi 10^4 = 62831.853...: 1 - lambda / (2 pi base) = 1 - base^(-2/R)
    // = 1 - e^(-x), x = 2 ln(base) / R, which lies in [x - x^2/2, x].
    const double limit = 62831.853071795864;
    const double gap = 1.0 - posenc::math::to_double(got) / limit;
    const double x = 2.0 * 9.2103403719761836 / R;  // ln 10^4 = 9.21034037197618...
    CHECK(gap >= x - x * x / 2 - 1e-15);
    CHECK(gap <= x + 1e-15);
  }
  // A large head: within 0.03% of 62831.85 tokens.
  const rope_config big{65536, 65536, 10000.0, rope_layout::half};
  const double w = posenc::math::to_double(pa::slowest_wavelength(big));
  CHECK(w < 62831.85);
  CHECK(w > 62831.85 * (1 - 3e-4));
}

TEST_CASE("dials: scaled next to default (linear, ntk, llama3)", "[dials]") {
  // Linear: theta / factor for every pair, so the wavelength grows by exactly the factor.
  const rope_config lin{128, 128, 10000.0, rope_layout::half, posenc::scaling::linear(4.0)};
  for (std::uint32_t i = 0; i < 64; ++i) {
    const pa::dial_pair p = pa::dial_pair_of(lin, i, 8192);
    Mpfr want;
    posenc_test::set_dd(want, p.unscaled.wavelength.hi, p.unscaled.wavelength.lo);
    mpfr_mul_ui(want, want, 4, MPFR_RNDN);
    CHECK(rel_error(p.scaled.wavelength, want) <= kDd);
  }
  // NTK: base' = base factor^(R/(R-2)): pair 0 unchanged, the last pair slower by exactly the
  // factor (docs/laws.md "NTK moves the lowest frequency by exactly 1/s").
  const rope_config ntk{128, 128, 10000.0, rope_layout::half, posenc::scaling::ntk(8.0)};
  const pa::dial_pair first = pa::dial_pair_of(ntk, 0, 4096);
  CHECK(first.scaled.wavelength == first.unscaled.wavelength);
  const pa::dial_pair last = pa::dial_pair_of(ntk, 63, 4096);
  Mpfr want;
  posenc_test::set_dd(want, last.unscaled.wavelength.hi, last.unscaled.wavelength.lo);
  mpfr_mul_ui(want, want, 8, MPFR_RNDN);
  CHECK(rel_error(last.scaled.wavelength, want) <= kDd);
  // llama3, d = 128, base 5e5, L = 8192 (formulas.md §2): pairs 0..28 unchanged, 35..63 divided
  // by the factor, 29..34 blended; so over the original context, only the slow band changes its
  // never_turns.
  const rope_config l3{128, 128, 500000.0, rope_layout::half,
                       posenc::scaling::llama3(8.0, 1.0, 4.0, 8192)};
  for (std::uint32_t i = 0; i < 64; ++i) {
    INFO("pair " << i);
    const pa::dial_pair p = pa::dial_pair_of(l3, i, 8192);
    if (i <= 28) CHECK(p.scaled.inv_freq == p.unscaled.inv_freq);
    if (i >= 35) {
      Mpfr w8;
      posenc_test::set_dd(w8, p.unscaled.wavelength.hi, p.unscaled.wavelength.lo);
      mpfr_mul_ui(w8, w8, 8, MPFR_RNDN);
      CHECK(rel_error(p.scaled.wavelength, w8) <= kDd);
      // wavelength > L / low_freq_factor = 8192 tokens: no turn within the original context.
      CHECK(p.scaled.never_turns);
    }
    if (i > 28 && i < 35) {
      // The blended band, in MPFR from theta = base^(-2i/128) alone (HF
      // _compute_llama3_parameters): smooth = (L / wavelength - low_freq_factor) /
      // (high_freq_factor - low_freq_factor) = (8192 theta / 2 pi - 1) / 3, and
      // theta' = (1 - smooth) theta / 8 + smooth theta. Each pair must lie strictly inside the
      // band (0 < smooth < 1), which catches a band edge moved by one pair.
      Mpfr theta, two_pi, smooth, one_minus, blended;
      posenc_test::set_theta(theta, 500000.0, i, 128);
      posenc_test::set_two_pi(two_pi);
      mpfr_mul_ui(smooth, theta, 8192, MPFR_RNDN);
      mpfr_div(smooth, smooth, two_pi, MPFR_RNDN);
      mpfr_sub_ui(smooth, smooth, 1, MPFR_RNDN);
      mpfr_div_ui(smooth, smooth, 3, MPFR_RNDN);
      CHECK(mpfr_sgn(smooth.get()) > 0);
      CHECK(mpfr_cmp_ui(smooth, 1) < 0);
      mpfr_ui_sub(one_minus, 1, smooth, MPFR_RNDN);
      mpfr_mul(one_minus, one_minus, theta, MPFR_RNDN);
      mpfr_div_ui(one_minus, one_minus, 8, MPFR_RNDN);
      mpfr_mul(blended, smooth, theta, MPFR_RNDN);
      mpfr_add(blended, blended, one_minus, MPFR_RNDN);
      CHECK(rel_error(p.scaled.inv_freq, blended) <= kDd);
      CHECK(!(p.scaled.inv_freq == p.unscaled.inv_freq));
    }
  }
}

TEST_CASE("dials: dials_of fills every pair and leaves the rest zero", "[dials]") {
  const rope_config c{8, 8, 10000.0, rope_layout::interleaved};
  const auto all = pa::dials_of<6>(c, 100);
  for (std::uint32_t i = 0; i < 4; ++i) CHECK(all[i].scaled.inv_freq == posenc::inv_freq_dd(c, i));
  CHECK(all[4].scaled.inv_freq.hi == 0.0);
  CHECK(all[5].scaled.wavelength.hi == 0.0);
}
