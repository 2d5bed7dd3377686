// posenc/frequencies/rope.hpp against HF transformers' own inv_freq (float32) and
// attention_factor for the cases of tests/golden/hf_rope_params.json: within 6 ulp (YaRN:
// max(6, factor/2) ulp) and 1e-12 relative (tests/golden/README.md derives the bounds). The
// directory comes from POSENC_GOLDEN_DIR; a missing or unreadable file fails the test. Tag
// [golden] (the test frequencies/golden).
#include <posenc/frequencies/rope.hpp>
#include <posenc/spec/rope.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#if POSENC_TEST_HAVE_JSON
#include <nlohmann/json.hpp>

#include "golden/golden.hpp"
#endif

#include "support/mpfr_ref.hpp"

using posenc::rope_config;
using posenc::rope_error;
using posenc::rope_layout;
using posenc::scaling_type;
using namespace posenc_test;

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
