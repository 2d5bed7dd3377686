// The bf16 bodies of the RoPE SIMD kernels, for one xsimd architecture Arch: 2W bf16 values are
// loaded as W 32-bit words and widened exactly (element 2k is word << 16, element 2k+1 is
// word & 0xffff0000), rotated in float, and narrowed with to_bf16's rounding in integer lanes.
// For the interleaved layout the even and odd elements are the a and b channels (2i, 2i + 1) of W
// pairs; the half layout takes W pairs' a channels at i and b channels at i + R/2 (pair_channels,
// spec/rope.hpp).
//
// Part of the RoPE SIMD kernels: included by simd/rope.hpp (inside its GCC 12 AVX-512 diagnostic
// region), which is the header to include.
#pragma once

#include <xsimd/xsimd.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <posenc/kernels/detail/batch.hpp>
#include <posenc/kernels/simd/rope_ops.hpp>
#include <posenc/kernels/storage.hpp>

namespace posenc::kernels::simd::detail {

// Element 2k and element 2k+1 of 2W bf16 values held as W little-endian words, widened exactly.
template <class Arch>
inline void widen_bf16(const std::uint16_t* p, fbatch<Arch>& even, fbatch<Arch>& odd) {
  const ubatch<Arch> w = xsimd::bitwise_cast<ubatch<Arch>>(hbatch<Arch>::load_unaligned(p));
  even = xsimd::bitwise_cast<fbatch<Arch>>(w << 16);
  odd = xsimd::bitwise_cast<fbatch<Arch>>(w & ubatch<Arch>(0xffff0000u));
}

// Whether Stream means lines written by two stores each: with 32-byte vectors (AVX2) one
// store_bf16 is half a line, and the bodies below stream only pairs of them to one line, back to
// back (has_line_stream, rope_f32.hpp); their other stores are ordinary. With 64-byte vectors
// (AVX-512) every store_bf16 is a whole line and streams on its own.
template <class Arch, bool Stream>
inline constexpr bool line_pairs = Stream && sizeof(fbatch<Arch>) == 32;

// Stream: a streaming store (AVX-512: one whole line; AVX2: half a line, see line_pairs).
template <class Arch, bool Stream>
inline void store_bf16(std::uint16_t* p, const fbatch<Arch>& even, const fbatch<Arch>& odd) {
#if XSIMD_WITH_AVX512F
  if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) {
    __m512i w;
#if XSIMD_WITH_AVX512BW && defined(__AVX512BF16__)
    // vcvtne2ps2bf16 puts even in words 0-15 and odd in words 16-31; vpermw interleaves them.
    // A vector holding a subnormal (see narrow16_avx512) takes the integer rounding.
    if (has_avx512bf16<Arch> &&
        (_mm512_fpclass_ps_mask(even, 0x20) | _mm512_fpclass_ps_mask(odd, 0x20)) == 0) [[likely]] {
      const __m512i both = std::bit_cast<__m512i>(_mm512_cvtne2ps_pbh(odd, even));
      const __m512i order =
          _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22,
                           6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
      w = _mm512_permutexvar_epi16(order, both);
    } else
#endif
    {
      // The odd elements' results are already in the high halves: one ternary logic op
      // (even >> 16) | (odd & 0xffff0000) instead of a shift, a shift and an OR.
      w = _mm512_ternarylogic_epi32(_mm512_srli_epi32(round_bf16_high<Arch>(even), 16),
                                    round_bf16_high<Arch>(odd),
                                    _mm512_set1_epi32(static_cast<int>(0xffff0000u)),
                                    0xf8);  // A | (B & C)
    }
    if constexpr (Stream) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(p), w);
    } else {
      _mm512_storeu_si512(p, w);
    }
    return;
  }
#endif
#if XSIMD_WITH_AVX2
  if constexpr (std::is_base_of_v<xsimd::avx2, Arch>) {
    // narrow_bf16's rounding left in the high halves, one NaN test for both vectors, and one
    // word blend in place of two shifts and an OR: 13 instructions for 16 values where
    // narrow_bf16 twice took 18 (the bf16 bodies are bound by instruction count).
    const auto high = [](__m256i u) {  // u + 0x7fff + ((u >> 16) & 1)
      return _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)),
                              _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1)));
    };
    const __m256i ue = _mm256_castps_si256(even), uo = _mm256_castps_si256(odd);
    __m256i re = high(ue), ro = high(uo);
    if (_mm256_movemask_ps(_mm256_cmp_ps(even, odd, _CMP_UNORD_Q)) != 0) [[unlikely]] {
      // A NaN keeps its high half, made quiet: (u >> 16) | 0x40.
      const __m256i quiet = _mm256_set1_epi32(0x00400000);
      re = _mm256_blendv_epi8(re, _mm256_or_si256(ue, quiet),
                              _mm256_castps_si256(_mm256_cmp_ps(even, even, _CMP_UNORD_Q)));
      ro = _mm256_blendv_epi8(ro, _mm256_or_si256(uo, quiet),
                              _mm256_castps_si256(_mm256_cmp_ps(odd, odd, _CMP_UNORD_Q)));
    }
    // Word 2k: even's high half (shifted down), word 2k + 1: odd's.
    const __m256i w = _mm256_blend_epi16(_mm256_srli_epi32(re, 16), ro, 0xaa);
    if constexpr (Stream) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(p), w);  // half a line: see line_pairs
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), w);
    }
    return;
  }
#endif
  const ubatch<Arch> w = narrow_bf16<Arch>(even) | (narrow_bf16<Arch>(odd) << 16);
  xsimd::bitwise_cast<hbatch<Arch>>(w).store_unaligned(p);
}

// The tails: n < W bf16 values at p as a partial vector (the other lanes 0) in plain order, and
// the first n lanes of v stored at p; through a stack buffer, converted as whole vectors.
template <class Arch>
inline fbatch<Arch> load_bf16_n(const std::uint16_t* p, std::size_t n) {
  bf16 tmp[fbatch<Arch>::size] = {};
  std::memcpy(static_cast<void*>(tmp), p, n * sizeof(bf16));
  return load_widened<Arch>(static_cast<const bf16*>(tmp));
}
template <class Arch>
inline void store_bf16_n(std::uint16_t* p, const fbatch<Arch>& v, std::size_t n) {
  bf16 tmp[fbatch<Arch>::size];
  store_narrowed<Arch>(tmp, v);
  std::memcpy(p, static_cast<const void*>(tmp), n * sizeof(bf16));
}

// Interleaved layout, n pairs: the words' even and odd halves are the a and b channels of W pairs,
// in pair order. Compact: ca == cb = cos, sa == sb = sin (s_a = -sin); otherwise four pair-order
// rows.
// Always inlined (see half_bf16 below).
template <class Arch, bool Compact, bool Stream>
[[gnu::always_inline]] inline void interleaved_bf16(const std::uint16_t* x, std::uint16_t* y,
                                                    std::size_t n, const float* ca, const float* sa,
                                                    const float* cb, const float* sb) {
  using B = fbatch<Arch>;
  constexpr std::size_t W = B::size;
  std::size_t i = 0;
  if constexpr (line_pairs<Arch, Stream>) {
    // 2W pairs a step: the two halves of one line of y streamed back to back.
    for (; i + 2 * W <= n; i += 2 * W) {
      B a0, b0, a1, b1;
      widen_bf16<Arch>(x + 2 * i, a0, b0);
      widen_bf16<Arch>(x + 2 * i + 2 * W, a1, b1);
      const B c_a0 = B::load_unaligned(ca + i), c_a1 = B::load_unaligned(ca + i + W);
      const B s_b0 = B::load_unaligned(sb + i), s_b1 = B::load_unaligned(sb + i + W);
      const B c_b0 = Compact ? c_a0 : B::load_unaligned(cb + i);
      const B c_b1 = Compact ? c_a1 : B::load_unaligned(cb + i + W);
      const B s_a0 = Compact ? negate<Arch>(s_b0) : B::load_unaligned(sa + i);
      const B s_a1 = Compact ? negate<Arch>(s_b1) : B::load_unaligned(sa + i + W);
      store_bf16<Arch, true>(y + 2 * i, mul_add<Arch>(a0, c_a0, b0 * s_a0),
                             mul_add<Arch>(b0, c_b0, a0 * s_b0));
      store_bf16<Arch, true>(y + 2 * i + 2 * W, mul_add<Arch>(a1, c_a1, b1 * s_a1),
                             mul_add<Arch>(b1, c_b1, a1 * s_b1));
    }
  }
  for (; i + W <= n; i += W) {
    B a, b;
    widen_bf16<Arch>(x + 2 * i, a, b);
    const B c_a = B::load_unaligned(ca + i);
    const B s_b = B::load_unaligned(sb + i);
    const B c_b = Compact ? c_a : B::load_unaligned(cb + i);
    const B s_a = Compact ? negate<Arch>(s_b) : B::load_unaligned(sa + i);
    store_bf16<Arch, Stream && !line_pairs<Arch, Stream>>(y + 2 * i, mul_add<Arch>(a, c_a, b * s_a),
                                                          mul_add<Arch>(b, c_b, a * s_b));
  }
  if (i == n) return;
  // The last r < W pairs: 2r values in a zeroed buffer of 2W, one partial vector of each channel.
  const std::size_t r = n - i;
  std::uint16_t tmp[2 * W] = {};
  std::memcpy(tmp, x + 2 * i, 2 * r * sizeof(std::uint16_t));
  B a, b;
  widen_bf16<Arch>(tmp, a, b);
  const B c_a = load_widened_n<Arch>(ca + i, r);
  const B s_b = load_widened_n<Arch>(sb + i, r);
  const B c_b = Compact ? c_a : load_widened_n<Arch>(cb + i, r);
  const B s_a = Compact ? negate<Arch>(s_b) : load_widened_n<Arch>(sa + i, r);
  store_bf16<Arch, false>(tmp, mul_add<Arch>(a, c_a, b * s_a), mul_add<Arch>(b, c_b, a * s_b));
  std::memcpy(y + 2 * i, tmp, 2 * r * sizeof(std::uint16_t));
}

// Half layout, n pairs: a-channels xa[0, n), b-channels xb[0, n). The rows ca, sa, cb, sb are in
// lane order (permute_for_half_bf16): within each block of 2W pairs, the W even pairs, then the W
// odd ones; pairs after the last full block in plain order.
// Both bodies are always inlined into bf16_chunk's loop over heads: out of line, each head's call
// set up its constants again and, with AVX2, realigned the stack for its spills (half layout at
// [512, 32, 128] with AVX2 on an Intel Xeon: 1.54x memcpy out of line, 1.46-1.50x inlined).
template <class Arch, bool Stream>
[[gnu::always_inline]] inline void half_bf16(const std::uint16_t* xa, const std::uint16_t* xb,
                                             std::uint16_t* ya, std::uint16_t* yb, std::size_t n,
                                             const float* ca, const float* sa, const float* cb,
                                             const float* sb) {
  using B = fbatch<Arch>;
  constexpr std::size_t W = B::size;
  std::size_t i = 0;
  if constexpr (line_pairs<Arch, Stream>) {
    // Two blocks of 2W pairs a step: one line of the a channels, then one of the b channels, each
    // written by two streaming stores back to back.
    for (; i + 4 * W <= n; i += 4 * W) {
      B ae0, ao0, be0, bo0, ae1, ao1, be1, bo1;
      widen_bf16<Arch>(xa + i, ae0, ao0);
      widen_bf16<Arch>(xa + i + 2 * W, ae1, ao1);
      widen_bf16<Arch>(xb + i, be0, bo0);
      widen_bf16<Arch>(xb + i + 2 * W, be1, bo1);
      const float* const c_a = ca + i;
      const float* const s_a = sa + i;
      const float* const c_b = cb + i;
      const float* const s_b = sb + i;
      const auto row = [](const float* r, std::size_t k) { return B::load_unaligned(r + k); };
      store_bf16<Arch, true>(ya + i, mul_add<Arch>(ae0, row(c_a, 0), be0 * row(s_a, 0)),
                             mul_add<Arch>(ao0, row(c_a, W), bo0 * row(s_a, W)));
      store_bf16<Arch, true>(ya + i + 2 * W,
                             mul_add<Arch>(ae1, row(c_a, 2 * W), be1 * row(s_a, 2 * W)),
                             mul_add<Arch>(ao1, row(c_a, 3 * W), bo1 * row(s_a, 3 * W)));
      store_bf16<Arch, true>(yb + i, mul_add<Arch>(be0, row(c_b, 0), ae0 * row(s_b, 0)),
                             mul_add<Arch>(bo0, row(c_b, W), ao0 * row(s_b, W)));
      store_bf16<Arch, true>(yb + i + 2 * W,
                             mul_add<Arch>(be1, row(c_b, 2 * W), ae1 * row(s_b, 2 * W)),
                             mul_add<Arch>(bo1, row(c_b, 3 * W), ao1 * row(s_b, 3 * W)));
    }
  }
  for (; i + 2 * W <= n; i += 2 * W) {
    B ae, ao, be, bo;
    widen_bf16<Arch>(xa + i, ae, ao);
    widen_bf16<Arch>(xb + i, be, bo);
    const B cae = B::load_unaligned(ca + i), cao = B::load_unaligned(ca + i + W);
    const B sae = B::load_unaligned(sa + i), sao = B::load_unaligned(sa + i + W);
    const B cbe = B::load_unaligned(cb + i), cbo = B::load_unaligned(cb + i + W);
    const B sbe = B::load_unaligned(sb + i), sbo = B::load_unaligned(sb + i + W);
    constexpr bool whole = Stream && !line_pairs<Arch, Stream>;
    store_bf16<Arch, whole>(ya + i, mul_add<Arch>(ae, cae, be * sae),
                            mul_add<Arch>(ao, cao, bo * sao));
    store_bf16<Arch, whole>(yb + i, mul_add<Arch>(be, cbe, ae * sbe),
                            mul_add<Arch>(bo, cbo, ao * sbo));
  }
  // The last n - i < 2W pairs, rows in plain order: partial vectors of up to W pairs.
  for (; i < n; i += W) {
    const std::size_t r = n - i < W ? n - i : W;
    const B a = load_bf16_n<Arch>(xa + i, r), b = load_bf16_n<Arch>(xb + i, r);
    const B c_a = load_widened_n<Arch>(ca + i, r), s_a = load_widened_n<Arch>(sa + i, r);
    const B c_b = load_widened_n<Arch>(cb + i, r), s_b = load_widened_n<Arch>(sb + i, r);
    store_bf16_n<Arch>(ya + i, mul_add<Arch>(a, c_a, b * s_a), r);
    store_bf16_n<Arch>(yb + i, mul_add<Arch>(b, c_b, a * s_b), r);
  }
}

}  // namespace posenc::kernels::simd::detail
