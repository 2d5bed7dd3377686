// The arithmetic of the RoPE SIMD kernels, for one xsimd architecture Arch: which architectures
// fuse (has_fma, fma_mode_of), the multiply-add in Arch's pattern for batches and single floats,
// the lane swap of the interleaved layout, exact negations, and one pair in scalar code in the
// reference's order (rope_reference.hpp).
//
// Part of the RoPE SIMD kernels: included by simd/rope.hpp (inside its GCC 12 AVX-512 diagnostic
// region), which is the header to include.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <posenc/kernels/detail/batch.hpp>
#include <posenc/kernels/rope_reference.hpp>

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

// AVX and AVX-512 take the in-lane vpermilps with an immediate: xsimd 8.1's swizzle emits the
// cross-lane vpermps with an index register (three cycles of latency where vpermilps has one; on
// AMD Zen 5 an f16 interleaved call went from 3.35x to 3.24x memcpy at T = 1 and from 1.35x to
// 0.99x at T = 4096: docs/benchmarks.md).
template <class Arch>
inline fbatch<Arch> swap_pairs(const fbatch<Arch>& v) {
#if XSIMD_WITH_NEON
  if constexpr (std::is_base_of_v<xsimd::neon, Arch>) {
    return fbatch<Arch>(vrev64q_f32(v));  // xsimd 8.1's NEON swizzle goes through memory
  } else
#endif
#if XSIMD_WITH_AVX512F
      if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) {
    return fbatch<Arch>(_mm512_permute_ps(v, 0xb1));
  } else
#endif
#if XSIMD_WITH_AVX
      if constexpr (std::is_base_of_v<xsimd::avx, Arch>) {
    return fbatch<Arch>(_mm256_permute_ps(v, 0xb1));
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

}  // namespace detail

}  // namespace posenc::kernels::simd
