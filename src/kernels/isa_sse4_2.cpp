// The kernels for sse4.2, compiled with -msse4.2 and checked to be the xsimd architecture
// xsimd::sse4_2 (src/kernels/meson.build).
#include "isa_entry.hpp"

#if !POSENC_SIMD
#error "isa_sse4_2.cpp needs xsimd (POSENC_SIMD, posenc/kernels/detail/simd.hpp)"
#endif

static_assert(std::is_same_v<xsimd::default_arch, xsimd::sse4_2>,
              "posenc: isa_sse4_2.cpp must be compiled with -msse4.2");

namespace posenc::kernels::dispatch::detail {

constinit const isa_kernels entry_sse4_2 = simd_entry<xsimd::sse4_2>("sse4.2");

}  // namespace posenc::kernels::dispatch::detail
