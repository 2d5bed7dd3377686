// Reading a Hugging Face transformers config.json into a config_draft (docs/formulas.md §2):
//   base          rope_parameters.rope_theta, else rope_theta, else rotary_emb_base (GPT-NeoX);
//                 unset means HF's default 10000
//   head_dim      qk_rope_head_dim (DeepSeek), else head_dim, else hidden_size /
//                 num_attention_heads (n_embd / n_head for GPT-J)
//   rotary width  rotary_dim (GPT-J), else partial_rotary_factor (in rope_parameters or top
//                 level), else rotary_pct (GPT-NeoX); unset means the whole head
//   layout        interleaved for model_type "gptj", "deepseek_v2" and "deepseek_v3", else left
//                 unset (half-split, HF's rotate_half)
//   scaling       rope_parameters (transformers v5), else rope_scaling, by "rope_type" or "type":
//                 default, linear, dynamic, yarn, llama3, longrope ("su" is an old name of it),
//                 and posenc's static "ntk"
//   max_position_embeddings and a top-level original_max_position_embeddings (Phi-3): for
//                 longrope the latter then sets factor = max / original, as HF v4 does.
// A JSON null counts as absent. YaRN's beta_fast and beta_slow follow HF's `or` (0 means default).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cli/draft.hpp"

namespace posenc::cli {

// The draft described by the JSON text `text`; `source` names it in error messages (the path).
// Throws cli_error (exit 1) with one line naming the file and the field at fault.
config_draft parse_hf_config(std::string_view text, std::string_view source);

// Default limits of a config.json: 16 MiB, nested at most 64 levels (--max-input-bytes,
// --max-depth). A config.json is a few levels deep and a few KiB; the limits bound the work on
// hostile input.
inline constexpr std::uint64_t max_config_bytes = std::uint64_t{16} << 20;
inline constexpr std::uint64_t max_config_depth = 64;

// The same for the file at `path` (at most max_bytes, nested at most max_depth levels).
config_draft load_hf_config(const std::string& path, std::uint64_t max_bytes = max_config_bytes,
                            std::uint64_t max_depth = max_config_depth);

}  // namespace posenc::cli
