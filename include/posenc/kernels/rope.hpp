// Applying RoPE to tensors with the architecture the code is built for: the public entry points.
//
// With xsimd (found by __has_include, on an x86 target with SSE2 or an ARM target with NEON, and
// POSENC_NO_SIMD not defined) these are the kernels of simd/rope.hpp for xsimd::default_arch,
// which the compiler flags fix (-mavx2 -mfma gives fma3<avx2>, -march=native the best of the
// machine; docs/kernels.md). Otherwise (no xsimd, freestanding targets such as a Cortex-M4, or
// POSENC_NO_SIMD) they are the scalar reference with the unfused pattern. Either way the result is
// rope_reference(..., build_fma_mode), bit for bit. Runtime selection of the best ISA of the
// machine is the dispatch library's (src/kernels).
#pragma once

#include <posenc/kernels/detail/simd.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#if POSENC_SIMD
#include <posenc/kernels/simd/rope.hpp>
#endif

namespace posenc::kernels {

// The FMA pattern of the entry points below (rope_reference with this mode gives the same bits);
// build_arch and build_arch_name are in detail/simd.hpp.
#if POSENC_SIMD
inline constexpr fma_mode build_fma_mode = simd::fma_mode_of<build_arch>;
#else
inline constexpr fma_mode build_fma_mode = fma_mode::unfused;
#endif

// out = RoPE(in) at the given positions; in place when out is the same view as in. Every argument
// is checked first (check_rope_call); on error nothing is written.
template <storage_type T>
kernel_error apply_rope(const rope_table& table, tensor_view<const T> in, tensor_view<T> out,
                        token_positions pos) {
#if POSENC_SIMD
  return simd::apply_rope<build_arch, T>(table, in, out, pos);
#else
  return rope_reference<T>(table, in, out, pos, fma_mode::unfused);
#endif
}

// In place.
template <storage_type T>
kernel_error apply_rope(const rope_table& table, tensor_view<T> x, token_positions pos) {
  return apply_rope<T>(table, tensor_view<const T>(x), x, pos);
}

// q and k with one position list; both checked before either is written (check_rope_qk_call).
template <storage_type T>
kernel_error apply_rope_qk(const rope_table& table, tensor_view<const T> q_in, tensor_view<T> q_out,
                           tensor_view<const T> k_in, tensor_view<T> k_out, token_positions pos) {
#if POSENC_SIMD
  return simd::apply_rope_qk<build_arch, T>(table, q_in, q_out, k_in, k_out, pos);
#else
  return rope_reference_qk<T>(table, q_in, q_out, k_in, k_out, pos, fma_mode::unfused);
#endif
}

}  // namespace posenc::kernels
