// The scalar reference of the multi-axis RoPE kernels (M-RoPE and 2-D axial, spec/mrope.hpp).
//
// The table is the 1-D cache of the configuration's rope part (a rope_table, compact or expanded,
// optionally with on-the-fly rows); the pair map is one pair_source per pair (tables/mrope.hpp:
// mrope_pair_sources_v, build_mrope_pair_sources, and the axial forms), passed as its span
// (checked on every call) or as a multi_axis_map (checked once); the positions are one
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

// Pairs start, start + 1, ..., start + len - 1 of a map, all fed by one stream at frequencies k0,
// k0 + stride, ..., k0 + (len - 1) * stride (multi_axis_map::runs).
struct pair_run {
  std::uint32_t start = 0, len = 0, k0 = 0;
  std::uint8_t stream = 0, stride = 0;
};

// A pair map checked once: one source per pair of rotary_dim, each naming one of `streams` position
// streams and a frequency below rotary_dim / 2. The kernels that take it check only that it fits
// the call (the table's rotary_dim, the number of streams given), which costs the same whatever
// the map's size; the forms that take the span of sources build one per call, a pass over the
// whole map (the slower convenience). It refers to the sources, which must outlive it.
class multi_axis_map {
 public:
  // No map: every kernel called with it returns invalid_argument.
  constexpr multi_axis_map() = default;

  // The map of `sources` for a table of rotary_dim and `streams` position streams. Returns
  // invalid_argument, leaving `out` unchanged, when streams is 0 or more than
  // max_position_streams, rotary_dim is odd or 0, sources does not hold rotary_dim / 2 entries,
  // or an entry names a stream >= streams or a frequency >= rotary_dim / 2.
  static constexpr kernel_error try_make(std::span<const pair_source> sources,
                                         std::uint32_t rotary_dim, std::size_t streams,
                                         multi_axis_map& out) {
    if (streams == 0 || streams > max_position_streams) return kernel_error::invalid_argument;
    if (rotary_dim < 2 || rotary_dim % 2 != 0) return kernel_error::invalid_argument;
    const std::uint32_t h = rotary_dim / 2;
    if (sources.size() != h) return kernel_error::invalid_argument;
    // One pass without early exits, so that it vectorizes: the largest stream and frequency, and
    // whether some pair's frequency is not its own index.
    std::uint32_t max_stream = 0, max_k = 0, moved = 0;
    for (std::uint32_t i = 0; i < h; ++i) {
      const pair_source s = sources[i];
      max_stream = s.stream > max_stream ? s.stream : max_stream;
      max_k = s.inv_freq_index > max_k ? s.inv_freq_index : max_k;
      moved |= s.inv_freq_index ^ i;
    }
    if (max_stream >= streams || max_k >= h) return kernel_error::invalid_argument;
    multi_axis_map m;
    m.sources_ = sources.data();
    m.rotary_dim_ = rotary_dim;
    m.streams_ = static_cast<std::uint32_t>(streams);
    m.own_frequency_ = moved == 0;
    // Runs serve only maps that move frequencies (an M-RoPE row is a select among rows).
    if (!m.own_frequency_) m.find_runs();
    out = m;
    return kernel_error::ok;
  }

  // The most runs a map is described by (runs()).
  static constexpr std::size_t max_runs = 8;

  constexpr std::span<const pair_source> sources() const { return {sources_, rotary_dim_ / 2}; }
  constexpr std::uint32_t rotary_dim() const { return rotary_dim_; }
  constexpr std::size_t streams() const { return streams_; }
  // Whether every pair i keeps its own frequency (inv_freq_index == i, as in M-RoPE): a token
  // whose streams all give one position then has exactly the 1-D row of that position.
  constexpr bool own_frequency() const { return own_frequency_; }
  // For a map where some pair does not keep its own frequency: the map as at most max_runs runs
  // of stride 1 or 2, in pair order, where it is one (2-D axial: each stream's pairs at every
  // second frequency, two runs); empty otherwise, and for every own_frequency() map. A run of
  // stride 2 keeps its 2 * len entries from k0 rounded down to even inside the row (< rotary_dim /
  // 2), so that SIMD code can take them as the even or odd half of a contiguous block.
  constexpr std::span<const pair_run> runs() const { return {runs_, n_runs_}; }

 private:
  constexpr void find_runs() {
    const std::uint32_t h = rotary_dim_ / 2;
    std::size_t n = 0;
    for (std::uint32_t i = 0; i < h;) {
      const pair_source first = sources_[i];
      std::uint32_t stride = 1, len = 1;
      if (i + 1 < h && sources_[i + 1].stream == first.stream &&
          sources_[i + 1].inv_freq_index == first.inv_freq_index + 2)
        stride = 2;
      while (i + len < h && sources_[i + len].stream == first.stream &&
             sources_[i + len].inv_freq_index == first.inv_freq_index + stride * len)
        ++len;
      if (n == max_runs || (stride == 2 && (first.inv_freq_index & ~1u) + 2 * len > h)) {
        n = 0;
        for (pair_run& r : runs_) r = pair_run{};
        break;
      }
      runs_[n++] = {i, len, first.inv_freq_index, static_cast<std::uint8_t>(first.stream),
                    static_cast<std::uint8_t>(stride)};
      i += len;
    }
    n_runs_ = static_cast<std::uint8_t>(n);
  }

  const pair_source* sources_ = nullptr;
  std::uint32_t rotary_dim_ = 0;
  std::uint32_t streams_ = 0;
  bool own_frequency_ = false;
  std::uint8_t n_runs_ = 0;
  pair_run runs_[max_runs] = {};
};

namespace detail {
// The checks of a multi-axis call that do not involve the map: those of check_rope_call for each
// stream (the views, table and overlap checks do not depend on the positions, so the streams
// after the first need only the position checks: the same codes, in the same order, as a full
// check per stream).
template <storage_type T>
constexpr kernel_error check_multi_axis_streams(const rope_table& table,
                                                const tensor_view<const T>& in,
                                                const tensor_view<T>& out,
                                                std::span<const token_positions> streams) {
  if (const kernel_error e = check_rope_call(table, in, out, streams[0]); e != kernel_error::ok)
    return e;
  for (const token_positions& pos : streams.subspan(1)) {
    std::uint64_t max_pos = 0;
    if (const kernel_error e = check_positions(pos, in.tokens, &max_pos); e != kernel_error::ok)
      return e;
    if (!in.empty() && max_pos >= table.positions && table.on_the_fly == nullptr)
      return kernel_error::position_out_of_range;
  }
  return kernel_error::ok;
}
}  // namespace detail

// Every check of a multi-axis call with a checked map, in order; nothing is written unless this
// returns ok: no stream, or a number of streams other than the map's: invalid_argument; then the
// checks of check_rope_call for each stream (table, shapes, strides, rotary_dim, a stream of ids
// whose length is not the token count: shape_mismatch, negative ids, positions past the table,
// overlap); then a map made for another rotary_dim than the table's: invalid_argument.
template <storage_type T>
constexpr kernel_error check_multi_axis_call(const rope_table& table, const multi_axis_map& map,
                                             const tensor_view<const T>& in,
                                             const tensor_view<T>& out,
                                             std::span<const token_positions> streams) {
  if (streams.empty() || streams.size() != map.streams()) return kernel_error::invalid_argument;
  if (const kernel_error e = detail::check_multi_axis_streams(table, in, out, streams);
      e != kernel_error::ok)
    return e;
  if (map.rotary_dim() != table.rotary_dim) return kernel_error::invalid_argument;
  return kernel_error::ok;
}

// Every check of a multi-axis call with the span of sources, in order; nothing is written unless
// this returns ok: no stream or more than max_position_streams: invalid_argument; the checks of
// check_rope_call for each stream (as above); then the map: not one source per pair naming a
// given stream and a pair's frequency (multi_axis_map::try_make for the table's rotary_dim and
// the streams given): invalid_argument. On ok, *map (when not null) is that map.
template <storage_type T>
constexpr kernel_error check_multi_axis_call(const rope_table& table,
                                             std::span<const pair_source> sources,
                                             const tensor_view<const T>& in,
                                             const tensor_view<T>& out,
                                             std::span<const token_positions> streams,
                                             multi_axis_map* map = nullptr) {
  if (streams.empty() || streams.size() > max_position_streams)
    return kernel_error::invalid_argument;
  if (const kernel_error e = detail::check_multi_axis_streams(table, in, out, streams);
      e != kernel_error::ok)
    return e;
  multi_axis_map m;
  if (const kernel_error e = multi_axis_map::try_make(sources, table.rotary_dim, streams.size(), m);
      e != kernel_error::ok)
    return e;
  if (map != nullptr) *map = m;
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

// out = multi-axis RoPE(in) with a checked map. In place when out is the same view as in.
template <storage_type T>
kernel_error multi_axis_rope_reference(const rope_table& table, const multi_axis_map& map,
                                       tensor_view<const T> in, tensor_view<T> out,
                                       std::span<const token_positions> streams,
                                       fma_mode mode = fma_mode::unfused) {
  if (const kernel_error e = check_multi_axis_call(table, map, in, out, streams);
      e != kernel_error::ok)
    return e;
  if (in.empty()) return kernel_error::ok;
  const std::size_t h = table.rotary_dim / 2;
  const std::span<const pair_source> sources = map.sources();
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

// out = multi-axis RoPE(in): the map of `sources` is checked (check_multi_axis_call) and built
// per call.
template <storage_type T>
kernel_error multi_axis_rope_reference(const rope_table& table,
                                       std::span<const pair_source> sources,
                                       tensor_view<const T> in, tensor_view<T> out,
                                       std::span<const token_positions> streams,
                                       fma_mode mode = fma_mode::unfused) {
  multi_axis_map map;
  if (const kernel_error e = check_multi_axis_call(table, sources, in, out, streams, &map);
      e != kernel_error::ok)
    return e;
  return multi_axis_rope_reference<T>(table, map, in, out, streams, mode);
}

// In place.
template <storage_type T>
kernel_error multi_axis_rope_reference(const rope_table& table, const multi_axis_map& map,
                                       tensor_view<T> x, std::span<const token_positions> streams,
                                       fma_mode mode = fma_mode::unfused) {
  return multi_axis_rope_reference<T>(table, map, tensor_view<const T>(x), x, streams, mode);
}
template <storage_type T>
kernel_error multi_axis_rope_reference(const rope_table& table,
                                       std::span<const pair_source> sources, tensor_view<T> x,
                                       std::span<const token_positions> streams,
                                       fma_mode mode = fma_mode::unfused) {
  return multi_axis_rope_reference<T>(table, sources, tensor_view<const T>(x), x, streams, mode);
}

// q and k with the same streams: both checked before either is written.
template <storage_type T>
kernel_error multi_axis_rope_reference_qk(const rope_table& table, const multi_axis_map& map,
                                          tensor_view<const T> q_in, tensor_view<T> q_out,
                                          tensor_view<const T> k_in, tensor_view<T> k_out,
                                          std::span<const token_positions> streams,
                                          fma_mode mode = fma_mode::unfused) {
  if (const kernel_error e = check_multi_axis_call(table, map, q_in, q_out, streams);
      e != kernel_error::ok)
    return e;
  if (const kernel_error e = check_multi_axis_call(table, map, k_in, k_out, streams);
      e != kernel_error::ok)
    return e;
  if (q_in.tokens != k_in.tokens) return kernel_error::shape_mismatch;
  static_cast<void>(multi_axis_rope_reference<T>(table, map, q_in, q_out, streams, mode));
  return multi_axis_rope_reference<T>(table, map, k_in, k_out, streams, mode);
}
template <storage_type T>
kernel_error multi_axis_rope_reference_qk(const rope_table& table,
                                          std::span<const pair_source> sources,
                                          tensor_view<const T> q_in, tensor_view<T> q_out,
                                          tensor_view<const T> k_in, tensor_view<T> k_out,
                                          std::span<const token_positions> streams,
                                          fma_mode mode = fma_mode::unfused) {
  multi_axis_map map;
  if (const kernel_error e = check_multi_axis_call(table, sources, q_in, q_out, streams, &map);
      e != kernel_error::ok)
    return e;
  if (const kernel_error e = check_multi_axis_call(table, sources, k_in, k_out, streams);
      e != kernel_error::ok)
    return e;
  if (q_in.tokens != k_in.tokens) return kernel_error::shape_mismatch;
  return multi_axis_rope_reference_qk<T>(table, map, q_in, q_out, k_in, k_out, streams, mode);
}

}  // namespace posenc::kernels
