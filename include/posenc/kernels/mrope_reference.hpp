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

// The most position streams a call takes (M-RoPE has 3, 2-D axial 2): the SIMD kernels keep one
// row pointer per stream on the stack.
inline constexpr std::size_t max_position_streams = 4;

// Every check of a multi-axis call, in order; nothing is written unless this returns ok:
// the checks of check_rope_call for each stream (table, shapes, strides, rotary_dim, a stream of
// ids whose length is not the token count: shape_mismatch, negative ids, positions past the table,
// overlap), then the map: no stream or more than max_position_streams, or a map that is not one
// source per pair naming a given stream and a pair's frequency: invalid_argument.
template <storage_type T>
constexpr kernel_error check_multi_axis_call(const rope_table& table,
                                             std::span<const pair_source> sources,
                                             const tensor_view<const T>& in,
                                             const tensor_view<T>& out,
                                             std::span<const token_positions> streams) {
  if (streams.empty() || streams.size() > max_position_streams)
    return kernel_error::invalid_argument;
  // Stream 0 with every check of a 1-D call; the views, table and overlap checks do not depend on
  // the positions, so the other streams need only the position checks (the same codes, in the
  // same order, as a full check per stream).
  if (const kernel_error e = check_rope_call(table, in, out, streams[0]); e != kernel_error::ok)
    return e;
  for (const token_positions& pos : streams.subspan(1)) {
    std::uint64_t max_pos = 0;
    if (const kernel_error e = check_positions(pos, in.tokens, &max_pos); e != kernel_error::ok)
      return e;
    if (!in.empty() && max_pos >= table.positions && table.on_the_fly == nullptr)
      return kernel_error::position_out_of_range;
  }
  if (sources.size() != table.rotary_dim / 2) return kernel_error::invalid_argument;
  // Without an early exit, so that the loop vectorizes: every call of a kernel runs it.
  bool bad = false;
  const std::size_t h = table.rotary_dim / 2;
  for (const pair_source& s : sources) {
    bad |= s.stream >= streams.size();
    bad |= s.inv_freq_index >= h;
  }
  return bad ? kernel_error::invalid_argument : kernel_error::ok;
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
  const std::size_t h = table.rotary_dim / 2;
  // Compact chunks of the token's row, each entry from its pair's stream.
  detail::rope_reference_rows<T>(
      table, in, out, mode,
      [&](std::size_t t, std::size_t i0, float* cbuf, float* sbuf) -> detail::reference_row {
        const std::size_t i1 = h - i0 < on_the_fly_chunk ? h : i0 + on_the_fly_chunk;
        for (std::size_t i = i0; i < i1; ++i) {
          const pair_source src = sources[i];
          detail::multi_axis_entry(table, streams[src.stream].at(t), src.inv_freq_index,
                                   cbuf[i - i0], sbuf[i - i0]);
        }
        return {cbuf, sbuf, i1, true};
      });
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
