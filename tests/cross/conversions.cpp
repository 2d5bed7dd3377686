// The kernels' SIMD conversions on AArch64 (detail/batch.hpp: FCVTL / FCVTN for f16, shifts and
// integer rounding for bf16; simd/rope_bf16.hpp: the bf16 bodies' word-pair conversions) against
// storage.hpp's scalar conversions, bit for bit, for xsimd's neon64 and neon architectures:
//   widening   every 16-bit pattern (bf16 and f16, NaNs and subnormals included)
//   narrowing  every float whose upper 16 bits are any value and whose lower 16 bits are every
//              multiple of 1021 (an odd step, so every residue class of the low bits is visited
//              across blocks), the largest, and each of the 16 bit positions k with the patterns
//              around its ties (2^k and 3 * 2^k, minus one, equal, plus one): every sign, exponent,
//              bf16 value, f16 tie position of normal and subnormal results, overflow edge and
//              NaN payload class.
// The scalar conversions are themselves checked against vcvtps2ph / vcvtph2ps, vcvtneps2bf16 and
// MPFR on x86-64 (tests/kernels/storage).
#include <catch2/catch.hpp>

#include <posenc/kernels/detail/batch.hpp>
#include <posenc/kernels/storage.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/storage/simd_conversions_impl.hpp"

namespace {

namespace conv = posenc_test::conv;
namespace sd = posenc::kernels::simd::detail;
using u16 = std::uint16_t;
using u32 = std::uint32_t;

// The hardware path, not the lane-by-lane fallback, for both NEON architectures.
static_assert(sd::conversion_of<xsimd::neon64>() == sd::conversion_kind::neon_a64);
static_assert(sd::conversion_of<xsimd::neon>() == sd::conversion_kind::neon_a64);

struct tally {
  std::size_t checked = 0, bad = 0;
  std::string examples;
  void add(u32 in, u32 got, u32 want) {
    ++checked;
    if (got == want) return;
    if (++bad <= 8) {
      std::ostringstream s;
      s << std::hex << "in 0x" << in << " got 0x" << got << " want 0x" << want << '\n';
      examples += s.str();
    }
  }
};

void report(const char* what, const char* arch, const tally& t) {
  INFO(arch << ' ' << what << ": " << t.bad << " of " << t.checked << " differ\n" << t.examples);
  CHECK(t.checked > 0);
  CHECK(t.bad == 0);
}

// The floats of block h (upper 16 bits h), padded with the first to a multiple of 64.
std::size_t fill_block(u32 h, u32* in) {
  std::size_t n = 0;
  for (u32 l = h % 1021; l < 0x10000u; l += 1021) in[n++] = h << 16 | l;
  in[n++] = h << 16 | 0xffffu;
  for (u32 k = 0; k < 16; ++k)
    for (const u32 tie : {1u << k, 3u << k})
      for (const u32 l : {tie - 1u, tie, tie + 1u}) in[n++] = h << 16 | (l & 0xffffu);
  while (n % 64 != 0) in[n++] = in[0];
  return n;
}

void check_arch(const conv::simd_conversions& c) {
  const std::size_t W = c.width;
  REQUIRE(W == 4);

  std::vector<u16> h(0x10000);
  std::vector<u32> w(0x10000);
  for (u32 b = 0; b < 0x10000u; ++b) h[b] = static_cast<u16>(b);
  {
    tally f, b, pair;
    c.load_widened(conv::kind::f16, h.data(), w.data(), h.size());
    for (u32 i = 0; i < 0x10000u; ++i)
      f.add(i, w[i], std::bit_cast<u32>(posenc::to_float(posenc::f16{h[i]})));
    c.load_widened(conv::kind::bf16, h.data(), w.data(), h.size());
    for (u32 i = 0; i < 0x10000u; ++i)
      b.add(i, w[i], std::bit_cast<u32>(posenc::to_float(posenc::bf16{h[i]})));
    c.widen_bf16(h.data(), w.data(), h.size());
    for (u32 i = 0; i < 0x10000u; ++i)
      pair.add(i, w[i], std::bit_cast<u32>(posenc::to_float(posenc::bf16{h[i]})));
    report("load_widened<f16>, every pattern", c.arch, f);
    report("load_widened<bf16>, every pattern", c.arch, b);
    report("widen_bf16, every pattern", c.arch, pair);
  }

  std::vector<u32> in(0x10000 + 256);
  std::vector<u16> got(in.size()), want_f(in.size()), want_b(in.size());
  tally f, b, pair;
  for (u32 hi = 0; hi < 0x10000u; ++hi) {
    const std::size_t n = fill_block(hi, in.data());
    for (std::size_t j = 0; j < n; ++j) {
      const float x = std::bit_cast<float>(in[j]);
      want_f[j] = posenc::to_f16(x).bits;
      want_b[j] = posenc::to_bf16(x).bits;
    }
    c.store_narrowed(conv::kind::f16, in.data(), got.data(), n);
    for (std::size_t j = 0; j < n; ++j) f.add(in[j], got[j], want_f[j]);
    c.store_narrowed(conv::kind::bf16, in.data(), got.data(), n);
    for (std::size_t j = 0; j < n; ++j) b.add(in[j], got[j], want_b[j]);
    // narrow_bf16's order: out[i + 2k] from in[i + k], out[i + 2k + 1] from in[i + W + k].
    c.narrow_bf16(in.data(), got.data(), n);
    for (std::size_t i = 0; i < n; i += 2 * W) {
      for (std::size_t k = 0; k < W; ++k) {
        pair.add(in[i + k], got[i + 2 * k], want_b[i + k]);
        pair.add(in[i + W + k], got[i + 2 * k + 1], want_b[i + W + k]);
      }
    }
  }
  report("store_narrowed<f16>, float sweep", c.arch, f);
  report("store_narrowed<bf16>, float sweep", c.arch, b);
  report("store_bf16, float sweep", c.arch, pair);
}

}  // namespace

TEST_CASE("cross: NEON conversions == storage.hpp's, every 16-bit pattern and a float sweep",
          "[cross][conversions]") {
  check_arch(conv::make_simd_conversions<xsimd::neon64>());
  check_arch(conv::make_simd_conversions<xsimd::neon>());
}
