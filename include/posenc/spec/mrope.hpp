// Multi-axis RoPE: M-RoPE (Qwen2-VL, Qwen2.5-VL: contiguous sections; Qwen3-VL: interleaved
// sections) and 2-D axial RoPE (Pixtral; the Qwen2-VL vision tower). Each rotary pair i of a 1-D
// rope_config is fed by one of several position streams (M-RoPE: temporal, height, width; axial:
// height, width) and turns at one of the 1-D configuration's frequencies; pair_source says which
// (docs/formulas.md, "Multi-axis RoPE"). The rules follow spec/rope.hpp's pattern: an error enum,
// message, satisfies, all_*_rules, validate, a concept and checked_mrope / checked_axial_rope,
// whose static_asserts carry the same messages.
#pragma once

#include <array>
#include <cstdint>

#include <posenc/spec/rope.hpp>
#include <posenc/spec/rules.hpp>

namespace posenc {

// The position streams of M-RoPE, in the order of mrope_section and of HF's position_ids[0..2].
enum class position_stream : std::uint8_t { temporal, height, width };
inline constexpr std::uint32_t mrope_streams = 3;
// 2-D axial RoPE's streams: 0 = height (row of the patch), 1 = width (column).
inline constexpr std::uint32_t axial_streams = 2;

constexpr const char* stream_name(position_stream s) {
  switch (s) {
    case position_stream::temporal:
      return "temporal";
    case position_stream::height:
      return "height";
    case position_stream::width:
      return "width";
  }
  return "?";
}

// How mrope_section's pair counts are laid over the pairs.
enum class mrope_layout : std::uint8_t {
  // [t t .. t h h .. h w w .. w]: section k is a run of pairs (HF Qwen2-VL / Qwen2.5-VL
  // apply_multimodal_rotary_pos_emb, which splits cos/sin by mrope_section * 2).
  contiguous,
  // [t h w t h w .. t t]: pair i is h when i % 3 == 1 and i < 3 mrope_section[1], w when
  // i % 3 == 2 and i < 3 mrope_section[2], t otherwise (HF Qwen3-VL apply_interleaved_mrope).
  interleaved,
};
constexpr const char* mrope_layout_name(mrope_layout l) {
  return l == mrope_layout::contiguous ? "contiguous" : "interleaved";
}
inline constexpr mrope_layout all_mrope_layouts[] = {mrope_layout::contiguous,
                                                     mrope_layout::interleaved};

// Which of the 1-D frequencies each axis of 2-D axial RoPE takes (R/4 pairs per axis, height
// first, width second, in the half layout of HF's rotate_half).
enum class axial_frequencies : std::uint8_t {
  // Both axes take theta_{2j}, j < R/4 (HF Qwen2-VL VisionRotaryEmbedding(head_dim / 2): its
  // base^(-2j/(R/2)) equals the 1-D base^(-2(2j)/R)).
  shared,
  // Height takes theta_{2j}, width theta_{2j+1} (HF PixtralRotaryEmbedding: freqs[::2] for h,
  // freqs[1::2] for w).
  alternating,
};
constexpr const char* axial_frequencies_name(axial_frequencies f) {
  return f == axial_frequencies::shared ? "shared" : "alternating";
}
inline constexpr axial_frequencies all_axial_frequencies[] = {axial_frequencies::shared,
                                                              axial_frequencies::alternating};

// M-RoPE: a 1-D rope_config (its inv_freq is shared by all streams: pair i turns at theta_i) and
// the pair count of each stream, temporal, height, width (HF rope_scaling.mrope_section; Qwen2-VL
// and Qwen2.5-VL [16, 24, 24], Qwen3-VL [24, 20, 20], both with rotary_dim 128).
struct mrope_config {
  rope_config rope{};
  std::array<std::uint32_t, 3> mrope_section{};
  mrope_layout section_layout = mrope_layout::contiguous;
};

// 2-D axial RoPE: a 1-D rope_config (rotary_dim R divisible by 4) whose pairs [0, R/4) follow the
// height stream and [R/4, R/2) the width stream.
struct axial_rope_config {
  rope_config rope{};
  axial_frequencies frequencies = axial_frequencies::alternating;
};

// Where pair i takes its angle from: the position of stream `stream` times inv_freq_dd(rope,
// inv_freq_index).
struct pair_source {
  std::uint32_t stream = 0;
  std::uint32_t inv_freq_index = 0;
  friend constexpr bool operator==(const pair_source&, const pair_source&) = default;
};

// ---- rules -----------------------------------------------------------------------------------

enum class mrope_error : std::uint8_t {
  ok,
  rope,
  mrope_section_value,
  mrope_section_sum,
  mrope_section_interleave,
};

constexpr const char* message(mrope_error e) {
  switch (e) {
    case mrope_error::ok:
      return "posenc: ok";
    case mrope_error::rope:
      return "posenc: the rope config of an M-RoPE config breaks a rule (validate(c.rope) names "
             "it)";
    case mrope_error::mrope_section_value:
      return "posenc: every mrope_section entry must be > 0";
    case mrope_error::mrope_section_sum:
      return "posenc: mrope_section must sum to rotary_dim/2";
    case mrope_error::mrope_section_interleave:
      return "posenc: interleaved mrope_section needs 3*mrope_section[1] <= rotary_dim/2 + 1 and "
             "3*mrope_section[2] <= rotary_dim/2";
  }
  return "posenc: unknown error";
}

constexpr bool satisfies(const mrope_config& c, mrope_error e) {
  const auto& s = c.mrope_section;
  const std::uint64_t pairs = c.rope.rotary_dim / 2;
  switch (e) {
    case mrope_error::ok:
      return true;
    case mrope_error::rope:
      return validate(c.rope) == rope_error::ok;
    case mrope_error::mrope_section_value:
      return s[0] > 0 && s[1] > 0 && s[2] > 0;
    case mrope_error::mrope_section_sum:
      return std::uint64_t{s[0]} + s[1] + s[2] == pairs;
    case mrope_error::mrope_section_interleave:
      // Stream k of the interleave takes pairs k, k + 3, ... below 3 s[k]: s[k] of them exactly
      // when the last one, 3 s[k] - 3 + k, is a pair.
      return c.section_layout != mrope_layout::interleaved ||
             (3 * std::uint64_t{s[1]} <= pairs + 1 && 3 * std::uint64_t{s[2]} <= pairs);
  }
  return false;
}

inline constexpr mrope_error all_mrope_rules[] = {
    mrope_error::rope,
    mrope_error::mrope_section_value,
    mrope_error::mrope_section_sum,
    mrope_error::mrope_section_interleave,
};

constexpr mrope_error validate(const mrope_config& c) {
  return spec_detail::first_broken_rule(c, all_mrope_rules);
}

enum class axial_rope_error : std::uint8_t {
  ok,
  rope,
  rotary_dim,
};

constexpr const char* message(axial_rope_error e) {
  switch (e) {
    case axial_rope_error::ok:
      return "posenc: ok";
    case axial_rope_error::rope:
      return "posenc: the rope config of a 2-D axial RoPE config breaks a rule (validate(c.rope) "
             "names it)";
    case axial_rope_error::rotary_dim:
      return "posenc: 2-D axial RoPE needs rotary_dim divisible by 4 (rotary_dim/4 pairs per axis)";
  }
  return "posenc: unknown error";
}

constexpr bool satisfies(const axial_rope_config& c, axial_rope_error e) {
  switch (e) {
    case axial_rope_error::ok:
      return true;
    case axial_rope_error::rope:
      return validate(c.rope) == rope_error::ok;
    case axial_rope_error::rotary_dim:
      return c.rope.rotary_dim % 4 == 0;
  }
  return false;
}

inline constexpr axial_rope_error all_axial_rope_rules[] = {
    axial_rope_error::rope,
    axial_rope_error::rotary_dim,
};

constexpr axial_rope_error validate(const axial_rope_config& c) {
  return spec_detail::first_broken_rule(c, all_axial_rope_rules);
}

// ---- which stream feeds each pair ------------------------------------------------------------

// The source of pair i < rotary_dim/2 of a valid M-RoPE config: stream by section, frequency
// theta_i (one inv_freq for all streams, as HF's Qwen2VLRotaryEmbedding and vLLM's
// MRotaryEmbedding compute it).
constexpr pair_source mrope_pair_source(const mrope_config& c, std::uint32_t i) {
  const auto& s = c.mrope_section;
  if (c.section_layout == mrope_layout::interleaved) {
    if (i % 3 == 1 && i < 3 * s[1]) return {1, i};
    if (i % 3 == 2 && i < 3 * s[2]) return {2, i};
    return {0, i};
  }
  if (i < s[0]) return {0, i};
  if (i < s[0] + s[1]) return {1, i};
  return {2, i};
}

// The source of pair i < rotary_dim/2 of a valid axial config: height below R/4, width from it.
constexpr pair_source axial_pair_source(const axial_rope_config& c, std::uint32_t i) {
  const std::uint32_t quarter = c.rope.rotary_dim / 4;
  const std::uint32_t stream = i < quarter ? 0 : 1;
  const std::uint32_t j = i - stream * quarter;
  const std::uint32_t odd = c.frequencies == axial_frequencies::alternating ? stream : 0;
  return {stream, 2 * j + odd};
}

// ---- compile-time specs ----------------------------------------------------------------------

template <class S>
concept mrope_spec = spec_detail::spec_of<S, mrope_config>;
template <class S>
concept axial_rope_spec = spec_detail::spec_of<S, axial_rope_config>;

namespace spec_detail {
template <mrope_spec S>
struct mrope_spec_check {
  static constexpr mrope_config c = S::config;
  // One static_assert per rule; the messages equal message(mrope_error::...).
  static_assert(satisfies(c, mrope_error::rope),
                "posenc: the rope config of an M-RoPE config breaks a rule (validate(c.rope) "
                "names it)");
  static_assert(satisfies(c, mrope_error::mrope_section_value),
                "posenc: every mrope_section entry must be > 0");
  static_assert(satisfies(c, mrope_error::mrope_section_sum),
                "posenc: mrope_section must sum to rotary_dim/2");
  static_assert(satisfies(c, mrope_error::mrope_section_interleave),
                "posenc: interleaved mrope_section needs 3*mrope_section[1] <= rotary_dim/2 + 1 "
                "and 3*mrope_section[2] <= rotary_dim/2");
  static constexpr bool valid = validate(c) == mrope_error::ok;
};

template <axial_rope_spec S>
struct axial_rope_spec_check {
  static constexpr axial_rope_config c = S::config;
  static_assert(
      satisfies(c, axial_rope_error::rope),
      "posenc: the rope config of a 2-D axial RoPE config breaks a rule (validate(c.rope) "
      "names it)");
  static_assert(satisfies(c, axial_rope_error::rotary_dim),
                "posenc: 2-D axial RoPE needs rotary_dim divisible by 4 (rotary_dim/4 pairs per "
                "axis)");
  static constexpr bool valid = validate(c) == axial_rope_error::ok;
};
}  // namespace spec_detail

// S::config, validated at compile time (a broken rule stops compilation with its message; for a
// broken rope part, checked_rope on a spec of c.rope names the rope rule).
template <mrope_spec S>
inline constexpr mrope_config checked_mrope =
    spec_detail::checked_form<spec_detail::mrope_spec_check<S>>;
template <axial_rope_spec S>
inline constexpr axial_rope_config checked_axial_rope =
    spec_detail::checked_form<spec_detail::axial_rope_spec_check<S>>;

}  // namespace posenc
