// Adding learned absolute position embeddings to activations: out[t, h, :] = in[t, h, :] +
// table row of pos(t), columns h * head_dim .. (h + 1) * head_dim (the table's width is
// heads * head_dim: a [tokens, d_model] embedding is heads = 1, head_dim = d_model). One float
// addition per element (load_float of both, add, store_as<T>): the SIMD kernel equals the scalar
// reference bit for bit. A position without a row (p >= positions) is
// kernel_error::position_out_of_range, checked before anything is written.
//
// Also the shared machinery of the additive kernels (sinusoidal.hpp uses it): argument checks and
// the scalar loop over a row source.
#pragma once

#include <cstddef>
#include <cstdint>

#include <posenc/kernels/error.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/tables/learned.hpp>

#include <posenc/kernels/detail/xsimd_config.hpp>
#ifndef POSENC_ENCODINGS_SIMD
#if defined(POSENC_KERNELS_SIMD)
#define POSENC_ENCODINGS_SIMD 1
#else
#define POSENC_ENCODINGS_SIMD 0
#endif
#endif

namespace posenc::kernels {

namespace detail {
// Rows of an additive table: position p < count reads data + (p + offset) * dim.
template <class U>
struct table_rows {
  const U* data = nullptr;
  std::size_t count = 0;
  std::size_t dim = 0;
  std::size_t offset = 0;
  constexpr const U* row(std::uint64_t p) const {
    return data + (static_cast<std::size_t>(p) + offset) * dim;
  }
};

template <class U>
constexpr table_rows<U> rows_of(const learned_table_view<U>& t) {
  return {t.data, t.positions(), t.dim, t.offset};
}

// Every argument of an additive kernel, in order: views (null data, strides), shapes, overlap
// (exact aliasing = in place is fine), the table (data, width), positions (ids, range).
template <class U, storage_type T>
kernel_error check_add(const table_rows<U>& t, const tensor_view<const T>& in,
                       const tensor_view<T>& out, const token_positions& pos) {
  if (const kernel_error e = check_view(in); e != kernel_error::ok) return e;
  if (const kernel_error e = check_view(out); e != kernel_error::ok) return e;
  if (!same_shape(in, out)) return kernel_error::shape_mismatch;
  const bool same = in.data == out.data && in.token_stride == out.token_stride &&
                    in.head_stride == out.head_stride;
  if (!same && ranges_intersect(in, out)) return kernel_error::overlap;
  std::uint64_t max_pos = 0;
  if (const kernel_error e = check_positions(pos, out.tokens, &max_pos); e != kernel_error::ok)
    return e;
  if (out.empty()) return kernel_error::ok;
  if (t.data == nullptr) return kernel_error::null_data;
  if (out.head_dim > t.dim / out.heads || out.heads * out.head_dim != t.dim)
    return kernel_error::dim_mismatch;
  if (max_pos >= t.count) return kernel_error::position_out_of_range;
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
}  // namespace detail

// Scalar reference: out = in + table[pos(t)], out of place (in and out must not partly overlap;
// the same view is in place).
template <storage_type T>
kernel_error add_learned_reference(const learned_table_view<T>& table, tensor_view<const T> in,
                                   tensor_view<T> out, token_positions pos) {
  const detail::table_rows<T> rows = detail::rows_of(table);
  if (const kernel_error e = detail::check_add(rows, in, out, pos); e != kernel_error::ok) return e;
  detail::add_rows_reference(rows, in, out, pos);
  return kernel_error::ok;
}

// In place: x += table[pos(t)].
template <storage_type T>
kernel_error add_learned_reference(const learned_table_view<T>& table, tensor_view<T> x,
                                   token_positions pos) {
  return add_learned_reference<T>(table, tensor_view<const T>(x), x, pos);
}

namespace simd {
// Defined in kernels/simd/learned.hpp (xsimd), one instantiation per architecture.
template <class Arch, storage_type T>
kernel_error add_learned(const learned_table_view<T>& table, tensor_view<const T> in,
                         tensor_view<T> out, token_positions pos);
template <class Arch, storage_type T>
kernel_error add_learned(const learned_table_view<T>& table, tensor_view<T> x, token_positions pos);
}  // namespace simd

// The build-time architecture's kernel (xsimd::default_arch; the scalar reference without xsimd
// or with POSENC_NO_SIMD). Same results as the reference, bit for bit.
template <storage_type T>
kernel_error add_learned(const learned_table_view<T>& table, tensor_view<const T> in,
                         tensor_view<T> out, token_positions pos) {
#if POSENC_ENCODINGS_SIMD
  if constexpr (xsimd::default_arch::supported())
    return simd::add_learned<xsimd::default_arch, T>(table, in, out, pos);
#endif
  return add_learned_reference<T>(table, in, out, pos);
}

template <storage_type T>
kernel_error add_learned(const learned_table_view<T>& table, tensor_view<T> x,
                         token_positions pos) {
  return add_learned<T>(table, tensor_view<const T>(x), x, pos);
}

}  // namespace posenc::kernels

#if POSENC_ENCODINGS_SIMD
#include <posenc/kernels/simd/learned.hpp>
#endif
