// Adding a sinusoidal position table to activations, the scalar reference: out[t, h, :] =
// in[t, h, :] + PE[pos(t), h * head_dim .. (h + 1) * head_dim) (the table's width d is
// heads * head_dim; an embedding [tokens, d_model] is heads = 1). The table is float
// (tables/sinusoidal.hpp, correctly rounded); one float addition per element, which the SIMD
// kernel (simd/sinusoidal.hpp) equals bit for bit. fairseq's positions start at padding_idx + 1
// (make_positions): pass token_positions::from(padding_idx + 1) for a batch without padding, or
// explicit ids. A position at or past the table's end is kernel_error::position_out_of_range
// (build a longer table; nothing is written).
#pragma once

#include <posenc/kernels/detail/additive.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/tables/sinusoidal.hpp>

namespace posenc::kernels {

namespace detail {
constexpr table_rows<float> rows_of(const sinusoidal_table_view<float>& t) {
  return {t.data, t.positions, t.dim, 0};
}
}  // namespace detail

// Out of place (the same view for in and out is in place).
template <storage_type T>
kernel_error add_sinusoidal_reference(const sinusoidal_table_view<float>& table,
                                      tensor_view<const T> in, tensor_view<T> out,
                                      token_positions pos) {
  return detail::add_table_reference(detail::rows_of(table), in, out, pos);
}

// In place.
template <storage_type T>
kernel_error add_sinusoidal_reference(const sinusoidal_table_view<float>& table, tensor_view<T> x,
                                      token_positions pos) {
  return add_sinusoidal_reference<T>(table, tensor_view<const T>(x), x, pos);
}

}  // namespace posenc::kernels
