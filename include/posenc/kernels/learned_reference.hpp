// Adding learned absolute position embeddings to activations, the scalar reference: out[t, h, :] =
// in[t, h, :] + table row of pos(t), columns h * head_dim .. (h + 1) * head_dim (the table's width
// is heads * head_dim: a [tokens, d_model] embedding is heads = 1, head_dim = d_model). One float
// addition per element (load_float of both, add, store_as<T>), which the SIMD kernel
// (simd/learned.hpp) equals bit for bit. A position without a row (p >= positions) is
// kernel_error::position_out_of_range, checked before anything is written.
#pragma once

#include <posenc/kernels/detail/additive.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/tables/learned.hpp>

namespace posenc::kernels {

namespace detail {
template <class U>
constexpr table_rows<U> rows_of(const learned_table_view<U>& t) {
  return {t.data, t.positions(), t.dim, t.offset};
}
}  // namespace detail

// out = in + table[pos(t)], out of place (in and out must not partly overlap; the same view is in
// place).
template <storage_type T>
kernel_error add_learned_reference(const learned_table_view<T>& table, tensor_view<const T> in,
                                   tensor_view<T> out, token_positions pos) {
  return detail::add_table_reference(detail::rows_of(table), in, out, pos);
}

// In place: x += table[pos(t)].
template <storage_type T>
kernel_error add_learned_reference(const learned_table_view<T>& table, tensor_view<T> x,
                                   token_positions pos) {
  return add_learned_reference<T>(table, tensor_view<const T>(x), x, pos);
}

}  // namespace posenc::kernels
