#include "cli/layers.hpp"

#include <cmath>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <posenc/frequencies/rope.hpp>

#include "cli/error.hpp"
#include "cli/hf_config.hpp"
#include "cli/input_file.hpp"
#include "cli/output.hpp"

#if POSENC_CLI_PRESETS
#include <posenc/spec/select.hpp>
#endif

namespace posenc::cli {

namespace {

using json = nlohmann::json;

#if POSENC_CLI_PRESETS
const model_config& preset_model(std::string_view name) {
  if (const model_config* m = find_model_preset(name)) return *m;
  if (find_preset(name) != nullptr)
    usage_error("posenc: layers: preset '" + printable(name) +
                "' is one rope configuration without a layer count; model presets: " +
                model_preset_names_joined(", "));
  usage_error("posenc: layers: unknown model preset '" + printable(name) +
              "'; model presets: " + model_preset_names_joined(", "));
}
#else
const model_config& preset_model(std::string_view) {
  usage_error("posenc: this build has no presets (they need Boost.Hana at build time)");
}
#endif

// The per-layer keys of a config.json's model object (text_config when there is one).
class model_keys {
 public:
  model_keys(const json& model, std::string source, std::string prefix)
      : m_(model), source_(std::move(source)), prefix_(std::move(prefix)) {}

  const json* find(const char* key) const {
    const auto it = m_.find(key);
    return it == m_.end() || it->is_null() ? nullptr : &*it;
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    invalid("posenc: " + source_ + ": " + prefix_ + key + " " + what);
  }
  std::optional<std::uint32_t> count(const char* key) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number_integer() || v->get<std::int64_t>() < 0 ||
        v->get<std::int64_t>() > 0xffffffffll)
      fail(key, "must be an integer in [0, 2^32)");
    return static_cast<std::uint32_t>(v->get<std::int64_t>());
  }
  std::optional<double> number(const char* key) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number()) fail(key, "must be a number");
    return v->get<double>();
  }
  // HF reads attn_temperature_tuning as a truth value (Llama-4 Scout's config.json writes 4).
  std::optional<bool> truth(const char* key) const {
    const json* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (v->is_boolean()) return v->get<bool>();
    if (v->is_number()) return v->get<double>() != 0.0;
    fail(key, "must be a boolean or a number");
  }
  std::string path(const char* key) const { return prefix_ + key; }
  std::string model_type() const {
    const json* v = find("model_type");
    return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
  }

 private:
  const json& m_;
  std::string source_;
  std::string prefix_;
};

attention_type attention_of(const model_keys& k, const json& v, std::size_t i) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    for (attention_type a : {attention_type::full_attention, attention_type::sliding_attention,
                             attention_type::chunked_attention})
      if (s == attention_type_name(a)) return a;
  }
  k.fail("layer_types[" + std::to_string(i) + "]",
         "must be \"full_attention\", \"sliding_attention\" or \"chunked_attention\"");
}

// The keys read here, besides the rope part.
constexpr const char* per_layer_keys[] = {"num_hidden_layers",
                                          "sliding_window",
                                          "sliding_window_pattern",
                                          "rope_local_base_freq",
                                          "layer_types",
                                          "no_rope_layers",
                                          "no_rope_layer_interval",
                                          "attention_chunk_size",
                                          "attn_temperature_tuning",
                                          "floor_scale",
                                          "attn_scale"};

// Whether the file's rope parameters differ by layer type as the full/sliding pair (v4 Gemma-3's
// rope_local_base_freq, or v5 rope_parameters keyed by layer type).
bool per_layer_type_rope(const json& model) {
  if (model.contains("rope_local_base_freq") && !model["rope_local_base_freq"].is_null())
    return true;
  const auto it = model.find("rope_parameters");
  return it != model.end() && it->is_object() && it->contains("full_attention") &&
         (*it)["full_attention"].is_object();
}

// The echo of a model's multi-axis form: M-RoPE's section and layout, or 2-D axial RoPE's
// frequencies (nothing for 1-D RoPE).
void echo_multi_axis(config_echo& echo, const model_config& m, const std::string& section_source,
                     const std::string& layout_source) {
  if (m.form == rotary_form::mrope)
    echo_mrope(echo, m.mrope_section, m.section_layout == mrope_layout::interleaved, section_source,
               layout_source);
  if (m.form == rotary_form::axial)
    echo.set_text("axial_frequencies", axial_frequencies_name(m.frequencies), section_source);
}

// The plan's multi-axis part: null for 1-D RoPE, else the form and its parameters.
std::string multi_axis_json(const model_config& m) {
  if (m.form == rotary_form::mrope)
    return "{\"form\": \"mrope\", \"mrope_section\": [" + std::to_string(m.mrope_section[0]) +
           ", " + std::to_string(m.mrope_section[1]) + ", " + std::to_string(m.mrope_section[2]) +
           "], \"mrope_interleaved\": " + json_bool(m.section_layout == mrope_layout::interleaved) +
           "}";
  if (m.form == rotary_form::axial)
    return std::string("{\"form\": \"axial_rope\", \"axial_frequencies\": \"") +
           axial_frequencies_name(m.frequencies) + "\"}";
  return "null";
}

}  // namespace

void read_model(const invocation& inv, model_source& out) {
  if (inv.preset) {
    out.model_ = preset_model(*inv.preset);
    // The echo of the global rope configuration, every value the preset's.
    const std::string label = "preset " + printable(*inv.preset);
    const config_draft d = draft_from_config(out.model_.rope);
    out.echo_ = resolve(d, label_fields(d, label)).echo;
    if (out.model_.rope_local_base_freq != 0.0)
      out.echo_.set_number("rope_local_base_freq", out.model_.rope_local_base_freq, label);
    echo_multi_axis(out.echo_, out.model_, label, label);
    return;
  }
  const std::string& path = *inv.hf_config;
  const std::string source = printable(path);
  const std::uint64_t max_bytes = inv.max_input_bytes.value_or(max_config_bytes);
  const std::uint64_t max_depth = inv.max_depth.value_or(max_config_depth);
  const json root = parse_json_file(
      path, max_bytes, byte_limit_text(max_bytes, max_config_bytes, "16 MiB"),
      [&](int depth, json::parse_event_t, json&) {
        if (static_cast<std::uint64_t>(depth) > max_depth)
          invalid("posenc: " + source + ": nested deeper than " + std::to_string(max_depth) +
                  " levels; raise the limit with --max-depth N");
        return true;
      });
  const bool text = root.contains("text_config") && root["text_config"].is_object();
  const json& model = text ? root["text_config"] : root;
  const model_keys k(model, source, text ? "text_config." : "");

  // The rope part, as every command reads it: the full-attention entry where the file has one
  // per layer type, and that entry's sliding twin for the local base.
  const bool per_type = per_layer_type_rope(model);
  const std::string type = k.model_type();
  const bool gemma3 = type == "gemma3" || type == "gemma3_text";
  const bool llama4 = type == "llama4" || type == "llama4_text";
  config_keys keys;
  config_draft d =
      load_hf_config(path, max_bytes, max_depth, {per_type ? "full_attention" : ""}, &keys);
  // The rope reader warns about rope keys it does not use; the per-layer ones are this command's.
  if (inv.diagnostics != nullptr)
    for (const std::string& w : keys.warnings) {
      bool per_layer = false;
      for (const char* key : per_layer_keys)
        per_layer = per_layer || w.find("rope key " + k.path(key) + " ") != std::string::npos;
      if (!per_layer) *inv.diagnostics << w << '\n';
    }
  // The config classes' defaults for what the released checkpoints leave unset
  // (Gemma3TextConfig: head_dim 256, rope_theta 1e6; Llama4TextConfig: rope_theta 5e5), and
  // Llama-4's pairing: adjacent channels (modeling_llama4.py rotates view_as_complex pairs).
  const bool theta_given =
      k.find("rope_theta") != nullptr ||
      (per_type && model["rope_parameters"]["full_attention"].contains("rope_theta"));
  draft_sources sources = keys.sources;
  if (gemma3 && k.find("head_dim") == nullptr) {
    d.head_dim = 256;
    sources.head_dim = "default: Gemma3TextConfig";
  }
  if (gemma3 && !theta_given) {
    d.base = 1000000.0;
    sources.base = "default: Gemma3TextConfig";
  }
  if (llama4 && !theta_given) {
    d.base = 500000.0;
    sources.base = "default: Llama4TextConfig";
  }
  if (llama4 && k.find("rope_interleave") == nullptr) {
    d.layout = rope_layout::interleaved;
    sources.layout = "default: Llama4TextConfig";
  }
  out.rope_.emplace(resolve(d, sources));
  out.echo_ = out.rope_->echo;
  // The keys: the rope reader's, with the per-layer keys this command reads counted as used.
  out.echo_.file = "config " + source;
  out.echo_.keys_used = keys.used;
  for (const std::string& key : keys.unused) {
    bool per_layer = false;
    for (const char* name : per_layer_keys) per_layer = per_layer || key == k.path(name);
    (per_layer ? out.echo_.keys_used : out.echo_.keys_not_used).push_back(key);
  }
  model_config& m = out.model_;
  m.rope = out.rope_->config();

  // M-RoPE (Qwen2-VL, Qwen2.5-VL, Qwen3-VL): the rope dict's mrope_section and
  // mrope_interleaved, as `apply` reads them; every layer rotates with the three streams.
  if (d.mrope_section) {
    m.form = rotary_form::mrope;
    m.mrope_section = *d.mrope_section;
    m.section_layout =
        d.mrope_interleaved.value_or(false) ? mrope_layout::interleaved : mrope_layout::contiguous;
    echo_multi_axis(out.echo_, m, sources.mrope_section, sources.mrope_interleaved);
  } else if (d.mrope_interleaved.value_or(false)) {
    invalid("posenc: " + source + ": mrope_interleaved needs mrope_section");
  }

  const std::optional<std::uint32_t> layers = k.count("num_hidden_layers");
  if (!layers) k.fail("num_hidden_layers", "is missing: the plan needs the layer count");
  m.num_hidden_layers = *layers;

  // Gemma-3 (configuration_gemma3.py): the sliding layers' base, window and pattern.
  if (per_type) {
    config_keys sliding;
    m.rope_local_base_freq =
        load_hf_config(path, max_bytes, max_depth, {"sliding_attention"}, &sliding)
            .base.value_or(10000.0);
    out.echo_.set_number("rope_local_base_freq", m.rope_local_base_freq,
                         sliding.sources.base.empty() ? "default" : sliding.sources.base);
  } else if (gemma3) {
    m.rope_local_base_freq = 10000.0;
    out.echo_.set_number("rope_local_base_freq", m.rope_local_base_freq,
                         "default: Gemma3TextConfig");
  }
  m.sliding_window = k.count("sliding_window").value_or(gemma3 ? 4096 : 0);
  m.sliding_window_pattern = k.count("sliding_window_pattern").value_or(gemma3 ? 6 : 0);
  if (const json* v = k.find("layer_types")) {
    if (!v->is_array()) k.fail("layer_types", "must be a list");
    for (std::size_t i = 0; i < v->size(); ++i)
      out.layer_types_.push_back(attention_of(k, (*v)[i], i));
    m.layer_types = out.layer_types_;
  }

  // Llama-4 (configuration_llama4.py): NoPE layers, chunked attention, the query temperature.
  m.no_rope_layer_interval = k.count("no_rope_layer_interval").value_or(llama4 ? 4 : 0);
  if (const json* v = k.find("no_rope_layers")) {
    if (!v->is_array()) k.fail("no_rope_layers", "must be a list");
    for (std::size_t i = 0; i < v->size(); ++i) {
      const json& f = (*v)[i];
      if (!f.is_number_integer() || (f.get<std::int64_t>() != 0 && f.get<std::int64_t>() != 1))
        k.fail("no_rope_layers[" + std::to_string(i) + "]", "must be 0 (NoPE) or 1 (RoPE)");
      out.no_rope_layers_.push_back(static_cast<std::uint8_t>(f.get<std::int64_t>()));
    }
    m.no_rope_layers = out.no_rope_layers_;
  }
  m.attention_chunk_size = k.count("attention_chunk_size").value_or(llama4 ? 8192 : 0);
  m.attn_temperature_tuning = k.truth("attn_temperature_tuning").value_or(llama4);
  m.floor_scale = k.number("floor_scale").value_or(8192.0);
  m.attn_scale = k.number("attn_scale").value_or(0.1);
}

void write_layers(std::ostream& out, const model_config& m, output_format f,
                  const config_echo& echo) {
  const layer_tables t = distinct_tables(m);
  out << echo_prefix(echo, f);
  if (f == output_format::csv) {
    out << "layer,encoding,attention,table,temperature_tuning\n";
    for (std::uint32_t i = 0; i < m.num_hidden_layers; ++i) {
      const layer_spec s = layer_at(m, i);
      out << i << ',' << layer_encoding_name(s.encoding) << ',' << attention_type_name(s.attention)
          << ',' << (s.table == no_table ? std::string() : std::to_string(s.table)) << ','
          << (s.temperature_tuning ? 1 : 0) << '\n';
    }
    return;
  }
  if (f == output_format::json) {
    out << "{\"config\": " << echo_json(echo) << ",\n\"num_hidden_layers\": " << m.num_hidden_layers
        << ", \"tables\": [";
    for (std::uint32_t k = 0; k < t.count; ++k) {
      const rope_config& c = t.rope[k];
      out << (k ? ", " : "") << "{\"head_dim\": " << c.head_dim
          << ", \"rotary_dim\": " << c.rotary_dim << ", \"base\": " << format_double(c.base)
          << ", \"layout\": \"" << layout_name(c.layout) << "\", \"scaling\": \""
          << scaling_name(c.scaling.type) << "\", \"factor\": " << format_double(c.scaling.factor)
          << ", \"attention_factor\": " << format_double(attention_factor(c)) << '}';
    }
    out << "], \"multi_axis\": " << multi_axis_json(m)
        << ", \"attention_temperature\": {\"attn_temperature_tuning\": "
        << json_bool(m.attn_temperature_tuning)
        << ", \"floor_scale\": " << format_double(m.floor_scale)
        << ", \"attn_scale\": " << format_double(m.attn_scale) << "}, \"layers\": [";
    for (std::uint32_t i = 0; i < m.num_hidden_layers; ++i) {
      const layer_spec s = layer_at(m, i);
      out << (i ? ", " : "") << "{\"layer\": " << i << ", \"encoding\": \""
          << layer_encoding_name(s.encoding) << "\", \"attention\": \""
          << attention_type_name(s.attention) << "\", \"table\": "
          << (s.table == no_table ? std::string("null") : std::to_string(s.table))
          << ", \"temperature_tuning\": " << json_bool(s.temperature_tuning) << '}';
    }
    out << "]}\n";
    return;
  }
  out << m.num_hidden_layers << " layers, " << t.count << (t.count == 1 ? " table" : " tables")
      << '\n';
  for (std::uint32_t k = 0; k < t.count; ++k)
    out << "table " << k << ": " << config_title(t.rope[k]) << ", " << layout_name(t.rope[k].layout)
        << '\n';
  if (m.form == rotary_form::mrope)
    out << "M-RoPE: mrope_section " << m.mrope_section[0] << ", " << m.mrope_section[1] << ", "
        << m.mrope_section[2] << " (temporal, height, width pairs), "
        << mrope_layout_name(m.section_layout) << '\n';
  if (m.form == rotary_form::axial)
    out << "2-D axial RoPE: " << axial_frequencies_name(m.frequencies) << " frequencies\n";
  if (m.attn_temperature_tuning)
    out << "query temperature: floor_scale " << short_double(m.floor_scale) << ", attn_scale "
        << short_double(m.attn_scale) << '\n';
  out << pad_right("layer", 7) << pad_right("encoding", 12) << pad_right("attention", 19)
      << pad_right("table", 7) << "temperature\n";
  for (std::uint32_t i = 0; i < m.num_hidden_layers; ++i) {
    const layer_spec s = layer_at(m, i);
    out << pad_right(std::to_string(i), 7) << pad_right(layer_encoding_name(s.encoding), 12)
        << pad_right(attention_type_name(s.attention), 19)
        << pad_right(s.table == no_table ? "-" : std::to_string(s.table), 7)
        << (s.temperature_tuning ? "yes" : "no") << '\n';
  }
}

int run_layers(const invocation& inv, std::ostream& out) {
  model_source src;
  read_model(inv, src);
  const model_config& m = src.model();
  // An M-RoPE part that breaks a rule names that rule (validate(model) names only the part).
  if (m.form == rotary_form::mrope) {
    const mrope_error me = validate(mrope_config{m.rope, m.mrope_section, m.section_layout});
    if (me != mrope_error::ok)
      invalid(std::string(message(me)) +
              (inv.hf_config ? " (" + printable(*inv.hf_config) + ")" : ""));
  }
  const model_error e = validate(m);
  if (e != model_error::ok)
    invalid(std::string(message(e)) +
            (inv.hf_config ? " (" + printable(*inv.hf_config) + ")" : ""));
  write_layers(out, src.model(), inv.format, src.echo());
  return exit_ok;
}

}  // namespace posenc::cli
