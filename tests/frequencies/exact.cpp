// posenc/frequencies/rope.hpp against exact math: inv_freq<float> is the correctly rounded float
// of the exact value of each scaling's formula (support/exact_rope.hpp: MPFR, 256 bits, the
// discrete branches of YaRN's truncation and llama3's bands decided in MPFR too), inv_freq<double>
// within 0.5 ulp (plus the double-double residue; llama3 and yarn: see check_against_mpfr),
// attention_factor within 1 ulp, on random configurations (support/random_rope.hpp); HF's worked
// correction ranges and llama3 bands (docs/formulas.md §2). Tag [exact].
#include <posenc/frequencies/rope.hpp>
#include <posenc/spec/rope.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <cstdint>
#include <iostream>
#include <string>
#include <tuple>

#include "support/check.hpp"
#include "support/exact_rope.hpp"
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
      exact_rope_inv_freq(exact, r.config, i, r.seq_len, near_discrete);
      if (near_discrete) {
        ++near_discrete_pairs;
        continue;
      }
      const auto desc = [&] { return describe(r) + " i=" + std::to_string(i); };
      rf.check(posenc::inv_freq<float>(c, i, r.seq_len), exact, desc);
      rd.check(posenc::inv_freq<double>(c, i, r.seq_len), exact, desc);
    }
    exact_rope_attention_factor(exact, c);
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
      exact_rope_inv_freq(exact, r.config, i, r.seq_len, near_discrete);
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
