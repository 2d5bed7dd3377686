// Where the RoPE SIMD kernels read a chunk of one token's cos/sin row from (a compact or expanded
// row of the table, or the stack buffers of on-the-fly rows), the stack buffers of a chunk, the
// expansion of a compact row into channel order (the interleaved layout's float bodies read that
// order), and the vector copies that put a row in the bf16 bodies' lane order (deinterleave,
// negate_row).
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

namespace posenc::kernels::simd::detail {

// cos and sin of the pairs [i0, i0 + n) of one token: compact (cos[k], sin[k] for pair i0 + k) or
// expanded (cos, sin point at the row's channel 0).
struct row_source {
  const float* cos;
  const float* sin;
  bool compact;
};

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

// W pairs of a compact row (cos, sin) in expanded channel order, as two vectors each: C[2k] =
// C[2k+1] = cos[k], S[2k] = -sin[k], S[2k+1] = sin[k] (full-width permutes and a sign flip,
// exact). W >= 4 (not NEON: expand_row has its own code there). Always inlined: GCC 12 left it a
// call per pair of row vectors in the register path of a decode call once decode_chunk called that
// path directly (about 4 ns of a [1, 1, 128] f16 call on AMD Zen 5).
template <class Arch>
[[gnu::always_inline]] inline void expand_block(const float* cos, const float* sin,
                                                fbatch<Arch>& c_lo, fbatch<Arch>& c_hi,
                                                fbatch<Arch>& s_lo, fbatch<Arch>& s_hi) {
  using B = fbatch<Arch>;
  using U = ubatch<Arch>;
  constexpr std::size_t W = B::size;
  alignas(64) std::uint32_t even_sign[W];
  for (std::size_t i = 0; i < W; ++i) even_sign[i] = i % 2 == 0 ? 0x80000000u : 0u;
  const B flip = xsimd::bitwise_cast<B>(U::load_aligned(even_sign));
  constexpr auto lo = xsimd::make_batch_constant<U, duplicate_half<false>>();
  constexpr auto hi = xsimd::make_batch_constant<U, duplicate_half<true>>();
  const B c = B::load_unaligned(cos), sn = B::load_unaligned(sin);
  c_lo = xsimd::swizzle(c, lo);
  c_hi = xsimd::swizzle(c, hi);
  s_lo = xsimd::swizzle(sn, lo) ^ flip;
  s_hi = xsimd::swizzle(sn, hi) ^ flip;
}

// A compact row of n pairs in expanded channel order: C[2k] = C[2k+1] = cos[k],
// S[2k] = -sin[k], S[2k+1] = sin[k] (copies and sign flips, exact). Vector blocks duplicate lanes
// with full-width permutes (NEON: ZIP1/ZIP2, as xsimd 8.1's NEON swizzle goes through memory); the
// last n % W pairs (only a row's last chunk has them) are scalar.
template <class Arch>
inline void expand_row(const float* cos, const float* sin, std::size_t n, float* C, float* S) {
  using B = fbatch<Arch>;
  constexpr std::size_t W = B::size;
  std::size_t k = 0;
#if XSIMD_WITH_NEON
  if constexpr (std::is_base_of_v<xsimd::neon, Arch>) {
    for (; k + 4 <= n; k += 4) {
      const float32x4_t c = vld1q_f32(cos + k), sn = vld1q_f32(sin + k);
      const float32x4x2_t cc = vzipq_f32(c, c), ss = vzipq_f32(vnegq_f32(sn), sn);
      vst1q_f32(C + 2 * k, cc.val[0]);
      vst1q_f32(C + 2 * k + 4, cc.val[1]);
      vst1q_f32(S + 2 * k, ss.val[0]);
      vst1q_f32(S + 2 * k + 4, ss.val[1]);
    }
  } else
#endif
      if constexpr (W >= 4) {
    for (; k + W <= n; k += W) {
      B c_lo, c_hi, s_lo, s_hi;
      expand_block<Arch>(cos + k, sin + k, c_lo, c_hi, s_lo, s_hi);
      c_lo.store_unaligned(C + 2 * k);
      c_hi.store_unaligned(C + 2 * k + W);
      s_lo.store_unaligned(S + 2 * k);
      s_hi.store_unaligned(S + 2 * k + W);
    }
  }
  for (; k < n; ++k) {
    C[2 * k] = C[2 * k + 1] = cos[k];
    S[2 * k] = -sin[k];
    S[2 * k + 1] = sin[k];
  }
}

// Even and odd elements of 2m floats at src: even[j] = src[2j], odd[j] = src[2j + 1] (copies).
// Vector blocks of 2W floats with two-source shuffles; the last 2m % 2W floats scalar.
template <class Arch>
inline void deinterleave(const float* src, float* even, float* odd, std::size_t m) {
  [[maybe_unused]] constexpr std::size_t W = fbatch<Arch>::size;
  std::size_t j = 0;
#if XSIMD_WITH_AVX512F
  if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) {
    const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i io = _mm512_add_epi32(ie, _mm512_set1_epi32(1));
    for (; j + W <= m; j += W) {
      const __m512 a = _mm512_loadu_ps(src + 2 * j), b = _mm512_loadu_ps(src + 2 * j + W);
      _mm512_storeu_ps(even + j, _mm512_permutex2var_ps(a, ie, b));
      _mm512_storeu_ps(odd + j, _mm512_permutex2var_ps(a, io, b));
    }
  } else
#endif
#if XSIMD_WITH_AVX
      if constexpr (std::is_base_of_v<xsimd::avx, Arch>) {
    for (; j + W <= m; j += W) {
      const __m256 a = _mm256_loadu_ps(src + 2 * j), b = _mm256_loadu_ps(src + 2 * j + W);
      const __m256 lo = _mm256_permute2f128_ps(a, b, 0x20), hi = _mm256_permute2f128_ps(a, b, 0x31);
      _mm256_storeu_ps(even + j, _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)));
      _mm256_storeu_ps(odd + j, _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)));
    }
  } else
#endif
#if XSIMD_WITH_SSE2
      if constexpr (std::is_base_of_v<xsimd::sse2, Arch>) {
    for (; j + W <= m; j += W) {
      const __m128 a = _mm_loadu_ps(src + 2 * j), b = _mm_loadu_ps(src + 2 * j + W);
      _mm_storeu_ps(even + j, _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
      _mm_storeu_ps(odd + j, _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
    }
  } else
#endif
#if XSIMD_WITH_NEON
      if constexpr (std::is_base_of_v<xsimd::neon, Arch>) {
    for (; j + 4 <= m; j += 4) {
      const float32x4x2_t u = vuzpq_f32(vld1q_f32(src + 2 * j), vld1q_f32(src + 2 * j + 4));
      vst1q_f32(even + j, u.val[0]);
      vst1q_f32(odd + j, u.val[1]);
    }
  } else
#endif
  {
  }
  for (; j < m; ++j) {
    even[j] = src[2 * j];
    odd[j] = src[2 * j + 1];
  }
}

// -src[j] for j < m, exactly (sign bits flipped).
template <class Arch>
inline void negate_row(const float* src, float* dst, std::size_t m) {
  using B = fbatch<Arch>;
  constexpr std::size_t W = B::size;
  std::size_t j = 0;
  for (; j + W <= m; j += W) negate<Arch>(B::load_unaligned(src + j)).store_unaligned(dst + j);
  for (; j < m; ++j) dst[j] = negate1(src[j]);
}

}  // namespace posenc::kernels::simd::detail
