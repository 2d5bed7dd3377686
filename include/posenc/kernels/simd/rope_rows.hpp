// Where the RoPE SIMD kernels read a chunk of one token's cos/sin row from (a compact or expanded
// row of the table, or the stack buffers of on-the-fly rows), the values of one pair as the
// reference reads them, the stack buffers of a chunk, and the expansion of a compact row into
// channel order (the interleaved layout's float bodies read that order).
//
// Part of the RoPE SIMD kernels: included by simd/rope.hpp (inside its GCC 12 AVX-512 diagnostic
// region), which is the header to include.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <posenc/kernels/detail/batch.hpp>
#include <posenc/kernels/simd/rope_ops.hpp>
#include <posenc/spec/rope.hpp>

namespace posenc::kernels::simd::detail {

// cos and sin of the pairs [i0, i0 + n) of one token: compact (cos[k], sin[k] for pair i0 + k) or
// expanded (cos, sin point at the row's channel 0).
struct row_source {
  const float* cos;
  const float* sin;
  bool compact;
};

// Pair k of the chunk: c_a, s_a, c_b, s_b as the reference reads them.
inline void pair_values(const row_source& r, rope_layout layout, std::uint32_t rotary_dim,
                        std::size_t i0, std::size_t k, float& c_a, float& s_a, float& c_b,
                        float& s_b) {
  if (r.compact) {
    c_a = c_b = r.cos[k];
    s_b = r.sin[k];
    s_a = -s_b;
  } else {
    const channel_pair ch = pair_channels(layout, rotary_dim, static_cast<std::uint32_t>(i0 + k));
    c_a = r.cos[ch.first];
    s_a = r.sin[ch.first];
    c_b = r.cos[ch.second];
    s_b = r.sin[ch.second];
  }
}

// Stack rows for one chunk: up to row_chunk pairs, four pair-order rows or two channel-order rows.
struct row_buffers {
  alignas(64) float v[4][2 * row_chunk];
};

// Lane i of the first (Hi = false) or second (Hi = true) half of a duplication: lanes 2k and 2k+1
// take element k of the source's low (high) half.
template <bool Hi>
struct duplicate_half {
  static constexpr unsigned get(unsigned i, unsigned n) { return (Hi ? n / 2 : 0) + i / 2; }
};

// A compact row of n pairs in expanded channel order: C[2k] = C[2k+1] = cos[k],
// S[2k] = -sin[k], S[2k+1] = sin[k] (copies and sign flips, exact). Vector blocks duplicate lanes
// with full-width permutes; the rest is scalar.
template <class Arch>
inline void expand_row(const float* cos, const float* sin, std::size_t n, float* C, float* S) {
  using B = fbatch<Arch>;
  using U = ubatch<Arch>;
  constexpr std::size_t W = B::size;
  std::size_t k = 0;
  if constexpr (W >= 4 && !std::is_base_of_v<xsimd::neon, Arch>) {
    alignas(64) std::uint32_t even_sign[W];
    for (std::size_t i = 0; i < W; ++i) even_sign[i] = i % 2 == 0 ? 0x80000000u : 0u;
    const B flip = xsimd::bitwise_cast<B>(U::load_aligned(even_sign));
    constexpr auto lo = xsimd::make_batch_constant<U, duplicate_half<false>>();
    constexpr auto hi = xsimd::make_batch_constant<U, duplicate_half<true>>();
    for (; k + W <= n; k += W) {
      const B c = B::load_unaligned(cos + k), sn = B::load_unaligned(sin + k);
      xsimd::swizzle(c, lo).store_unaligned(C + 2 * k);
      xsimd::swizzle(c, hi).store_unaligned(C + 2 * k + W);
      (xsimd::swizzle(sn, lo) ^ flip).store_unaligned(S + 2 * k);
      (xsimd::swizzle(sn, hi) ^ flip).store_unaligned(S + 2 * k + W);
    }
  }
  for (; k < n; ++k) {
    C[2 * k] = C[2 * k + 1] = cos[k];
    S[2 * k] = -sin[k];
    S[2 * k + 1] = sin[k];
  }
}

}  // namespace posenc::kernels::simd::detail
