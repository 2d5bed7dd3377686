// posenc layers (tools/cli/layers.cpp): the per-layer plan from a model preset and from a
// config.json, against the layer lists the published configs imply, written out here; the
// config classes' defaults for keys a checkpoint leaves unset; errors.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "support.hpp"

using posenc_test::cli_result;
using posenc_test::lines_of;
using posenc_test::run_cli;
using posenc_test::split;
using posenc_test::tools_data;

namespace {

// The csv rows of `layers`: layer,encoding,attention,table,temperature_tuning.
std::vector<std::vector<std::string>> rows_of(const cli_result& r) {
  std::vector<std::vector<std::string>> out;
  const std::vector<std::string> lines = lines_of(posenc_test::without_echo(r.out));
  REQUIRE(!lines.empty());
  CHECK(lines[0] == "layer,encoding,attention,table,temperature_tuning");
  for (std::size_t i = 1; i < lines.size(); ++i) out.push_back(split(lines[i], ','));
  return out;
}

std::vector<std::uint32_t> layers_where(const std::vector<std::vector<std::string>>& rows,
                                        std::size_t column, const std::string& value) {
  std::vector<std::uint32_t> out;
  for (const auto& row : rows)
    if (row.at(column) == value) out.push_back(static_cast<std::uint32_t>(std::stoul(row[0])));
  return out;
}

const std::vector<std::uint32_t> gemma_4b_global{5, 11, 17, 23, 29};
const std::vector<std::uint32_t> scout_nope{3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47};

void check_gemma_4b(const cli_result& r) {
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto rows = rows_of(r);
  REQUIRE(rows.size() == 34);
  CHECK(layers_where(rows, 2, "full_attention") == gemma_4b_global);
  CHECK(layers_where(rows, 3, "1") == gemma_4b_global);  // the global table, second
  CHECK(layers_where(rows, 3, "0").size() == 29);
  CHECK(layers_where(rows, 1, "rope").size() == 34);
  CHECK(layers_where(rows, 4, "1").empty());
}

void check_scout(const cli_result& r) {
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto rows = rows_of(r);
  REQUIRE(rows.size() == 48);
  CHECK(layers_where(rows, 1, "nope") == scout_nope);
  CHECK(layers_where(rows, 2, "full_attention") == scout_nope);
  CHECK(layers_where(rows, 3, "") == scout_nope);
  CHECK(layers_where(rows, 4, "1") == scout_nope);
  CHECK(layers_where(rows, 2, "chunked_attention").size() == 36);
}

}  // namespace

TEST_CASE("tools/layers: model presets", "[layers]") {
  check_gemma_4b(run_cli({"layers", "--preset", "gemma-3-4b", "--format", "csv"}));
  check_scout(run_cli({"layers", "--preset", "llama-4-scout", "--format", "csv"}));

  // JSON: the tables and the temperature data.
  const cli_result r = run_cli({"layers", "--preset", "gemma-3-4b"});
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("num_hidden_layers") == 34);
  REQUIRE(j.at("tables").size() == 2);
  CHECK(j["tables"][0].at("base") == 10000.0);
  CHECK(j["tables"][0].at("scaling") == "none");
  CHECK(j["tables"][1].at("base") == 1000000.0);
  CHECK(j["tables"][1].at("scaling") == "linear");
  CHECK(j["tables"][1].at("factor") == 8.0);
  CHECK(j["tables"][1].at("head_dim") == 256);
  CHECK(j.at("layers").size() == 34);
  CHECK(j["layers"][5].at("attention") == "full_attention");
  CHECK(j["layers"][5].at("table") == 1);

  const cli_result s = run_cli({"layers", "--preset", "llama-4-scout"});
  REQUIRE(s.status == 0);
  const auto k = nlohmann::json::parse(s.out);
  REQUIRE(k.at("tables").size() == 1);
  CHECK(k["tables"][0].at("layout") == "interleaved");
  CHECK(k["tables"][0].at("scaling") == "llama3");
  CHECK(k.at("attention_temperature").at("attn_temperature_tuning") == true);
  CHECK(k["attention_temperature"].at("floor_scale") == 8192.0);
  CHECK(k["attention_temperature"].at("attn_scale") == 0.1);
  CHECK(k["layers"][3].at("table").is_null());

  // Text: one line per layer after the header.
  const cli_result t = run_cli({"layers", "--preset", "qwen2-vl-7b", "--format", "text"});
  REQUIRE(t.status == 0);
  const auto lines = lines_of(posenc_test::without_echo(t.out));
  REQUIRE(lines.size() == 4 + 28);
  CHECK(lines[0] == "28 layers, 1 table");
  CHECK(lines[2] == "M-RoPE: mrope_section 16, 24, 24 (temporal, height, width pairs), contiguous");
  CHECK(lines[4].starts_with("0      mrope"));
}

// M-RoPE from a config.json: the rope dict's mrope_section (and Qwen3-VL's mrope_interleaved) make
// the same plan as the model preset. The files are excerpts of the published config.json files
// (the keys of the text model, values unchanged):
//   qwen2_vl_7b.json    https://huggingface.co/Qwen/Qwen2-VL-7B-Instruct/blob/main/config.json
//   qwen2_5_vl_7b.json  https://huggingface.co/Qwen/Qwen2.5-VL-7B-Instruct/blob/main/config.json
//   qwen3_vl_8b.json    https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct/blob/main/config.json
// Their mrope_section [16, 24, 24] (Qwen2-VL, Qwen2.5-VL) and [24, 20, 20] with
// "mrope_interleaved": true (Qwen3-VL) are written out below, not taken from the tool.
TEST_CASE("tools/layers: M-RoPE from config.json, as the model presets", "[layers][mrope]") {
  const auto plan_of = [](const cli_result& r) {
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    nlohmann::json j = nlohmann::json::parse(r.out);
    nlohmann::json config = j.at("config");
    j.erase("config");
    return std::pair{j, config};
  };
  const nlohmann::json qwen2_multi_axis =
      nlohmann::json::parse(R"({"form": "mrope", "mrope_section": [16, 24, 24],
                                "mrope_interleaved": false})");
  for (const auto& [file, preset] : std::vector<std::pair<std::string, std::string>>{
           {"qwen2_vl_7b.json", "qwen2-vl-7b"}, {"qwen2_5_vl_7b.json", "qwen2.5-vl-7b"}}) {
    INFO(file);
    const std::string path = tools_data(file);
    const auto [from_file, file_echo] = plan_of(run_cli({"layers", "--hf-config", path}));
    const auto [from_preset, preset_echo] = plan_of(run_cli({"layers", "--preset", preset}));
    CHECK(from_file == from_preset);
    CHECK(from_file.at("multi_axis") == qwen2_multi_axis);
    CHECK(from_file.at("num_hidden_layers") == 28);
    REQUIRE(from_file.at("tables").size() == 1);
    CHECK(from_file["tables"][0].at("head_dim") == 128);  // 3584 / 28
    CHECK(from_file["tables"][0].at("base") == 1000000.0);
    for (const auto& layer : from_file.at("layers")) CHECK(layer.at("encoding") == "mrope");
    CHECK(file_echo.at("mrope_section") ==
          nlohmann::json::parse(R"({"value": [16, 24, 24], "source": "config )" + path +
                                R"( rope_scaling.mrope_section"})"));
    CHECK(file_echo.at("mrope_interleaved") ==
          nlohmann::json::parse(R"({"value": false, "source": "default"})"));
    CHECK(
        preset_echo.at("mrope_section") ==
        nlohmann::json::parse(R"({"value": [16, 24, 24], "source": "preset )" + preset + R"("})"));
    // CSV and text carry the section too: in the echo, and (text) in the plan's M-RoPE line.
    const cli_result csv = run_cli({"layers", "--hf-config", path, "--format", "csv"});
    REQUIRE(csv.status == 0);
    CHECK(csv.out.find("# mrope_section = 16,24,24 (config " + path +
                       " rope_scaling.mrope_section)\n") != std::string::npos);
    CHECK(
        posenc_test::without_echo(
            run_cli({"layers", "--hf-config", path, "--format", "text"}).out) ==
        posenc_test::without_echo(run_cli({"layers", "--preset", preset, "--format", "text"}).out));
  }

  // Qwen3-VL: the sections interleave across the pairs.
  const std::string q3 = tools_data("qwen3_vl_8b.json");
  const auto [plan, echo] = plan_of(run_cli({"layers", "--hf-config", q3}));
  CHECK(plan.at("multi_axis") ==
        nlohmann::json::parse(R"({"form": "mrope", "mrope_section": [24, 20, 20],
                                  "mrope_interleaved": true})"));
  CHECK(plan.at("num_hidden_layers") == 36);
  CHECK(plan["tables"][0].at("base") == 5000000.0);
  CHECK(echo.at("mrope_interleaved") ==
        nlohmann::json::parse(R"({"value": true, "source": "config )" + q3 +
                              R"( text_config.rope_scaling.mrope_interleaved"})"));
  const auto text = lines_of(
      posenc_test::without_echo(run_cli({"layers", "--hf-config", q3, "--format", "text"}).out));
  REQUIRE(text.size() > 2);
  CHECK(text[2] == "M-RoPE: mrope_section 24, 20, 20 (temporal, height, width pairs), interleaved");

  // A 1-D model has no multi-axis part.
  CHECK(plan_of(run_cli({"layers", "--preset", "gemma-3-4b"})).first.at("multi_axis").is_null());
}

TEST_CASE("tools/layers: config.json, with the config classes' defaults", "[layers]") {
  // google/gemma-3-4b-it's text_config leaves head_dim, rope_theta, rope_local_base_freq and
  // sliding_window_pattern to Gemma3TextConfig: 256, 1e6, 1e4, 6.
  const cli_result g =
      run_cli({"layers", "--hf-config", tools_data("gemma3_4b.json"), "--format", "csv"});
  check_gemma_4b(g);
  CHECK(g.err.empty());
  const cli_result gj = run_cli({"layers", "--hf-config", tools_data("gemma3_4b.json")});
  const auto j = nlohmann::json::parse(gj.out);
  CHECK(j["tables"][0].at("base") == 10000.0);
  CHECK(j["tables"][1].at("base") == 1000000.0);
  CHECK(j["tables"][1].at("head_dim") == 256);

  // Llama-4 Scout's text_config: no_rope_layers [] (derived from interval 4), the temperature
  // written as 4.
  const cli_result s =
      run_cli({"layers", "--hf-config", tools_data("llama4_scout.json"), "--format", "csv"});
  check_scout(s);
  CHECK(s.err.empty());
  const auto k = nlohmann::json::parse(
      run_cli({"layers", "--hf-config", tools_data("llama4_scout.json")}).out);
  CHECK(k["tables"][0].at("layout") == "interleaved");
  CHECK(k["tables"][0].at("factor") == 16.0);

  // A v4 Gemma-3 file with rope_local_base_freq: the sliding table takes it, and nothing is
  // warned about.
  const std::string dir = SCRATCH_DIR;
  const std::string v4 = dir + "/layers_gemma3_v4.json";
  {
    std::ofstream f(v4);
    f << R"({"model_type": "gemma3_text", "head_dim": 128, "hidden_size": 5376,
             "num_attention_heads": 32, "num_hidden_layers": 62, "rope_theta": 1000000.0,
             "rope_local_base_freq": 20000.0, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
             "sliding_window": 1024, "sliding_window_pattern": 6})";
  }
  const cli_result v = run_cli({"layers", "--hf-config", v4});
  INFO(v.err);
  REQUIRE(v.status == 0);
  CHECK(v.err.empty());
  const auto vj = nlohmann::json::parse(v.out);
  CHECK(vj["tables"][0].at("base") == 20000.0);
  CHECK(vj["tables"][0].at("head_dim") == 128);
  CHECK(vj.at("layers").size() == 62);
  CHECK(vj["layers"][59].at("attention") == "full_attention");
  CHECK(vj["layers"][60].at("attention") == "sliding_attention");

  // A v5 file: layer_types as listed.
  const std::string v5 = dir + "/layers_gemma3_v5.json";
  {
    std::ofstream f(v5);
    f << R"({"model_type": "gemma3_text", "head_dim": 64, "num_attention_heads": 4,
             "hidden_size": 256, "num_hidden_layers": 3,
             "layer_types": ["full_attention", "sliding_attention", "full_attention"],
             "rope_parameters": {
               "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
               "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
             "sliding_window": 512})";
  }
  const cli_result w = run_cli({"layers", "--hf-config", v5, "--format", "csv"});
  INFO(w.err);
  REQUIRE(w.status == 0);
  const auto rows = rows_of(w);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0][2] == "full_attention");
  CHECK(rows[0][3] == "0");  // the global table first here
  CHECK(rows[1][2] == "sliding_attention");
  CHECK(rows[1][3] == "1");
}

TEST_CASE("tools/layers: errors", "[layers]") {
  const std::string dir = SCRATCH_DIR;
  auto write = [&](const std::string& name, const std::string& text) {
    const std::string p = dir + "/" + name;
    std::ofstream(p) << text;
    return p;
  };
  struct error_case {
    std::vector<std::string> args;
    int status;
    std::string message;  // a part of the one line on stderr
  };
  const std::vector<error_case> cases = {
      {{"layers", "--preset", "no-such-model"}, 2, "unknown model preset 'no-such-model'"},
      {{"layers", "--preset", "llama-3.1-8b"}, 2, "without a layer count"},
      {{"layers"}, 2, "layers needs --preset NAME or --hf-config FILE"},
      {{"layers", "--preset", "gemma-3-4b", "--base", "500000"},
       2,
       "posenc: --base is not a flag of layers (see posenc help layers)"},
      {{"layers", "--hf-config", tools_data("gemma3_v4.json")}, 1, "num_hidden_layers is missing"},
      {{"layers", "--hf-config",
        write("layers_short_list.json",
              R"({"model_type": "llama4_text", "head_dim": 64, "num_hidden_layers": 4,
                  "no_rope_layers": [1, 1, 0], "rope_theta": 500000.0})")},
       1,
       "posenc: no_rope_layers must be empty or have num_hidden_layers entries"},
      {{"layers", "--hf-config",
        write("layers_bad_flag.json",
              R"({"head_dim": 64, "num_hidden_layers": 2, "no_rope_layers": [1, 2]})")},
       1,
       "no_rope_layers[1] must be 0 (NoPE) or 1 (RoPE)"},
      {{"layers", "--hf-config",
        write("layers_bad_type.json",
              R"({"head_dim": 64, "num_hidden_layers": 1, "layer_types": ["global"]})")},
       1,
       "layer_types[0] must be"},
      {{"layers", "--hf-config",
        write("layers_no_window.json",
              R"({"head_dim": 64, "num_hidden_layers": 2,
                  "layer_types": ["sliding_attention", "full_attention"]})")},
       1,
       "posenc: sliding layers need sliding_window > 0"},
      // M-RoPE: the sections must cover the rotary pairs (16 + 24 + 20 = 60, not 128 / 2).
      {{"layers", "--hf-config",
        write("layers_mrope_sum.json",
              R"({"head_dim": 128, "num_hidden_layers": 2,
                  "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 20]}})")},
       1,
       "posenc: mrope_section must sum to rotary_dim/2 ("},
      {{"layers", "--hf-config",
        write("layers_mrope_two.json",
              R"({"head_dim": 128, "num_hidden_layers": 2,
                  "rope_scaling": {"type": "mrope", "mrope_section": [32, 32]}})")},
       1,
       "rope_scaling.mrope_section must be a list of 3 non-negative integers"},
      {{"layers", "--hf-config",
        write("layers_mrope_interleaved_alone.json",
              R"({"head_dim": 128, "num_hidden_layers": 2,
                  "rope_scaling": {"rope_type": "default", "mrope_interleaved": true}})")},
       1,
       "mrope_interleaved needs mrope_section"},
  };
  for (const error_case& c : cases) {
    INFO(c.args.back());
    const cli_result r = run_cli(c.args);
    CHECK(r.status == c.status);
    CHECK(r.out.empty());
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK(lines_of(r.err).size() == 1);
  }
}
