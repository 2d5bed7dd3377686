// Multi-axis RoPE kernels (M-RoPE and 2-D axial, spec/mrope.hpp) with xsimd, for one architecture
// Arch: the operation of multi_axis_rope_reference (kernels/mrope_reference.hpp), bit for bit with
// fma_mode_of<Arch>. A token's row is the 1-D row assembled pair by pair from the streams (pair i
// takes entry (p_s(t), k) of the 1-D table, (s, k) = the map's sources[i]) into stack buffers, in
// compact form; the rotation bodies, the loop order, the streaming stores and the partial-rotary
// copy are the 1-D kernel's (simd/rope.hpp, detail::run_rows), so every property stated there holds
// here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <posenc/kernels/error.hpp>
#include <posenc/kernels/mrope_reference.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/kernels/simd/rope.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/spec/mrope.hpp>

// GCC bug 105593: see simd/rope.hpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace posenc::kernels::simd {

namespace detail {

// Token t's row in chunks of row_chunk pairs: cached entries read from the table rows of the
// streams' positions, entries past the table computed by kernels::detail::multi_axis_entry (the
// reference's own).
template <class Arch, storage_type T>
kernel_error run_multi_axis(const rope_table& table, const multi_axis_map& map,
                            const rope_operand<T>* all_ops, std::size_t n_all,
                            std::span<const token_positions> streams) {
  const std::size_t h = table.rotary_dim / 2, row = table.row_size();
  const bool compact = table.format == rope_table_format::compact;
  const std::size_t n_streams = streams.size();
  const std::span<const pair_source> sources = map.sources();
  // Where every pair keeps its own frequency (M-RoPE), a token whose streams all give the same
  // position (a text token of Qwen2-VL: temporal = height = width) has exactly the 1-D row of
  // that position: it is used in place, without assembling it.
  const bool own_frequency = map.own_frequency();
  alignas(64) float cbuf[row_chunk];
  alignas(64) float sbuf[row_chunk];
  // With every pair at its own frequency (M-RoPE), entry j of an assembled compact cached row is
  // entry j of its stream's row: a select among at most max_position_streams rows, a vector of
  // pairs at a time, by the pairs' streams in float lanes (copied once per call, on the first
  // token that needs them; rows of one chunk, rotary_dim <= 2 * row_chunk). No indexed loads: the
  // pair-by-pair copy below costs about 50 ns per token for head_dim 128 on a Zen 5 core, and
  // vector gathers (tried) more.
  using fbatch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = fbatch::size;
  static_assert(max_position_streams == 4);
  const bool select_rows = own_frequency && compact && h <= row_chunk;
  // The stream of each pair as a float (exact: 0 to 3), compared in float lanes.
  alignas(64) float lane_stream[row_chunk];
  bool lanes_ready = false;
  // Other maps described by runs (multi_axis_map::runs; 2-D axial): each run a copy (stride 1) or
  // the even or odd half of a contiguous block of its stream's row (stride 2, rope_rows.hpp's
  // deinterleave); any other map is copied pair by pair.
  const std::span<const pair_run> runs = map.runs();
  const bool by_runs = !own_frequency && compact && h <= row_chunk && !runs.empty();
  alignas(64) float scratch[row_chunk];
  const auto row_of = [&](std::size_t t, auto&& chunk) {
    std::uint64_t p[max_position_streams];
    const float* rc[max_position_streams];
    const float* rs[max_position_streams];
    bool cached = true, same_position = true;
    for (std::size_t s = 0; s < n_streams; ++s) {
      p[s] = streams[s].at(t);
      cached = cached && p[s] < table.positions;
      same_position = same_position && p[s] == p[0];
      const std::size_t off = p[s] < table.positions ? static_cast<std::size_t>(p[s]) * row : 0;
      rc[s] = table.cos + off;
      rs[s] = table.sin + off;
    }
    if (own_frequency && same_position && cached) {
      // The 1-D kernel's rows (simd/rope.hpp, run).
      for (std::size_t i0 = 0; i0 < h; i0 += row_chunk) {
        const std::size_t n = h - i0 < row_chunk ? h - i0 : row_chunk;
        chunk(compact ? row_source{rc[0] + i0, rs[0] + i0, true} : row_source{rc[0], rs[0], false},
              i0, n);
      }
      return;
    }
    for (std::size_t i0 = 0; i0 < h; i0 += row_chunk) {
      const std::size_t n = h - i0 < row_chunk ? h - i0 : row_chunk;
      const pair_source* src = sources.data() + i0;
      if (cached && select_rows) {
        if (!lanes_ready) {
          for (std::size_t j = 0; j < h; ++j)
            lane_stream[j] = static_cast<float>(sources[j].stream);
          lanes_ready = true;
        }
        // Streams past the call's are never named: their rows are stream 0's.
        const float* c[max_position_streams];
        const float* sn[max_position_streams];
        for (std::size_t s = 0; s < max_position_streams; ++s) {
          c[s] = rc[s < n_streams ? s : 0];
          sn[s] = rs[s < n_streams ? s : 0];
        }
        std::size_t j = 0;
        for (; j + W <= n; j += W) {
          const fbatch s = fbatch::load_aligned(lane_stream + j);
          const auto is1 = s == fbatch(1.0f), is2 = s == fbatch(2.0f), is3 = s == fbatch(3.0f);
          fbatch cv = fbatch::load_unaligned(c[0] + j);
          cv = xsimd::select(is1, fbatch::load_unaligned(c[1] + j), cv);
          cv = xsimd::select(is2, fbatch::load_unaligned(c[2] + j), cv);
          cv = xsimd::select(is3, fbatch::load_unaligned(c[3] + j), cv);
          cv.store_aligned(cbuf + j);
          fbatch sv = fbatch::load_unaligned(sn[0] + j);
          sv = xsimd::select(is1, fbatch::load_unaligned(sn[1] + j), sv);
          sv = xsimd::select(is2, fbatch::load_unaligned(sn[2] + j), sv);
          sv = xsimd::select(is3, fbatch::load_unaligned(sn[3] + j), sv);
          sv.store_aligned(sbuf + j);
        }
        for (; j < n; ++j) {
          const std::uint32_t s = sources[j].stream;
          cbuf[j] = c[s][j];
          sbuf[j] = sn[s][j];
        }
      } else if (cached && by_runs) {
        for (const pair_run& u : runs) {
          const float* c = rc[u.stream];
          const float* sn = rs[u.stream];
          if (u.stride == 1) {
            for (std::uint32_t j = 0; j < u.len; ++j) {
              cbuf[u.start + j] = c[u.k0 + j];
              sbuf[u.start + j] = sn[u.k0 + j];
            }
          } else {
            const std::uint32_t base = u.k0 & ~1u;
            const bool odd = (u.k0 & 1u) != 0;
            deinterleave<Arch>(c + base, odd ? scratch : cbuf + u.start,
                               odd ? cbuf + u.start : scratch, u.len);
            deinterleave<Arch>(sn + base, odd ? scratch : sbuf + u.start,
                               odd ? sbuf + u.start : scratch, u.len);
          }
        }
      } else if (cached && compact) {
        for (std::size_t j = 0; j < n; ++j) {
          cbuf[j] = rc[src[j].stream][src[j].inv_freq_index];
          sbuf[j] = rs[src[j].stream][src[j].inv_freq_index];
        }
      } else if (cached) {
        // The expanded row holds pair k's cos at its first channel and its sin at its second.
        for (std::size_t j = 0; j < n; ++j) {
          const channel_pair ch =
              pair_channels(table.layout, table.rotary_dim, src[j].inv_freq_index);
          cbuf[j] = rc[src[j].stream][ch.first];
          sbuf[j] = rs[src[j].stream][ch.second];
        }
      } else {
        for (std::size_t j = 0; j < n; ++j)
          kernels::detail::multi_axis_entry(table, p[src[j].stream], src[j].inv_freq_index, cbuf[j],
                                            sbuf[j]);
      }
      chunk(row_source{cbuf, sbuf, true}, i0, n);
    }
  };
  // Decode (simd/rope.hpp, run_decode): the token's row straight to decode_chunk.
  if (decode_call(table, all_ops, n_all)) {
    row_of(0, [&](const row_source& r, std::size_t i0, std::size_t n) {
      decode_chunk<Arch, T>(table, r, i0, n, all_ops, n_all);
    });
    return kernel_error::ok;
  }
  return run_rows<Arch, T>(table, all_ops, n_all, row_of);
}

}  // namespace detail

// out = multi-axis RoPE(in) with a checked map; in place when out is the same view as in. Checks
// everything first (check_multi_axis_call: O(1) for the map) and writes nothing on error. Same
// bits as multi_axis_rope_reference(table, map, in, out, streams, fma_mode_of<Arch>).
template <class Arch, storage_type T>
kernel_error apply_multi_axis_rope(const rope_table& table, const multi_axis_map& map,
                                   const tensor_view<const T>& in, const tensor_view<T>& out,
                                   std::span<const token_positions> streams) {
  if (const kernel_error e = check_multi_axis_call(table, map, in, out, streams);
      e != kernel_error::ok)
    return e;
  const detail::rope_operand<T> op{in, out};
  return detail::run_multi_axis<Arch, T>(table, map, &op, 1, streams);
}

// The same with the span of sources: the map is checked and built per call (a pass over it).
template <class Arch, storage_type T>
kernel_error apply_multi_axis_rope(const rope_table& table, std::span<const pair_source> sources,
                                   const tensor_view<const T>& in, const tensor_view<T>& out,
                                   std::span<const token_positions> streams) {
  multi_axis_map map;
  if (const kernel_error e = check_multi_axis_call(table, sources, in, out, streams, &map);
      e != kernel_error::ok)
    return e;
  const detail::rope_operand<T> op{in, out};
  return detail::run_multi_axis<Arch, T>(table, map, &op, 1, streams);
}

// In place.
template <class Arch, storage_type T>
kernel_error apply_multi_axis_rope(const rope_table& table, const multi_axis_map& map,
                                   const tensor_view<T>& x,
                                   std::span<const token_positions> streams) {
  return apply_multi_axis_rope<Arch, T>(table, map, tensor_view<const T>(x), x, streams);
}
template <class Arch, storage_type T>
kernel_error apply_multi_axis_rope(const rope_table& table, std::span<const pair_source> sources,
                                   const tensor_view<T>& x,
                                   std::span<const token_positions> streams) {
  return apply_multi_axis_rope<Arch, T>(table, sources, tensor_view<const T>(x), x, streams);
}

// q and k with the same streams, token by token; both checked before either is written. q and k
// must not share elements (see check_rope_qk_call).
template <class Arch, storage_type T>
kernel_error apply_multi_axis_rope_qk(const rope_table& table, const multi_axis_map& map,
                                      const tensor_view<const T>& q_in, const tensor_view<T>& q_out,
                                      const tensor_view<const T>& k_in, const tensor_view<T>& k_out,
                                      std::span<const token_positions> streams) {
  if (const kernel_error e = check_multi_axis_call(table, map, q_in, q_out, streams);
      e != kernel_error::ok)
    return e;
  if (const kernel_error e = check_multi_axis_call(table, map, k_in, k_out, streams);
      e != kernel_error::ok)
    return e;
  if (q_in.tokens != k_in.tokens) return kernel_error::shape_mismatch;
  const detail::rope_operand<T> ops[2] = {{q_in, q_out}, {k_in, k_out}};
  return detail::run_multi_axis<Arch, T>(table, map, ops, 2, streams);
}
template <class Arch, storage_type T>
kernel_error apply_multi_axis_rope_qk(const rope_table& table, std::span<const pair_source> sources,
                                      const tensor_view<const T>& q_in, const tensor_view<T>& q_out,
                                      const tensor_view<const T>& k_in, const tensor_view<T>& k_out,
                                      std::span<const token_positions> streams) {
  multi_axis_map map;
  if (const kernel_error e = check_multi_axis_call(table, sources, q_in, q_out, streams, &map);
      e != kernel_error::ok)
    return e;
  // The map fits k's call as it fits q's (same table and streams): k's checks are the map form's.
  return apply_multi_axis_rope_qk<Arch, T>(table, map, q_in, q_out, k_in, k_out, streams);
}

}  // namespace posenc::kernels::simd

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
