// Multi-axis RoPE (M-RoPE and 2-D axial, spec/mrope.hpp) on tensors with the architecture the code
// is built for, as posenc/kernels/rope.hpp does for 1-D RoPE: the kernels of simd/mrope.hpp for
// build_arch with xsimd, the scalar reference otherwise; either way the bits of
// multi_axis_rope_reference(..., build_fma_mode). Runtime selection of the ISA: the dispatch
// library (kernels/dispatch.hpp, the same names).
#pragma once

#include <span>

#include <posenc/kernels/error.hpp>
#include <posenc/kernels/mrope_reference.hpp>
#include <posenc/kernels/rope.hpp>
#if POSENC_SIMD
#include <posenc/kernels/simd/mrope.hpp>
#endif

namespace posenc::kernels {

// out = multi-axis RoPE(in): pair i turns by entry (p_s(t), k) of the table, (s, k) = sources[i]
// (tables/mrope.hpp: build_mrope_pair_sources, build_axial_pair_sources), p_s the positions of
// stream s. In place when out is the same view as in. Every argument is checked first
// (check_multi_axis_call); on error nothing is written. The map is a multi_axis_map (checked once,
// by multi_axis_map::try_make) or the span of sources (checked and built on every call: a pass
// over the whole map, the slower convenience).
template <storage_type T>
kernel_error apply_multi_axis_rope(const rope_table& table, const multi_axis_map& map,
                                   tensor_view<const T> in, tensor_view<T> out,
                                   std::span<const token_positions> streams) {
#if POSENC_SIMD
  return simd::apply_multi_axis_rope<build_arch, T>(table, map, in, out, streams);
#else
  return multi_axis_rope_reference<T>(table, map, in, out, streams, fma_mode::unfused);
#endif
}
template <storage_type T>
kernel_error apply_multi_axis_rope(const rope_table& table, std::span<const pair_source> sources,
                                   tensor_view<const T> in, tensor_view<T> out,
                                   std::span<const token_positions> streams) {
#if POSENC_SIMD
  return simd::apply_multi_axis_rope<build_arch, T>(table, sources, in, out, streams);
#else
  return multi_axis_rope_reference<T>(table, sources, in, out, streams, fma_mode::unfused);
#endif
}

// In place.
template <storage_type T>
kernel_error apply_multi_axis_rope(const rope_table& table, const multi_axis_map& map,
                                   tensor_view<T> x, std::span<const token_positions> streams) {
  return apply_multi_axis_rope<T>(table, map, tensor_view<const T>(x), x, streams);
}
template <storage_type T>
kernel_error apply_multi_axis_rope(const rope_table& table, std::span<const pair_source> sources,
                                   tensor_view<T> x, std::span<const token_positions> streams) {
  return apply_multi_axis_rope<T>(table, sources, tensor_view<const T>(x), x, streams);
}

// q and k with the same streams; both checked before either is written.
template <storage_type T>
kernel_error apply_multi_axis_rope_qk(const rope_table& table, const multi_axis_map& map,
                                      tensor_view<const T> q_in, tensor_view<T> q_out,
                                      tensor_view<const T> k_in, tensor_view<T> k_out,
                                      std::span<const token_positions> streams) {
#if POSENC_SIMD
  return simd::apply_multi_axis_rope_qk<build_arch, T>(table, map, q_in, q_out, k_in, k_out,
                                                       streams);
#else
  return multi_axis_rope_reference_qk<T>(table, map, q_in, q_out, k_in, k_out, streams,
                                         fma_mode::unfused);
#endif
}
template <storage_type T>
kernel_error apply_multi_axis_rope_qk(const rope_table& table, std::span<const pair_source> sources,
                                      tensor_view<const T> q_in, tensor_view<T> q_out,
                                      tensor_view<const T> k_in, tensor_view<T> k_out,
                                      std::span<const token_positions> streams) {
#if POSENC_SIMD
  return simd::apply_multi_axis_rope_qk<build_arch, T>(table, sources, q_in, q_out, k_in, k_out,
                                                       streams);
#else
  return multi_axis_rope_reference_qk<T>(table, sources, q_in, q_out, k_in, k_out, streams,
                                         fma_mode::unfused);
#endif
}

}  // namespace posenc::kernels
