// The kernels for avx2, compiled with -mavx2 -mfma -mf16c and checked to be the xsimd architecture
// xsimd::fma3<xsimd::avx2> (src/kernels/meson.build). F16C converts f16 storage
// (detail/batch.hpp); the dispatcher picks this entry only on CPUs with F16C.
#include "isa_entry.hpp"

#if !POSENC_SIMD
#error "isa_avx2.cpp needs xsimd (POSENC_SIMD, posenc/kernels/detail/simd.hpp)"
#endif

static_assert(std::is_same_v<xsimd::default_arch, xsimd::fma3<xsimd::avx2>>,
              "posenc: isa_avx2.cpp must be compiled with -mavx2 -mfma");
#ifndef __F16C__
#error "posenc: isa_avx2.cpp must be compiled with -mf16c"
#endif

namespace posenc::kernels::dispatch::detail {

constinit const isa_kernels entry_avx2 = simd_entry<xsimd::fma3<xsimd::avx2>>("avx2");

}  // namespace posenc::kernels::dispatch::detail
