// The avx512bf16 entry: avx512bw's kernels (isa_avx512bw.cpp) but for the bf16 RoPE kernels, which
// are compiled here for simd::avx512bf16 (xsimd::avx512bw whose bf16 narrowing is AVX-512 BF16's
// vcvtneps2bf16 / vcvtne2ps2bf16, detail/batch.hpp) with the avx512bw flags and -mavx512bf16
// (src/kernels/meson.build). The other kernels would compile to the same code as avx512bw's (the
// additive bf16 kernels keep the integer rounding), so they are taken from there, not compiled
// twice.
#include "isa_entry.hpp"

#if !POSENC_SIMD
#error "isa_avx512bf16.cpp needs xsimd (POSENC_SIMD, posenc/kernels/detail/simd.hpp)"
#endif
#if !defined(__AVX512BF16__)
#error "isa_avx512bf16.cpp must be compiled with -mavx512bf16"
#endif

static_assert(std::is_same_v<xsimd::default_arch, xsimd::avx512bw>,
              "posenc: isa_avx512bf16.cpp must be compiled with -mavx512f -mavx512cd -mavx512dq "
              "-mavx512bw -mfma -mavx512bf16");

namespace posenc::kernels {

// Instantiated in isa_avx512bw.cpp: only their addresses are taken here.
#define POSENC_AVX512BW_EXTERN(T, group, member, function, reference, params, args) \
  extern template kernel_error simd::function<xsimd::avx512bw, T> params;
POSENC_DISPATCHED_KERNELS(POSENC_AVX512BW_EXTERN, float, POSENC_NO_DEFAULT_ARGUMENT)
POSENC_DISPATCHED_KERNELS(POSENC_AVX512BW_EXTERN, bf16, POSENC_NO_DEFAULT_ARGUMENT)
POSENC_DISPATCHED_KERNELS(POSENC_AVX512BW_EXTERN, f16, POSENC_NO_DEFAULT_ARGUMENT)
#undef POSENC_AVX512BW_EXTERN

}  // namespace posenc::kernels

namespace posenc::kernels::dispatch::detail {

namespace {

// avx512bw's kernels, and the RoPE group of bf16 from simd::avx512bf16.
struct avx512bf16_kernels {
#define POSENC_BF16_ROPE_MEMBER(T, group, member, function, reference, params, args) \
  group.member = &simd::function<simd::avx512bf16, T>;
  template <entry_storage_type T>
  static constexpr void set(rope_kernels<T>& rope, additive_kernels<T>& additive) {
    simd_kernels<xsimd::avx512bw>::set<T>(rope, additive);
    if constexpr (std::is_same_v<T, bf16>) {
      POSENC_ROPE_KERNELS(POSENC_BF16_ROPE_MEMBER, T, POSENC_NO_DEFAULT_ARGUMENT)
    }
  }
#undef POSENC_BF16_ROPE_MEMBER
};

}  // namespace

constinit const isa_kernels entry_avx512bf16 = make_entry<avx512bf16_kernels>(
    "avx512bf16", simd::avx512bf16::name(), false, simd::fma_mode_of<simd::avx512bf16>);

}  // namespace posenc::kernels::dispatch::detail
