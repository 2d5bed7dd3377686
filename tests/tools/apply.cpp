// `posenc apply` in-process (tools/cli/apply): the JSON output equals the library's scalar
// reference rope_reference(..., fma mode of the dispatched ISA) bit for bit (a float printed with
// 9 significant digits reads back to the same bits), for both layouts, partial rotary, explicit
// and default positions, and positions past the cached table (rows on the fly); CSV and text have
// the documented shape; every malformed input gives exit 1, one line on err, nothing on out.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <posenc/kernels/dispatch.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/tables/runtime_rope_cache.hpp>

#include <bit>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "cli/run.hpp"
#include "support.hpp"

using json = nlohmann::json;
using posenc::rope_config;
using posenc::rope_layout;
namespace k = posenc::kernels;

namespace {
using posenc_test::f32_text;
using posenc_test::run_cli;
using result = posenc_test::cli_result;

using posenc_test::scratch_file;

std::vector<float> inputs(std::size_t n) {
  std::vector<float> x(n);
  std::uint32_t s = 12345;
  for (float& v : x) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(s >> 8) * 0x1p-22f - 2.0f;
  }
  return x;
}

std::string input_json(const std::vector<float>& x, std::size_t tokens, std::size_t heads,
                       std::size_t hd, const std::vector<std::int64_t>* positions) {
  std::string s = "{\"x\": [";
  for (std::size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + f32_text(x[i]);
  s += "], \"shape\": [" + std::to_string(tokens) + ", " + std::to_string(heads) + ", " +
       std::to_string(hd) + "]";
  if (positions != nullptr) {
    s += ", \"positions\": [";
    for (std::size_t i = 0; i < positions->size(); ++i)
      s += (i ? ", " : "") + std::to_string((*positions)[i]);
    s += "]";
  }
  return s + "}";
}

// The definition: rope_reference over a table of the same config (cached rows for small
// positions, on-the-fly rows otherwise), with the dispatched ISA's multiply-add mode.
std::vector<float> expected(const rope_config& c, const std::vector<float>& x, std::size_t tokens,
                            std::size_t heads, const std::vector<std::int64_t>& positions,
                            bool far) {
  std::vector<float> y(x.size());
  const auto cache = posenc::runtime_rope_cache<float>::make(c, far ? 0 : 8192);
  const k::rope_table table =
      far ? k::on_the_fly_table(c) : k::make_rope_table(cache.view(), c.layout);
  REQUIRE(k::rope_reference<float>(
              table, k::dense(x.data(), tokens, heads, std::size_t{c.head_dim}),
              k::dense(y.data(), tokens, heads, std::size_t{c.head_dim}),
              k::token_positions::of(positions), k::dispatch::active().fma) == k::kernel_error::ok);
  return y;
}

void check_apply(const rope_config& c, std::vector<std::string> flags, std::size_t tokens,
                 std::size_t heads, std::vector<std::int64_t> positions, bool give_positions,
                 bool far = false) {
  const std::vector<float> x = inputs(tokens * heads * c.head_dim);
  const scratch_file f(
      input_json(x, tokens, heads, c.head_dim, give_positions ? &positions : nullptr));
  std::vector<std::string> args{"apply", "--input", f.path()};
  args.insert(args.end(), flags.begin(), flags.end());
  const result r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  const json j = json::parse(r.out);
  REQUIRE(j.is_object());
  REQUIRE(j.size() == 2);
  CHECK(j.at("config").is_object());
  const json& y = j.at("y");
  const std::vector<float> want = expected(c, x, tokens, heads, positions, far);
  REQUIRE(y.size() == want.size());
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    mismatches += std::bit_cast<std::uint32_t>(static_cast<float>(y[i].get<double>())) !=
                  std::bit_cast<std::uint32_t>(want[i]);
  CHECK(mismatches == 0);
}
}  // namespace

TEST_CASE("apply: JSON equals rope_reference bit for bit", "[apply]") {
  const std::vector<std::int64_t> ids{5, 0, 4095};
  const std::vector<std::int64_t> first{0, 1, 2};
  SECTION("half, full rotary, explicit positions") {
    check_apply({16, 16, 10000.0, rope_layout::half, {}}, {"--head-dim", "16"}, 3, 2, ids, true);
  }
  SECTION("interleaved, base 500000, default positions 0, 1, 2") {
    check_apply({16, 16, 500000.0, rope_layout::interleaved, {}},
                {"--head-dim", "16", "--layout", "interleaved", "--base", "500000"}, 3, 2, first,
                false);
  }
  SECTION("half, partial rotary (--rotary-dim)") {
    check_apply({20, 12, 10000.0, rope_layout::half, {}},
                {"--head-dim", "20", "--rotary-dim", "12"}, 3, 2, ids, true);
  }
  SECTION("interleaved, partial rotary factor 0.4") {
    check_apply({10, 4, 10000.0, rope_layout::interleaved, {}},
                {"--head-dim=10", "--partial-rotary-factor=0.4", "--layout=interleaved"}, 3, 1, ids,
                true);
  }
  SECTION("head_dim from shape[2] when no flag gives it") {
    check_apply({34, 34, 10000.0, rope_layout::half, {}}, {}, 3, 3, ids, true);
  }
  SECTION("positions past 2^20: rows on the fly") {
    check_apply({8, 8, 10000.0, rope_layout::half, {}}, {"--head-dim", "8"}, 3, 2,
                {3000000, 7, 4294967295}, true, true);
  }
}

TEST_CASE("apply: csv and text", "[apply]") {
  const std::vector<float> x = inputs(2 * 2 * 4);
  const std::vector<std::int64_t> pos{7, 9};
  const scratch_file f(input_json(x, 2, 2, 4, &pos));
  const result csv = run_cli({"apply", "--input", f.path(), "--format", "csv"});
  REQUIRE(csv.status == 0);
  std::istringstream lines(posenc_test::without_echo(csv.out));
  std::string line;
  std::vector<std::string> rows;
  while (std::getline(lines, line)) rows.push_back(line);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0] == "token,position,head,y0,y1,y2,y3");
  CHECK(rows[1].rfind("0,7,0,", 0) == 0);
  CHECK(rows[4].rfind("1,9,1,", 0) == 0);
  const json j = json::parse(run_cli({"apply", "--input", f.path()}).out);
  // The CSV's last row holds the JSON's last four values.
  std::string tail = "1,9,1";
  for (std::size_t c = 12; c < 16; ++c)
    tail += "," + f32_text(static_cast<float>(j.at("y")[c].get<double>()));
  CHECK(rows[4] == tail);
  const result text = run_cli({"apply", "--input", f.path(), "--format", "text"});
  REQUIRE(text.status == 0);
  CHECK(posenc_test::without_echo(text.out).rfind("token 0  position 7  head 0\n", 0) == 0);
  CHECK(text.out.find("token 1  position 9  head 1\n") != std::string::npos);
}

TEST_CASE("apply: input errors exit 1 with one line and no output", "[apply]") {
  struct error_case {
    std::string text;
    std::vector<std::string> flags;
    std::string message;  // expected start of the line, after "posenc: FILE: " where present
  };
  const std::string ok_x = "[1, 2, 3, 4]";
  const std::vector<error_case> cases{
      {"{\"x\": [1, 2, 3", {}, "not valid JSON"},
      {"[1, 2]", {}, "the top level is not a JSON object"},
      {"{\"x\": " + ok_x + "}", {}, "missing \"shape\""},
      {"{\"shape\": [1, 1, 4]}", {}, "missing \"x\""},
      {"{\"x\": " + ok_x + ", \"shape\": [1, 1, 4], \"y\": 1}", {}, "unknown key \"y\""},
      {"{\"x\": " + ok_x + ", \"shape\": [1, 1, 4], \"x\": [1]}", {}, "key \"x\" appears twice"},
      {"{\"x\": " + ok_x + ", \"shape\": [1, 4]}", {}, "\"shape\" must be"},
      {"{\"x\": " + ok_x + ", \"shape\": [1, 1, 4.0]}", {}, "\"shape\" must be"},
      {"{\"x\": " + ok_x + ", \"shape\": [0, 1, 4]}", {}, "\"shape\" must be"},
      {"{\"x\": " + ok_x + ", \"shape\": [1, -1, 4]}", {}, "\"shape\" must be"},
      {"{\"x\": " + ok_x + ", \"shape\": [1, 2, 4]}", {}, "\"x\" has 4 numbers; shape needs 8"},
      {"{\"x\": [], \"shape\": [65536, 65536, 2]}", {}, "more than 16777216 elements"},
      {"{\"x\": [1, 2, \"3\", 4], \"shape\": [1, 1, 4]}", {}, "x[2] is not a number"},
      {"{\"x\": [1, 2, 1e39, 4], \"shape\": [1, 1, 4]}", {}, "x[2] is not a finite float32"},
      {"{\"x\": [1, 2, 1e400, 4], \"shape\": [1, 1, 4]}", {}, "a number is out of range"},
      {"{\"x\": " + ok_x + ", \"shape\": [1, 1, 4], \"positions\": [0, 1]}",
       {},
       "\"positions\" must have one integer per token (1)"},
      {"{\"x\": " + ok_x + ", \"shape\": [1, 1, 4], \"positions\": [-1]}",
       {},
       "positions[0] must be an integer"},
      {"{\"x\": " + ok_x + ", \"shape\": [1, 1, 4], \"positions\": [1.5]}",
       {},
       "positions[0] must be an integer"},
      {"{\"x\": " + ok_x + ", \"shape\": [1, 1, 4], \"positions\": [4294967296]}",
       {},
       "positions[0] must be an integer"},
      {"{\"x\": " + ok_x + ", \"shape\": [1, 1, 4], \"positions\": [[1]]}", {}, "nested deeper"},
  };
  for (const error_case& c : cases) {
    const scratch_file f(c.text);
    std::vector<std::string> args{"apply", "--input", f.path()};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    const result r = run_cli(args);
    INFO(c.text << " -> " << r.err);
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("posenc: " + f.path() + ": " + c.message, 0) == 0);
    CHECK(r.err.find('\n') == r.err.size() - 1);
  }
  // Configuration against the input.
  const scratch_file f("{\"x\": " + ok_x + ", \"shape\": [1, 1, 4]}");
  result r = run_cli({"apply", "--input", f.path(), "--head-dim", "8"});
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "posenc: the input's head_dim (shape[2] = 4) differs from the configuration's (8)\n");
  r = run_cli({"apply", "--input", f.path(), "--rotary-dim", "6"});
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  r = run_cli({"apply", "--input", "/nonexistent/posenc.json"});
  CHECK(r.status == 1);
  CHECK(r.err == "posenc: cannot open /nonexistent/posenc.json\n");
  // The input is parsed as it is read: /dev/zero fails at its first byte, not after reading up
  // to the 1 GiB limit; an unknown key is refused when it is read, before the (broken) rest.
  r = run_cli({"apply", "--input", "/dev/zero"});
  CHECK(r.status == 1);
  CHECK(r.err == "posenc: /dev/zero: not valid JSON (at byte 1)\n");
  const scratch_file early("{\"zz\": 1, \"x\": [1, 2, ");
  r = run_cli({"apply", "--input", early.path()});
  CHECK(r.status == 1);
  CHECK(r.err == "posenc: " + early.path() + ": unknown key \"zz\" (x, shape, positions)\n");
  // A regular file over the limit is refused by its size (sparse: no disk or reading needed).
  const scratch_file big("{");
  std::filesystem::resize_file(big.path(), (std::uintmax_t{1} << 30) + 1);
  r = run_cli({"apply", "--input", big.path()});
  CHECK(r.status == 1);
  CHECK(r.err == "posenc: " + big.path() +
                     " is larger than 1 GiB; raise the limit with --max-input-bytes N\n");
  // Usage errors (exit 2).
  CHECK(run_cli({"apply", "--head-dim", "4"}).err == "posenc: apply needs --input FILE\n");
  CHECK(run_cli({"apply", "--input", f.path(), "--positions", "0:4"}).status == 2);
  r = run_cli({"freqs", "--head-dim", "4", "--input", f.path()});
  CHECK(r.status == 2);
  CHECK(r.err == "posenc: --input is not a flag of freqs (see posenc help freqs)\n");
  CHECK(run_cli({"apply", "--input="}).status == 2);
}

// Issue 14: the input limits (1 GiB and 16 MiB files, 2^24 elements, 64 levels) are defaults,
// each overridable by a flag; the message names the flag. Small overrides keep the test fast.
TEST_CASE("apply and --hf-config: the input limits, each overridable by a flag", "[apply]") {
  // --max-input-bytes: a 200-byte input is refused under 100 and 199, admitted at 200.
  std::string text = "{\"x\": [1, 0, 0, 0], \"shape\": [1, 1, 4]}";
  text += std::string(200 - text.size(), ' ');
  REQUIRE(text.size() == 200u);
  const scratch_file input(text);
  for (const char* limit : {"100", "199"}) {
    const result r = run_cli({"apply", "--input", input.path(), "--max-input-bytes", limit});
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err == "posenc: " + input.path() + " is larger than " + limit +
                       " bytes; raise the limit with --max-input-bytes N\n");
  }
  CHECK(run_cli({"apply", "--input", input.path(), "--max-input-bytes", "200"}).status == 0);
  CHECK(run_cli({"apply", "--input", input.path()}).status == 0);
  // Over the 1 GiB default (sparse), admitted past the size check by the flag: the parser then
  // stops at the first NUL byte.
  const scratch_file big("{");
  std::filesystem::resize_file(big.path(), (std::uintmax_t{1} << 30) + 1);
  result r = run_cli({"apply", "--input", big.path(), "--max-input-bytes", "1073741825"});
  CHECK(r.status == 1);
  CHECK(r.err == "posenc: " + big.path() + ": not valid JSON (at byte 2)\n");
  // --max-elements: 4 elements refused under 3, admitted at 4; the 2^24 default refuses a shape
  // of 4097 x 4096 elements, which --max-elements admits (then x is too short for it).
  r = run_cli({"apply", "--input", input.path(), "--max-elements", "3"});
  CHECK(r.status == 1);
  CHECK(r.err == "posenc: " + input.path() +
                     ": more than 3 elements in x; raise the limit with --max-elements N\n");
  CHECK(run_cli({"apply", "--input", input.path(), "--max-elements", "4"}).status == 0);
  const scratch_file wide("{\"x\": [1, 0], \"shape\": [4097, 4096, 1]}");
  r = run_cli({"apply", "--input", wide.path()});
  CHECK(r.err == "posenc: " + wide.path() +
                     ": more than 16777216 elements in x; raise the limit with --max-elements N\n");
  r = run_cli({"apply", "--input", wide.path(), "--max-elements", "16781312"});
  CHECK(r.err == "posenc: " + wide.path() + ": \"x\" has 2 numbers; shape needs 16781312\n");
  // At the largest limit, 2^32: a shape whose product (2^65) does not fit in 64 bits is over it.
  const scratch_file huge("{\"x\": [], \"shape\": [4294967296, 4294967296, 2]}");
  r = run_cli({"apply", "--input", huge.path(), "--max-elements", "4294967296"});
  CHECK(r.err ==
        "posenc: " + huge.path() +
            ": more than 4294967296 elements in x; raise the limit with --max-elements N\n");
  // --hf-config: the 16 MiB default and --max-input-bytes; --max-depth (64 by default) counts
  // the levels below the top object: "b" of {"a": {"b": {}}} is at level 2.
  const std::string config = "{\"head_dim\": 8, \"a\": {\"b\": {\"c\": [1]}}}";
  const scratch_file cfg(config);
  const std::string size = std::to_string(config.size());
  const std::string below = std::to_string(config.size() - 1);
  r = run_cli({"freqs", "--hf-config", cfg.path(), "--max-input-bytes", below});
  CHECK(r.status == 1);
  CHECK(r.err == "posenc: " + cfg.path() + " is larger than " + below +
                     " bytes; raise the limit with --max-input-bytes N\n");
  CHECK(run_cli({"freqs", "--hf-config", cfg.path(), "--max-input-bytes", size}).status == 0);
  r = run_cli({"freqs", "--hf-config", cfg.path(), "--max-depth", "3"});
  CHECK(r.status == 1);
  CHECK(r.err == "posenc: " + cfg.path() +
                     ": nested deeper than 3 levels; raise the limit with --max-depth N\n");
  CHECK(run_cli({"freqs", "--hf-config", cfg.path(), "--max-depth", "4"}).status == 0);
  const scratch_file deep(std::string(100, '[') + std::string(100, ']'));
  r = run_cli({"freqs", "--hf-config", deep.path()});
  CHECK(r.err == "posenc: " + deep.path() +
                     ": nested deeper than 64 levels; raise the limit with --max-depth N\n");
  r = run_cli({"freqs", "--hf-config", deep.path(), "--max-depth", "100"});
  CHECK(r.err == "posenc: " + deep.path() + ": the top level is not a JSON object\n");
  // The values are checked, and each flag goes where it limits something (exit 2).
  const std::vector<std::vector<std::string>> usage{
      {"apply", "--input", input.path(), "--max-input-bytes", "0"},
      {"apply", "--input", input.path(), "--max-input-bytes", "1099511627777"},
      {"apply", "--input", input.path(), "--max-elements", "0"},
      {"apply", "--input", input.path(), "--max-elements", "4294967297"},
      {"freqs", "--hf-config", cfg.path(), "--max-depth", "0"},
      {"freqs", "--hf-config", cfg.path(), "--max-depth", "4097"},
      {"freqs", "--head-dim", "8", "--max-input-bytes", "100"},
      {"freqs", "--hf-config", cfg.path(), "--max-elements", "100"},
      {"apply", "--input", input.path(), "--max-depth", "100"},
      {"freqs", "--head-dim", "8", "--work-limit", "100"},
      {"table", "--head-dim", "8", "--positions", "0:2", "--work-limit", "100"},
  };
  for (const std::vector<std::string>& args : usage) {
    r = run_cli(args);
    INFO(args.back() << " " << args[3] << " -> " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
  }
  CHECK(run_cli({"freqs", "--head-dim", "8", "--max-input-bytes", "100"}).err ==
        "posenc: --max-input-bytes limits the file of --input, --hf-config or --gguf; give "
        "one\n");
  CHECK(run_cli({"freqs", "--head-dim", "8", "--work-limit", "100"}).err ==
        "posenc: --work-limit is not a flag of freqs (see posenc help freqs)\n");
}
