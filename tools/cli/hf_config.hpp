// Reading a Hugging Face transformers config.json into a config_draft (docs/formulas.md §2):
//   base          rope_parameters.rope_theta, else rope_theta, else rotary_emb_base (GPT-NeoX);
//                 unset means HF's default 10000
//   head_dim      qk_rope_head_dim (DeepSeek), else head_dim, else hidden_size /
//                 num_attention_heads (n_embd / n_head for GPT-J)
//   rotary width  rotary_dim (GPT-J), else partial_rotary_factor (in rope_parameters or top
//                 level), else rotary_pct (GPT-NeoX); unset means the whole head
//   layout        rope_interleave (DeepSeek-V3) when present, else interleaved for model_type
//                 "gptj", "deepseek_v2" and "deepseek_v3", else left unset (half-split, HF's
//                 rotate_half)
//   scaling       rope_parameters (transformers v5), else rope_scaling, by "rope_type" or "type":
//                 default, linear, dynamic, yarn, llama3, longrope ("su" is an old name of it),
//                 and posenc's static "ntk"
//   max_position_embeddings and a top-level original_max_position_embeddings (Phi-3): for
//                 longrope the latter then sets factor = max / original, as HF v4 does.
// A JSON null counts as absent. YaRN's beta_fast and beta_slow follow HF's `or` (0 means default).
//
// Per layer type (transformers v5, src/transformers/modeling_rope_utils.py,
// RotaryEmbeddingConfigMixin.standardize_rope_params): a rope_parameters whose members are all
// objects (or null: layers without RoPE) holds one rope dict per layer type, e.g. Gemma 3's
// {"full_attention": {...}, "sliding_attention": {...}}; an entry without rope_theta takes the
// top-level one. v4 Gemma 3 (a top-level rope_local_base_freq) is read as v5 reads it
// (src/transformers/models/gemma3/configuration_gemma3.py, convert_rope_params_to_dict):
// full_attention = rope_scaling with rope_theta, sliding_attention = no scaling with
// rope_local_base_freq. source_options::layer_type picks the entry; with several and none picked
// the error lists them.
// A multimodal config whose model fields are under text_config (Gemma 3 4B and up) is read there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/draft.hpp"

namespace posenc::cli {

// What a config source read: the keys it used, the keys present but not used, and one warning
// line for each rope key that is present and not used ("posenc: warning: FILE: KEY ..."). A key
// is its dotted path in the file: "rope_parameters.full_attention.factor".
// `sources` labels each field of the draft with the keys it came from: "config FILE KEY"
// (--hf-config) or "gguf FILE KEY" (--gguf), several keys joined by ", ".
struct config_keys {
  std::vector<std::string> used;
  std::vector<std::string> unused;
  std::vector<std::string> warnings;
  draft_sources sources;
};

// How to read a config source: `layer_type` (--layer-type) picks one entry of a per-layer-type
// rope dict; empty means the only one.
struct source_options {
  std::string layer_type;
};

// The draft described by the JSON text `text`; `source` names it in error messages (the path).
// Throws cli_error with one line naming the file and the field at fault: exit 1, or exit 2 when
// the layer type is ambiguous or unknown (the message lists the file's layer types). `keys`, if
// given, receives what was read.
config_draft parse_hf_config(std::string_view text, std::string_view source,
                             const source_options& options = {}, config_keys* keys = nullptr);

// Default limits of a config.json: 16 MiB, nested at most 64 levels (--max-input-bytes,
// --max-depth). A config.json is a few levels deep and a few KiB; the limits bound the work on
// hostile input.
inline constexpr std::uint64_t max_config_bytes = std::uint64_t{16} << 20;
inline constexpr std::uint64_t max_config_depth = 64;

// The same for the file at `path` (at most max_bytes, nested at most max_depth levels).
config_draft load_hf_config(const std::string& path, std::uint64_t max_bytes = max_config_bytes,
                            std::uint64_t max_depth = max_config_depth,
                            const source_options& options = {}, config_keys* keys = nullptr);

// Llama-4's query temperature keys of a config.json (transformers
// src/transformers/models/llama4/configuration_llama4.py, Llama4TextConfig; applied in
// modeling_llama4.py Llama4TextAttention.forward): attn_temperature_tuning, read as a truth value
// as HF reads it (Llama-4-Scout's config.json writes 4), floor_scale and attn_scale (finite
// numbers), from the model object that load_hf_config reads (text_config when the file has one).
// Each is unset when absent or null; `*_key` is its dotted path ("text_config.floor_scale").
// Throws cli_error (exit 1) naming the key of a value of the wrong type.
struct temperature_keys {
  std::optional<bool> attn_temperature_tuning;
  std::optional<double> floor_scale;
  std::optional<double> attn_scale;
  std::string attn_temperature_tuning_key, floor_scale_key, attn_scale_key;
};
temperature_keys load_temperature_keys(const std::string& path,
                                       std::uint64_t max_bytes = max_config_bytes,
                                       std::uint64_t max_depth = max_config_depth);

}  // namespace posenc::cli
