// Interop with tests/golden/hf_t5_relative_bucket.json (README.md there): HF's
// T5Attention._relative_position_bucket(relative_position, bidirectional, 32, 128) for relative
// positions -300 .. 300, both directions. t5_bucket with log = hf_float32 must equal every bucket;
// the exact form must agree with it everywhere (formulas.md §13: for 32 buckets and max_distance
// 128 the only distances below max_distance where the exact scaled log is an integer are n = 16,
// 32, 64 bidirectional (2, 4, 6), and there HF's float32 value is that integer too).
//
// usage: test_t5_golden GOLDEN_DIR   (a missing or unreadable file fails, naming the file)
#include <posenc/tables/t5.hpp>

#include <nlohmann/json.hpp>

#include "golden/golden.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

using json = nlohmann::json;

namespace {
using posenc_test::golden::fail;
using posenc_test::golden::failures;

void check(const json& g) {
  const auto rel = g.at("relative_position").at("values").get<std::vector<std::int64_t>>();
  if (g.at("parameters").at("num_buckets").get<int>() != 32 ||
      g.at("parameters").at("max_distance").get<int>() != 128 || rel.size() != 601) {
    fail("t5: unexpected golden parameters");
    return;
  }
  struct side {
    const char* key;
    posenc::t5_direction direction;
    std::vector<std::int64_t> exact_differs;  // relative positions where exact != HF
  };
  const side sides[] = {{"buckets_bidirectional", posenc::t5_direction::bidirectional, {}},
                        {"buckets_unidirectional", posenc::t5_direction::causal, {}}};
  for (const side& s : sides) {
    const auto want = g.at(s.key).at("values").get<std::vector<std::int64_t>>();
    if (want.size() != rel.size()) {
      fail(std::string("t5: size of ") + s.key);
      continue;
    }
    posenc::t5_config c{32, 128, 1, s.direction, posenc::t5_log_kind::hf_float32};
    posenc::t5_config e = c;
    e.log = posenc::t5_log_kind::exact;
    std::size_t equal = 0;
    std::vector<std::int64_t> differs;
    for (std::size_t i = 0; i < rel.size(); ++i) {
      const std::uint32_t b = posenc::t5_bucket(c, rel[i]);
      if (b == want[i])
        ++equal;
      else
        fail(std::string("t5 ") + s.key + " rel=" + std::to_string(rel[i]) + ": ours " +
             std::to_string(b) + ", HF " + std::to_string(want[i]));
      if (posenc::t5_bucket(e, rel[i]) != static_cast<std::uint32_t>(want[i]))
        differs.push_back(rel[i]);
    }
    if (differs != s.exact_differs) {
      std::string list;
      for (const std::int64_t r : differs) list += " " + std::to_string(r);
      fail(std::string("t5 ") + s.key + ": exact form differs from HF at" + list);
    }
    std::printf("t5 %s: %zu of %zu buckets equal HF's; exact form differs at %zu positions\n",
                s.key, equal, rel.size(), differs.size());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fputs("usage: test_t5_golden GOLDEN_DIR\n", stderr);
    return 2;
  }
  try {
    check(posenc_test::golden::parse_file(std::filesystem::path(argv[1]) /
                                          "hf_t5_relative_bucket.json"));
  } catch (const std::exception& e) {
    fail(std::string("t5: ") + e.what());
  }
  if (failures() > 0) std::printf("%d failures\n", failures());
  return failures() == 0 ? 0 : 1;
}
