// tools/cli/run, compute and output in-process: JSON parses and equals the library's values bit for
// bit (a float printed with 9 significant digits reads back exactly); every table path equals
// math::sincos_of_product; CSV and text have the documented shape; errors write one line to err
// and nothing to out.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <posenc/frequencies/rope.hpp>
#include <posenc/math/angle.hpp>

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <streambuf>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/compute.hpp"
#include "cli/draft.hpp"
#include "cli/error.hpp"
#include "cli/output.hpp"
#include "cli/presets.hpp"
#include "cli/run.hpp"
#include "support.hpp"

using namespace posenc::cli;
using json = nlohmann::json;
using posenc::rope_config;
using posenc::rope_layout;

namespace {
using posenc_test::bits;
using posenc_test::count_lines;
using posenc_test::run_cli;
using result = posenc_test::cli_result;

// The float a JSON number printed by the tool stands for (nlohmann reads a double, which holds
// the decimal's float exactly enough: 9 digits round to the same float either way).
float as_float(const json& v) {
  return static_cast<float>(v.get<double>());
}

void check_freqs_json(const std::string& text, const rope_config& c, std::uint64_t seq_len = 0) {
  const json j = json::parse(text);
  REQUIRE(j.is_object());
  CHECK(j.size() == 5u);
  CHECK(j.at("config").is_object());
  CHECK(j.at("rotary_dim").get<std::uint32_t>() == c.rotary_dim);
  const json& f32 = j.at("inv_freq");
  const json& f64 = j.at("inv_freq_f64");
  REQUIRE(f32.size() == c.rotary_dim / 2);
  REQUIRE(f64.size() == c.rotary_dim / 2);
  for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i) {
    CHECK(bits(as_float(f32[i])) == bits(posenc::inv_freq<float>(c, i, seq_len)));
    CHECK(bits(f64[i].get<double>()) == bits(posenc::inv_freq<double>(c, i, seq_len)));
  }
  CHECK(bits(j.at("attention_factor").get<double>()) == bits(posenc::attention_factor(c)));
}

// Every entry of a table result equals sincos_of_product<float>.
void check_table(const table_result& t, const rope_config& c, std::uint64_t seq_len = 0) {
  const auto scale = posenc::attention_factor_dd(c);
  const std::uint64_t n = t.positions.last - t.positions.first;
  REQUIRE(t.pairs == c.rotary_dim / 2);
  REQUIRE(t.cos.size() == n * t.pairs);
  REQUIRE(t.sin.size() == n * t.pairs);
  std::uint64_t mismatches = 0;
  for (std::uint32_t i = 0; i < t.pairs; ++i) {
    const auto theta = posenc::inv_freq_dd(c, i, seq_len);
    for (std::uint64_t k = 0; k < n; ++k) {
      const auto v = posenc::math::sincos_of_product<float>(t.positions.first + k, theta, scale);
      if (bits(v.cos) != bits(t.cos[k * t.pairs + i]) ||
          bits(v.sin) != bits(t.sin[k * t.pairs + i]))
        ++mismatches;
    }
  }
  CHECK(mismatches == 0u);
}
}  // namespace

TEST_CASE("freqs JSON equals the library bit for bit", "[run]") {
  const result r = run_cli({"freqs", "--head-dim", "128", "--base", "10000"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  check_freqs_json(r.out, rope_config{128, 128, 10000.0, rope_layout::half, {}});

  // every scaling, through the flags
  struct scaled {
    std::vector<std::string_view> args;
    rope_config config;
    std::uint64_t seq_len;
  };
  static const double short_f[] = {1.0, 1.5, 2.0};
  static const double long_f[] = {2.0, 4.0, 8.0};
  const std::vector<scaled> cases = {
      {{"--head-dim", "64", "--rotary-dim", "32", "--scaling", "linear", "--factor", "4"},
       {64, 32, 10000.0, rope_layout::half, posenc::scaling::linear(4.0)},
       0},
      {{"--head-dim", "64", "--scaling", "ntk", "--factor", "2", "--base", "5e5"},
       {64, 64, 5e5, rope_layout::half, posenc::scaling::ntk(2.0)},
       0},
      {{"--head-dim", "128", "--scaling", "dynamic", "--factor", "2", "--max-position-embeddings",
        "4096", "--seq-len", "8192"},
       {128, 128, 10000.0, rope_layout::half, posenc::scaling::dynamic(2.0, 4096)},
       8192},
      {{"--head-dim", "64", "--base", "150000", "--scaling", "yarn", "--factor", "32",
        "--original-max", "4096", "--no-truncate"},
       {64, 64, 150000.0, rope_layout::half, posenc::scaling::yarn(32.0, 4096, 32, 1, false)},
       0},
      {{"--head-dim", "128", "--scaling", "yarn", "--factor", "40", "--original-max", "4096",
        "--mscale", "1", "--mscale-all-dim", "0.5", "--beta-fast", "16", "--beta-slow", "2"},
       {128, 128, 10000.0, rope_layout::half,
        posenc::scaling::yarn(40.0, 4096, 16, 2, true, 1.0, 0.5)},
       0},
      {{"--head-dim", "128", "--base", "500000", "--scaling", "llama3", "--factor", "8",
        "--original-max", "8192", "--low-freq-factor", "1", "--high-freq-factor", "4"},
       {128, 128, 5e5, rope_layout::half, posenc::scaling::llama3(8.0, 1.0, 4.0, 8192)},
       0},
      {{"--head-dim", "6", "--scaling", "longrope", "--original-max", "4096",
        "--max-position-embeddings", "131072", "--short-factor", "1,1.5,2", "--long-factor",
        "2,4,8", "--seq-len", "5000"},
       {6, 6, 10000.0, rope_layout::half, posenc::scaling::longrope(short_f, long_f, 4096, 131072)},
       5000},
      {{"--head-dim", "6", "--scaling", "longrope", "--original-max", "4096",
        "--max-position-embeddings", "131072", "--short-factor", "1,1.5,2", "--long-factor",
        "2,4,8", "--attention-factor", "1.25"},
       {6, 6, 10000.0, rope_layout::half,
        posenc::scaling::longrope(short_f, long_f, 4096, 131072, 1.25)},
       0},
  };
  for (const scaled& s : cases) {
    std::vector<std::string_view> args = {"freqs"};
    args.insert(args.end(), s.args.begin(), s.args.end());
    const result rs = run_cli(args);
    INFO(rs.err);
    REQUIRE(rs.status == 0);
    check_freqs_json(rs.out, s.config, s.seq_len);
  }
}

TEST_CASE("table JSON equals sincos_of_product with the attention factor", "[run]") {
  const rope_config c{64, 32, 10000.0, rope_layout::half, posenc::scaling::yarn(4.0, 2048)};
  const result r = run_cli({"table", "--head-dim", "64", "--rotary-dim", "32", "--scaling", "yarn",
                            "--factor", "4", "--original-max", "2048", "--positions", "100:110"});
  REQUIRE(r.status == 0);
  const json j = json::parse(r.out);
  CHECK(j.size() == 4u);
  const json& pos = j.at("positions");
  REQUIRE(pos.size() == 10u);
  const auto scale = posenc::attention_factor_dd(c);
  CHECK(posenc::attention_factor(c) > 1.0);
  for (std::size_t k = 0; k < 10; ++k) {
    CHECK(pos[k].get<std::uint64_t>() == 100 + k);
    REQUIRE(j.at("cos")[k].size() == 16u);
    REQUIRE(j.at("sin")[k].size() == 16u);
    for (std::uint32_t i = 0; i < 16; ++i) {
      const auto v =
          posenc::math::sincos_of_product<float>(100 + k, posenc::inv_freq_dd(c, i), scale);
      CHECK(bits(as_float(j.at("cos")[k][i])) == bits(v.cos));
      CHECK(bits(as_float(j.at("sin")[k][i])) == bits(v.sin));
    }
  }
}

TEST_CASE("every table path gives sincos_of_product's bits", "[run][compute]") {
  const rope_config c{128, 128, 500000.0, rope_layout::half,
                      posenc::scaling::llama3(8.0, 1.0, 4.0, 8192)};
  // from 0 (sincos_of_products in place), from a small offset (through a scratch run), far out
  // (one entry at a time), and at the top of the position range
  for (const position_range r :
       {position_range{0, 700}, position_range{300, 1000}, position_range{65536, 65600},
        position_range{4294967200, 4294967296}}) {
    INFO(r.first << ":" << r.last);
    check_table(compute_table(c, r, 0), c);
  }
  const rope_config dyn{64, 64, 10000.0, rope_layout::half, posenc::scaling::dynamic(2.0, 1024)};
  check_table(compute_table(dyn, {0, 100}, 4096), dyn, 4096);
}

TEST_CASE("table limits", "[run][compute]") {
  const rope_config c{128, 128, 10000.0, rope_layout::half, {}};
  CHECK(posenc_test::cli_error_message(exit_invalid,
                                       [&] {
                                         compute_table(c, {0, 262145}, 0);
                                       }) ==
        "posenc: the table would have 16777280 entries (positions x rotary_dim/2); at most "
        "16777216 per call");
  const result r = run_cli({"table", "--head-dim", "4096", "--positions", "0:100000"});
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(count_lines(r.err) == 1u);
}

TEST_CASE("CSV and text output", "[run][output]") {
  struct output_case {
    std::vector<std::string_view> args;
    std::string out;
  };
  const std::vector<output_case> cases = {
      {{"freqs", "--head-dim", "8", "--format", "csv"},
       "# head_dim = 8 (flag --head-dim)\n"
       "# rotary_dim = 8 (default: head_dim)\n"
       "# base = 10000 (default)\n"
       "# layout = half (default)\n"
       "# scaling = none (default)\n"
       "# seq_len = 0 (default)\n"
       "i,inv_freq,inv_freq_f64\n"
       "0,1,1\n"
       "1,0.100000001,0.10000000000000001\n"
       "2,0.00999999978,0.01\n"
       "3,0.00100000005,0.001\n"},
      {{"table", "--head-dim", "4", "--positions", "0:2", "--format", "csv"},
       "# head_dim = 4 (flag --head-dim)\n"
       "# rotary_dim = 4 (default: head_dim)\n"
       "# base = 10000 (default)\n"
       "# layout = half (default)\n"
       "# scaling = none (default)\n"
       "# seq_len = 0 (default)\n"
       "position,pair,cos,sin\n"
       "0,0,1,0\n"
       "0,1,1,0\n"
       "1,0,0.540302277,0.841470957\n"
       "1,1,0.999949992,0.00999983307\n"},
      {{"freqs", "--head-dim", "4", "--format", "text"},
       "# head_dim = 4 (flag --head-dim)\n"
       "# rotary_dim = 4 (default: head_dim)\n"
       "# base = 10000 (default)\n"
       "# layout = half (default)\n"
       "# scaling = none (default)\n"
       "# seq_len = 0 (default)\n"
       "\n"
       "rotary_dim        4\n"
       "attention_factor  1\n"
       "\n"
       "pair  inv_freq (float32)        inv_freq (float64)\n"
       "   0                   1                         1\n"
       "   1       0.00999999978                      0.01\n"},
      {{"table", "--head-dim", "4", "--positions", "9:11", "--format", "text", "--base", "1e4"},
       "# head_dim = 4 (flag --head-dim)\n"
       "# rotary_dim = 4 (default: head_dim)\n"
       "# base = 10000 (flag --base)\n"
       "# layout = half (default)\n"
       "# scaling = none (default)\n"
       "# seq_len = 0 (default)\n"
       "\n"
       "position  pair               cos               sin\n"
       "       9     0       -0.91113025       0.412118495\n"
       "       9     1       0.995952725      0.0898785517\n"
       "      10     0      -0.839071512       -0.54402113\n"
       "      10     1       0.995004177       0.099833414\n"},
  };
  for (const output_case& c : cases) {
    const result r = run_cli(c.args);
    REQUIRE(r.status == 0);
    CHECK(r.out == c.out);
  }
  CHECK(format_float(1e-5f) == "9.99999975e-06");
  CHECK(format_double(0.1) == "0.10000000000000001");
  CHECK(format_float(-0.0f) == "-0");
}

TEST_CASE("errors: one line on err, nothing on out", "[run]") {
  const std::vector<std::vector<std::string_view>> bad = {
      {},
      {"freqs"},
      {"freqs", "--foo"},
      {"freqs", "--head-dim", "12abc"},
      {"freqs", "--head-dim", "127"},
      {"freqs", "--head-dim", "128", "--base", "1"},
      {"freqs", "--head-dim", "128", "--scaling", "linear"},
      {"freqs", "--head-dim", "128", "--scaling", "yarn", "--factor", "2"},
      {"freqs", "--head-dim", "128", "--scaling", "yarn", "--factor", "2", "--original-max", "4096",
       "--beta-fast", "1"},
      {"freqs", "--head-dim", "4", "--scaling", "longrope", "--original-max", "2",
       "--max-position-embeddings", "4", "--short-factor", "1e-320,1", "--long-factor", "1,1"},
      {"freqs", "--head-dim", "4", "--scaling", "longrope", "--original-max", "2",
       "--max-position-embeddings", "4", "--short-factor", "1e-300,1", "--long-factor", "1,1"},
      {"table", "--head-dim", "4", "--scaling", "yarn", "--factor", "2", "--original-max", "8",
       "--attention-factor", "1e39", "--positions", "0:1"},
      {"freqs", "--hf-config", "/nonexistent/config.json"},
      {"freqs", "--preset", "no-such-model"},
      {"table", "--positions", "0:10"},
  };
  for (const auto& args : bad) {
    const result r = run_cli(args);
    INFO(r.err);
    CHECK(r.status != 0);
    CHECK(r.out.empty());
    CHECK(count_lines(r.err) == 1u);
    CHECK(r.err.starts_with("posenc: "));
    CHECK(r.err.back() == '\n');
  }
  CHECK(run_cli({"freqs", "--head-dim", "127"}).err ==
        std::string(posenc::message(posenc::rope_error::rotary_dim)) + "\n");
  CHECK(run_cli({"freqs", "--head-dim", "128", "--scaling", "linear"}).err ==
        "posenc: linear scaling needs a factor (--factor)\n");
}

namespace {
// An output that takes `room` bytes and then fails every write, counting the bytes offered after
// the first failure (what a command formats after stdout stopped taking it).
class full_output : public std::streambuf {
 public:
  explicit full_output(std::size_t room) : room_(room) {}
  std::size_t taken = 0;
  std::size_t offered_after_failure = 0;

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    const auto u = static_cast<std::size_t>(n);
    if (!failed_ && taken + u <= room_) {
      taken += u;
      return n;
    }
    if (failed_) offered_after_failure += u;
    failed_ = true;
    return 0;
  }

 private:
  std::size_t room_;
  bool failed_ = false;
};

result run_into(full_output& buf, const std::vector<std::string>& args) {
  std::ostream out(&buf);
  std::ostringstream err;
  const std::vector<std::string_view> views(args.begin(), args.end());
  const int status = run(views, out, err);
  return {status, "", err.str()};
}

// The names in `dir`.
std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    out.push_back(e.path().filename().string());
  std::ranges::sort(out);
  return out;
}
}  // namespace

TEST_CASE("a failed write to stdout ends the command at once, exit 1", "[run][output]") {
  // Formatted in full, this is about 60 MB of CSV; the command must stop within one 64 KiB piece
  // of the first failure.
  full_output buf(4096);
  const result r =
      run_into(buf, {"alibi", "--heads", "1", "--positions", "2048", "--format", "csv"});
  CHECK(r.status == exit_invalid);
  CHECK(r.err.starts_with("posenc: cannot write to standard output"));
  CHECK(count_lines(r.err) == 1u);
  CHECK(buf.offered_after_failure <= (std::size_t{1} << 17));
  for (const char* cmd : {"freqs", "table"}) {
    full_output small(16);
    std::vector<std::string> args{cmd, "--head-dim", "128"};
    if (std::string_view(cmd) == "table") args.insert(args.end(), {"--positions", "0:4096"});
    const result t = run_into(small, args);
    INFO(cmd << ": " << t.err);
    CHECK(t.status == exit_invalid);
    CHECK(t.err.starts_with("posenc: cannot write to standard output"));
    CHECK(small.offered_after_failure <= (std::size_t{1} << 17));
  }
}

TEST_CASE("--svg files appear only when the whole command succeeds", "[run][output]") {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("posenc_svg_staging_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string svg = (dir / "decay.svg").string();
  const std::vector<std::string> args{"decay", "--max-distance", "64", "--head-dim",
                                      "8",     "--svg",          svg};
  // stdout fails: no plot, and no temporary file either.
  full_output buf(0);
  const result failed = run_into(buf, args);
  CHECK(failed.status == exit_invalid);
  CHECK(names_in(dir).empty());
  // An existing file is left as it was.
  { std::ofstream(svg) << "old"; }
  full_output buf2(0);
  CHECK(run_into(buf2, args).status == exit_invalid);
  CHECK(names_in(dir) == std::vector<std::string>{"decay.svg"});
  {
    std::ifstream in(svg);
    std::string text;
    in >> text;
    CHECK(text == "old");
  }
  // Success: the plot replaces it, nothing else is left.
  const result ok = run_cli(std::vector<std::string>(args));
  CHECK(ok.status == 0);
  CHECK(names_in(dir) == std::vector<std::string>{"decay.svg"});
  CHECK(fs::file_size(svg) > 100u);
  fs::remove_all(dir);
}

TEST_CASE("help and version", "[run]") {
  result r = run_cli({"--help"});
  CHECK(r.status == 0);
  CHECK(r.out.starts_with("usage: posenc freqs"));
  CHECK(r.err.empty());
  r = run_cli({"--version"});
  CHECK(r.status == 0);
  CHECK(r.out.starts_with("posenc "));
}

TEST_CASE("presets through --preset", "[run][presets]") {
  if (!presets_available()) {
    const result r = run_cli({"freqs", "--preset", "llama-3.1-8b"});
    CHECK(r.status == exit_usage);
    return;
  }
  CHECK(preset_list().find("llama-3.1-8b") != std::string::npos);
  result r = run_cli({"freqs", "--preset", "llama-3.1-8b"});
  REQUIRE(r.status == 0);
  check_freqs_json(r.out, rope_config{128, 128, 500000.0, rope_layout::half,
                                      posenc::scaling::llama3(8.0, 1.0, 4.0, 8192)});
  // flags override the preset's fields
  r = run_cli({"--base", "1e6", "freqs", "--preset", "llama-3.1-8b", "--factor", "4"});
  REQUIRE(r.status == 0);
  check_freqs_json(r.out, rope_config{128, 128, 1e6, rope_layout::half,
                                      posenc::scaling::llama3(4.0, 1.0, 4.0, 8192)});
  // the config.json files in data/ that describe a preset's model give its numbers
  for (const auto& [file, preset] :
       std::vector<std::pair<std::string, std::string>>{{"llama3.json", "llama-3.1-8b"},
                                                        {"neox.json", "gpt-neox-20b"},
                                                        {"gptj.json", "gpt-j-6b"},
                                                        {"deepseek_v2.json", "deepseek-v2-lite"}}) {
    INFO(file);
    const std::string path = posenc_test::tools_data(file);
    const result f1 = run_cli({"freqs", "--hf-config", path});
    const result f2 = run_cli({"freqs", "--preset", preset});
    REQUIRE(f1.status == 0);
    CHECK(posenc_test::without_echo(f1.out) == posenc_test::without_echo(f2.out));
    const result t1 = run_cli({"table", "--hf-config", path, "--positions", "0:9"});
    const result t2 = run_cli({"table", "--preset", preset, "--positions", "0:9"});
    REQUIRE(t1.status == 0);
    CHECK(posenc_test::without_echo(t1.out) == posenc_test::without_echo(t2.out));
  }
  r = run_cli({"freqs", "--preset", "no-such-model"});
  CHECK(r.status == exit_usage);
  CHECK(r.err.starts_with("posenc: unknown preset 'no-such-model'; known presets: "));
  // A model preset where a 1-D one is needed says which commands take it.
  r = run_cli({"freqs", "--preset", "qwen2-vl-7b"});
  CHECK(r.status == exit_usage);
  CHECK(
      r.err.starts_with("posenc: 'qwen2-vl-7b' is a model preset (layers, apply, entropy); this "
                        "command takes the presets llama-2-7b, "));
}

// posenc --help and posenc help list every preset: the 1-D ones (posenc/spec/presets.hpp,
// presets::all) and the model presets (presets::models), written out here; each line is
// what tools/completion/posenc.bash completes --preset from.
TEST_CASE("help lists every preset, 1-D and model presets", "[run][presets]") {
  if (!presets_available()) return;
  const std::string one_d =
      "Presets: llama-2-7b, llama-3-8b, llama-3.1-8b, mistral-7b-v0.1, qwen2-7b, codellama-7b, "
      "gpt-j-6b, gpt-neox-20b, phi-2, phi-3-mini-128k-instruct, deepseek-v2-lite, deepseek-v3, "
      "phi-3.5-mini-instruct\n";
  const std::string models =
      "Model presets: qwen2-vl-7b, qwen2.5-vl-7b, gemma-3-4b, gemma-3-27b, llama-4-scout, "
      "pixtral-12b, deepseek-v3\n";
  for (const std::vector<std::string_view>& args :
       {std::vector<std::string_view>{"--help"}, std::vector<std::string_view>{"help"}}) {
    const result r = run_cli(args);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("\n" + one_d + models) != std::string::npos);
  }
  // Each listed model preset works with layers, each 1-D one with freqs.
  for (const char* name : {"qwen2-vl-7b", "qwen2.5-vl-7b", "gemma-3-4b", "gemma-3-27b",
                           "llama-4-scout", "pixtral-12b", "deepseek-v3"})
    CHECK(run_cli({"layers", "--preset", name}).status == 0);
  CHECK(run_cli({"freqs", "--preset", "phi-3.5-mini-instruct"}).status == 0);
}

// Issue 14: a derived quantity that is not finite, or does not fit float32 storage, is an error
// naming the rule, with nothing on out (each of these printed NaN, inf or zeros with
// exit 0 before).
TEST_CASE("derived quantities: finite or an error", "[run]") {
  struct bad_case {
    std::vector<std::string_view> args;
    std::string_view message_part;
  };
  const std::vector<std::string_view> yarn_beta = {"--head-dim",  "16",   "--scaling",      "yarn",
                                                   "--factor",    "4",    "--original-max", "4096",
                                                   "--beta-fast", "1e308"};
  const auto with = [](std::vector<std::string_view> head, const std::vector<std::string_view>& a) {
    head.insert(head.end(), a.begin(), a.end());
    return head;
  };
  // The library's rules (spec/rope.hpp), at every seq_len.
  const std::string_view correction = posenc::message(posenc::rope_error::yarn_correction_range);
  const std::string_view inv_freq = posenc::message(posenc::rope_error::inv_freq_float32);
  const std::string_view factor = posenc::message(posenc::rope_error::attention_factor_float32);
  const std::vector<bad_case> bad = {
      // linear factor 1e300: theta_0 = 1e-300, wavelength beyond double-double arithmetic
      {{"dials", "--head-dim", "64", "--scaling", "linear", "--factor", "1e300", "--positions",
        "100"},
       inv_freq},
      {{"freqs", "--head-dim", "16", "--scaling", "yarn", "--factor", "1e300", "--original-max",
        "4096"},
       inv_freq},
      {with({"ramp"}, yarn_beta), correction},
      {with({"dials", "--positions", "10"}, yarn_beta), correction},
      {with({"check"}, yarn_beta), correction},
      {with({"decay", "--max-distance", "4"}, yarn_beta), correction},
      {with({"freqs"}, yarn_beta), correction},
      {{"freqs", "--head-dim", "16", "--scaling", "yarn", "--factor", "4", "--original-max", "4096",
        "--mscale", "1e308", "--mscale-all-dim", "1"},
       factor},
      {{"freqs", "--head-dim", "16", "--scaling", "yarn", "--factor", "4", "--original-max", "4096",
        "--attention-factor", "1e39"},
       factor},
  };
  for (const bad_case& b : bad) {
    const result r = run_cli(b.args);
    INFO(b.args[0] << ": " << r.err);
    CHECK(r.status == exit_invalid);
    CHECK(r.out.empty());
    CHECK(count_lines(r.err) == 1u);
    CHECK(r.err.starts_with(b.message_part));
  }
  // The edge of the inv_freq rule: 1/8.6e37 is below 2^-126 = 1.1755e-38, 1/8.5e37 above it.
  CHECK(run_cli({"freqs", "--head-dim", "2", "--scaling", "linear", "--factor", "8.6e37"}).status ==
        exit_invalid);
  CHECK(run_cli({"freqs", "--head-dim", "2", "--scaling", "linear", "--factor", "8.5e37"}).status ==
        0);
}

// Issue 14: the work budgets of accuracy ((positions + sweep) x pairs) and decay (pairs x
// distances through the last window) are checked before any work, the message names the flags,
// and --work-limit raises them.
TEST_CASE("work budgets: refused before the work, raised by --work-limit", "[run]") {
  // accuracy --head-dim 65536 at 4096 positions: 4096 x 32768 = 2^27 evaluations (11 minutes).
  std::vector<std::string> args = {"accuracy", "--head-dim", "65536", "--positions"};
  std::string list;
  for (int p = 0; p < 4096; ++p) list += (p ? "," : "") + std::to_string(p);
  args.push_back(list);
  result r = run_cli(args);
  INFO(r.err);
  CHECK(r.status == exit_invalid);
  CHECK(r.out.empty());
  CHECK(count_lines(r.err) == 1u);
  CHECK(r.err ==
        "posenc: accuracy would evaluate 4096 positions x 32768 pairs = 134217728, beyond the "
        "work budget of 4194304; give fewer --positions or a smaller --head-dim / --rotary-dim, "
        "or raise the budget with --work-limit N\n");
  // 3 positions x 4 pairs = 12 evaluations: the budget is inclusive.
  const std::vector<std::string_view> small = {"accuracy", "--head-dim", "8", "--positions",
                                               "1,2,3"};
  auto with_limit = [](std::vector<std::string_view> a, std::string_view n) {
    a.push_back("--work-limit");
    a.push_back(n);
    return a;
  };
  r = run_cli(with_limit(small, "11"));
  CHECK(r.status == exit_invalid);
  CHECK(r.err.find("3 positions x 4 pairs = 12, beyond the work budget of 11;") !=
        std::string::npos);
  CHECK(run_cli(with_limit(small, "12")).status == 0);
  // decay to distance 4: windows through r = 7, 8 distances x 4 pairs = 32 steps.
  const std::vector<std::string_view> decay = {"decay", "--head-dim", "8", "--max-distance", "4"};
  r = run_cli(with_limit(decay, "31"));
  CHECK(r.status == exit_invalid);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "posenc: decay over 8 distances with 4 pairs is beyond the limit of 31 steps; lower "
        "--max-distance or --head-dim / --rotary-dim, or raise the budget with --work-limit N\n");
  CHECK(run_cli(with_limit(decay, "32")).status == 0);
  r = run_cli({"decay", "--head-dim", "65536", "--max-distance", "16777216"});
  CHECK(r.err.find("beyond the limit of 1073741824 steps") != std::string::npos);
  // The default budget is 2^30 steps (about 20 s): 64 pairs x 2^24 distances is at it, 128 pairs
  // beyond it.
  r = run_cli({"decay", "--head-dim", "256", "--max-distance", "16777215"});
  CHECK(r.status == exit_invalid);
  CHECK(r.err ==
        "posenc: decay over 16777216 distances with 128 pairs is beyond the limit of 1073741824 "
        "steps; lower --max-distance or --head-dim / --rotary-dim, or raise the budget with "
        "--work-limit N\n");
  // check --max-distance N: the dyadic means through the windows that end at or below N, 2^(K+1)
  // distances, a step per pair each. 32768 pairs x 2^24 distances (3 hours) is refused; d = 8
  // through 16 distances is 64 steps.
  r = run_cli({"check", "--head-dim", "65536", "--max-distance", "16777216"});
  CHECK(r.status == exit_invalid);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "posenc: check's dyadic means over 16777216 distances with 32768 pairs are beyond the "
        "limit of 1073741824 steps; lower --max-distance or --head-dim / --rotary-dim, or raise "
        "the budget with --work-limit N\n");
  const std::vector<std::string_view> check = {"check", "--head-dim", "8", "--max-distance", "15"};
  r = run_cli(with_limit(check, "63"));
  CHECK(r.status == exit_invalid);
  CHECK(r.err.find("over 16 distances with 4 pairs are beyond the limit of 63 steps;") !=
        std::string::npos);
  CHECK(run_cli(with_limit(check, "64")).status != exit_invalid);
}

// Issue 14: apply of finite input whose rotation overflows float32 is an error, not "inf".
// data/apply_overflow.json: x = [3e38, 0, 3e38, 0] at position 1; pair 0 is (x0, x2) (half
// layout), so y2 = 3e38 (sin 1 + cos 1) = 4.1e38.
TEST_CASE("apply: a rotation beyond float32 is an error", "[run]") {
  const std::string file = posenc_test::tools_data("apply_overflow.json");
  const result r = run_cli({"apply", "--input", file, "--head-dim", "4"});
  INFO(r.err);
  CHECK(r.status == exit_invalid);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "posenc: y[2] overflows float32 (the rotation of finite x, times the attention factor, is "
        "beyond 3.4e38)\n");
}
