// Whether the kernels use xsimd: the one place that decides it. POSENC_SIMD is 1 where xsimd is
// installed (__has_include) and has an architecture for the target (x86 with SSE2, ARM with NEON),
// unless POSENC_NO_SIMD is defined (the user's opt-out; the dispatch library's build defines it
// when meson finds no xsimd); then <xsimd/xsimd.hpp> is included. Elsewhere (e.g. a Cortex-M4,
// whose newlib lacks what xsimd's headers use) POSENC_SIMD is 0 and the kernels are the scalar
// references.
#pragma once

#if defined(POSENC_SIMD)
#error "posenc: POSENC_SIMD is set here; define POSENC_NO_SIMD to turn SIMD off"
#endif

#if !defined(POSENC_NO_SIMD) && defined(__has_include)
#if __has_include(<xsimd/xsimd.hpp>) && (defined(__SSE2__) || defined(__ARM_NEON))
#include <xsimd/xsimd.hpp>
#if XSIMD_WITH_SSE2 || XSIMD_WITH_NEON
#define POSENC_SIMD 1
#endif
#endif
#endif

#ifndef POSENC_SIMD
#define POSENC_SIMD 0
#endif

namespace posenc::kernels {
#if POSENC_SIMD
// The architecture of the public entry points (apply_rope, add_sinusoidal, ...): the one the
// compiler flags fix (-mavx2 -mfma gives fma3<avx2>, -march=native the best of the machine).
using build_arch = xsimd::default_arch;
// Its name: xsimd's ("sse2", "fma3+avx2", "avx512bw", "arm64+neon" for neon64, ...) or "scalar".
inline constexpr const char* build_arch_name = build_arch::name();
#else
inline constexpr const char* build_arch_name = "scalar";
#endif
}  // namespace posenc::kernels
