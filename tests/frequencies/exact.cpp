// posenc/frequencies/rope.hpp against exact math: inv_freq<float> is the correctly rounded float
// of the exact value of each scaling's formula (MPFR, 256 bits, the discrete branches of YaRN's
// truncation and llama3's bands decided in MPFR too), inv_freq<double> within 0.5 ulp (plus the
// double-double residue; llama3 and yarn: see check_against_mpfr), attention_factor within 1 ulp,
// on random configurations (support/random_rope.hpp); HF's worked correction ranges and llama3
// bands (docs/formulas.md §2). Tag [exact].
#include <posenc/frequencies/rope.hpp>
#include <posenc/spec/rope.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <cstdint>
#include <iostream>
#include <string>
#include <tuple>

#include "support/check.hpp"
#include "support/exact.hpp"
#include "support/gen.hpp"
#include "support/mpfr_ref.hpp"
#include "support/random_rope.hpp"

namespace pm = posenc::math;
using posenc::rope_config;
using posenc::rope_layout;
using posenc::scaling_name;
using posenc::scaling_type;
using namespace posenc_test;

namespace {

constexpr mpfr_prec_t kWork = kPrec + 64;

// The exact theta_i of the config (each scaling's formula, docs/formulas.md §2).
void exact_inv_freq(Mpfr& out, const RandomRope& r, std::uint32_t i, bool& near_discrete) {
  const rope_config& c = r.config;
  const posenc::rope_scaling& s = c.scaling;
  const auto ii = static_cast<std::int64_t>(i);
  const auto R = static_cast<std::int64_t>(c.rotary_dim);
  Mpfr theta(kWork), t(kWork), u(kWork);
  set_pow_ratio(theta, c.base, -2 * ii, R);
  switch (s.type) {
    case scaling_type::none:
      mpfr_set(out, theta, MPFR_RNDN);
      return;
    case scaling_type::linear:
      mpfr_div_d(out, theta, s.factor, MPFR_RNDN);
      return;
    case scaling_type::ntk:
      set_pow_ratio(t, s.factor, -2 * ii, R - 2);
      mpfr_mul(out, theta, t, MPFR_RNDN);
      return;
    case scaling_type::dynamic: {
      // bracket = factor seq / max_pos - (factor - 1), seq = max(seq_len, max_pos)
      const std::uint64_t seq =
          r.seq_len > s.max_position_embeddings ? r.seq_len : s.max_position_embeddings;
      mpfr_set_d(t, s.factor, MPFR_RNDN);
      mpfr_mul_ui(t, t, static_cast<unsigned long>(seq), MPFR_RNDN);
      mpfr_div_ui(t, t, s.max_position_embeddings, MPFR_RNDN);
      mpfr_sub_d(t, t, s.factor, MPFR_RNDN);
      mpfr_add_ui(t, t, 1, MPFR_RNDN);
      mpfr_log(t, t, MPFR_RNDN);
      mpfr_mul_si(t, t, -2 * ii, MPFR_RNDN);
      mpfr_div_si(t, t, R - 2, MPFR_RNDN);
      mpfr_exp(t, t, MPFR_RNDN);
      mpfr_mul(out, theta, t, MPFR_RNDN);
      return;
    }
    case scaling_type::yarn: {
      set_yarn_ramp(u, c, i, near_discrete);
      mpfr_div_d(t, theta, s.factor, MPFR_RNDN);
      mpfr_mul(t, t, u, MPFR_RNDN);  // (theta / factor) ramp
      mpfr_ui_sub(u, 1, u, MPFR_RNDN);
      mpfr_mul(u, theta, u, MPFR_RNDN);  // theta (1 - ramp)
      mpfr_add(out, t, u, MPFR_RNDN);
      return;
    }
    case scaling_type::llama3: {
      const double L = s.original_max_position_embeddings;
      Mpfr wavelen(kWork), edge(kWork);
      set_two_pi(wavelen);
      mpfr_div(wavelen, wavelen, theta, MPFR_RNDN);
      mpfr_set_d(edge, L, MPFR_RNDN);
      mpfr_div_d(edge, edge, s.low_freq_factor, MPFR_RNDN);
      if (mpfr_cmp(wavelen, edge) > 0) {
        mpfr_div_d(out, theta, s.factor, MPFR_RNDN);
        return;
      }
      mpfr_set_d(edge, L, MPFR_RNDN);
      mpfr_div_d(edge, edge, s.high_freq_factor, MPFR_RNDN);
      if (mpfr_cmp(wavelen, edge) < 0) {
        mpfr_set(out, theta, MPFR_RNDN);
        return;
      }
      // smooth = (L / wavelen - low) / (high - low); (1 - smooth) theta / factor + smooth theta
      mpfr_d_div(u, L, wavelen, MPFR_RNDN);
      mpfr_sub_d(u, u, s.low_freq_factor, MPFR_RNDN);
      mpfr_set_d(t, s.high_freq_factor, MPFR_RNDN);
      mpfr_sub_d(t, t, s.low_freq_factor, MPFR_RNDN);
      mpfr_div(u, u, t, MPFR_RNDN);
      mpfr_ui_sub(t, 1, u, MPFR_RNDN);
      mpfr_mul(t, t, theta, MPFR_RNDN);
      mpfr_div_d(t, t, s.factor, MPFR_RNDN);
      mpfr_mul(u, u, theta, MPFR_RNDN);
      mpfr_add(out, t, u, MPFR_RNDN);
      return;
    }
    case scaling_type::longrope: {
      const bool use_long = r.seq_len > s.original_max_position_embeddings;
      mpfr_div_d(out, theta, use_long ? s.long_factor[i] : s.short_factor[i], MPFR_RNDN);
      return;
    }
  }
}

// HF get_mscale(s, m) = 1 for s <= 1, else 0.1 m ln(s) + 1, with 0.1 m the double product that HF
// (Python) and the library form; the rest exact.
void exact_mscale(Mpfr& out, double s, double m) {
  if (s <= 1.0) {
    mpfr_set_ui(out, 1, MPFR_RNDN);
    return;
  }
  mpfr_set_d(out, s, MPFR_RNDN);
  mpfr_log(out, out, MPFR_RNDN);
  mpfr_mul_d(out, out, 0.1 * m, MPFR_RNDN);
  mpfr_add_ui(out, out, 1, MPFR_RNDN);
}

void exact_attention_factor(Mpfr& out, const rope_config& c) {
  const posenc::rope_scaling& s = c.scaling;
  switch (s.type) {
    case scaling_type::yarn:
      if (s.attention_factor > 0.0) {
        mpfr_set_d(out, s.attention_factor, MPFR_RNDN);
      } else if (s.mscale > 0.0 && s.mscale_all_dim > 0.0) {
        Mpfr den(kWork);
        exact_mscale(out, s.factor, s.mscale);
        exact_mscale(den, s.factor, s.mscale_all_dim);
        mpfr_div(out, out, den, MPFR_RNDN);
      } else {
        exact_mscale(out, s.factor, 1.0);
      }
      return;
    case scaling_type::longrope: {
      if (s.attention_factor > 0.0) {
        mpfr_set_d(out, s.attention_factor, MPFR_RNDN);
      } else if (s.factor <= 1.0) {
        mpfr_set_ui(out, 1, MPFR_RNDN);
      } else {
        // sqrt(1 + ln(factor) / ln(original_max_position_embeddings))
        Mpfr l(kWork);
        mpfr_set_d(out, s.factor, MPFR_RNDN);
        mpfr_log(out, out, MPFR_RNDN);
        mpfr_set_ui(l, s.original_max_position_embeddings, MPFR_RNDN);
        mpfr_log(l, l, MPFR_RNDN);
        mpfr_div(out, out, l, MPFR_RNDN);
        mpfr_add_ui(out, out, 1, MPFR_RNDN);
        mpfr_sqrt(out, out, MPFR_RNDN);
      }
      return;
    }
    default:
      mpfr_set_ui(out, 1, MPFR_RNDN);
      return;
  }
}

void check_against_mpfr(scaling_type type) {
  const std::string name = scaling_name(type);
  // How well the double-double value is known decides which exact values may round either way:
  // - yarn: the ramp (i - low) / (high - low) amplifies the ~2^-100 absolute error of the
  //   correction dims (up to ~2^12) by 1 / (high - low) (down to the 0.001 guard) and the factor
  //   (up to 64): 2^-72 relative at worst; floats within 2^-70 undecidable, doubles 0.5 + 2^-16
  //   ulp.
  // - the others: the double-double residue (2^-90), doubles within 0.5 + 2^-36 ulp.
  double residue = kResidue;
  double double_bound = 0.5 + 0x1p-36;
  if (type == scaling_type::yarn) {
    residue = 0x1p-70;
    double_bound = 0.5 + 0x1p-16;
  }
  RoundReport rf("inv_freq<float> (" + name + ")", residue);
  UlpReport rd("inv_freq<double> (" + name + ")", double_bound);
  UlpReport ra("attention_factor (" + name + ")", 1.0);
  std::uint64_t near_discrete_pairs = 0;
  rc::prop("inv_freq and attention_factor against MPFR", [&] {
    const RandomRope r = *random_rope(type);
    const rope_config& c = r.config;
    Mpfr exact(kWork);
    for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i) {
      bool near_discrete = false;
      exact_inv_freq(exact, r, i, near_discrete);
      if (near_discrete) {
        ++near_discrete_pairs;
        continue;
      }
      const auto desc = [&] { return describe(r) + " i=" + std::to_string(i); };
      rf.check(posenc::inv_freq<float>(c, i, r.seq_len), exact, desc);
      rd.check(posenc::inv_freq<double>(c, i, r.seq_len), exact, desc);
    }
    exact_attention_factor(exact, c);
    ra.check(posenc::attention_factor(c), exact, [&] { return describe(r); });
    assert_batch(rf, rd, ra);
  });
  if (near_discrete_pairs > 0)
    std::cout << "[accuracy] " << name << ": " << near_discrete_pairs
              << " pairs skipped (a YaRN correction dim within 2^-70 of an integer)\n";
}

}  // namespace

TEST_CASE("exact: inv_freq and attention_factor of every scaling against MPFR", "[exact][mpfr]") {
  for (scaling_type t :
       {scaling_type::none, scaling_type::linear, scaling_type::ntk, scaling_type::dynamic,
        scaling_type::yarn, scaling_type::llama3, scaling_type::longrope}) {
    SECTION(scaling_name(t)) {
      check_against_mpfr(t);
    }
  }
}

TEST_CASE("exact: longrope switches to the long factors only above the original context",
          "[exact][mpfr]") {
  // HF _compute_longrope_parameters: long_factor iff seq_len > original_max_position_embeddings,
  // so seq_len == L still uses the short factors. Distinct factors per pair and list, so that a
  // wrong choice changes every theta; each result == the correctly rounded float of MPFR's value.
  static constexpr double short_factor[4] = {1.0, 1.25, 1.5, 2.0};
  static constexpr double long_factor[4] = {3.0, 5.0, 7.0, 11.0};
  constexpr std::uint32_t L = 4096;
  RandomRope r;
  r.config = rope_config{8, 8, 10000.0, rope_layout::half,
                         posenc::scaling::longrope(short_factor, long_factor, L, 4 * L)};
  for (std::uint64_t seq_len : {std::uint64_t{0}, std::uint64_t{L - 1}, std::uint64_t{L},
                                std::uint64_t{L + 1}, std::uint64_t{4 * L}}) {
    r.seq_len = seq_len;
    for (std::uint32_t i = 0; i < 4; ++i) {
      Mpfr exact(kWork);
      bool near_discrete = false;
      exact_inv_freq(exact, r, i, near_discrete);
      INFO("seq_len " << seq_len << " pair " << i);
      CHECK(posenc::inv_freq<float>(r.config, i, seq_len) == mpfr_get_flt(exact, MPFR_RNDN));
    }
  }
}

TEST_CASE("exact: HF's worked correction ranges and llama3 bands (formulas.md §2)", "[exact]") {
  // d = 128, base 10^4, L = 4096: correction dims 20.944 / 45.027, truncated (20, 46); L = 2048:
  // (16, 41). Pairs at or below low are unscaled, at or above high divided by the factor.
  for (auto [L, low, high] : {std::tuple{4096u, 20u, 46u}, std::tuple{2048u, 16u, 41u}}) {
    const rope_config c{128, 128, 10000.0, rope_layout::half, posenc::scaling::yarn(4.0, L)};
    const rope_config d{128, 128, 10000.0, rope_layout::half};
    for (std::uint32_t i = 0; i < 64; ++i) {
      const pm::dd theta = posenc::inv_freq_dd(d, i);
      const pm::dd got = posenc::inv_freq_dd(c, i);
      if (i <= low) CHECK(got == theta);
      if (i >= high) CHECK(got == theta / 4.0);
      if (i > low && i < high) CHECK((got < theta && theta / 4.0 < got));
    }
  }
  // llama3, d = 128, base 5e5, L = 8192: the medium band is pairs 29..34.
  const rope_config c{128, 128, 500000.0, rope_layout::half,
                      posenc::scaling::llama3(8.0, 1.0, 4.0, 8192)};
  const rope_config d{128, 128, 500000.0, rope_layout::half};
  for (std::uint32_t i = 0; i < 64; ++i) {
    const pm::dd theta = posenc::inv_freq_dd(d, i);
    const pm::dd got = posenc::inv_freq_dd(c, i);
    INFO("pair " << i);
    if (i < 29) CHECK(got == theta);
    if (i > 34) CHECK(got == theta / 8.0);
    if (i >= 29 && i <= 34) CHECK((got < theta && theta / 8.0 < got));
  }
}
