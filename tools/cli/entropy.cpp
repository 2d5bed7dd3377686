#include "cli/entropy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include <posenc/analysis/dials.hpp>

#include "cli/compute.hpp"
#include "cli/error.hpp"
#include "cli/gguf.hpp"
#include "cli/hf_config.hpp"
#include "cli/input_file.hpp"
#include "cli/numbers.hpp"
#include "cli/output.hpp"
#include "cli/run.hpp"

#if POSENC_CLI_PRESETS
#include <posenc/spec/select.hpp>
#endif

namespace posenc::cli {

namespace {

const std::string lengths_rule =
    "posenc: --lengths needs A:B (A, 2A, 4A, ... up to B) or a,b,c (increasing), each an "
    "integer with an optional k (x 1024) or M (x 1048576), 1 <= L <= 4194304, at most 64 lengths";

// One length: digits with an optional k or M suffix.
std::uint64_t parse_length(std::string_view text) {
  std::uint64_t unit = 1;
  if (text.ends_with('k')) {
    unit = 1024;
  } else if (text.ends_with('M')) {
    unit = std::uint64_t{1} << 20;
  }
  if (unit != 1) text.remove_suffix(1);
  const auto n = parse_uint(text, 1, analysis::max_entropy_length);
  if (!n || *n * unit > analysis::max_entropy_length) usage_error(lengths_rule);
  return *n * unit;
}

// Fixed decimals for the text table: "%.6f" (entropies, scales) and "%.1e" (standard errors).
std::string fixed6(double x) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6f", x);
  return b;
}
std::string sci1(double x) {
  char b[64];
  std::snprintf(b, sizeof b, "%.1e", x);
  return b;
}

std::string_view temperature_word(const attention_temperature& t) {
  switch (t.kind) {
    case temperature_kind::llama4:
      return temperature_choice_names(temperature_choice::llama4);
    case temperature_kind::logn:
      return temperature_choice_names(temperature_choice::log_n);
    default:
      return temperature_choice_names(temperature_choice::none);
  }
}

// The temperature's parameters as words: "floor_scale 8192, attn_scale 0.1".
std::string temperature_parameters(const attention_temperature& t) {
  if (t.kind == temperature_kind::llama4)
    return "floor_scale " + short_double(t.floor_scale) + ", attn_scale " +
           short_double(t.attn_scale);
  if (t.kind == temperature_kind::logn) return "training length " + std::to_string(t.seq_length);
  return "";
}

#if POSENC_CLI_PRESETS
const model_config* model_preset(const std::string& name) {
  return find_preset(name) == nullptr ? find_model_preset(name) : nullptr;
}
#endif

}  // namespace

std::vector<std::uint64_t> parse_entropy_lengths(std::string_view text) {
  std::vector<std::uint64_t> out;
  if (const std::size_t colon = text.find(':'); colon != std::string_view::npos) {
    const std::uint64_t a = parse_length(text.substr(0, colon));
    const std::uint64_t b = parse_length(text.substr(colon + 1));
    if (a > b) usage_error(lengths_rule);
    for (std::uint64_t l = a; l <= b; l *= 2) {
      if (out.size() == max_entropy_lengths) usage_error(lengths_rule);
      out.push_back(l);
    }
    return out;
  }
  while (true) {
    const std::size_t comma = text.find(',');
    const std::uint64_t l = parse_length(text.substr(0, comma));
    if (out.size() == max_entropy_lengths || (!out.empty() && l <= out.back()))
      usage_error(lengths_rule);
    out.push_back(l);
    if (comma == std::string_view::npos) return out;
    text = text.substr(comma + 1);
  }
}

entropy_result compute_entropy(const rope_config& c, const attention_temperature& t,
                               const std::vector<std::uint64_t>& lengths, std::uint32_t samples,
                               std::uint64_t seed, std::uint64_t work_limit) {
  entropy_result r;
  r.config = c;
  r.samples = samples;
  r.seed = seed;
  r.temperature = t;
  r.lengths = lengths;
  const bool tempered = t.kind != temperature_kind::none;
  const std::uint64_t curves = tempered ? 3 : 2;
  std::uint64_t longest = 0;
  for (std::uint64_t l : lengths) longest = l > longest ? l : longest;
  // dynamic and longrope compute the logits again for every length (their frequencies depend on
  // it): the sum of the lengths rather than the longest.
  std::uint64_t per_sample = longest;
  if (c.scaling.type == scaling_type::dynamic || c.scaling.type == scaling_type::longrope) {
    per_sample = 0;
    for (std::uint64_t l : lengths) per_sample += l;
  }
  // Below 2^64: samples <= 2^16, curves <= 3, per_sample <= 64 * 2^22, pairs <= 2^15.
  const std::uint64_t work = samples * curves * per_sample * (c.rotary_dim / 2);
  if (work > work_limit)
    invalid("posenc: entropy with " + std::to_string(samples) + " samples over lengths up to " +
            std::to_string(longest) + " and " + std::to_string(c.rotary_dim / 2) + " pairs is " +
            std::to_string(work) + " steps, beyond the limit of " + std::to_string(work_limit) +
            "; lower --samples or --lengths, or raise the budget with --work-limit N");
  const analysis::entropy_options o{samples, seed, 1.0};
  const auto curve = [&](std::string name, const rope_config& cc, const attention_temperature& tt) {
    entropy_curve e{std::move(name), std::vector<analysis::entropy_point>(lengths.size())};
    const analysis::entropy_error err = analysis::expected_entropy(cc, tt, lengths, o, e.points);
    if (err != analysis::entropy_error::ok) invalid(analysis::message(err));
    r.curves.push_back(std::move(e));
  };
  curve("scaled", c, temperature::none());
  curve("unscaled", analysis::unscaled(c), temperature::none());
  if (tempered) curve("tempered", c, t);
  return r;
}

entropy_result compute_entropy_of(const rope_config& c, const attention_temperature& t,
                                  const std::vector<std::uint64_t>& lengths,
                                  const std::vector<double>& q, const std::vector<double>& k,
                                  std::uint64_t work_limit) {
  entropy_result r;
  r.config = c;
  r.temperature = t;
  r.curves = {{"scaled", {}}, {"unscaled", {}}};
  if (t.kind != temperature_kind::none) r.curves.push_back({"tempered", {}});
  // The work of one draw, checked as for the estimate.
  std::uint64_t longest = 0;
  std::uint64_t total = 0;
  for (std::uint64_t l : lengths) {
    longest = l > longest ? l : longest;
    total += l;
  }
  const bool per_length =
      c.scaling.type == scaling_type::dynamic || c.scaling.type == scaling_type::longrope;
  const std::uint64_t work = r.curves.size() * (per_length ? total : longest) * (c.rotary_dim / 2);
  if (work > work_limit)
    invalid("posenc: entropy over lengths up to " + std::to_string(longest) + " and " +
            std::to_string(c.rotary_dim / 2) + " pairs is " + std::to_string(work) +
            " steps, beyond the limit of " + std::to_string(work_limit) +
            "; lower --lengths, or raise the budget with --work-limit N");
  r.lengths = lengths;
  r.samples = 1;
  std::vector<double> z(longest);
  const auto curve = [&](entropy_curve& e, const rope_config& cc, const attention_temperature& tt) {
    e.points.assign(lengths.size(), {});
    if (!per_length) analysis::shared_key_logits(cc, q, k, longest, z);
    for (std::size_t n = 0; n < lengths.size(); ++n) {
      const std::uint64_t L = lengths[n];
      const std::span<double> zl(z.data(), L);
      if (per_length) analysis::shared_key_logits(cc, q, k, L, zl);
      const double s = query_scale<double>(tt, L - 1);
      e.points[n] = {L, analysis::softmax_entropy(zl, s), 0.0, std::log(static_cast<double>(L)), s};
    }
  };
  curve(r.curves[0], c, temperature::none());
  curve(r.curves[1], analysis::unscaled(c), temperature::none());
  if (r.curves.size() == 3) curve(r.curves[2], c, t);
  return r;
}

void load_qk(const std::string& path, std::uint64_t max_bytes, std::uint32_t head_dim,
             std::vector<double>& q, std::vector<double>& k) {
  const std::string shown = printable(path);
  const nlohmann::json root =
      parse_json_file(path, max_bytes, byte_limit_text(max_bytes, max_qk_bytes, "16 MiB"),
                      [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
                        if (depth > 2)
                          invalid("posenc: " + shown +
                                  ": nested deeper than {\"q\": [...], "
                                  "\"k\": [...]}");
                        return true;
                      });
  for (const auto& [key, v] : root.items())
    if (key != "q" && key != "k")
      invalid("posenc: " + shown + ": unknown key \"" + printable(key) + "\" (q, k)");
  const auto vector = [&](const char* key, std::vector<double>& out) {
    const auto it = root.find(key);
    const std::string what = "posenc: " + shown + ": \"" + key + "\" must be " +
                             std::to_string(head_dim) + " finite numbers (head_dim)";
    if (it == root.end() || !it->is_array() || it->size() != head_dim) invalid(what);
    out.clear();
    for (const nlohmann::json& x : *it) {
      if (!x.is_number() || !std::isfinite(x.get<double>())) invalid(what);
      out.push_back(x.get<double>());
    }
  };
  vector("q", q);
  vector("k", k);
}

void write_entropy(std::ostream& out, const entropy_result& r, output_format f, bool text,
                   const config_echo& echo) {
  const std::size_t n = r.lengths.size();
  const bool tempered = r.curves.size() == 3;
  out << echo_prefix(echo, text ? output_format::text : f);
  if (!text && f == output_format::csv) {
    out << "length,log_length,scaled,scaled_std_error,unscaled,unscaled_std_error"
        << (tempered ? ",tempered,tempered_std_error,query_scale" : "") << '\n';
    for (std::size_t i = 0; i < n; ++i) {
      out << r.lengths[i] << ',' << format_double(r.curves[0].points[i].log_length);
      for (const entropy_curve& c : r.curves)
        out << ',' << format_double(c.points[i].mean) << ','
            << format_double(c.points[i].std_error);
      if (tempered) out << ',' << format_double(r.curves[2].points[i].query_scale);
      out << '\n';
    }
    return;
  }
  if (!text && f == output_format::json) {
    out << "{\"config\": " << echo_json(echo) << ",\n\"rotary_dim\": " << r.config.rotary_dim
        << ", \"head_dim\": " << r.config.head_dim << ", \"scaling\": \""
        << scaling_name(r.config.scaling.type) << "\", \"samples\": " << r.samples
        << ", \"seed\": " << r.seed;
    if (!r.qk_file.empty()) out << ", \"qk_file\": " << nlohmann::json(r.qk_file).dump();
    out << ", \"temperature\": \"" << temperature_word(r.temperature) << '"';
    if (r.temperature.kind == temperature_kind::llama4)
      out << ", \"floor_scale\": " << format_double(r.temperature.floor_scale)
          << ", \"attn_scale\": " << format_double(r.temperature.attn_scale);
    if (r.temperature.kind == temperature_kind::logn)
      out << ", \"training_length\": " << r.temperature.seq_length;
    out << ", \"points\": [";
    for (std::size_t i = 0; i < n; ++i) {
      out << (i ? ", " : "") << "{\"length\": " << r.lengths[i]
          << ", \"log_length\": " << format_double(r.curves[0].points[i].log_length);
      for (const entropy_curve& c : r.curves)
        out << ", \"" << c.name << "\": " << format_double(c.points[i].mean) << ", \"" << c.name
            << "_std_error\": " << format_double(c.points[i].std_error);
      if (tempered)
        out << ", \"query_scale\": " << format_double(r.curves[2].points[i].query_scale);
      out << '}';
    }
    out << "]}\n";
    return;
  }
  if (r.qk_file.empty()) {
    out << "expected attention entropy (nats) of the last query over L keys, " << r.samples
        << " samples of q, k ~ N(0, I) (seed " << r.seed << ")";
  } else {
    out << "attention entropy (nats) of the last query over L keys, q and k of "
        << printable(r.qk_file);
  }
  out << "; " << config_title(r.config) << "; unscaled: the same without scaling";
  if (tempered)
    out << "; tempered: with the " << temperature_word(r.temperature) << " temperature ("
        << temperature_parameters(r.temperature) << ")";
  out << '\n';
  out << pad_left("L", 8) << pad_left("log L", 12);
  for (const entropy_curve& c : r.curves) out << pad_left(c.name, 12) << pad_left("+-", 9);
  if (tempered) out << pad_left("s(L-1)", 11);
  out << '\n';
  for (std::size_t i = 0; i < n; ++i) {
    out << pad_left(std::to_string(r.lengths[i]), 8)
        << pad_left(fixed6(r.curves[0].points[i].log_length), 12);
    for (const entropy_curve& c : r.curves)
      out << pad_left(fixed6(c.points[i].mean), 12) << pad_left(sci1(c.points[i].std_error), 9);
    if (tempered) out << pad_left(fixed6(r.curves[2].points[i].query_scale), 11);
    out << '\n';
  }
  out << "(+-: the standard error of each mean; entropy <= log L, equal for uniform attention)\n";
}

svg::plot entropy_plot(const entropy_result& r) {
  svg::plot p;
  p.title = "Attention entropy, " + config_title(r.config) + ", " +
            (r.qk_file.empty() ? std::to_string(r.samples) + " samples"
                               : "q and k of " + printable(r.qk_file));
  p.x.title = "context length L (tokens)";
  p.x.log = true;
  p.y.title = "expected entropy (nats)";
  for (const entropy_curve& c : r.curves) {
    svg::series s{c.name, {}, {}, true, true, false, ""};
    if (c.name == "tempered") s.name += " (" + std::string(temperature_word(r.temperature)) + ")";
    for (const analysis::entropy_point& q : c.points) {
      s.x.push_back(static_cast<double>(q.length));
      s.y.push_back(q.mean);
    }
    p.lines.push_back(std::move(s));
  }
  svg::series ref{"log L (uniform attention)", {}, {}, true, false, true, "#7f7f7f"};
  for (const analysis::entropy_point& q : r.curves[0].points) {
    ref.x.push_back(static_cast<double>(q.length));
    ref.y.push_back(q.log_length);
  }
  p.lines.push_back(std::move(ref));
  return p;
}

int run_entropy(const invocation& inv, std::ostream& out) {
  const entropy_flags& e = inv.entropy;
  attention_temperature llama4_from_model = temperature::llama4();
  std::optional<resolved_config> rc;
#if POSENC_CLI_PRESETS
  // A model preset (llama-4-scout, ...) has one rope configuration for its RoPE layers and may
  // carry Llama-4's temperature parameters.
  if (inv.preset) {
    if (const model_config* m = model_preset(*inv.preset)) {
      // 2-D axial RoPE has no 1-D reading (a patch has two positions). M-RoPE's text tokens have
      // equal temporal, height and width positions, and pair i then turns by position * inv_freq_i:
      // exactly 1-D RoPE of the same frequencies, which is what is analysed (see below).
      if (m->form == rotary_form::axial)
        invalid("posenc: entropy: preset '" + *inv.preset +
                "' is 2-D axial RoPE (a patch grid); entropy takes a 1-D RoPE configuration or "
                "an M-RoPE model's text positions");
      if (m->attn_temperature_tuning)
        llama4_from_model = temperature::llama4(m->floor_scale, m->attn_scale);
      // A model preset's rope part, labelled as the 1-D presets' fields are (run.cpp).
      const config_draft d = draft_from_config(m->rope);
      rc.emplace(resolve(overlay(d, inv.flags),
                         overlay_sources(label_fields(d, "preset " + printable(*inv.preset)),
                                         inv.flags, inv.flag_sources)));
      check_derived(rc->config(), inv.seq_len);
      if (m->form == rotary_form::mrope)
        echo_mrope(rc->echo, m->mrope_section, m->section_layout == mrope_layout::interleaved,
                   "preset " + printable(*inv.preset), "preset " + printable(*inv.preset));
    }
  }
#endif
  if (!rc) rc.emplace(configure(inv));
  // An M-RoPE model (a preset, or a config.json / GGUF with mrope_section): the text positions.
  if (inv.hf_config || inv.gguf) {
    config_keys keys;
    const config_draft d =
        inv.hf_config
            ? load_hf_config(*inv.hf_config, inv.max_input_bytes.value_or(max_config_bytes),
                             inv.max_depth.value_or(max_config_depth),
                             source_options{inv.layer_type.value_or("")}, &keys)
            : load_gguf(*inv.gguf, inv.max_input_bytes.value_or(max_gguf_bytes), &keys);
    if (d.mrope_section)
      echo_mrope(rc->echo, *d.mrope_section, d.mrope_interleaved.value_or(false),
                 keys.sources.mrope_section, keys.sources.mrope_interleaved);
  }
  if (rc->echo.find("mrope_section") != nullptr)
    rc->echo.set_text("positions", "text tokens (M-RoPE streams equal: 1-D RoPE)",
                      "derived: M-RoPE");
  const rope_config c = rc->config();
  // A config.json's own temperature parameters (Llama-4): --temperature llama4 takes them unless
  // --floor-scale / --attn-scale give others.
  temperature_keys file_temperature;
  if (inv.hf_config)
    file_temperature =
        load_temperature_keys(*inv.hf_config, inv.max_input_bytes.value_or(max_config_bytes),
                              inv.max_depth.value_or(max_config_depth));
  if (file_temperature.floor_scale) llama4_from_model.floor_scale = *file_temperature.floor_scale;
  if (file_temperature.attn_scale) llama4_from_model.attn_scale = *file_temperature.attn_scale;
  attention_temperature t = temperature::none();
  switch (e.temperature.value_or(temperature_choice::none)) {
    case temperature_choice::none:
      break;
    case temperature_choice::llama4:
      t = temperature::llama4(e.floor_scale.value_or(llama4_from_model.floor_scale),
                              e.attn_scale.value_or(llama4_from_model.attn_scale));
      break;
    case temperature_choice::log_n: {
      // Qwen's seq_length, the training length; by default the original context of a scaling
      // that has one (llama3, yarn, longrope).
      std::uint64_t l = e.training_length.value_or(0);
      if (l == 0 &&
          (c.scaling.type == scaling_type::llama3 || c.scaling.type == scaling_type::yarn ||
           c.scaling.type == scaling_type::longrope))
        l = c.scaling.original_max_position_embeddings;
      if (l == 0)
        usage_error(
            "posenc: --temperature log-n needs --training-length N (the configuration has no "
            "original context)");
      t = temperature::logn(l);
      break;
    }
  }
  if (const temperature_error te = validate(t); te != temperature_error::ok) invalid(message(te));
  entropy_result r;
  if (e.qk) {
    std::vector<double> q;
    std::vector<double> k;
    load_qk(*e.qk, inv.max_input_bytes.value_or(max_qk_bytes), c.head_dim, q, k);
    r = compute_entropy_of(c, t, e.lengths, q, k, inv.work_limit.value_or(max_entropy_work));
    r.qk_file = *e.qk;
  } else {
    r = compute_entropy(c, t, e.lengths, e.samples.value_or(default_entropy_samples),
                        e.seed.value_or(1), inv.work_limit.value_or(max_entropy_work));
  }
  // What was computed beyond the rope configuration: the draws (or the q/k file) and the
  // temperature with its parameters.
  config_echo& echo = rc->echo;
  const auto given = [](bool flag, const char* name) {
    return flag ? std::string("flag ") + name : std::string("default");
  };
  if (e.qk) {
    echo.set_text("qk", printable(*e.qk), "flag --qk");
  } else {
    echo.set_uint("samples", r.samples, given(e.samples.has_value(), "--samples"));
    echo.set_uint("seed", r.seed, given(e.seed.has_value(), "--seed"));
  }
  echo.set_text("temperature", std::string(temperature_word(t)),
                given(e.temperature.has_value(), "--temperature"));
  if (t.kind == temperature_kind::llama4) {
    const std::string model = inv.preset ? "preset " + printable(*inv.preset) : "default";
    const auto from_file = [&](const std::string& key) {
      return key.empty() ? model : "config " + printable(*inv.hf_config) + " " + key;
    };
    echo.set_number(
        "floor_scale", t.floor_scale,
        e.floor_scale ? "flag --floor-scale" : from_file(file_temperature.floor_scale_key));
    echo.set_number(
        "attn_scale", t.attn_scale,
        e.attn_scale ? "flag --attn-scale" : from_file(file_temperature.attn_scale_key));
  }
  // Whether the model itself applies the Llama-4 temperature (--temperature chooses the curve).
  if (file_temperature.attn_temperature_tuning)
    echo.set_bool(
        "attn_temperature_tuning", *file_temperature.attn_temperature_tuning,
        "config " + printable(*inv.hf_config) + " " + file_temperature.attn_temperature_tuning_key);
  // The keys whose values were taken are used keys of the file.
  const bool llama4 = t.kind == temperature_kind::llama4;
  for (const auto& [key, taken] :
       {std::pair{&file_temperature.attn_temperature_tuning_key, true},
        std::pair{&file_temperature.floor_scale_key, llama4 && !e.floor_scale},
        std::pair{&file_temperature.attn_scale_key, llama4 && !e.attn_scale}}) {
    const auto it = std::find(echo.keys_not_used.begin(), echo.keys_not_used.end(), *key);
    if (!taken || key->empty() || it == echo.keys_not_used.end()) continue;
    echo.keys_not_used.erase(it);
    echo.keys_used.push_back(*key);
  }
  if (t.kind == temperature_kind::logn)
    echo.set_uint(
        "training_length", t.seq_length,
        e.training_length ? "flag --training-length" : "derived: original_max_position_embeddings");
  echo.set_text("lengths",
                std::to_string(r.lengths.front()) + ".." + std::to_string(r.lengths.back()) + " (" +
                    std::to_string(r.lengths.size()) + " lengths)",
                "flag --lengths");
  if (inv.svg) svg::write_file(*inv.svg, entropy_plot(r));
  write_entropy(out, r, inv.format, !inv.analysis.format_given, echo);
  return exit_ok;
}

}  // namespace posenc::cli
