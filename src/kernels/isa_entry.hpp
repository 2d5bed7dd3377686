// Internal to the posenc_kernels library: how one ISA's table of kernels is filled, and the
// entries that each per-ISA translation unit defines.
//
// Each isa_<name>.cpp is compiled with that ISA's flags and defines one constant-initialised
// isa_kernels object (no code runs to build it, so nothing compiled for a wider ISA executes on
// a CPU without it). The dispatcher (dispatch.cpp, no ISA flags) only reads those objects.
//
// Adding a kernel (as for simd::add_sinusoidal<Arch, T> in encoding_kernels): a function-pointer
// member in isa_kernels (posenc/kernels/dispatch.hpp), one line in simd_entry and one in
// scalar_entry below (or in the per-family helpers they call: simd_rope, simd_encodings,
// scalar_rope, scalar_encodings), and the dispatching wrappers in dispatch.cpp.
#pragma once

#include <posenc/kernels/alibi.hpp>
#include <posenc/kernels/dispatch.hpp>
#include <posenc/kernels/learned.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/kernels/sinusoidal.hpp>

#if POSENC_KERNELS_XSIMD
#include <posenc/kernels/simd/alibi.hpp>
#include <posenc/kernels/simd/learned.hpp>
#include <posenc/kernels/simd/rope.hpp>
#include <posenc/kernels/simd/sinusoidal.hpp>
#endif

namespace posenc::kernels::dispatch::detail {

// Defined by the per-ISA translation units that meson compiled (POSENC_KERNELS_HAVE_<ISA>).
extern const isa_kernels entry_sse4_2;
extern const isa_kernels entry_avx2;
extern const isa_kernels entry_avx512bw;

#if POSENC_KERNELS_XSIMD
template <class Arch, entry_storage_type T>
constexpr rope_kernels<T> simd_rope() {
  rope_kernels<T> k;
  k.apply = &simd::apply_rope<Arch, T>;
  k.apply_in_place = &simd::apply_rope<Arch, T>;
  k.apply_qk = &simd::apply_rope_qk<Arch, T>;
  return k;
}

// The encodings' kernels (no multiply-add to fuse: the same bits on every Arch).
template <class Arch, entry_storage_type T>
constexpr encoding_kernels<T> simd_encodings() {
  encoding_kernels<T> k;
  k.add_sinusoidal = &simd::add_sinusoidal<Arch, T>;
  k.add_sinusoidal_in_place = &simd::add_sinusoidal<Arch, T>;
  k.add_learned = &simd::add_learned<Arch, T>;
  k.add_learned_in_place = &simd::add_learned<Arch, T>;
  k.add_alibi_bias = &simd::add_alibi_bias<Arch, T>;
  return k;
}

// The kernels of posenc/kernels/simd/ for Arch; `supported` is decided by the dispatcher.
template <class Arch>
constexpr isa_kernels simd_entry(const char* name) {
  isa_kernels k;
  k.name = name;
  k.xsimd_arch = Arch::name();
  k.supported = false;
  k.fma = simd::fma_mode_of<Arch>;
  k.rope_f32 = simd_rope<Arch, float>();
  k.rope_bf16 = simd_rope<Arch, bf16>();
  k.rope_f16 = simd_rope<Arch, f16>();
  k.enc_f32 = simd_encodings<Arch, float>();
  k.enc_bf16 = simd_encodings<Arch, bf16>();
  k.enc_f16 = simd_encodings<Arch, f16>();
  return k;
}
#endif

// The scalar reference with separate multiply and add (fma_mode::unfused).
template <entry_storage_type T>
kernel_error scalar_apply(const rope_table& t, tensor_view<const T> in, tensor_view<T> out,
                          token_positions pos) {
  return rope_reference<T>(t, in, out, pos, fma_mode::unfused);
}
template <entry_storage_type T>
kernel_error scalar_apply_in_place(const rope_table& t, tensor_view<T> x, token_positions pos) {
  return rope_reference<T>(t, x, pos, fma_mode::unfused);
}
template <entry_storage_type T>
kernel_error scalar_apply_qk(const rope_table& t, tensor_view<const T> q_in, tensor_view<T> q_out,
                             tensor_view<const T> k_in, tensor_view<T> k_out, token_positions pos) {
  return rope_reference_qk<T>(t, q_in, q_out, k_in, k_out, pos, fma_mode::unfused);
}

template <entry_storage_type T>
constexpr rope_kernels<T> scalar_rope() {
  rope_kernels<T> k;
  k.apply = &scalar_apply<T>;
  k.apply_in_place = &scalar_apply_in_place<T>;
  k.apply_qk = &scalar_apply_qk<T>;
  return k;
}

// The scalar references of the encodings.
template <entry_storage_type T>
constexpr encoding_kernels<T> scalar_encodings() {
  encoding_kernels<T> k;
  k.add_sinusoidal = &add_sinusoidal_reference<T>;
  k.add_sinusoidal_in_place = &add_sinusoidal_reference<T>;
  k.add_learned = &add_learned_reference<T>;
  k.add_learned_in_place = &add_learned_reference<T>;
  k.add_alibi_bias = &add_alibi_bias_reference<T>;
  return k;
}

constexpr isa_kernels scalar_entry() {
  isa_kernels k;
  k.name = "scalar";
  k.xsimd_arch = "none";
  k.supported = true;
  k.fma = fma_mode::unfused;
  k.rope_f32 = scalar_rope<float>();
  k.rope_bf16 = scalar_rope<bf16>();
  k.rope_f16 = scalar_rope<f16>();
  k.enc_f32 = scalar_encodings<float>();
  k.enc_bf16 = scalar_encodings<bf16>();
  k.enc_f16 = scalar_encodings<f16>();
  return k;
}

}  // namespace posenc::kernels::dispatch::detail
