// Compile-time proofs of multi-axis RoPE (spec/mrope.hpp, tables/mrope.hpp): building this
// translation unit is the proof.
//
// - The pair map: each stream gets exactly its mrope_section count of pairs, in both section
//   layouts (Qwen2-VL [16, 24, 24] contiguous, Qwen3-VL [24, 20, 20] interleaved), and the 2-D
//   axial map gives each axis R/4 pairs with the frequencies of HF's two vision encoders.
// - The laws of analysis/laws.hpp, run on R_(t, h, w) seen along one axis at a time (the other
//   positions fixed): orthogonality, norm preservation and relative-only dependence
//   <R_m q, R_n k> = <R_{m+s} q, R_{n+s} k> along every axis, with the float tolerances derived
//   beside each law. One counter-example: moving the other axes as well breaks the last law.
// - Compile-time rows (mrope_row_v, axial_row_v) equal the per-entry definition.
//
// Cost: every entry is a per-entry sincos_of_product, so the configurations are small (R = 16).
#include <array>
#include <cstddef>
#include <cstdint>

#include <posenc/analysis/laws.hpp>
#include <posenc/math/angle.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/spec/mrope.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/tables/mrope.hpp>

namespace pa = posenc::analysis;
using posenc::axial_frequencies;
using posenc::axial_rope_config;
using posenc::mrope_config;
using posenc::mrope_layout;
using posenc::pair_source;
using posenc::rope_config;
using posenc::rope_layout;

namespace {

// ---- the pair map ----------------------------------------------------------------------------

template <std::size_t Pairs, class Config, class Source>
constexpr std::array<std::uint32_t, 3> pairs_per_stream(const Config& c, Source source) {
  std::array<std::uint32_t, 3> n{};
  for (std::uint32_t i = 0; i < Pairs; ++i) {
    const pair_source s = source(c, i);
    if (s.inv_freq_index >= Pairs) return {};  // a frequency outside the 1-D set
    ++n[s.stream];
  }
  return n;
}

constexpr mrope_config qwen2_vl{{128, 128, 1000000.0, rope_layout::half}, {16, 24, 24}};
constexpr mrope_config qwen3_vl{
    {128, 128, 5000000.0, rope_layout::half}, {24, 20, 20}, mrope_layout::interleaved};
static_assert(posenc::validate(qwen2_vl) == posenc::mrope_error::ok);
static_assert(posenc::validate(qwen3_vl) == posenc::mrope_error::ok);
static_assert(pairs_per_stream<64>(qwen2_vl, posenc::mrope_pair_source) ==
              std::array<std::uint32_t, 3>{16, 24, 24});
static_assert(pairs_per_stream<64>(qwen3_vl, posenc::mrope_pair_source) ==
              std::array<std::uint32_t, 3>{24, 20, 20});
// Section order: temporal first, then height, then width (HF's chunk j takes stream j % 3).
static_assert(posenc::mrope_pair_source(qwen2_vl, 15) == pair_source{0, 15});
static_assert(posenc::mrope_pair_source(qwen2_vl, 16) == pair_source{1, 16});
static_assert(posenc::mrope_pair_source(qwen2_vl, 40) == pair_source{2, 40});
// Interleaved: t h w t h w ..., the last 4 pairs (60 .. 63) temporal.
static_assert(posenc::mrope_pair_source(qwen3_vl, 58) == pair_source{1, 58});
static_assert(posenc::mrope_pair_source(qwen3_vl, 59) == pair_source{2, 59});
static_assert(posenc::mrope_pair_source(qwen3_vl, 61) == pair_source{0, 61});
static_assert(posenc::mrope_pair_source(qwen3_vl, 62) == pair_source{0, 62});

// Pixtral (head_dim 64): height theta_0, theta_2, ..., width theta_1, theta_3, ...; the Qwen2-VL
// vision tower (head_dim 80): both axes theta_0, theta_2, ...
constexpr axial_rope_config pixtral{{64, 64, 10000.0, rope_layout::half}};
constexpr axial_rope_config qwen2_vl_vision{{80, 80, 10000.0, rope_layout::half},
                                            axial_frequencies::shared};
static_assert(pairs_per_stream<32>(pixtral, posenc::axial_pair_source) ==
              std::array<std::uint32_t, 3>{16, 16, 0});
static_assert(pairs_per_stream<40>(qwen2_vl_vision, posenc::axial_pair_source) ==
              std::array<std::uint32_t, 3>{20, 20, 0});
static_assert(posenc::axial_pair_source(pixtral, 15) == pair_source{0, 30});
static_assert(posenc::axial_pair_source(pixtral, 16) == pair_source{1, 1});
static_assert(posenc::axial_pair_source(pixtral, 31) == pair_source{1, 31});
static_assert(posenc::axial_pair_source(qwen2_vl_vision, 19) == pair_source{0, 38});
static_assert(posenc::axial_pair_source(qwen2_vl_vision, 20) == pair_source{1, 0});

// ---- the laws along one axis -----------------------------------------------------------------

// R_(p) of a multi-axis configuration as a block_rotation of one position m: the pairs fed by
// stream `axis` turn at m, the others at their fixed positions; entries rounded to float, as in a
// float table.
template <std::size_t Pairs>
struct axis_rotation {
  rope_config rope;
  std::array<pair_source, Pairs> sources;
  std::array<posenc::math::dd, Pairs> thetas;
  std::array<std::uint64_t, 3> fixed;
  std::uint32_t axis;

  struct block {
    posenc::math::dd theta;
    bool on_axis;
    std::uint64_t fixed_position;
    constexpr pa::block2 at(std::uint64_t m) const {
      const auto e = posenc::math::sincos_of_product<float>(on_axis ? m : fixed_position, theta);
      return {e.cos, -static_cast<double>(e.sin), e.sin, e.cos};
    }
  };

  constexpr std::uint32_t head_dim() const { return rope.head_dim; }
  constexpr std::uint32_t pairs() const { return rope.rotary_dim / 2; }
  constexpr posenc::channel_pair channels(std::uint32_t i) const {
    return posenc::pair_channels(rope, i);
  }
  constexpr block pair(std::uint32_t i) const {
    const pair_source s = sources[i];
    return {thetas[s.inv_freq_index], s.stream == axis, fixed[s.stream]};
  }
};

template <std::size_t Pairs, class Config, class Source>
constexpr axis_rotation<Pairs> along(const Config& c, Source source, std::uint32_t axis,
                                     std::array<std::uint64_t, 3> fixed) {
  axis_rotation<Pairs> r{c.rope, {}, pa::thetas_of<Pairs>(c.rope), fixed, axis};
  for (std::uint32_t i = 0; i < Pairs; ++i) r.sources[i] = source(c, i);
  return r;
}

// Small twins of the models above (R = 16, 8 pairs).
constexpr mrope_config contiguous_16{{16, 16, 1000000.0, rope_layout::half}, {2, 3, 3}};
constexpr mrope_config interleaved_16{
    {16, 16, 5000000.0, rope_layout::half}, {3, 3, 2}, mrope_layout::interleaved};
constexpr axial_rope_config alternating_16{{16, 16, 10000.0, rope_layout::half}};
constexpr axial_rope_config shared_16{{16, 16, 10000.0, rope_layout::half},
                                      axial_frequencies::shared};

constexpr std::array<double, 16> q{0.5,  -0.25, 0.75, 1.0, -0.5,  0.125,  0.375,  -0.875,
                                   0.25, 0.625, -1.0, 0.5, 0.875, -0.375, 0.0625, -0.125};
constexpr std::array<double, 16> k{-0.75, 0.5,   0.25,  -0.125, 1.0,  -0.625, 0.375,  0.5,
                                   -0.25, 0.875, 0.125, -0.5,   0.75, 0.0625, -0.375, 1.0};
constexpr double norm_q = pa::vector_norm(q), norm_k = pa::vector_norm(k);

// Every law along `axis`, at positions (m, n) and shifted by s, the other axes at `fixed`. (The
// block form R_m^T R_n = R_{n-m} does not fit: a pair held at a fixed position has R_m^T R_n = I,
// not its own block; the inner-product form covers both kinds of pair.)
template <class Rot>
constexpr bool laws_hold(const Rot& rot, std::uint64_t m, std::uint64_t n, std::uint64_t s) {
  return pa::orthogonality(rot, m) <= pa::orthogonality_tolerance<float>() &&
         pa::orthogonality(rot, n + s) <= pa::orthogonality_tolerance<float>() &&
         pa::norm_preservation(rot, m, q) <= pa::norm_tolerance<float>(16, norm_q) &&
         pa::relative_dependence(rot, m, n, s, q, k) <=
             pa::relative_tolerance<float>(16, norm_q, norm_k);
}

template <std::size_t Pairs, class Config, class Source>
constexpr bool laws_hold_on_every_axis(const Config& c, Source source, std::uint32_t axes) {
  constexpr std::array<std::uint64_t, 3> fixed{7, 300, 65535};
  for (std::uint32_t axis = 0; axis < axes; ++axis)
    if (!laws_hold(along<Pairs>(c, source, axis, fixed), 3, 1000, 99991)) return false;
  return true;
}

static_assert(laws_hold_on_every_axis<8>(contiguous_16, posenc::mrope_pair_source, 3));
static_assert(laws_hold_on_every_axis<8>(interleaved_16, posenc::mrope_pair_source, 3));
static_assert(laws_hold_on_every_axis<8>(alternating_16, posenc::axial_pair_source, 2));
static_assert(laws_hold_on_every_axis<8>(shared_16, posenc::axial_pair_source, 2));

// Counter-example: the same check on a rotation whose height pairs turn at m^2 instead of m (a
// stream that is not a position) finds a dependence on more than m - n.
struct squared_height_rotation {
  axis_rotation<8> t_axis;
  constexpr std::uint32_t head_dim() const { return t_axis.head_dim(); }
  constexpr std::uint32_t pairs() const { return t_axis.pairs(); }
  constexpr posenc::channel_pair channels(std::uint32_t i) const { return t_axis.channels(i); }
  struct block {
    axis_rotation<8>::block b;
    bool square;
    constexpr pa::block2 at(std::uint64_t m) const {
      return axis_rotation<8>::block{b.theta, true, 0}.at(square ? m * m : m);
    }
  };
  constexpr block pair(std::uint32_t i) const {
    return {t_axis.pair(i), t_axis.sources[i].stream == 1};
  }
};
static_assert(pa::relative_dependence(squared_height_rotation{along<8>(
                                          contiguous_16, posenc::mrope_pair_source, 0, {0, 0, 0})},
                                      3, 10, 5, q,
                                      k) > pa::relative_tolerance<float>(16, norm_q, norm_k));

// ---- compile-time rows == the per-entry definition -------------------------------------------

struct contiguous_spec {
  static constexpr mrope_config config = contiguous_16;
};
struct interleaved_spec {
  static constexpr mrope_config config = interleaved_16;
};
struct alternating_spec {
  static constexpr axial_rope_config config = alternating_16;
};

template <class Row, class Config, class Source, std::size_t Streams>
constexpr bool row_is_definition(const Row& row, const Config& c, Source source,
                                 const std::array<std::uint64_t, Streams>& p) {
  for (std::uint32_t i = 0; i < c.rope.rotary_dim / 2; ++i) {
    const auto e = posenc::multi_axis_entry<float>(c.rope, source(c, i), p);
    if (row.cos[i] != e.cos || row.sin[i] != e.sin) return false;
  }
  return true;
}
static_assert(row_is_definition(posenc::mrope_row_v<contiguous_spec, float, 5, 40, 4097>,
                                contiguous_16, posenc::mrope_pair_source,
                                std::array<std::uint64_t, 3>{5, 40, 4097}));
static_assert(row_is_definition(posenc::mrope_row_v<interleaved_spec, float, 5, 40, 4097>,
                                interleaved_16, posenc::mrope_pair_source,
                                std::array<std::uint64_t, 3>{5, 40, 4097}));
static_assert(row_is_definition(posenc::axial_row_v<alternating_spec, float, 17, 3>, alternating_16,
                                posenc::axial_pair_source, std::array<std::uint64_t, 2>{17, 3}));
// A row of equal positions is the 1-D row: with every stream at p, M-RoPE is RoPE (HF's text
// tokens, whose three position ids are equal).
static_assert(
    posenc::mrope_row_v<contiguous_spec, float, 9, 9, 9>.cos[7] ==
    posenc::math::sincos_of_product<float>(9, pa::thetas_of<8>(contiguous_16.rope)[7]).cos);

}  // namespace
