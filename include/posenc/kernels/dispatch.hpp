// Runtime dispatch: one binary carries the kernels built for several ISAs (x86-64: AVX-512BW,
// AVX2 + FMA + F16C, SSE4.2 and the compiler's baseline; elsewhere the baseline, e.g. NEON on
// aarch64) plus the scalar reference, and picks the best one the CPU supports at run time.
//
// Declarations only: link the compiled library `posenc_kernels` (meson: posenc_kernels_dep,
// docs/kernels.md "Runtime dispatch"). Header-only users who know their target at build time use
// posenc/kernels/rope.hpp instead (the build-time architecture, e.g. for firmware).
//
// Each ISA's RoPE kernels are bit-identical to rope_reference(..., isa.fma): fused multiply-adds
// where the ISA has FMA, separate multiply and add otherwise. So results can differ in the last
// bit between a machine that picks an FMA ISA and one that does not; force one ISA with POSENC_ISA
// (below) when bit-reproducibility across machines matters. The additive kernels (add_sinusoidal,
// add_learned, add_alibi_bias) never fuse: every ISA gives the bits of their *_reference kernels.
//
// The kernels, their entry points and the members of an ISA entry all follow from one list,
// posenc/kernels/detail/kernel_list.hpp.
//
// Choice (made once, at the first call):
//   1. the environment variable POSENC_ISA, if set to the name of a compiled ISA the CPU supports
//      ("avx512bf16", "avx512bw", "avx2", "sse4.2", "sse2", "neon64", "scalar"; see
//      compiled_isas());
//      an unknown or unsupported name is ignored (isa_override() says why) and 2. applies;
//   2. otherwise the best compiled ISA the CPU supports (xsimd::dispatch, confirmed against the
//      compiler's CPU-feature test, which also checks that the OS saves the wide registers).
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>

#include <posenc/kernels/detail/kernel_list.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/tables/learned.hpp>

namespace posenc::kernels::dispatch {

// The storage types with kernels of their own in every entry: float, bf16 and f16. _Float16
// tensors (where POSENC_HAS_FLOAT16) use the f16 kernels (overloads at the end of this header), so
// the entries' layout is the same whichever compiler, with or without _Float16, built the library
// or includes this header.
template <class T>
concept entry_storage_type =
    std::is_same_v<T, float> || std::is_same_v<T, bf16> || std::is_same_v<T, f16>;

// Arguments pass into kernels compiled in other translation units (each ISA's), views and
// positions by const reference (detail/kernel_list.hpp says why): plain data only.
static_assert(std::is_trivially_copyable_v<token_positions> &&
              std::is_trivially_copyable_v<rope_table>);

// <member>_fn<T>: the function pointer type of each kernel of the list (apply_fn,
// apply_in_place_fn, apply_qk_fn, add_sinusoidal_fn, add_sinusoidal_in_place_fn, add_learned_fn,
// add_learned_in_place_fn, add_alibi_bias_fn), the signature of its SIMD kernel
// (simd::<function><Arch, T>).
#define POSENC_KERNEL_FN(T, group, member, function, reference, params, args) \
  template <entry_storage_type T>                                             \
  using member##_fn = kernel_error(*) params;
POSENC_DISPATCHED_KERNELS(POSENC_KERNEL_FN, T, POSENC_NO_DEFAULT_ARGUMENT)
#undef POSENC_KERNEL_FN

#define POSENC_KERNEL_MEMBER(T, group, member, function, reference, params, args) \
  member##_fn<T> member = nullptr;

// The RoPE kernels of one ISA for one storage type (posenc/kernels/rope.hpp, mrope.hpp): apply,
// apply_in_place, apply_qk, apply_multi_axis, apply_multi_axis_in_place, apply_multi_axis_qk (the
// pair map as a span of sources) and apply_multi_axis_map, apply_multi_axis_map_in_place,
// apply_multi_axis_map_qk (as a multi_axis_map).
template <entry_storage_type T>
struct rope_kernels {
  POSENC_ROPE_KERNELS(POSENC_KERNEL_MEMBER, T, POSENC_NO_DEFAULT_ARGUMENT)
};

// The additive kernels of one ISA for one storage type (posenc/kernels/sinusoidal.hpp,
// learned.hpp, alibi.hpp): add_sinusoidal, add_sinusoidal_in_place, add_learned,
// add_learned_in_place, add_alibi_bias.
template <entry_storage_type T>
struct additive_kernels {
  POSENC_ADDITIVE_KERNELS(POSENC_KERNEL_MEMBER, T, POSENC_NO_DEFAULT_ARGUMENT)
};

#undef POSENC_KERNEL_MEMBER

// Earlier names.
template <entry_storage_type T>
using rope_fn [[deprecated("posenc: use dispatch::apply_fn")]] = apply_fn<T>;
template <entry_storage_type T>
using rope_in_place_fn [[deprecated("posenc: use dispatch::apply_in_place_fn")]] =
    apply_in_place_fn<T>;
template <entry_storage_type T>
using rope_qk_fn [[deprecated("posenc: use dispatch::apply_qk_fn")]] = apply_qk_fn<T>;
template <entry_storage_type T>
using encoding_kernels [[deprecated("posenc: use dispatch::additive_kernels")]] =
    additive_kernels<T>;

// One compiled ISA: its name, whether this CPU (and OS) can run it, its multiply-add mode, and
// its kernels. Calling the kernels of an entry with supported == false is undefined (illegal
// instructions).
struct isa_kernels {
  const char* name = "";        // "avx512bf16", "avx512bw", "avx2", "sse4.2", "neon64", "scalar"
  const char* xsimd_arch = "";  // xsimd's name of the architecture ("fma3+avx2"); "none" for scalar
  bool supported = false;
  fma_mode fma = fma_mode::unfused;
  rope_kernels<float> rope_f32;
  rope_kernels<bf16> rope_bf16;
  rope_kernels<f16> rope_f16;
  additive_kernels<float> additive_f32;
  additive_kernels<bf16> additive_bf16;
  additive_kernels<f16> additive_f16;

  template <entry_storage_type T>
  constexpr const rope_kernels<T>& rope() const {
    if constexpr (std::is_same_v<T, float>) {
      return rope_f32;
    } else if constexpr (std::is_same_v<T, bf16>) {
      return rope_bf16;
    } else {
      return rope_f16;
    }
  }

  template <entry_storage_type T>
  constexpr const additive_kernels<T>& additive() const {
    if constexpr (std::is_same_v<T, float>) {
      return additive_f32;
    } else if constexpr (std::is_same_v<T, bf16>) {
      return additive_bf16;
    } else {
      return additive_f16;
    }
  }

  template <entry_storage_type T>
  [[deprecated("posenc: use isa_kernels::additive<T>()")]] constexpr const additive_kernels<T>&
  encodings() const {
    return additive<T>();
  }
};

// Every ISA compiled into the library, best first, "scalar" (always supported) last.
std::span<const isa_kernels> compiled_isas();

// The entry the dispatcher uses (POSENC_ISA or automatic_isa()).
const isa_kernels& active();
// Its name, e.g. "avx512bw".
const char* active_isa();
// The name of the ISA chosen without POSENC_ISA: the first supported entry of compiled_isas().
const char* automatic_isa();

// What became of POSENC_ISA.
enum class isa_request : std::uint8_t {
  none,         // not set (or empty)
  honoured,     // set to a compiled, supported ISA, which is active
  unknown,      // no compiled ISA has that name; automatic_isa() is active
  unsupported,  // compiled but not supported by this CPU; automatic_isa() is active
};
isa_request isa_override();

// The entry points: every kernel of the list, run with active(), for float, bf16 and f16. Same
// arguments, errors and results as the header-only kernels: for RoPE (apply_rope out of place and
// in place, apply_rope_qk; posenc/kernels/rope.hpp) bit for bit rope_reference(...,
// active().fma); for the additive kernels (add_sinusoidal and add_learned out of place and in
// place, add_alibi_bias(slopes, scores, variant, q_offset = 0, k_offset = 0);
// posenc/kernels/sinusoidal.hpp, learned.hpp, alibi.hpp) bit for bit their *_reference kernels
// (one float operation per element, no fused multiply-add on any ISA, so every entry gives the
// same bits).
#define POSENC_KERNEL_ENTRY_POINT(T, group, member, function, reference, params, args) \
  kernel_error function params;
POSENC_DISPATCHED_KERNELS(POSENC_KERNEL_ENTRY_POINT, float, POSENC_DEFAULT_ARGUMENT)
POSENC_DISPATCHED_KERNELS(POSENC_KERNEL_ENTRY_POINT, bf16, POSENC_DEFAULT_ARGUMENT)
POSENC_DISPATCHED_KERNELS(POSENC_KERNEL_ENTRY_POINT, f16, POSENC_DEFAULT_ARGUMENT)
#undef POSENC_KERNEL_ENTRY_POINT

#if POSENC_HAS_FLOAT16
// _Float16 storage: the f16 kernels, on the same memory. A _Float16 and an f16 are both the 2
// bytes of one binary16 (storage.hpp checks size and alignment), and the kernels behind these
// calls are compiled in the library and reached through a function pointer, so the caller's
// compiler cannot move its own _Float16 reads and writes across them. Same results, bit for bit,
// as with f16 tensors holding the same bits.
namespace detail {
inline tensor_view<f16> as_f16(tensor_view<_Float16> v) {
  return {
      reinterpret_cast<f16*>(v.data), v.tokens, v.heads, v.head_dim, v.token_stride, v.head_stride};
}
inline tensor_view<const f16> as_f16(tensor_view<const _Float16> v) {
  return {reinterpret_cast<const f16*>(v.data),
          v.tokens,
          v.heads,
          v.head_dim,
          v.token_stride,
          v.head_stride};
}
inline learned_table_view<f16> as_f16(const learned_table_view<_Float16>& t) {
  return {reinterpret_cast<const f16*>(t.data), t.rows, t.dim, t.offset};
}
inline score_view<f16> as_f16(score_view<_Float16> s) {
  return {reinterpret_cast<f16*>(s.data), s.heads, s.q_len, s.k_len, s.head_stride, s.q_stride};
}
// Every other argument (tables of float, positions, slopes, ...) as it is.
template <class A>
constexpr const A& as_f16(const A& a) {
  return a;
}

// f16 kernel f, called with the _Float16 arguments as f16 ones.
template <class... P>
struct on_f16 {
  kernel_error (*f)(P...);
  template <class... A>
  kernel_error operator()(const A&... a) const {
    return f(as_f16(a)...);
  }
};
template <class... P>
on_f16(kernel_error (*)(P...)) -> on_f16<P...>;
}  // namespace detail

#define POSENC_KERNEL_FLOAT16(T, group, member, function, reference, params, args) \
  inline kernel_error function params {                                            \
    return detail::on_f16{member##_fn<f16>(&function)} args;                       \
  }
POSENC_DISPATCHED_KERNELS(POSENC_KERNEL_FLOAT16, _Float16, POSENC_DEFAULT_ARGUMENT)
#undef POSENC_KERNEL_FLOAT16
#endif

}  // namespace posenc::kernels::dispatch
