// Interop with the reference numbers in tests/golden (README.md there):
// - alibi_slopes.json: get_slopes of the paper's reference code for 1..16 heads. Our reference
//   slopes must equal its float64 values and its float32 column bit for bit.
// - sinusoidal.json, fairseq: get_embedding(64, 128) computed by torch in float32. fairseq forms
//   w_k = exp(k * fl32(-ln(1e4)/63)) and the angle fl32(p * w_k) in float32, then float32 sin/cos
//   (within ~1 ulp); ours are the exact values rounded once. Error budget per entry (p < 64,
//   |x_k| = k ln(1e4)/63 <= 9.22): the exponent k * fl32(c) carries |x_k| (2^-24 + 2^-24), exp adds
//   1 ulp (2^-23) relative, the product p * w_k 2^-24: the angle is off by at most
//   p w_k (2|x_k| 2^-24 + 2^-23 + 2^-24); sin/cos move by at most that, then torch's rounding
//   (<= 1 ulp <= 2^-24 for |v| <= 1) and ours (<= 2^-25). We require
//   |ours - fairseq| <= p w_k (|x_k| 2^-23 + 1.5 * 2^-23) + 2^-24 + 2^-25 per entry.
// - sinusoidal.json, paper formula in numpy float64: angle = p / fl64(10000^fl64(2i/d)). The
//   rounded exponent x = 2i/d (2^-53 relative) moves the power by ln(1e4) x 2^-53 relative, pow
//   rounds (2^-53), the division rounds (2^-53): the angle is off by at most
//   p w (9.22 x + 2) 2^-53 (the largest deviation, 9e-15 at p = 49, column 3, is this angle error
//   next to a zero of cos). numpy 1.24's float64 sin/cos are its own SIMD routines, not the C
//   library's: measured here they are up to 3 ulp from the correctly rounded value near 1, so we
//   allow 4 ulp (4 * 2^-53 for |v| < 1), plus our rounding (2^-54):
//   |ours - numpy| <= p w_k (9.22 x + 2.5) 2^-53 + 4 * 2^-53 + 2^-54.
//
// usage: test_additive_golden GOLDEN_DIR   (a missing or unreadable file fails, naming the file)
#include <posenc/tables/alibi.hpp>
#include <posenc/tables/sinusoidal.hpp>

#include <nlohmann/json.hpp>

#include "golden/golden.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

using json = nlohmann::json;

namespace {
using posenc_test::golden::fail;
using posenc_test::golden::failures;

std::uint64_t parse_hex(const std::string& s) {
  return std::stoull(s, nullptr, 16);
}

void check_alibi(const json& g) {
  std::size_t n64 = 0, n32 = 0, total = 0;
  for (const json& r : g.at("get_slopes").at("results")) {
    const auto n = r.at("n_heads").get<std::uint32_t>();
    const auto& h64 = r.at("hex_f64");
    const auto& h32 = r.at("hex_f32");
    if (h64.size() != n || h32.size() != n)
      fail("alibi: golden sizes for n = " + std::to_string(n));
    for (std::uint32_t h = 0; h < n; ++h) {
      ++total;
      const double s = posenc::alibi_reference_slope(n, h);
      const float f = posenc::alibi_slope<float>({n}, h);
      if (std::bit_cast<std::uint64_t>(s) == parse_hex(h64[h].get<std::string>()))
        ++n64;
      else
        fail("alibi float64 n=" + std::to_string(n) + " h=" + std::to_string(h));
      if (std::bit_cast<std::uint32_t>(f) == parse_hex(h32[h].get<std::string>()))
        ++n32;
      else
        fail("alibi float32 n=" + std::to_string(n) + " h=" + std::to_string(h));
    }
  }
  std::printf("alibi: %zu slopes; float64 bitwise %zu, float32 bitwise %zu\n", total, n64, n32);
  if (total == 0) fail("alibi: no golden slopes");
}

void check_fairseq(const json& g) {
  const json& r = g.at("fairseq").at("results").at(0);
  const auto P = r.at("num_embeddings").get<std::size_t>();
  const auto d = r.at("embedding_dim").get<std::uint32_t>();
  const auto& hex = r.at("embedding").at("hex");
  if (!r.at("padding_idx").is_null() || hex.size() != P * d) {
    fail("fairseq: unexpected golden case");
    return;
  }
  const posenc::sinusoidal_config c{d, posenc::sinusoidal_layout::split};
  std::vector<float> ours(P * d);
  if (posenc::build_sinusoidal_table<float>(c, P, ours.data()) != posenc::sinusoidal_error::ok) {
    fail("fairseq: build");
    return;
  }
  const std::uint32_t half = d / 2;
  std::size_t bitwise = 0;
  double max_dev = 0.0, max_ratio = 0.0;
  for (std::size_t p = 0; p < P; ++p) {
    for (std::uint32_t col = 0; col < d; ++col) {
      const auto theirs =
          std::bit_cast<float>(static_cast<std::uint32_t>(parse_hex(hex[p * d + col])));
      const float mine = ours[p * d + col];
      if (std::bit_cast<std::uint32_t>(mine) == std::bit_cast<std::uint32_t>(theirs)) ++bitwise;
      const std::uint32_t k = col % half;
      const double x = k * std::log(10000.0) / (half - 1);
      const double w = std::exp(-x);
      const double bound =
          static_cast<double>(p) * w * (x * 0x1p-23 + 1.5 * 0x1p-23) + 0x1p-24 + 0x1p-25;
      const double dev = std::fabs(static_cast<double>(mine) - static_cast<double>(theirs));
      max_dev = std::max(max_dev, dev);
      max_ratio = std::max(max_ratio, dev / bound);
      if (dev > bound)
        fail("fairseq p=" + std::to_string(p) + " col=" + std::to_string(col) +
             " dev=" + std::to_string(dev));
    }
  }
  std::printf(
      "fairseq get_embedding(64, 128): %zu of %zu entries bitwise equal; max |ours - "
      "fairseq| = %.3g (%.2f of the budget)\n",
      bitwise, P * d, max_dev, max_ratio);
}

void check_paper(const json& g) {
  const json& r = g.at("paper_formula_computed_here");
  const auto shape = r.at("shape").get<std::vector<std::size_t>>();
  const std::size_t P = shape.at(0);
  const auto d = static_cast<std::uint32_t>(shape.at(1));
  const auto& hex = r.at("hex_f64");
  const posenc::sinusoidal_config c{d, posenc::sinusoidal_layout::paper};
  std::vector<double> ours(P * d);
  if (hex.size() != P * d ||
      posenc::build_sinusoidal_table<double>(c, P, ours.data()) != posenc::sinusoidal_error::ok) {
    fail("paper: unexpected golden case");
    return;
  }
  std::size_t bitwise = 0;
  double max_dev = 0.0, max_ratio = 0.0;
  for (std::size_t p = 0; p < P; ++p)
    for (std::uint32_t col = 0; col < d; ++col) {
      const auto theirs = std::bit_cast<double>(parse_hex(hex[p * d + col]));
      const double mine = ours[p * d + col];
      if (std::bit_cast<std::uint64_t>(mine) == std::bit_cast<std::uint64_t>(theirs)) ++bitwise;
      const double x = 2.0 * (col / 2) / d;
      const double w = std::pow(10000.0, -x);
      const double angle = static_cast<double>(p) * w;
      const double bound = angle * (9.22 * x + 2.5) * 0x1p-53 + 4 * 0x1p-53 + 0x1p-54;
      const double dev = std::fabs(mine - theirs);
      max_dev = std::max(max_dev, dev);
      max_ratio = std::max(max_ratio, dev / bound);
      if (dev > bound) fail("paper p=" + std::to_string(p) + " col=" + std::to_string(col));
    }
  std::printf(
      "paper formula (numpy float64) 64 x 128: %zu of %zu entries bitwise equal; max "
      "|ours - numpy| = %.3g (%.2f of the budget)\n",
      bitwise, P * d, max_dev, max_ratio);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fputs("usage: test_additive_golden GOLDEN_DIR\n", stderr);
    return 2;
  }
  const std::filesystem::path dir(argv[1]);
  // Each file on its own: a damaged sinusoidal.json must not hide the ALiBi comparison.
  try {
    check_alibi(posenc_test::golden::parse_file(dir / "alibi_slopes.json"));
  } catch (const std::exception& e) {
    fail(std::string("alibi: ") + e.what());
  }
  try {
    const json s = posenc_test::golden::parse_file(dir / "sinusoidal.json");
    check_fairseq(s);
    check_paper(s);
  } catch (const std::exception& e) {
    fail(std::string("sinusoidal: ") + e.what());
  }
  if (failures() > 0) std::printf("%d failures\n", failures());
  return failures() == 0 ? 0 : 1;
}
