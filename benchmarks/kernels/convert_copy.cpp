// convert_copy (convert_copy.hpp). Compiled without ISA flags: the AVX-512 and F16C bodies carry
// target attributes and run only where the CPU has them (__builtin_cpu_supports; CPUID for F16C).
// Each vector is loaded, widened, narrowed and stored on its own, as in the kernels' f16 bodies
// (one vcvtph2ps per loaded vector, one vcvtps2ph into a register per stored one).
#include "convert_copy.hpp"

#include "x86.hpp"

#if POSENC_BENCH_X86
#include <cpuid.h>
#endif

namespace posenc_bench {

namespace {

void convert_scalar(posenc::f16* d, const posenc::f16* s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) d[i] = posenc::to_f16(posenc::to_float(s[i]));
}

#if POSENC_BENCH_X86
// GCC 12's _mm512_cvtph_ps and _mm512_cvtps_ph start from a register initialised from itself
// (_mm512_undefined_ps and friends), which -Wmaybe-uninitialized reports once inlined here (GCC
// bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
// The tail (fewer elements than a vector) is scalar: none for the benchmark's sizes.
__attribute__((target("avx512f"))) void convert_avx512(posenc::f16* d, const posenc::f16* s,
                                                       std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i),
                        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  convert_scalar(d + i, s + i, n - i);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

__attribute__((target("avx,f16c"))) void convert_f16c(posenc::f16* d, const posenc::f16* s,
                                                      std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  convert_scalar(d + i, s + i, n - i);
}
#endif

struct chosen {
  void (*fn)(posenc::f16*, const posenc::f16*, std::size_t);
  const char* isa;
};

chosen choose() {
#if POSENC_BENCH_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {convert_avx512, "avx512f"};
  // F16C: CPUID leaf 1, ECX bit 29 (Clang 16's __builtin_cpu_supports does not know "f16c"); its
  // instructions use the AVX state, which "avx" says the OS saves.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 &&
      (ecx & (1u << 29)) != 0)
    return {convert_f16c, "f16c"};
#endif
  return {convert_scalar, "scalar"};
}

const chosen& the_convert() {
  static const chosen c = choose();
  return c;
}

}  // namespace

void convert_copy(posenc::f16* dst, const posenc::f16* src, std::size_t n) {
  the_convert().fn(dst, src, n);
}

const char* convert_copy_isa() {
  return the_convert().isa;
}

}  // namespace posenc_bench
