// Whether the kernel headers use xsimd: where it is installed (__has_include) and has an
// architecture for the target (x86 with SSE2, ARM with NEON), unless POSENC_NO_SIMD is defined.
// Elsewhere (e.g. a Cortex-M4, whose newlib lacks what xsimd's headers use) the kernels are the
// scalar references. Defines POSENC_KERNELS_SIMD to 1 and includes xsimd, or leaves it undefined.
#pragma once

#if !defined(POSENC_NO_SIMD) && defined(__has_include)
#if __has_include(<xsimd/xsimd.hpp>) && (defined(__SSE2__) || defined(__ARM_NEON))
#include <xsimd/xsimd.hpp>
#if XSIMD_WITH_SSE2 || XSIMD_WITH_NEON
#define POSENC_KERNELS_SIMD 1
#endif
#endif
#endif
