// convert_copy (convert_copy.hpp). Compiled without ISA flags: the vector bodies carry target
// attributes and run only where the dispatch library's ISA (which the CPU runs) has them. Each
// vector is loaded, widened, narrowed and stored on its own, as in the kernels' 16-bit bodies.
#include "convert_copy.hpp"

#include "x86.hpp"

#include <posenc/kernels/dispatch.hpp>

#include <cstdint>
#include <string_view>

namespace posenc_bench {

namespace {

void f16_scalar(posenc::f16* d, const posenc::f16* s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) d[i] = posenc::to_f16(posenc::to_float(s[i]));
}

void bf16_scalar(posenc::bf16* d, const posenc::bf16* s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) d[i] = posenc::to_bf16(posenc::to_float(s[i]));
}

#if POSENC_BENCH_X86
// GCC 12's AVX-512 intrinsics start from a register initialised from itself
// (_mm512_undefined_ps and friends), which -Wmaybe-uninitialized reports once inlined here (GCC
// bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
// The tails (fewer elements than a vector) are scalar: none for the benchmark's sizes.
__attribute__((target("avx512f"))) void f16_avx512(posenc::f16* d, const posenc::f16* s,
                                                   std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i),
                        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  f16_scalar(d + i, s + i, n - i);
}

// bf16: 32 values are loaded as 16 little-endian words; element 2k is word << 16 and element
// 2k + 1 is word & 0xffff0000, both exact floats (widening is exact: bf16 is the high half of a
// float).
__attribute__((target("avx512f,avx512bw,avx512bf16"))) void bf16_avx512bf16(posenc::bf16* d,
                                                                            const posenc::bf16* s,
                                                                            std::size_t n) {
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
  // vcvtne2ps2bf16(odd, even) puts even in words 0-15 and odd in words 16-31; word 2k of the
  // result is even[k], word 2k + 1 is odd[k].
  const __m512i order = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24,
                                         8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512i w = _mm512_loadu_si512(s + i);
    const __m512 even = _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
    const __m512 odd = _mm512_castsi512_ps(_mm512_and_si512(w, high));
    // A vector cast (GCC and Clang): std::bit_cast, a function without the target attribute,
    // would return a 512-bit vector across an ABI boundary (-Wpsabi).
    const __m512i both = (__m512i)_mm512_cvtne2ps_pbh(odd, even);
    _mm512_storeu_si512(d + i, _mm512_permutexvar_epi16(order, both));
  }
  bf16_scalar(d + i, s + i, n - i);
}

__attribute__((target("avx512f,avx512bw"))) void bf16_avx512bw(posenc::bf16* d,
                                                               const posenc::bf16* s,
                                                               std::size_t n) {
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512i w = _mm512_loadu_si512(s + i);
    // to_bf16's rounding of every lane, in its high 16 bits: u + 0x7fff + ((u >> 16) & 1) (the
    // kept bit tested into a mask and added by a masked add, as the kernels do), and for a NaN
    // u | 0x00400000 (made quiet).
    __m512i r[2] = {_mm512_slli_epi32(w, 16), _mm512_and_si512(w, high)};
    for (__m512i& u : r) {
      const __mmask16 kept_odd = _mm512_test_epi32_mask(u, _mm512_set1_epi32(0x10000));
      __m512i t = _mm512_add_epi32(u, _mm512_set1_epi32(0x7fff));
      t = _mm512_mask_add_epi32(t, kept_odd, t, _mm512_set1_epi32(1));
      const __m512 v = _mm512_castsi512_ps(u);
      u = _mm512_mask_or_epi32(t, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), u,
                               _mm512_set1_epi32(0x00400000));
    }
    // (even >> 16) | (odd & 0xffff0000)
    _mm512_storeu_si512(d + i,
                        _mm512_ternarylogic_epi32(_mm512_srli_epi32(r[0], 16), r[1], high, 0xf8));
  }
  bf16_scalar(d + i, s + i, n - i);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

__attribute__((target("avx,f16c"))) void f16_f16c(posenc::f16* d, const posenc::f16* s,
                                                  std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  f16_scalar(d + i, s + i, n - i);
}

__attribute__((target("avx2"))) void bf16_avx2(posenc::bf16* d, const posenc::bf16* s,
                                               std::size_t n) {
  const __m256i high = _mm256_set1_epi32(static_cast<int>(0xffff0000u));
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    __m256i r[2] = {_mm256_slli_epi32(w, 16), _mm256_and_si256(w, high)};
    // One compare for both vectors (unordered: either lane a NaN); a NaN's 16 values go the
    // scalar way (the benchmark's inputs hold none).
    if (_mm256_movemask_ps(_mm256_cmp_ps(_mm256_castsi256_ps(r[0]), _mm256_castsi256_ps(r[1]),
                                         _CMP_UNORD_Q)) != 0) {
      bf16_scalar(d + i, s + i, 16);
      continue;
    }
    // to_bf16's rounding of a lane that is not a NaN, in its high 16 bits:
    // u + 0x7fff + ((u >> 16) & 1).
    for (__m256i& u : r)
      u = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)),
                           _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i),
                        _mm256_or_si256(_mm256_srli_epi32(r[0], 16), _mm256_and_si256(r[1], high)));
  }
  bf16_scalar(d + i, s + i, n - i);
}
#endif

struct chosen {
  void (*f16)(posenc::f16*, const posenc::f16*, std::size_t);
  void (*bf16)(posenc::bf16*, const posenc::bf16*, std::size_t);
  const char* isa;
};

chosen choose() {
#if POSENC_BENCH_X86
  // The dispatch library runs an ISA only where the CPU (and OS) has it; its avx2 entry needs F16C.
  const std::string_view isa = posenc::kernels::dispatch::active_isa();
  if (isa == "avx512bf16") return {f16_avx512, bf16_avx512bf16, "f16 avx512f, bf16 avx512bf16"};
  if (isa == "avx512bw") return {f16_avx512, bf16_avx512bw, "f16 avx512f, bf16 avx512bw"};
  if (isa == "avx2") return {f16_f16c, bf16_avx2, "f16 f16c, bf16 avx2"};
#endif
  return {f16_scalar, bf16_scalar, "f16 scalar, bf16 scalar"};
}

const chosen& the_convert() {
  static const chosen c = choose();
  return c;
}

}  // namespace

void convert_copy(posenc::f16* dst, const posenc::f16* src, std::size_t n) {
  the_convert().f16(dst, src, n);
}

void convert_copy(posenc::bf16* dst, const posenc::bf16* src, std::size_t n) {
  the_convert().bf16(dst, src, n);
}

const char* convert_copy_isa() {
  return the_convert().isa;
}

}  // namespace posenc_bench
