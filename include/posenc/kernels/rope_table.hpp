// Where the RoPE kernels get cos and sin from: a rope_table names a float cache in one of two
// formats, and optionally a configuration from which rows past the cache's end are computed.
//
// compact:  row p holds R/2 entries, cos[p * R/2 + i] and sin[p * R/2 + i] for pair i: exactly a
//           rope_cache_view<float> (tables/rope_cache.hpp), so rope_cache_v (compile time),
//           build_rope_cache and runtime_rope_cache (run time) all feed the kernels unchanged.
//           The smallest form (4 * R bytes a position): the one for flash.
// expanded: row p holds R entries laid out like the channels they multiply: for each pair (a, b)
//           of channels (pair_channels: interleaved a = 2i, b = 2i + 1; half a = i, b = i + R/2)
//             cos[p * R + a] = cos[p * R + b] = cos_i,  sin[p * R + a] = -sin_i,  sin[p * R + b] =
//             sin_i
//           so that y = x * cos + swap(x) * sin channel by channel, swap exchanging the two
//           channels of each pair. Twice the bytes of compact, and no shuffles of cos and sin in
//           the kernel.
//
// Both formats hold the same float values (expanded copies and negates compact entries, which is
// exact), so a kernel gives the same bits from either.
//
// A rope_table is a view, like std::span: it holds the cache's pointers and the address of the
// on-the-fly configuration, which must outlive every kernel call that uses the table (and so must
// what a LongRoPE configuration's factor spans point at). A copy of the configuration would not
// make it self-contained (those spans would still point outside), so the table does not take one;
// instead the functions that would store the address of a temporary are deleted (below), and so is
// table() of a temporary expanded_rope_cache.
//
// On the fly: if `on_the_fly` is set, rows at or past `positions` are computed from that
// configuration with the library's own math (math::sincos_of_product, the function every table
// entry comes from), so they are bit-identical to the rows a larger table would hold and
// correctly rounded for p < 2^32; the cost is about a microsecond per pair per token instead of
// a load. A table may also be on-the-fly only (positions 0, no data).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include <posenc/frequencies/rope.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/math/angle.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/tables/rope_cache.hpp>

namespace posenc::kernels {

enum class rope_table_format : std::uint8_t { compact, expanded };

// How a kernel writes a call's output. Streaming (non-temporal) stores write whole cache lines
// without reading them first and leave them out of the caches: right for an output that does not
// fit there anyway, wrong for one that the next operation reads while it is still cached.
// - automatic: streaming stores for a call that writes at least stream_threshold_bytes, ordinary
//   stores below;
// - streaming: streaming stores whatever the call's size: for each part of a larger call split
//   over threads (table_for_part), whose parts are each under the threshold;
// - cached: ordinary stores at every size.
// Streaming needs AVX-512 and an output whose vector stores each cover one whole, aligned 64-byte
// line (docs/kernels.md); elsewhere every mode writes the same way. The results are the same bits
// in every mode.
enum class output_stores : std::uint8_t { automatic, streaming, cached };

// Bytes of output from which a call with automatic stores streams them (32 MiB: the last-level
// cache of one AMD Zen 5 CCD; an output this size does not stay in the caches).
inline constexpr std::size_t stream_threshold_bytes = std::size_t{32} << 20;

struct rope_table {
  const float* cos = nullptr;
  const float* sin = nullptr;
  std::size_t positions = 0;  // rows in the cache
  std::uint32_t rotary_dim = 0;
  rope_layout layout = rope_layout::half;
  rope_table_format format = rope_table_format::compact;
  output_stores stores = output_stores::automatic;  // how the kernels write the output
  // Optional: compute rows at or past `positions` from this configuration (not owned; must
  // outlive the call), at HF sequence length seq_len (see frequencies/rope.hpp).
  const rope_config* on_the_fly = nullptr;
  std::uint64_t seq_len = 0;

  // Entries per row.
  constexpr std::size_t row_size() const {
    return format == rope_table_format::compact ? rotary_dim / 2 : rotary_dim;
  }
};

// A compact table over a cache (compile-time or run-time) for channels paired as in `layout`.
constexpr rope_table make_rope_table(const rope_cache_view<float>& cache, rope_layout layout) {
  rope_table t;
  t.cos = cache.cos;
  t.sin = cache.sin;
  t.positions = cache.positions;
  t.rotary_dim = static_cast<std::uint32_t>(cache.pairs * 2);
  t.layout = layout;
  t.format = rope_table_format::compact;
  return t;
}

// A compact table over the cache of config c, falling back to on-the-fly rows for positions past
// it. c must outlive the table.
constexpr rope_table make_rope_table(const rope_cache_view<float>& cache, const rope_config& c,
                                     std::uint64_t seq_len = 0) {
  rope_table t = make_rope_table(cache, c.layout);
  t.on_the_fly = &c;
  t.seq_len = seq_len;
  return t;
}

// A table with no cache: every row computed on the fly from c (c must outlive the table).
constexpr rope_table on_the_fly_table(const rope_config& c, std::uint64_t seq_len = 0) {
  rope_table t;
  t.rotary_dim = c.rotary_dim;
  t.layout = c.layout;
  t.on_the_fly = &c;
  t.seq_len = seq_len;
  return t;
}

// The table for one part of a call that is split over threads (or an engine's pool, token_slice
// in kernels/threads.hpp) and writes call_output_bytes in all: automatic stores become streaming
// where the whole call would stream, so that every part writes the way the one call would; the
// other modes are kept. A part writes less than the call, so without this it would not stream.
constexpr rope_table table_for_part(const rope_table& t, std::size_t call_output_bytes) {
  rope_table part = t;
  if (part.stores == output_stores::automatic && call_output_bytes >= stream_threshold_bytes)
    part.stores = output_stores::streaming;
  return part;
}

// The same with a temporary configuration would return a table pointing at a destroyed object:
// compile errors, whose text shows the comment on the line that names the function. Keep the
// configuration in a variable (or a static constexpr member) that outlives the table.
rope_table make_rope_table(  // posenc: a rope_table keeps the config's address, not a copy
    const rope_cache_view<float>& cache, const rope_config&& c, std::uint64_t seq_len = 0) = delete;
rope_table on_the_fly_table(  // posenc: a rope_table keeps the config's address, not a copy
    const rope_config&& c, std::uint64_t seq_len = 0) = delete;

// The table's own consistency: format/layout in range, rotary_dim even and >= 2, data present
// when there are rows, and an on-the-fly config that is valid and matches the table.
constexpr kernel_error check_table(const rope_table& t) {
  if (t.format != rope_table_format::compact && t.format != rope_table_format::expanded)
    return kernel_error::invalid_argument;
  if (t.layout != rope_layout::half && t.layout != rope_layout::interleaved)
    return kernel_error::invalid_argument;
  if (t.stores != output_stores::automatic && t.stores != output_stores::streaming &&
      t.stores != output_stores::cached)
    return kernel_error::invalid_argument;
  if (t.rotary_dim < 2 || t.rotary_dim % 2 != 0) return kernel_error::rotary_dim_mismatch;
  if (t.positions > 0 && (t.cos == nullptr || t.sin == nullptr)) return kernel_error::null_data;
  if (t.on_the_fly != nullptr) {
    const rope_config& c = *t.on_the_fly;
    if (validate(c) != rope_error::ok) return kernel_error::invalid_config;
    if (c.rotary_dim != t.rotary_dim || c.layout != t.layout) return kernel_error::invalid_config;
  }
  return kernel_error::ok;
}

// Writes the expanded rows of a compact cache: cos_out and sin_out need
// cache.positions * 2 * cache.pairs floats each. Exact (copies and negations).
constexpr void expand_rope_cache(const rope_cache_view<float>& cache, rope_layout layout,
                                 float* cos_out, float* sin_out) {
  const std::size_t h = cache.pairs, r = 2 * h;
  for (std::size_t p = 0; p < cache.positions; ++p) {
    for (std::size_t i = 0; i < h; ++i) {
      const float c = cache.cos[p * h + i], s = cache.sin[p * h + i];
      const channel_pair ch =
          pair_channels(layout, static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(i));
      const std::size_t a = ch.first, b = ch.second;
      cos_out[p * r + a] = c;
      cos_out[p * r + b] = c;
      sin_out[p * r + a] = -s;
      sin_out[p * r + b] = s;
    }
  }
}

// An expanded cache of fixed size, a literal type (compile-time tables).
template <std::size_t Positions, std::size_t RotaryDim>
struct expanded_rope_cache {
  std::array<float, Positions * RotaryDim> cos{};
  std::array<float, Positions * RotaryDim> sin{};
  rope_layout layout = rope_layout::half;
  double attention_factor = 1.0;

  // Views this cache (which must outlive the table).
  constexpr rope_table table() const& {
    rope_table t;
    t.cos = cos.data();
    t.sin = sin.data();
    t.positions = Positions;
    t.rotary_dim = static_cast<std::uint32_t>(RotaryDim);
    t.layout = layout;
    t.format = rope_table_format::expanded;
    return t;
  }
  // Of a temporary cache, the table would point into a destroyed object.
  rope_table table() const&& = delete;  // posenc: a rope_table views this cache, not a copy
};

namespace detail {
template <std::size_t Positions, std::size_t Pairs>
constexpr expanded_rope_cache<Positions, 2 * Pairs> expand(
    const rope_cache<float, Positions, Pairs>& c, rope_layout layout) {
  expanded_rope_cache<Positions, 2 * Pairs> e;
  e.layout = layout;
  e.attention_factor = c.attention_factor;
  expand_rope_cache(c.view(), layout, e.cos.data(), e.sin.data());
  return e;
}
}  // namespace detail

// The expanded form of rope_cache_v<S, float, Positions>, built by the compiler. It costs about as
// much constant evaluation again as the compact cache (one copy per entry, docs/kernels.md).
template <rope_spec S, std::size_t Positions>
inline constexpr expanded_rope_cache<Positions, checked_rope<S>.rotary_dim> expanded_rope_cache_v =
    detail::expand(rope_cache_v<S, float, Positions>, checked_rope<S>.layout);

namespace detail {
// cos and sin of pairs [i0, i1) at position p, computed from the table's config (compact order):
// the same function and arguments as every cache entry, hence the same bits.
inline void on_the_fly_row(const rope_table& t, std::uint64_t p, std::size_t i0, std::size_t i1,
                           float* cos_out, float* sin_out) {
  const rope_config& c = *t.on_the_fly;
  const math::dd af = attention_factor_dd(c);
  for (std::size_t i = i0; i < i1; ++i) {
    const math::sincos_result<float> v = math::sincos_of_product<float>(
        p, inv_freq_dd(c, static_cast<std::uint32_t>(i), t.seq_len), af);
    cos_out[i - i0] = v.cos;
    sin_out[i - i0] = v.sin;
  }
}
}  // namespace detail

}  // namespace posenc::kernels
