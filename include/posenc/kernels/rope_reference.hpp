// The scalar reference of the RoPE kernels: the definition every SIMD kernel is tested against.
//
// For each token t at position p = pos.at(t), each head, and each pair i of channels (a, b) =
// pair_channels(layout, R, i) (interleaved: (2i, 2i + 1); half: (i, i + R/2)), with c = cos_i(p),
// s = sin_i(p) from the table:
//   y_a = x_a * c - x_b * s,   y_b = x_b * c + x_a * s          (RoFormer eq. 34; HF rotate_half)
// computed in float from the widened inputs and rounded once to the storage type. Channels >= R
// are copied unchanged (partial rotary). The operation order is fixed so that SIMD kernels can be
// bit-identical to it:
//   unfused: y_a = (x_a * c) + (x_b * -s),       y_b = (x_b * c) + (x_a * s)   (each product
//   rounded) fused:   y_a = fma(x_a, c, x_b * -s),        y_b = fma(x_b, c, x_a * s)
// With an expanded table, channel ch reads its own entries: y_ch = x_ch * cos[ch] + x_ch' * sin[ch]
// (ch' the other channel of the pair), in the same order; a well-formed row has cos[a] == cos[b]
// and sin[a] == -sin[b], so both formats give the same bits.
// A kernel built for an ISA with FMA uses the fused order, one without it the unfused order.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <posenc/kernels/error.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>

namespace posenc::kernels {

enum class fma_mode : std::uint8_t { unfused, fused };

// Pairs per on-the-fly chunk (the stack buffers of a kernel hold this many cos and sin values).
inline constexpr std::size_t on_the_fly_chunk = 64;

// Every check of an out-of-place (or, with in == out, in-place) RoPE call, in order; nothing is
// written by a kernel unless this returns ok.
template <storage_type T>
constexpr kernel_error check_rope_call(const rope_table& table, const tensor_view<const T>& in,
                                       const tensor_view<T>& out, const token_positions& pos) {
  if (const kernel_error e = check_table(table); e != kernel_error::ok) return e;
  if (!same_shape(in, out)) return kernel_error::shape_mismatch;
  if (const kernel_error e = check_view(in); e != kernel_error::ok) return e;
  if (const kernel_error e = check_view(out); e != kernel_error::ok) return e;
  if (!in.empty() && table.rotary_dim > in.head_dim) return kernel_error::rotary_dim_mismatch;
  std::uint64_t max_pos = 0;
  if (const kernel_error e = check_positions(pos, in.tokens, &max_pos); e != kernel_error::ok)
    return e;
  if (!in.empty() && max_pos >= table.positions && table.on_the_fly == nullptr)
    return kernel_error::position_out_of_range;
  if (!std::is_constant_evaluated()) {
    const bool same_view =
        static_cast<const void*>(in.data) == static_cast<const void*>(out.data) &&
        in.token_stride == out.token_stride && in.head_stride == out.head_stride;
    if (!same_view && ranges_intersect(in, out)) return kernel_error::overlap;
  }
  return kernel_error::ok;
}

// q and k in one call: both checked before either is written. q and k must not share elements;
// that is not checked, because the q and k slices of a fused qkv buffer interleave in memory
// without sharing any element, which an address-range test cannot tell apart from sharing.
template <storage_type T>
constexpr kernel_error check_rope_qk_call(const rope_table& table, const tensor_view<const T>& q_in,
                                          const tensor_view<T>& q_out,
                                          const tensor_view<const T>& k_in,
                                          const tensor_view<T>& k_out, const token_positions& pos) {
  if (const kernel_error e = check_rope_call(table, q_in, q_out, pos); e != kernel_error::ok)
    return e;
  if (const kernel_error e = check_rope_call(table, k_in, k_out, pos); e != kernel_error::ok)
    return e;
  if (q_in.tokens != k_in.tokens) return kernel_error::shape_mismatch;
  return kernel_error::ok;
}

namespace detail {

inline float rope_mul_add(float x, float c, float y_times_s, fma_mode mode) {
  return mode == fma_mode::fused ? std::fma(x, c, y_times_s) : x * c + y_times_s;
}

// One head vector: pairs [i0, i1) with cos/sin pointers (compact: indexed by i - i0; expanded:
// indexed by channel), inputs already widened into xin (head_dim floats).
template <storage_type T>
void rope_reference_pairs(const rope_table& t, const float* cs, const float* sn, std::size_t i0,
                          std::size_t i1, const T* x, T* y, fma_mode mode) {
  for (std::size_t i = i0; i < i1; ++i) {
    const channel_pair ch = pair_channels(t.layout, t.rotary_dim, static_cast<std::uint32_t>(i));
    const std::size_t a = ch.first, b = ch.second;
    float ca, cb, sa, sb;
    if (t.format == rope_table_format::compact) {
      ca = cb = cs[i - i0];
      sb = sn[i - i0];
      sa = -sb;
    } else {
      // Channel by channel, as the format is defined (cos[a] == cos[b] in a well-formed row).
      ca = cs[a];
      cb = cs[b];
      sa = sn[a];
      sb = sn[b];
    }
    const float xa = load_float(x[a]), xb = load_float(x[b]);
    const float ya = rope_mul_add(xa, ca, xb * sa, mode);
    const float yb = rope_mul_add(xb, cb, xa * sb, mode);
    y[a] = store_as<T>(ya);
    y[b] = store_as<T>(yb);
  }
}

// One chunk of a token's row for rope_reference_rows: the cos/sin of pairs [i0, end) (compact:
// indexed by pair - i0; expanded: the row, indexed by channel).
struct reference_row {
  const float* cos;
  const float* sin;
  std::size_t end;
  bool compact;
};

// The token loop of the scalar references (1-D and multi-axis): row_of(t, i0, cbuf, sbuf) gives
// the chunk of token t's row from pair i0 (filling the stack buffers, on_the_fly_chunk floats
// each, when the row is computed), which turns every head; channels >= R are copied.
template <storage_type T, class RowOf>
void rope_reference_rows(const rope_table& table, const tensor_view<const T>& in,
                         const tensor_view<T>& out, fma_mode mode, RowOf row_of) {
  const std::size_t R = table.rotary_dim, h = R / 2;
  float cbuf[on_the_fly_chunk], sbuf[on_the_fly_chunk];
  for (std::size_t t = 0; t < in.tokens; ++t) {
    for (std::size_t i0 = 0; i0 < h;) {
      const reference_row r = row_of(t, i0, cbuf, sbuf);
      rope_table view = table;
      if (r.compact) view.format = rope_table_format::compact;
      for (std::size_t hd = 0; hd < in.heads; ++hd)
        rope_reference_pairs<T>(view, r.cos, r.sin, i0, r.end, in.at(t, hd), out.at(t, hd), mode);
      i0 = r.end;
    }
    if (R < in.head_dim) {
      for (std::size_t hd = 0; hd < in.heads; ++hd) {
        const T* x = in.at(t, hd);
        T* y = out.at(t, hd);
        if (static_cast<const void*>(x) != static_cast<const void*>(y))
          for (std::size_t ch = R; ch < in.head_dim; ++ch) y[ch] = x[ch];
      }
    }
  }
}

}  // namespace detail

// The scalar reference: out = RoPE(in). In place when out is the same view as in.
template <storage_type T>
kernel_error rope_reference(const rope_table& table, tensor_view<const T> in, tensor_view<T> out,
                            token_positions pos, fma_mode mode = fma_mode::unfused) {
  if (const kernel_error e = check_rope_call(table, in, out, pos); e != kernel_error::ok) return e;
  if (in.empty()) return kernel_error::ok;
  const std::size_t h = table.rotary_dim / 2, row = table.row_size();
  detail::rope_reference_rows<T>(
      table, in, out, mode,
      [&](std::size_t t, std::size_t i0, float* cbuf, float* sbuf) -> detail::reference_row {
        const std::uint64_t p = pos.at(t);
        if (p < table.positions)
          return {table.cos + static_cast<std::size_t>(p) * row,
                  table.sin + static_cast<std::size_t>(p) * row, h,
                  table.format == rope_table_format::compact};
        const std::size_t i1 = h - i0 < on_the_fly_chunk ? h : i0 + on_the_fly_chunk;
        detail::on_the_fly_row(table, p, i0, i1, cbuf, sbuf);
        return {cbuf, sbuf, i1, true};
      });
  return kernel_error::ok;
}

// In place.
template <storage_type T>
kernel_error rope_reference(const rope_table& table, tensor_view<T> x, token_positions pos,
                            fma_mode mode = fma_mode::unfused) {
  return rope_reference<T>(table, tensor_view<const T>(x), x, pos, mode);
}

// q and k with one position list.
template <storage_type T>
kernel_error rope_reference_qk(const rope_table& table, tensor_view<const T> q_in,
                               tensor_view<T> q_out, tensor_view<const T> k_in,
                               tensor_view<T> k_out, token_positions pos,
                               fma_mode mode = fma_mode::unfused) {
  if (const kernel_error e = check_rope_qk_call(table, q_in, q_out, k_in, k_out, pos);
      e != kernel_error::ok)
    return e;
  static_cast<void>(rope_reference<T>(table, q_in, q_out, pos, mode));
  return rope_reference<T>(table, k_in, k_out, pos, mode);
}

}  // namespace posenc::kernels
