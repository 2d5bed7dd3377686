// What was computed (docs/cli.md): every output echoes the resolved configuration and where each
// value came from (a flag, a preset, a config.json key, a GGUF key, a default or a derivation),
// as a JSON "config" object, "# " lines before CSV, and a header block before text. The expected
// echoes are written out literally here; the file names are the only parts put together.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/presets.hpp"
#include "support.hpp"

using json = nlohmann::json;
using posenc_test::lines_of;
using posenc_test::run_cli;
using result = posenc_test::cli_result;

namespace {

// A file in the temporary directory, removed at the end of its scope. `dir` (optional) is a
// subdirectory made for it.
class scratch_file {
 public:
  scratch_file(const std::string& name, const std::string& bytes, const std::string& dir = "") {
    std::filesystem::path p =
        std::filesystem::temp_directory_path() / ("posenc_echo_" + std::to_string(::getpid()));
    if (!dir.empty()) p /= dir;
    std::filesystem::create_directories(p);
    dir_ = p.string();
    path_ = (p / name).string();
    std::ofstream(path_, std::ios::binary) << bytes;
  }
  ~scratch_file() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  scratch_file(const scratch_file&) = delete;
  scratch_file& operator=(const scratch_file&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string dir_;
  std::string path_;
};

// The first line of a JSON output: {"config": {...},
std::string config_line(const std::string& out) {
  return out.substr(0, out.find('\n'));
}

// The config object of a JSON output.
json config_of(const result& r) {
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json j = json::parse(r.out);
  REQUIRE(j.contains("config"));
  return j.at("config");
}

// A GGUF file (ggml-org/ggml docs/gguf.md, version 3): magic, version, tensor count, key/value
// count, then each key (uint64 length, bytes), its uint32 type and the value, little-endian.
class gguf_writer {
 public:
  void string_kv(const std::string& key, const std::string& value) {
    name(key);
    u32(8);
    u64(value.size());
    bytes_ += value;
    ++count_;
  }
  void u32_kv(const std::string& key, std::uint32_t value) {
    name(key);
    u32(4);
    u32(value);
    ++count_;
  }
  void f32_kv(const std::string& key, float value) {
    name(key);
    u32(6);
    std::uint32_t b;
    std::memcpy(&b, &value, 4);
    u32(b);
    ++count_;
  }
  std::string file() const {
    gguf_writer head;
    head.bytes_ = "GGUF";
    head.u32(3);
    head.u64(0);
    head.u64(count_);
    return head.bytes_ + bytes_;
  }

 private:
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes_ += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes_ += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  void name(const std::string& key) {
    u64(key.size());
    bytes_ += key;
  }
  std::string bytes_;
  std::uint64_t count_ = 0;
};

}  // namespace

TEST_CASE("echo: flags, defaults and derived values", "[echo]") {
  const result r =
      run_cli({"freqs", "--head-dim", "64", "--base", "500000", "--layout", "interleaved",
               "--scaling", "yarn", "--factor", "4", "--original-max", "2048", "--seq-len", "100"});
  REQUIRE(r.status == 0);
  // attention_factor: YaRN's 0.1 ln(4) + 1 = 1.13862943611198906... (the nearest double)
  CHECK(config_line(r.out) ==
        R"({"config": {"head_dim": {"value": 64, "source": "flag --head-dim"}, )"
        R"("rotary_dim": {"value": 64, "source": "default: head_dim"}, )"
        R"("base": {"value": 500000, "source": "flag --base"}, )"
        R"("layout": {"value": "interleaved", "source": "flag --layout"}, )"
        R"("scaling": {"value": "yarn", "source": "flag --scaling"}, )"
        R"("factor": {"value": 4, "source": "flag --factor"}, )"
        R"("original_max_position_embeddings": {"value": 2048, "source": "flag --original-max"}, )"
        R"("beta_fast": {"value": 32, "source": "default"}, )"
        R"("beta_slow": {"value": 1, "source": "default"}, )"
        R"("truncate": {"value": true, "source": "default"}, )"
        R"("mscale": {"value": 0, "source": "default"}, )"
        R"("mscale_all_dim": {"value": 0, "source": "default"}, )"
        R"("attention_factor": {"value": 1.138629436111989, "source": "derived"}, )"
        R"("seq_len": {"value": 100, "source": "flag --seq-len"}},)");
  // The same object parses as JSON and is the output's first member.
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(r.out);
  CHECK(j.begin().key() == "config");

  // A factor derived from max_position_embeddings / original_max_position_embeddings, a partial
  // rotary width, a flag given twice (the last wins and names the source).
  const json c = config_of(
      run_cli({"freqs", "--head-dim", "64", "--partial-rotary-factor", "0.5", "--scaling",
               "longrope", "--max-position-embeddings", "8192", "--original-max", "2048",
               "--short-factor", "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1", "--long-factor",
               "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", "--base", "1", "--base", "10000"}));
  CHECK(c.at("partial_rotary_factor") ==
        json::parse(R"({"value": 0.5, "source": "flag --partial-rotary-factor"})"));
  CHECK(c.at("rotary_dim") ==
        json{{"value", 32}, {"source", "derived: int(head_dim * partial_rotary_factor)"}});
  CHECK(
      c.at("factor") ==
      json::parse(
          R"({"value": 4, "source": "derived: max_position_embeddings / original_max_position_embeddings"})"));
  CHECK(c.at("base") == json::parse(R"({"value": 10000, "source": "flag --base"})"));
  CHECK(
      c.at("long_factor") ==
      json::parse(
          R"({"value": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], "source": "flag --long-factor"})"));
  // LongRoPE: sqrt(1 + ln(4) / ln(2048)) = sqrt(1 + 2/11)
  CHECK(c.at("attention_factor") ==
        json::parse(R"({"value": 1.0871146130092180, "source": "derived"})"));
}

TEST_CASE("echo: a preset, and a flag over it", "[echo]") {
  if (!posenc::cli::presets_available()) {
    CHECK(run_cli({"freqs", "--preset", "llama-3.1-8b"}).status == posenc::cli::exit_usage);
    return;
  }
  const result r =
      run_cli({"freqs", "--preset", "llama-3.1-8b", "--base", "1e6", "--format", "csv"});
  REQUIRE(r.status == 0);
  const std::vector<std::string> lines = lines_of(r.out);
  REQUIRE(lines.size() == 10u + 1u + 64u);
  const std::vector<std::string> header(lines.begin(), lines.begin() + 10);
  CHECK(header == std::vector<std::string>{
                      "# head_dim = 128 (preset llama-3.1-8b)",
                      "# rotary_dim = 128 (preset llama-3.1-8b)",
                      "# base = 1000000 (flag --base)",
                      "# layout = half (preset llama-3.1-8b)",
                      "# scaling = llama3 (preset llama-3.1-8b)",
                      "# factor = 8 (preset llama-3.1-8b)",
                      "# original_max_position_embeddings = 8192 (preset llama-3.1-8b)",
                      "# low_freq_factor = 1 (preset llama-3.1-8b)",
                      "# high_freq_factor = 4 (preset llama-3.1-8b)",
                      "# seq_len = 0 (default)",
                  });
  // A CSV reader that skips the # lines finds the column names and 64 rows of numbers.
  CHECK(lines[10] == "i,inv_freq,inv_freq_f64");
  CHECK(lines[11] == "0,1,1");
  for (std::size_t i = 0; i < 64; ++i) {
    const std::vector<std::string> cells = posenc_test::split(lines[11 + i], ',');
    REQUIRE(cells.size() == 3u);
    CHECK(cells[0] == std::to_string(i));
    double f32 = 0, f64 = 0;
    CHECK(std::from_chars(cells[1].data(), cells[1].data() + cells[1].size(), f32).ec ==
          std::errc{});
    CHECK(std::from_chars(cells[2].data(), cells[2].data() + cells[2].size(), f64).ec ==
          std::errc{});
    CHECK((f32 > 0.0 && f32 <= 1.0));
    CHECK((f64 > 0.0 && f64 <= 1.0));
  }
}

TEST_CASE("echo: --hf-config keys, the keys not used, warnings for rope keys", "[echo]") {
  const scratch_file f("config.json", R"({
    "hidden_size": 512, "num_attention_heads": 8, "max_position_embeddings": 8192,
    "rope_theta": 1000000.0, "model_type": "llama", "vocab_size": 32000,
    "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048,
                     "beta_fast": 16, "mystery_knob": 3},
    "rope_flavour": "spicy"
  })");
  const std::string& p = f.path();
  const result r = run_cli({"table", "--hf-config", p, "--positions", "0:2"});
  REQUIRE(r.status == 0);
  CHECK(r.err == "posenc: warning: " + p + ": rope key rope_flavour is not used\n" +
                     "posenc: warning: " + p +
                     ": rope key rope_scaling.mystery_knob is not used\n");
  const json want = json::parse(
      R"({"head_dim": {"value": 64, "source": "config P hidden_size / num_attention_heads"},
          "rotary_dim": {"value": 64, "source": "default: head_dim"},
          "base": {"value": 1000000, "source": "config P rope_theta"},
          "layout": {"value": "half", "source": "default"},
          "scaling": {"value": "yarn", "source": "config P rope_scaling.rope_type"},
          "factor": {"value": 4, "source": "config P rope_scaling.factor"},
          "original_max_position_embeddings":
              {"value": 2048, "source": "config P rope_scaling.original_max_position_embeddings"},
          "beta_fast": {"value": 16, "source": "config P rope_scaling.beta_fast"},
          "beta_slow": {"value": 1, "source": "default"},
          "truncate": {"value": true, "source": "default"},
          "mscale": {"value": 0, "source": "default"},
          "mscale_all_dim": {"value": 0, "source": "default"},
          "attention_factor": {"value": 1.138629436111989, "source": "derived"},
          "seq_len": {"value": 0, "source": "default"},
          "keys": {"source": "config P",
                   "used": ["hidden_size", "max_position_embeddings", "model_type",
                            "num_attention_heads", "rope_scaling", "rope_theta",
                            "rope_scaling.beta_fast", "rope_scaling.factor",
                            "rope_scaling.original_max_position_embeddings",
                            "rope_scaling.rope_type"],
                   "not_used": ["rope_flavour", "vocab_size", "rope_scaling.mystery_knob"]}})");
  // P stands for the file's path.
  std::string want_text = want.dump();
  for (std::size_t at = want_text.find("config P"); at != std::string::npos;
       at = want_text.find("config P", at))
    want_text.replace(at + 7, 1, p);
  CHECK(config_of(r) == json::parse(want_text));

  // A flag over a config.json key names the flag; text output carries the same lines.
  const result t = run_cli({"freqs", "--hf-config", p, "--factor", "8", "--format", "text"});
  REQUIRE(t.status == 0);
  const std::vector<std::string> lines = lines_of(t.out);
  REQUIRE(lines.size() > 18u);
  CHECK(lines[5] == "# factor = 8 (flag --factor)");
  CHECK(lines[2] == "# base = 1000000 (config " + p + " rope_theta)");
  CHECK(lines[14] == "# keys used (config " + p +
                         "): hidden_size max_position_embeddings model_type num_attention_heads "
                         "rope_scaling rope_theta rope_scaling.beta_fast rope_scaling.factor "
                         "rope_scaling.original_max_position_embeddings rope_scaling.rope_type");
  CHECK(lines[15] ==
        "# keys not used (config " + p + "): rope_flavour vocab_size rope_scaling.mystery_knob");
  CHECK(lines[16].empty());
  CHECK(lines[17] == "rotary_dim        64");
}

TEST_CASE("echo: Gemma 3's rope_local_base_freq names the sliding layers' base", "[echo]") {
  const std::string p = posenc_test::tools_data("gemma3_v4.json");
  const json sliding =
      config_of(run_cli({"freqs", "--hf-config", p, "--layer-type", "sliding_attention"}));
  CHECK(sliding.at("base") ==
        json{{"value", 10000}, {"source", "config " + p + " text_config.rope_local_base_freq"}});
  CHECK(sliding.at("scaling") == json::parse(R"({"value": "none", "source": "default"})"));
  const result full = run_cli({"freqs", "--hf-config", p, "--layer-type", "full_attention"});
  CHECK(full.err.empty());
  const json c = config_of(full);
  CHECK(c.at("base") ==
        json{{"value", 1000000}, {"source", "config " + p + " text_config.rope_theta"}});
  const json& not_used = c.at("keys").at("not_used");
  CHECK(std::find(not_used.begin(), not_used.end(), "text_config.rope_local_base_freq") !=
        not_used.end());
}

TEST_CASE("echo: --gguf keys", "[echo]") {
  gguf_writer g;
  g.string_kv("general.architecture", "llama");
  g.f32_kv("llama.rope.freq_base", 500000.0f);
  g.u32_kv("llama.attention.key_length", 128);
  g.u32_kv("llama.context_length", 131072);
  g.string_kv("llama.rope.scaling.type", "yarn");
  g.f32_kv("llama.rope.scaling.factor", 4.0f);
  g.u32_kv("llama.rope.scaling.original_context_length", 32768);
  g.u32_kv("llama.rope.mystery", 7);
  g.string_kv("general.name", "tiny");
  const scratch_file f("model.gguf", g.file());
  const std::string& p = f.path();
  const result r = run_cli({"freqs", "--gguf", p});
  REQUIRE(r.status == 0);
  CHECK(r.err == "posenc: warning: " + p + ": rope key llama.rope.mystery is not used\n");
  const std::string G = "gguf " + p + " ";
  const json want = {
      {"head_dim", {{"value", 128}, {"source", G + "llama.attention.key_length"}}},
      {"rotary_dim", {{"value", 128}, {"source", "default: head_dim"}}},
      {"base", {{"value", 500000}, {"source", G + "llama.rope.freq_base"}}},
      {"layout", {{"value", "half"}, {"source", "default"}}},
      {"scaling", {{"value", "yarn"}, {"source", G + "llama.rope.scaling.type"}}},
      {"factor", {{"value", 4}, {"source", G + "llama.rope.scaling.factor"}}},
      {"original_max_position_embeddings",
       {{"value", 32768}, {"source", G + "llama.rope.scaling.original_context_length"}}},
      {"beta_fast", {{"value", 32}, {"source", "default"}}},
      {"beta_slow", {{"value", 1}, {"source", "default"}}},
      {"truncate", {{"value", true}, {"source", "default"}}},
      {"mscale", {{"value", 0}, {"source", "default"}}},
      {"mscale_all_dim", {{"value", 0}, {"source", "default"}}},
      {"attention_factor", {{"value", 1.138629436111989}, {"source", "derived"}}},
      {"seq_len", {{"value", 0}, {"source", "default"}}},
      {"keys",
       {{"source", "gguf " + p},
        {"used",
         {"general.architecture", "llama.rope.freq_base", "llama.attention.key_length",
          "llama.context_length", "llama.rope.scaling.type", "llama.rope.scaling.factor",
          "llama.rope.scaling.original_context_length"}},
        {"not_used", {"llama.rope.mystery", "general.name"}}}},
  };
  CHECK(config_of(r) == want);
}

TEST_CASE("echo: apply's head_dim and seq_len from the input", "[echo]") {
  const scratch_file f(
      "x.json", R"({"x": [1, 0, 0, 1, 0, 1, 1, 0], "shape": [2, 1, 4], "positions": [3, 7]})");
  const std::string& p = f.path();
  const json c = config_of(run_cli({"apply", "--input", p}));
  CHECK(c.at("head_dim") == json{{"value", 4}, {"source", "input " + p + " last dimension"}});
  CHECK(c.at("seq_len") == json::parse(R"({"value": 8, "source": "derived: max position + 1"})"));
  const json given =
      config_of(run_cli({"apply", "--input", p, "--seq-len", "20", "--head-dim", "4"}));
  CHECK(given.at("head_dim") == json::parse(R"({"value": 4, "source": "flag --head-dim"})"));
  CHECK(given.at("seq_len") == json::parse(R"({"value": 20, "source": "flag --seq-len"})"));
  // --no-scale-cos-sin: the attention factor applied is 1, and the echo says why.
  const json unscaled = config_of(run_cli({"apply", "--input", p, "--scaling", "yarn", "--factor",
                                           "4", "--original-max", "16", "--no-scale-cos-sin"}));
  CHECK(unscaled.at("attention_factor") ==
        json::parse(R"({"value": 1, "source": "flag --no-scale-cos-sin"})"));
  CHECK(unscaled.at("scale_cos_sin") ==
        json::parse(R"({"value": false, "source": "flag --no-scale-cos-sin"})"));
  CHECK(c.at("scale_cos_sin") == json::parse(R"({"value": true, "source": "default"})"));
  CHECK(c.at("shape_order") == json::parse(R"({"value": "THD", "source": "default"})"));
  CHECK(config_of(run_cli({"apply", "--input", p, "--shape-order", "THD"})).at("shape_order") ==
        json::parse(R"({"value": "THD", "source": "flag --shape-order"})"));
  // CSV: the header, then the rows.
  const std::vector<std::string> lines =
      lines_of(run_cli({"apply", "--input", p, "--format", "csv"}).out);
  REQUIRE(lines.size() == 8u + 1u + 2u);
  CHECK(lines[0] == "# head_dim = 4 (input " + p + " last dimension)");
  CHECK(lines[5] == "# seq_len = 8 (derived: max position + 1)");
  CHECK(lines[6] == "# shape_order = THD (default)");
  CHECK(lines[7] == "# scale_cos_sin = true (default)");
  CHECK(lines[8] == "token,position,head,y0,y1,y2,y3");
  CHECK(lines[9].starts_with("0,3,0,"));
}

TEST_CASE("echo: the analysis commands, text and JSON", "[echo]") {
  const std::string header =
      "# head_dim = 8 (flag --head-dim)\n"
      "# rotary_dim = 8 (default: head_dim)\n"
      "# base = 10000 (default)\n"
      "# layout = half (default)\n"
      "# scaling = none (default)\n"
      "# seq_len = 0 (default)\n";
  const result check = run_cli({"check", "--head-dim", "8"});
  CHECK(check.out.starts_with(header + "\nlaws on "));
  const result decay = run_cli({"decay", "--head-dim", "8", "--max-distance", "4"});
  CHECK(decay.out.starts_with(header + "\nRoFormer decay bound"));
  const result decay_csv = run_cli({"decay", "--head-dim", "8", "--max-distance", "4", "--csv"});
  CHECK(decay_csv.out.starts_with(header + "distance,bound,window_mean\n0,2.5,"));
  const std::string json_line =
      R"({"config": {"head_dim": {"value": 8, "source": "flag --head-dim"}, )"
      R"("rotary_dim": {"value": 8, "source": "default: head_dim"}, )"
      R"("base": {"value": 10000, "source": "default"}, )"
      R"("layout": {"value": "half", "source": "default"}, )"
      R"("scaling": {"value": "none", "source": "default"}, )"
      R"("seq_len": {"value": 0, "source": "default"}},)";
  for (const std::vector<std::string_view>& args : std::vector<std::vector<std::string_view>>{
           {"dials", "--head-dim", "8", "--positions", "100"},
           {"check", "--head-dim", "8", "--format", "json"},
           {"decay", "--head-dim", "8", "--max-distance", "4", "--format", "json"},
           {"freqs", "--head-dim", "8"},
           {"table", "--head-dim", "8", "--positions", "0:1"}}) {
    INFO(args[0]);
    const result r = run_cli(args);
    CHECK(config_line(r.out) == json_line);
    CHECK_NOTHROW(json::parse(r.out));
  }
  const json acc = config_of(run_cli({"accuracy", "--head-dim", "8", "--positions", "5"}));
  CHECK(acc.at("head_dim") == json::parse(R"({"value": 8, "source": "flag --head-dim"})"));
  const json ramp = config_of(run_cli({"ramp", "--head-dim", "8", "--scaling", "llama3", "--factor",
                                       "8", "--original-max", "8192"}));
  CHECK(ramp.at("low_freq_factor") == json::parse(R"({"value": 1, "source": "default"})"));
  CHECK(ramp.at("high_freq_factor") == json::parse(R"({"value": 4, "source": "default"})"));
}

TEST_CASE("echo: alibi and sinusoidal echo their own parameters", "[echo]") {
  CHECK(config_line(run_cli({"alibi", "--heads", "4", "--bloom"}).out) ==
        R"({"config": {"heads": {"value": 4, "source": "flag --heads"}, )"
        R"("length": {"value": 0, "source": "default"}, )"
        R"("variant": {"value": "causal", "source": "default"}, )"
        R"("slopes_kind": {"value": "bloom", "source": "flag --bloom"}},)");
  CHECK(config_line(run_cli({"sinusoidal", "--head-dim", "6", "--positions", "3", "--base", "500",
                             "--layout", "split"})
                        .out) == R"({"config": {"dim": {"value": 6, "source": "flag --head-dim"}, )"
                                 R"("positions": {"value": 3, "source": "flag --positions"}, )"
                                 R"("layout": {"value": "split", "source": "flag --layout"}, )"
                                 R"("base": {"value": 500, "source": "flag --base"}, )"
                                 R"("padding_idx": {"value": null, "source": "default"}},)");
  const result csv = run_cli(
      {"alibi", "--heads", "2", "--positions", "1", "--variant", "symmetric", "--format", "csv"});
  CHECK(csv.out ==
        "# heads = 2 (flag --heads)\n"
        "# length = 1 (flag --positions)\n"
        "# variant = symmetric (flag --variant)\n"
        "# slopes_kind = reference (default)\n"
        "head,slope,query,key,bias\n"
        "0,0.0625,0,0,0\n"
        "1,0.00390625,0,0,0\n");
  const result text = run_cli({"sinusoidal", "--head-dim", "2", "--positions", "1", "--padding-idx",
                               "0", "--format", "text"});
  CHECK(text.out ==
        "# dim = 2 (flag --head-dim)\n"
        "# positions = 1 (flag --positions)\n"
        "# layout = paper (default)\n"
        "# base = 10000 (default)\n"
        "# padding_idx = 0 (flag --padding-idx)\n"
        "\n"
        "position  column             value\n"
        "       0       0                 0\n"
        "       0       1                 0\n");
}

TEST_CASE("echo: emit's comment, a file name with */ in it", "[echo]") {
  const scratch_file f("c.json", R"({"head_dim": 8, "rope_theta": 500.0})", "e*");
  const result r = run_cli({"emit", "--lang", "c", "--positions", "2", "--hf-config", f.path()});
  REQUIRE(r.status == 0);
  const std::string& h = r.out;
  const std::string shown = f.path().substr(0, f.path().find("e*/")) + "e* /c.json";
  CHECK(h.find(" *   head_dim = 8 (config " + shown + " head_dim)\n") != std::string::npos);
  CHECK(h.find(" *   base = 500 (config " + shown + " rope_theta)\n") != std::string::npos);
  // The comment ends after the echo, not inside it.
  CHECK(h.find("*/") > h.find(" *   keys not used (config " + shown + "): (none)\n"));
}

TEST_CASE("echo: layers, the config class's defaults and the per-layer keys", "[echo]") {
  const std::string p = posenc_test::tools_data("gemma3_4b.json");
  const std::string C = "config " + p + " ";
  const json want = {
      {"head_dim", {{"value", 256}, {"source", "default: Gemma3TextConfig"}}},
      {"rotary_dim", {{"value", 256}, {"source", "default: head_dim"}}},
      {"base", {{"value", 1000000}, {"source", "default: Gemma3TextConfig"}}},
      {"layout", {{"value", "half"}, {"source", "default"}}},
      {"scaling", {{"value", "linear"}, {"source", C + "text_config.rope_scaling.rope_type"}}},
      {"factor", {{"value", 8}, {"source", C + "text_config.rope_scaling.factor"}}},
      {"rope_local_base_freq", {{"value", 10000}, {"source", "default: Gemma3TextConfig"}}},
      {"keys",
       {{"source", "config " + p},
        {"used",
         {"text_config", "text_config.hidden_size", "text_config.model_type",
          "text_config.num_attention_heads", "text_config.rope_scaling",
          "text_config.rope_scaling.factor", "text_config.rope_scaling.rope_type",
          "text_config.num_hidden_layers", "text_config.sliding_window"}},
        {"not_used",
         {"architectures", "mm_tokens_per_image", "model_type", "text_config.intermediate_size"}}}},
  };
  CHECK(config_of(run_cli({"layers", "--hf-config", p})) == want);
  if (posenc::cli::presets_available()) {
    const json preset = config_of(run_cli({"layers", "--preset", "gemma-3-4b"}));
    CHECK(preset.at("head_dim") == json::parse(R"({"value": 256, "source": "preset gemma-3-4b"})"));
    CHECK(preset.at("rope_local_base_freq") ==
          json::parse(R"({"value": 10000, "source": "preset gemma-3-4b"})"));
  }
}

TEST_CASE("echo: accuracy's JSON has the same first line", "[echo]") {
  const result r =
      run_cli({"accuracy", "--head-dim", "8", "--positions", "5:6", "--base", "0.5e6"});
  REQUIRE(r.status == 0);
  CHECK(config_line(r.out) ==
        R"({"config": {"head_dim": {"value": 8, "source": "flag --head-dim"}, )"
        R"("rotary_dim": {"value": 8, "source": "default: head_dim"}, )"
        R"("base": {"value": 500000, "source": "flag --base"}, )"
        R"("layout": {"value": "half", "source": "default"}, )"
        R"("scaling": {"value": "none", "source": "default"}, )"
        R"("seq_len": {"value": 0, "source": "default"}},)");
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(r.out);
  CHECK(j.begin().key() == "config");
  CHECK(j.at("positions").size() == 1u);
}

TEST_CASE("echo: an unknown key in v5 rope_parameters is warned about and listed", "[echo]") {
  const scratch_file f("v5.json", R"({"head_dim": 32, "rope_parameters": {"rope_type": "default",
                                      "rope_theta": 20000.0, "rope_wobble": 2}})");
  const std::string& p = f.path();
  const result r = run_cli({"freqs", "--hf-config", p, "--format", "csv"});
  REQUIRE(r.status == 0);
  CHECK(r.err == "posenc: warning: " + p + ": rope key rope_parameters.rope_wobble is not used\n");
  const std::vector<std::string> lines = lines_of(r.out);
  REQUIRE(lines.size() == 8u + 1u + 16u);
  CHECK(lines[2] == "# base = 20000 (config " + p + " rope_parameters.rope_theta)");
  CHECK(lines[4] == "# scaling = none (config " + p + " rope_parameters.rope_type)");
  CHECK(lines[6] == "# keys used (config " + p +
                        "): head_dim rope_parameters rope_parameters.rope_theta "
                        "rope_parameters.rope_type");
  CHECK(lines[7] == "# keys not used (config " + p + "): rope_parameters.rope_wobble");
  CHECK(lines[8] == "i,inv_freq,inv_freq_f64");
}

TEST_CASE("echo: entropy and t5-bias", "[echo]") {
  const result e =
      run_cli({"entropy", "--head-dim", "8", "--lengths", "16,32", "--samples", "2",
               "--temperature", "log-n", "--training-length", "16", "--format", "csv"});
  REQUIRE(e.status == 0);
  CHECK(
      e.out.starts_with("# head_dim = 8 (flag --head-dim)\n"
                        "# rotary_dim = 8 (default: head_dim)\n"
                        "# base = 10000 (default)\n"
                        "# layout = half (default)\n"
                        "# scaling = none (default)\n"
                        "# seq_len = 0 (default)\n"
                        "# samples = 2 (flag --samples)\n"
                        "# seed = 1 (default)\n"
                        "# temperature = log-n (flag --temperature)\n"
                        "# training_length = 16 (flag --training-length)\n"
                        "# lengths = 16..32 (2 lengths) (flag --lengths)\n"
                        "length,log_length,"));
  if (posenc::cli::presets_available()) {
    const json scout =
        config_of(run_cli({"entropy", "--preset", "llama-4-scout", "--lengths", "16", "--samples",
                           "1", "--temperature", "llama4", "--format", "json"}));
    CHECK(scout.at("floor_scale") ==
          json::parse(R"({"value": 8192, "source": "preset llama-4-scout"})"));
    CHECK(scout.at("head_dim") ==
          json::parse(R"({"value": 128, "source": "preset llama-4-scout"})"));
  }
  CHECK(config_line(run_cli({"t5-bias", "--num-buckets", "8", "--max-distance", "8", "--causal",
                             "--relative-positions", "0:1"})
                        .out) ==
        R"({"config": {"num_buckets": {"value": 8, "source": "flag --num-buckets"}, )"
        R"("max_distance": {"value": 8, "source": "flag --max-distance"}, )"
        R"("direction": {"value": "causal", "source": "flag --causal"}, )"
        R"("log": {"value": "hf-float32", "source": "default"}},)");
  CHECK(run_cli({"t5-bias", "--relative-positions", "0:1", "--format", "text"})
            .out.starts_with("# num_buckets = 32 (default)\n"
                             "# max_distance = 128 (default)\n"
                             "# direction = bidirectional (default)\n"
                             "# log = hf-float32 (default)\n"
                             "\n"
                             "T5 buckets, 32 buckets"));
}
