// A RoPE configuration: head_dim, rotary_dim, base, layout and a scaling, with HF transformers'
// parameter names (src/transformers/modeling_rope_utils.py) so that a config.json maps onto it
// field by field. The same struct describes a compile-time encoding (as the `config` member of a
// type, see spec/rope_spec.hpp) and a runtime one (validated by spec/validate.hpp).
#pragma once

#include <cstdint>
#include <span>

namespace posenc {

// Which channels form a rotation pair (docs/formulas.md §1).
enum class rope_layout : std::uint8_t {
  interleaved,  // (2i, 2i+1): RoFormer paper, GPT-J, Meta's reference LLaMA, ggml NORM
  half,         // (i, i + R/2): GPT-NeoX, HF Llama "rotate_half", ggml NEOX
};

// The two channels that one rotary pair turns together.
struct channel_pair {
  std::uint32_t first = 0;
  std::uint32_t second = 0;
};

// Channels of pair i < rotary_dim/2 (docs/formulas.md §1): interleaved (2i, 2i+1), half
// (i, i + R/2). The one definition of the layout; tables, kernels and laws all use it.
constexpr channel_pair pair_channels(rope_layout layout, std::uint32_t rotary_dim,
                                     std::uint32_t i) {
  if (layout == rope_layout::interleaved) return {2 * i, 2 * i + 1};
  return {i, i + rotary_dim / 2};
}

// HF rope_type.
enum class scaling_type : std::uint8_t { none, linear, ntk, dynamic, yarn, llama3, longrope };

// The names used by the command-line tool and the docs: "interleaved", "half"; and the scaling's
// name ("none" where HF says "default"; "ntk" for the NTK-aware base change).
constexpr const char* layout_name(rope_layout l) {
  return l == rope_layout::interleaved ? "interleaved" : "half";
}
constexpr const char* scaling_name(scaling_type t) {
  switch (t) {
    case scaling_type::none:
      return "none";
    case scaling_type::linear:
      return "linear";
    case scaling_type::ntk:
      return "ntk";
    case scaling_type::dynamic:
      return "dynamic";
    case scaling_type::yarn:
      return "yarn";
    case scaling_type::llama3:
      return "llama3";
    case scaling_type::longrope:
      return "longrope";
  }
  return "?";
}

// Every scaling's parameters in one literal struct (a field a scaling does not use is ignored).
// Build one with the helpers below rather than by hand.
struct rope_scaling {
  scaling_type type = scaling_type::none;
  double factor = 1.0;
  // yarn, llama3, longrope: the context the model was pre-trained with.
  std::uint32_t original_max_position_embeddings = 0;
  // dynamic, longrope: config.max_position_embeddings.
  std::uint32_t max_position_embeddings = 0;
  // yarn (HF defaults: beta_fast 32, beta_slow 1, truncate true).
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  bool truncate = true;
  // yarn: DeepSeek's pair; 0 means absent (HF treats 0 and None alike).
  double mscale = 0.0;
  double mscale_all_dim = 0.0;
  // yarn, longrope: an explicit attention_factor; 0 means "derive it" (HF: None).
  double attention_factor = 0.0;
  // llama3 (HF's documented defaults: 1 and 4).
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  // longrope: per-pair rescale factors, R/2 each (span over static storage for compile time).
  std::span<const double> short_factor{};
  std::span<const double> long_factor{};
};

namespace scaling {
constexpr rope_scaling none() { return {}; }
// inv_freq / factor (HF "linear", position interpolation).
constexpr rope_scaling linear(double factor) {
  rope_scaling s;
  s.type = scaling_type::linear;
  s.factor = factor;
  return s;
}
// Static NTK-aware: base * factor^(R/(R-2)).
constexpr rope_scaling ntk(double factor) {
  rope_scaling s;
  s.type = scaling_type::ntk;
  s.factor = factor;
  return s;
}
// HF dynamic NTK: the base grows once the sequence exceeds max_position_embeddings.
constexpr rope_scaling dynamic(double factor, std::uint32_t max_position_embeddings) {
  rope_scaling s;
  s.type = scaling_type::dynamic;
  s.factor = factor;
  s.max_position_embeddings = max_position_embeddings;
  return s;
}
constexpr rope_scaling yarn(double factor, std::uint32_t original_max_position_embeddings,
                            double beta_fast = 32.0, double beta_slow = 1.0, bool truncate = true,
                            double mscale = 0.0, double mscale_all_dim = 0.0,
                            double attention_factor = 0.0) {
  rope_scaling s;
  s.type = scaling_type::yarn;
  s.factor = factor;
  s.original_max_position_embeddings = original_max_position_embeddings;
  s.beta_fast = beta_fast;
  s.beta_slow = beta_slow;
  s.truncate = truncate;
  s.mscale = mscale;
  s.mscale_all_dim = mscale_all_dim;
  s.attention_factor = attention_factor;
  return s;
}
constexpr rope_scaling llama3(double factor, double low_freq_factor, double high_freq_factor,
                              std::uint32_t original_max_position_embeddings) {
  rope_scaling s;
  s.type = scaling_type::llama3;
  s.factor = factor;
  s.low_freq_factor = low_freq_factor;
  s.high_freq_factor = high_freq_factor;
  s.original_max_position_embeddings = original_max_position_embeddings;
  return s;
}
// factor = max_position_embeddings / original_max_position_embeddings (HF v5 and Phi-3).
constexpr rope_scaling longrope(std::span<const double> short_factor,
                                std::span<const double> long_factor,
                                std::uint32_t original_max_position_embeddings,
                                std::uint32_t max_position_embeddings,
                                double attention_factor = 0.0) {
  rope_scaling s;
  s.type = scaling_type::longrope;
  s.short_factor = short_factor;
  s.long_factor = long_factor;
  s.original_max_position_embeddings = original_max_position_embeddings;
  s.max_position_embeddings = max_position_embeddings;
  s.factor = original_max_position_embeddings == 0
                 ? 0.0
                 : static_cast<double>(max_position_embeddings) /
                       static_cast<double>(original_max_position_embeddings);
  s.attention_factor = attention_factor;
  return s;
}
}  // namespace scaling

struct rope_config {
  std::uint32_t head_dim = 0;
  std::uint32_t rotary_dim = 0;  // R <= head_dim, even; channels >= R pass through
  double base = 10000.0;         // HF rope_theta
  rope_layout layout = rope_layout::half;
  rope_scaling scaling{};
};

// Channels of pair i < c.rotary_dim/2 in c's layout.
constexpr channel_pair pair_channels(const rope_config& c, std::uint32_t i) {
  return pair_channels(c.layout, c.rotary_dim, i);
}

// HF's rotary width for a partial rotary factor: int(head_dim * factor), truncated
// (GPT-NeoX rotary_pct 0.25, Phi-2 0.4). Returns 0 for factors outside (0, 1].
constexpr std::uint32_t rotary_dim_from_factor(std::uint32_t head_dim, double partial_rotary_factor) {
  if (!(partial_rotary_factor > 0.0 && partial_rotary_factor <= 1.0)) return 0;
  return static_cast<std::uint32_t>(static_cast<double>(head_dim) * partial_rotary_factor);
}

}  // namespace posenc
