// Adding a sinusoidal position table to activations: out[t, h, :] = in[t, h, :] + PE[pos(t),
// h * head_dim .. (h + 1) * head_dim) (the table's width d is heads * head_dim; an embedding
// [tokens, d_model] is heads = 1). The table is float (tables/sinusoidal.hpp, correctly rounded);
// one float addition per element, so the SIMD kernel equals the scalar reference bit for bit.
// fairseq's positions start at padding_idx + 1 (make_positions): pass token_positions::from(
// padding_idx + 1) for a batch without padding, or explicit ids. A position at or past the
// table's end is kernel_error::position_out_of_range (build a longer table; nothing is written).
#pragma once

#include <cstddef>
#include <cstdint>

#include <posenc/kernels/error.hpp>
#include <posenc/kernels/learned.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/tables/sinusoidal.hpp>

namespace posenc::kernels {

namespace detail {
constexpr table_rows<float> rows_of(const sinusoidal_table_view<float>& t) {
  return {t.data, t.positions, t.dim, 0};
}
}  // namespace detail

// Scalar reference, out of place (the same view for in and out is in place).
template <storage_type T>
kernel_error add_sinusoidal_reference(const sinusoidal_table_view<float>& table,
                                      tensor_view<const T> in, tensor_view<T> out,
                                      token_positions pos) {
  const detail::table_rows<float> rows = detail::rows_of(table);
  if (const kernel_error e = detail::check_add(rows, in, out, pos); e != kernel_error::ok) return e;
  detail::add_rows_reference(rows, in, out, pos);
  return kernel_error::ok;
}

template <storage_type T>
kernel_error add_sinusoidal_reference(const sinusoidal_table_view<float>& table, tensor_view<T> x,
                                      token_positions pos) {
  return add_sinusoidal_reference<T>(table, tensor_view<const T>(x), x, pos);
}

namespace simd {
// Defined in kernels/simd/sinusoidal.hpp (xsimd), one instantiation per architecture.
template <class Arch, storage_type T>
kernel_error add_sinusoidal(const sinusoidal_table_view<float>& table, tensor_view<const T> in,
                            tensor_view<T> out, token_positions pos);
template <class Arch, storage_type T>
kernel_error add_sinusoidal(const sinusoidal_table_view<float>& table, tensor_view<T> x,
                            token_positions pos);
}  // namespace simd

// The build-time architecture's kernel (see kernels/learned.hpp).
template <storage_type T>
kernel_error add_sinusoidal(const sinusoidal_table_view<float>& table, tensor_view<const T> in,
                            tensor_view<T> out, token_positions pos) {
#if POSENC_ENCODINGS_SIMD
  if constexpr (xsimd::default_arch::supported())
    return simd::add_sinusoidal<xsimd::default_arch, T>(table, in, out, pos);
#endif
  return add_sinusoidal_reference<T>(table, in, out, pos);
}

template <storage_type T>
kernel_error add_sinusoidal(const sinusoidal_table_view<float>& table, tensor_view<T> x,
                            token_positions pos) {
  return add_sinusoidal<T>(table, tensor_view<const T>(x), x, pos);
}

}  // namespace posenc::kernels

#if POSENC_ENCODINGS_SIMD
#include <posenc/kernels/simd/sinusoidal.hpp>
#endif
