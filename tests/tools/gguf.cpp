// tools/cli/gguf: the GGUF files that tests/tools/make_gguf.py writes (POSENC_GGUF_DIR) read back
// with the values it wrote (restated here, not read from the generator), mapped to the
// configuration --hf-config gives for the same model, and every malformed file an error with its
// message; `posenc --gguf` end to end (warnings, --verbose, conflicts).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <posenc/spec/rope.hpp>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "cli/draft.hpp"
#include "cli/error.hpp"
#include "cli/gguf.hpp"
#include "cli/hf_config.hpp"
#include "support.hpp"

using namespace posenc::cli;
using posenc::rope_config;
using posenc::rope_layout;
using posenc::scaling_type;
using posenc_test::tools_data;
using strings = std::vector<std::string>;

namespace {
// The generated files: a missing directory or file fails the test (never a skip).
std::string gguf_file(const char* name) {
  const char* dir = std::getenv("POSENC_GGUF_DIR");
  REQUIRE(dir != nullptr);
  const std::string path = std::string(dir) + "/" + name;
  REQUIRE(std::ifstream(path).good());
  return path;
}

gguf_metadata metadata_of(const char* name) {
  std::ifstream in(gguf_file(name), std::ios::binary);
  return read_gguf_metadata(in, name, max_gguf_bytes, "64 MiB");
}

const gguf_value& value_of(const gguf_metadata& m, const std::string& key) {
  const auto it =
      std::find_if(m.kv.begin(), m.kv.end(), [&](const auto& p) { return p.first == key; });
  REQUIRE(it != m.kv.end());
  return it->second;
}

// The message of the error (exit 1) that loading the generated file `name` throws.
std::string load_error(const char* name) {
  const std::string path = gguf_file(name);
  return posenc_test::cli_error_message(exit_invalid, [&] { resolve(load_gguf(path)); });
}

bool same_config(const rope_config& a, const rope_config& b) {
  const posenc::rope_scaling& s = a.scaling;
  const posenc::rope_scaling& t = b.scaling;
  return a.head_dim == b.head_dim && a.rotary_dim == b.rotary_dim && a.base == b.base &&
         a.layout == b.layout && s.type == t.type && s.factor == t.factor &&
         s.original_max_position_embeddings == t.original_max_position_embeddings &&
         s.max_position_embeddings == t.max_position_embeddings && s.beta_fast == t.beta_fast &&
         s.beta_slow == t.beta_slow && s.truncate == t.truncate && s.mscale == t.mscale &&
         s.mscale_all_dim == t.mscale_all_dim && s.attention_factor == t.attention_factor &&
         s.low_freq_factor == t.low_freq_factor && s.high_freq_factor == t.high_freq_factor;
}
}  // namespace

TEST_CASE("every value type reads back as make_gguf.py wrote it", "[gguf]") {
  const gguf_metadata m = metadata_of("llama_yarn.gguf");
  CHECK(m.version == 3u);
  CHECK(m.tensor_count == 1u);
  CHECK(m.kv.size() == 30u);
  CHECK(m.kv.front().first == "general.architecture");
  CHECK(m.kv.back().first == "llama.rope.scaling.attn_factor");
  using kind = gguf_value::kind;
  CHECK(value_of(m, "general.name").type == kind::string);
  CHECK(value_of(m, "general.name").s == "posenc test model");
  CHECK(value_of(m, "test.u8").u == 200u);
  CHECK(value_of(m, "test.i8").i == -100);
  CHECK(value_of(m, "test.u16").u == 60000u);
  CHECK(value_of(m, "test.i16").i == -30000);
  CHECK(value_of(m, "test.u32").u == 4000000000u);
  CHECK(value_of(m, "test.i32").i == -2000000000);
  CHECK(value_of(m, "test.f32").x == 0.5);
  CHECK(value_of(m, "test.bool").type == kind::boolean);
  CHECK(value_of(m, "test.bool").b);
  CHECK(value_of(m, "test.u64").u == (std::uint64_t{1} << 63));
  CHECK(value_of(m, "test.i64").i == -(std::int64_t{1} << 62));
  CHECK(value_of(m, "test.f64").x == 0.1);
  CHECK(value_of(m, "test.f64").gguf_type == 12u);
  const gguf_value& tokens = value_of(m, "tokenizer.ggml.tokens");
  CHECK(tokens.type == kind::array);
  CHECK(tokens.element_type == 8u);
  CHECK(tokens.u == 3u);
  CHECK(value_of(m, "tokenizer.ggml.scores").element_type == 6u);
  CHECK(value_of(m, "test.flags").u == 3u);
  CHECK(value_of(m, "test.nested").element_type == 9u);
  CHECK(value_of(m, "test.nested").u == 2u);
  CHECK(value_of(m, "llama.rope.freq_base").x == 500000.0);
  CHECK(value_of(m, "llama.rope.scaling.type").s == "yarn");

  const gguf_metadata g = metadata_of("gemma3.gguf");
  CHECK(g.version == 2u);
  CHECK(g.kv.size() == 9u);
  CHECK(value_of(g, "gemma3.context_length").u == 131072u);
  CHECK(value_of(g, "gemma3.rope.freq_base").x == 1e6);
}

TEST_CASE("GGUF metadata gives the configuration --hf-config gives for the same model", "[gguf]") {
  config_keys keys;
  const rope_config c =
      resolve(load_gguf(gguf_file("llama_yarn.gguf"), max_gguf_bytes, &keys)).config();
  CHECK(c.head_dim == 128u);  // 4096 / 32
  CHECK(c.rotary_dim == 128u);
  CHECK(c.base == 500000.0);
  CHECK(c.layout == rope_layout::half);
  CHECK(c.scaling.type == scaling_type::yarn);
  CHECK(c.scaling.factor == 32.0);
  CHECK(c.scaling.original_max_position_embeddings == 4096u);
  CHECK(c.scaling.max_position_embeddings == 131072u);
  CHECK(c.scaling.beta_fast == 16.0);
  CHECK(c.scaling.beta_slow == 2.0);
  CHECK(same_config(c, resolve(load_hf_config(tools_data("llama_yarn_gguf.json"))).config()));
  // the one rope key not used is named; the tensor info after the pairs was never read
  CHECK(keys.warnings == strings{"posenc: warning: " + gguf_file("llama_yarn.gguf") +
                                 ": rope key llama.rope.scaling.attn_factor is not used"});
  CHECK(keys.used.size() == 11u);
  CHECK(keys.unused.size() == 19u);
  CHECK(std::find(keys.used.begin(), keys.used.end(), "llama.rope.scaling.yarn_beta_slow") !=
        keys.used.end());
  CHECK(std::find(keys.unused.begin(), keys.unused.end(), "tokenizer.ggml.tokens") !=
        keys.unused.end());

  // Gemma 3: key_length is the head dimension (2560 / 8 would be 320), the full-attention
  // layers' rope as --hf-config --layer-type full_attention gives it
  const rope_config g =
      resolve(load_gguf(gguf_file("gemma3.gguf"), max_gguf_bytes, &keys)).config();
  CHECK(g.head_dim == 256u);
  CHECK(g.base == 1e6);
  CHECK(g.scaling.type == scaling_type::linear);
  CHECK(g.scaling.factor == 8.0);
  CHECK(same_config(g, resolve(load_hf_config(tools_data("gemma3_v5.json"), max_config_bytes,
                                              max_config_depth, source_options{"full_attention"}))
                           .config()));
  CHECK(keys.warnings == strings{"posenc: warning: " + gguf_file("gemma3.gguf") +
                                 ": rope key gemma3.rope.freq_base_swa is not used"});

  // GPT-NeoX: partial rotary from dimension_count, no scaling
  const rope_config n = resolve(load_gguf(gguf_file("neox.gguf"))).config();
  CHECK(n.head_dim == 96u);
  CHECK(n.rotary_dim == 24u);
  CHECK(same_config(n, resolve(load_hf_config(tools_data("neox.json"))).config()));

  // DeepSeek-V2: its rope slice is the head (as qk_rope_head_dim), interleaved pairs, YaRN
  const rope_config ds =
      resolve(load_gguf(gguf_file("deepseek2.gguf"), max_gguf_bytes, &keys)).config();
  CHECK(ds.head_dim == 64u);
  CHECK(ds.rotary_dim == 64u);
  CHECK(ds.layout == rope_layout::interleaved);
  CHECK(ds.scaling.type == scaling_type::yarn);
  CHECK(ds.scaling.factor == 40.0);
  CHECK(ds.scaling.original_max_position_embeddings == 4096u);
  CHECK(ds.scaling.max_position_embeddings == 163840u);
  CHECK(keys.warnings == strings{"posenc: warning: " + gguf_file("deepseek2.gguf") +
                                 ": rope key deepseek2.rope.scaling.yarn_log_multiplier is not "
                                 "used"});

  // an older file: rope.scale_linear without a scaling type is linear scaling
  const rope_config o = resolve(load_gguf(gguf_file("old_linear.gguf"))).config();
  CHECK(o.scaling.type == scaling_type::linear);
  CHECK(o.scaling.factor == 4.0);
  CHECK(o.base == 10000.0);
}

TEST_CASE("malformed GGUF files are one-line errors", "[gguf]") {
  const auto at = [](const char* name) { return "posenc: " + gguf_file(name) + ": "; };
  CHECK(load_error("bad_magic.gguf") ==
        at("bad_magic.gguf") + "not a GGUF file (no \"GGUF\" magic)");
  CHECK(load_error("version1.gguf") ==
        at("version1.gguf") + "GGUF version 1 is not supported (2 and 3 are)");
  CHECK(load_error("version4.gguf") ==
        at("version4.gguf") + "unknown GGUF version 4 (2 and 3 are read)");
  CHECK(load_error("truncated_header.gguf") ==
        at("truncated_header.gguf") + "the file ends inside the header (at byte 14)");
  CHECK(load_error("string_beyond_file.gguf") ==
        at("string_beyond_file.gguf") +
            "the file ends inside the value of 'general.architecture' (at byte 69)");
  CHECK(load_error("huge_kv_count.gguf") ==
        at("huge_kv_count.gguf") + "4611686018427387904 metadata key/value pairs; at most 65536");
  CHECK(load_error("unknown_type.gguf") ==
        at("unknown_type.gguf") + "key 'test.x': unknown value type 13");
  CHECK(load_error("huge_array.gguf") ==
        at("huge_array.gguf") +
            "key 'test.tokens': an array of 4611686018427387904 elements; at most 16777216");
  CHECK(load_error("array_beyond_file.gguf") ==
        at("array_beyond_file.gguf") +
            "the file ends inside the value of 'test.ids' (at byte 181)");
  CHECK(load_error("bad_bool.gguf") ==
        at("bad_bool.gguf") + "key 'test.flag': a bool is 0 or 1, not 2");
  CHECK(load_error("deep_array.gguf") ==
        at("deep_array.gguf") + "key 'test.deep': arrays nested deeper than 4 levels");
  CHECK(load_error("long_key.gguf") ==
        at("long_key.gguf") + "key/value pair 0: a key of 70000 bytes; at most 65535");
  CHECK(load_error("duplicate_key.gguf") ==
        at("duplicate_key.gguf") + "duplicate key 'general.architecture'");
  CHECK(load_error("truncated_kv.gguf") ==
        at("truncated_kv.gguf") +
            "the file ends inside the value of 'gptneox.rope.freq_base' (at byte 272)");
  CHECK(load_error("no_architecture.gguf") ==
        at("no_architecture.gguf") + "no general.architecture");
  CHECK(load_error("bad_scaling.gguf") ==
        at("bad_scaling.gguf") +
            "gptneox.rope.scaling.type 'mrope' is not supported (none, linear, yarn, longrope)");
  CHECK(load_error("string_base.gguf") ==
        at("string_base.gguf") + "gptneox.rope.freq_base must be a number, not a string");
  // the byte limit: the metadata must lie within the first N bytes
  const std::string path = gguf_file("llama_yarn.gguf");
  CHECK(posenc_test::cli_error_message(exit_invalid, [&] { load_gguf(path, 100); }) ==
        "posenc: " + path +
            ": the metadata goes on past the first 100 bytes of the file; raise the limit with "
            "--max-input-bytes N");
  // not a file
  CHECK(posenc_test::cli_error_message(exit_invalid, [&] { load_gguf(POSENC_TOOLS_DATA); }) ==
        std::string("posenc: cannot read ") + POSENC_TOOLS_DATA + " (a directory)");
  CHECK(posenc_test::cli_error_message(exit_invalid, [&] { load_gguf(tools_data("none.gguf")); }) ==
        "posenc: cannot open " + tools_data("none.gguf"));
}

TEST_CASE("posenc --gguf: warnings, --verbose, conflicting sources", "[gguf]") {
  const std::string f = gguf_file("llama_yarn.gguf");
  posenc_test::cli_result r = posenc_test::run_cli({"freqs", "--gguf", f});
  CHECK(r.status == 0);
  CHECK(r.err ==
        "posenc: warning: " + f + ": rope key llama.rope.scaling.attn_factor is not used\n");
  // a flag laid over the file wins
  const rope_config over = posenc_test::config_of({"--gguf", f, "--base", "10000"}).config();
  CHECK(over.base == 10000.0);
  CHECK(over.scaling.type == scaling_type::yarn);

  r = posenc_test::run_cli({"freqs", "--gguf", gguf_file("neox.gguf"), "--verbose"});
  CHECK(r.status == 0);
  CHECK(r.err == "posenc: " + gguf_file("neox.gguf") +
                     ": keys used: general.architecture gptneox.context_length "
                     "gptneox.embedding_length gptneox.attention.head_count "
                     "gptneox.rope.dimension_count gptneox.rope.freq_base\n"
                     "posenc: " +
                     gguf_file("neox.gguf") + ": keys not used: (none)\n");

  r = posenc_test::run_cli({"freqs", "--gguf", f, "--hf-config", tools_data("llama3.json")});
  CHECK(r.status == exit_usage);
  CHECK(r.err == "posenc: --gguf and --hf-config conflict (give one configuration source)\n");
  r = posenc_test::run_cli({"freqs", "--gguf", f, "--layer-type", "full_attention"});
  CHECK(r.status == exit_usage);
  CHECK(r.err.starts_with("posenc: --layer-type picks"));
  r = posenc_test::run_cli({"freqs", "--head-dim", "64", "--verbose"});
  CHECK(r.status == exit_usage);
  r = posenc_test::run_cli({"freqs", "--gguf", gguf_file("bad_magic.gguf")});
  CHECK(r.status == exit_invalid);
  CHECK(posenc_test::count_lines(r.err) == 1u);
}

TEST_CASE("posenc --hf-config --layer-type and its warnings", "[gguf][hf_config]") {
  const std::string v5 = tools_data("gemma3_v5.json");
  posenc_test::cli_result r = posenc_test::run_cli({"freqs", "--hf-config", v5});
  CHECK(r.status == exit_usage);
  CHECK(r.err == "posenc: " + v5 +
                     ": the rope parameters differ by layer type (full_attention, "
                     "sliding_attention); choose one with --layer-type\n");
  r = posenc_test::run_cli(
      {"freqs", "--hf-config", v5, "--layer-type", "sliding_attention", "--format", "csv"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  const rope_config local =
      posenc_test::config_of({"--hf-config", v5, "--layer-type", "sliding_attention"}).config();
  CHECK(local.base == 1e4);
  // a rope key not understood: one warning line on stderr, the result on stdout
  r = posenc_test::run_cli({"freqs", "--hf-config", tools_data("llama3.json"), "--verbose"});
  CHECK(r.status == 0);
  CHECK(posenc_test::count_lines(r.err) == 2u);
  CHECK(r.err.find("keys not used: architectures num_key_value_heads torch_dtype") !=
        std::string::npos);
}

// M-RoPE: ARCH.rope.dimension_sections, as llama.cpp's convert_hf_to_gguf.py writes Qwen2-VL's
// mrope_section [16, 24, 24] (padded to [16, 24, 24, 0]) and Qwen3-VL's [24, 20, 20] (whose
// sections interleave: llama.cpp's rope type of the qwen3vl architecture).
TEST_CASE("GGUF M-RoPE: rope.dimension_sections", "[gguf][mrope]") {
  using sections = std::array<std::uint32_t, 3>;
  config_keys keys;
  const std::string q2 = gguf_file("qwen2vl.gguf");
  const config_draft d = load_gguf(q2, max_gguf_bytes, &keys);
  REQUIRE(d.mrope_section.has_value());
  CHECK(*d.mrope_section == sections{16, 24, 24});
  CHECK(!d.mrope_interleaved.has_value());
  CHECK(keys.sources.mrope_section == "gguf " + q2 + " qwen2vl.rope.dimension_sections");
  CHECK(keys.warnings.empty());  // the key is read, not warned about
  CHECK(std::find(keys.used.begin(), keys.used.end(), "qwen2vl.rope.dimension_sections") !=
        keys.used.end());
  // Three entries (uint16) read as llama.cpp reads them.
  const config_draft three = load_gguf(gguf_file("qwen2vl_three_sections.gguf"));
  REQUIRE(three.mrope_section.has_value());
  CHECK(*three.mrope_section == sections{16, 24, 24});

  const std::string q3 = gguf_file("qwen3vl.gguf");
  const config_draft d3 = load_gguf(q3, max_gguf_bytes, &keys);
  REQUIRE(d3.mrope_section.has_value());
  CHECK(*d3.mrope_section == sections{24, 20, 20});
  CHECK(d3.mrope_interleaved == std::optional<bool>(true));
  CHECK(keys.sources.mrope_interleaved == "gguf " + q3 + " general.architecture");

  // apply: the three position streams of the file's sections, as the model preset (Qwen2-VL-7B)
  // and the flags (Qwen3-VL) rotate them; the echo names the key.
  std::vector<float> x(3 * 128);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) / 8.0f - 1.0f;
  nlohmann::json in;
  in["x"] = x;
  in["shape"] = {3, 1, 128};
  in["positions"] = {0, 1, 2, 0, 3, 5, 0, 2, 7};  // temporal, height, width of 3 tokens
  const char* dir = std::getenv("POSENC_GGUF_DIR");
  REQUIRE(dir != nullptr);
  const std::string input = std::string(dir) + "/gguf_mrope_input.json";
  std::ofstream(input) << in.dump();
  const auto apply = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"apply", "--input", input});
    const posenc_test::cli_result r = posenc_test::run_cli(args);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.out);
  };
  nlohmann::json from_gguf = apply({"--gguf", q2});
  CHECK(from_gguf.at("config").at("mrope_section") ==
        nlohmann::json::parse(R"({"value": [16, 24, 24], "source": "gguf )" + q2 +
                              R"( qwen2vl.rope.dimension_sections"})"));
  CHECK(from_gguf.at("config").at("mrope_interleaved") ==
        nlohmann::json::parse(R"({"value": false, "source": "default"})"));
  from_gguf.erase("config");
  nlohmann::json from_preset = apply({"--preset", "qwen2-vl-7b"});
  from_preset.erase("config");
  CHECK(from_gguf == from_preset);
  nlohmann::json from_gguf3 = apply({"--gguf", q3});
  CHECK(from_gguf3.at("config").at("mrope_interleaved") ==
        nlohmann::json::parse(R"({"value": true, "source": "gguf )" + q3 +
                              R"( general.architecture"})"));
  from_gguf3.erase("config");
  nlohmann::json from_flags = apply({"--head-dim", "128", "--base", "5000000", "--mrope-section",
                                     "24,20,20", "--mrope-interleaved"});
  from_flags.erase("config");
  CHECK(from_gguf3 == from_flags);
  CHECK(from_gguf3 != from_gguf);

  // Errors: one line each, exit 1.
  const auto at = [](const char* name) { return "posenc: " + gguf_file(name) + ": "; };
  const std::string rule =
      "qwen2vl.rope.dimension_sections must be an array of 3 or 4 integers in [0, 65536] "
      "(temporal, height, width pairs, then 0)";
  CHECK(load_error("qwen2vl_fourth_section.gguf") ==
        at("qwen2vl_fourth_section.gguf") +
            "qwen2vl.rope.dimension_sections has a fourth section of 8 pairs: a fourth position "
            "stream (llama.cpp's vision M-RoPE) is not supported; M-RoPE here has three "
            "(temporal, height, width)");
  CHECK(load_error("qwen2vl_float_sections.gguf") == at("qwen2vl_float_sections.gguf") + rule);
  CHECK(load_error("qwen2vl_negative_section.gguf") == at("qwen2vl_negative_section.gguf") + rule);
  CHECK(load_error("qwen2vl_five_sections.gguf") == at("qwen2vl_five_sections.gguf") + rule);
}
