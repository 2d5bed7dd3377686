// posenc/spec/rope.hpp: every rule of all_rope_rules has a config that breaks it and a valid
// twin (tests/compile_fail/broken_specs.hpp, the same configs the compile-fail tests use); the
// messages; random configurations (support/random_rope.hpp) are valid and non-finite values are
// rejected. Tag [validation].
#include <posenc/spec/rope.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

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
