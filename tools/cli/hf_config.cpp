#include "cli/hf_config.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/error.hpp"
#include "cli/input_file.hpp"

namespace posenc::cli {

namespace {
using json = nlohmann::json;

// Field readers over one JSON object. `prefix` names the object in messages ("rope_scaling.").
class fields {
 public:
  fields(const json& object, std::string source, std::string prefix)
      : obj_(object), source_(std::move(source)), prefix_(std::move(prefix)) {}

  // The member, or nullptr when absent or null.
  const json* find(const char* key) const {
    const auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) return nullptr;
    return &*it;
  }
  bool has(const char* key) const { return find(key) != nullptr; }

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
};

scaling_type scaling_from_name(const std::string& name, const fields& rope, const char* key) {
  if (name == "default") return scaling_type::none;
  if (name == "linear") return scaling_type::linear;
  if (name == "ntk") return scaling_type::ntk;
  if (name == "dynamic") return scaling_type::dynamic;
  if (name == "yarn") return scaling_type::yarn;
  if (name == "llama3") return scaling_type::llama3;
  if (name == "longrope" || name == "su") return scaling_type::longrope;
  const std::string what = "'" + printable(name) +
                           "' is not supported (default, linear, ntk, dynamic, yarn, llama3, "
                           "longrope)";
  rope.fail(key, what.c_str());
}

void read_scaling(const fields& top, const json& rope_obj, const char* rope_key,
                  const std::string& source, config_draft& d) {
  const fields rope(rope_obj, source, std::string(rope_key) + ".");
  const char* type_key = rope.has("rope_type") ? "rope_type" : "type";
  const auto type_name = rope.string(type_key);
  if (!type_name) {
    // v5 rope_parameters always carries a rope_type; a dict of dicts is per layer type (Gemma 3).
    for (const auto& [k, v] : rope_obj.items())
      if (v.is_object())
        rope.fail(printable(k).c_str(),
                  "is a per-layer-type entry; such configs are not supported");
    if (std::string_view(rope_key) == "rope_parameters") {
      d.scaling = scaling_type::none;
      return;
    }
    invalid("posenc: " + source + ": " + rope_key + " has no \"rope_type\" or \"type\"");
  }
  const scaling_type t = scaling_from_name(*type_name, rope, type_key);
  d.scaling = t;
  if (t == scaling_type::none) return;

  const auto top_original = top.positive_int("original_max_position_embeddings");
  const auto rope_original = rope.positive_int("original_max_position_embeddings");
  d.factor = rope.number("factor");
  switch (t) {
    case scaling_type::yarn:
      d.original_max_position_embeddings = rope_original ? rope_original : top_original;
      d.beta_fast = rope.truthy_number("beta_fast");
      d.beta_slow = rope.truthy_number("beta_slow");
      d.truncate = rope.boolean("truncate");
      d.mscale = rope.number("mscale");
      d.mscale_all_dim = rope.number("mscale_all_dim");
      d.attention_factor = rope.number("attention_factor");
      break;
    case scaling_type::llama3:
      d.original_max_position_embeddings = rope_original ? rope_original : top_original;
      d.low_freq_factor = rope.number("low_freq_factor");
      d.high_freq_factor = rope.number("high_freq_factor");
      break;
    case scaling_type::longrope:
      d.short_factor = rope.number_list("short_factor");
      d.long_factor = rope.number_list("long_factor");
      if (!d.short_factor) rope.fail("short_factor", "is missing");
      if (!d.long_factor) rope.fail("long_factor", "is missing");
      d.attention_factor = rope.number("attention_factor");
      if (top_original) {
        // HF v4 (Phi-3): the top-level value wins and factor = max / original.
        d.original_max_position_embeddings = top_original;
        d.factor.reset();
      } else {
        d.original_max_position_embeddings = rope_original;
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

config_draft draft_of(const json& root, const std::string& source);
}  // namespace

config_draft parse_hf_config(std::string_view text, std::string_view source_name) {
  const std::string source = printable(source_name);
  return draft_of(parse_json_object(text, source, depth_limit(source, max_config_depth)), source);
}

config_draft load_hf_config(const std::string& path, std::uint64_t max_bytes,
                            std::uint64_t max_depth) {
  const std::string source = printable(path);
  return draft_of(
      parse_json_file(path, max_bytes, byte_limit_text(max_bytes, max_config_bytes, "16 MiB"),
                      depth_limit(source, max_depth)),
      source);
}

namespace {
config_draft draft_of(const json& root, const std::string& source) {
  const fields top(root, source, "");

  const json* rope_obj = nullptr;
  const char* rope_key = nullptr;
  for (const char* key : {"rope_parameters", "rope_scaling"}) {
    if (const json* v = top.find(key)) {
      if (!v->is_object()) top.fail(key, "must be an object or null");
      rope_obj = v;
      rope_key = key;
      break;
    }
  }

  config_draft d;
  std::optional<fields> rope;
  if (rope_obj) rope.emplace(*rope_obj, source, std::string(rope_key) + ".");

  // base
  if (rope && rope->has("rope_theta")) {
    d.base = rope->number("rope_theta");
  } else if (top.has("rope_theta")) {
    d.base = top.number("rope_theta");
  } else {
    d.base = top.number("rotary_emb_base");
  }

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

  // layout: GPT-J (rotate_every_two) and DeepSeek-V2/V3 (their rope slice) rotate interleaved
  // pairs; HF models otherwise rotate halves.
  if (const auto model_type = top.string("model_type");
      model_type &&
      (*model_type == "gptj" || *model_type == "deepseek_v2" || *model_type == "deepseek_v3"))
    d.layout = rope_layout::interleaved;

  d.max_position_embeddings = top.positive_int("max_position_embeddings");
  if (rope_obj)
    read_scaling(top, *rope_obj, rope_key, source, d);
  else
    d.scaling = scaling_type::none;
  return d;
}
}  // namespace

}  // namespace posenc::cli
