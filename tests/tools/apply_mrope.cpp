// `posenc apply` with multi-axis positions, in-process (run()):
// - M-RoPE against HF: tests/golden/hf_mrope_qwen2vl.json (README there), the outputs of
//   transformers' Qwen2-VL apply_multimodal_rotary_pos_emb for q, k [1, 2, 12, 128] and the
//   position_ids [3, 1, 12] of Qwen2VLModel.get_rope_index (an image between text tokens), through
//   --preset qwen2-vl-7b with the JSON positions; every element within M (3|a| + 7.5) 2^-24 of
//   HF's (the bound of tools/apply_golden: M = |x_a| + |x_b|, a the pair's angle, HF's float32
//   angle error included). A missing golden file fails.
// - the same call through --hf-config (rope_scaling {"type": "mrope", "mrope_section"}), through
//   flags (--mrope-section 16,24,24) and with --position-ids [3, 1, 12] and [3, 12] .npy files:
//   bit for bit the preset's result;
// - the interleaved layout (Qwen3-VL, --mrope-interleaved) and 2-D axial RoPE (pixtral-12b)
//   against a float64 rotation written here from HF's code (apply_interleaved_mrope: pair i
//   follows height when i % 3 == 1 and i < 3 s_h, width when i % 3 == 2 and i < 3 s_w, else
//   temporal; PixtralRotaryEmbedding: rows take freqs[::2], columns freqs[1::2], and inv_freq is
//   cat(rows, columns)): within M 2^-22 (two float32 roundings of cos/sin, two products and a
//   sum, each at most 2^-24 relative, on values of magnitude M);
// - every error of the streams: counts, lengths, shapes, sections, flags on other commands.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include "golden_file.hpp"
#include "support.hpp"

namespace {
using json = nlohmann::json;
using posenc_test::run_cli;
using result = posenc_test::cli_result;

using posenc_test::scratch_file;

// A .npy of int64 ids with the given shape ("(3, 1, 12)").
std::string npy_i64(const std::string& shape, const std::vector<std::int64_t>& v) {
  const std::string dict = "{'descr': '<i8', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t unpadded = 10 + dict.size() + 1;
  const std::size_t total = (unpadded + 63) / 64 * 64;
  const std::string header = dict + std::string(total - unpadded, ' ') + "\n";
  std::string s = "\x93NUMPY";
  s += '\x01';
  s += '\0';
  s += static_cast<char>(header.size() & 0xff);
  s += static_cast<char>(header.size() >> 8);
  s += header;
  for (const std::int64_t x : v)
    for (int k = 0; k < 8; ++k)
      s += static_cast<char>((static_cast<std::uint64_t>(x) >> (8 * k)) & 0xff);
  return s;
}

std::string tensor_json(const std::vector<float>& x, const std::vector<std::uint64_t>& shape,
                        const std::vector<std::int64_t>* positions = nullptr) {
  json j;
  j["x"] = x;
  j["shape"] = shape;
  if (positions != nullptr) j["positions"] = *positions;
  return j.dump();
}

json golden() {
  return posenc_test::golden_json("hf_mrope_qwen2vl.json");
}

json run_ok(const std::vector<std::string>& args) {
  const result r = run_cli(args);
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  // The result only: the echo of the configuration names where each value came from, which
  // differs between the equivalent configurations compared here (tests/tools/echo.cpp checks it).
  json j = json::parse(r.out);
  j.erase("config");
  return j;
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

// x rotated in float64 by the angles a[token][pair] (half layout, [heads, tokens, d]).
std::vector<double> rotate(const std::vector<float>& x, std::size_t heads, std::size_t tokens,
                           std::size_t d, const std::vector<std::vector<double>>& a) {
  std::vector<double> y(x.size());
  const std::size_t h2 = d / 2;
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t t = 0; t < tokens; ++t)
      for (std::size_t i = 0; i < h2; ++i) {
        const std::size_t b = (h * tokens + t) * d;
        const double c = std::cos(a[t][i]), s = std::sin(a[t][i]);
        y[b + i] = x[b + i] * c - x[b + i + h2] * s;
        y[b + i + h2] = x[b + i + h2] * c + x[b + i] * s;
      }
  return y;
}

std::vector<float> inputs(std::size_t n, std::uint32_t seed) {
  std::vector<float> x(n);
  for (float& v : x) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<float>(seed >> 8) * 0x1p-23f - 1.0f;
  }
  return x;
}

}  // namespace

TEST_CASE("tools/apply_mrope: Qwen2-VL against HF's apply_multimodal_rotary_pos_emb",
          "[apply_mrope]") {
  const json g = golden();
  const auto q = g.at("q").at("values").get<std::vector<float>>();
  const auto k = g.at("k").at("values").get<std::vector<float>>();
  const auto q_embed = g.at("q_embed").at("values").get<std::vector<double>>();
  const auto k_embed = g.at("k_embed").at("values").get<std::vector<double>>();
  const auto ids =
      g.at("position_ids_input").at("position_ids").at("values").get<std::vector<std::int64_t>>();
  REQUIRE(ids.size() == 36u);
  const std::size_t heads = 2, tokens = 12, d = 128;
  const scratch_file qf(tensor_json(q, {1, 2, 12, 128}, &ids), "q.json");
  const scratch_file kf(tensor_json(k, {1, 2, 12, 128}), "k.json");
  const std::vector<std::string> io = {"--input", qf.path(),       "--input-k",
                                       kf.path(), "--shape-order", "BHTD"};
  std::vector<std::string> a = {"apply", "--preset", "qwen2-vl-7b"};
  a.insert(a.end(), io.begin(), io.end());
  const json y = run_ok(a);
  const auto yq = y.at("y").get<std::vector<double>>();
  const auto yk = y.at("y_k").get<std::vector<double>>();
  REQUIRE(yq.size() == q.size());
  REQUIRE(yk.size() == k.size());
  // Pair i's stream: sections [16, 24, 24] (contiguous; HF splits mrope_section * 2 chunks).
  const auto stream_of = [](std::size_t i) -> std::size_t { return i < 16 ? 0 : i < 40 ? 1 : 2; };
  double worst = 0.0;
  for (const auto& [x, got, hf] : {std::tuple{&q, &yq, &q_embed}, std::tuple{&k, &yk, &k_embed}})
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t t = 0; t < tokens; ++t)
        for (std::size_t i = 0; i < d / 2; ++i) {
          const std::size_t b = (h * tokens + t) * d;
          const double angle = static_cast<double>(ids[stream_of(i) * tokens + t]) *
                               std::pow(1000000.0, -2.0 * static_cast<double>(i) / 128.0);
          const double M = std::fabs((*x)[b + i]) + std::fabs((*x)[b + i + 64]);
          const double bound = M * (3.0 * std::fabs(angle) + 7.5) * 0x1p-24;
          for (std::size_t ch : {i, i + 64}) {
            const double diff = std::fabs((*got)[b + ch] - (*hf)[b + ch]);
            CHECK(diff <= bound);
            if (bound > 0) worst = std::max(worst, diff / bound);
          }
        }
  WARN("largest |posenc - HF| / bound: " << worst);

  // The same configuration from a config.json and from flags, and the positions from .npy files
  // ([3, batch, tokens] and [3, tokens]): the same bits.
  const scratch_file cfg(
      R"({"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28,
          "rope_theta": 1000000.0, "max_position_embeddings": 32768,
          "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}})",
      "config.json");
  a = {"apply", "--hf-config", cfg.path()};
  a.insert(a.end(), io.begin(), io.end());
  CHECK(run_ok(a) == y);
  a = {"apply", "--head-dim", "128", "--base", "1000000", "--mrope-section", "16,24,24"};
  a.insert(a.end(), io.begin(), io.end());
  CHECK(run_ok(a) == y);
  const scratch_file q_plain(tensor_json(q, {1, 2, 12, 128}), "q_plain.json");
  const scratch_file ids3(npy_i64("(3, 1, 12)", ids), "ids3.npy");
  const scratch_file ids2(npy_i64("(3, 12)", ids), "ids2.npy");
  for (const scratch_file* f : {&ids3, &ids2})
    CHECK(run_ok({"apply", "--preset", "qwen2-vl-7b", "--input", q_plain.path(), "--input-k",
                  kf.path(), "--shape-order", "BHTD", "--position-ids", f->path()}) == y);
  // Qwen2.5-VL has the same rotation.
  a = {"apply", "--preset", "qwen2.5-vl-7b"};
  a.insert(a.end(), io.begin(), io.end());
  CHECK(run_ok(a) == y);
  // Text only (the same position on every stream) is 1-D RoPE: no positions given is 0, 1, ...
  const scratch_file q_text(tensor_json(q, {1, 2, 12, 128}), "q_text.json");
  CHECK(run_ok({"apply", "--preset", "qwen2-vl-7b", "--input", q_text.path(), "--shape-order",
                "BHTD"}) == run_ok({"apply", "--head-dim", "128", "--base", "1000000", "--input",
                                    q_text.path(), "--shape-order", "BHTD"}));
}

TEST_CASE("tools/apply_mrope: interleaved sections and 2-D axial against float64 rotations",
          "[apply_mrope]") {
  const std::size_t heads = 2, tokens = 5, d = 64, h2 = 32;
  const std::vector<float> x = inputs(tokens * heads * d, 7);
  // THD input; the reference rotates [heads, tokens, d], so transpose.
  std::vector<float> x_htd(x.size());
  for (std::size_t t = 0; t < tokens; ++t)
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t c = 0; c < d; ++c)
        x_htd[(h * tokens + t) * d + c] = x[(t * heads + h) * d + c];
  const auto check_against = [&](const json& y, const std::vector<std::vector<double>>& angle) {
    const auto got = y.at("y").get<std::vector<double>>();
    const std::vector<double> want = rotate(x_htd, heads, tokens, d, angle);
    REQUIRE(got.size() == want.size());
    for (std::size_t t = 0; t < tokens; ++t)
      for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t i = 0; i < h2; ++i) {
          const std::size_t b = (h * tokens + t) * d;
          const double M = std::fabs(x_htd[b + i]) + std::fabs(x_htd[b + i + h2]);
          for (std::size_t ch : {i, i + h2}) {
            INFO("token " << t << " head " << h << " channel " << ch);
            CHECK(std::fabs(got[(t * heads + h) * d + ch] - want[b + ch]) <= M * 0x1p-22);
          }
        }
  };
  const auto theta = [&](std::size_t k) {
    return std::pow(10000.0, -2.0 * static_cast<double>(k) / static_cast<double>(d));
  };

  // Interleaved M-RoPE, sections [12, 10, 10] (t, h, w): streams t = 0..4, h = 3t+1, w = 7-t.
  const std::vector<std::int64_t> p = {0, 1, 2, 3, 4, 1, 4, 7, 10, 13, 7, 6, 5, 4, 3};
  const scratch_file f(tensor_json(x, {5, 2, 64}, &p), "x.json");
  std::vector<std::vector<double>> angle(tokens, std::vector<double>(h2));
  for (std::size_t t = 0; t < tokens; ++t)
    for (std::size_t i = 0; i < h2; ++i) {
      const std::size_t s = (i % 3 == 1 && i < 3 * 10)   ? std::size_t{1}
                            : (i % 3 == 2 && i < 3 * 10) ? std::size_t{2}
                                                         : std::size_t{0};
      angle[t][i] = static_cast<double>(p[s * tokens + t]) * theta(i);
    }
  check_against(run_ok({"apply", "--head-dim", "64", "--mrope-section", "12,10,10",
                        "--mrope-interleaved", "--input", f.path()}),
                angle);
  const scratch_file cfg(
      R"({"head_dim": 64, "rope_scaling": {"rope_type": "default", "mrope_section": [12, 10, 10],
          "mrope_interleaved": true}})",
      "config3.json");
  check_against(run_ok({"apply", "--hf-config", cfg.path(), "--input", f.path()}), angle);

  // 2-D axial (Pixtral: head_dim 64, base 10000): pair j < 16 turns by row * freqs[2j], pair
  // 16 + j by column * freqs[2j + 1].
  const std::vector<std::int64_t> rc = {0, 0, 1, 3, 63, 0, 5, 2, 9, 63};
  const scratch_file g(tensor_json(x, {5, 2, 64}, &rc), "xy.json");
  for (std::size_t t = 0; t < tokens; ++t)
    for (std::size_t j = 0; j < 16; ++j) {
      angle[t][j] = static_cast<double>(rc[t]) * theta(2 * j);
      angle[t][16 + j] = static_cast<double>(rc[tokens + t]) * theta(2 * j + 1);
    }
  const json axial = run_ok({"apply", "--preset", "pixtral-12b", "--input", g.path()});
  check_against(axial, angle);
  // csv names the streams.
  const result csv =
      run_cli({"apply", "--preset", "pixtral-12b", "--input", g.path(), "--format", "csv"});
  REQUIRE(csv.status == 0);
  CHECK(posenc_test::without_echo(csv.out).starts_with(
      "token,position_height,position_width,head,y0,"));
  CHECK(csv.out.find("\n3,3,9,0,") != std::string::npos);
  const result text =
      run_cli({"apply", "--preset", "pixtral-12b", "--input", g.path(), "--format", "text"});
  CHECK(text.out.find("token 4  position 63/63  head 1\n") != std::string::npos);
}

TEST_CASE("tools/apply_mrope: errors", "[apply_mrope]") {
  const std::vector<float> x = inputs(4 * 1 * 8, 3);
  const std::vector<std::int64_t> four = {0, 1, 2, 3};
  const scratch_file one(tensor_json(x, {4, 1, 8}, &four), "one.json");
  const std::vector<std::string> cfg = {"--head-dim", "8", "--mrope-section", "1,1,2"};
  std::vector<std::string> a = {"apply", "--input", one.path()};
  a.insert(a.end(), cfg.begin(), cfg.end());
  check_error(a, 1, "\"positions\" must have 3 x tokens integers (12)");
  check_error(a, 1, "the configuration is M-RoPE");
  // 2 streams where M-RoPE needs 3; 3 where 2-D needs 2.
  const std::vector<std::int64_t> eight = {0, 1, 2, 3, 0, 1, 2, 3};
  const scratch_file two(tensor_json(x, {4, 1, 8}, &eight), "two.json");
  a = {"apply", "--input", two.path()};
  a.insert(a.end(), cfg.begin(), cfg.end());
  check_error(a, 1, "must have 3 x tokens integers");
  const std::vector<float> x64 = inputs(2 * 64, 5);
  const std::vector<std::int64_t> six = {0, 1, 2, 3, 4, 5};
  const scratch_file three(tensor_json(x64, {2, 1, 64}, &six), "three.json");
  check_error({"apply", "--preset", "pixtral-12b", "--input", three.path()}, 1,
              "must have 2 x tokens integers (4)");
  const scratch_file none(tensor_json(x64, {2, 1, 64}), "none.json");
  check_error({"apply", "--preset", "pixtral-12b", "--input", none.path()}, 1,
              "2-D axial RoPE needs the (height, width) of every token");
  // A negative or too large position in a stream.
  const std::vector<std::int64_t> bad = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 4294967296};
  const scratch_file big(tensor_json(x, {4, 1, 8}, &bad), "big.json");
  a = {"apply", "--input", big.path()};
  a.insert(a.end(), cfg.begin(), cfg.end());
  check_error(a, 1, "positions[11] must be an integer with 0 <= p < 4294967296");
  // Position ids of the wrong shape.
  const scratch_file plain(tensor_json(x, {4, 1, 8}), "plain.json");
  const scratch_file ids(npy_i64("(2, 4)", {0, 1, 2, 3, 0, 1, 2, 3}), "ids.npy");
  a = {"apply", "--input", plain.path(), "--position-ids", ids.path()};
  a.insert(a.end(), cfg.begin(), cfg.end());
  check_error(a, 1, "position ids must have shape [3, 4] or [3, 1, 4]");
  // Sections that do not sum to rotary_dim / 2, an interleave without sections, bad flags.
  check_error({"apply", "--input", plain.path(), "--head-dim", "8", "--mrope-section", "1,1,1"}, 1,
              "mrope_section");
  check_error({"apply", "--input", plain.path(), "--head-dim", "8", "--mrope-interleaved"}, 1,
              "mrope_interleaved needs mrope_section");
  for (const char* s : {"1,2", "1,2,3,4", "a,b,c", "1,,2", "-1,2,3", ""})
    check_error({"apply", "--input", plain.path(), "--head-dim", "8", "--mrope-section", s}, 2,
                "--mrope-section needs T,H,W");
  check_error({"freqs", "--head-dim", "8", "--mrope-section", "1,1,2"}, 2,
              "--mrope-section is not a flag of freqs");
  check_error(
      {"apply", "--input", plain.path(), "--preset", "pixtral-12b", "--mrope-section", "8,12,12"},
      2, "do not apply to 2-D axial RoPE");
  const scratch_file bad_cfg(
      R"({"head_dim": 8, "rope_scaling": {"type": "mrope", "mrope_section": [1, 3]}})", "bad.json");
  check_error({"apply", "--input", plain.path(), "--hf-config", bad_cfg.path()}, 1,
              "rope_scaling.mrope_section must be a list of 3 non-negative integers");
}
