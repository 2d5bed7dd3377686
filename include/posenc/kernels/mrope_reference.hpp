// The scalar reference of the multi-axis RoPE kernels (M-RoPE and 2-D axial, spec/mrope.hpp).
//
// The table is the 1-D cache of the configuration's rope part (a rope_table, compact or expanded,
// optionally with on-the-fly rows); the pair map is one pair_source per pair (tables/mrope.hpp:
// mrope_pair_sources_v, build_mrope_pair_sources, and the axial forms); the positions are one
// token_positions per stream (M-RoPE: temporal, height, width; axial: height, width), each an
// offset or one id per token. For token t and pair i with source (s, k), channels (a, b) =
// pair_channels(layout, R, i) turn by entry (p_s(t), k) of the table:
//   y_a = x_a * c - x_b * sn,   y_b = x_b * c + x_a * sn
// in the operation order of rope_reference (kernels/rope_reference.hpp), so a map with one stream
// and k = i gives rope_reference's bits. Channels >= R are copied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <posenc/kernels/error.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/spec/mrope.hpp>
#include <posenc/spec/rope.hpp>

namespace posenc::kernels {

// Every check of a multi-axis call, in order; nothing is written unless this returns ok:
// the checks of check_rope_call for each stream (table, shapes, strides, rotary_dim, a stream of
// ids whose length is not the token count: shape_mismatch, negative ids, positions past the table,
// overlap), then the map: no stream, or a map that is not one source per pair naming a given
// stream and a pair's frequency: invalid_argument.
template <storage_type T>
constexpr kernel_error check_multi_axis_call(const rope_table& table,
                                             std::span<const pair_source> sources,
                                             const tensor_view<const T>& in,
                                             const tensor_view<T>& out,
                                             std::span<const token_positions> streams) {
  if (streams.empty()) return kernel_error::invalid_argument;
  for (const token_positions& pos : streams)
    if (const kernel_error e = check_rope_call(table, in, out, pos); e != kernel_error::ok)
      return e;
  if (sources.size() != table.rotary_dim / 2) return kernel_error::invalid_argument;
  for (const pair_source& s : sources)
    if (s.stream >= streams.size() || s.inv_freq_index >= table.rotary_dim / 2)
      return kernel_error::invalid_argument;
  return kernel_error::ok;
}

namespace detail {
// cos and sin of frequency k at position p from the table (compact, expanded or on the fly).
inline void multi_axis_entry(const rope_table& t, std::uint64_t p, std::uint32_t k, float& c,
                             float& s) {
  if (p >= t.positions) {
    on_the_fly_row(t, p, k, k + 1, &c, &s);
    return;
  }
  const std::size_t row = static_cast<std::size_t>(p) * t.row_size();
  if (t.format == rope_table_format::compact) {
    c = t.cos[row + k];
    s = t.sin[row + k];
  } else {
    // The expanded row holds pair k's cos at both of its channels and its sin, positive, at the
    // second.
    const channel_pair ch = pair_channels(t.layout, t.rotary_dim, k);
    c = t.cos[row + ch.first];
    s = t.sin[row + ch.second];
  }
}
}  // namespace detail

// out = multi-axis RoPE(in). In place when out is the same view as in.
template <storage_type T>
kernel_error multi_axis_rope_reference(const rope_table& table,
                                       std::span<const pair_source> sources,
                                       tensor_view<const T> in, tensor_view<T> out,
                                       std::span<const token_positions> streams,
                                       fma_mode mode = fma_mode::unfused) {
  if (const kernel_error e = check_multi_axis_call(table, sources, in, out, streams);
      e != kernel_error::ok)
    return e;
  if (in.empty()) return kernel_error::ok;
  const std::size_t R = table.rotary_dim, h = R / 2;
  for (std::size_t t = 0; t < in.tokens; ++t) {
    for (std::size_t i = 0; i < h; ++i) {
      const pair_source src = sources[i];
      float c = 0.0f, s = 0.0f;
      detail::multi_axis_entry(table, streams[src.stream].at(t), src.inv_freq_index, c, s);
      const channel_pair ch =
          pair_channels(table.layout, table.rotary_dim, static_cast<std::uint32_t>(i));
      for (std::size_t hd = 0; hd < in.heads; ++hd) {
        const T* x = in.at(t, hd);
        T* y = out.at(t, hd);
        const float xa = load_float(x[ch.first]), xb = load_float(x[ch.second]);
        const float ya = detail::rope_mul_add(xa, c, xb * -s, mode);
        const float yb = detail::rope_mul_add(xb, c, xa * s, mode);
        y[ch.first] = store_as<T>(ya);
        y[ch.second] = store_as<T>(yb);
      }
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
  return kernel_error::ok;
}

// In place.
template <storage_type T>
kernel_error multi_axis_rope_reference(const rope_table& table,
                                       std::span<const pair_source> sources, tensor_view<T> x,
                                       std::span<const token_positions> streams,
                                       fma_mode mode = fma_mode::unfused) {
  return multi_axis_rope_reference<T>(table, sources, tensor_view<const T>(x), x, streams, mode);
}

// q and k with the same streams: both checked before either is written.
template <storage_type T>
kernel_error multi_axis_rope_reference_qk(const rope_table& table,
                                          std::span<const pair_source> sources,
                                          tensor_view<const T> q_in, tensor_view<T> q_out,
                                          tensor_view<const T> k_in, tensor_view<T> k_out,
                                          std::span<const token_positions> streams,
                                          fma_mode mode = fma_mode::unfused) {
  if (const kernel_error e = check_multi_axis_call(table, sources, q_in, q_out, streams);
      e != kernel_error::ok)
    return e;
  if (const kernel_error e = check_multi_axis_call(table, sources, k_in, k_out, streams);
      e != kernel_error::ok)
    return e;
  if (q_in.tokens != k_in.tokens) return kernel_error::shape_mismatch;
  static_cast<void>(multi_axis_rope_reference<T>(table, sources, q_in, q_out, streams, mode));
  return multi_axis_rope_reference<T>(table, sources, k_in, k_out, streams, mode);
}

}  // namespace posenc::kernels
