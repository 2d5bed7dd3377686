// The kernels for avx512bf16 (simd::avx512bf16: xsimd::avx512bw whose bf16 narrowing is AVX-512
// BF16's vcvtneps2bf16, detail/batch.hpp), compiled with the avx512bw flags and -mavx512bf16
// (src/kernels/meson.build).
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

namespace posenc::kernels::dispatch::detail {

constinit const isa_kernels entry_avx512bf16 = simd_entry<simd::avx512bf16>("avx512bf16");

}  // namespace posenc::kernels::dispatch::detail
