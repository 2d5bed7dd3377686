// Interop: `posenc apply` against HF transformers' Llama apply_rotary_pos_emb
// (tests/golden/hf_apply_rotary.json: q and k [batch 1, heads 2, tokens 8, head_dim 128],
// positions 0, 1, 2, 3, 100, 4095, 4096, 65535, base 10000, half-split layout, float32).
//
// HF holds the angle as one float32 product fl32(p * inv_freq_hf) with inv_freq_hf within 1 ulp
// of base^(-2i/128) (tests/golden/README.md); we use the exact angle a = p * theta_i. So per pair
// the angle differs by at most |a| (2^-23 + 2^-24) = 3 |a| 2^-24. cos and sin are Lipschitz-1 and
// each side rounds them with at most 1 ulp (HF, measured in the golden file) and 0.5 ulp (ours),
// i.e. at most 1.5 * 2^-24 absolute for values in [-1, 1]. The output y_a = x_a c - x_b s is then
// computed by both in float32 with at most three roundings each (two products, one add; fused or
// not), each at most 2^-24 of |x_a| + |x_b|. Altogether, with M = |x_a| + |x_b|:
//   |y_ours - y_hf| <= M * (3 |a| + 1.5 + 6) * 2^-24 = M * (3 |a| + 7.5) * 2^-24.
// At p = 65535, i = 0 the angle term is 3 * 65535 * 2^-24 = 0.0117: HF's error, not ours.
//
// usage: test_tools_apply_golden POSENC_BINARY GOLDEN_JSON SCRATCH_DIR (a missing or unreadable
// GOLDEN_JSON fails the test)
#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "golden/golden.hpp"
#include "support.hpp"

using json = nlohmann::json;

namespace {
using posenc_test::f32_text;

int failures = 0;

void check(const std::string& name, const json& golden, const std::string& binary,
           const std::string& scratch) {
  const std::vector<std::int64_t> positions =
      golden.at("parameters").at("positions").get<std::vector<std::int64_t>>();
  const std::vector<double> in = golden.at(name).at("values").get<std::vector<double>>();
  const std::vector<double> want =
      golden.at(name + "_embed").at("values").get<std::vector<double>>();
  constexpr std::size_t heads = 2, tokens = 8, hd = 128, half = hd / 2;
  if (in.size() != heads * tokens * hd || want.size() != in.size() || positions.size() != tokens) {
    std::printf("FAIL %s: unexpected sizes in the golden file\n", name.c_str());
    ++failures;
    return;
  }
  // HF [1, heads, tokens, hd] -> ours [tokens, heads, hd].
  auto hf_index = [&](std::size_t t, std::size_t h, std::size_t c) {
    return (h * tokens + t) * hd + c;
  };
  std::string text = "{\"x\": [";
  for (std::size_t t = 0; t < tokens; ++t)
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t c = 0; c < hd; ++c)
        text += ((t | h | c) ? ", " : "") + f32_text(static_cast<float>(in[hf_index(t, h, c)]));
  text += "], \"shape\": [8, 2, 128], \"positions\": [";
  for (std::size_t t = 0; t < tokens; ++t) text += (t ? ", " : "") + std::to_string(positions[t]);
  text += "]}";
  const std::string path = scratch + "/apply_golden_" + name + ".json";
  std::ofstream(path) << text;

  const posenc_test::process_result r = posenc_test::run_process(
      binary,
      {"apply", "--input", path, "--base", "10000", "--head-dim", "128", "--layout", "half"});
  if (r.status != 0) {
    std::printf("FAIL %s: posenc exited with %d: %s\n", name.c_str(), r.status, r.err.c_str());
    ++failures;
    return;
  }
  const std::vector<double> got = json::parse(r.out).at("y").get<std::vector<double>>();
  if (got.size() != in.size()) {
    std::printf("FAIL %s: y has %zu values\n", name.c_str(), got.size());
    ++failures;
    return;
  }
  double worst = 0.0, worst_abs = 0.0;
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t h = 0; h < heads; ++h) {
      for (std::size_t c = 0; c < hd; ++c) {
        const std::size_t i = c % half;
        const double angle = static_cast<double>(positions[t]) *
                             std::pow(10000.0, -2.0 * static_cast<double>(i) / 128.0);
        const double m = std::fabs(in[hf_index(t, h, i)]) + std::fabs(in[hf_index(t, h, i + half)]);
        const double bound = m * (3.0 * angle + 7.5) * 0x1p-24;
        const double diff = std::fabs(got[(t * heads + h) * hd + c] - want[hf_index(t, h, c)]);
        if (diff > bound) {
          if (failures < 20)
            std::printf("FAIL %s: token %zu head %zu channel %zu: |ours - HF| = %.3g > %.3g\n",
                        name.c_str(), t, h, c, diff, bound);
          ++failures;
        }
        if (bound > 0 && diff / bound > worst) worst = diff / bound;
        if (diff > worst_abs) worst_abs = diff;
      }
    }
  }
  std::printf("%s_embed: max |ours - HF| = %.3g, max (|ours - HF| / bound) = %.3f\n", name.c_str(),
              worst_abs, worst);
}
}  // namespace

int main(int argc, char** argv) {
  return posenc_test::golden_main(
      argc, argv, posenc_test::golden::parse_file<json>,
      [](const std::string& binary, const json& golden, const std::string& scratch) {
        check("q", golden, binary, scratch);
        check("k", golden, binary, scratch);
        return failures;
      });
}
