// Runtime dispatch: one binary carries the kernels built for several ISAs (x86-64: AVX-512BW,
// AVX2 + FMA, SSE4.2 and the compiler's baseline; elsewhere the baseline, e.g. NEON on aarch64)
// plus the scalar reference, and picks the best one the CPU supports at run time.
//
// Declarations only: link the compiled library `posenc_kernels` (meson: posenc_kernels_dep,
// docs/kernels.md "Runtime dispatch"). Header-only users who know their target at build time use
// posenc/kernels/rope.hpp instead (the build-time architecture, e.g. for firmware).
//
// Each ISA's RoPE kernels are bit-identical to rope_reference(..., isa.fma): fused multiply-adds
// where the ISA has FMA, separate multiply and add otherwise. So results can differ in the last
// bit between a machine that picks an FMA ISA and one that does not; force one ISA with POSENC_ISA
// (below) when bit-reproducibility across machines matters. The other encodings' kernels
// (add_sinusoidal, add_learned, add_alibi_bias) never fuse: every ISA gives the bits of their
// *_reference kernels.
//
// Choice (made once, at the first call):
//   1. the environment variable POSENC_ISA, if set to the name of a compiled ISA the CPU supports
//      ("avx512bw", "avx2", "sse4.2", "sse2", "neon64", "scalar"; see compiled_isas());
//      an unknown or unsupported name is ignored (isa_override() says why) and 2. applies;
//   2. otherwise the best compiled ISA the CPU supports (xsimd::dispatch, confirmed against the
//      compiler's CPU-feature test, which also checks that the OS saves the wide registers).
#pragma once

#include <concepts>
#include <cstdint>
#include <span>
#include <type_traits>

#include <posenc/kernels/error.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/spec/alibi.hpp>
#include <posenc/tables/learned.hpp>
#include <posenc/tables/sinusoidal.hpp>

namespace posenc::kernels {
// Defined in posenc/kernels/alibi.hpp (with dense_scores), which callers of add_alibi_bias include;
// declared here so that this header stays free of the SIMD kernels.
template <class T>
struct score_view;
}  // namespace posenc::kernels

namespace posenc::kernels::dispatch {

// The storage types with kernels of their own in every entry: float, bf16 and f16. _Float16
// tensors (where POSENC_HAS_FLOAT16) use the f16 kernels (overloads at the end of this header), so
// the entries' layout is the same whichever compiler, with or without _Float16, built the library
// or includes this header.
template <class T>
concept entry_storage_type =
    std::is_same_v<T, float> || std::is_same_v<T, bf16> || std::is_same_v<T, f16>;

// Arguments pass by value into kernels compiled in other translation units (each ISA's): plain
// data only.
static_assert(std::is_trivially_copyable_v<token_positions> &&
              std::is_trivially_copyable_v<rope_table>);

// The RoPE kernels of one ISA for one storage type (signatures of posenc/kernels/rope.hpp).
template <entry_storage_type T>
using rope_fn = kernel_error (*)(const rope_table&, tensor_view<const T>, tensor_view<T>,
                                 token_positions);
template <entry_storage_type T>
using rope_in_place_fn = kernel_error (*)(const rope_table&, tensor_view<T>, token_positions);
template <entry_storage_type T>
using rope_qk_fn = kernel_error (*)(const rope_table&, tensor_view<const T>, tensor_view<T>,
                                    tensor_view<const T>, tensor_view<T>, token_positions);

template <entry_storage_type T>
struct rope_kernels {
  rope_fn<T> apply = nullptr;
  rope_in_place_fn<T> apply_in_place = nullptr;
  rope_qk_fn<T> apply_qk = nullptr;
};

// The kernels of the other encodings of one ISA for one storage type (signatures of
// posenc/kernels/sinusoidal.hpp, learned.hpp and alibi.hpp).
template <entry_storage_type T>
using add_sinusoidal_fn = kernel_error (*)(const sinusoidal_table_view<float>&,
                                           tensor_view<const T>, tensor_view<T>, token_positions);
template <entry_storage_type T>
using add_sinusoidal_in_place_fn = kernel_error (*)(const sinusoidal_table_view<float>&,
                                                    tensor_view<T>, token_positions);
template <entry_storage_type T>
using add_learned_fn = kernel_error (*)(const learned_table_view<T>&, tensor_view<const T>,
                                        tensor_view<T>, token_positions);
template <entry_storage_type T>
using add_learned_in_place_fn = kernel_error (*)(const learned_table_view<T>&, tensor_view<T>,
                                                 token_positions);
template <entry_storage_type T>
using add_alibi_bias_fn = kernel_error (*)(std::span<const float>, score_view<T>, alibi_variant,
                                           std::uint64_t, std::uint64_t);

template <entry_storage_type T>
struct encoding_kernels {
  add_sinusoidal_fn<T> add_sinusoidal = nullptr;
  add_sinusoidal_in_place_fn<T> add_sinusoidal_in_place = nullptr;
  add_learned_fn<T> add_learned = nullptr;
  add_learned_in_place_fn<T> add_learned_in_place = nullptr;
  add_alibi_bias_fn<T> add_alibi_bias = nullptr;
};

// One compiled ISA: its name, whether this CPU (and OS) can run it, its multiply-add mode, and
// its kernels. Calling the kernels of an entry with supported == false is undefined (illegal
// instructions).
struct isa_kernels {
  const char* name = "";        // "avx512bw", "avx2", "sse4.2", "sse2", "neon64", "scalar"
  const char* xsimd_arch = "";  // xsimd's name of the architecture ("fma3+avx2"); "none" for scalar
  bool supported = false;
  fma_mode fma = fma_mode::unfused;
  rope_kernels<float> rope_f32;
  rope_kernels<bf16> rope_bf16;
  rope_kernels<f16> rope_f16;
  encoding_kernels<float> enc_f32;
  encoding_kernels<bf16> enc_bf16;
  encoding_kernels<f16> enc_f16;

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
  constexpr const encoding_kernels<T>& encodings() const {
    if constexpr (std::is_same_v<T, float>) {
      return enc_f32;
    } else if constexpr (std::is_same_v<T, bf16>) {
      return enc_bf16;
    } else {
      return enc_f16;
    }
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

// The kernels of posenc/kernels/rope.hpp, run with active(). Same arguments, errors and results
// (bit for bit rope_reference(..., active().fma)).
kernel_error apply_rope(const rope_table& table, tensor_view<const float> in,
                        tensor_view<float> out, token_positions pos);
kernel_error apply_rope(const rope_table& table, tensor_view<const bf16> in, tensor_view<bf16> out,
                        token_positions pos);
kernel_error apply_rope(const rope_table& table, tensor_view<const f16> in, tensor_view<f16> out,
                        token_positions pos);

kernel_error apply_rope(const rope_table& table, tensor_view<float> x, token_positions pos);
kernel_error apply_rope(const rope_table& table, tensor_view<bf16> x, token_positions pos);
kernel_error apply_rope(const rope_table& table, tensor_view<f16> x, token_positions pos);

kernel_error apply_rope_qk(const rope_table& table, tensor_view<const float> q_in,
                           tensor_view<float> q_out, tensor_view<const float> k_in,
                           tensor_view<float> k_out, token_positions pos);
kernel_error apply_rope_qk(const rope_table& table, tensor_view<const bf16> q_in,
                           tensor_view<bf16> q_out, tensor_view<const bf16> k_in,
                           tensor_view<bf16> k_out, token_positions pos);
kernel_error apply_rope_qk(const rope_table& table, tensor_view<const f16> q_in,
                           tensor_view<f16> q_out, tensor_view<const f16> k_in,
                           tensor_view<f16> k_out, token_positions pos);

// The kernels of posenc/kernels/sinusoidal.hpp, learned.hpp and alibi.hpp, run with active().
// Same arguments, errors and results (bit for bit the *_reference kernels: one float operation
// per element, no fused multiply-add on any ISA, so every entry gives the same bits).
kernel_error add_sinusoidal(const sinusoidal_table_view<float>& table, tensor_view<const float> in,
                            tensor_view<float> out, token_positions pos);
kernel_error add_sinusoidal(const sinusoidal_table_view<float>& table, tensor_view<const bf16> in,
                            tensor_view<bf16> out, token_positions pos);
kernel_error add_sinusoidal(const sinusoidal_table_view<float>& table, tensor_view<const f16> in,
                            tensor_view<f16> out, token_positions pos);

kernel_error add_sinusoidal(const sinusoidal_table_view<float>& table, tensor_view<float> x,
                            token_positions pos);
kernel_error add_sinusoidal(const sinusoidal_table_view<float>& table, tensor_view<bf16> x,
                            token_positions pos);
kernel_error add_sinusoidal(const sinusoidal_table_view<float>& table, tensor_view<f16> x,
                            token_positions pos);

kernel_error add_learned(const learned_table_view<float>& table, tensor_view<const float> in,
                         tensor_view<float> out, token_positions pos);
kernel_error add_learned(const learned_table_view<bf16>& table, tensor_view<const bf16> in,
                         tensor_view<bf16> out, token_positions pos);
kernel_error add_learned(const learned_table_view<f16>& table, tensor_view<const f16> in,
                         tensor_view<f16> out, token_positions pos);

kernel_error add_learned(const learned_table_view<float>& table, tensor_view<float> x,
                         token_positions pos);
kernel_error add_learned(const learned_table_view<bf16>& table, tensor_view<bf16> x,
                         token_positions pos);
kernel_error add_learned(const learned_table_view<f16>& table, tensor_view<f16> x,
                         token_positions pos);

// score_view is complete in posenc/kernels/alibi.hpp.
kernel_error add_alibi_bias(std::span<const float> slopes, score_view<float> scores,
                            alibi_variant variant, std::uint64_t q_offset = 0,
                            std::uint64_t k_offset = 0);
kernel_error add_alibi_bias(std::span<const float> slopes, score_view<bf16> scores,
                            alibi_variant variant, std::uint64_t q_offset = 0,
                            std::uint64_t k_offset = 0);
kernel_error add_alibi_bias(std::span<const float> slopes, score_view<f16> scores,
                            alibi_variant variant, std::uint64_t q_offset = 0,
                            std::uint64_t k_offset = 0);

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
// U, as a type that depends on S (so that it need not be complete before S is known).
template <class S, class U>
struct dependent_type {
  using type = U;
};
}  // namespace detail

inline kernel_error apply_rope(const rope_table& table, tensor_view<const _Float16> in,
                               tensor_view<_Float16> out, token_positions pos) {
  return apply_rope(table, detail::as_f16(in), detail::as_f16(out), pos);
}
inline kernel_error apply_rope(const rope_table& table, tensor_view<_Float16> x,
                               token_positions pos) {
  return apply_rope(table, detail::as_f16(x), pos);
}
inline kernel_error apply_rope_qk(const rope_table& table, tensor_view<const _Float16> q_in,
                                  tensor_view<_Float16> q_out, tensor_view<const _Float16> k_in,
                                  tensor_view<_Float16> k_out, token_positions pos) {
  return apply_rope_qk(table, detail::as_f16(q_in), detail::as_f16(q_out), detail::as_f16(k_in),
                       detail::as_f16(k_out), pos);
}
inline kernel_error add_sinusoidal(const sinusoidal_table_view<float>& table,
                                   tensor_view<const _Float16> in, tensor_view<_Float16> out,
                                   token_positions pos) {
  return add_sinusoidal(table, detail::as_f16(in), detail::as_f16(out), pos);
}
inline kernel_error add_sinusoidal(const sinusoidal_table_view<float>& table,
                                   tensor_view<_Float16> x, token_positions pos) {
  return add_sinusoidal(table, detail::as_f16(x), pos);
}
inline kernel_error add_learned(const learned_table_view<_Float16>& table,
                                tensor_view<const _Float16> in, tensor_view<_Float16> out,
                                token_positions pos) {
  return add_learned(detail::as_f16(table), detail::as_f16(in), detail::as_f16(out), pos);
}
inline kernel_error add_learned(const learned_table_view<_Float16>& table, tensor_view<_Float16> x,
                                token_positions pos) {
  return add_learned(detail::as_f16(table), detail::as_f16(x), pos);
}
// A template only so that score_view (complete in posenc/kernels/alibi.hpp, which the caller has
// included to build one) is needed where it is called rather than here.
template <std::same_as<score_view<_Float16>> S>
kernel_error add_alibi_bias(std::span<const float> slopes, S scores, alibi_variant variant,
                            std::uint64_t q_offset = 0, std::uint64_t k_offset = 0) {
  typename detail::dependent_type<S, score_view<f16>>::type s;
  s.data = reinterpret_cast<f16*>(scores.data);
  s.heads = scores.heads;
  s.q_len = scores.q_len;
  s.k_len = scores.k_len;
  s.head_stride = scores.head_stride;
  s.q_stride = scores.q_stride;
  return add_alibi_bias(slopes, s, variant, q_offset, k_offset);
}
#endif

}  // namespace posenc::kernels::dispatch
