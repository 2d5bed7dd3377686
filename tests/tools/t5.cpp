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
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

#include "golden_file.hpp"
#include "support.hpp"

namespace {
using json = nlohmann::json;
using posenc_test::run_cli;
using result = posenc_test::cli_result;

json golden() {
  return posenc_test::golden_json("hf_t5_relative_bucket.json");
}

json run_json(const std::vector<std::string>& args) {
  const result r = run_cli(args);
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  return json::parse(r.out);
}

// A float32 .npy of the given shape ("(32, 3)"), written to a scratch file removed at scope exit.
class npy_f32_file {
 public:
  npy_f32_file(const std::string& shape, const std::vector<float>& v, const char* descr = "<f4")
      : path_((std::filesystem::temp_directory_path() / ("posenc_t5_" + std::to_string(::getpid()) +
                                                         "_" + std::to_string(count_++) + ".npy"))
                  .string()) {
    const std::string dict =
        std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    const std::size_t unpadded = 10 + dict.size() + 1;
    const std::size_t total = (unpadded + 63) / 64 * 64;
    const std::string header = dict + std::string(total - unpadded, ' ') + "\n";
    std::string b = "\x93NUMPY";
    b += '\x01';
    b += '\0';
    b += static_cast<char>(header.size() & 0xff);
    b += static_cast<char>(header.size() >> 8);
    b += header;
    for (const float x : v) {
      std::uint32_t u;
      std::memcpy(&u, &x, 4);
      for (int k = 0; k < 4; ++k) b += static_cast<char>((u >> (8 * k)) & 0xff);
    }
    std::ofstream(path_, std::ios::binary) << b;
  }
  ~npy_f32_file() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  npy_f32_file(const npy_f32_file&) = delete;
  npy_f32_file& operator=(const npy_f32_file&) = delete;
  const std::string& path() const { return path_; }

 private:
  static inline int count_ = 0;
  std::string path_;
};

// Weights [num_buckets, heads] with w[b][h] = 10 b + h + 0.5 (exact in float32).
std::vector<float> weights(std::size_t buckets, std::size_t heads) {
  std::vector<float> w(buckets * heads);
  for (std::size_t b = 0; b < buckets; ++b)
    for (std::size_t h = 0; h < heads; ++h)
      w[b * heads + h] = static_cast<float>(10 * b + h) + 0.5f;
  return w;
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
  CHECK(posenc_test::without_echo(csv.out) ==
        "relative_position,bucket\n-2,2\n-1,1\n0,0\n1,17\n2,18\n");
  const result mcsv = run_cli({"t5-bias", "--query-length", "2", "--key-length", "2", "--csv"});
  CHECK(posenc_test::without_echo(mcsv.out) ==
        "query,key,relative_position,bucket\n0,0,0,0\n0,1,1,17\n1,0,-1,1\n1,1,0,0\n");
  const result text =
      run_cli({"t5-bias", "--query-length", "2", "--key-length", "3", "--format", "text"});
  CHECK(text.out.find("\n    0    17    18\n    1     0    17\n") != std::string::npos);
}

TEST_CASE("tools/t5: --weights gives each head's bias, weights[bucket][head]", "[t5]") {
  const json g = golden();
  const auto bidi = g.at("buckets_bidirectional").at("values").get<std::vector<std::int64_t>>();
  const auto causal = g.at("buckets_unidirectional").at("values").get<std::vector<std::int64_t>>();
  const npy_f32_file w("(32, 3)", weights(32, 3));
  const json b = run_json({"t5-bias", "--relative-positions", "-300:301", "--weights", w.path()});
  CHECK(b.at("heads") == 3);
  const auto bias = b.at("bias").get<std::vector<std::vector<double>>>();
  REQUIRE(bias.size() == 3u);
  for (std::size_t h = 0; h < 3; ++h) {
    REQUIRE(bias[h].size() == 601u);
    for (std::size_t i = 0; i < 601; ++i)
      CHECK(bias[h][i] == static_cast<double>(10 * bidi[i] + static_cast<std::int64_t>(h)) + 0.5);
  }
  // The matrix: HF compute_bias's [heads, query, key].
  const json m = run_json(
      {"t5-bias", "--query-length", "4", "--key-length", "6", "--causal", "--weights", w.path()});
  const auto mb = m.at("bias").get<std::vector<std::vector<std::vector<double>>>>();
  REQUIRE(mb.size() == 3u);
  for (std::size_t h = 0; h < 3; ++h)
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t j = 0; j < 6; ++j)
        CHECK(mb[h][i][j] ==
              static_cast<double>(10 * causal[300 + j - i] + static_cast<std::int64_t>(h)) + 0.5);
  const result csv =
      run_cli({"t5-bias", "--relative-positions=-1:2", "--weights", w.path(), "--format", "csv"});
  CHECK(posenc_test::without_echo(csv.out) ==
        "relative_position,bucket,bias_0,bias_1,bias_2\n-1,1,10.5,11.5,12.5\n0,0,0.5,1.5,2.5\n"
        "1,17,170.5,171.5,172.5\n");
  // Errors: the shape, the dtype, values, the size, the file.
  const npy_f32_file rows31("(31, 3)", weights(31, 3));
  check_error({"t5-bias", "--weights", rows31.path()}, 1, "must have shape [32, heads]");
  const npy_f32_file flat("(96,)", weights(32, 3));
  check_error({"t5-bias", "--weights", flat.path()}, 1, "must have shape [32, heads]");
  std::vector<float> nan = weights(32, 1);
  nan[5] = std::numeric_limits<float>::quiet_NaN();
  const npy_f32_file with_nan("(32, 1)", nan);
  check_error({"t5-bias", "--weights", with_nan.path()}, 1, "weight 5 is not finite");
  const npy_f32_file ints("(32, 1)", weights(32, 1), "<i4");
  check_error({"t5-bias", "--weights", ints.path()}, 1, "is not supported");
  check_error({"t5-bias", "--weights", "/nonexistent/w.npy"}, 1, "cannot open");
  check_error({"t5-bias", "--weights", w.path(), "--max-input-bytes", "100"}, 1,
              "is larger than 100 bytes");
  const npy_f32_file wide("(32, 32)", weights(32, 32));
  check_error({"t5-bias", "--weights", wide.path(), "--relative-positions", "0:1048576"}, 1,
              "bias values per call");
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
  check_error({"t5-bias", "--head-dim", "64"}, 2,
              "--head-dim is not a flag of t5-bias (see posenc help t5-bias)");
  check_error({"t5-bias", "--positions", "0:4"}, 2, "--positions is not a flag of t5-bias");
  check_error({"freqs", "--head-dim", "64", "--num-buckets", "32"}, 2,
              "--num-buckets is not a flag of freqs");
  check_error({"freqs", "--head-dim", "64", "--causal"}, 2, "--causal is not a flag of freqs");
  check_error({"freqs", "--head-dim", "64", "--weights", "w.npy"}, 2,
              "--weights is not a flag of freqs");
}
