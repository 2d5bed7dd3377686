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

#include <cstddef>
#include <cstdint>
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

// to_bf16 of every lane, in the low 16 bits: NaN -> (u >> 16) | 0x40, otherwise
// (u + 0x7fff + ((u >> 16) & 1)) >> 16 (round to nearest even).
template <class Arch>
inline ubatch<Arch> narrow_bf16(const fbatch<Arch>& v) {
  using U = ubatch<Arch>;
  const U u = xsimd::bitwise_cast<U>(v);
  const U hi = u >> 16;
  const U rounded = (u + U(0x7fffu) + (hi & U(1u))) >> 16;
  // |u| > 0x7f800000 (NaN) exactly when |u| + 0x7fffff reaches 2^31.
  const U nan = U(0u) - (((u & U(0x7fffffffu)) + U(0x007fffffu)) >> 31);
  return (rounded & ~nan) | ((hi | U(0x0040u)) & nan);
}

template <class Arch, bool Stream>
inline void store_bf16(std::uint16_t* p, const fbatch<Arch>& even, const fbatch<Arch>& odd) {
  const ubatch<Arch> w = narrow_bf16<Arch>(even) | (narrow_bf16<Arch>(odd) << 16);
#if XSIMD_WITH_AVX512F
  if constexpr (Stream && std::is_base_of_v<xsimd::avx512f, Arch>) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(p), w);
    return;
  }
#endif
  xsimd::bitwise_cast<hbatch<Arch>>(w).store_unaligned(p);
}

inline float bf16_float(std::uint16_t b) {
  return to_float(bf16{b});
}
inline std::uint16_t float_bf16(float f) {
  return to_bf16(f).bits;
}

// Interleaved layout, n pairs: the words' even and odd halves are the a and b channels of W pairs,
// in pair order. Compact: ca == cb = cos, sa == sb = sin (s_a = -sin); otherwise four pair-order
// rows.
template <class Arch, bool Compact, bool Stream>
inline void interleaved_bf16(const std::uint16_t* x, std::uint16_t* y, std::size_t n,
                             const float* ca, const float* sa, const float* cb, const float* sb) {
  using B = fbatch<Arch>;
  constexpr std::size_t W = B::size;
  std::size_t i = 0;
  for (; i + W <= n; i += W) {
    B a, b;
    widen_bf16<Arch>(x + 2 * i, a, b);
    const B c_a = B::load_unaligned(ca + i);
    const B s_b = B::load_unaligned(sb + i);
    const B c_b = Compact ? c_a : B::load_unaligned(cb + i);
    const B s_a = Compact ? negate<Arch>(s_b) : B::load_unaligned(sa + i);
    store_bf16<Arch, Stream>(y + 2 * i, mul_add<Arch>(a, c_a, b * s_a),
                             mul_add<Arch>(b, c_b, a * s_b));
  }
  for (; i < n; ++i) {
    const float s_a = Compact ? negate1(sb[i]) : sa[i];
    float ra, rb;
    pair1<has_fma<Arch>>(bf16_float(x[2 * i]), bf16_float(x[2 * i + 1]), ca[i], s_a,
                         Compact ? ca[i] : cb[i], sb[i], ra, rb);
    y[2 * i] = float_bf16(ra);
    y[2 * i + 1] = float_bf16(rb);
  }
}

// Half layout, n pairs: a-channels xa[0, n), b-channels xb[0, n). The rows ca, sa, cb, sb are in
// lane order (permute_for_half_bf16): within each block of 2W pairs, the W even pairs, then the W
// odd ones; pairs after the last full block in plain order.
template <class Arch, bool Stream>
inline void half_bf16(const std::uint16_t* xa, const std::uint16_t* xb, std::uint16_t* ya,
                      std::uint16_t* yb, std::size_t n, const float* ca, const float* sa,
                      const float* cb, const float* sb) {
  using B = fbatch<Arch>;
  constexpr std::size_t W = B::size;
  std::size_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    B ae, ao, be, bo;
    widen_bf16<Arch>(xa + i, ae, ao);
    widen_bf16<Arch>(xb + i, be, bo);
    const B cae = B::load_unaligned(ca + i), cao = B::load_unaligned(ca + i + W);
    const B sae = B::load_unaligned(sa + i), sao = B::load_unaligned(sa + i + W);
    const B cbe = B::load_unaligned(cb + i), cbo = B::load_unaligned(cb + i + W);
    const B sbe = B::load_unaligned(sb + i), sbo = B::load_unaligned(sb + i + W);
    store_bf16<Arch, Stream>(ya + i, mul_add<Arch>(ae, cae, be * sae),
                             mul_add<Arch>(ao, cao, bo * sao));
    store_bf16<Arch, Stream>(yb + i, mul_add<Arch>(be, cbe, ae * sbe),
                             mul_add<Arch>(bo, cbo, ao * sbo));
  }
  for (; i < n; ++i) {
    float ra, rb;
    pair1<has_fma<Arch>>(bf16_float(xa[i]), bf16_float(xb[i]), ca[i], sa[i], cb[i], sb[i], ra, rb);
    ya[i] = float_bf16(ra);
    yb[i] = float_bf16(rb);
  }
}

}  // namespace posenc::kernels::simd::detail
