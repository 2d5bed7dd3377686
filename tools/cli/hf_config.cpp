#include "cli/hf_config.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/error.hpp"
#include "cli/input_file.hpp"

namespace posenc::cli {

namespace {
using json = nlohmann::json;

// Field readers over one JSON object. `prefix` names the object in messages ("rope_scaling.").
// Every member found is recorded in `used` (its dotted path), for the listing of the keys read.
class fields {
 public:
  fields(const json& object, std::string source, std::string prefix,
         std::set<std::string>* used = nullptr)
      : obj_(object), source_(std::move(source)), prefix_(std::move(prefix)), used_(used) {}

  // The member, or nullptr when absent or null.
  const json* find(const char* key) const {
    const auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) return nullptr;
    if (used_ != nullptr) used_->insert(prefix_ + key);
    return &*it;
  }
  const std::string& prefix() const { return prefix_; }
  const std::string& source() const { return source_; }
  std::set<std::string>* used() const { return used_; }
  // Whether the member is present and not null (not recorded: only what is read counts as used).
  bool has(const char* key) const {
    const auto it = obj_.find(key);
    return it != obj_.end() && !it->is_null();
  }

  [[noreturn]] void fail(const char* key, const char* what) const {
    invalid("posenc: " + source_ + ": " + prefix_ + key + " " + what);
  }

  std::optional<double> number(const char* key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_number()) fail(key, "must be a number");
    const double x = v->get<double>();
    if (!std::isfinite(x)) fail(key, "must be a finite number");
    return x;
  }

  // A positive integer up to `max` (an integral float such as 4096.0 is accepted too).
  std::optional<std::uint32_t> positive_int(const char* key, std::uint32_t max = UINT32_MAX) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    const std::string msg = "must be a positive integer (at most " + std::to_string(max) + ")";
    if (v->is_number_unsigned()) {
      const auto x = v->get<std::uint64_t>();
      if (x == 0 || x > max) fail(key, msg.c_str());
      return static_cast<std::uint32_t>(x);
    }
    if (v->is_number_float()) {
      const double x = v->get<double>();
      if (!(x >= 1.0 && x <= static_cast<double>(max) && std::floor(x) == x))
        fail(key, msg.c_str());
      return static_cast<std::uint32_t>(x);
    }
    fail(key, msg.c_str());
  }

  std::optional<bool> boolean(const char* key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) fail(key, "must be true or false");
    return v->get<bool>();
  }

  std::optional<std::string> string(const char* key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) fail(key, "must be a string");
    return v->get<std::string>();
  }

  std::optional<std::vector<double>> number_list(const char* key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_array()) fail(key, "must be a list of numbers");
    std::vector<double> out;
    out.reserve(v->size());
    for (const json& e : *v) {
      if (!e.is_number()) fail(key, "must be a list of numbers");
      out.push_back(e.get<double>());
    }
    return out;
  }

  // HF's `rope.get(key) or default`: a 0 (or false) counts as absent.
  std::optional<double> truthy_number(const char* key) const {
    const auto x = number(key);
    if (x && *x == 0.0) return std::nullopt;
    return x;
  }

 private:
  const json& obj_;
  std::string source_;
  std::string prefix_;
  std::set<std::string>* used_;
};

scaling_type scaling_from_name(const std::string& name, const fields& rope, const char* key) {
  // "mrope" (Qwen2-VL, Qwen2.5-VL config.json) is the default frequencies with mrope_section:
  // Qwen2VLConfig.__init__ turns it into "default" (transformers
  // src/transformers/models/qwen2_vl/configuration_qwen2_vl.py).
  if (name == "default" || name == "mrope") return scaling_type::none;
  if (name == "linear") return scaling_type::linear;
  if (name == "ntk") return scaling_type::ntk;
  if (name == "dynamic") return scaling_type::dynamic;
  if (name == "yarn") return scaling_type::yarn;
  if (name == "llama3") return scaling_type::llama3;
  if (name == "longrope" || name == "su") return scaling_type::longrope;
  const std::string what = "'" + printable(name) +
                           "' is not supported (default, linear, ntk, dynamic, yarn, llama3, "
                           "longrope, mrope)";
  rope.fail(key, what.c_str());
}

// The rope dict of the chosen layer type. `object` is null when there is none (no scaling).
struct rope_choice {
  const json* object = nullptr;
  std::string name;                 // its path: "rope_scaling", "rope_parameters.full_attention"
  bool v5 = false;                  // from rope_parameters: a missing rope_type means default
  bool gemma3_local = false;        // v4 Gemma 3's sliding layers: rope_local_base_freq, no scaling
  std::string layer_type;           // the chosen layer type ("" when the file has none)
  const json* per_layer = nullptr;  // the dict of per-layer-type entries, if any
  std::string per_layer_name;
};

// M-RoPE's keys in the rope dict: mrope_section, three non-negative pair counts (Qwen2-VL,
// Qwen2.5-VL: {"type": "mrope", "mrope_section": [16, 24, 24]}, read by
// apply_multimodal_rotary_pos_emb in transformers
// src/transformers/models/qwen2_vl/modeling_qwen2_vl.py), and mrope_interleaved (Qwen3-VL:
// {"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": true},
// apply_interleaved_mrope in src/transformers/models/qwen3_vl/modeling_qwen3_vl.py).
void read_mrope(const fields& rope, config_draft& d) {
  if (const auto section = rope.number_list("mrope_section")) {
    const char* what = "must be a list of 3 non-negative integers (temporal, height, width pairs)";
    if (section->size() != 3) rope.fail("mrope_section", what);
    std::array<std::uint32_t, 3> s{};
    for (std::size_t i = 0; i < 3; ++i) {
      const double x = (*section)[i];
      if (!(x >= 0.0 && x <= 65536.0 && std::floor(x) == x)) rope.fail("mrope_section", what);
      s[i] = static_cast<std::uint32_t>(x);
    }
    d.mrope_section = s;
  }
  d.mrope_interleaved = rope.boolean("mrope_interleaved");
}

void read_scaling(const fields& top, const rope_choice& choice, config_draft& d) {
  if (choice.object == nullptr) {
    d.scaling = scaling_type::none;
    return;
  }
  const fields rope(*choice.object, top.source(), choice.name + ".", top.used());
  read_mrope(rope, d);
  const char* type_key = rope.has("rope_type") ? "rope_type" : "type";
  const auto type_name = rope.string(type_key);
  if (!type_name) {
    // v5 standardizes a missing rope_type to "default" (standardize_rope_params).
    if (choice.v5) {
      d.scaling = scaling_type::none;
      return;
    }
    invalid("posenc: " + top.source() + ": " + choice.name + " has no \"rope_type\" or \"type\"");
  }
  const scaling_type t = scaling_from_name(*type_name, rope, type_key);
  d.scaling = t;
  if (t == scaling_type::none) return;

  // Read only by the types that use it, so that the key listing says where it was not used.
  const auto original = [&] {
    const auto in_rope = rope.positive_int("original_max_position_embeddings");
    return in_rope ? in_rope : top.positive_int("original_max_position_embeddings");
  };
  d.factor = rope.number("factor");
  switch (t) {
    case scaling_type::yarn:
      d.original_max_position_embeddings = original();
      d.beta_fast = rope.truthy_number("beta_fast");
      d.beta_slow = rope.truthy_number("beta_slow");
      d.truncate = rope.boolean("truncate");
      d.mscale = rope.number("mscale");
      d.mscale_all_dim = rope.number("mscale_all_dim");
      d.attention_factor = rope.number("attention_factor");
      break;
    case scaling_type::llama3:
      d.original_max_position_embeddings = original();
      d.low_freq_factor = rope.number("low_freq_factor");
      d.high_freq_factor = rope.number("high_freq_factor");
      break;
    case scaling_type::longrope:
      d.short_factor = rope.number_list("short_factor");
      d.long_factor = rope.number_list("long_factor");
      if (!d.short_factor) rope.fail("short_factor", "is missing");
      if (!d.long_factor) rope.fail("long_factor", "is missing");
      d.attention_factor = rope.number("attention_factor");
      if (const auto top_original = top.positive_int("original_max_position_embeddings")) {
        // HF v4 (Phi-3): the top-level value wins and factor = max / original.
        d.original_max_position_embeddings = top_original;
        d.factor.reset();
      } else {
        d.original_max_position_embeddings = rope.positive_int("original_max_position_embeddings");
      }
      break;
    default:
      break;
  }
}

// A config.json is a few levels deep; refusing deep nesting bounds the work on hostile input.
json::parser_callback_t depth_limit(const std::string& source, std::uint64_t max_depth) {
  return [source, max_depth](int depth, json::parse_event_t, json&) {
    if (static_cast<std::uint64_t>(depth) > max_depth)
      invalid("posenc: " + source + ": nested deeper than " + std::to_string(max_depth) +
              " levels; raise the limit with --max-depth N");
    return true;
  };
}

// The object holding the language model's fields, and the prefix of its keys in messages:
// multimodal configs (Gemma 3 4B and up, Llama 4, Qwen2-VL ...) keep them under text_config
// (transformers' PretrainedConfig.get_text_config), unless the top level has them itself.
struct model_object {
  const json* model;
  std::string prefix;  // "text_config." or empty
};

model_object model_object_of(const json& root) {
  if (const auto it = root.find("text_config");
      it != root.end() && it->is_object() && !root.contains("head_dim") &&
      !root.contains("hidden_size") && !root.contains("num_attention_heads"))
    return {&*it, "text_config."};
  return {&root, ""};
}

config_draft draft_of(const json& root, const std::string& source, const source_options& options,
                      config_keys* keys);
}  // namespace

config_draft parse_hf_config(std::string_view text, std::string_view source_name,
                             const source_options& options, config_keys* keys) {
  const std::string source = printable(source_name);
  return draft_of(parse_json_object(text, source, depth_limit(source, max_config_depth)), source,
                  options, keys);
}

config_draft load_hf_config(const std::string& path, std::uint64_t max_bytes,
                            std::uint64_t max_depth, const source_options& options,
                            config_keys* keys) {
  const std::string source = printable(path);
  return draft_of(
      parse_json_file(path, max_bytes, byte_limit_text(max_bytes, max_config_bytes, "16 MiB"),
                      depth_limit(source, max_depth)),
      source, options, keys);
}

temperature_keys load_temperature_keys(const std::string& path, std::uint64_t max_bytes,
                                       std::uint64_t max_depth) {
  const std::string source = printable(path);
  const json root =
      parse_json_file(path, max_bytes, byte_limit_text(max_bytes, max_config_bytes, "16 MiB"),
                      depth_limit(source, max_depth));
  // The model object as draft_of chooses it.
  const model_object m = model_object_of(root);
  const fields top(*m.model, source, m.prefix);
  temperature_keys t;
  if (const json* v = top.find("attn_temperature_tuning")) {
    if (v->is_boolean()) {
      t.attn_temperature_tuning = v->get<bool>();
    } else if (v->is_number()) {
      t.attn_temperature_tuning = v->get<double>() != 0.0;  // Python's truth of a number
    } else {
      top.fail("attn_temperature_tuning", "must be a boolean or a number");
    }
    t.attn_temperature_tuning_key = m.prefix + "attn_temperature_tuning";
  }
  t.floor_scale = top.number("floor_scale");
  if (t.floor_scale) t.floor_scale_key = m.prefix + "floor_scale";
  t.attn_scale = top.number("attn_scale");
  if (t.attn_scale) t.attn_scale_key = m.prefix + "attn_scale";
  return t;
}

namespace {
std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ", ";
    out += printable(n);
  }
  return out;
}

// The rope dict that applies to the chosen layer type. `known` receives the keys that are
// understood but belong to other layer types (not warned about).
rope_choice choose_rope(const fields& top, const json& model, const source_options& options,
                        std::set<std::string>& known) {
  const std::string& source = top.source();
  const std::string& p = top.prefix();
  rope_choice c;
  const char* rope_key = nullptr;
  for (const char* key : {"rope_parameters", "rope_scaling"}) {
    if (const json* v = top.find(key)) {
      if (!v->is_object()) top.fail(key, "must be an object or null");
      c.object = v;
      rope_key = key;
      break;
    }
  }
  // The layer types the file declares (transformers' `layer_types`), if any.
  std::vector<std::string> declared;
  if (const auto it = model.find("layer_types"); it != model.end() && it->is_array())
    for (const json& t : *it)
      if (t.is_string()) declared.push_back(t.get<std::string>());

  std::vector<std::string> types;  // per-layer-type entries, in file order
  bool nested = false;
  if (c.object != nullptr && std::string_view(rope_key) == "rope_parameters" &&
      !c.object->empty()) {
    std::size_t objects = 0;
    for (const auto& [k, v] : c.object->items()) {
      if (v.is_object() || v.is_null()) ++objects;
      types.push_back(k);
    }
    nested = objects == c.object->size();
    if (!nested && objects != 0)
      for (const auto& [k, v] : c.object->items())
        if (v.is_object())
          invalid("posenc: " + source + ": " + p + "rope_parameters." + printable(k) +
                  " is a per-layer-type entry beside plain rope parameters");
  }
  c.name = rope_key != nullptr ? p + rope_key : "";
  c.v5 = rope_key != nullptr && std::string_view(rope_key) == "rope_parameters";
  const bool gemma3_v4 = !nested && !c.v5 && top.has("rope_local_base_freq");
  if (gemma3_v4) types = {"full_attention", "sliding_attention"};

  if (!nested && !gemma3_v4) {
    types.clear();
    if (!options.layer_type.empty() &&
        std::find(declared.begin(), declared.end(), options.layer_type) == declared.end())
      usage_error("posenc: " + source + ": no layer type '" + printable(options.layer_type) +
                  "' (the file has one rope configuration for all layers" +
                  (declared.empty() ? std::string() : ", layer types " + joined(declared)) + ")");
    c.layer_type = options.layer_type;
    return c;
  }

  std::string chosen = options.layer_type;
  if (chosen.empty()) {
    if (types.size() != 1)
      usage_error("posenc: " + source + ": the rope parameters differ by layer type (" +
                  joined(types) + "); choose one with --layer-type");
    chosen = types.front();
  } else if (std::find(types.begin(), types.end(), chosen) == types.end()) {
    usage_error("posenc: " + source + ": no layer type '" + printable(chosen) +
                "' in the rope parameters (" + joined(types) + ")");
  }
  c.layer_type = chosen;
  if (gemma3_v4) {
    if (chosen == "sliding_attention") {
      top.used()->erase(c.name);
      known.insert(c.name);
      known.insert(p + "rope_theta");
      c.object = nullptr;
      c.gemma3_local = true;
    } else {
      known.insert(p + "rope_local_base_freq");
    }
    return c;
  }
  c.per_layer = c.object;
  c.per_layer_name = c.name + ".";
  for (const std::string& t : types)
    if (t != chosen) known.insert(c.name + "." + t);
  top.used()->insert(c.name + "." + chosen);
  const json& entry = (*c.object)[chosen];
  if (entry.is_null())
    invalid("posenc: " + source + ": " + c.name + "." + printable(chosen) +
            " is null: layers of this type have no RoPE");
  c.object = &entry;
  c.name += "." + chosen;
  return c;
}

// The keys of `object` (path prefix `prefix`) that were not used: listed in `keys`, and warned
// about when they are rope keys not understood (every key of the rope dict, and top-level keys
// named rope_* or *rotary*).
void list_keys(const json& object, const std::string& prefix, const std::set<std::string>& used,
               const std::set<std::string>& known, bool all_rope, const std::string& source,
               config_keys& keys) {
  for (const auto& [k, v] : object.items()) {
    const std::string path = prefix + k;
    if (used.count(path) != 0) {
      keys.used.push_back(path);
      continue;
    }
    keys.unused.push_back(path);
    if (known.count(path) != 0 || v.is_null()) continue;
    if (all_rope || k.find("rope") != std::string::npos || k.find("rotary") != std::string::npos)
      keys.warnings.push_back("posenc: warning: " + source + ": rope key " + printable(path) +
                              " is not used");
  }
}

config_draft draft_of(const json& root, const std::string& source, const source_options& options,
                      config_keys* keys) {
  std::set<std::string> used;
  std::set<std::string> known;
  const model_object m = model_object_of(root);
  if (m.model != &root) used.insert("text_config");
  const json* model = m.model;
  const std::string& prefix = m.prefix;
  const fields top(*model, source, prefix, &used);

  const rope_choice choice = choose_rope(top, *model, options, known);
  std::optional<fields> rope;
  if (choice.object != nullptr) rope.emplace(*choice.object, source, choice.name + ".", &used);

  config_draft d;
  draft_sources src;
  // Labels `field` (if set) with the keys read since `before` was taken: the echo's source.
  std::set<std::string> before = used;
  const auto label_read = [&](const auto& field, std::string& label) {
    std::string read_keys;
    for (const std::string& k : used)
      if (before.count(k) == 0) read_keys += (read_keys.empty() ? "" : ", ") + k;
    if (field && !read_keys.empty()) label = "config " + source + " " + read_keys;
    before = used;
  };

  // base; a per-layer-type entry without rope_theta takes the top-level one (HF v5
  // standardize_rope_params), for Gemma 3's sliding layers rope_local_base_freq
  // (configuration_gemma3.py).
  const bool local = choice.gemma3_local ||
                     (choice.layer_type == "sliding_attention" && top.has("rope_local_base_freq"));
  if (rope && rope->has("rope_theta")) {
    d.base = rope->number("rope_theta");
  } else if (local) {
    d.base = top.number("rope_local_base_freq");
    known.insert(prefix + "rope_theta");
  } else if (top.has("rope_theta")) {
    d.base = top.number("rope_theta");
  } else {
    d.base = top.number("rotary_emb_base");
  }
  label_read(d.base, src.base);
  // Understood, though not used here: the base of the other layer type, a top-level rope_theta
  // that the rope dict's overrides.
  if (!choice.layer_type.empty()) known.insert(prefix + "rope_local_base_freq");
  if (rope && rope->has("rope_theta")) known.insert(prefix + "rope_theta");

  // head_dim; DeepSeek's multi-head latent attention rotates a qk_rope_head_dim slice only.
  if (top.has("qk_rope_head_dim")) {
    d.head_dim = top.positive_int("qk_rope_head_dim", max_head_dim);
  } else if (top.has("head_dim")) {
    d.head_dim = top.positive_int("head_dim", max_head_dim);
  } else {
    const char* hidden_key = top.has("hidden_size") ? "hidden_size" : "n_embd";
    const char* heads_key = top.has("num_attention_heads") ? "num_attention_heads" : "n_head";
    const auto hidden = top.positive_int(hidden_key);
    const auto heads = top.positive_int(heads_key);
    if (!hidden || !heads)
      invalid("posenc: " + source +
              ": no head_dim, and no hidden_size and num_attention_heads to derive it");
    const std::uint32_t hd = *hidden / *heads;  // HF: hidden_size // num_attention_heads
    if (hd == 0 || hd > max_head_dim)
      invalid("posenc: " + source + ": hidden_size / num_attention_heads must be in [1, " +
              std::to_string(max_head_dim) + "]");
    d.head_dim = hd;
  }
  label_read(d.head_dim, src.head_dim);
  if (!top.has("qk_rope_head_dim") && !top.has("head_dim")) {
    const char* hidden_key = top.has("hidden_size") ? "hidden_size" : "n_embd";
    const char* heads_key = top.has("num_attention_heads") ? "num_attention_heads" : "n_head";
    src.head_dim = "config " + source + " " + prefix + hidden_key + " / " + prefix + heads_key;
  }

  // rotary width
  const auto fraction = [&](const fields& f, const char* key) -> std::optional<double> {
    const auto x = f.number(key);
    if (x && !(*x > 0.0 && *x <= 1.0)) f.fail(key, "must be in (0, 1]");
    return x;
  };
  if (const auto r = top.positive_int("rotary_dim")) {
    d.rotary = rotary_width::absolute(*r);
  } else if (const auto f = rope ? fraction(*rope, "partial_rotary_factor") : std::nullopt) {
    d.rotary = rotary_width::fraction(*f);
  } else if (const auto g = fraction(top, "partial_rotary_factor")) {
    d.rotary = rotary_width::fraction(*g);
  } else if (const auto h = fraction(top, "rotary_pct")) {
    d.rotary = rotary_width::fraction(*h);
  }
  label_read(d.rotary, src.rotary);

  // layout: GPT-J (rotate_every_two) and DeepSeek-V2/V3 (their rope slice) rotate interleaved
  // pairs; HF models otherwise rotate halves. DeepSeek-V3's rope_interleave says which
  // (transformers, models/deepseek_v3/modeling_deepseek_v3.py).
  if (const auto interleave = top.boolean("rope_interleave")) {
    d.layout = *interleave ? rope_layout::interleaved : rope_layout::half;
  } else if (const auto model_type = top.string("model_type");
             model_type && (*model_type == "gptj" || *model_type == "deepseek_v2" ||
                            *model_type == "deepseek_v3")) {
    d.layout = rope_layout::interleaved;
  }
  label_read(d.layout, src.layout);

  d.max_position_embeddings = top.positive_int("max_position_embeddings");
  label_read(d.max_position_embeddings, src.max_position_embeddings);
  read_scaling(top, choice, d);
  // The scaling's fields have the names of their keys: the rope dict's, else (Phi-3's
  // original_max_position_embeddings) the top level's.
  const std::string rp = choice.name + ".";
  const auto label = [&](const auto& field, std::string& into, const std::string& key) {
    if (!field) return;
    for (const std::string& k : {rp + key, prefix + key}) {
      if (used.count(k) != 0) {
        into = "config " + source + " " + k;
        return;
      }
    }
  };
  if (d.scaling) {
    if (used.count(rp + "rope_type") != 0)
      src.scaling = "config " + source + " " + rp + "rope_type";
    else if (used.count(rp + "type") != 0)
      src.scaling = "config " + source + " " + rp + "type";
    else if (choice.object != nullptr)
      src.scaling = "config " + source + " " + choice.name;
    // else no rope dict: none, HF's default, echoed as the default
  }
  label(d.factor, src.factor, "factor");
  label(d.original_max_position_embeddings, src.original_max_position_embeddings,
        "original_max_position_embeddings");
  label(d.beta_fast, src.beta_fast, "beta_fast");
  label(d.beta_slow, src.beta_slow, "beta_slow");
  label(d.truncate, src.truncate, "truncate");
  label(d.mscale, src.mscale, "mscale");
  label(d.mscale_all_dim, src.mscale_all_dim, "mscale_all_dim");
  label(d.attention_factor, src.attention_factor, "attention_factor");
  label(d.low_freq_factor, src.low_freq_factor, "low_freq_factor");
  label(d.high_freq_factor, src.high_freq_factor, "high_freq_factor");
  label(d.short_factor, src.short_factor, "short_factor");
  label(d.long_factor, src.long_factor, "long_factor");
  label(d.mrope_section, src.mrope_section, "mrope_section");
  label(d.mrope_interleaved, src.mrope_interleaved, "mrope_interleaved");

  if (keys != nullptr) {
    *keys = {};
    keys->sources = src;
    if (!prefix.empty()) {
      keys->used.push_back("text_config");
      for (const auto& [k, v] : root.items())
        if (k != "text_config") keys->unused.push_back(k);
    }
    list_keys(*model, prefix, used, known, false, source, *keys);
    if (choice.per_layer != nullptr)
      list_keys(*choice.per_layer, choice.per_layer_name, used, known, true, source, *keys);
    if (rope) list_keys(*choice.object, choice.name + ".", used, known, true, source, *keys);
  }
  return d;
}
}  // namespace

}  // namespace posenc::cli
