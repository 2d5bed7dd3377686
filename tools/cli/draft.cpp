#include "cli/draft.hpp"

#include <posenc/spec/rope.hpp>

#include <string>
#include <utility>

#include "cli/error.hpp"

namespace posenc::cli {

namespace {
template <class T>
void take(std::optional<T>& into, const std::optional<T>& from) {
  if (from) into = from;
}

}  // namespace

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

resolved_config resolve(const config_draft& d) {
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
  return r;
}

}  // namespace posenc::cli
