// What the kernels that add a table row to each token (sinusoidal, learned) share: the rows of a
// table, the argument checks in their order, and the scalar loop. One float addition per element
// (load_float of both, add, store_as<T>), which the SIMD loop (detail/additive_simd.hpp) does
// lane by lane, so both give the same bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include <posenc/kernels/error.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>

namespace posenc::kernels::detail {

// The rows of an additive table: position p < positions reads data + (p + offset) * dim (the
// stored rows are positions + offset; a learned table's first `offset` rows belong to no
// position).
template <class U>
struct table_rows {
  const U* data = nullptr;
  std::size_t positions = 0;
  std::size_t dim = 0;
  std::size_t offset = 0;
  constexpr const U* row(std::uint64_t p) const {
    return data + (static_cast<std::size_t>(p) + offset) * dim;
  }
};

// The arguments every kernel that reads a row per token's position shares, in order: views (null
// data, strides), shapes, overlap (exact aliasing = in place is fine), positions (ids; the
// largest in *max_pos).
template <storage_type T>
kernel_error check_rows_call(const tensor_view<const T>& in, const tensor_view<T>& out,
                             const token_positions& pos, std::uint64_t* max_pos) {
  if (const kernel_error e = check_view(in); e != kernel_error::ok) return e;
  if (const kernel_error e = check_view(out); e != kernel_error::ok) return e;
  if (!same_shape(in, out)) return kernel_error::shape_mismatch;
  const bool same = in.data == out.data && in.token_stride == out.token_stride &&
                    in.head_stride == out.head_stride;
  if (!same && ranges_intersect(in, out)) return kernel_error::overlap;
  return check_positions(pos, out.tokens, max_pos);
}

// Every argument of an additive kernel, in order: check_rows_call's, then the table (data,
// width) and the positions' range.
template <class U, storage_type T>
kernel_error check_add(const table_rows<U>& t, const tensor_view<const T>& in,
                       const tensor_view<T>& out, const token_positions& pos) {
  std::uint64_t max_pos = 0;
  if (const kernel_error e = check_rows_call(in, out, pos, &max_pos); e != kernel_error::ok)
    return e;
  if (out.empty()) return kernel_error::ok;
  if (t.data == nullptr) return kernel_error::null_data;
  if (out.head_dim > t.dim / out.heads || out.heads * out.head_dim != t.dim)
    return kernel_error::dim_mismatch;
  if (max_pos >= t.positions) return kernel_error::position_out_of_range;
  return kernel_error::ok;
}

// The scalar loop (arguments checked).
template <class U, storage_type T>
void add_rows_reference(const table_rows<U>& t, const tensor_view<const T>& in,
                        const tensor_view<T>& out, const token_positions& pos) {
  for (std::size_t tok = 0; tok < out.tokens; ++tok) {
    const U* row = t.row(pos.at(tok));
    for (std::size_t h = 0; h < out.heads; ++h) {
      const T* src = in.at(tok, h);
      T* dst = out.at(tok, h);
      const U* r = row + h * out.head_dim;
      for (std::size_t c = 0; c < out.head_dim; ++c)
        dst[c] = store_as<T>(load_float(src[c]) + load_float(r[c]));
    }
  }
}

// The scalar reference of an additive kernel: out = in + rows[pos(t)], every argument checked
// first and nothing written on error.
template <class U, storage_type T>
kernel_error add_table_reference(const table_rows<U>& t, const tensor_view<const T>& in,
                                 const tensor_view<T>& out, const token_positions& pos) {
  if (const kernel_error e = check_add(t, in, out, pos); e != kernel_error::ok) return e;
  add_rows_reference(t, in, out, pos);
  return kernel_error::ok;
}

}  // namespace posenc::kernels::detail
