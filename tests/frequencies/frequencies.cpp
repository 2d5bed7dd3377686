// posenc/frequencies/rope.hpp and posenc/spec/validate.hpp:
//   [golden]      HF transformers' own inv_freq (float32) and attention_factor for the cases of
//                 tests/golden/hf_rope_params.json: within 6 ulp (YaRN: max(6, factor/2) ulp)
//                 and 1e-12 relative (tests/golden/README.md derives the bounds). The directory
//                 comes from POSENC_GOLDEN_DIR; a missing or unreadable file fails the test.
//   [exact]       inv_freq<float> is the correctly rounded float of the exact value of each
//                 scaling's formula (MPFR, 256 bits, the discrete branches of YaRN's truncation and
//                 llama3's bands decided in MPFR too), inv_freq<double> within 0.5 ulp (plus the
//                 double-double residue; llama3 and yarn: see check_against_mpfr), attention_factor
//                 within 1 ulp.
//   [validation]  every rule of all_rope_rules has a config that breaks it and a valid twin
//                 (tests/compile_fail/broken_specs.hpp, the same configs the compile-fail tests
//                 use); the messages.
//   [scaling]     properties of the scalings on random configurations: factor 1 is the default,
//                 NTK moves the lowest frequency by exactly 1/factor, YaRN keeps the pairs below
//                 its correction range and divides those above it, llama3 is continuous at its
//                 band edges, dynamic is the default up to max_position_embeddings.
#include <posenc/frequencies/rope.hpp>
#include <posenc/spec/validate.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#if POSENC_TEST_HAVE_JSON
#include <nlohmann/json.hpp>

#include "golden/golden.hpp"
#endif

#include "compile_fail/broken_specs.hpp"
#include "laws/random_rope.hpp"
#include "support/check.hpp"
#include "support/gen.hpp"
#include "support/mpfr_ref.hpp"

namespace pm = posenc::math;
using posenc::rope_config;
using posenc::rope_error;
using posenc::rope_layout;
using posenc::scaling_type;
using namespace posenc_test;

// ---- [golden] HF transformers -----------------------------------------------------------------
#if POSENC_TEST_HAVE_JSON
namespace {

// |a - b| in float ulps (both finite and of the same sign; the distance between bit patterns).
std::uint32_t float_ulps(float a, float b) {
  const auto x = std::bit_cast<std::uint32_t>(a);
  const auto y = std::bit_cast<std::uint32_t>(b);
  return x > y ? x - y : y - x;
}

using json = nlohmann::json;

// HF's `rope.get(key) or default`: absent, null and 0 all give the default.
double get_or(const json& obj, const char* key, double fallback) {
  if (!obj.contains(key) || obj[key].is_null()) return fallback;
  const double v = obj[key].get<double>();
  return v == 0.0 ? fallback : v;
}

struct GoldenConfig {
  rope_config config;
  std::uint64_t seq_len = 0;
  std::vector<double> short_factor;
  std::vector<double> long_factor;
};

// The rope_config HF's function was called with (config_attributes of one case).
GoldenConfig golden_config(const json& cs) {
  GoldenConfig g;
  const json& attrs = cs.at("config_attributes");
  const auto head_dim = attrs.at("head_dim").get<std::uint32_t>();
  const double prf =
      attrs.contains("partial_rotary_factor") ? attrs["partial_rotary_factor"].get<double>() : 1.0;
  rope_config& c = g.config;
  c.head_dim = head_dim;
  c.rotary_dim = posenc::rotary_dim_from_factor(head_dim, prf);
  c.base = attrs.at("rope_theta").get<double>();
  c.layout = rope_layout::half;
  if (cs.contains("seq_len") && !cs["seq_len"].is_null())
    g.seq_len = cs["seq_len"].get<std::uint64_t>();
  const std::string type = cs.at("rope_type").get<std::string>();
  const json rs = attrs.contains("rope_scaling") ? attrs["rope_scaling"] : json::object();
  const auto max_pos = attrs.value("max_position_embeddings", std::uint32_t{0});
  const double factor = get_or(rs, "factor", 1.0);
  const auto orig = static_cast<std::uint32_t>(
      get_or(rs, "original_max_position_embeddings", static_cast<double>(max_pos)));
  if (type == "default") {
    c.scaling = posenc::scaling::none();
  } else if (type == "linear") {
    c.scaling = posenc::scaling::linear(factor);
  } else if (type == "dynamic") {
    c.scaling = posenc::scaling::dynamic(factor, max_pos);
  } else if (type == "yarn") {
    c.scaling = posenc::scaling::yarn(factor, orig, get_or(rs, "beta_fast", 32.0),
                                      get_or(rs, "beta_slow", 1.0), rs.value("truncate", true),
                                      get_or(rs, "mscale", 0.0), get_or(rs, "mscale_all_dim", 0.0),
                                      get_or(rs, "attention_factor", 0.0));
  } else if (type == "llama3") {
    c.scaling = posenc::scaling::llama3(factor, get_or(rs, "low_freq_factor", 1.0),
                                        get_or(rs, "high_freq_factor", 4.0), orig);
  } else if (type == "longrope") {
    g.short_factor = rs.at("short_factor").get<std::vector<double>>();
    g.long_factor = rs.at("long_factor").get<std::vector<double>>();
    c.scaling = posenc::scaling::longrope(g.short_factor, g.long_factor, orig, max_pos,
                                          get_or(rs, "attention_factor", 0.0));
  } else {
    FAIL("unknown rope_type " << type);
  }
  return g;
}

}  // namespace
#endif

TEST_CASE("golden: HF transformers inv_freq (float32) and attention_factor", "[golden]") {
#if !POSENC_TEST_HAVE_JSON
  // meson registers frequencies/golden only when nlohmann_json is found.
  FAIL("built without nlohmann_json: the golden data cannot be read");
#else
  const json doc = posenc_test::golden::load("hf_rope_params.json");
  const json& cases = doc.at("cases");
  REQUIRE(!cases.empty());
  for (const json& cs : cases) {
    const std::string id = cs.at("id").get<std::string>();
    INFO("case " << id);
    const GoldenConfig g = golden_config(cs);
    const rope_config& c = g.config;
    REQUIRE(posenc::validate(c) == rope_error::ok);
    REQUIRE(c.rotary_dim == cs.at("dim").get<std::uint32_t>());
    const json& hex_bits = cs.at("inv_freq").at("hex");
    REQUIRE(hex_bits.size() == c.rotary_dim / 2);
    const double bound =
        c.scaling.type == scaling_type::yarn ? std::max(6.0, c.scaling.factor / 2) : 6.0;
    std::uint32_t worst = 0;
    std::uint32_t worst_i = 0;
    for (std::uint32_t i = 0; i < hex_bits.size(); ++i) {
      const auto bits =
          static_cast<std::uint32_t>(std::stoul(hex_bits[i].get<std::string>(), nullptr, 16));
      const float hf = std::bit_cast<float>(bits);
      const float ours = posenc::inv_freq<float>(c, i, g.seq_len);
      const std::uint32_t d = float_ulps(ours, hf);
      if (d > worst) {
        worst = d;
        worst_i = i;
      }
      INFO("pair " << i << ": ours " << hex(ours) << ", HF " << hex(hf));
      CHECK(static_cast<double>(d) <= bound);
    }
    const double hf_af = cs.at("attention_factor").at("value").get<double>();
    const double af = posenc::attention_factor(c);
    const double rel = std::fabs(af - hf_af) / std::fabs(hf_af);
    CHECK(rel <= 1e-12);
    std::cout << "[golden] " << id << ": inv_freq max " << worst << " ulp from HF (pair " << worst_i
              << ", bound " << bound << "), attention_factor " << af << " relative difference "
              << rel << "\n"
              << std::flush;
  }
#endif
}

// ---- [exact] against MPFR ---------------------------------------------------------------------
namespace {

constexpr mpfr_prec_t kWork = kPrec + 64;

void set_two_pi(Mpfr& out) {
  mpfr_const_pi(out, MPFR_RNDN);
  mpfr_mul_2ui(out, out, 1, MPFR_RNDN);
}

// HF find_correction_dim: R ln(L / (beta 2 pi)) / (2 ln base).
void correction_dim(Mpfr& out, double beta, const rope_config& c) {
  Mpfr t(kWork), lb(kWork);
  set_two_pi(t);
  mpfr_mul_d(t, t, beta, MPFR_RNDN);
  mpfr_ui_div(t, c.scaling.original_max_position_embeddings, t, MPFR_RNDN);
  mpfr_log(t, t, MPFR_RNDN);
  mpfr_mul_ui(t, t, c.rotary_dim, MPFR_RNDN);
  mpfr_set_d(lb, c.base, MPFR_RNDN);
  mpfr_log(lb, lb, MPFR_RNDN);
  mpfr_mul_2ui(lb, lb, 1, MPFR_RNDN);
  mpfr_div(out, t, lb, MPFR_RNDN);
}

// Within 2^-70 of an integer: floor/ceil of the double-double value (~2^-88 absolute here) might
// fall on the other side.
bool near_integer(mpfr_srcptr x) {
  Mpfr r(kWork), d(kWork);
  mpfr_round(r, x);
  mpfr_sub(d, x, r, MPFR_RNDN);
  mpfr_abs(d, d, MPFR_RNDN);
  return mpfr_cmp_d(d, 0x1p-70) < 0;
}

// HF find_correction_range + linear_ramp_factor at pair i, decided in MPFR. Sets near_discrete
// when a truncation is too close to an integer to call.
void yarn_ramp(Mpfr& ramp, const rope_config& c, std::uint32_t i, bool& near_discrete) {
  const posenc::rope_scaling& s = c.scaling;
  Mpfr low(kWork), high(kWork), t(kWork);
  correction_dim(low, s.beta_fast, c);
  correction_dim(high, s.beta_slow, c);
  if (s.truncate) {
    near_discrete = near_discrete || near_integer(low) || near_integer(high);
    mpfr_floor(low, low);
    mpfr_ceil(high, high);
  }
  if (mpfr_sgn(low.get()) < 0) mpfr_set_zero(low, 1);
  if (mpfr_cmp_ui(high, c.rotary_dim - 1) > 0) mpfr_set_ui(high, c.rotary_dim - 1, MPFR_RNDN);
  if (mpfr_equal_p(low, high)) mpfr_add_d(high, high, 0.001, MPFR_RNDN);
  mpfr_ui_sub(t, i, low, MPFR_RNDN);
  mpfr_sub(ramp, high, low, MPFR_RNDN);
  mpfr_div(ramp, t, ramp, MPFR_RNDN);
  if (mpfr_sgn(ramp.get()) < 0) mpfr_set_zero(ramp, 1);
  if (mpfr_cmp_ui(ramp, 1) > 0) mpfr_set_ui(ramp, 1, MPFR_RNDN);
}

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
      yarn_ramp(u, c, i, near_discrete);
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

// ---- [validation] -------------------------------------------------------------------------------
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

// ---- [scaling] properties on random configurations -------------------------------------------
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
      Mpfr ramp(kWork);
      yarn_ramp(ramp, c, i, near_discrete);
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
    RC_PRE(std::isfinite(b_edge) && b_edge > 1.5 && b_edge < 1e300);
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
