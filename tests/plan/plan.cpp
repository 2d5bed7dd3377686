// The per-layer plan (posenc/spec/layer_plan.hpp) and the model presets (presets::models,
// posenc/spec/select.hpp):
//   plan/golden    HF Gemma-3 (tests/golden/hf_gemma3_rope.json): the layer types of its 34
//                  layers exactly; each layer kind's table: HF's inv_freq within 6 ulp of the exact
//                  value, ours correctly rounded, and cos/sin within HF's float32 angle error plus
//                  torch's ulp and our half ulp of HF's at positions up to 131071
//   plan/values    every model preset against its published config.json, field by field, and its
//                  layer lists written out by hand
//   plan/tables    every distinct table's inv_freq against MPFR; Llama-4 Scout's empty llama3
//                  band (pairs 0-34 unchanged, 35-63 divided by 16)
//   plan/rules     each rule of all_model_rules at run time; find_layer past the model
//   plan/lookup    find_model_preset and select_model_preset by name
//   plan/compile   layer_v == layer_at at run time, every layer of Gemma-3-4B and Llama-4 Scout
#include <posenc/frequencies/rope.hpp>
#include <posenc/math/angle.hpp>
#include <posenc/spec/layer_plan.hpp>
#include <posenc/spec/presets.hpp>
#include <posenc/spec/select.hpp>

#include <catch2/catch.hpp>

#include <boost/hana/for_each.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "golden/golden.hpp"
#include "support/ct_args.hpp"
#include "support/exact_rope.hpp"
#include "support/mpfr_ref.hpp"

namespace hana = boost::hana;
namespace presets = posenc::presets;
using posenc::attention_type;
using posenc::layer_encoding;
using posenc::layer_spec;
using posenc::model_config;
using posenc::model_error;
using posenc::rope_config;
using posenc::rope_layout;
using posenc::scaling_type;
using posenc_test::Mpfr;
using posenc_test::rt;

namespace {

std::vector<float> floats(const nlohmann::json& field) {
  std::vector<float> v;
  for (const auto& h : field.at("hex"))
    v.push_back(std::bit_cast<float>(
        static_cast<std::uint32_t>(std::stoul(h.get<std::string>(), nullptr, 16))));
  return v;
}

// The spacing of floats just below |x| (the ulp that a rounding of a value of magnitude <= |x|
// can be off by); the smallest subnormal at 0.
double ulp_below(float x) {
  const float a = std::fabs(x);
  if (a == 0.0f) return std::numeric_limits<float>::denorm_min();
  return static_cast<double>(a) - static_cast<double>(std::nextafter(a, 0.0f));
}

std::string rt_string(std::string_view s) {
  std::string out;
  for (char ch : s) out.push_back(rt(ch));
  return out;
}

model_config run_time(const model_config& m) {
  model_config r = m;
  r.num_hidden_layers = rt(m.num_hidden_layers);
  return r;
}

}  // namespace

// ---- golden: HF Gemma-3 ----------------------------------------------------------------------

TEST_CASE("plan/golden: HF Gemma-3 layer types, both tables", "[golden]") {
  const auto j = posenc_test::golden::load("hf_gemma3_rope.json");
  const auto& kw = j.at("config").at("kwargs_passed");
  model_config m;
  m.num_hidden_layers = kw.at("num_hidden_layers").get<std::uint32_t>();
  const auto head_dim = kw.at("head_dim").get<std::uint32_t>();
  REQUIRE(kw.at("rope_scaling").at("rope_type").get<std::string>() == "linear");
  m.rope = {head_dim, head_dim, kw.at("rope_theta").get<double>(), rope_layout::half,
            posenc::scaling::linear(kw.at("rope_scaling").at("factor").get<double>())};
  m.sliding_window = kw.at("sliding_window").get<std::uint32_t>();
  m.sliding_window_pattern = kw.at("sliding_window_pattern").get<std::uint32_t>();
  m.rope_local_base_freq = kw.at("rope_local_base_freq").get<double>();
  REQUIRE(posenc::validate(m) == model_error::ok);

  // The layer types, exactly, and the full-attention indices.
  const auto types = j.at("layer_types_34").at("layer_types").get<std::vector<std::string>>();
  REQUIRE(types.size() == m.num_hidden_layers);
  std::vector<std::uint32_t> full;
  for (std::uint32_t i = 0; i < m.num_hidden_layers; ++i) {
    INFO("layer " << i);
    CHECK(posenc::attention_type_name(posenc::layer_attention(m, i)) == types[i]);
    CHECK(posenc::layer_at(m, i).encoding == layer_encoding::rope);
    if (posenc::layer_attention(m, i) == attention_type::full_attention) full.push_back(i);
  }
  CHECK(
      full ==
      j.at("layer_types_34").at("full_attention_layer_indices").get<std::vector<std::uint32_t>>());

  const posenc::layer_tables tables = posenc::distinct_tables(m);
  REQUIRE(tables.count == 2);
  const auto positions = j.at("parameters").at("positions").get<std::vector<std::uint64_t>>();
  const std::uint32_t pairs = head_dim / 2;
  // HF's parameters per layer type, and the golden block of each.
  const auto& hf_params = j.at("config").at("resulting_rope_parameters");
  struct kind {
    const char* block;
    const char* layer_type;
    std::uint32_t layer;  // a layer of this type
  };
  for (const kind& k : {kind{"local_sliding_attention", "sliding_attention", 0},
                        kind{"global_full_attention", "full_attention", 5}}) {
    INFO(k.block);
    const layer_spec s = posenc::layer_at(m, k.layer);
    REQUIRE(s.table < tables.count);
    const rope_config& c = tables.rope[s.table];
    CHECK(c.base == hf_params.at(k.layer_type).at("rope_theta").get<double>());
    const std::string hf_type = hf_params.at(k.layer_type).at("rope_type").get<std::string>();
    CHECK(c.scaling.type == (hf_type == "linear" ? scaling_type::linear : scaling_type::none));
    if (hf_type == "linear")
      CHECK(c.scaling.factor == hf_params.at(k.layer_type).at("factor").get<double>());
    const auto& block = j.at(k.block);
    CHECK(block.at("attention_scaling").get<double>() == posenc::attention_factor(c));

    // inv_freq: HF within 6 ulp of the exact value (README: float32 pow and division), ours
    // correctly rounded (or within reach of a rounding midpoint).
    const auto hf_inv = floats(block.at("inv_freq"));
    REQUIRE(hf_inv.size() == pairs);
    std::vector<Mpfr> theta(pairs);
    double worst_hf_inv = 0.0;
    for (std::uint32_t i = 0; i < pairs; ++i) {
      bool near = false;
      posenc_test::exact_rope_inv_freq(theta[i], c, i, 0, near);
      const double e = posenc_test::ulp_error(hf_inv[i], theta[i]);
      CHECK(e <= 6.0);
      worst_hf_inv = std::max(worst_hf_inv, e);
      const float ours = posenc::inv_freq<float>(c, i);
      CHECK((near || posenc_test::correctly_rounded(ours, theta[i])));
    }
    WARN(k.block << ": HF inv_freq, largest error " << worst_hf_inv << " ulp");

    // cos/sin [1, positions, head_dim], half layout: channel i and i + pairs carry pair i. HF's
    // angle is fl32(inv_freq_hf * p); it is off the exact angle by delta, and torch's cos/sin add
    // at most an ulp; ours are the exact cos/sin rounded once (half an ulp).
    const auto hc = floats(block.at("cos")), hs = floats(block.at("sin"));
    REQUIRE(hc.size() == positions.size() * head_dim);
    double worst = 0.0;
    std::uint64_t worst_at = 0;
    Mpfr angle(posenc_test::kPrec + 64), pm;
    for (std::size_t t = 0; t < positions.size(); ++t) {
      const std::uint64_t p = positions[t];
      mpfr_set_uj(pm, p, MPFR_RNDN);
      for (std::uint32_t i = 0; i < pairs; ++i) {
        const std::size_t at = t * head_dim + i;
        REQUIRE(std::bit_cast<std::uint32_t>(hc[at]) ==
                std::bit_cast<std::uint32_t>(hc[at + pairs]));
        REQUIRE(std::bit_cast<std::uint32_t>(hs[at]) ==
                std::bit_cast<std::uint32_t>(hs[at + pairs]));
        mpfr_mul(angle, theta[i], pm, MPFR_RNDN);
        const auto hf_angle =
            static_cast<double>(hf_inv[i] * static_cast<float>(p));  // one float32 product
        const double delta = std::fabs(hf_angle - mpfr_get_d(angle, MPFR_RNDN));
        const auto ours = posenc::math::sincos_of_product<float>(p, posenc::inv_freq_dd(c, i));
        for (const auto& [got, hf] : {std::pair{ours.cos, hc[at]}, std::pair{ours.sin, hs[at]}}) {
          const double bound = delta + ulp_below(hf) + 0.5 * ulp_below(got);
          const double d = std::fabs(static_cast<double>(got) - static_cast<double>(hf));
          INFO("p " << p << ", pair " << i);
          CHECK(d <= bound);
          if (d / bound > worst) {
            worst = d / bound;
            worst_at = p;
          }
        }
      }
    }
    WARN(k.block << ": largest |ours - HF| / bound: " << worst << " (position " << worst_at << ")");
  }
}

// ---- the model presets against their published config.json ----------------------------------

namespace {

// The fields of each model's config.json (repository in `repo`; defaults of the HF config class
// where the checkpoint leaves a key unset, as the presets' comments say), and the layer lists they
// imply, written out.
struct published_model {
  std::string_view name;
  std::string_view repo;
  std::uint32_t num_hidden_layers;
  std::uint32_t hidden_size, num_attention_heads, head_dim;  // head_dim 0: hidden / heads
  double rope_theta;
  rope_layout layout;
  scaling_type scaling;
  double factor, low_freq_factor, high_freq_factor;
  std::uint32_t original_max_position_embeddings;
  double mscale, mscale_all_dim;
  std::uint32_t sliding_window, sliding_window_pattern;
  double rope_local_base_freq;
  std::uint32_t no_rope_layer_interval, attention_chunk_size;
  bool attn_temperature_tuning;
  double floor_scale, attn_scale;
  std::uint32_t max_position_embeddings;
  std::vector<std::uint32_t> full_attention_layers;  // Gemma-3: the global layers
  std::vector<std::uint32_t> nope_layers;            // Llama-4
  layer_encoding rope_layers;
};

constexpr auto half = rope_layout::half;
constexpr auto inter = rope_layout::interleaved;

std::vector<std::uint32_t> every(std::uint32_t n) {
  std::vector<std::uint32_t> v(n);
  for (std::uint32_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

// clang-format off
const std::vector<published_model>& published_models() {
  static const std::vector<published_model> v = {
    {"qwen2-vl-7b", "Qwen/Qwen2-VL-7B-Instruct", 28, 3584, 28, 0, 1000000.0, half,
     scaling_type::none, 1.0, 1.0, 4.0, 0, 0.0, 0.0, 0, 0, 0.0, 0, 0, false, 8192.0, 0.1, 32768,
     every(28), {}, layer_encoding::mrope},
    {"qwen2.5-vl-7b", "Qwen/Qwen2.5-VL-7B-Instruct", 28, 3584, 28, 0, 1000000.0, half,
     scaling_type::none, 1.0, 1.0, 4.0, 0, 0.0, 0.0, 0, 0, 0.0, 0, 0, false, 8192.0, 0.1, 128000,
     every(28), {}, layer_encoding::mrope},
    {"gemma-3-4b", "google/gemma-3-4b-it", 34, 2560, 8, 256, 1000000.0, half,
     scaling_type::linear, 8.0, 1.0, 4.0, 0, 0.0, 0.0, 1024, 6, 10000.0, 0, 0, false, 8192.0, 0.1,
     131072, {5, 11, 17, 23, 29}, {}, layer_encoding::rope},
    {"gemma-3-27b", "google/gemma-3-27b-it", 62, 5376, 32, 128, 1000000.0, half,
     scaling_type::linear, 8.0, 1.0, 4.0, 0, 0.0, 0.0, 1024, 6, 10000.0, 0, 0, false, 8192.0, 0.1,
     131072, {5, 11, 17, 23, 29, 35, 41, 47, 53, 59}, {}, layer_encoding::rope},
    {"llama-4-scout", "meta-llama/Llama-4-Scout-17B-16E", 48, 5120, 40, 128, 500000.0, inter,
     scaling_type::llama3, 16.0, 1.0, 1.0, 8192, 0.0, 0.0, 0, 0, 0.0, 4, 8192, true, 8192.0, 0.1,
     10485760, {3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47},
     {3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47}, layer_encoding::rope},
    {"pixtral-12b", "mistral-community/pixtral-12b (vision_config)", 24, 1024, 16, 0, 10000.0,
     half, scaling_type::none, 1.0, 1.0, 4.0, 0, 0.0, 0.0, 0, 0, 0.0, 0, 0, false, 8192.0, 0.1,
     1024 / 16, every(24), {}, layer_encoding::axial_rope},
    {"deepseek-v3", "deepseek-ai/DeepSeek-V3", 61, 7168, 128, 64, 10000.0, inter,
     scaling_type::yarn, 40.0, 1.0, 4.0, 4096, 1.0, 1.0, 0, 0, 0.0, 0, 0, false, 8192.0, 0.1,
     163840, every(61), {}, layer_encoding::rope},
  };
  return v;
}
// clang-format on

std::vector<std::string> model_names() {
  std::vector<std::string> out;
  hana::for_each(presets::models, [&](auto t) { out.emplace_back(decltype(t)::type::name); });
  return out;
}

}  // namespace

TEST_CASE("plan/values: each model preset is its model's published config.json", "[values]") {
  std::vector<std::string> table_names;
  for (const auto& p : published_models()) table_names.emplace_back(p.name);
  CHECK(table_names == model_names());

  for (const auto& p : published_models()) {
    INFO(p.name << " (" << p.repo << " config.json)");
    const model_config* found = posenc::find_model_preset(rt_string(p.name));
    REQUIRE(found != nullptr);
    const model_config m = run_time(*found);
    REQUIRE(posenc::validate(m) == model_error::ok);
    CHECK(m.num_hidden_layers == p.num_hidden_layers);
    const std::uint32_t d = p.head_dim != 0 ? p.head_dim : p.hidden_size / p.num_attention_heads;
    CHECK(m.rope.head_dim == d);
    CHECK(m.rope.rotary_dim == d);
    CHECK(m.rope.base == p.rope_theta);
    CHECK(m.rope.layout == p.layout);
    CHECK(m.rope.scaling.type == p.scaling);
    if (p.scaling != scaling_type::none) CHECK(m.rope.scaling.factor == p.factor);
    if (p.scaling == scaling_type::llama3) {
      CHECK(m.rope.scaling.low_freq_factor == p.low_freq_factor);
      CHECK(m.rope.scaling.high_freq_factor == p.high_freq_factor);
    }
    if (p.scaling == scaling_type::llama3 || p.scaling == scaling_type::yarn)
      CHECK(m.rope.scaling.original_max_position_embeddings == p.original_max_position_embeddings);
    if (p.scaling == scaling_type::yarn) {
      CHECK(m.rope.scaling.mscale == p.mscale);
      CHECK(m.rope.scaling.mscale_all_dim == p.mscale_all_dim);
      CHECK(m.rope.scaling.beta_fast == 32.0);
      CHECK(m.rope.scaling.beta_slow == 1.0);
    }
    CHECK(m.sliding_window == p.sliding_window);
    CHECK(m.sliding_window_pattern == p.sliding_window_pattern);
    CHECK(m.rope_local_base_freq == p.rope_local_base_freq);
    CHECK(m.no_rope_layer_interval == p.no_rope_layer_interval);
    CHECK(m.attention_chunk_size == p.attention_chunk_size);
    CHECK(m.attn_temperature_tuning == p.attn_temperature_tuning);
    if (p.attn_temperature_tuning) {
      CHECK(m.floor_scale == p.floor_scale);
      CHECK(m.attn_scale == p.attn_scale);
    }
    bool max_pos_ok = false;
    posenc::select_model_preset(p.name, [&](auto t) {
      max_pos_ok = decltype(t)::type::max_position_embeddings == p.max_position_embeddings;
    });
    CHECK(max_pos_ok);

    // The layers: full attention where listed (every layer for the uniform models), NoPE where
    // listed, the query temperature on NoPE layers only.
    std::vector<std::uint32_t> full, nope, tempered;
    for (std::uint32_t i = 0; i < m.num_hidden_layers; ++i) {
      const layer_spec s = posenc::layer_at(m, i);
      if (s.attention == attention_type::full_attention) full.push_back(i);
      if (s.encoding == layer_encoding::nope)
        nope.push_back(i);
      else
        CHECK(s.encoding == p.rope_layers);
      if (s.temperature_tuning) tempered.push_back(i);
    }
    CHECK(full == p.full_attention_layers);
    CHECK(nope == p.nope_layers);
    CHECK(tempered == (p.attn_temperature_tuning ? p.nope_layers : std::vector<std::uint32_t>{}));
  }
  // The multi-axis parts.
  for (const char* name : {"qwen2-vl-7b", "qwen2.5-vl-7b"}) {
    const model_config* m = posenc::find_model_preset(name);
    REQUIRE(m != nullptr);
    CHECK(m->mrope_section == std::array<std::uint32_t, 3>{16, 24, 24});
    CHECK(m->section_layout == posenc::mrope_layout::contiguous);
  }
  CHECK(posenc::find_model_preset("pixtral-12b")->frequencies ==
        posenc::axial_frequencies::alternating);
  // DeepSeek-V3 is also a 1-D preset, the same configuration.
  const rope_config* ds = posenc::find_preset("deepseek-v3");
  REQUIRE(ds != nullptr);
  CHECK(ds == &presets::deepseek_v3::config);
  CHECK(posenc::find_model_preset("deepseek-v3")->rope.scaling.factor == ds->scaling.factor);
}

// ---- the distinct tables against MPFR --------------------------------------------------------

TEST_CASE("plan/tables: every distinct table's inv_freq against MPFR", "[tables]") {
  for (const auto& name : model_names()) {
    INFO(name);
    const model_config m = run_time(*posenc::find_model_preset(name));
    const posenc::layer_tables t = posenc::distinct_tables(m);
    REQUIRE(t.count >= 1);
    for (std::uint32_t k = 0; k < t.count; ++k) {
      const rope_config& c = t.rope[k];
      REQUIRE(posenc::validate(c) == posenc::rope_error::ok);
      for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i) {
        Mpfr exact;
        bool near = false;
        posenc_test::exact_rope_inv_freq(exact, c, i, 0, near);
        INFO("table " << k << ", pair " << i);
        CHECK((near || posenc_test::correctly_rounded(posenc::inv_freq<float>(c, i), exact)));
        CHECK((near || posenc_test::correctly_rounded(posenc::inv_freq<double>(c, i), exact)));
      }
    }
  }
  // Llama-4 Scout: llama3 with low_freq_factor == high_freq_factor == 1, the band empty. The
  // wavelength 2 pi / theta_i exceeds 8192 from pair 35 on (theta_i = 500000^(-i/64): pair 34 has
  // 6.97 < ln(8192 / 2 pi) = 7.17 in the exponent, pair 35 has 7.18).
  const model_config& scout = presets::llama_4_scout::model;
  rope_config plain = scout.rope;
  plain.scaling = posenc::scaling::none();
  for (std::uint32_t i = 0; i < 64; ++i) {
    INFO("pair " << i);
    const double ratio =
        posenc::inv_freq<double>(plain, i) / posenc::inv_freq<double>(scout.rope, i);
    CHECK(ratio == (i < 35 ? 1.0 : 16.0));
  }
}

// ---- rules -----------------------------------------------------------------------------------

TEST_CASE("plan/rules: each rule at run time; a layer past the model", "[rules]") {
  const model_config gemma = presets::gemma_3_4b::model;
  const model_config scout = presets::llama_4_scout::model;
  static constexpr std::array<attention_type, 2> two_types{attention_type::sliding_attention,
                                                           attention_type::full_attention};
  static constexpr std::array<std::uint8_t, 3> three_flags{1, 1, 0};
  static constexpr std::array<std::uint8_t, 2> two_flags{1, 2};
  struct rule_case {
    model_error rule;
    model_config broken;
  };
  std::vector<rule_case> cases;
  auto with = [](model_config m, auto edit) {
    edit(m);
    return m;
  };
  cases.push_back(
      {model_error::num_hidden_layers, with(gemma, [](auto& m) { m.num_hidden_layers = 0; })});
  cases.push_back({model_error::rope, with(gemma, [](auto& m) { m.rope.rotary_dim = 7; })});
  cases.push_back({model_error::multi_axis, with(presets::qwen2_vl_7b::model, [](auto& m) {
                     m.mrope_section = {16, 24, 23};
                   })});
  cases.push_back({model_error::multi_axis, with(presets::pixtral_12b::model, [](auto& m) {
                     m.rope.head_dim = m.rope.rotary_dim = 62;
                   })});
  cases.push_back({model_error::rope_local_base_freq,
                   with(gemma, [](auto& m) { m.rope_local_base_freq = 1.0; })});
  cases.push_back({model_error::rope_local_base_freq, with(gemma, [](auto& m) {
                     m.rope_local_base_freq = std::numeric_limits<double>::infinity();
                   })});
  cases.push_back(
      {model_error::layer_types_length, with(gemma, [](auto& m) { m.layer_types = two_types; })});
  cases.push_back({model_error::no_rope_layers_length,
                   with(scout, [](auto& m) { m.no_rope_layers = three_flags; })});
  cases.push_back({model_error::no_rope_layers_value, with(scout, [](auto& m) {
                     m.num_hidden_layers = 2;
                     m.no_rope_layers = two_flags;
                   })});
  cases.push_back(
      {model_error::attention_window, with(gemma, [](auto& m) { m.sliding_window = 0; })});
  static constexpr std::array<attention_type, 2> chunked{attention_type::chunked_attention,
                                                         attention_type::full_attention};
  cases.push_back({model_error::attention_window, with(scout, [](auto& m) {
                     m.num_hidden_layers = 2;
                     m.layer_types = chunked;
                     m.attention_chunk_size = 0;
                   })});
  cases.push_back(
      {model_error::attention_temperature, with(scout, [](auto& m) { m.floor_scale = 0.0; })});
  cases.push_back(
      {model_error::attention_temperature, with(scout, [](auto& m) { m.attn_scale = -0.1; })});
  cases.push_back({model_error::attention_temperature, with(scout, [](auto& m) {
                     m.attn_scale = std::numeric_limits<double>::quiet_NaN();
                   })});
  std::vector<model_error> covered;
  for (const rule_case& c : cases) {
    INFO(posenc::message(c.rule));
    const model_config m = run_time(c.broken);
    CHECK(posenc::validate(m) == c.rule);
    CHECK_FALSE(posenc::satisfies(m, c.rule));
    layer_spec out{layer_encoding::mrope, attention_type::chunked_attention, 77, true};
    const layer_spec before = out;
    CHECK(posenc::find_layer(m, 0, out) == posenc::layer_lookup_error::model);
    CHECK(out == before);
    covered.push_back(c.rule);
  }
  for (model_error e : posenc::all_model_rules)
    CHECK(std::find(covered.begin(), covered.end(), e) != covered.end());
  // Their valid twins: the presets themselves; a disabled temperature ignores its parameters.
  CHECK(posenc::validate(with(scout, [](auto& m) {
          m.attn_temperature_tuning = false;
          m.floor_scale = 0.0;
        })) == model_error::ok);
  CHECK(posenc::validate(with(gemma, [](auto& m) { m.rope_local_base_freq = 0.0; })) ==
        model_error::ok);

  // A layer past the model: an error, nothing written.
  for (std::uint64_t i : {std::uint64_t{34}, std::uint64_t{35}, std::uint64_t{1} << 32,
                          std::numeric_limits<std::uint64_t>::max()}) {
    INFO("layer " << i);
    layer_spec out{layer_encoding::mrope, attention_type::chunked_attention, 77, true};
    const layer_spec before = out;
    CHECK(posenc::find_layer(run_time(gemma), rt(i), out) ==
          posenc::layer_lookup_error::layer_index);
    CHECK(out == before);
  }
  layer_spec out;
  REQUIRE(posenc::find_layer(run_time(gemma), rt(std::uint64_t{33}), out) ==
          posenc::layer_lookup_error::ok);
  CHECK(out == posenc::layer_at(gemma, 33));
  CHECK(std::string(posenc::message(posenc::layer_lookup_error::layer_index)) ==
        "posenc: layer index past the model's num_hidden_layers");
}

TEST_CASE("plan/rules: explicit lists override the derived pattern", "[rules]") {
  // HF v5 layer_types: the list wins over sliding_window_pattern; no_rope_layers over the interval.
  static constexpr std::array<attention_type, 3> types{attention_type::full_attention,
                                                       attention_type::sliding_attention,
                                                       attention_type::full_attention};
  model_config m = presets::gemma_3_4b::model;
  m.num_hidden_layers = rt(3u);
  m.layer_types = types;
  REQUIRE(posenc::validate(m) == model_error::ok);
  CHECK(posenc::layer_at(m, 0).attention == attention_type::full_attention);
  CHECK(posenc::layer_at(m, 0).table == 0);  // the global table comes first here
  CHECK(posenc::layer_at(m, 1).attention == attention_type::sliding_attention);
  CHECK(posenc::layer_at(m, 1).table == 1);
  CHECK(posenc::distinct_tables(m).rope[0].base == 1000000.0);
  CHECK(posenc::distinct_tables(m).rope[1].base == 10000.0);

  static constexpr std::array<std::uint8_t, 4> flags{0, 1, 1, 0};
  model_config s = presets::llama_4_scout::model;
  s.num_hidden_layers = rt(4u);
  s.no_rope_layers = flags;
  REQUIRE(posenc::validate(s) == model_error::ok);
  CHECK(posenc::layer_at(s, 0).encoding == layer_encoding::nope);
  CHECK(posenc::layer_at(s, 1).encoding == layer_encoding::rope);
  CHECK(posenc::layer_at(s, 2).encoding == layer_encoding::rope);
  CHECK(posenc::layer_at(s, 3).encoding == layer_encoding::nope);  // interval 4 agrees here
  CHECK(posenc::layer_at(s, 0).temperature_tuning);
  CHECK_FALSE(posenc::layer_at(s, 1).temperature_tuning);

  // A local base equal to the global configuration is one table.
  model_config same = presets::gemma_3_4b::model;
  same.rope.scaling = posenc::scaling::none();
  same.rope_local_base_freq = same.rope.base;
  CHECK(posenc::distinct_tables(run_time(same)).count == 1);
}

// ---- lookups ---------------------------------------------------------------------------------

TEST_CASE("plan/lookup: model presets by name", "[lookup]") {
  hana::for_each(presets::models, [](auto t) {
    using P = typename decltype(t)::type;
    const std::string name(P::name);
    INFO(name);
    CHECK(posenc::find_model_preset(name) == &P::model);
    int calls = 0;
    bool right = false;
    CHECK(posenc::select_model_preset(name, [&](auto u) {
      ++calls;
      right = std::is_same_v<typename decltype(u)::type, P>;
    }));
    CHECK(calls == 1);
    CHECK(right);
  });
  for (const char* s : {"", "gemma-3", "gemma-3-4b ", "GEMMA-3-4B", "llama-4", "qwen2-vl",
                        "llama-3.1-8b", "pixtral"}) {
    INFO("'" << s << "'");
    CHECK(posenc::find_model_preset(rt_string(s)) == nullptr);
  }
  CHECK(posenc::model_preset_names_joined() ==
        "qwen2-vl-7b, qwen2.5-vl-7b, gemma-3-4b, gemma-3-27b, llama-4-scout, pixtral-12b, "
        "deepseek-v3");
}

// ---- compile time == run time ----------------------------------------------------------------

namespace {
template <class M, std::uint32_t... I>
void compile_time_layers(std::integer_sequence<std::uint32_t, I...>) {
  const model_config m = run_time(M::model);
  const std::array<layer_spec, sizeof...(I)> ct{posenc::layer_v<M, I>...};
  for (std::uint32_t i = 0; i < sizeof...(I); ++i) {
    INFO(M::name << " layer " << i);
    CHECK(ct[i] == posenc::layer_at(m, i));
  }
  CHECK(posenc::layer_tables_v<M>.count == posenc::distinct_tables(m).count);
}
}  // namespace

TEST_CASE("plan/compile: layer_v == layer_at at run time", "[compile]") {
  compile_time_layers<presets::gemma_3_4b>(std::make_integer_sequence<std::uint32_t, 34>{});
  compile_time_layers<presets::llama_4_scout>(std::make_integer_sequence<std::uint32_t, 48>{});
}
