// Internal to the posenc_kernels library: how one ISA's table of kernels is filled, and the
// entries that each per-ISA translation unit defines.
//
// Each isa_<name>.cpp is compiled with that ISA's flags and defines one constant-initialised
// isa_kernels object (no code runs to build it, so nothing compiled for a wider ISA executes on
// a CPU without it). The dispatcher (dispatch.cpp, no ISA flags) only reads those objects.
//
// The members are filled from the kernel list (posenc/kernels/detail/kernel_list.hpp): a new
// kernel needs nothing here but the #include of its SIMD kernel.
#pragma once

// The kernel list includes the scalar reference of every kernel it lists; the SIMD kernels are
// included here.
#include <posenc/kernels/detail/kernel_list.hpp>
#include <posenc/kernels/detail/simd.hpp>
#include <posenc/kernels/dispatch.hpp>
#if POSENC_SIMD
#include <posenc/kernels/simd/alibi.hpp>
#include <posenc/kernels/simd/learned.hpp>
#include <posenc/kernels/simd/mrope.hpp>
#include <posenc/kernels/simd/rope.hpp>
#include <posenc/kernels/simd/sinusoidal.hpp>
#include <posenc/kernels/simd/t5.hpp>
#include <posenc/kernels/simd/temperature.hpp>
#endif

namespace posenc::kernels::dispatch::detail {

// Defined by the per-ISA translation units that meson compiled (POSENC_KERNELS_HAVE_<ISA>).
extern const isa_kernels entry_sse4_2;
extern const isa_kernels entry_avx2;
extern const isa_kernels entry_avx512bw;
extern const isa_kernels entry_avx512bf16;

// An entry: name, xsimd architecture, support, FMA mode, and the kernels of each storage type T,
// which Kernels::set<T>(rope, additive) writes into the entry's two groups.
template <class Kernels>
constexpr isa_kernels make_entry(const char* name, const char* xsimd_arch, bool supported,
                                 fma_mode fma) {
  isa_kernels k;
  k.name = name;
  k.xsimd_arch = xsimd_arch;
  k.supported = supported;
  k.fma = fma;
  Kernels::template set<float>(k.rope_f32, k.additive_f32);
  Kernels::template set<bf16>(k.rope_bf16, k.additive_bf16);
  Kernels::template set<f16>(k.rope_f16, k.additive_f16);
  return k;
}

#if POSENC_SIMD
// The kernels of posenc/kernels/simd/ for Arch: simd::<function><Arch, T>. The RoPE kernels fuse
// as Arch does (fma_mode_of<Arch>); the additive ones have no multiply-add to fuse, so they give
// the same bits on every Arch.
template <class Arch>
struct simd_kernels {
#define POSENC_SIMD_MEMBER(T, group, member, function, reference, params, args) \
  group.member = &simd::function<Arch, T>;
  template <entry_storage_type T>
  static constexpr void set(rope_kernels<T>& rope, additive_kernels<T>& additive) {
    POSENC_DISPATCHED_KERNELS(POSENC_SIMD_MEMBER, T, POSENC_NO_DEFAULT_ARGUMENT)
  }
#undef POSENC_SIMD_MEMBER
};

// Arch's entry; `supported` is decided by the dispatcher.
template <class Arch>
constexpr isa_kernels simd_entry(const char* name) {
  return make_entry<simd_kernels<Arch>>(name, Arch::name(), false, simd::fma_mode_of<Arch>);
}
#endif

// The scalar kernels: scalar_<member><T> calls <reference><T>(args), which for RoPE is the
// unfused pattern (rope_reference's default mode). Function templates, whose symbols kernels.map
// keeps local.
#define POSENC_SCALAR_KERNEL(T, group, member, function, reference, params, args) \
  template <entry_storage_type T>                                                 \
  kernel_error scalar_##member params {                                           \
    return reference<T> args;                                                     \
  }
POSENC_DISPATCHED_KERNELS(POSENC_SCALAR_KERNEL, T, POSENC_NO_DEFAULT_ARGUMENT)
#undef POSENC_SCALAR_KERNEL

struct scalar_kernels {
#define POSENC_SCALAR_MEMBER(T, group, member, function, reference, params, args) \
  group.member = &scalar_##member<T>;
  template <entry_storage_type T>
  static constexpr void set(rope_kernels<T>& rope, additive_kernels<T>& additive) {
    POSENC_DISPATCHED_KERNELS(POSENC_SCALAR_MEMBER, T, POSENC_NO_DEFAULT_ARGUMENT)
  }
#undef POSENC_SCALAR_MEMBER
};

// The scalar references, always supported, with separate multiply and add.
constexpr isa_kernels scalar_entry() {
  return make_entry<scalar_kernels>("scalar", "none", true, fma_mode::unfused);
}

}  // namespace posenc::kernels::dispatch::detail
