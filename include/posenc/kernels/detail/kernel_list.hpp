// The kernels of the runtime-dispatch library posenc_kernels, one entry each: adding a dispatched
// kernel is adding its entry here (docs/design.md, "How to add a kernel"). From an entry follow
// - the type <member>_fn<T> of its function pointer and that member of rope_kernels<T> or
//   additive_kernels<T>, the groups of an ISA entry (isa_kernels, kernels/dispatch.hpp);
// - its entry points in posenc::kernels::dispatch: one per storage type (float, bf16, f16),
//   exported by the library, and an inline _Float16 one where POSENC_HAS_FLOAT16
//   (kernels/dispatch.hpp, src/kernels/dispatch.cpp);
// - its pointer in each ISA's entry, &simd::<function><Arch, T>, and in the scalar entry, a
//   function calling <reference><T>(args) (src/kernels/isa_entry.hpp).
//
// A list is applied as POSENC_<GROUP>_KERNELS(X, T, D):
//   X  a macro of one entry: X(T, group, member, function, reference, params, args)
//   T  the storage type the parameters are written for: float, bf16, f16, _Float16, or the name of
//      a template parameter
//   D  applied to each default argument: POSENC_DEFAULT_ARGUMENT (D(0) is `= 0`, for
//      declarations) or POSENC_NO_DEFAULT_ARGUMENT (nothing: definitions, function types)
// and an entry's columns are
//   group      rope or additive: the group of isa_kernels that holds the member (isa.rope<T>(),
//              isa.additive<T>()); each group has its own list
//   member     the function pointer's name in the group
//   function   the entry point's name in posenc::kernels::dispatch, which is also the SIMD
//              kernel's: simd::<function><Arch, T> (posenc/kernels/simd/<name>.hpp)
//   reference  the scalar reference, called as <reference><T>(args) (RoPE: with rope_reference's
//              default fma_mode::unfused, the scalar entry's mode); its header is included above
//   params     the parameter list with names, the signature of the SIMD kernel
//   args       the parameter names, in order
// Views (tensor_view, score_view) and token_positions are taken by const reference, spans and
// scalars by value. The x86-64 SysV ABI passes an aggregate over 16 bytes in memory: by value, a
// caller that has just built its views field by field copies them into the argument area with
// 16-byte moves, whose loads wait for the 8-byte stores (store forwarding fails), and the same
// happens again where the callee copies them. Measured on AMD Zen 5, a [1, 32, 128] f16 decode
// call through the dispatch library: 204 ns by value, 181 ns by reference.
//
// The members are laid out in list order, so a new entry changes the layout of isa_kernels: an ABI
// change (a new minor version while the version is 0.x; src/kernels/meson.build).
#pragma once

// The scalar reference of each kernel below, which also declares the types of its parameters.
#include <posenc/kernels/alibi_reference.hpp>
#include <posenc/kernels/learned_reference.hpp>
#include <posenc/kernels/mrope_reference.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/kernels/sinusoidal_reference.hpp>
#include <posenc/kernels/t5_reference.hpp>
#include <posenc/kernels/temperature_reference.hpp>

#define POSENC_DEFAULT_ARGUMENT(value) = value
#define POSENC_NO_DEFAULT_ARGUMENT(value)

// posenc/kernels/rope.hpp (rope_reference.hpp) and mrope.hpp (mrope_reference.hpp).
#define POSENC_ROPE_KERNELS(X, T, D)                                                             \
  X(T, rope, apply, apply_rope, rope_reference,                                                  \
    (const rope_table& table, const tensor_view<const T>& in, const tensor_view<T>& out,         \
     const token_positions& pos),                                                                \
    (table, in, out, pos))                                                                       \
  X(T, rope, apply_in_place, apply_rope, rope_reference,                                         \
    (const rope_table& table, const tensor_view<T>& x, const token_positions& pos),              \
    (table, x, pos))                                                                             \
  X(T, rope, apply_qk, apply_rope_qk, rope_reference_qk,                                         \
    (const rope_table& table, const tensor_view<const T>& q_in, const tensor_view<T>& q_out,     \
     const tensor_view<const T>& k_in, const tensor_view<T>& k_out, const token_positions& pos), \
    (table, q_in, q_out, k_in, k_out, pos))                                                      \
  X(T, rope, apply_multi_axis, apply_multi_axis_rope, multi_axis_rope_reference,                 \
    (const rope_table& table, std::span<const pair_source> sources,                              \
     const tensor_view<const T>& in, const tensor_view<T>& out,                                  \
     std::span<const token_positions> streams),                                                  \
    (table, sources, in, out, streams))                                                          \
  X(T, rope, apply_multi_axis_in_place, apply_multi_axis_rope, multi_axis_rope_reference,        \
    (const rope_table& table, std::span<const pair_source> sources, const tensor_view<T>& x,     \
     std::span<const token_positions> streams),                                                  \
    (table, sources, x, streams))                                                                \
  X(T, rope, apply_multi_axis_qk, apply_multi_axis_rope_qk, multi_axis_rope_reference_qk,        \
    (const rope_table& table, std::span<const pair_source> sources,                              \
     const tensor_view<const T>& q_in, const tensor_view<T>& q_out,                              \
     const tensor_view<const T>& k_in, const tensor_view<T>& k_out,                              \
     std::span<const token_positions> streams),                                                  \
    (table, sources, q_in, q_out, k_in, k_out, streams))                                         \
  X(T, rope, apply_multi_axis_map, apply_multi_axis_rope, multi_axis_rope_reference,             \
    (const rope_table& table, const multi_axis_map& map, const tensor_view<const T>& in,         \
     const tensor_view<T>& out, std::span<const token_positions> streams),                       \
    (table, map, in, out, streams))                                                              \
  X(T, rope, apply_multi_axis_map_in_place, apply_multi_axis_rope, multi_axis_rope_reference,    \
    (const rope_table& table, const multi_axis_map& map, const tensor_view<T>& x,                \
     std::span<const token_positions> streams),                                                  \
    (table, map, x, streams))                                                                    \
  X(T, rope, apply_multi_axis_map_qk, apply_multi_axis_rope_qk, multi_axis_rope_reference_qk,    \
    (const rope_table& table, const multi_axis_map& map, const tensor_view<const T>& q_in,       \
     const tensor_view<T>& q_out, const tensor_view<const T>& k_in, const tensor_view<T>& k_out, \
     std::span<const token_positions> streams),                                                  \
    (table, map, q_in, q_out, k_in, k_out, streams))

// posenc/kernels/sinusoidal.hpp, learned.hpp, alibi.hpp and t5.hpp (their _reference.hpp), and
// the query scale of an attention temperature (temperature.hpp), which is no addition but, like
// them, one float operation per element that never fuses.
#define POSENC_ADDITIVE_KERNELS(X, T, D)                                                       \
  X(T, additive, add_sinusoidal, add_sinusoidal, add_sinusoidal_reference,                     \
    (const sinusoidal_table_view<float>& table, const tensor_view<const T>& in,                \
     const tensor_view<T>& out, const token_positions& pos),                                   \
    (table, in, out, pos))                                                                     \
  X(T, additive, add_sinusoidal_in_place, add_sinusoidal, add_sinusoidal_reference,            \
    (const sinusoidal_table_view<float>& table, const tensor_view<T>& x,                       \
     const token_positions& pos),                                                              \
    (table, x, pos))                                                                           \
  X(T, additive, add_learned, add_learned, add_learned_reference,                              \
    (const learned_table_view<T>& table, const tensor_view<const T>& in,                       \
     const tensor_view<T>& out, const token_positions& pos),                                   \
    (table, in, out, pos))                                                                     \
  X(T, additive, add_learned_in_place, add_learned, add_learned_reference,                     \
    (const learned_table_view<T>& table, const tensor_view<T>& x, const token_positions& pos), \
    (table, x, pos))                                                                           \
  X(T, additive, add_alibi_bias, add_alibi_bias, add_alibi_bias_reference,                     \
    (std::span<const float> slopes, const score_view<T>& scores, alibi_variant variant,        \
     std::uint64_t q_offset D(0), std::uint64_t k_offset D(0)),                                \
    (slopes, scores, variant, q_offset, k_offset))                                             \
  X(T, additive, add_t5_bias, add_t5_bias, add_t5_bias_reference,                              \
    (const t5_bias_view& bias, const score_view<T>& scores, std::uint64_t q_offset D(0),       \
     std::uint64_t k_offset D(0)),                                                             \
    (bias, scores, q_offset, k_offset))                                                        \
  X(T, additive, apply_query_scale, apply_query_scale, apply_query_scale_reference,            \
    (std::span<const float> scales, const tensor_view<const T>& in, const tensor_view<T>& out, \
     const token_positions& pos),                                                              \
    (scales, in, out, pos))                                                                    \
  X(T, additive, apply_query_scale_in_place, apply_query_scale, apply_query_scale_reference,   \
    (std::span<const float> scales, const tensor_view<T>& x, const token_positions& pos),      \
    (scales, x, pos))

// Every dispatched kernel.
#define POSENC_DISPATCHED_KERNELS(X, T, D) \
  POSENC_ROPE_KERNELS(X, T, D) POSENC_ADDITIVE_KERNELS(X, T, D)
