// One entry of simd_conversions.hpp: the kernels' SIMD conversions for the architecture that this
// translation unit's flags select (meson.build builds it once per x86 ISA, POSENC_TEST_CONV_ISA
// naming it). Only that architecture is instantiated here, and the ISA builds are linked after
// conversions.cpp from the narrowest to the widest, so that an inline function several of them
// emit is kept from the narrowest one (the same caveat as src/kernels/meson.build).
#include "kernels/storage/simd_conversions_impl.hpp"

#if !POSENC_SIMD
#error "tests/kernels/storage: the ISA builds need xsimd"
#endif

namespace posenc_test::conv {

#define POSENC_TEST_CONV_ENTRY_(isa) simd_##isa
#define POSENC_TEST_CONV_ENTRY(isa) POSENC_TEST_CONV_ENTRY_(isa)
#if defined(__AVX512BF16__)
constinit const simd_conversions POSENC_TEST_CONV_ENTRY(POSENC_TEST_CONV_ISA) =
    make_simd_conversions<posenc::kernels::simd::avx512bf16>();
#else
constinit const simd_conversions POSENC_TEST_CONV_ENTRY(POSENC_TEST_CONV_ISA) =
    make_simd_conversions<xsimd::default_arch>();
#endif

}  // namespace posenc_test::conv
