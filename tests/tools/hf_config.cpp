// tools/cli/hf_config and tools/cli/draft: HF config.json files (tests/tools/data) give the
// configuration HF transformers would use; flags laid over them override field by field; broken
// files give one line naming the file and the field.
#include <catch2/catch.hpp>

#include <posenc/frequencies/rope.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "cli/draft.hpp"
#include "cli/error.hpp"
#include "cli/hf_config.hpp"
#include "support.hpp"

using namespace posenc::cli;
using posenc::rope_config;
using posenc::rope_layout;
using posenc::scaling_type;
using posenc_test::tools_data;

namespace {
resolved_config load(const char* name) {
  return resolve(load_hf_config(tools_data(name)));
}

// The message of the error (exit 1) that reading `text` as a config.json throws.
std::string parse_error(const std::string& text) {
  return posenc_test::cli_error_message(exit_invalid,
                                        [&] { resolve(parse_hf_config(text, "c.json")); });
}
}  // namespace

TEST_CASE("Llama-3.1 style: llama3 scaling from rope_scaling", "[hf_config]") {
  const resolved_config r = load("llama3.json");
  const rope_config c = r.config();
  CHECK(c.head_dim == 128u);  // 4096 / 32
  CHECK(c.rotary_dim == 128u);
  CHECK(c.base == 500000.0);
  CHECK(c.layout == rope_layout::half);
  CHECK(c.scaling.type == scaling_type::llama3);
  CHECK(c.scaling.factor == 8.0);
  CHECK(c.scaling.low_freq_factor == 1.0);
  CHECK(c.scaling.high_freq_factor == 4.0);
  CHECK(c.scaling.original_max_position_embeddings == 8192u);
  // pair 0 (short wavelength) unchanged, pair 63 divided by the factor
  CHECK(posenc::inv_freq<double>(c, 0) == 1.0);
  const rope_config plain{128, 128, 500000.0, rope_layout::half, posenc::scaling::none()};
  CHECK(posenc::inv_freq<double>(c, 63) == posenc::inv_freq<double>(plain, 63) / 8.0);
}

TEST_CASE("Phi-3 style: longrope with a top-level original_max_position_embeddings",
          "[hf_config]") {
  const resolved_config r = load("phi3_longrope.json");
  const rope_config c = r.config();
  CHECK(c.head_dim == 96u);  // 3072 / 32
  CHECK(c.rotary_dim == 96u);
  CHECK(c.base == 10000.0);
  CHECK(c.scaling.type == scaling_type::longrope);
  CHECK(c.scaling.original_max_position_embeddings == 4096u);
  CHECK(c.scaling.max_position_embeddings == 131072u);
  CHECK(c.scaling.factor == 32.0);  // HF v4: max / original when the top level has original
  REQUIRE(c.scaling.short_factor.size() == 48u);
  REQUIRE(c.scaling.long_factor.size() == 48u);
  CHECK(c.scaling.short_factor[1] == 1.002);
  CHECK(c.scaling.long_factor[47] == 40.0);
  // sqrt(1 + ln 32 / ln 4096)
  CHECK(posenc::attention_factor(c) == Approx(std::sqrt(1.0 + std::log(32.0) / std::log(4096.0))));
  // the view stays valid in a copy of the resolved config
  const resolved_config copy = r;
  CHECK(copy.config().scaling.long_factor[47] == 40.0);
  CHECK(copy.config().scaling.long_factor.data() != c.scaling.long_factor.data());
}

TEST_CASE("GPT-NeoX style: rotary_pct and rotary_emb_base", "[hf_config]") {
  const rope_config c = load("neox.json").config();
  CHECK(c.head_dim == 96u);    // 6144 / 64
  CHECK(c.rotary_dim == 24u);  // int(96 * 0.25)
  CHECK(c.base == 10000.0);
  CHECK(c.layout == rope_layout::half);
  CHECK(c.scaling.type == scaling_type::none);
}

TEST_CASE("GPT-J style: rotary_dim, n_embd / n_head, interleaved pairs", "[hf_config]") {
  const rope_config c = load("gptj.json").config();
  CHECK(c.head_dim == 256u);
  CHECK(c.rotary_dim == 64u);
  CHECK(c.base == 10000.0);
  CHECK(c.layout == rope_layout::interleaved);
}

TEST_CASE("DeepSeek-V2 style: the qk_rope_head_dim slice, interleaved, yarn with mscales",
          "[hf_config]") {
  const rope_config c = load("deepseek_v2.json").config();
  CHECK(c.head_dim == 64u);
  CHECK(c.rotary_dim == 64u);
  CHECK(c.layout == rope_layout::interleaved);
  CHECK(c.scaling.type == scaling_type::yarn);
  CHECK(c.scaling.factor == 40.0);
  CHECK(c.scaling.original_max_position_embeddings == 4096u);
  CHECK(c.scaling.mscale == 0.707);
  CHECK(c.scaling.mscale_all_dim == 0.707);
  CHECK(c.scaling.truncate);
  CHECK(posenc::attention_factor(c) == 1.0);
}

TEST_CASE("transformers v5 style: yarn in rope_parameters with rope_type", "[hf_config]") {
  const rope_config c = load("yarn_v5.json").config();
  CHECK(c.head_dim == 64u);  // head_dim wins over hidden_size / heads (45)
  CHECK(c.rotary_dim == 64u);
  CHECK(c.base == 150000.0);  // rope_parameters.rope_theta
  CHECK(c.scaling.type == scaling_type::yarn);
  CHECK(c.scaling.factor == 32.0);
  CHECK(c.scaling.original_max_position_embeddings == 4096u);
  CHECK(c.scaling.beta_fast == 32.0);
  CHECK(c.scaling.beta_slow == 1.0);
  CHECK_FALSE(c.scaling.truncate);
  CHECK(posenc::attention_factor(c) == Approx(0.1 * std::log(32.0) + 1.0));
}

TEST_CASE("flags laid over a config override field by field", "[hf_config]") {
  config_draft flags;
  flags.base = 1e6;
  flags.truncate = true;
  const rope_config c =
      resolve(overlay(load_hf_config(tools_data("yarn_v5.json")), flags)).config();
  CHECK(c.base == 1e6);
  CHECK(c.scaling.truncate);
  CHECK(c.scaling.factor == 32.0);
  CHECK(c.head_dim == 64u);

  // a rotary factor given as a flag is applied to the config's head_dim
  config_draft partial;
  partial.rotary = rotary_width::fraction(0.5);
  CHECK(resolve(overlay(load_hf_config(tools_data("llama3.json")), partial)).config().rotary_dim ==
        64u);
  // switching the scaling off
  config_draft none;
  none.scaling = scaling_type::none;
  CHECK(resolve(overlay(load_hf_config(tools_data("llama3.json")), none)).config().scaling.type ==
        scaling_type::none);
}

TEST_CASE("HF defaults and derivations", "[hf_config]") {
  auto cfg = [](const std::string& text) {
    return resolve(parse_hf_config(text, "c.json")).config();
  };
  // rope_theta absent: 10000; partial_rotary_factor (Phi-2: 0.4 of 80 = 32)
  rope_config c = cfg(R"({"hidden_size": 2560, "num_attention_heads": 32,
                          "partial_rotary_factor": 0.4})");
  CHECK(c.base == 10000.0);
  CHECK(c.head_dim == 80u);
  CHECK(c.rotary_dim == 32u);
  // head_dim null means absent; rope_scaling null means none; integral floats are integers
  c = cfg(R"({"head_dim": null, "hidden_size": 4096.0, "num_attention_heads": 32,
              "rope_scaling": null, "rope_theta": 1e6})");
  CHECK(c.head_dim == 128u);
  CHECK(c.scaling.type == scaling_type::none);
  CHECK(c.base == 1e6);
  // "default" rope_type, and "type" as the older key
  c = cfg(R"({"head_dim": 64, "rope_scaling": {"rope_type": "default"}})");
  CHECK(c.scaling.type == scaling_type::none);
  c = cfg(R"({"head_dim": 64, "rope_scaling": {"type": "linear", "factor": 4}})");
  CHECK(c.scaling.type == scaling_type::linear);
  CHECK(c.scaling.factor == 4.0);
  // dynamic takes config.max_position_embeddings
  c = cfg(R"({"head_dim": 64, "max_position_embeddings": 4096,
              "rope_scaling": {"type": "dynamic", "factor": 2.0}})");
  CHECK(c.scaling.type == scaling_type::dynamic);
  CHECK(c.scaling.max_position_embeddings == 4096u);
  // yarn: beta 0 means default (HF's `or`), factor from max / original when absent (v5),
  // original from max_position_embeddings when absent (v4)
  c = cfg(R"({"head_dim": 128, "max_position_embeddings": 16384,
              "rope_scaling": {"rope_type": "yarn", "original_max_position_embeddings": 4096,
                               "beta_fast": 0, "mscale": 0.707, "mscale_all_dim": 0.707}})");
  CHECK(c.scaling.factor == 4.0);
  CHECK(c.scaling.beta_fast == 32.0);
  CHECK(c.scaling.mscale == 0.707);
  CHECK(posenc::attention_factor(c) == 1.0);
  c = cfg(R"({"head_dim": 128, "max_position_embeddings": 8192,
              "rope_scaling": {"rope_type": "yarn", "factor": 2}})");
  CHECK(c.scaling.original_max_position_embeddings == 8192u);
  // longrope without a top-level original: explicit factor, original from the dict ("su")
  c = cfg(R"({"head_dim": 4, "max_position_embeddings": 8192,
              "rope_scaling": {"type": "su", "factor": 2.5, "original_max_position_embeddings": 4096,
                               "short_factor": [1, 1], "long_factor": [2, 3]}})");
  CHECK(c.scaling.type == scaling_type::longrope);
  CHECK(c.scaling.factor == 2.5);
  CHECK(c.scaling.original_max_position_embeddings == 4096u);
  // rope_parameters wins over rope_scaling, and its partial_rotary_factor over the top level
  c = cfg(R"({"head_dim": 128, "partial_rotary_factor": 0.25,
              "rope_parameters": {"rope_type": "default", "rope_theta": 5e5,
                                  "partial_rotary_factor": 0.5},
              "rope_scaling": {"type": "linear", "factor": 4}})");
  CHECK(c.scaling.type == scaling_type::none);
  CHECK(c.rotary_dim == 64u);
  CHECK(c.base == 5e5);
}

TEST_CASE("broken config files give one line naming the file and the field", "[hf_config]") {
  CHECK(parse_error("{\"head_dim\": 64,") == "posenc: c.json: not valid JSON (at byte 17)");
  CHECK(parse_error("[1, 2]") == "posenc: c.json: the top level is not a JSON object");
  CHECK(parse_error(R"({"head_dim": NaN})").starts_with("posenc: c.json: not valid JSON"));
  CHECK(parse_error(R"({"head_dim": 1e400})") == "posenc: c.json: a number is out of range");
  CHECK(parse_error(std::string(100, '[') + std::string(100, ']')) ==
        "posenc: c.json: nested deeper than 64 levels; raise the limit with --max-depth N");
  CHECK(parse_error(R"({"rope_theta": 10000})") ==
        "posenc: c.json: no head_dim, and no hidden_size and num_attention_heads to derive it");
  CHECK(parse_error(R"({"head_dim": 0})") ==
        "posenc: c.json: head_dim must be a positive integer (at most 65536)");
  CHECK(parse_error(R"({"head_dim": 64.5})") ==
        "posenc: c.json: head_dim must be a positive integer (at most 65536)");
  CHECK(parse_error(R"({"head_dim": "64"})") ==
        "posenc: c.json: head_dim must be a positive integer (at most 65536)");
  CHECK(parse_error(R"({"head_dim": 64, "rope_theta": "1e4"})") ==
        "posenc: c.json: rope_theta must be a number");
  CHECK(parse_error(R"({"head_dim": 64, "rotary_pct": 1.5})") ==
        "posenc: c.json: rotary_pct must be in (0, 1]");
  CHECK(parse_error(R"({"head_dim": 64, "rope_scaling": 4})") ==
        "posenc: c.json: rope_scaling must be an object or null");
  CHECK(parse_error(R"({"head_dim": 64, "rope_scaling": {"factor": 4}})") ==
        "posenc: c.json: rope_scaling has no \"rope_type\" or \"type\"");
  CHECK(parse_error(R"({"head_dim": 64, "rope_scaling": {"type": "mystery"}})") ==
        "posenc: c.json: rope_scaling.type 'mystery' is not supported (default, linear, ntk, "
        "dynamic, yarn, llama3, longrope, mrope)");
  CHECK(parse_error(R"({"head_dim": 64, "rope_scaling": {"rope_type": "linear"}})") ==
        "posenc: linear scaling needs a factor (--factor)");
  CHECK(parse_error(R"({"head_dim": 64, "rope_scaling": {"rope_type": "yarn", "factor": 4,
                        "truncate": "no"}})") ==
        "posenc: c.json: rope_scaling.truncate must be true or false");
  CHECK(parse_error(R"({"head_dim": 64, "rope_scaling": {"rope_type": "longrope",
                        "short_factor": [1]}})") ==
        "posenc: c.json: rope_scaling.long_factor is missing");
  CHECK(parse_error(R"({"head_dim": 64, "rope_scaling": {"rope_type": "longrope",
                        "short_factor": [1, "x"], "long_factor": [1]}})") ==
        "posenc: c.json: rope_scaling.short_factor must be a list of numbers");
  // the library's rules, in its words
  CHECK(parse_error(R"({"head_dim": 64, "rope_theta": 1})") ==
        posenc::message(posenc::rope_error::base));
  CHECK(parse_error(R"({"head_dim": 64, "rope_scaling": {"type": "linear", "factor": 0.5}})") ==
        posenc::message(posenc::rope_error::factor));
  CHECK(parse_error(R"({"head_dim": 64, "max_position_embeddings": 8192,
                        "rope_scaling": {"type": "longrope", "original_max_position_embeddings": 4096,
                                         "short_factor": [1], "long_factor": [1]}})") ==
        posenc::message(posenc::rope_error::longrope_factor_length));
}

TEST_CASE("unreadable files", "[hf_config]") {
  auto error_of = [](const std::string& path) {
    return posenc_test::cli_error_message(exit_invalid, [&] { load_hf_config(path); });
  };
  CHECK(error_of(tools_data("no-such-file.json")) ==
        "posenc: cannot open " + tools_data("no-such-file.json"));
  CHECK(error_of(tools_data("truncated.json"))
            .starts_with("posenc: " + tools_data("truncated.json") + ": not valid JSON"));
  CHECK(error_of(tools_data("bad_factor.json")) ==
        "posenc: " + tools_data("bad_factor.json") + ": rope_scaling.factor must be a number");
  const std::string dir_error = error_of(POSENC_TOOLS_DATA);
  CHECK(dir_error.starts_with("posenc: "));
  CHECK(dir_error.find('\n') == std::string::npos);
}

namespace {
// Whether two configurations are the same, field by field.
bool same_config(const rope_config& a, const rope_config& b) {
  const posenc::rope_scaling& s = a.scaling;
  const posenc::rope_scaling& t = b.scaling;
  return a.head_dim == b.head_dim && a.rotary_dim == b.rotary_dim && a.base == b.base &&
         a.layout == b.layout && s.type == t.type && s.factor == t.factor &&
         s.original_max_position_embeddings == t.original_max_position_embeddings &&
         s.max_position_embeddings == t.max_position_embeddings && s.beta_fast == t.beta_fast &&
         s.beta_slow == t.beta_slow && s.truncate == t.truncate && s.mscale == t.mscale &&
         s.mscale_all_dim == t.mscale_all_dim && s.attention_factor == t.attention_factor &&
         s.low_freq_factor == t.low_freq_factor && s.high_freq_factor == t.high_freq_factor &&
         std::equal(s.short_factor.begin(), s.short_factor.end(), t.short_factor.begin(),
                    t.short_factor.end()) &&
         std::equal(s.long_factor.begin(), s.long_factor.end(), t.long_factor.begin(),
                    t.long_factor.end());
}

resolved_config load_layer(const char* name, const std::string& layer_type,
                           config_keys* keys = nullptr) {
  return resolve(load_hf_config(tools_data(name), max_config_bytes, max_config_depth,
                                source_options{layer_type}, keys));
}

// The message of the usage error (exit 2) that reading `text` with `layer_type` throws.
std::string layer_error(const std::string& text, const std::string& layer_type) {
  return posenc_test::cli_error_message(
      exit_usage, [&] { parse_hf_config(text, "c.json", source_options{layer_type}); });
}
}  // namespace

TEST_CASE("transformers v5 rope_parameters give the configuration of their v4 equivalents",
          "[hf_config][v5]") {
  // Llama 3.1: rope_parameters with rope_theta inside == rope_scaling beside rope_theta
  CHECK(same_config(load("llama3_v5.json").config(), load("llama3.json").config()));
  CHECK(load("llama3_v5.json").config().base == 500000.0);
  CHECK(load("llama3_v5.json").config().scaling.type == scaling_type::llama3);

  // Gemma 3 (text_config of a multimodal config): v4's rope_theta, rope_local_base_freq and
  // rope_scaling == v5's per-layer-type dict == v5 as saved (entries without rope_theta)
  for (const char* type : {"full_attention", "sliding_attention"}) {
    INFO(type);
    const rope_config v4 = load_layer("gemma3_v4.json", type).config();
    const rope_config v5 = load_layer("gemma3_v5.json", type).config();
    const rope_config saved = load_layer("gemma3_v5_saved.json", type).config();
    CHECK(same_config(v4, v5));
    CHECK(same_config(v4, saved));
    CHECK(v4.head_dim == 256u);
    CHECK(v4.rotary_dim == 256u);
  }
  const rope_config full = load_layer("gemma3_v5.json", "full_attention").config();
  CHECK(full.base == 1e6);
  CHECK(full.scaling.type == scaling_type::linear);
  CHECK(full.scaling.factor == 8.0);
  const rope_config local = load_layer("gemma3_v4.json", "sliding_attention").config();
  CHECK(local.base == 1e4);
  CHECK(local.scaling.type == scaling_type::none);
  // the two layer types differ (the comparison above is not vacuous)
  CHECK_FALSE(same_config(full, local));

  // a per-layer-type dict with one entry needs no --layer-type; a flat dict without rope_type is
  // the default rope (v5 standardization)
  rope_config c = resolve(parse_hf_config(R"({"head_dim": 64, "rope_parameters":
      {"sliding_attention": {"rope_type": "linear", "factor": 2, "rope_theta": 5e5}}})",
                                          "c.json"))
                      .config();
  CHECK(c.scaling.type == scaling_type::linear);
  CHECK(c.base == 5e5);
  c = resolve(
          parse_hf_config(R"({"head_dim": 64, "rope_parameters": {"rope_theta": 2e4}})", "c.json"))
          .config();
  CHECK(c.scaling.type == scaling_type::none);
  CHECK(c.base == 2e4);
  // DeepSeek-V3's rope_interleave decides the layout over model_type
  c = resolve(parse_hf_config(R"({"head_dim": 64, "model_type": "deepseek_v3",
                                  "rope_interleave": false})",
                              "c.json"))
          .config();
  CHECK(c.layout == rope_layout::half);
  c = resolve(parse_hf_config(R"({"head_dim": 64, "model_type": "llama",
                                  "rope_interleave": true})",
                              "c.json"))
          .config();
  CHECK(c.layout == rope_layout::interleaved);
  // a flat config takes --layer-type when its layer_types declare it
  c = resolve(parse_hf_config(R"({"head_dim": 64, "layer_types": ["full_attention"]})", "c.json",
                              source_options{"full_attention"}))
          .config();
  CHECK(c.head_dim == 64u);
}

TEST_CASE("per-layer-type errors name the layer types", "[hf_config][v5]") {
  const std::string gemma = R"({"head_dim": 64, "rope_parameters": {
      "full_attention": {"rope_type": "linear", "factor": 8},
      "sliding_attention": {"rope_type": "default"}}})";
  CHECK(layer_error(gemma, "") ==
        "posenc: c.json: the rope parameters differ by layer type (full_attention, "
        "sliding_attention); choose one with --layer-type");
  CHECK(layer_error(gemma, "chunked_attention") ==
        "posenc: c.json: no layer type 'chunked_attention' in the rope parameters "
        "(full_attention, sliding_attention)");
  const std::string gemma_v4 =
      R"({"head_dim": 64, "rope_theta": 1e6, "rope_local_base_freq": 1e4})";
  CHECK(layer_error(gemma_v4, "") ==
        "posenc: c.json: the rope parameters differ by layer type (full_attention, "
        "sliding_attention); choose one with --layer-type");
  CHECK(layer_error(R"({"head_dim": 64})", "sliding_attention") ==
        "posenc: c.json: no layer type 'sliding_attention' (the file has one rope configuration "
        "for all layers)");
  CHECK(layer_error(R"({"head_dim": 64, "layer_types": ["full_attention"]})", "sliding") ==
        "posenc: c.json: no layer type 'sliding' (the file has one rope configuration for all "
        "layers, layer types full_attention)");
  CHECK(parse_error(R"({"head_dim": 64, "rope_parameters": {"full_attention": null}})") ==
        "posenc: c.json: rope_parameters.full_attention is null: layers of this type have no "
        "RoPE");
  CHECK(parse_error(R"({"head_dim": 64, "rope_parameters": {"rope_type": "default",
                        "full_attention": {"rope_type": "default"}}})") ==
        "posenc: c.json: rope_parameters.full_attention is a per-layer-type entry beside plain "
        "rope parameters");
}

TEST_CASE("the keys read and not read; warnings for rope keys not understood",
          "[hf_config][keys]") {
  auto keys_of = [](const std::string& text, const std::string& layer_type = "") {
    config_keys k;
    parse_hf_config(text, "c.json", source_options{layer_type}, &k);
    return k;
  };
  using strings = std::vector<std::string>;
  // Gemma 3 v4 read for its full-attention layers: rope_local_base_freq is understood (the other
  // layer type's), not warned about
  config_keys k = keys_of(R"({"head_dim": 64, "rope_theta": 1e6, "rope_local_base_freq": 1e4,
                              "rope_scaling": {"rope_type": "linear", "factor": 8},
                              "vocab_size": 262208})",
                          "full_attention");
  CHECK(k.used == strings{"head_dim", "rope_scaling", "rope_theta", "rope_scaling.factor",
                          "rope_scaling.rope_type"});
  CHECK(k.unused == strings{"rope_local_base_freq", "vocab_size"});
  CHECK(k.warnings.empty());
  k = keys_of(R"({"head_dim": 64, "rope_theta": 1e6, "rope_local_base_freq": 1e4,
                  "rope_scaling": {"rope_type": "linear", "factor": 8}})",
              "sliding_attention");
  CHECK(k.used == strings{"head_dim", "rope_local_base_freq"});
  CHECK(k.warnings.empty());
  // a rope key nobody reads, at the top level and in the rope dict, each warned once by name
  k = keys_of(R"({"head_dim": 64, "rope_ntk_alpha": 2,
                  "rope_scaling": {"type": "linear", "factor": 2, "alpha": [16, 24, 24],
                                   "original_max_position_embeddings": 4096}})");
  CHECK(k.warnings == strings{"posenc: warning: c.json: rope key rope_ntk_alpha is not used",
                              "posenc: warning: c.json: rope key rope_scaling.alpha is not used",
                              "posenc: warning: c.json: rope key "
                              "rope_scaling.original_max_position_embeddings is not used"});
  // v5 as saved: the sliding layers' top-level base is understood for the full-attention layers
  k = keys_of(R"({"head_dim": 64, "rope_theta": 1e6, "rope_local_base_freq": 1e4,
                  "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8},
                                      "sliding_attention": {"rope_type": "default"}}})",
              "full_attention");
  CHECK(k.unused == strings{"rope_local_base_freq", "rope_parameters.sliding_attention"});
  CHECK(k.warnings.empty());
  // rope_scaling beside rope_parameters is not read; the other layer types' entries are listed
  k = keys_of(R"({"head_dim": 64, "rope_scaling": {"type": "linear", "factor": 2},
                  "rope_parameters": {"rope_type": "default"}})");
  CHECK(k.warnings == strings{"posenc: warning: c.json: rope key rope_scaling is not used"});
  k = keys_of(R"({"head_dim": 64, "rope_parameters": {"full_attention": {"rope_type": "default"},
                  "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}})",
              "sliding_attention");
  CHECK(k.used == strings{"head_dim", "rope_parameters", "rope_parameters.sliding_attention",
                          "rope_parameters.sliding_attention.rope_theta",
                          "rope_parameters.sliding_attention.rope_type"});
  CHECK(k.unused == strings{"rope_parameters.full_attention"});
  CHECK(k.warnings.empty());
}

// M-RoPE keys as the Qwen2-VL / Qwen2.5-VL config.json writes them (type "mrope", which
// Qwen2VLConfig turns into "default") and as Qwen3-VL's text_config does (rope_type "default",
// mrope_interleaved); the keys are read (listed as used, not warned about).
TEST_CASE("M-RoPE keys: mrope_section and mrope_interleaved", "[hf_config][mrope]") {
  config_keys keys;
  const config_draft qwen2 = parse_hf_config(
      R"({"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28,
          "rope_theta": 1000000.0,
          "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}})",
      "c.json", {}, &keys);
  CHECK(qwen2.scaling == scaling_type::none);
  REQUIRE(qwen2.mrope_section.has_value());
  CHECK(*qwen2.mrope_section == std::array<std::uint32_t, 3>{16, 24, 24});
  CHECK(!qwen2.mrope_interleaved.has_value());
  CHECK(std::find(keys.used.begin(), keys.used.end(), "rope_scaling.mrope_section") !=
        keys.used.end());
  CHECK(keys.warnings.empty());
  const config_draft qwen3 = parse_hf_config(
      R"({"model_type": "qwen3_vl", "text_config": {"head_dim": 128, "rope_theta": 5000000,
          "rope_scaling": {"rope_type": "default", "mrope_section": [24, 20, 20],
                           "mrope_interleaved": true}}})",
      "c.json");
  REQUIRE(qwen3.mrope_section.has_value());
  CHECK(*qwen3.mrope_section == std::array<std::uint32_t, 3>{24, 20, 20});
  CHECK(qwen3.mrope_interleaved == std::optional<bool>(true));
  // transformers v5 rope_parameters carry them too.
  const config_draft v5 = parse_hf_config(
      R"({"head_dim": 128, "rope_parameters": {"rope_type": "default", "rope_theta": 1e6,
          "mrope_section": [16, 24, 24]}})",
      "c.json");
  CHECK(v5.mrope_section == std::optional<std::array<std::uint32_t, 3>>({16, 24, 24}));
  // One line for a malformed section.
  for (const char* bad : {"[16, 24]", "[16, 24, 24, 0]", "[16, 24.5, 24]", "[-1, 24, 24]"})
    CHECK(parse_error(std::string(R"({"head_dim": 128, "rope_scaling": {"type": "mrope",
                                     "mrope_section": )") +
                      bad + "}}") ==
          "posenc: c.json: rope_scaling.mrope_section must be a list of 3 non-negative integers "
          "(temporal, height, width pairs)");
  CHECK(parse_error(R"({"head_dim": 128, "rope_scaling": {"type": "mrope",
                        "mrope_interleaved": 1}})") ==
        "posenc: c.json: rope_scaling.mrope_interleaved must be true or false");
}
