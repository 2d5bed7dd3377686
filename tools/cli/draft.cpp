#include "cli/draft.hpp"

#include <posenc/frequencies/rope.hpp>
#include <posenc/spec/rope.hpp>

#include <charconv>
#include <string>
#include <utility>

#include "cli/error.hpp"

namespace posenc::cli {

namespace {
template <class T>
void take(std::optional<T>& into, const std::optional<T>& from) {
  if (from) into = from;
}

// f(draft member, sources member) for every field of a draft.
template <class F>
void each_field(F&& f) {
  f(&config_draft::head_dim, &draft_sources::head_dim);
  f(&config_draft::rotary, &draft_sources::rotary);
  f(&config_draft::base, &draft_sources::base);
  f(&config_draft::layout, &draft_sources::layout);
  f(&config_draft::scaling, &draft_sources::scaling);
  f(&config_draft::factor, &draft_sources::factor);
  f(&config_draft::original_max_position_embeddings,
    &draft_sources::original_max_position_embeddings);
  f(&config_draft::max_position_embeddings, &draft_sources::max_position_embeddings);
  f(&config_draft::beta_fast, &draft_sources::beta_fast);
  f(&config_draft::beta_slow, &draft_sources::beta_slow);
  f(&config_draft::truncate, &draft_sources::truncate);
  f(&config_draft::mscale, &draft_sources::mscale);
  f(&config_draft::mscale_all_dim, &draft_sources::mscale_all_dim);
  f(&config_draft::attention_factor, &draft_sources::attention_factor);
  f(&config_draft::low_freq_factor, &draft_sources::low_freq_factor);
  f(&config_draft::high_freq_factor, &draft_sources::high_freq_factor);
  f(&config_draft::short_factor, &draft_sources::short_factor);
  f(&config_draft::long_factor, &draft_sources::long_factor);
  f(&config_draft::mrope_section, &draft_sources::mrope_section);
  f(&config_draft::mrope_interleaved, &draft_sources::mrope_interleaved);
}

// The label of a field that the draft sets, else `otherwise`.
std::string source_or(const std::string& label, const char* otherwise) {
  return label.empty() ? std::string(otherwise) : label;
}
}  // namespace

draft_sources label_fields(const config_draft& d, const std::string& label) {
  draft_sources s;
  each_field([&](auto field, auto source) {
    if (d.*field) s.*source = label;
  });
  return s;
}

draft_sources overlay_sources(draft_sources base, const config_draft& over,
                              const draft_sources& over_sources) {
  each_field([&](auto field, auto source) {
    if (over.*field) base.*source = over_sources.*source;
  });
  return base;
}

void echo_mrope(config_echo& echo, const std::array<std::uint32_t, 3>& section, bool interleaved,
                const std::string& section_source, const std::string& interleaved_source) {
  echo.set_list("mrope_section",
                {static_cast<double>(section[0]), static_cast<double>(section[1]),
                 static_cast<double>(section[2])},
                section_source);
  echo.set_bool("mrope_interleaved", interleaved, source_or(interleaved_source, "default"));
}

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  return out + '"';
}

std::string shortest_double(double x) {
  char b[400];
  // Plain digits (1000000, 0.25) where they are short, else the exponent form (1e+20).
  const double a = x < 0 ? -x : x;
  const auto format =
      (a == 0.0 || (a >= 1e-5 && a < 1e16)) ? std::chars_format::fixed : std::chars_format::general;
  const auto res = std::to_chars(b, b + sizeof b, x, format);
  return std::string(b, static_cast<std::size_t>(res.ptr - b));
}

void config_echo::set(echo_entry e) {
  for (echo_entry& old : entries) {
    if (old.name == e.name) {
      old = std::move(e);
      return;
    }
  }
  entries.push_back(std::move(e));
}

void config_echo::set_uint(const std::string& name, std::uint64_t v, const std::string& source) {
  const std::string t = std::to_string(v);
  set({name, t, t, source});
}

// Finite values only reach the echo (the flags and readers refuse others), so the JSON number is
// the shortest text that reads back to v.
void config_echo::set_number(const std::string& name, double v, const std::string& source) {
  const std::string t = shortest_double(v);
  set({name, t, t, source});
}

void config_echo::set_bool(const std::string& name, bool v, const std::string& source) {
  const std::string t = v ? "true" : "false";
  set({name, t, t, source});
}

void config_echo::set_text(const std::string& name, const std::string& v,
                           const std::string& source) {
  set({name, json_quote(v), v, source});
}

void config_echo::set_list(const std::string& name, const std::vector<double>& v,
                           const std::string& source) {
  std::string json = "[";
  std::string text;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) {
      json += ", ";
      text += ',';
    }
    json += shortest_double(v[i]);
    text += shortest_double(v[i]);
  }
  set({name, json + "]", text, source});
}

const echo_entry* config_echo::find(const std::string& name) const {
  for (const echo_entry& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

config_draft overlay(config_draft base, const config_draft& over) {
  take(base.head_dim, over.head_dim);
  take(base.rotary, over.rotary);
  take(base.base, over.base);
  take(base.layout, over.layout);
  take(base.scaling, over.scaling);
  take(base.factor, over.factor);
  take(base.original_max_position_embeddings, over.original_max_position_embeddings);
  take(base.max_position_embeddings, over.max_position_embeddings);
  take(base.beta_fast, over.beta_fast);
  take(base.beta_slow, over.beta_slow);
  take(base.truncate, over.truncate);
  take(base.mscale, over.mscale);
  take(base.mscale_all_dim, over.mscale_all_dim);
  take(base.attention_factor, over.attention_factor);
  take(base.low_freq_factor, over.low_freq_factor);
  take(base.high_freq_factor, over.high_freq_factor);
  take(base.short_factor, over.short_factor);
  take(base.long_factor, over.long_factor);
  take(base.mrope_section, over.mrope_section);
  take(base.mrope_interleaved, over.mrope_interleaved);
  return base;
}

config_draft draft_from_config(const rope_config& c) {
  config_draft d;
  d.head_dim = c.head_dim;
  d.rotary = rotary_width::absolute(c.rotary_dim);
  d.base = c.base;
  d.layout = c.layout;
  const rope_scaling& s = c.scaling;
  d.scaling = s.type;
  if (s.type == scaling_type::none) return d;
  const bool derived_factor =
      s.type == scaling_type::longrope && s.original_max_position_embeddings != 0 &&
      s.factor == static_cast<double>(s.max_position_embeddings) /
                      static_cast<double>(s.original_max_position_embeddings);
  if (!derived_factor) d.factor = s.factor;
  d.original_max_position_embeddings = s.original_max_position_embeddings;
  d.max_position_embeddings = s.max_position_embeddings;
  d.beta_fast = s.beta_fast;
  d.beta_slow = s.beta_slow;
  d.truncate = s.truncate;
  d.mscale = s.mscale;
  d.mscale_all_dim = s.mscale_all_dim;
  d.attention_factor = s.attention_factor;
  d.low_freq_factor = s.low_freq_factor;
  d.high_freq_factor = s.high_freq_factor;
  if (s.type == scaling_type::longrope) {
    d.short_factor = std::vector<double>(s.short_factor.begin(), s.short_factor.end());
    d.long_factor = std::vector<double>(s.long_factor.begin(), s.long_factor.end());
  }
  return d;
}

resolved_config::resolved_config(const rope_config& c, std::vector<double> short_factor,
                                 std::vector<double> long_factor)
    : config_(c), short_factor_(std::move(short_factor)), long_factor_(std::move(long_factor)) {
  config_.scaling.short_factor = {};
  config_.scaling.long_factor = {};
}

rope_config resolved_config::config() const {
  rope_config c = config_;
  c.scaling.short_factor = short_factor_;
  c.scaling.long_factor = long_factor_;
  return c;
}

namespace {
// The echo of a valid configuration: every value that decides the numbers, the scaling's
// parameters those of its type only (the fields each type reads, spec/rope.hpp).
config_echo echo_of(const rope_config& c, const config_draft& d, const draft_sources& src) {
  config_echo e;
  const char* def = "default";
  e.set_uint("head_dim", c.head_dim, src.head_dim);
  if (d.rotary && d.rotary->factor != 0.0) {
    e.set_number("partial_rotary_factor", d.rotary->factor, src.rotary);
    e.set_uint("rotary_dim", c.rotary_dim, "derived: int(head_dim * partial_rotary_factor)");
  } else {
    e.set_uint("rotary_dim", c.rotary_dim, source_or(src.rotary, "default: head_dim"));
  }
  e.set_number("base", c.base, source_or(src.base, def));
  e.set_text("layout", layout_name(c.layout), source_or(src.layout, def));
  const rope_scaling& s = c.scaling;
  const scaling_type t = s.type;
  e.set_text("scaling", scaling_name(t), source_or(src.scaling, def));
  if (t == scaling_type::none) return e;
  if (d.factor) {
    e.set_number("factor", s.factor, src.factor);
  } else {
    e.set_number("factor", s.factor,
                 "derived: max_position_embeddings / original_max_position_embeddings");
  }
  const bool original =
      t == scaling_type::yarn || t == scaling_type::llama3 || t == scaling_type::longrope;
  if (t == scaling_type::dynamic || t == scaling_type::longrope)
    e.set_uint("max_position_embeddings", s.max_position_embeddings,
               source_or(src.max_position_embeddings, def));
  if (original)
    e.set_uint("original_max_position_embeddings", s.original_max_position_embeddings,
               source_or(src.original_max_position_embeddings, "default: max_position_embeddings"));
  if (t == scaling_type::yarn) {
    e.set_number("beta_fast", s.beta_fast, source_or(src.beta_fast, def));
    e.set_number("beta_slow", s.beta_slow, source_or(src.beta_slow, def));
    e.set_bool("truncate", s.truncate, source_or(src.truncate, def));
    e.set_number("mscale", s.mscale, source_or(src.mscale, def));
    e.set_number("mscale_all_dim", s.mscale_all_dim, source_or(src.mscale_all_dim, def));
  }
  if (t == scaling_type::llama3) {
    e.set_number("low_freq_factor", s.low_freq_factor, source_or(src.low_freq_factor, def));
    e.set_number("high_freq_factor", s.high_freq_factor, source_or(src.high_freq_factor, def));
  }
  if (t == scaling_type::longrope) {
    e.set_list("short_factor", *d.short_factor, src.short_factor);
    e.set_list("long_factor", *d.long_factor, src.long_factor);
  }
  // The factor that multiplies cos and sin: given, or derived as the library does
  // (frequencies/rope.hpp attention_factor: YaRN's 0.1 ln(s) + 1 and DeepSeek's mscale ratio,
  // LongRoPE's sqrt(1 + ln(s) / ln(original))).
  if (t == scaling_type::yarn || t == scaling_type::longrope)
    e.set_number("attention_factor", attention_factor(c),
                 s.attention_factor != 0.0 ? src.attention_factor : "derived");
  return e;
}
}  // namespace

resolved_config resolve(const config_draft& d, const draft_sources& sources) {
  if (!d.head_dim)
    usage_error("posenc: no head dimension: give --head-dim, --preset or --hf-config");
  if (*d.head_dim == 0) invalid("posenc: head_dim must be positive");
  if (*d.head_dim > max_head_dim)
    invalid("posenc: head_dim must be at most " + std::to_string(max_head_dim));

  rope_config c;
  c.head_dim = *d.head_dim;
  c.rotary_dim = c.head_dim;
  if (d.rotary) {
    if (d.rotary->factor != 0.0) {
      c.rotary_dim = rotary_dim_from_factor(c.head_dim, d.rotary->factor);
      if (c.rotary_dim == 0) invalid("posenc: partial rotary factor must be in (0, 1]");
    } else {
      c.rotary_dim = d.rotary->dim;
    }
  }
  c.base = d.base.value_or(10000.0);
  c.layout = d.layout.value_or(rope_layout::half);

  rope_scaling& s = c.scaling;
  s.type = d.scaling.value_or(scaling_type::none);
  const scaling_type t = s.type;
  std::vector<double> short_factor;
  std::vector<double> long_factor;
  if (t != scaling_type::none) {
    s.max_position_embeddings = d.max_position_embeddings.value_or(0);
    if (t == scaling_type::yarn || t == scaling_type::llama3 || t == scaling_type::longrope)
      s.original_max_position_embeddings =
          d.original_max_position_embeddings.value_or(s.max_position_embeddings);
    if (d.factor) {
      s.factor = *d.factor;
    } else if ((t == scaling_type::yarn || t == scaling_type::longrope) &&
               s.original_max_position_embeddings != 0 && s.max_position_embeddings != 0) {
      s.factor = static_cast<double>(s.max_position_embeddings) /
                 static_cast<double>(s.original_max_position_embeddings);
    } else if (t == scaling_type::yarn || t == scaling_type::longrope) {
      invalid(std::string("posenc: ") + scaling_name(t) +
              " scaling needs a factor, or max_position_embeddings and "
              "original_max_position_embeddings");
    } else {
      invalid(std::string("posenc: ") + scaling_name(t) + " scaling needs a factor (--factor)");
    }
    const rope_scaling defaults{};
    s.beta_fast = d.beta_fast.value_or(defaults.beta_fast);
    s.beta_slow = d.beta_slow.value_or(defaults.beta_slow);
    s.truncate = d.truncate.value_or(defaults.truncate);
    s.mscale = d.mscale.value_or(defaults.mscale);
    s.mscale_all_dim = d.mscale_all_dim.value_or(defaults.mscale_all_dim);
    s.attention_factor = d.attention_factor.value_or(defaults.attention_factor);
    s.low_freq_factor = d.low_freq_factor.value_or(defaults.low_freq_factor);
    s.high_freq_factor = d.high_freq_factor.value_or(defaults.high_freq_factor);
    if (t == scaling_type::longrope) {
      if (!d.short_factor || !d.long_factor)
        invalid("posenc: longrope scaling needs short_factor and long_factor lists");
      short_factor = *d.short_factor;
      long_factor = *d.long_factor;
    }
  }

  resolved_config r(c, std::move(short_factor), std::move(long_factor));
  require_ok(validate(r.config()));
  r.echo = echo_of(r.config(), d, sources);
  return r;
}

}  // namespace posenc::cli
