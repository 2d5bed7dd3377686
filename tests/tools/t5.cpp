// `posenc t5-bias` in-process (run()) against HF's own buckets:
// tests/golden/hf_t5_relative_bucket.json (README there),
// T5Attention._relative_position_bucket(relative_position, bidirectional, 32, 128) for relative
// positions -300 .. 300 in both directions, run from transformers' source. Every bucket must be
// equal (integers); the exact log too (docs/formulas.md §13: for 32 buckets and max_distance 128
// the two logs agree). The Q x K matrix must be HF's compute_bias layout: bucket[i][j] = the golden
// bucket of j - i. csv and text say the same; every error is one line. A missing golden file fails.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "support.hpp"

namespace {
using json = nlohmann::json;
using posenc_test::run_cli;
using result = posenc_test::cli_result;

json golden() {
  const char* dir = std::getenv("POSENC_GOLDEN_DIR");
  REQUIRE(dir != nullptr);
  const std::string path = std::string(dir) + "/hf_t5_relative_bucket.json";
  std::ifstream in(path);
  INFO("golden file: " << path);
  REQUIRE(in.good());
  return json::parse(in);
}

json run_json(const std::vector<std::string>& args) {
  const result r = run_cli(args);
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  return json::parse(r.out);
}

void check_error(const std::vector<std::string>& args, int status, const std::string& needle) {
  const result r = run_cli(args);
  std::string shown;
  for (const auto& a : args) shown += a + " ";
  INFO("args: " << shown << "\nstderr: " << r.err);
  CHECK(r.status == status);
  CHECK(r.out.empty());
  CHECK(r.err.find(needle) != std::string::npos);
  CHECK(r.err.find('\n') == r.err.size() - 1);
}
}  // namespace

TEST_CASE("tools/t5: buckets == HF's _relative_position_bucket", "[t5]") {
  const json g = golden();
  REQUIRE(g.at("parameters").at("num_buckets") == 32);
  REQUIRE(g.at("parameters").at("max_distance") == 128);
  const auto rel = g.at("relative_position").at("values").get<std::vector<std::int64_t>>();
  REQUIRE(rel.size() == 601u);
  REQUIRE(rel.front() == -300);
  const auto bidi = g.at("buckets_bidirectional").at("values").get<std::vector<std::int64_t>>();
  const auto causal = g.at("buckets_unidirectional").at("values").get<std::vector<std::int64_t>>();
  for (const char* log : {"hf-float32", "exact"}) {
    INFO("log " << log);
    const json b = run_json({"t5-bias", "--relative-positions", "-300:301", "--log", log});
    CHECK(b.at("relative_position").get<std::vector<std::int64_t>>() == rel);
    CHECK(b.at("bucket").get<std::vector<std::int64_t>>() == bidi);
    CHECK(b.at("direction") == "bidirectional");
    CHECK(b.at("max_exact") == 8);
    const json c = run_json({"t5-bias", "--relative-positions", "-300:301", "--causal", "--log",
                             log, "--num-buckets", "32", "--max-distance", "128"});
    CHECK(c.at("bucket").get<std::vector<std::int64_t>>() == causal);
    CHECK(c.at("max_exact") == 16);
  }
  // The default range is -max_distance .. max_distance.
  const json d = run_json({"t5-bias"});
  const auto drel = d.at("relative_position").get<std::vector<std::int64_t>>();
  REQUIRE(drel.size() == 257u);
  CHECK(drel.front() == -128);
  CHECK(d.at("bucket").get<std::vector<std::int64_t>>() ==
        std::vector<std::int64_t>(bidi.begin() + 172, bidi.begin() + 429));

  // HF compute_bias(query_length, key_length): relative_position = memory - context = j - i.
  const json m = run_json({"t5-bias", "--query-length", "20", "--key-length", "31", "--causal"});
  const auto rows = m.at("bucket").get<std::vector<std::vector<std::int64_t>>>();
  REQUIRE(rows.size() == 20u);
  for (std::size_t i = 0; i < 20; ++i) {
    REQUIRE(rows[i].size() == 31u);
    for (std::size_t j = 0; j < 31; ++j)
      CHECK(rows[i][j] ==
            causal[static_cast<std::size_t>(300 + static_cast<int>(j) - static_cast<int>(i))]);
  }

  // csv and text: the same numbers.
  const result csv = run_cli({"t5-bias", "--relative-positions", "-2:3", "--format", "csv"});
  CHECK(csv.out == "relative_position,bucket\n-2,2\n-1,1\n0,0\n1,17\n2,18\n");
  const result mcsv = run_cli({"t5-bias", "--query-length", "2", "--key-length", "2", "--csv"});
  CHECK(mcsv.out == "query,key,relative_position,bucket\n0,0,0,0\n0,1,1,17\n1,0,-1,1\n1,1,0,0\n");
  const result text =
      run_cli({"t5-bias", "--query-length", "2", "--key-length", "3", "--format", "text"});
  CHECK(text.out.find("\n    0    17    18\n    1     0    17\n") != std::string::npos);
}

TEST_CASE("tools/t5: errors", "[t5]") {
  check_error({"t5-bias", "--num-buckets", "0"}, 1, "num_buckets must be positive");
  check_error({"t5-bias", "--num-buckets", "31"}, 1, "bidirectional num_buckets must be even");
  check_error({"t5-bias", "--num-buckets", "2"}, 1, "num_buckets must be >= 2");
  check_error({"t5-bias", "--num-buckets", "65538"}, 1, "num_buckets must be <= 65536");
  check_error({"t5-bias", "--max-distance", "8"}, 1, "max_distance must be > max_exact");
  check_error({"t5-bias", "--num-buckets", "-1"}, 2, "--num-buckets needs");
  check_error({"t5-bias", "--max-distance", "0"}, 2, "--max-distance needs");
  for (const char* bad : {"", "5", "3:3", "4:2", "a:b", "-4294967297:0", "0:4294967298", "+1:4",
                          "0:1048577", "1.5:4"})
    check_error({"t5-bias", "--relative-positions=" + std::string(bad)}, 2,
                "--relative-positions needs A:B");
  check_error({"t5-bias", "--bidirectional", "--causal"}, 2, "not both");
  check_error({"t5-bias", "--query-length", "4"}, 2,
              "needs both --query-length Q and --key-length K");
  check_error({"t5-bias", "--key-length", "4"}, 2, "needs both");
  check_error(
      {"t5-bias", "--query-length", "4", "--key-length", "4", "--relative-positions", "0:4"}, 2,
      "not both");
  check_error({"t5-bias", "--query-length", "4096", "--key-length", "4097"}, 1,
              "at most 16777216 per call");
  check_error({"t5-bias", "--log", "float64"}, 2, "--log needs");
  check_error({"t5-bias", "--head-dim", "64"}, 2, "t5-bias takes no RoPE configuration flags");
  check_error({"t5-bias", "--positions", "0:4"}, 2, "use --relative-positions");
  check_error({"freqs", "--head-dim", "64", "--num-buckets", "32"}, 2,
              "are for the t5-bias command");
  check_error({"freqs", "--head-dim", "64", "--causal"}, 2, "are for the t5-bias command");
}
