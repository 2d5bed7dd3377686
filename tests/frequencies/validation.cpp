// posenc/spec/rope.hpp: every rule of all_rope_rules has a config that breaks it and a valid
// twin (tests/compile_fail/broken_specs.hpp, the same configs the compile-fail tests use); the
// messages; random configurations (support/random_rope.hpp) are valid and non-finite values are
// rejected; the bounds that settle the inv_freq rule without a pow per pair never pass a config
// the per-pair check refuses (random and on a grid near float32's limits). Tag [validation].
#include <posenc/spec/rope.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "compile_fail/broken_specs.hpp"
#include "support/random_rope.hpp"

using posenc::rope_config;
using posenc::rope_error;
using posenc::rope_layout;
using namespace posenc_test;

TEST_CASE("validation: every rule has a config that breaks it and a valid twin", "[validation]") {
  namespace rules = posenc_test::rules;
  REQUIRE(std::size(rules::cases) == std::size(posenc::all_rope_rules));
  for (const rules::rule_case& c : rules::cases) {
    INFO("rule " << c.name);
    CHECK(posenc::validate(c.broken) == c.rule);
    CHECK(posenc::validate(c.valid) == rope_error::ok);
    for (rope_error e : posenc::all_rope_rules) {
      INFO("checking rule " << posenc::message(e));
      // The broken config breaks its rule (and its unavoidable companion) and no other.
      CHECK(posenc::satisfies(c.broken, e) == (e != c.rule && e != c.also_broken));
      CHECK(posenc::satisfies(c.valid, e));
    }
  }
  // The same, evaluated at compile time.
  static_assert(posenc::validate(rules::config_for(rope_error::yarn_beta, false)) ==
                rope_error::yarn_beta);
  static_assert(posenc::validate(rules::config_for(rope_error::longrope_context, true)) ==
                rope_error::ok);
}

TEST_CASE("validation: messages are distinct, non-empty and start with \"posenc: \"",
          "[validation]") {
  std::vector<std::string> seen;
  for (rope_error e : posenc::all_rope_rules) {
    const std::string m = posenc::message(e);
    INFO(m);
    CHECK(m.rfind("posenc: ", 0) == 0);
    CHECK(m.size() > std::string("posenc: ").size());
    for (const std::string& other : seen) CHECK(m != other);
    seen.push_back(m);
  }
  CHECK(std::string(posenc::message(rope_error::ok)) == "posenc: ok");
  CHECK(std::string(posenc::message(static_cast<rope_error>(200))).rfind("posenc: ", 0) == 0);
}

TEST_CASE("validation: random configurations are valid; non-finite values are rejected",
          "[validation]") {
  rc::prop("random configurations validate", [] {
    const RandomRope r = *random_rope();
    RC_ASSERT(posenc::validate(r.config) == rope_error::ok);
  });
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  rope_config c{64, 64, inf, rope_layout::half};
  CHECK(posenc::validate(c) == rope_error::base);
  c.base = nan;
  CHECK(posenc::validate(c) == rope_error::base);
  c.base = 10000.0;
  c.scaling = posenc::scaling::linear(nan);
  CHECK(posenc::validate(c) == rope_error::factor);
  c.scaling = posenc::scaling::yarn(2.0, 4096, inf, 1.0);
  CHECK(posenc::validate(c) == rope_error::yarn_beta);
  c.scaling = posenc::scaling::llama3(8.0, 1.0, nan, 8192);
  CHECK(posenc::validate(c) == rope_error::llama3_freq_factors);
  c.scaling = posenc::scaling::yarn(2.0, 4096, 32.0, 1.0, true, 0.0, 0.0, nan);
  CHECK(posenc::validate(c) == rope_error::attention_factor);
}

TEST_CASE("validation: rotary_dim_from_factor truncates as HF's int(head_dim * factor)",
          "[validation]") {
  // Python's int() truncates toward zero: int(96 * 0.3) = int(28.799999999999997) = 28,
  // int(96 * 0.27) = int(25.92) = 25 (odd, so rope_error::rotary_dim), int(80 * 0.4) = 32
  // (Phi-2), int(96 * 0.25) = 24 (GPT-NeoX), int(64 * 0.999) = int(63.936) = 63.
  CHECK(posenc::rotary_dim_from_factor(96, 0.3) == 28);
  CHECK(posenc::rotary_dim_from_factor(96, 0.27) == 25);
  CHECK(posenc::rotary_dim_from_factor(80, 0.4) == 32);
  CHECK(posenc::rotary_dim_from_factor(96, 0.25) == 24);
  CHECK(posenc::rotary_dim_from_factor(64, 0.999) == 63);
  CHECK(posenc::rotary_dim_from_factor(128, 1.0) == 128);
  // Outside (0, 1]: 0, which no rule accepts.
  CHECK(posenc::rotary_dim_from_factor(128, 0.0) == 0);
  CHECK(posenc::rotary_dim_from_factor(128, 1.5) == 0);
}

// Issue 14 (finite or an error): the derived rules reject the three fuzz findings of
// tests/fuzz/regressions/rope_config (decoded by hand from their README entries), and each sits on
// a boundary computed by hand: 2^-126 = FLT_MIN and 0x1.fffffep127 = FLT_MAX are the float32
// normal range, 2^-900 the smallest YaRN beta.
TEST_CASE("validation: derived quantities, the fuzz findings and the boundaries", "[validation]") {
  const double flt_min = 0x1p-126;
  const double flt_max = 0x1.fffffep127;
  const double above_flt_max = 0x1.fffffe0000001p127;  // the next double
  using posenc::satisfies;
  using posenc::validate;
  namespace scaling = posenc::scaling;

  SECTION("attention factor within float32") {
    // Fuzz: YaRN factor 8.5e165 with an explicit attention_factor 8.5e165 (cache entries inf).
    rope_config c{64, 64, 10000.0, rope_layout::half,
                  scaling::yarn(8.5e165, 4096, 32.0, 1.0, true, 0.0, 0.0, 8.5e165)};
    CHECK(validate(c) == rope_error::attention_factor_float32);
    c.scaling = scaling::yarn(4.0, 4096, 32.0, 1.0, true, 0.0, 0.0, above_flt_max);
    CHECK(validate(c) == rope_error::attention_factor_float32);
    c.scaling.attention_factor = flt_max;
    CHECK(validate(c) == rope_error::ok);
    // DeepSeek's ratio (0.1 m ln 4 + 1) / (0.1 ln 4 + 1) with m = 2^500: about 2^497.
    c.scaling = scaling::yarn(4.0, 4096, 32.0, 1.0, true, 0x1p500, 1.0);
    CHECK(validate(c) == rope_error::attention_factor_float32);
    c.scaling.mscale = 1e30;  // ratio ~9.8e28
    CHECK(validate(c) == rope_error::ok);
  }

  SECTION("yarn correction range finite") {
    // Fuzz: beta_slow subnormal, L / (2 pi beta_slow) overflows and the ramp bound is NaN.
    rope_config c{64, 64, 10000.0, rope_layout::half,
                  scaling::yarn(40.0, 25, 1.29e-231, 3.16e-322)};
    CHECK(validate(c) == rope_error::yarn_correction_range);
    CHECK(satisfies(c, rope_error::inv_freq_float32));  // left to the range's own rule
    c.scaling.beta_slow = 0x1p-900;
    c.scaling.beta_fast = 32.0;
    CHECK(validate(c) == rope_error::ok);
    c.scaling.beta_slow = 0x1.fffffffffffffp-901;  // the double below 2^-900
    CHECK(validate(c) == rope_error::yarn_correction_range);
    // beta_fast 1e308: 2 pi beta_fast overflows.
    c.scaling = scaling::yarn(4.0, 4096, 1e308, 1.0);
    CHECK(validate(c) == rope_error::yarn_correction_range);
    c.scaling.beta_fast = 0x1p900;
    CHECK(validate(c) == rope_error::ok);
  }

  SECTION("inv_freq a normal float32") {
    // Fuzz: LongRoPE long factor 5.3e-315 (subnormal): theta_2 / factor overflows past the
    // original context.
    const double long_factor[] = {2.0, 4.0, 5.3e-315, 16.0};
    const double short_factor[] = {1.0, 1.0, 1.0, 1.0};
    rope_config c{8, 8, 10000.0, rope_layout::half,
                  scaling::longrope(short_factor, long_factor, 4096, 9000)};
    CHECK(validate(c) == rope_error::inv_freq_float32);
    // The same factors as short factors: broken at seq_len 0.
    c.scaling = scaling::longrope(long_factor, short_factor, 4096, 9000);
    CHECK(validate(c) == rope_error::inv_freq_float32);
    // theta_0 = 1: a factor 2^-127 gives 2^127 <= FLT_MAX, 2^-128 gives 2^128 > FLT_MAX.
    const double at_max[] = {0x1p-127, 1.0, 1.0, 1.0};
    const double past_max[] = {0x1p-128, 1.0, 1.0, 1.0};
    c.scaling = scaling::longrope(short_factor, at_max, 4096, 9000);
    CHECK(validate(c) == rope_error::ok);
    c.scaling = scaling::longrope(short_factor, past_max, 4096, 9000);
    CHECK(validate(c) == rope_error::inv_freq_float32);

    // Linear, rotary_dim 2: inv_freq_0 = 1 / factor; 2^-126 = FLT_MIN passes, below it fails.
    rope_config lin{2, 2, 10000.0, rope_layout::half, scaling::linear(0x1p126)};
    CHECK(validate(lin) == rope_error::ok);
    CHECK(posenc::inv_freq_dd(lin, 0).hi == flt_min);
    lin.scaling.factor = 0x1.0000000000001p126;
    CHECK(validate(lin) == rope_error::inv_freq_float32);
    lin.scaling.factor = 1e300;  // beyond the 2^512 bound of the evaluation
    CHECK(validate(lin) == rope_error::inv_freq_float32);

    // Dynamic NTK: base 10^30, R 8, factor 2, max 4096. theta_3 = 10^-22.5 at seq_len 0, and
    // divided by 2 (2^64 - 1) / 4096 - 1 ~ 9.0e15 at the largest seq_len: ~3.5e-39 < FLT_MIN.
    rope_config dyn{8, 8, 1e30, rope_layout::half, scaling::dynamic(2.0, 4096)};
    CHECK(validate(dyn) == rope_error::inv_freq_float32);
    dyn.base = 1e25;  // 10^-18.75 / 9.0e15 ~ 2.0e-35
    CHECK(validate(dyn) == rope_error::ok);

    // No scaling: theta_3 = base^(-3/4) for R 8; base 10^50 gives 10^-37.5 (> FLT_MIN), 10^51
    // gives 10^-38.25 (< 1.18e-38).
    rope_config plain{8, 8, 1e50, rope_layout::half};
    CHECK(validate(plain) == rope_error::ok);
    plain.base = 1e51;
    CHECK(validate(plain) == rope_error::inv_freq_float32);
  }
}

TEST_CASE("validation: the bounds that skip the per-pair inv_freq check never pass a broken config",
          "[validation]") {
  namespace sd = posenc::spec_detail;
  using posenc::scaling_type;
  // Configurations near float32's limits, where the bounds and the per-pair check disagree often:
  // base 2^(1/8) .. 2^160, factors 2^0 .. 2^140.
  const auto power_of_two = [](double lo, double hi) {
    return rc::gen::map(rc::gen::inRange(0, 1 << 20), [lo, hi](int k) {
      return std::exp2(lo + (hi - lo) * static_cast<double>(k) / double(1 << 20));
    });
  };
  int cleared = 0, refused = 0;
  rc::prop("bounds cleared => every pair a normal float32", [&] {
    const auto type = *rc::gen::element(scaling_type::none, scaling_type::linear, scaling_type::ntk,
                                        scaling_type::dynamic, scaling_type::yarn,
                                        scaling_type::llama3, scaling_type::longrope);
    const std::uint32_t rotary_dim = *rc::gen::element(4u, 8u, 64u, 128u);
    const double base = *power_of_two(0.125, 160.0);
    const double factor = *power_of_two(0.0, 140.0);
    // longrope: factors spread over up to 2^8 from a scale near one of float32's limits: base *
    // scale in 2^110 .. 2^140 (the smallest inv_freq near FLT_MIN) or scale in 2^-140 .. 2^-110
    // (the largest near FLT_MAX).
    const double scale = *rc::gen::arbitrary<bool>() ? *power_of_two(110.0, 140.0) / base
                                                     : *power_of_two(-140.0, -110.0);
    const double spread = *rc::gen::element(0.0, 1.0, 8.0);
    std::vector<double> short_factor, long_factor;
    for (std::uint32_t i = 0; i < rotary_dim / 2; ++i) {
      short_factor.push_back(scale * *power_of_two(0.0, spread));
      long_factor.push_back(scale * *power_of_two(0.0, spread));
    }
    rope_config c{rotary_dim, rotary_dim, base, rope_layout::half};
    switch (type) {
      case scaling_type::none:
        break;
      case scaling_type::linear:
        c.scaling = posenc::scaling::linear(factor);
        break;
      case scaling_type::ntk:
        c.scaling = posenc::scaling::ntk(factor);
        break;
      case scaling_type::dynamic:
        c.scaling = posenc::scaling::dynamic(factor, *rc::gen::inRange(1u, 1u << 20));
        break;
      case scaling_type::yarn:
        c.scaling = posenc::scaling::yarn(factor, 4096, 32.0, 1.0);
        break;
      case scaling_type::llama3:
        c.scaling = posenc::scaling::llama3(factor, 1.0, 4.0, 8192);
        break;
      case scaling_type::longrope:
        c.scaling = posenc::scaling::longrope(short_factor, long_factor, 4096, 131072);
        break;
    }
    RC_PRE(sd::input_rules_hold(c) && sd::yarn_range_ok(c));
    const bool factors_bounded = c.scaling.factor <= sd::derived_bound;
    RC_PRE(factors_bounded);
    const bool each = sd::inv_freqs_each_ok(c);
    if (sd::inv_freqs_clear_of_float32_limits(c)) {
      ++cleared;
      RC_ASSERT(each);
    } else {
      ++refused;
    }
    RC_ASSERT(sd::inv_freqs_ok(c) == each);
  });
  // Both outcomes of the bounds occurred.
  CHECK(cleared > 0);
  CHECK(refused > 0);
}

TEST_CASE("validation: model-like configurations are settled by the bounds alone", "[validation]") {
  namespace sd = posenc::spec_detail;
  rc::prop("random_rope configurations clear the bounds", [] {
    const RandomRope r = *random_rope();
    RC_ASSERT(sd::inv_freqs_clear_of_float32_limits(r.config));
  });
}

TEST_CASE("validation: the inv_freq bounds on a grid near float32's limits", "[validation]") {
  namespace sd = posenc::spec_detail;
  // Every scaling, rotary_dim 4 and 8, bases and factors in steps of 2^3 or 2^4 across float32's
  // range, longrope with one pair's factor 2^-8 .. 2^8 off the others (the first or the last
  // pair, short or long): where the bounds clear a config, the per-pair check must pass it.
  int cleared = 0, refused = 0;
  const auto check = [&](const rope_config& c) {
    if (!sd::input_rules_hold(c) || !sd::yarn_range_ok(c)) return;
    const bool each = sd::inv_freqs_each_ok(c);
    if (sd::inv_freqs_clear_of_float32_limits(c)) {
      ++cleared;
      INFO("base " << c.base << " rotary_dim " << c.rotary_dim << " factor " << c.scaling.factor);
      CHECK(each);
    } else {
      ++refused;
    }
  };
  for (std::uint32_t rotary_dim : {4u, 8u})
    for (int b = 0; b <= 160; b += 4) {
      const double base = std::exp2(b == 0 ? 0.5 : b);
      check(rope_config{rotary_dim, rotary_dim, base, rope_layout::half});
      for (int f = 0; f <= 140; f += 4) {
        const double factor = std::exp2(f);
        for (const posenc::rope_scaling& s :
             {posenc::scaling::linear(factor), posenc::scaling::ntk(factor),
              posenc::scaling::dynamic(factor, 4096), posenc::scaling::dynamic(factor, 1),
              posenc::scaling::yarn(factor, 4096, 32.0, 1.0),
              posenc::scaling::llama3(factor, 1.0, 4.0, 8192)})
          check(rope_config{rotary_dim, rotary_dim, base, rope_layout::half, s});
      }
      for (int e = -140; e <= 140; e += 3)
        for (int k = -8; k <= 8; k += 4)
          for (std::uint32_t j : {0u, rotary_dim / 2 - 1})
            for (bool odd_one_long : {false, true}) {
              std::vector<double> same(rotary_dim / 2, std::exp2(e)), odd = same;
              odd[j] = std::exp2(e + k);
              check(rope_config{rotary_dim, rotary_dim, base, rope_layout::half,
                                odd_one_long ? posenc::scaling::longrope(same, odd, 4096, 8192)
                                             : posenc::scaling::longrope(odd, same, 4096, 8192)});
            }
    }
  CHECK(cleared > 1000);
  CHECK(refused > 1000);
}
