// posenc layers: the per-layer plan of a model (posenc/spec/layer_plan.hpp, docs/layers.md), from
// a model preset (--preset, presets::models) or a config.json (--hf-config).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <vector>

#include <posenc/spec/layer_plan.hpp>

#include "cli/draft.hpp"
#include "cli/options.hpp"

namespace posenc::cli {

// A model_config whose rope parts (and the layer lists its spans view) are owned here: keep the
// object alive while model() is used.
class model_source {
 public:
  model_source() = default;
  model_source(const model_source&) = delete;
  model_source& operator=(const model_source&) = delete;
  const model_config& model() const { return model_; }
  // The global rope configuration with each value's source, and the file's keys (docs/cli.md,
  // "What was computed").
  const config_echo& echo() const { return echo_; }

 private:
  friend void read_model(const invocation& inv, model_source& out);
  model_config model_{};
  std::optional<resolved_config> rope_;  // the rope part (longrope factor lists)
  std::vector<attention_type> layer_types_;
  std::vector<std::uint8_t> no_rope_layers_;
  config_echo echo_;
};

// The model of --preset NAME (a model preset) or of --hf-config FILE: the rope part as the other
// commands read it (the full-attention entry when the file's rope parameters differ by layer
// type), and the per-layer keys of the model, with HF's config-class defaults for Gemma-3
// (rope_local_base_freq 10000, sliding_window_pattern 6, sliding_window 4096) and Llama-4
// (no_rope_layer_interval 4, attention_chunk_size 8192, attn_temperature_tuning true,
// floor_scale 8192, attn_scale 0.1). Throws cli_error: exit 2 for an unknown preset, exit 1 for a
// file whose keys are missing or break a rule.
void read_model(const invocation& inv, model_source& out);

// The plan: the distinct tables, then one row per layer (json, csv or text).
void write_layers(std::ostream& out, const model_config& m, output_format f,
                  const config_echo& echo);

int run_layers(const invocation& inv, std::ostream& out);

}  // namespace posenc::cli
