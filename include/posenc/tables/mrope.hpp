// Tables of multi-axis RoPE (M-RoPE and 2-D axial, spec/mrope.hpp). Every stream shares the 1-D
// configuration's frequencies, so the one table any kernel needs is the 1-D cos/sin cache of
// c.rope (rope_cache_v, build_rope_cache, runtime_rope_cache): pair i of a token reads entry
// (p_s, k) of it, s and k from the pair's pair_source. What this header adds:
// - the map pair -> source, at compile time (mrope_pair_sources_v, axial_pair_sources_v) and at
//   run time (build_mrope_pair_sources, build_axial_pair_sources);
// - the row of one multi-axis position (one position per stream): the definition per entry
//   (multi_axis_entry = math::sincos_of_product of the stream's position and theta_k), a
//   compile-time row (mrope_row_v, axial_row_v), a run-time row (build_mrope_row,
//   build_axial_row) and the row gathered from a 1-D cache (gather_row), bit-identical.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include <posenc/math/angle.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/math/trig.hpp>
#include <posenc/spec/mrope.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/spec/rules.hpp>
#include <posenc/tables/rope_cache.hpp>

namespace posenc {

// The positions of one token, one per stream (M-RoPE: temporal, height, width; axial: height,
// width).
template <std::size_t Streams>
using stream_positions = std::array<std::uint64_t, Streams>;

// The cos/sin row of one multi-axis position: Pairs entries each.
template <class T, std::size_t Pairs>
struct multi_axis_row {
  std::array<T, Pairs> cos{};
  std::array<T, Pairs> sin{};
};

namespace tables_detail {
template <std::size_t Pairs, class Config, class Source>
constexpr std::array<pair_source, Pairs> pair_sources_of(const Config& c, Source source) {
  std::array<pair_source, Pairs> out{};
  for (std::uint32_t i = 0; i < Pairs; ++i) out[i] = source(c, i);
  return out;
}
}  // namespace tables_detail

// Which stream and frequency feed each pair of compile-time spec S (validated first).
template <mrope_spec S>
inline constexpr std::array<pair_source, checked_mrope<S>.rope.rotary_dim / 2>
    mrope_pair_sources_v = tables_detail::pair_sources_of<checked_mrope<S>.rope.rotary_dim / 2>(
        checked_mrope<S>, mrope_pair_source);
template <axial_rope_spec S>
inline constexpr std::array<pair_source, checked_axial_rope<S>.rope.rotary_dim / 2>
    axial_pair_sources_v =
        tables_detail::pair_sources_of<checked_axial_rope<S>.rope.rotary_dim / 2>(
            checked_axial_rope<S>, axial_pair_source);

// The same map at run time into out[0 .. rotary_dim/2): validates c first, writes nothing if it is
// invalid.
constexpr mrope_error build_mrope_pair_sources(const mrope_config& c, pair_source* out) {
  return spec_detail::write_if_valid(c, [&] {
    for (std::uint32_t i = 0; i < c.rope.rotary_dim / 2; ++i) out[i] = mrope_pair_source(c, i);
  });
}
constexpr axial_rope_error build_axial_pair_sources(const axial_rope_config& c, pair_source* out) {
  return spec_detail::write_if_valid(c, [&] {
    for (std::uint32_t i = 0; i < c.rope.rotary_dim / 2; ++i) out[i] = axial_pair_source(c, i);
  });
}

// The definition of entry i of a multi-axis row: attention_factor * (cos, sin)(p_s * theta_k),
// the angle exact and each value rounded once to T, with (s, k) = src and theta_k =
// inv_freq_dd(rope, k, seq_len). The same number as entry (p_s, k) of rope's 1-D cache.
template <class T>
constexpr math::sincos_result<T> multi_axis_entry(const rope_config& rope, pair_source src,
                                                  std::span<const std::uint64_t> positions,
                                                  std::uint64_t seq_len = 0) {
  return math::sincos_of_product<T>(positions[src.stream],
                                    inv_freq_dd(rope, src.inv_freq_index, seq_len),
                                    attention_factor_dd(rope));
}

namespace tables_detail {
template <class T, class Config, class Source>
constexpr void write_multi_axis_row(const Config& c, Source source,
                                    std::span<const std::uint64_t> positions, T* cos_out,
                                    T* sin_out, std::uint64_t seq_len) {
  for (std::uint32_t i = 0; i < c.rope.rotary_dim / 2; ++i) {
    const auto e = multi_axis_entry<T>(c.rope, source(c, i), positions, seq_len);
    cos_out[i] = e.cos;
    sin_out[i] = e.sin;
  }
}

template <class T, std::size_t Pairs, class Config, class Source, std::size_t Streams>
constexpr multi_axis_row<T, Pairs> make_multi_axis_row(const Config& c, Source source,
                                                       const stream_positions<Streams>& p) {
  multi_axis_row<T, Pairs> r;
  write_multi_axis_row<T>(c, source, std::span<const std::uint64_t>(p), r.cos.data(), r.sin.data(),
                          0);
  return r;
}
}  // namespace tables_detail

// The row of compile-time M-RoPE spec S at positions (Pt, Ph, Pw), built by the compiler
// (seq_len 0).
template <mrope_spec S, class T, std::uint64_t Pt, std::uint64_t Ph, std::uint64_t Pw>
inline constexpr multi_axis_row<T, checked_mrope<S>.rope.rotary_dim / 2> mrope_row_v =
    tables_detail::make_multi_axis_row<T, checked_mrope<S>.rope.rotary_dim / 2>(
        checked_mrope<S>, mrope_pair_source, stream_positions<3>{Pt, Ph, Pw});
// The row of compile-time 2-D spec S at (height Ph, width Pw).
template <axial_rope_spec S, class T, std::uint64_t Ph, std::uint64_t Pw>
inline constexpr multi_axis_row<T, checked_axial_rope<S>.rope.rotary_dim / 2> axial_row_v =
    tables_detail::make_multi_axis_row<T, checked_axial_rope<S>.rope.rotary_dim / 2>(
        checked_axial_rope<S>, axial_pair_source, stream_positions<2>{Ph, Pw});

// The row of runtime config c at position p into cos_out and sin_out (rotary_dim/2 entries each).
// Validates c first: an invalid c is returned and nothing is written.
template <class T>
constexpr mrope_error build_mrope_row(const mrope_config& c, const stream_positions<3>& p,
                                      T* cos_out, T* sin_out, std::uint64_t seq_len = 0) {
  static_assert(math::detail::is_float_or_double<T>, "posenc: tables are float or double");
  return spec_detail::write_if_valid(c, [&] {
    tables_detail::write_multi_axis_row<T>(c, mrope_pair_source, std::span<const std::uint64_t>(p),
                                           cos_out, sin_out, seq_len);
  });
}
template <class T>
constexpr axial_rope_error build_axial_row(const axial_rope_config& c, const stream_positions<2>& p,
                                           T* cos_out, T* sin_out, std::uint64_t seq_len = 0) {
  static_assert(math::detail::is_float_or_double<T>, "posenc: tables are float or double");
  return spec_detail::write_if_valid(c, [&] {
    tables_detail::write_multi_axis_row<T>(c, axial_pair_source, std::span<const std::uint64_t>(p),
                                           cos_out, sin_out, seq_len);
  });
}

// The row gathered from a 1-D cache of c.rope: entry i = cache entry (p_s, k), (s, k) =
// sources[i]. Returns false, writing nothing, when a source or position lies outside the cache or
// the stream count.
template <class T>
constexpr bool gather_row(const rope_cache_view<T>& cache, std::span<const pair_source> sources,
                          std::span<const std::uint64_t> positions, T* cos_out, T* sin_out) {
  for (const pair_source& s : sources)
    if (s.stream >= positions.size() || positions[s.stream] >= cache.positions ||
        s.inv_freq_index >= cache.pairs)
      return false;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const auto p = static_cast<std::size_t>(positions[sources[i].stream]);
    cos_out[i] = cache.cos_at(p, sources[i].inv_freq_index);
    sin_out[i] = cache.sin_at(p, sources[i].inv_freq_index);
  }
  return true;
}

}  // namespace posenc
