// Per-layer encodings of a model: which positional encoding each decoder layer applies, and the
// distinct rotary tables an engine builds once for all of them (docs/layers.md).
//
// - Gemma-3 (HF models/gemma3/configuration_gemma3.py, modeling_gemma3.py): a layer is
//   sliding-window ("sliding_attention") or global ("full_attention"), listed in HF v5's
//   `layer_types` or, in older configs, derived from `sliding_window_pattern`: layer i is global
//   iff (i + 1) % pattern == 0. Global layers rotate with rope_theta and rope_scaling (linear 8
//   on 4B/12B/27B); sliding layers with rope_local_base_freq and no scaling (HF's
//   compute_default_rope_parameters for layer_type "sliding_attention").
// - Llama-4 (HF models/llama4/configuration_llama4.py, modeling_llama4.py): `no_rope_layers[i]`
//   is 1 when layer i applies RoPE (Llama4TextAttention: use_rope = no_rope_layers[layer_idx])
//   and 0 for a NoPE layer; when the list is empty HF derives it as
//   int((i + 1) % no_rope_layer_interval != 0), so every 4th layer is NoPE. RoPE layers attend
//   within chunks of attention_chunk_size ("chunked_attention"), NoPE layers to everything; the
//   query temperature (attn_temperature_tuning, floor_scale, attn_scale) applies on NoPE layers
//   only (Llama4TextAttention.forward: `if self.attn_temperature_tuning and not self.use_rope`).
// - M-RoPE and 2-D axial models rotate every layer the same way; their table is the 1-D table of
//   the rope part, whose rows the multi-axis maps gather (spec/mrope.hpp).
//
// The rules follow spec/rope.hpp's pattern: model_error, message, satisfies, all_model_rules,
// validate, the model_spec concept and checked_model<S>, whose static_asserts carry the same
// messages; layer_v<S, I> stops compilation for a layer index past the model.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

#include <posenc/math/detail/fp_bits.hpp>
#include <posenc/spec/mrope.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/spec/rules.hpp>

namespace posenc {

// HF's layer_types values.
enum class attention_type : std::uint8_t { full_attention, sliding_attention, chunked_attention };
constexpr const char* attention_type_name(attention_type a) {
  switch (a) {
    case attention_type::full_attention:
      return "full_attention";
    case attention_type::sliding_attention:
      return "sliding_attention";
    case attention_type::chunked_attention:
      return "chunked_attention";
  }
  return "?";
}

// What rotates a layer's queries and keys.
enum class layer_encoding : std::uint8_t { rope, mrope, axial_rope, nope };
constexpr const char* layer_encoding_name(layer_encoding e) {
  switch (e) {
    case layer_encoding::rope:
      return "rope";
    case layer_encoding::mrope:
      return "mrope";
    case layer_encoding::axial_rope:
      return "axial_rope";
    case layer_encoding::nope:
      return "nope";
  }
  return "?";
}

// The rotary form of a model's RoPE layers.
enum class rotary_form : std::uint8_t { one_d, mrope, axial };

// The positional part of a model's config.json. Unset per-layer keys (0, empty) mean "every layer
// the same": all layers full attention with RoPE from `rope`.
struct model_config {
  std::uint32_t num_hidden_layers = 0;
  // rope_theta and rope_scaling (the rotary part: head_dim, rotary_dim, layout): every RoPE
  // layer, or the global ones where sliding layers have their own base.
  rope_config rope{};
  rotary_form form = rotary_form::one_d;
  std::array<std::uint32_t, 3> mrope_section{};  // form mrope
  mrope_layout section_layout = mrope_layout::contiguous;
  axial_frequencies frequencies = axial_frequencies::alternating;  // form axial
  // Gemma-3's sliding layers.
  std::uint32_t sliding_window = 0;
  std::uint32_t sliding_window_pattern = 0;       // 0: none
  double rope_local_base_freq = 0.0;              // 0: sliding layers rotate as `rope`
  std::span<const attention_type> layer_types{};  // non-empty: overrides sliding_window_pattern
  // Llama-4's NoPE layers, chunked attention and query temperature.
  std::uint32_t no_rope_layer_interval = 0;        // 0: none
  std::span<const std::uint8_t> no_rope_layers{};  // non-empty: overrides the interval
  std::uint32_t attention_chunk_size = 0;
  bool attn_temperature_tuning = false;
  double floor_scale = 8192.0;  // HF Llama4TextConfig defaults
  double attn_scale = 0.1;
};

// One layer of the plan. `table` indexes layer_tables::rope (no_table for NoPE layers).
inline constexpr std::uint32_t no_table = 0xffffffffu;
struct layer_spec {
  layer_encoding encoding = layer_encoding::rope;
  attention_type attention = attention_type::full_attention;
  std::uint32_t table = 0;
  bool temperature_tuning = false;
  friend constexpr bool operator==(const layer_spec&, const layer_spec&) = default;
};

// The distinct 1-D rotary configurations of a model, in the order their first layer appears
// (Gemma-3: the sliding layers' table first, layer 0; then the global one, layer 5).
inline constexpr std::size_t max_layer_tables = 2;
struct layer_tables {
  std::array<rope_config, max_layer_tables> rope{};
  std::uint32_t count = 0;
};

// ---- rules -----------------------------------------------------------------------------------

enum class model_error : std::uint8_t {
  ok,
  num_hidden_layers,
  rope,
  multi_axis,
  rope_local_base_freq,
  layer_types_length,
  no_rope_layers_length,
  no_rope_layers_value,
  attention_window,
  attention_temperature,
};

constexpr const char* message(model_error e) {
  switch (e) {
    case model_error::ok:
      return "posenc: ok";
    case model_error::num_hidden_layers:
      return "posenc: num_hidden_layers must be > 0";
    case model_error::rope:
      return "posenc: the rope config of a model breaks a rule (validate(m.rope) names it)";
    case model_error::multi_axis:
      return "posenc: the M-RoPE or 2-D axial part of a model breaks a rule (validate of its "
             "mrope_config or axial_rope_config names it)";
    case model_error::rope_local_base_freq:
      return "posenc: rope_local_base_freq must be 0 (unused) or a valid base (finite, > 1)";
    case model_error::layer_types_length:
      return "posenc: layer_types must be empty or have num_hidden_layers entries";
    case model_error::no_rope_layers_length:
      return "posenc: no_rope_layers must be empty or have num_hidden_layers entries";
    case model_error::no_rope_layers_value:
      return "posenc: no_rope_layers entries must be 0 (NoPE) or 1 (RoPE)";
    case model_error::attention_window:
      return "posenc: sliding layers need sliding_window > 0 and chunked layers "
             "attention_chunk_size > 0";
    case model_error::attention_temperature:
      return "posenc: attn_temperature_tuning needs finite floor_scale > 0 and attn_scale >= 0";
  }
  return "posenc: unknown error";
}

namespace spec_detail {
constexpr bool pattern_global(const model_config& m, std::uint32_t i) {
  return m.sliding_window_pattern == 0 || (i + 1) % m.sliding_window_pattern == 0;
}
}  // namespace spec_detail

// Layer i's attention (i < num_hidden_layers of a model whose lists have the right length).
constexpr attention_type layer_attention(const model_config& m, std::uint32_t i);

// Whether layer i applies a rotation (Llama-4: no_rope_layers[i] == 1, or the interval rule).
constexpr bool layer_uses_rope(const model_config& m, std::uint32_t i) {
  if (!m.no_rope_layers.empty()) return m.no_rope_layers[i] != 0;
  return m.no_rope_layer_interval == 0 || (i + 1) % m.no_rope_layer_interval != 0;
}

constexpr attention_type layer_attention(const model_config& m, std::uint32_t i) {
  if (!m.layer_types.empty()) return m.layer_types[i];
  if (m.attention_chunk_size > 0 && layer_uses_rope(m, i)) return attention_type::chunked_attention;
  if (m.sliding_window_pattern > 0 && !spec_detail::pattern_global(m, i))
    return attention_type::sliding_attention;
  return attention_type::full_attention;
}

// The rotary configuration of sliding layers when rope_local_base_freq is set: the rope part
// with that base and no scaling (HF Gemma-3: rope_type "default" for "sliding_attention").
constexpr rope_config local_rope(const model_config& m) {
  rope_config c = m.rope;
  c.base = m.rope_local_base_freq;
  c.scaling = scaling::none();
  return c;
}

namespace spec_detail {
// Whether layer i rotates with local_rope(m) rather than m.rope: a sliding layer of a model with
// rope_local_base_freq, unless that configuration is m.rope itself.
constexpr bool uses_local_rope(const model_config& m, std::uint32_t i) {
  const bool same_as_global =
      m.rope.scaling.type == scaling_type::none && m.rope_local_base_freq == m.rope.base;
  return m.rope_local_base_freq != 0.0 && !same_as_global &&
         layer_attention(m, i) == attention_type::sliding_attention;
}
}  // namespace spec_detail

// The 1-D configuration layer i rotates with (meaningful when layer_uses_rope(m, i)).
constexpr rope_config layer_rope(const model_config& m, std::uint32_t i) {
  return spec_detail::uses_local_rope(m, i) ? local_rope(m) : m.rope;
}

// The multi-axis parts, for forms mrope and axial.
constexpr mrope_config mrope_of(const model_config& m) {
  return {m.rope, m.mrope_section, m.section_layout};
}
constexpr axial_rope_config axial_of(const model_config& m) {
  return {m.rope, m.frequencies};
}

constexpr bool satisfies(const model_config& m, model_error e) {
  using math::detail::is_finite;
  const std::uint32_t n = m.num_hidden_layers;
  switch (e) {
    case model_error::ok:
      return true;
    case model_error::num_hidden_layers:
      return n > 0;
    case model_error::rope:
      return validate(m.rope) == rope_error::ok;
    case model_error::multi_axis:
      if (m.form == rotary_form::mrope) return validate(mrope_of(m)) == mrope_error::ok;
      if (m.form == rotary_form::axial) return validate(axial_of(m)) == axial_rope_error::ok;
      return true;
    case model_error::rope_local_base_freq:
      return m.rope_local_base_freq == 0.0 ||
             (is_finite(m.rope_local_base_freq) && validate(local_rope(m)) == rope_error::ok);
    case model_error::layer_types_length:
      return m.layer_types.empty() || m.layer_types.size() == n;
    case model_error::no_rope_layers_length:
      return m.no_rope_layers.empty() || m.no_rope_layers.size() == n;
    case model_error::no_rope_layers_value:
      for (std::uint8_t v : m.no_rope_layers)
        if (v > 1) return false;
      return true;
    case model_error::attention_window:
      // Holds trivially while a list has the wrong length (that rule comes first).
      if (!m.layer_types.empty() && m.layer_types.size() != n) return true;
      if (!m.no_rope_layers.empty() && m.no_rope_layers.size() != n) return true;
      for (std::uint32_t i = 0; i < n; ++i) {
        const attention_type a = layer_attention(m, i);
        if (a == attention_type::sliding_attention && m.sliding_window == 0) return false;
        if (a == attention_type::chunked_attention && m.attention_chunk_size == 0) return false;
      }
      return true;
    case model_error::attention_temperature:
      return !m.attn_temperature_tuning || (is_finite(m.floor_scale) && m.floor_scale > 0.0 &&
                                            is_finite(m.attn_scale) && m.attn_scale >= 0.0);
  }
  return false;
}

inline constexpr model_error all_model_rules[] = {
    model_error::num_hidden_layers,
    model_error::rope,
    model_error::multi_axis,
    model_error::rope_local_base_freq,
    model_error::layer_types_length,
    model_error::no_rope_layers_length,
    model_error::no_rope_layers_value,
    model_error::attention_window,
    model_error::attention_temperature,
};

constexpr model_error validate(const model_config& m) {
  return spec_detail::first_broken_rule(m, all_model_rules);
}

// ---- the plan --------------------------------------------------------------------------------

// The distinct tables of a valid model, in the order of their first layer. There are at most two:
// m.rope and local_rope(m).
constexpr layer_tables distinct_tables(const model_config& m) {
  layer_tables t;
  bool seen[2] = {false, false};  // m.rope, local_rope(m)
  for (std::uint32_t i = 0; i < m.num_hidden_layers; ++i) {
    if (!layer_uses_rope(m, i)) continue;
    const bool local = spec_detail::uses_local_rope(m, i);
    if (seen[local]) continue;
    seen[local] = true;
    t.rope[t.count++] = local ? local_rope(m) : m.rope;
  }
  return t;
}

// Layer i < num_hidden_layers of a valid model, its table an index into distinct_tables(m).
constexpr layer_spec layer_at(const model_config& m, std::uint32_t i) {
  layer_spec s;
  s.attention = layer_attention(m, i);
  if (!layer_uses_rope(m, i)) {
    s.encoding = layer_encoding::nope;
    s.table = no_table;
    s.temperature_tuning = m.attn_temperature_tuning;
    return s;
  }
  s.encoding = m.form == rotary_form::mrope   ? layer_encoding::mrope
               : m.form == rotary_form::axial ? layer_encoding::axial_rope
                                              : layer_encoding::rope;
  // The table's index: how many distinct kinds appear before the first layer of this one.
  const bool local = spec_detail::uses_local_rope(m, i);
  for (std::uint32_t j = 0; j < m.num_hidden_layers; ++j) {
    if (!layer_uses_rope(m, j)) continue;
    if (spec_detail::uses_local_rope(m, j) == local) break;
    s.table = 1;  // the other kind came first
    break;
  }
  return s;
}

// The run-time lookup: layer_index when i is past the model, the model's first broken rule, or ok
// with `out` written (nothing is written otherwise).
enum class layer_lookup_error : std::uint8_t { ok, model, layer_index };
constexpr const char* message(layer_lookup_error e) {
  switch (e) {
    case layer_lookup_error::ok:
      return "posenc: ok";
    case layer_lookup_error::model:
      return "posenc: the model config breaks a rule (validate(m) names it)";
    case layer_lookup_error::layer_index:
      return "posenc: layer index past the model's num_hidden_layers";
  }
  return "posenc: unknown error";
}
constexpr layer_lookup_error find_layer(const model_config& m, std::uint64_t i, layer_spec& out) {
  if (validate(m) != model_error::ok) return layer_lookup_error::model;
  if (i >= m.num_hidden_layers) return layer_lookup_error::layer_index;
  out = layer_at(m, static_cast<std::uint32_t>(i));
  return layer_lookup_error::ok;
}

// ---- compile-time specs ----------------------------------------------------------------------

// A type with `static constexpr model_config model` (the presets of spec/presets.hpp).
template <class S>
concept model_spec = requires {
  { S::model } -> std::convertible_to<model_config>;
};

namespace spec_detail {
template <model_spec S>
struct model_spec_check {
  static constexpr model_config c = S::model;
  static_assert(satisfies(c, model_error::num_hidden_layers),
                "posenc: num_hidden_layers must be > 0");
  static_assert(satisfies(c, model_error::rope),
                "posenc: the rope config of a model breaks a rule (validate(m.rope) names it)");
  static_assert(satisfies(c, model_error::multi_axis),
                "posenc: the M-RoPE or 2-D axial part of a model breaks a rule (validate of its "
                "mrope_config or axial_rope_config names it)");
  static_assert(satisfies(c, model_error::rope_local_base_freq),
                "posenc: rope_local_base_freq must be 0 (unused) or a valid base (finite, > 1)");
  static_assert(satisfies(c, model_error::layer_types_length),
                "posenc: layer_types must be empty or have num_hidden_layers entries");
  static_assert(satisfies(c, model_error::no_rope_layers_length),
                "posenc: no_rope_layers must be empty or have num_hidden_layers entries");
  static_assert(satisfies(c, model_error::no_rope_layers_value),
                "posenc: no_rope_layers entries must be 0 (NoPE) or 1 (RoPE)");
  static_assert(satisfies(c, model_error::attention_window),
                "posenc: sliding layers need sliding_window > 0 and chunked layers "
                "attention_chunk_size > 0");
  static_assert(satisfies(c, model_error::attention_temperature),
                "posenc: attn_temperature_tuning needs finite floor_scale > 0 and attn_scale >= 0");
  static constexpr bool valid = validate(c) == model_error::ok;
};

template <model_spec S, std::uint32_t I>
struct layer_index_check {
  static_assert(I < S::model.num_hidden_layers,
                "posenc: layer index past the model's num_hidden_layers");
  static constexpr bool valid = true;
};
}  // namespace spec_detail

// S::model, validated at compile time.
template <model_spec S>
inline constexpr model_config checked_model =
    (static_cast<void>(spec_detail::model_spec_check<S>::valid), S::model);

// Layer I of S; a layer index past the model stops compilation with its message.
template <model_spec S, std::uint32_t I>
inline constexpr layer_spec layer_v =
    (static_cast<void>(spec_detail::layer_index_check<S, I>::valid), layer_at(checked_model<S>, I));

// The distinct tables of S, evaluated once.
template <model_spec S>
inline constexpr layer_tables layer_tables_v = distinct_tables(checked_model<S>);

// Table K of S as a rope spec (usable with rope_cache_v, inv_freq_v): K past the model's distinct
// tables stops compilation.
template <model_spec S, std::uint32_t K>
struct layer_table_spec {
  static_assert(K < layer_tables_v<S>.count,
                "posenc: table index past the model's distinct tables");
  static constexpr rope_config config = layer_tables_v<S>.rope[K < max_layer_tables ? K : 0];
};

}  // namespace posenc
