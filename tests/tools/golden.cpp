// Interop: `posenc freqs` against HF transformers' own inv_freq and attention_factor
// (tests/golden/hf_rope_params.json). Each golden case's config attributes are written as a
// config.json and read back with --hf-config; the default case is also run with explicit flags.
// Tolerances from tests/golden/README.md: 6 ulp of float32 for inv_freq (HF computes it in
// float32; we round the exact value once), 1e-12 relative for the attention factor.
//
// usage: test_tools_golden POSENC_BINARY GOLDEN_JSON SCRATCH_DIR  (a missing or unreadable
// GOLDEN_JSON fails the test)
#include <nlohmann/json.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "golden/golden.hpp"
#include "support.hpp"

using json = nlohmann::json;

namespace {
using posenc_test::golden::fail;
using posenc_test::golden::failures;

// Distance in float32 ulps (both finite, same sign here).
std::int64_t ulp_distance(float a, float b) {
  auto ordered = [](float x) {
    const auto u = std::bit_cast<std::int32_t>(x);
    return u < 0 ? std::int64_t{INT32_MIN} - u : std::int64_t{u};
  };
  return std::llabs(ordered(a) - ordered(b));
}

void compare(const std::string& id, const json& golden, const std::vector<std::string>& args,
             const std::string& binary) {
  const posenc_test::process_result r = posenc_test::run_process(binary, args);
  if (r.status != 0)
    return fail(id + ": posenc exited with " + std::to_string(r.status) + ": " + r.err);
  const json out = json::parse(r.out);
  const json& want = golden.at("inv_freq").at("values");
  const json& got = out.at("inv_freq");
  if (got.size() != want.size()) return fail(id + ": inv_freq length");
  std::int64_t worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto w = static_cast<float>(want[i].get<double>());
    const auto g = static_cast<float>(got[i].get<double>());
    const std::int64_t d = ulp_distance(w, g);
    if (d > worst) worst = d;
    if (d > 6)
      fail(id + ": inv_freq[" + std::to_string(i) + "] is " + std::to_string(d) + " ulp off");
  }
  const double wa = golden.at("attention_factor").at("value").get<double>();
  const double ga = out.at("attention_factor").get<double>();
  if (!(std::fabs(ga - wa) <= 1e-12 * std::fabs(wa))) fail(id + ": attention_factor");
  std::printf("%-48s max %lld ulp\n", id.c_str(), static_cast<long long>(worst));
}
}  // namespace

int main(int argc, char** argv) {
  return posenc_test::golden_main(
      argc, argv, posenc_test::golden::parse_file<json>,
      [](const std::string& binary, const json& golden, const std::string& scratch) {
        bool saw_default = false;
        for (const json& c : golden.at("cases")) {
          const std::string id = c.at("id").get<std::string>();
          if (id == "default_hd128_base10000") {
            saw_default = true;
            compare(id + " (flags)", c,
                    {"freqs", "--head-dim", "128", "--base", "10000", "--format", "json"}, binary);
          }
          const std::string path = scratch + "/golden_" + id + ".json";
          std::ofstream(path) << c.at("config_attributes").dump();
          compare(id + " (hf-config)", c, {"freqs", "--hf-config", path}, binary);
        }
        if (!saw_default) fail("the golden file has no default_hd128_base10000 case");
        return failures();
      });
}
