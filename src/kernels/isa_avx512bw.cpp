// The kernels for avx512bw, compiled with -mavx512f -mavx512cd -mavx512dq -mavx512bw -mfma and
// checked to be the xsimd architecture xsimd::avx512bw (src/kernels/meson.build).
#include "isa_entry.hpp"

#if !POSENC_SIMD
#error "isa_avx512bw.cpp needs xsimd (POSENC_SIMD, posenc/kernels/detail/simd.hpp)"
#endif

static_assert(std::is_same_v<xsimd::default_arch, xsimd::avx512bw>,
              "posenc: isa_avx512bw.cpp must be compiled with -mavx512f -mavx512cd -mavx512dq "
              "-mavx512bw -mfma");

namespace posenc::kernels {

// Every kernel of the list, explicitly instantiated here: the avx512bf16 entry
// (isa_avx512bf16.cpp) points to all of them but its bf16 RoPE kernels, without compiling them
// a second time.
#define POSENC_AVX512BW_INSTANTIATION(T, group, member, function, reference, params, args) \
  template kernel_error simd::function<xsimd::avx512bw, T> params;
POSENC_DISPATCHED_KERNELS(POSENC_AVX512BW_INSTANTIATION, float, POSENC_NO_DEFAULT_ARGUMENT)
POSENC_DISPATCHED_KERNELS(POSENC_AVX512BW_INSTANTIATION, bf16, POSENC_NO_DEFAULT_ARGUMENT)
POSENC_DISPATCHED_KERNELS(POSENC_AVX512BW_INSTANTIATION, f16, POSENC_NO_DEFAULT_ARGUMENT)
#undef POSENC_AVX512BW_INSTANTIATION

}  // namespace posenc::kernels

namespace posenc::kernels::dispatch::detail {

constinit const isa_kernels entry_avx512bw = simd_entry<xsimd::avx512bw>("avx512bw");

}  // namespace posenc::kernels::dispatch::detail
