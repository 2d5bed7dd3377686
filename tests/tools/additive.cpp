// `posenc alibi` and `posenc sinusoidal` in-process (run()): the JSON numbers read back to the
// library's values bit for bit (alibi_slope<float>, add_alibi_bias on zero scores computed here
// independently as -fl(m d), build_sinusoidal_table), CSV and text carry the same numbers, and
// every usage or configuration error is one line on stderr, nothing on stdout, exit 2 or 1.
#include <posenc/tables/alibi.hpp>
#include <posenc/tables/sinusoidal.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <bit>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/output.hpp"
#include "cli/run.hpp"
#include "support.hpp"

namespace {
using json = nlohmann::json;

using posenc_test::bits;
using posenc_test::run_cli;
using result = posenc_test::cli_result;

TEST_CASE("tools/additive alibi slopes and bias == library", "[additive]") {
  for (const bool bloom : {false, true}) {
    for (const std::uint32_t heads : {1u, 8u, 12u, 40u}) {
      const std::string h = std::to_string(heads);
      std::vector<std::string_view> args{"alibi", "--heads", h};
      if (bloom) args.push_back("--bloom");
      const result r = run_cli(args);
      REQUIRE(r.status == 0);
      REQUIRE(r.err.empty());
      const json j = json::parse(r.out);
      REQUIRE(j.at("slopes").size() == heads);
      CHECK(j.at("slopes_kind") == (bloom ? "bloom" : "reference"));
      CHECK_FALSE(j.contains("bias"));
      const posenc::alibi_config c{
          heads, posenc::alibi_variant::causal,
          bloom ? posenc::alibi_slope_kind::bloom : posenc::alibi_slope_kind::reference};
      for (std::uint32_t k = 0; k < heads; ++k)
        CHECK(bits(j.at("slopes")[k].get<float>()) == bits(posenc::alibi_slope<float>(c, k)));
    }
  }
  for (const char* variant : {"causal", "symmetric"}) {
    const result r = run_cli({"alibi", "--heads", "3", "--positions", "5", "--variant", variant});
    REQUIRE(r.status == 0);
    const json j = json::parse(r.out);
    REQUIRE(j.at("length") == 5);
    REQUIRE(j.at("bias").size() == 3);
    const bool sym = std::string_view(variant) == "symmetric";
    for (std::uint32_t h = 0; h < 3; ++h) {
      const float m = posenc::alibi_slope<float>({3}, h);
      REQUIRE(j.at("bias")[h].size() == 25);
      for (int i = 0; i < 5; ++i)
        for (int k = 0; k < 5; ++k) {
          const int d = i >= k ? i - k : (sym ? k - i : -1);
          volatile float prod = m * static_cast<float>(d);
          const float want = d < 0 ? 0.0f : 0.0f - prod;
          CHECK(bits(j.at("bias")[h][static_cast<std::size_t>(i * 5 + k)].get<float>()) ==
                bits(want));
        }
    }
  }
  // CSV and text carry the same numbers.
  const result csv = run_cli({"alibi", "--heads", "2", "--positions", "2", "--format", "csv"});
  REQUIRE(csv.status == 0);
  const std::string m0 = posenc::cli::format_float(posenc::alibi_slope<float>({2}, 0));
  CHECK(posenc_test::without_echo(csv.out).starts_with("head,slope,query,key,bias\n0," + m0 +
                                                       ",0,0,0\n0," + m0 + ",0,1,0\n"));
  CHECK(csv.out.find("0," + m0 + ",1,0,-" + m0 + "\n") != std::string::npos);
  const result csv2 = run_cli({"alibi", "--heads", "2", "--format=csv"});
  CHECK(posenc_test::without_echo(csv2.out) == "head,slope\n0,0.0625\n1,0.00390625\n");
  const result text = run_cli({"alibi", "--heads", "2", "--positions", "2", "--format", "text"});
  REQUIRE(text.status == 0);
  CHECK(text.out.find("0.00390625") != std::string::npos);
  CHECK(text.out.find("bias of head 1") != std::string::npos);
}

TEST_CASE("tools/additive sinusoidal table == library", "[additive]") {
  struct c_case {
    std::vector<std::string_view> args;
    posenc::sinusoidal_config config;
    std::size_t positions;
  };
  const c_case cases[] = {
      {{"sinusoidal", "--head-dim", "16", "--positions", "10"}, {16}, 10},
      {{"sinusoidal", "--head-dim", "9", "--positions", "6", "--layout", "split", "--padding-idx",
        "1"},
       {9, posenc::sinusoidal_layout::split, 10000.0, 1},
       6},
      {{"sinusoidal", "--dim=7", "--positions=3", "--base", "500"},
       {7, posenc::sinusoidal_layout::paper, 500.0},
       3},
  };
  for (const c_case& c : cases) {
    const result r = run_cli(c.args);
    REQUIRE(r.status == 0);
    const json j = json::parse(r.out);
    std::vector<float> want(c.positions * c.config.dim);
    REQUIRE(posenc::build_sinusoidal_table<float>(c.config, c.positions, want.data()) ==
            posenc::sinusoidal_error::ok);
    REQUIRE(j.at("table").size() == c.positions);
    for (std::size_t p = 0; p < c.positions; ++p)
      for (std::size_t k = 0; k < c.config.dim; ++k)
        CHECK(bits(j.at("table")[p][k].get<float>()) == bits(want[p * c.config.dim + k]));
  }
  const result csv =
      run_cli({"sinusoidal", "--head-dim", "2", "--positions", "2", "--format", "csv"});
  CHECK(posenc_test::without_echo(csv.out) ==
        "position,column,value\n0,0,0\n0,1,1\n1,0," +
            posenc::cli::format_float(posenc::math::sin(1.0f)) + "\n1,1," +
            posenc::cli::format_float(posenc::math::cos(1.0f)) + "\n");
  const result text =
      run_cli({"sinusoidal", "--head-dim", "2", "--positions", "1", "--format", "text"});
  CHECK(text.out.find("position") != std::string::npos);
}

TEST_CASE("tools/additive errors: one line, nothing on stdout", "[additive]") {
  struct e_case {
    std::vector<std::string_view> args;
    int status;
    std::string message;
  };
  const e_case cases[] = {
      {{"alibi"}, 2, "posenc: alibi needs --heads H"},
      {{"alibi", "--heads", "0"}, 2, "posenc: --heads needs an integer in [1, 65536]"},
      {{"alibi", "--heads", "65537"}, 2, "posenc: --heads needs an integer in [1, 65536]"},
      {{"alibi", "--heads", "4", "--variant", "both"},
       2,
       "posenc: --variant needs causal or symmetric"},
      {{"alibi", "--heads", "4", "--bloom=1"}, 2, "posenc: --bloom takes no value"},
      {{"alibi", "--heads", "4", "--head-dim", "8"},
       2,
       "posenc: --head-dim is not a flag of alibi (see posenc help alibi)"},
      {{"alibi", "--heads", "4", "--padding-idx", "8"},
       2,
       "posenc: --padding-idx is not a flag of alibi (see posenc help alibi)"},
      {{"alibi", "--heads", "4", "--positions", "2:4"},
       2,
       "posenc: alibi --positions needs 0:N or N (a length: the positions 0 to N-1)"},
      {{"alibi", "--heads", "64", "--positions", "1024"},
       1,
       "posenc: the bias would have 67108864 values (heads x length^2); at most 16777216 per call"},
      {{"sinusoidal", "--head-dim", "8"},
       2,
       "posenc: sinusoidal needs --positions N with 1 <= N <= 1048576 (rows 0 to N-1)"},
      {{"sinusoidal", "--head-dim", "8", "--positions", "1:4"},
       2,
       "posenc: sinusoidal --positions needs 0:N or N (a length: the positions 0 to N-1)"},
      {{"sinusoidal", "--head-dim", "8", "--positions", "1048577"},
       2,
       "posenc: sinusoidal needs --positions N with 1 <= N <= 1048576 (rows 0 to N-1)"},
      {{"sinusoidal", "--positions", "4"}, 2, "posenc: sinusoidal needs --head-dim D"},
      {{"sinusoidal", "--head-dim", "8", "--positions", "4", "--layout", "half"},
       2,
       "posenc: sinusoidal --layout needs paper or split"},
      {{"sinusoidal", "--head-dim", "8", "--positions", "4", "--rotary-dim", "4"},
       2,
       "posenc: --rotary-dim is not a flag of sinusoidal (see posenc help sinusoidal)"},
      {{"sinusoidal", "--head-dim", "8", "--positions", "4", "--heads", "2"},
       2,
       "posenc: --heads is not a flag of sinusoidal (see posenc help sinusoidal)"},
      {{"sinusoidal", "--head-dim", "8", "--positions", "4", "--padding-idx", "-1"},
       2,
       "posenc: --padding-idx needs a non-negative integer below 2^32"},
      {{"sinusoidal", "--head-dim", "1", "--positions", "4", "--layout", "split"},
       1,
       "posenc: the split sinusoidal layout needs dim >= 2"},
      {{"sinusoidal", "--head-dim", "8", "--positions", "4", "--base", "1"},
       1,
       "posenc: sinusoidal base must be finite and > 1"},
      {{"sinusoidal", "--head-dim", "65536", "--positions", "1024"},
       1,
       "posenc: the table would have 67108864 entries (positions x dim); at most 16777216 per "
       "call"},
      {{"freqs", "--head-dim", "8", "--heads", "2"},
       2,
       "posenc: --heads is not a flag of freqs (see posenc help freqs)"},
      {{"freqs", "--head-dim", "8", "--layout", "paper"},
       2,
       "posenc: --layout paper and split are for the sinusoidal command (RoPE: interleaved or "
       "half)"},
      {{"table", "--head-dim", "8", "--positions", "5:5"},
       2,
       "posenc: --positions needs N, A:B, A:B:S or a,b,c: integers with 0 <= A < B <= "
       "4294967296, 1 <= S <= 4294967296, each position below 4294967296 (at most 1048576 listed)"},
  };
  for (const e_case& c : cases) {
    const result r = run_cli(c.args);
    INFO(c.message);
    CHECK(r.status == c.status);
    CHECK(r.out.empty());
    CHECK(r.err == c.message + "\n");
  }
}

}  // namespace
