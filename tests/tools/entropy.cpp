// `posenc entropy` in-process (run()):
// - a literal value: head_dim 2 (one pair, inv_freq 1), one sample, seed 7, where the logits are
//   z_r = ((q0 k0 + q1 k1) cos r + (q0 k1 - q1 k0) sin r) / sqrt(2), r = 0..L-1 (entropy.hpp's
//   estimator with the query at L - 1). The expected entropies were computed by a separate
//   Python script from the generator as docs/analysis.md describes it (splitmix64, Box-Muller),
//   and the test computes them again here in long double from its own copy of the generator;
// - laws on the acceptance command (llama-3.1-8b, 1k:128k): every entropy in (0, log L], log L
//   itself, the llama4 and log-n temperatures never above the untempered curve (the entropy of
//   beta z falls as beta grows: dH/dbeta = -beta Var_p(z)), equal to it where the factor is 1,
//   and their query scale against HF's formulas written out here;
// - csv, json and text agree; the SVG plot is written with its series (tools/svg checks every
//   point of it against the CSV);
// - every argument error: one line, nothing on stdout, exit 2 (usage) or 1 (the rest).
//
// Tolerances: the literal entropies to 1e-14 absolute (the tool's sums run in double over at most
// 5 terms; softmax_entropy_error is ~1e-15 here); the temperature's factor to 4 ulp of the exact
// formula (the tool rounds a double-double once; std::log is within an ulp or so).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "support.hpp"

#include <cstdio>

namespace {
using json = nlohmann::json;
using posenc_test::run_cli;
using result = posenc_test::cli_result;

void check_error(std::vector<std::string_view> args, int status, std::string_view needle) {
  const result r = run_cli(args);
  std::string shown;
  for (auto a : args) shown += std::string(a) + " ";
  INFO("args: " << shown << "\nstderr: " << r.err);
  CHECK(r.status == status);
  CHECK(r.out.empty());
  CHECK(r.err.find(needle) != std::string::npos);
  CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
}

json run_json(std::vector<std::string_view> args) {
  args.push_back("--format");
  args.push_back("json");
  const result r = run_cli(args);
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  return json::parse(r.out);
}

// The generator of docs/analysis.md ("Attention entropy"), written out again: splitmix64 from
// seed ^ (0xd1b54a32d192ed03 * (sample + 1)), two draws per Box-Muller pair.
std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
std::vector<double> normals(std::uint64_t seed, std::uint64_t sample, std::size_t n) {
  std::uint64_t s = seed ^ (0xd1b54a32d192ed03ULL * (sample + 1));
  std::vector<double> out;
  while (out.size() < n) {
    const double u1 = (static_cast<double>(splitmix64(s) >> 11) + 1.0) * 0x1p-53;
    const double u2 = static_cast<double>(splitmix64(s) >> 11) * 0x1p-53;
    const double r = std::sqrt(-2.0 * std::log(u1));
    out.push_back(r * std::cos(6.283185307179586 * u2));
    out.push_back(r * std::sin(6.283185307179586 * u2));
  }
  return out;
}

// H of softmax(scale z) in long double, z_r for r = 0..L-1 as in the comment at the top.
double entropy_head_dim_2(const std::vector<double>& g, std::uint64_t L, long double scale = 1) {
  const long double a =
      static_cast<long double>(g[0]) * g[2] + static_cast<long double>(g[1]) * g[3];
  const long double b =
      static_cast<long double>(g[0]) * g[3] - static_cast<long double>(g[1]) * g[2];
  std::vector<long double> z(L);
  long double m = -1e300L;
  for (std::uint64_t r = 0; r < L; ++r) {
    const long double x = static_cast<long double>(r);
    z[r] = scale * (a * std::cos(x) + b * std::sin(x)) / std::sqrt(2.0L);
    m = std::fmax(m, z[r]);
  }
  long double sum = 0, weighted = 0;
  for (long double v : z) {
    sum += std::exp(v - m);
    weighted += std::exp(v - m) * (v - m);
  }
  return static_cast<double>(std::log(sum) - weighted / sum);
}

}  // namespace

TEST_CASE("tools/entropy: head_dim 2, one sample: the literal entropies", "[entropy]") {
  const json j = run_json(
      {"entropy", "--head-dim", "2", "--lengths", "1,2,3,5", "--samples", "1", "--seed", "7"});
  // From the Python script (double): L = 1, 2, 3, 5.
  const double literal[] = {0.0, 0.48333426202433505, 0.7185612918069108, 1.3085732847005027};
  const std::vector<double> g = normals(7, 0, 4);
  REQUIRE(j.at("points").size() == 4);
  const std::uint64_t lengths[] = {1, 2, 3, 5};
  for (std::size_t i = 0; i < 4; ++i) {
    const json& p = j.at("points")[i];
    INFO("L = " << lengths[i]);
    CHECK(p.at("length").get<std::uint64_t>() == lengths[i]);
    CHECK(std::fabs(p.at("scaled").get<double>() - literal[i]) <= 1e-14);
    CHECK(std::fabs(p.at("scaled").get<double>() - entropy_head_dim_2(g, lengths[i])) <= 1e-14);
    // No scaling: the unscaled curve is the same configuration.
    CHECK(p.at("unscaled").get<double>() == p.at("scaled").get<double>());
    CHECK(p.at("scaled_std_error").get<double>() == 0.0);  // one sample
  }
  CHECK(j.at("points")[0].at("scaled").get<double>() == 0.0);  // one key: no uncertainty
}

// A scratch file in the build directory.
std::string write_scratch(const std::string& name, const std::string& text) {
  const std::string path = std::string(SCRATCH_DIR) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST_CASE("tools/entropy --qk: given q and k", "[entropy]") {
  // q = (1, 2), k = (0.5, -1): from the Python script, L = 1, 2, 3, 5.
  const std::string qk = write_scratch("entropy_qk.json", R"({"q": [1, 2], "k": [0.5, -1]})");
  const json j = run_json({"entropy", "--head-dim", "2", "--lengths", "1,2,3,5", "--qk", qk,
                           "--temperature", "log-n", "--training-length", "2"});
  const double literal[] = {0.0, 0.6350759409337847, 1.0358553326361215, 0.977771076958168};
  const std::uint64_t lengths[] = {1, 2, 3, 5};
  const std::vector<double> g = {1, 2, 0.5, -1};
  CHECK(j.at("samples") == 1);
  CHECK(j.at("qk_file") == qk);
  for (std::size_t i = 0; i < 4; ++i) {
    const json& p = j.at("points")[i];
    const std::uint64_t L = lengths[i];
    INFO("L = " << L);
    CHECK(std::fabs(p.at("scaled").get<double>() - literal[i]) <= 1e-14);
    CHECK(std::fabs(p.at("scaled").get<double>() - entropy_head_dim_2(g, L)) <= 1e-14);
    CHECK(p.at("scaled_std_error").get<double>() == 0.0);
    // log-n with training length 2: s = log L / log 2 once L > 2.
    const long double s = L > 2 ? std::log(static_cast<long double>(L)) / std::log(2.0L) : 1.0L;
    CHECK(std::fabs(p.at("tempered").get<double>() - entropy_head_dim_2(g, L, s)) <= 1e-14);
  }
  // The q and k of the estimator's draw (seed 7, sample 0), given as a file, give the estimate
  // of that one draw bit for bit.
  const std::vector<double> n = normals(7, 0, 8);
  char text[512];
  std::snprintf(text, sizeof text,
                R"({"q": [%.17g, %.17g, %.17g, %.17g], "k": [%.17g, %.17g, %.17g, %.17g]})", n[0],
                n[1], n[2], n[3], n[4], n[5], n[6], n[7]);
  const std::string drawn = write_scratch("entropy_qk_drawn.json", text);
  const json a = run_json({"entropy", "--head-dim", "4", "--base", "100", "--scaling", "linear",
                           "--factor", "2", "--lengths", "3,17,100", "--qk", drawn});
  const json b =
      run_json({"entropy", "--head-dim", "4", "--base", "100", "--scaling", "linear", "--factor",
                "2", "--lengths", "3,17,100", "--samples", "1", "--seed", "7"});
  CHECK(a.at("points") == b.at("points"));
  // Errors.
  check_error({"entropy", "--head-dim", "2", "--lengths", "4", "--qk", "/nonexistent/qk.json"}, 1,
              "cannot open");
  const std::string short_q = write_scratch("entropy_qk_short.json", R"({"q": [1], "k": [1, 2]})");
  check_error({"entropy", "--head-dim", "2", "--lengths", "4", "--qk", short_q}, 1,
              "\"q\" must be 2 finite numbers (head_dim)");
  const std::string text_k =
      write_scratch("entropy_qk_text.json", R"({"q": [1, 2], "k": [1, "2"]})");
  check_error({"entropy", "--head-dim", "2", "--lengths", "4", "--qk", text_k}, 1,
              "\"k\" must be 2 finite numbers");
  const std::string extra =
      write_scratch("entropy_qk_extra.json", R"({"q": [1, 2], "k": [1, 2], "v": 1})");
  check_error({"entropy", "--head-dim", "2", "--lengths", "4", "--qk", extra}, 1,
              "unknown key \"v\" (q, k)");
  const std::string nested =
      write_scratch("entropy_qk_nested.json", R"({"q": [[1], 2], "k": [1, 2]})");
  check_error({"entropy", "--head-dim", "2", "--lengths", "4", "--qk", nested}, 1, "nested deeper");
  const std::string broken = write_scratch("entropy_qk_broken.json", R"({"q": [1, 2)");
  check_error({"entropy", "--head-dim", "2", "--lengths", "4", "--qk", broken}, 1,
              "not valid JSON");
  check_error({"entropy", "--head-dim", "2", "--lengths", "4", "--qk", qk, "--samples", "4"}, 2,
              "--samples and --seed are for random draws");
  check_error(
      {"entropy", "--head-dim", "2", "--lengths", "4", "--qk", qk, "--max-input-bytes", "5"}, 1,
      "is larger than 5 bytes");
}

TEST_CASE("tools/entropy: llama-3.1-8b 1k:128k, laws and temperatures", "[entropy][long]") {
  const json plain =
      run_json({"entropy", "--preset", "llama-3.1-8b", "--lengths", "1k:128k", "--samples", "16"});
  const json llama4 = run_json({"entropy", "--preset", "llama-3.1-8b", "--lengths", "1k:128k",
                                "--samples", "16", "--temperature", "llama4"});
  const json logn = run_json({"entropy", "--preset", "llama-3.1-8b", "--lengths", "1k:128k",
                              "--samples", "16", "--temperature", "log-n"});
  CHECK(plain.at("scaling") == "llama3");
  CHECK(plain.at("samples") == 16);
  CHECK(plain.at("temperature") == "none");
  CHECK(llama4.at("floor_scale") == 8192.0);
  CHECK(llama4.at("attn_scale") == 0.1);
  CHECK(logn.at("training_length") == 8192);  // llama3's original_max_position_embeddings
  REQUIRE(plain.at("points").size() == 8);
  for (std::size_t i = 0; i < 8; ++i) {
    const std::uint64_t L = std::uint64_t{1024} << i;
    const json& p = plain.at("points")[i];
    INFO("L = " << L);
    CHECK(p.at("length").get<std::uint64_t>() == L);
    CHECK(p.at("log_length").get<double>() == std::log(static_cast<double>(L)));
    CHECK(!p.contains("tempered"));
    for (const char* c : {"scaled", "unscaled"}) {
      const double h = p.at(c).get<double>();
      CHECK(h > 0.0);
      CHECK(h <= std::log(static_cast<double>(L)) + 1e-12);
      CHECK(p.at(std::string(c) + "_std_error").get<double>() > 0.0);
    }
    if (i > 0) {  // the survey's claim: the entropy grows with the context
      CHECK(p.at("scaled").get<double>() > plain.at("points")[i - 1].at("scaled").get<double>());
      CHECK(p.at("unscaled").get<double>() >
            plain.at("points")[i - 1].at("unscaled").get<double>());
    }
    // The same draws: the tempered commands' own scaled curve is this one.
    CHECK(llama4.at("points")[i].at("scaled") == p.at("scaled"));
    CHECK(logn.at("points")[i].at("unscaled") == p.at("unscaled"));

    // llama4 (HF Llama4TextAttention): s = log(floor((p + 1) / 8192) + 1) * 0.1 + 1 at p = L - 1.
    const double s4 = std::log(std::floor(static_cast<double>(L) / 8192.0) + 1.0) * 0.1 + 1.0;
    // log-n (Qwen QWenAttention logn_list): s = log(p + 1) / log(8192) past the training length.
    const double sn = L > 8192 ? std::log(static_cast<double>(L)) / std::log(8192.0) : 1.0;
    for (const auto& [j, s] : {std::pair<const json&, double>{llama4, s4}, {logn, sn}}) {
      const json& q = j.at("points")[i];
      const double scale = q.at("query_scale").get<double>();
      CHECK(std::fabs(scale - s) <= 4 * 0x1p-52 * s);
      const double tempered = q.at("tempered").get<double>();
      const double scaled = q.at("scaled").get<double>();
      if (s == 1.0) {
        CHECK(scale == 1.0);
        CHECK(tempered == scaled);
      } else {
        CHECK(tempered < scaled);
      }
    }
  }
}

TEST_CASE("tools/entropy: csv, text and svg", "[entropy]") {
  const std::vector<std::string_view> base = {"entropy", "--head-dim",        "64", "--lengths",
                                              "16,256",  "--samples",         "4",  "--temperature",
                                              "log-n",   "--training-length", "16"};
  const json j = run_json(base);
  std::vector<std::string_view> a = base;
  a.insert(a.end(), {"--format", "csv"});
  const result csv = run_cli(a);
  REQUIRE(csv.status == 0);
  const std::vector<std::string> rows = posenc_test::lines_of(posenc_test::without_echo(csv.out));
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] ==
        "length,log_length,scaled,scaled_std_error,unscaled,unscaled_std_error,tempered,"
        "tempered_std_error,query_scale");
  for (std::size_t i = 0; i < 2; ++i) {
    const std::vector<std::string> f = posenc_test::split(rows[i + 1], ',');
    const json& p = j.at("points")[i];
    REQUIRE(f.size() == 9);
    CHECK(std::stoull(f[0]) == p.at("length").get<std::uint64_t>());
    CHECK(std::stod(f[2]) == p.at("scaled").get<double>());
    CHECK(std::stod(f[6]) == p.at("tempered").get<double>());
    CHECK(std::stod(f[8]) == p.at("query_scale").get<double>());
  }
  // log-n at L = 256 with training length 16: log 256 / log 16 = 2 (exactly 2 after rounding).
  CHECK(j.at("points")[1].at("query_scale").get<double>() == 2.0);

  const result text = run_cli(std::vector<std::string_view>(base));  // text without --format
  REQUIRE(text.status == 0);
  CHECK(posenc_test::without_echo(text.out).find("expected attention entropy") == 0);
  CHECK(text.out.find("     256    5.545177") != std::string::npos);  // log 256 = 5.5451774...

  const std::string svg = std::string(SCRATCH_DIR) + "/entropy_test.svg";
  a = base;
  a.insert(a.end(), {"--svg", svg});
  const result plotted = run_cli(a);
  REQUIRE(plotted.status == 0);
  CHECK(plotted.out == text.out);
  std::ifstream f(svg);
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string s = ss.str();
  CHECK(s.find("<svg") != std::string::npos);
  CHECK(s.rfind("</svg>") != std::string::npos);
  for (const char* name :
       {"data-name=\"scaled\"", "data-name=\"unscaled\"", "data-name=\"tempered (log-n)\"",
        "data-name=\"log L (uniform attention)\""})
    CHECK(s.find(name) != std::string::npos);
}

// An M-RoPE model at its text positions (temporal = height = width) is 1-D RoPE of the same
// frequencies: Qwen2-VL-7B's head_dim 128 and rope_theta 1000000 (its config.json), the same
// draws, so the same entropies, bit for bit; the echo says which positions were analysed. A
// one-line slip that analysed one section's frequencies only, or refused the model, fails here.
TEST_CASE("tools/entropy: an M-RoPE model at its text positions", "[entropy]") {
  const auto data = [](const result& r) {
    REQUIRE(r.status == 0);
    return posenc_test::without_echo(r.out);
  };
  const std::vector<std::string_view> tail = {"--lengths", "64,1k",    "--samples",
                                              "4",         "--format", "csv"};
  std::vector<std::string_view> one_d = {"entropy", "--head-dim", "128", "--base", "1000000"};
  one_d.insert(one_d.end(), tail.begin(), tail.end());
  const std::string expected = data(run_cli(one_d));
  REQUIRE(posenc_test::lines_of(expected).size() == 3);
  const std::string config = posenc_test::tools_data("qwen2_vl_7b.json");
  for (const std::vector<std::string_view>& source :
       {std::vector<std::string_view>{"--preset", "qwen2-vl-7b"},
        std::vector<std::string_view>{"--hf-config", config}}) {
    std::vector<std::string_view> args = {"entropy"};
    args.insert(args.end(), source.begin(), source.end());
    args.insert(args.end(), tail.begin(), tail.end());
    const result r = run_cli(args);
    CHECK(data(r) == expected);
    CHECK(r.out.find("# positions = text tokens (M-RoPE streams equal: 1-D RoPE) (derived: "
                     "M-RoPE)\n") != std::string::npos);
    CHECK(r.out.find("# mrope_section = 16,24,24 (") != std::string::npos);
  }
}

// --hf-config of a Llama-4 config.json: --temperature llama4 takes its floor_scale and attn_scale
// (echoed with their keys), flags override them, and attn_temperature_tuning is echoed. The query
// scale is HF's (modeling_llama4.py, Llama4TextAttention.forward):
// s(p) = log(floor((p + 1) / floor_scale) + 1) * attn_scale + 1, written out here.
TEST_CASE("tools/entropy --hf-config: Llama-4's temperature keys", "[entropy]") {
  // Llama-4-Scout's text_config (tests/tools/data/llama4_scout.json, from
  // meta-llama/Llama-4-Scout-17B-16E config.json): "attn_temperature_tuning": 4 (true to HF),
  // "floor_scale": 8192, "attn_scale": 0.1.
  const std::string scout = posenc_test::tools_data("llama4_scout.json");
  const json s = run_json({"entropy", "--hf-config", scout, "--lengths", "8k,16k", "--samples", "2",
                           "--temperature", "llama4"});
  const json& config = s.at("config");
  CHECK(config.at("floor_scale") == json::parse(R"({"value": 8192, "source": "config )" + scout +
                                                R"( text_config.floor_scale"})"));
  CHECK(config.at("attn_scale") == json::parse(R"({"value": 0.1, "source": "config )" + scout +
                                               R"( text_config.attn_scale"})"));
  CHECK(config.at("attn_temperature_tuning") ==
        json::parse(R"({"value": true, "source": "config )" + scout +
                    R"( text_config.attn_temperature_tuning"})"));
  const json& used = config.at("keys").at("used");
  for (const char* key : {"text_config.floor_scale", "text_config.attn_scale",
                          "text_config.attn_temperature_tuning"}) {
    INFO(key);
    CHECK(std::find(used.begin(), used.end(), key) != used.end());
    CHECK(std::find(config["keys"].at("not_used").begin(), config["keys"]["not_used"].end(), key) ==
          config["keys"]["not_used"].end());
  }
  CHECK(s.at("floor_scale") == 8192.0);
  CHECK(s.at("attn_scale") == 0.1);
  // L = 16384: p = 16383, floor(16384 / 8192) = 2.
  CHECK(s.at("points").at(1).at("query_scale").get<double>() ==
        Approx(1.0 + 0.1 * std::log(3.0)).epsilon(1e-15));

  // Parameters other than the defaults show that the file's are taken: floor_scale 4096,
  // attn_scale 0.5; at L = 8192 s = log(floor(8192 / 4096) + 1) * 0.5 + 1 = 1 + 0.5 log 3.
  const std::string own = std::string(SCRATCH_DIR) + "/entropy_llama4_own.json";
  std::ofstream(own) << R"({"model_type": "llama4", "text_config": {"model_type": "llama4_text",
      "head_dim": 64, "rope_theta": 500000.0, "attn_temperature_tuning": false,
      "floor_scale": 4096, "attn_scale": 0.5}})";
  const json o = run_json({"entropy", "--hf-config", own, "--lengths", "8k", "--samples", "2",
                           "--temperature", "llama4"});
  CHECK(o.at("floor_scale") == 4096.0);
  CHECK(o.at("attn_scale") == 0.5);
  CHECK(o.at("points").at(0).at("query_scale").get<double>() ==
        Approx(1.0 + 0.5 * std::log(3.0)).epsilon(1e-15));
  CHECK(o.at("config").at("attn_temperature_tuning").at("value") == false);
  // Flags override the file: floor_scale 8192 gives floor(8192 / 8192) = 1, s = 1 + 0.5 log 2.
  const json f = run_json({"entropy", "--hf-config", own, "--lengths", "8k", "--samples", "2",
                           "--temperature", "llama4", "--floor-scale", "8192"});
  CHECK(f.at("config").at("floor_scale") ==
        json::parse(R"({"value": 8192, "source": "flag --floor-scale"})"));
  CHECK(f.at("config").at("attn_scale").at("source") ==
        "config " + own + " text_config.attn_scale");
  CHECK(f.at("points").at(0).at("query_scale").get<double>() ==
        Approx(1.0 + 0.5 * std::log(2.0)).epsilon(1e-15));
  // Without the Llama-4 temperature the file's floor_scale is not used (attn_temperature_tuning
  // is, echoed).
  const json n = run_json({"entropy", "--hf-config", own, "--lengths", "8k", "--samples", "2"});
  const json& not_used = n.at("config").at("keys").at("not_used");
  CHECK(std::find(not_used.begin(), not_used.end(), "text_config.floor_scale") != not_used.end());
  CHECK(n.at("config").at("attn_temperature_tuning").at("value") == false);
  CHECK(!n.at("config").contains("floor_scale"));

  // A value of the wrong type: one line naming the key.
  const std::string bad = std::string(SCRATCH_DIR) + "/entropy_llama4_bad.json";
  std::ofstream(bad) << R"({"text_config": {"head_dim": 64, "floor_scale": "8k"}})";
  check_error({"entropy", "--hf-config", bad, "--lengths", "1k", "--temperature", "llama4"}, 1,
              "text_config.floor_scale must be a number");
  std::ofstream(bad) << R"({"head_dim": 64, "attn_temperature_tuning": "yes"})";
  check_error({"entropy", "--hf-config", bad, "--lengths", "1k"}, 1,
              "attn_temperature_tuning must be a boolean or a number");
}

TEST_CASE("tools/entropy: argument errors", "[entropy]") {
  check_error({"entropy", "--head-dim", "64"}, 2, "entropy needs --lengths");
  for (const char* bad : {"", "0", "1k:foo", "8:4", "8M", "1k:8M", "1,1", "3,2", "1.5k", "k", "1K",
                          "4:", ":4", "1,,2", "5M"})
    check_error({"entropy", "--head-dim", "64", "--lengths", bad}, 2, "--lengths needs");
  // 65 lengths: too many (1:4M is 23 doublings and fine).
  std::string many;
  for (int i = 1; i <= 65; ++i) many += (i > 1 ? "," : "") + std::to_string(i);
  check_error({"entropy", "--head-dim", "64", "--lengths", many}, 2, "at most 64 lengths");
  check_error({"entropy", "--head-dim", "64", "--lengths", "1k", "--samples", "65537"}, 2,
              "--samples must be at most 65536");
  check_error({"entropy", "--head-dim", "64", "--lengths", "1k", "--samples", "0"}, 2,
              "--samples needs");
  check_error({"entropy", "--head-dim", "64", "--lengths", "1k", "--temperature", "hot"}, 2,
              "--temperature needs");
  check_error({"entropy", "--head-dim", "64", "--lengths", "1k", "--temperature", "log-n"}, 2,
              "needs --training-length");
  check_error({"entropy", "--head-dim", "64", "--lengths", "1k", "--floor-scale", "2"}, 2,
              "are for --temperature llama4");
  check_error({"entropy", "--head-dim", "64", "--lengths", "1k", "--temperature", "llama4",
               "--training-length", "8"},
              2, "--training-length is for --temperature log-n");
  check_error({"entropy", "--head-dim", "64", "--lengths", "1k", "--temperature", "llama4",
               "--floor-scale", "0.5"},
              1, "floor_scale >= 1");
  check_error({"entropy", "--head-dim", "64", "--lengths", "1k", "--temperature", "llama4",
               "--attn-scale", "-1"},
              1, "attn_scale >= 0");
  check_error({"entropy", "--head-dim", "64", "--lengths", "1k", "--positions", "0:4"}, 2,
              "--positions is not a flag of entropy");
  check_error({"freqs", "--head-dim", "64", "--lengths", "1k"}, 2,
              "--lengths is not a flag of freqs");
  check_error({"entropy", "--lengths", "1k"}, 2, "head dimension");
  check_error({"entropy", "--head-dim", "128", "--lengths", "4M", "--samples", "65536"}, 1,
              "beyond the limit");
  check_error({"entropy", "--head-dim", "64", "--lengths", "1k", "--work-limit", "1000"}, 1,
              "raise the budget with --work-limit N");
  check_error({"entropy", "--preset", "pixtral-12b", "--lengths", "1k"}, 1, "2-D axial RoPE");
  // Each length L is evaluated at seq_len L: --seq-len is not a flag of entropy, and its help
  // does not list it (the rope group's other flags it does).
  check_error({"entropy", "--head-dim", "64", "--lengths", "1k", "--seq-len", "4096"}, 2,
              "posenc: --seq-len is not a flag of entropy (see posenc help entropy)");
  check_error({"--seq-len", "4096", "entropy", "--head-dim", "64", "--lengths", "1k"}, 2,
              "posenc: --seq-len is not a flag of entropy (see posenc help entropy)");
  const result help = run_cli({"help", "entropy"});
  CHECK(help.status == 0);
  CHECK(help.out.find("\n  --seq-len") == std::string::npos);
  CHECK(help.out.find("\n  --max-position-embeddings") != std::string::npos);
}
