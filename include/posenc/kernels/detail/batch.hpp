// The batches of xsimd the SIMD kernels (posenc/kernels/simd/) compute with, for one architecture
// Arch (float; 32- and 16-bit integers for bit manipulation), and the loads and stores of a float
// batch from and to each storage type. Included only where POSENC_SIMD (detail/simd.hpp) is 1.
//
// Bit-identical to the scalar conversions of storage.hpp (to_float, to_bf16, to_f16) for every
// input, NaNs included, converting whole vectors:
// - float: loaded and stored as it is.
// - bf16: widening is a shift (exact); narrowing is to_bf16's rounding in 32-bit integer lanes
//   (narrow_bf16), except on avx512bf16 (below): vcvtneps2bf16 / vcvtne2ps2bf16, which round to
//   nearest even and give to_bf16's NaN bits ((u >> 16) | 0x40: Intel SDM, VCVTNEPS2BF16,
//   convert_fp32_to_bfloat16) but treat subnormal inputs as zero; a vector holding a subnormal
//   (one vfpclassps test) takes the integer rounding instead.
// - f16 and _Float16: AVX-512F's and F16C's vcvtph2ps / vcvtps2ph (rounding to nearest even from
//   the immediate, not from MXCSR). vcvtps2ph gives to_f16's bits for every float, NaNs included
//   (quiet, sign and the top 9 payload bits kept: Intel SDM, VCVTPS2PH; tests/kernels/storage
//   checks all 2^32 floats on each architecture). vcvtph2ps makes a signalling NaN quiet, to_float
//   keeps its bits: the lanes holding a NaN get to_float's quiet bit back (only when a vector holds
//   a NaN). load_operand skips that step: see there. Where neither is available (SSE2 to SSE4.2,
//   AVX without AVX2 and F16C), integer code: widening by shifts and an exact float subtraction for
//   subnormals, narrowing by to_f16's integer rounding, with the subnormal results rounded through
//   exact scaling, truncation and comparisons (no step depends on the MXCSR rounding mode).
// - AArch64 NEON (neon64, and neon when built for AArch64): f16 with FCVTL / FCVTN
//   (vcvt_f32_f16 / vcvt_f16_f32), four lanes at a time; bf16 by shifts (SHLL) and narrow_bf16.
//   FCVTN rounds by FPCR.RMode and FCVTL quiets signalling NaNs: with the FPCR as Linux starts a
//   thread (round to nearest even, FZ and DN off, which the kernels' arithmetic assumes as
//   well) FCVTN gives to_f16's bits for every float, NaNs included (quiet, sign and the top 9
//   payload bits kept: Arm ARM, FPConvertNaN), and FCVTL's NaN lanes get to_float's quiet bit back
//   as on x86.
// - Other architectures (32-bit ARM NEON): lane by lane through load_float / store_as, on a stack
//   buffer.
//
// Every x86 helper is a template on Arch, so that each ISA's translation unit of the dispatch
// library instantiates its own copies (distinct symbols): no inline function compiled with one
// ISA's flags can be picked by the linker for another ISA's caller. The F16C path is taken for
// an AVX2 Arch only where the compiler targets F16C (__F16C__: src/kernels/meson.build compiles
// isa_avx2.cpp with -mf16c and the dispatcher requires F16C for it); a header-only user's -mavx2
// without -mf16c gets the integer code.
#pragma once

#include <xsimd/xsimd.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <posenc/kernels/storage.hpp>

// GCC 12's AVX-512 intrinsics initialise a register from itself (GCC bug 105593, fixed in GCC 13),
// which -W(maybe-)uninitialized reports where they are inlined here: the same region as in
// simd/rope.hpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#if XSIMD_WITH_AVX512BW && defined(__AVX512BF16__)
namespace posenc::kernels::simd {
// xsimd::avx512bw with AVX-512 BF16 (compiled with -mavx512bf16: src/kernels/isa_avx512bf16.cpp):
// the same batches and arithmetic, the bf16 narrowing by vcvtneps2bf16. A type of its own, so that
// its kernels are distinct instantiations from avx512bw's (none of them can be picked by the
// linker for a CPU without AVX-512 BF16).
struct avx512bf16 : xsimd::avx512bw {
  static constexpr char const* name() noexcept { return "avx512bf16"; }
};
}  // namespace posenc::kernels::simd

namespace xsimd::types {
template <class T>
struct get_bool_simd_register<T, posenc::kernels::simd::avx512bf16> {
  using type = simd_avx512_bool_register<T>;
};
XSIMD_DECLARE_SIMD_REGISTER_ALIAS(posenc::kernels::simd::avx512bf16, avx512bw);
}  // namespace xsimd::types
#endif

namespace posenc::kernels::simd::detail {

// Whether Arch narrows bf16 with AVX-512 BF16's instructions.
template <class Arch>
inline constexpr bool has_avx512bf16 =
#if XSIMD_WITH_AVX512BW && defined(__AVX512BF16__)
    std::is_base_of_v<avx512bf16, Arch>;
#else
    false;
#endif

template <class Arch>
using fbatch = xsimd::batch<float, Arch>;
template <class Arch>
using ubatch = xsimd::batch<std::uint32_t, Arch>;
template <class Arch>
using hbatch = xsimd::batch<std::uint16_t, Arch>;

template <class T>
inline constexpr bool is_f16_storage = std::is_same_v<T, f16> || kernels::detail::is_float16<T>;

#if XSIMD_WITH_AVX512F
// to_bf16 of every lane of v (AVX-512), in the high 16 bits of the lane, the low 16 bits left
// over: u + 0x7fff + ((u >> 16) & 1), and u | 0x00400000 (high bits (u >> 16) | 0x40) for NaN.
// narrow_bf16 is this shifted right by 16; store_bf16 takes the odd elements' results as they are.
// The kept bit is tested into a mask and added by a masked add (three instructions where shift,
// and, add and add are four; the 16-bit kernels are bound by instruction count at small sizes).
template <class Arch>
inline __m512i round_bf16_high(const fbatch<Arch>& v) {
  const __m512i u = _mm512_castps_si512(v);
  const __mmask16 kept_odd = _mm512_test_epi32_mask(u, _mm512_set1_epi32(0x10000));
  __m512i r = _mm512_add_epi32(u, _mm512_set1_epi32(0x7fff));
  r = _mm512_mask_add_epi32(r, kept_odd, r, _mm512_set1_epi32(1));
  return _mm512_mask_or_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), u,
                              _mm512_set1_epi32(0x00400000));
}
#endif

// to_bf16 of every lane, in the low 16 bits: NaN -> (u >> 16) | 0x40, otherwise
// (u + 0x7fff + ((u >> 16) & 1)) >> 16 (round to nearest even).
template <class Arch>
inline ubatch<Arch> narrow_bf16(const fbatch<Arch>& v) {
  using U = ubatch<Arch>;
  const U u = xsimd::bitwise_cast<U>(v);
  const U hi = u >> 16;
#if XSIMD_WITH_AVX512F
  if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) {
    return U(_mm512_srli_epi32(round_bf16_high<Arch>(v), 16));
  }
#endif
  const U rounded = (u + U(0x7fffu) + (hi & U(1u))) >> 16;
  // The NaN lanes only where the vector holds a NaN (rare; one compare and branch otherwise).
  if (!xsimd::any(xsimd::isnan(v))) return rounded;
  // |u| > 0x7f800000 (NaN) exactly when |u| + 0x7fffff reaches 2^31.
  const U nan = U(0u) - (((u & U(0x7fffffffu)) + U(0x007fffffu)) >> 31);
  return (rounded & ~nan) | ((hi | U(0x0040u)) & nan);
}

// How Arch converts 16-bit storage.
enum class conversion_kind { avx512, f16c, avx_halves, sse2, neon_a64, lanes };

template <class Arch>
constexpr conversion_kind conversion_of() {
#if XSIMD_WITH_AVX512F
  if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) return conversion_kind::avx512;
#endif
#if XSIMD_WITH_AVX2 && defined(__F16C__)
  if constexpr (std::is_base_of_v<xsimd::avx2, Arch>) return conversion_kind::f16c;
#endif
#if XSIMD_WITH_AVX
  if constexpr (std::is_base_of_v<xsimd::avx, Arch>) return conversion_kind::avx_halves;
#endif
#if XSIMD_WITH_SSE2
  if constexpr (std::is_base_of_v<xsimd::sse2, Arch>) return conversion_kind::sse2;
#endif
#if XSIMD_WITH_NEON && defined(__aarch64__)
  if constexpr (std::is_base_of_v<xsimd::neon, Arch>) return conversion_kind::neon_a64;
#endif
  return conversion_kind::lanes;
}

#if XSIMD_WITH_SSE2
// Four 16-bit values at p, zero-extended into 32-bit lanes.
template <class Arch>
inline __m128i load4_u16(const void* p) {
  return _mm_unpacklo_epi16(_mm_loadl_epi64(static_cast<const __m128i*>(p)), _mm_setzero_si128());
}

// The low 16 bits of the four 32-bit lanes of w (each <= 0xffff) at p. packs saturates signed
// values, so the lanes are sign-extended from bit 15 first (the same 16 bits come out).
template <class Arch>
inline void store4_u16(void* p, __m128i w) {
  const __m128i s = _mm_srai_epi32(_mm_slli_epi32(w, 16), 16);
  _mm_storel_epi64(static_cast<__m128i*>(p), _mm_packs_epi32(s, s));
}

// to_float of four f16 in 32-bit lanes: the exponent and mantissa shifted into place and rebiased
// (127 - 15); infinity and NaN rebiased once more to exponent 255 (the payload kept, a signalling
// NaN included); zero and subnormals m 2^-24 as (2^-14 + m 2^-24) - 2^-14, an exact subtraction.
template <class Arch>
inline __m128 widen_f16_sse2(__m128i h) {
  const __m128i sign = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x8000)), 16);
  __m128i o = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x7fff)), 13);
  const __m128i exp = _mm_and_si128(o, _mm_set1_epi32(0x0f800000));
  o = _mm_add_epi32(o, _mm_set1_epi32((127 - 15) << 23));
  const __m128i inf_nan = _mm_cmpeq_epi32(exp, _mm_set1_epi32(0x0f800000));
  o = _mm_add_epi32(o, _mm_and_si128(inf_nan, _mm_set1_epi32((128 - 16) << 23)));
  const __m128i small = _mm_cmpeq_epi32(exp, _mm_setzero_si128());
  const __m128 sub = _mm_sub_ps(_mm_castsi128_ps(_mm_add_epi32(o, _mm_set1_epi32(1 << 23))),
                                _mm_castsi128_ps(_mm_set1_epi32(113 << 23)));
  o = _mm_or_si128(_mm_and_si128(small, _mm_castps_si128(sub)), _mm_andnot_si128(small, o));
  return _mm_castsi128_ps(_mm_or_si128(o, sign));
}

// to_f16 of four floats, in 32-bit lanes: the branches of to_f16 computed for every lane and
// selected. Results below 2^-14 (subnormal or zero): q = |x| 2^24 (exact), truncated, then rounded
// to nearest even by comparing the exact remainder with 1/2.
template <class Arch>
inline __m128i narrow_f16_sse2(__m128 v) {
  const __m128i u = _mm_castps_si128(v);
  const __m128i sign = _mm_and_si128(_mm_srli_epi32(u, 16), _mm_set1_epi32(0x8000));
  const __m128i a = _mm_and_si128(u, _mm_set1_epi32(0x7fffffff));
  const __m128i one = _mm_set1_epi32(1);
  // Normal results: rebias (127 -> 15), round the 13 dropped bits to nearest even.
  const __m128i nv = _mm_sub_epi32(a, _mm_set1_epi32(0x38000000));
  __m128i r = _mm_srli_epi32(_mm_add_epi32(_mm_add_epi32(nv, _mm_set1_epi32(0xfff)),
                                           _mm_and_si128(_mm_srli_epi32(nv, 13), one)),
                             13);
  // Subnormal or zero results (a < 0x38800000); other lanes scaled from 0.
  const __m128i small = _mm_cmplt_epi32(a, _mm_set1_epi32(0x38800000));
  const __m128 y = _mm_mul_ps(_mm_castsi128_ps(_mm_and_si128(small, a)), _mm_set1_ps(0x1p24f));
  const __m128i t = _mm_cvttps_epi32(y);
  const __m128 frac = _mm_sub_ps(y, _mm_cvtepi32_ps(t));
  const __m128 half = _mm_set1_ps(0.5f);
  const __m128i odd = _mm_cmpeq_epi32(_mm_and_si128(t, one), one);
  const __m128i up = _mm_or_si128(_mm_castps_si128(_mm_cmpgt_ps(frac, half)),
                                  _mm_and_si128(_mm_castps_si128(_mm_cmpeq_ps(frac, half)), odd));
  const __m128i q = _mm_sub_epi32(t, up);  // up is -1 where rounding up
  r = _mm_or_si128(_mm_and_si128(small, q), _mm_andnot_si128(small, r));
  // >= 65520 (and infinity): infinity; NaN: quiet, top payload bits kept.
  const __m128i big = _mm_cmpgt_epi32(a, _mm_set1_epi32(0x477fefff));
  r = _mm_or_si128(_mm_and_si128(big, _mm_set1_epi32(0x7c00)), _mm_andnot_si128(big, r));
  const __m128i nan = _mm_cmpgt_epi32(a, _mm_set1_epi32(0x7f800000));
  const __m128i nan_bits = _mm_or_si128(
      _mm_set1_epi32(0x7e00), _mm_and_si128(_mm_srli_epi32(a, 13), _mm_set1_epi32(0x3ff)));
  r = _mm_or_si128(_mm_and_si128(nan, nan_bits), _mm_andnot_si128(nan, r));
  return _mm_or_si128(r, sign);
}

// narrow_bf16 of four floats (for the architectures whose batches are wider than 128 bits).
template <class Arch>
inline __m128i narrow_bf16_sse2(__m128 v) {
  const __m128i u = _mm_castps_si128(v);
  const __m128i hi = _mm_srli_epi32(u, 16);
  const __m128i rounded = _mm_srli_epi32(
      _mm_add_epi32(_mm_add_epi32(u, _mm_set1_epi32(0x7fff)), _mm_and_si128(hi, _mm_set1_epi32(1))),
      16);
  const __m128i nan =
      _mm_cmpgt_epi32(_mm_and_si128(u, _mm_set1_epi32(0x7fffffff)), _mm_set1_epi32(0x7f800000));
  return _mm_or_si128(_mm_and_si128(nan, _mm_or_si128(hi, _mm_set1_epi32(0x40))),
                      _mm_andnot_si128(nan, rounded));
}

// Four values of 16-bit storage T at p, widened.
template <class Arch, class T>
inline __m128 widen4(const void* p) {
  const __m128i h = load4_u16<Arch>(p);
  if constexpr (std::is_same_v<T, bf16>) {
    return _mm_castsi128_ps(_mm_slli_epi32(h, 16));
  } else {
    return widen_f16_sse2<Arch>(h);
  }
}

// Four floats narrowed to 16-bit storage T, at p.
template <class Arch, class T>
inline void narrow4(void* p, __m128 v) {
  if constexpr (std::is_same_v<T, bf16>) {
    store4_u16<Arch>(p, narrow_bf16_sse2<Arch>(v));
  } else {
    store4_u16<Arch>(p, narrow_f16_sse2<Arch>(v));
  }
}
#endif

#if XSIMD_WITH_AVX2 && defined(__F16C__)
// vcvtph2ps of eight f16, with to_float's bits for signalling NaNs (quiet bit = the input's).
template <class Arch>
inline __m256 widen_f16_f16c(__m128i h) {
  __m256 r = _mm256_cvtph_ps(h);
  if (_mm256_movemask_ps(_mm256_cmp_ps(r, r, _CMP_UNORD_Q)) != 0) {
    const __m256i h32 = _mm256_cvtepu16_epi32(h);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(h32, _mm256_set1_epi32(0x7fff)),
                                           _mm256_set1_epi32(0x7c00));
    // Bit 22 of the result is bit 9 of the input: flip it where the input's is clear.
    const __m256i flip =
        _mm256_andnot_si256(_mm256_slli_epi32(h32, 13), _mm256_set1_epi32(0x00400000));
    r = _mm256_castsi256_ps(_mm256_xor_si256(_mm256_castps_si256(r), _mm256_and_si256(nan, flip)));
  }
  return r;
}
#endif

#if XSIMD_WITH_AVX512F
// vcvtph2ps of sixteen f16, with to_float's bits for signalling NaNs (see widen_f16_f16c).
template <class Arch>
inline __m512 widen_f16_avx512(__m256i h) {
  __m512 r = _mm512_cvtph_ps(h);
  if (_mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q) != 0) {
    const __m512i h32 = _mm512_cvtepu16_epi32(h);
    const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(h32, _mm512_set1_epi32(0x7fff)),
                                                  _mm512_set1_epi32(0x7c00));
    const __m512i flip =
        _mm512_andnot_si512(_mm512_slli_epi32(h32, 13), _mm512_set1_epi32(0x00400000));
    const __m512i ri = _mm512_castps_si512(r);
    r = _mm512_castsi512_ps(_mm512_mask_xor_epi32(ri, nan, ri, flip));
  }
  return r;
}
#endif

#if XSIMD_WITH_NEON && defined(__aarch64__)
// FCVTL of four f16, with to_float's bits for signalling NaNs (see widen_f16_f16c).
template <class Arch>
inline float32x4_t widen_f16_neon(uint16x4_t h) {
  float32x4_t r = vcvt_f32_f16(vreinterpret_f16_u16(h));
  if (vminvq_u32(vceqq_f32(r, r)) == 0) {
    const uint32x4_t h32 = vmovl_u16(h);
    const uint32x4_t nan = vcgtq_u32(vandq_u32(h32, vdupq_n_u32(0x7fff)), vdupq_n_u32(0x7c00));
    const uint32x4_t flip = vbicq_u32(vdupq_n_u32(0x00400000), vshlq_n_u32(h32, 13));
    r = vreinterpretq_f32_u32(veorq_u32(vreinterpretq_u32_f32(r), vandq_u32(nan, flip)));
  }
  return r;
}
#endif

#if XSIMD_WITH_AVX512F
// The sixteen lanes of v rounded once to 16-bit storage T.
template <class Arch, storage_type T>
inline __m256i narrow16_avx512(const fbatch<Arch>& v) {
  if constexpr (std::is_same_v<T, bf16>) {
#if defined(__AVX512BF16__)
    if constexpr (has_avx512bf16<Arch>) {
      // vfpclassps category 0x20: subnormal (vcvtneps2bf16 would give a signed zero there).
      if (_mm512_fpclass_ps_mask(v, 0x20) == 0) [[likely]]
        return std::bit_cast<__m256i>(_mm512_cvtneps_pbh(v));
    }
#endif
    return _mm512_cvtepi32_epi16(narrow_bf16<Arch>(v));
  } else {
    return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
  }
}
#endif

// N consecutive values of storage type T as a float batch. Quiet = true (load_operand) may give a
// signalling NaN lane quiet where to_float keeps it signalling.
template <class Arch, storage_type T, bool Quiet = false>
fbatch<Arch> load_widened(const T* p) {
  [[maybe_unused]] constexpr conversion_kind k = conversion_of<Arch>();
  if constexpr (std::is_same_v<T, float>) {
    return fbatch<Arch>::load_unaligned(p);
#if XSIMD_WITH_AVX512F
  } else if constexpr (k == conversion_kind::avx512) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    if constexpr (std::is_same_v<T, bf16>) {
      return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    } else {
      if constexpr (Quiet) return _mm512_cvtph_ps(h);
      return widen_f16_avx512<Arch>(h);
    }
#endif
#if XSIMD_WITH_AVX2 && defined(__F16C__)
  } else if constexpr (k == conversion_kind::f16c) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if constexpr (std::is_same_v<T, bf16>) {
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    } else {
      if constexpr (Quiet) return _mm256_cvtph_ps(h);
      return widen_f16_f16c<Arch>(h);
    }
#endif
#if XSIMD_WITH_AVX
  } else if constexpr (k == conversion_kind::avx_halves) {
    const __m128 lo = widen4<Arch, T>(p);
    const __m128 hi = widen4<Arch, T>(p + 4);
    return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
#endif
#if XSIMD_WITH_SSE2
  } else if constexpr (k == conversion_kind::sse2) {
    return widen4<Arch, T>(p);
#endif
#if XSIMD_WITH_NEON && defined(__aarch64__)
  } else if constexpr (k == conversion_kind::neon_a64) {
    const uint16x4_t h = vld1_u16(reinterpret_cast<const std::uint16_t*>(p));
    if constexpr (std::is_same_v<T, bf16>) {
      return vreinterpretq_f32_u32(vshll_n_u16(h, 16));
    } else {
      if constexpr (Quiet) return vcvt_f32_f16(vreinterpret_f16_u16(h));
      return widen_f16_neon<Arch>(h);
    }
#endif
  } else {
    alignas(Arch::alignment()) float tmp[fbatch<Arch>::size];
    for (std::size_t i = 0; i < fbatch<Arch>::size; ++i) tmp[i] = load_float(p[i]);
    return fbatch<Arch>::load_aligned(tmp);
  }
}

// load_widened for values that are only operands of arithmetic (the RoPE bodies: every element
// loaded is a factor of a product or an FMA, whose result is what is stored): a signalling NaN
// may come out quiet. An operation with one NaN operand returns that NaN made quiet, whether or not
// it was signalling (IEEE 754-2008 6.2.3; Intel SDM vol. 1, 4.8.3.5; Arm ARM, FPProcessNaN), so
// the stored bits are the same, and the vcvtph2ps / FCVTL results need no repair (one compare and
// branch less per vector).
template <class Arch, storage_type T>
fbatch<Arch> load_operand(const T* p) {
  return load_widened<Arch, T, true>(p);
}

// The N lanes of v rounded once to T, at p.
template <class Arch, storage_type T>
void store_narrowed(T* p, const fbatch<Arch>& v) {
  [[maybe_unused]] constexpr conversion_kind k = conversion_of<Arch>();
  if constexpr (std::is_same_v<T, float>) {
    v.store_unaligned(p);
#if XSIMD_WITH_AVX512F
  } else if constexpr (k == conversion_kind::avx512) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), narrow16_avx512<Arch, T>(v));
#endif
#if XSIMD_WITH_AVX2 && defined(__F16C__)
  } else if constexpr (k == conversion_kind::f16c) {
    __m128i h;
    if constexpr (std::is_same_v<T, bf16>) {
      // packus keeps the 16 bits (every lane <= 0xffff); then the two 64-bit halves together.
      const __m256i w = narrow_bf16<Arch>(v);
      h = _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(w, w), 0x08));
    } else {
      h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
#endif
#if XSIMD_WITH_AVX
  } else if constexpr (k == conversion_kind::avx_halves) {
    narrow4<Arch, T>(p, _mm256_castps256_ps128(v));
    narrow4<Arch, T>(p + 4, _mm256_extractf128_ps(v, 1));
#endif
#if XSIMD_WITH_SSE2
  } else if constexpr (k == conversion_kind::sse2) {
    narrow4<Arch, T>(p, v);
#endif
#if XSIMD_WITH_NEON && defined(__aarch64__)
  } else if constexpr (k == conversion_kind::neon_a64) {
    uint16x4_t h;
    if constexpr (std::is_same_v<T, bf16>) {
      h = vmovn_u32(narrow_bf16<Arch>(v));
    } else {
      h = vreinterpret_u16_f16(vcvt_f16_f32(v));
    }
    vst1_u16(reinterpret_cast<std::uint16_t*>(p), h);
#endif
  } else {
    alignas(Arch::alignment()) float tmp[fbatch<Arch>::size];
    v.store_aligned(tmp);
    for (std::size_t i = 0; i < fbatch<Arch>::size; ++i) p[i] = store_as<T>(tmp[i]);
  }
}

// The first n < N values at p (the other lanes 0), and the first n lanes of v stored at p: the
// tails of the kernels, through a stack buffer (bits copied, converted as a whole vector).
template <class Arch, storage_type T, bool Quiet = false>
fbatch<Arch> load_widened_n(const T* p, std::size_t n) {
  T tmp[fbatch<Arch>::size] = {};
  std::memcpy(static_cast<void*>(tmp), static_cast<const void*>(p), n * sizeof(T));
  return load_widened<Arch, T, Quiet>(static_cast<const T*>(tmp));
}
template <class Arch, storage_type T>
fbatch<Arch> load_operand_n(const T* p, std::size_t n) {
  return load_widened_n<Arch, T, true>(p, n);
}

template <class Arch, storage_type T>
void store_narrowed_n(T* p, const fbatch<Arch>& v, std::size_t n) {
  T tmp[fbatch<Arch>::size];
  store_narrowed<Arch>(tmp, v);
  std::memcpy(static_cast<void*>(p), static_cast<const void*>(tmp), n * sizeof(T));
}

}  // namespace posenc::kernels::simd::detail

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
