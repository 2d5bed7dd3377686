// RoPE kernels with xsimd, for one architecture Arch (xsimd 8.1 or later): the operation of
// rope_reference.hpp, bit for bit. For every token, head and pair (a, b) of channels
//   y_a = x_a * c + x_b * s_a,   y_b = x_b * c_b + x_a * s_b      (s_a = -sin_i, s_b = sin_i)
// (RoFormer eq. 34; HF modeling_llama.py rotate_half for the half layout, ggml ops.cpp
// rope NORM / NEOX modes for interleaved / half), computed in float and rounded once to the storage
// type, with the FMA pattern of rope_reference(..., fma_mode_of<Arch>):
//   fused:   y = fma(x, c, x' * s)   (Arch has FMA: fma3<sse4_2>, fma3<avx>, fma3<avx2>, fma4,
//            avx512f and above, neon64, and neon where the target has VFPv4)
//   unfused: y = (x * c) + (x' * s)
// Every lane computes its channel with exactly these two or three IEEE operations, so the vector
// body and the scalar tail (std::fma when fused) give the reference's bits; translation units
// that instantiate these templates must not let the compiler contract x * c + t into an FMA on
// their own (GCC: -ffp-contract=off, the default in ISO modes such as -std=c++20; Clang:
// -ffp-contract=off).
//
// How the lanes are fed (all loads and stores unaligned; no allocation, no exceptions):
// - float, half layout: x_a and x_b are two loads at i and i + R/2; compact cos/sin are used as
//   they are (s_a = -s by flipping the sign bit, exact), expanded rows straight.
// - float, interleaved: y = x * C + swap(x) * S with swap exchanging adjacent lanes (a swizzle)
//   and C, S in the expanded channel order; a compact row is expanded once per token into a stack
//   buffer (chunks of row_chunk pairs) and shared by all heads.
// - bf16: 2W bf16 values are loaded as W 32-bit words; element 2k is (word << 16) and element
//   2k+1 is (word & 0xffff0000), both exact floats. For the interleaved layout these are exactly
//   the a and b channels of W pairs, so a compact row is used as it is; otherwise the row is
//   permuted once per token into the lane order. Narrowing is to_bf16's rounding (add 0x7fff plus
//   the lowest kept bit, NaN kept and made quiet) in 32-bit integer lanes.
// - f16 (and _Float16): each head's channels are widened with to_float into a stack float buffer,
//   rotated there by the float kernel, and narrowed with to_f16: the reference's conversions
//   (load_float and store_as), so the same bits.
// Rows past the table with an on_the_fly config are computed in chunks of on_the_fly_chunk pairs
// by detail::on_the_fly_row (the function every table entry comes from) into stack buffers.
//
// Bit-identical results hold for every input in which no pair holds two NaNs: when both x_a and
// x_b are NaN, IEEE 754 leaves open which payload an operation returns, and the scalar code's
// operand order is the compiler's choice.
#pragma once

#include <xsimd/xsimd.hpp>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <posenc/kernels/error.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>

// GCC 12's AVX-512 intrinsics (_mm512_undefined_ps and friends, used by shifts and permutes)
// initialise a register from itself, which -Wmaybe-uninitialized (and, in sanitizer builds,
// -Wuninitialized) reports once inlined here (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace posenc::kernels::simd {

// Whether xsimd::fma on the 32-bit neon architecture is fused: xsimd 8.1 uses vfmaq_f32 only
// where the target has VFPv4 (__ARM_FEATURE_FMA, always set on AArch64) and otherwise computes
// x * y + z with two roundings.
inline constexpr bool neon_fma =
#if defined(__ARM_FEATURE_FMA)
    true;
#else
    false;
#endif

// True when Arch's float FMA is a fused multiply-add instruction.
template <class Arch>
inline constexpr bool has_fma = std::is_base_of_v<xsimd::fma3<xsimd::sse4_2>, Arch> ||
                                std::is_base_of_v<xsimd::fma3<xsimd::avx>, Arch> ||
                                std::is_base_of_v<xsimd::fma3<xsimd::avx2>, Arch> ||
                                std::is_base_of_v<xsimd::fma4, Arch> ||
                                std::is_base_of_v<xsimd::avx512f, Arch> ||
                                std::is_base_of_v<xsimd::neon64, Arch> ||
                                (std::is_base_of_v<xsimd::neon, Arch> && neon_fma);

// The FMA pattern of the kernels for Arch: the fma_mode to pass to rope_reference to get the same
// bits.
template <class Arch>
inline constexpr fma_mode fma_mode_of = has_fma<Arch> ? fma_mode::fused : fma_mode::unfused;

namespace detail {

// Pairs per token-row chunk: the stack buffers (row expansions, f16 head buffers) hold this many
// pairs. A multiple of twice the widest vector (16 floats) so that only a row's last chunk has a
// scalar tail.
inline constexpr std::size_t row_chunk = 128;
static_assert(row_chunk % 32 == 0 && on_the_fly_chunk % 32 == 0 && on_the_fly_chunk <= row_chunk);

template <class Arch>
using fbatch = xsimd::batch<float, Arch>;
template <class Arch>
using ubatch = xsimd::batch<std::uint32_t, Arch>;
template <class Arch>
using hbatch = xsimd::batch<std::uint16_t, Arch>;

// x * c + t with Arch's pattern. xsimd 8.1 maps xsimd::fma on avx512f to a multiply and an add,
// so AVX-512 takes the instruction directly.
template <class Arch>
inline fbatch<Arch> mul_add(const fbatch<Arch>& x, const fbatch<Arch>& c, const fbatch<Arch>& t) {
  if constexpr (!has_fma<Arch>) {
    const fbatch<Arch> prod = x * c;
    return prod + t;
  }
#if XSIMD_WITH_AVX512F
  else if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) {
    return fbatch<Arch>(_mm512_fmadd_ps(x, c, t));
  }
#endif
  else {
    return xsimd::fma(x, c, t);
  }
}

// The same for one float (the scalar tails): std::fma is one instruction in FMA builds.
template <bool Fused>
inline float mul_add1(float x, float c, float t) {
  if constexpr (Fused) {
    return std::fma(x, c, t);
  } else {
    const float prod = x * c;
    return prod + t;
  }
}

// Exchanges lanes 2k and 2k+1.
struct swap_adjacent {
  static constexpr unsigned get(unsigned i, unsigned) { return i ^ 1u; }
};

template <class Arch>
inline fbatch<Arch> swap_pairs(const fbatch<Arch>& v) {
#if XSIMD_WITH_NEON
  if constexpr (std::is_base_of_v<xsimd::neon, Arch>) {
    return fbatch<Arch>(vrev64q_f32(v));  // xsimd 8.1's NEON swizzle goes through memory
  } else
#endif
  {
    return xsimd::swizzle(v, xsimd::make_batch_constant<ubatch<Arch>, swap_adjacent>());
  }
}

// -v, exactly (sign bit flipped).
template <class Arch>
inline fbatch<Arch> negate(const fbatch<Arch>& v) {
  return v ^ xsimd::bitwise_cast<fbatch<Arch>>(ubatch<Arch>(0x80000000u));
}

// -v for the scalar tails, kept a separate operation. Written as x * -v, GCC may turn the product
// into -(x * v) (AArch64 fnmul), which negates a NaN x where the reference's x * (-v) keeps its
// sign; the empty asm statement hides the negation from that rewrite.
inline float negate1(float v) {
  float r = -v;
#if defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(r));
#elif defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && defined(__SSE2__)
  __asm__("" : "+x"(r));
#endif
  return r;
}

// One pair in scalar code, in the reference's order.
template <bool Fused>
inline void pair1(float xa, float xb, float ca, float sa, float cb, float sb, float& ya,
                  float& yb) {
  ya = mul_add1<Fused>(xa, ca, xb * sa);
  yb = mul_add1<Fused>(xb, cb, xa * sb);
}

// ---- float kernels ------------------------------------------------------------------------------

// Outputs of at least this many bytes per call are written with non-temporal (streaming) stores
// where the ISA has them and every vector store is aligned: such outputs do not fit in the
// caches anyway, and a streaming store writes a whole line without first reading it (ordinary
// stores read each line of the output before overwriting it, a third memory stream besides the
// input and the output). Smaller outputs stay in the cache for whatever reads them next.
inline constexpr std::size_t stream_threshold_bytes = std::size_t{32} << 20;

// Calls writing at most this many bytes loop over heads inside each block of the row (see run).
inline constexpr std::size_t blocks_outer_max_bytes = std::size_t{512} << 10;

// Stores v at p; with Stream (has_stream<Arch> only), as a non-temporal store (p aligned to 64).
template <class Arch, bool Stream>
inline void store_f32(float* p, const fbatch<Arch>& v) {
#if XSIMD_WITH_AVX512F
  if constexpr (Stream && std::is_base_of_v<xsimd::avx512f, Arch>) {
    _mm512_stream_ps(p, v);
    return;
  }
#endif
  v.store_unaligned(p);
}

// Whether the kernels stream for Arch: only where one vector store is one whole 64-byte cache line
// (AVX-512). Streaming stores of half lines (AVX2, SSE) measured up to 28x slower here than
// ordinary stores, the write-combining buffers being flushed before the line is complete.
template <class Arch>
inline constexpr bool has_stream =
#if XSIMD_WITH_AVX512F
    std::is_base_of_v<xsimd::avx512f, Arch>;
#else
    false;
#endif

// Half layout, n pairs: a-channels xa[0, n), b-channels xb[0, n). Compact: c = ca, s_b = sb,
// s_a = -sb (ca == cb and sa == sb are the compact row); expanded: four rows in channel order.
template <class Arch, bool Compact>
inline void half_f32(const float* xa, const float* xb, float* ya, float* yb, std::size_t n,
                     const float* ca, const float* sa, const float* cb, const float* sb) {
  using B = fbatch<Arch>;
  constexpr std::size_t W = B::size;
  std::size_t i = 0;
  for (; i + W <= n; i += W) {
    const B a = B::load_unaligned(xa + i), b = B::load_unaligned(xb + i);
    const B c_a = B::load_unaligned(ca + i);
    const B s_b = B::load_unaligned(sb + i);
    const B c_b = Compact ? c_a : B::load_unaligned(cb + i);
    const B s_a = Compact ? negate<Arch>(s_b) : B::load_unaligned(sa + i);
    const B ra = mul_add<Arch>(a, c_a, b * s_a);
    const B rb = mul_add<Arch>(b, c_b, a * s_b);
    ra.store_unaligned(ya + i);
    rb.store_unaligned(yb + i);
  }
  for (; i < n; ++i) {
    const float s_a = Compact ? negate1(sb[i]) : sa[i];
    pair1<has_fma<Arch>>(xa[i], xb[i], ca[i], s_a, Compact ? ca[i] : cb[i], sb[i], ya[i], yb[i]);
  }
}

// Interleaved layout, n pairs = 2n channels; C, S in expanded channel order.
template <class Arch>
inline void interleaved_f32(const float* x, float* y, std::size_t n, const float* C,
                            const float* S) {
  using B = fbatch<Arch>;
  constexpr std::size_t W = B::size;
  const std::size_t channels = 2 * n;
  std::size_t j = 0;
  for (; j + W <= channels; j += W) {
    const B v = B::load_unaligned(x + j);
    const B r =
        mul_add<Arch>(v, B::load_unaligned(C + j), swap_pairs<Arch>(v) * B::load_unaligned(S + j));
    r.store_unaligned(y + j);
  }
  for (; j < channels; j += 2) {
    pair1<has_fma<Arch>>(x[j], x[j + 1], C[j], S[j], C[j + 1], S[j + 1], y[j], y[j + 1]);
  }
}

// The float kernels for every head of every operand of one token. The row's cos/sin block is the
// same for all heads, so the loop runs over vector blocks of the row outside and heads inside:
// each block of the table is loaded once per token and stays in registers for every head.

// One tensor (in, out) of a call.
template <class T>
struct rope_operand {
  tensor_view<const T> in;
  tensor_view<T> out;
};

// Half layout, pairs [i0, i0 + n) of token t; the rows are indexed by k = i - i0 (see half_f32).
template <class Arch, bool Compact, bool Stream>
inline void half_f32_heads(const rope_operand<float>* ops, std::size_t n_ops, std::size_t t,
                           std::size_t h, std::size_t i0, std::size_t n, const float* ca,
                           const float* sa, const float* cb, const float* sb) {
  using B = fbatch<Arch>;
  constexpr std::size_t W = B::size;
  std::size_t k = 0;
  for (; k + W <= n; k += W) {
    const B c_a = B::load_unaligned(ca + k);
    const B s_b = B::load_unaligned(sb + k);
    const B c_b = Compact ? c_a : B::load_unaligned(cb + k);
    const B s_a = Compact ? negate<Arch>(s_b) : B::load_unaligned(sa + k);
    for (std::size_t o = 0; o < n_ops; ++o) {
      // Locals, so that the compiler need not reload them after every store through y.
      const std::size_t heads = ops[o].in.heads;
      const std::size_t in_step = ops[o].in.head_stride, out_step = ops[o].out.head_stride;
      const float* x = ops[o].in.at(t, 0) + i0 + k;
      float* y = ops[o].out.at(t, 0) + i0 + k;
      for (std::size_t hd = 0; hd < heads; ++hd, x += in_step, y += out_step) {
        const B a = B::load_unaligned(x), b = B::load_unaligned(x + h);
        const B ra = mul_add<Arch>(a, c_a, b * s_a);
        const B rb = mul_add<Arch>(b, c_b, a * s_b);
        store_f32<Arch, Stream>(y, ra);
        store_f32<Arch, Stream>(y + h, rb);
      }
    }
  }
  if (k == n) return;
  for (std::size_t o = 0; o < n_ops; ++o) {
    for (std::size_t hd = 0; hd < ops[o].in.heads; ++hd) {
      const float* x = ops[o].in.at(t, hd) + i0;
      float* y = ops[o].out.at(t, hd) + i0;
      for (std::size_t m = k; m < n; ++m) {
        const float s_a = Compact ? negate1(sb[m]) : sa[m];
        pair1<has_fma<Arch>>(x[m], x[m + h], ca[m], s_a, Compact ? ca[m] : cb[m], sb[m], y[m],
                             y[m + h]);
      }
    }
  }
}

// Interleaved layout, pairs [i0, i0 + n) of token t = channels [2 i0, 2 i0 + 2n); C, S in
// expanded channel order from channel 2 i0.
template <class Arch, bool Stream>
inline void interleaved_f32_heads(const rope_operand<float>* ops, std::size_t n_ops, std::size_t t,
                                  std::size_t i0, std::size_t n, const float* C, const float* S) {
  using B = fbatch<Arch>;
  constexpr std::size_t W = B::size;
  const std::size_t channels = 2 * n;
  std::size_t j = 0;
  for (; j + W <= channels; j += W) {
    const B c = B::load_unaligned(C + j);
    const B sn = B::load_unaligned(S + j);
    for (std::size_t o = 0; o < n_ops; ++o) {
      const std::size_t heads = ops[o].in.heads;
      const std::size_t in_step = ops[o].in.head_stride, out_step = ops[o].out.head_stride;
      const float* x = ops[o].in.at(t, 0) + 2 * i0 + j;
      float* y = ops[o].out.at(t, 0) + 2 * i0 + j;
      for (std::size_t hd = 0; hd < heads; ++hd, x += in_step, y += out_step) {
        const B v = B::load_unaligned(x);
        store_f32<Arch, Stream>(y, mul_add<Arch>(v, c, swap_pairs<Arch>(v) * sn));
      }
    }
  }
  if (j == channels) return;
  for (std::size_t o = 0; o < n_ops; ++o) {
    for (std::size_t hd = 0; hd < ops[o].in.heads; ++hd) {
      const float* x = ops[o].in.at(t, hd) + 2 * i0;
      float* y = ops[o].out.at(t, hd) + 2 * i0;
      for (std::size_t m = j; m < channels; m += 2) {
        pair1<has_fma<Arch>>(x[m], x[m + 1], C[m], S[m], C[m + 1], S[m + 1], y[m], y[m + 1]);
      }
    }
  }
}

// ---- bf16 kernels -------------------------------------------------------------------------------

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

// ---- rows ---------------------------------------------------------------------------------------

// cos and sin of the pairs [i0, i0 + n) of one token: compact (cos[k], sin[k] for pair i0 + k) or
// expanded (cos, sin point at the row's channel 0).
struct row_source {
  const float* cos;
  const float* sin;
  bool compact;
};

// Pair k of the chunk: c_a, s_a, c_b, s_b as the reference reads them.
inline void pair_values(const row_source& r, rope_layout layout, std::size_t h, std::size_t i0,
                        std::size_t k, float& c_a, float& s_a, float& c_b, float& s_b) {
  if (r.compact) {
    c_a = c_b = r.cos[k];
    s_b = r.sin[k];
    s_a = -s_b;
  } else {
    const std::size_t i = i0 + k;
    const std::size_t a = layout == rope_layout::interleaved ? 2 * i : i;
    const std::size_t b = layout == rope_layout::interleaved ? 2 * i + 1 : i + h;
    c_a = r.cos[a];
    s_a = r.sin[a];
    c_b = r.cos[b];
    s_b = r.sin[b];
  }
}

// Stack rows for one chunk: up to row_chunk pairs, four pair-order rows or two channel-order rows.
struct row_buffers {
  alignas(64) float v[4][2 * row_chunk];
};

// ---- the driver ---------------------------------------------------------------------------------

template <class T>
using bits_t = std::conditional_t<std::is_same_v<T, float>, float, std::uint16_t>;

template <class T>
inline const bits_t<T>* bits_of(const T* p) {
  if constexpr (std::is_same_v<T, float>) {
    return p;
  } else {
    return &p->bits;  // bf16 and f16 are standard-layout wrappers of one uint16_t
  }
}
template <class T>
inline bits_t<T>* bits_of(T* p) {
  if constexpr (std::is_same_v<T, float>) {
    return p;
  } else {
    return &p->bits;
  }
}

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

// The bf16 kernels for pairs [i0, i0 + n) of token t's row, every head of every operand.
template <class Arch, bool Stream>
void bf16_chunk(const rope_table& table, const row_source& r, std::size_t i0, std::size_t n,
                const rope_operand<bf16>* ops, std::size_t n_ops, std::size_t t, row_buffers& buf) {
  const std::size_t h = table.rotary_dim / 2;
  const bool inter = table.layout == rope_layout::interleaved;
  if (inter && r.compact) {
    for (std::size_t o = 0; o < n_ops; ++o)
      for (std::size_t hd = 0; hd < ops[o].in.heads; ++hd)
        interleaved_bf16<Arch, true, Stream>(bits_of(ops[o].in.at(t, hd)) + 2 * i0,
                                             bits_of(ops[o].out.at(t, hd)) + 2 * i0, n, r.cos,
                                             r.sin, r.cos, r.sin);
    return;
  }

  // Lane order: interleaved = pair order; half = even/odd pairs of each block of 2W.
  constexpr std::size_t W = fbatch<Arch>::size;
  const std::size_t full = inter ? 0 : n / (2 * W) * (2 * W);
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t dst = k;
    if (k < full) {
      const std::size_t blk = k / (2 * W) * (2 * W), m = k - blk;
      dst = blk + (m % 2 == 0 ? m / 2 : W + m / 2);
    }
    pair_values(r, table.layout, h, i0, k, buf.v[0][dst], buf.v[1][dst], buf.v[2][dst],
                buf.v[3][dst]);
  }
  for (std::size_t o = 0; o < n_ops; ++o) {
    for (std::size_t hd = 0; hd < ops[o].in.heads; ++hd) {
      const std::uint16_t* x = bits_of(ops[o].in.at(t, hd));
      std::uint16_t* y = bits_of(ops[o].out.at(t, hd));
      if (inter) {
        interleaved_bf16<Arch, false, Stream>(x + 2 * i0, y + 2 * i0, n, buf.v[0], buf.v[1],
                                              buf.v[2], buf.v[3]);
      } else {
        half_bf16<Arch, Stream>(x + i0, x + h + i0, y + i0, y + h + i0, n, buf.v[0], buf.v[1],
                                buf.v[2], buf.v[3]);
      }
    }
  }
}

// Applies the pairs [i0, i0 + n) of token t's row (source r) to every head of every operand.
template <class Arch, class T>
void apply_chunk(const rope_table& table, const row_source& r, std::size_t i0, std::size_t n,
                 const rope_operand<T>* ops, std::size_t n_ops, std::size_t t, row_buffers& buf,
                 bool stream, bool blocks_outer) {
  static_assert(sizeof(bf16) == 2 && sizeof(f16) == 2);
  const std::size_t h = table.rotary_dim / 2;
  const bool inter = table.layout == rope_layout::interleaved;
  if constexpr (std::is_same_v<T, bf16>) {
    static_assert(std::endian::native == std::endian::little,
                  "posenc: the bf16 kernels read pairs of bf16 values as little-endian words");
    if (stream) {
      bf16_chunk<Arch, true>(table, r, i0, n, ops, n_ops, t, buf);
    } else {
      bf16_chunk<Arch, false>(table, r, i0, n, ops, n_ops, t, buf);
    }
  } else {  // float, f16, _Float16: the float kernels, on the tensor or on a widened copy.
    const float* C = nullptr;
    const float* S = nullptr;
    if (inter) {
      if (r.compact) {
        expand_row<Arch>(r.cos, r.sin, n, buf.v[0], buf.v[1]);
        C = buf.v[0];
        S = buf.v[1];
      } else {
        C = r.cos + 2 * i0;
        S = r.sin + 2 * i0;
      }
    }
    if constexpr (std::is_same_v<T, float>) {
      const auto heads = [&]<bool Stream>(const rope_operand<T>* hops, std::size_t n_hops) {
        if (inter) {
          interleaved_f32_heads<Arch, Stream>(hops, n_hops, t, i0, n, C, S);
        } else if (r.compact) {
          half_f32_heads<Arch, true, Stream>(hops, n_hops, t, h, i0, n, r.cos, r.sin, r.cos, r.sin);
        } else {
          half_f32_heads<Arch, false, Stream>(hops, n_hops, t, h, i0, n, r.cos + i0, r.sin + i0,
                                              r.cos + h + i0, r.sin + h + i0);
        }
      };
      if (stream) {
        heads.template operator()<true>(ops, n_ops);
      } else if (blocks_outer) {
        heads.template operator()<false>(ops, n_ops);
      } else {
        // Head by head: the order in which large tensors stream through memory.
        for (std::size_t o = 0; o < n_ops; ++o) {
          for (std::size_t hd = 0; hd < ops[o].in.heads; ++hd) {
            rope_operand<float> one = ops[o];
            one.in.data += hd * one.in.head_stride;
            one.out.data += hd * one.out.head_stride;
            one.in.heads = one.out.heads = 1;
            heads.template operator()<false>(&one, 1);
          }
        }
      }
    } else {
      const auto rotate = [&](const float* xa, const float* xb, float* ya, float* yb) {
        if (inter) {
          interleaved_f32<Arch>(xa, ya, n, C, S);
        } else if (r.compact) {
          half_f32<Arch, true>(xa, xb, ya, yb, n, r.cos, r.sin, r.cos, r.sin);
        } else {
          half_f32<Arch, false>(xa, xb, ya, yb, n, r.cos + i0, r.sin + i0, r.cos + h + i0,
                                r.sin + h + i0);
        }
      };
      for (std::size_t o = 0; o < n_ops; ++o) {
        for (std::size_t hd = 0; hd < ops[o].in.heads; ++hd) {
          const T* x = ops[o].in.at(t, hd);
          T* y = ops[o].out.at(t, hd);
          // f16: widen the chunk's channels (a then b, or the interleaved run), rotate in place.
          float* xb = buf.v[2];
          float* xa = buf.v[3];
          const std::size_t m = inter ? 2 * n : n;
          const T* pa = x + (inter ? 2 * i0 : i0);
          const T* pb = x + h + i0;
          for (std::size_t k = 0; k < m; ++k) xa[k] = load_float(pa[k]);
          if (!inter)
            for (std::size_t k = 0; k < n; ++k) xb[k] = load_float(pb[k]);
          rotate(xa, xb, xa, xb);
          T* qa = y + (inter ? 2 * i0 : i0);
          T* qb = y + h + i0;
          for (std::size_t k = 0; k < m; ++k) qa[k] = store_as<T>(xa[k]);
          if (!inter)
            for (std::size_t k = 0; k < n; ++k) qb[k] = store_as<T>(xb[k]);
        }
      }
    }
  }
}

template <class Arch, storage_type T>
kernel_error run(const rope_table& table, const rope_operand<T>* all_ops, std::size_t n_all,
                 token_positions pos) {
  // Only non-empty operands are touched (an empty one may have head_dim < rotary_dim).
  rope_operand<T> ops[2];
  std::size_t n_ops = 0;
  for (std::size_t o = 0; o < n_all && n_ops < 2; ++o)
    if (!all_ops[o].in.empty()) ops[n_ops++] = all_ops[o];
  if (n_ops == 0) return kernel_error::ok;
  const std::size_t tokens = ops[0].in.tokens;
  const std::size_t R = table.rotary_dim, h = R / 2, row = table.row_size();
  const bool compact = table.format == rope_table_format::compact;
  std::size_t out_bytes = 0;
  for (std::size_t o = 0; o < n_ops; ++o)
    out_bytes += ops[o].out.tokens * ops[o].out.heads * ops[o].out.head_dim * sizeof(T);
  // Small calls (decode) run blocks of the row outside and heads inside, reusing each block of
  // cos/sin from registers for every head; large ones go head by head, streaming through memory.
  const bool blocks_outer = out_bytes <= blocks_outer_max_bytes;
  bool stream = false;
  if constexpr ((std::is_same_v<T, float> || std::is_same_v<T, bf16>)&&has_stream<Arch>) {
    // Every vector store must cover one whole, aligned 64-byte line: E elements from element
    // offsets that are multiples of E (half layout: also the b channels, at R/2).
    constexpr std::size_t E = 64 / sizeof(T);
    bool aligned = table.layout == rope_layout::interleaved || h % E == 0;
    for (std::size_t o = 0; o < n_ops; ++o) {
      const tensor_view<T>& y = ops[o].out;
      aligned = aligned && reinterpret_cast<std::uintptr_t>(y.data) % 64 == 0 &&
                y.token_stride % E == 0 && y.head_stride % E == 0;
    }
    stream = aligned && out_bytes >= stream_threshold_bytes;
  }
  row_buffers buf;
  alignas(64) float cbuf[on_the_fly_chunk];
  alignas(64) float sbuf[on_the_fly_chunk];
  for (std::size_t t = 0; t < tokens; ++t) {
    const std::uint64_t p = pos.at(t);
    if (p < table.positions) {
      const float* cs = table.cos + static_cast<std::size_t>(p) * row;
      const float* sn = table.sin + static_cast<std::size_t>(p) * row;
      for (std::size_t i0 = 0; i0 < h; i0 += row_chunk) {
        const std::size_t n = h - i0 < row_chunk ? h - i0 : row_chunk;
        const row_source r =
            compact ? row_source{cs + i0, sn + i0, true} : row_source{cs, sn, false};
        apply_chunk<Arch, T>(table, r, i0, n, ops, n_ops, t, buf, stream, blocks_outer);
      }
    } else {
      for (std::size_t i0 = 0; i0 < h; i0 += on_the_fly_chunk) {
        const std::size_t n = h - i0 < on_the_fly_chunk ? h - i0 : on_the_fly_chunk;
        kernels::detail::on_the_fly_row(table, p, i0, i0 + n, cbuf, sbuf);
        apply_chunk<Arch, T>(table, row_source{cbuf, sbuf, true}, i0, n, ops, n_ops, t, buf, stream,
                             blocks_outer);
      }
    }
    // Partial rotary: channels >= R are copied (nothing to do in place).
    for (std::size_t o = 0; o < n_ops; ++o) {
      const std::size_t rest = ops[o].in.head_dim - R;
      if (rest == 0) continue;
      for (std::size_t hd = 0; hd < ops[o].in.heads; ++hd) {
        const T* x = ops[o].in.at(t, hd);
        T* y = ops[o].out.at(t, hd);
        if (static_cast<const void*>(x) != static_cast<const void*>(y))
          std::memcpy(y + R, x + R, rest * sizeof(T));
      }
    }
  }
#if XSIMD_WITH_AVX512F
  // Streaming stores are weakly ordered: make them visible before the caller reads the output.
  if (stream) _mm_sfence();
#endif
  return kernel_error::ok;
}

}  // namespace detail

// out = RoPE(in) at the given positions; in place when out is the same view as in. Checks
// everything first (check_rope_call) and writes nothing on error. Same bits as
// rope_reference(table, in, out, pos, fma_mode_of<Arch>).
template <class Arch, storage_type T>
kernel_error apply_rope(const rope_table& table, tensor_view<const T> in, tensor_view<T> out,
                        token_positions pos) {
  if (const kernel_error e = check_rope_call(table, in, out, pos); e != kernel_error::ok) return e;
  const detail::rope_operand<T> op{in, out};
  return detail::run<Arch, T>(table, &op, 1, pos);
}

// In place.
template <class Arch, storage_type T>
kernel_error apply_rope(const rope_table& table, tensor_view<T> x, token_positions pos) {
  return apply_rope<Arch, T>(table, tensor_view<const T>(x), x, pos);
}

// q and k with one position list, token by token (each table row is read or computed once for
// both). q and k must not share elements (see check_rope_qk_call).
template <class Arch, storage_type T>
kernel_error apply_rope_qk(const rope_table& table, tensor_view<const T> q_in, tensor_view<T> q_out,
                           tensor_view<const T> k_in, tensor_view<T> k_out, token_positions pos) {
  if (const kernel_error e = check_rope_qk_call(table, q_in, q_out, k_in, k_out, pos);
      e != kernel_error::ok)
    return e;
  const detail::rope_operand<T> ops[2] = {{q_in, q_out}, {k_in, k_out}};
  return detail::run<Arch, T>(table, ops, 2, pos);
}

}  // namespace posenc::kernels::simd

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
