// A RoPE configuration being assembled from its sources (a preset or an HF config.json, then the
// command-line flags): every field optional, so that a later source overrides only what it sets.
// resolve() fills the defaults, derives what HF derives, and validates.
#pragma once

#include <posenc/spec/rope.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace posenc::cli {

// The largest head_dim the tool accepts (real models use at most a few hundred).
inline constexpr std::uint32_t max_head_dim = 65536;

// The rotary width: either absolute (rotary_dim, GPT-J) or a fraction of head_dim
// (partial_rotary_factor, GPT-NeoX rotary_pct), resolved with HF's int(head_dim * factor).
struct rotary_width {
  std::uint32_t dim = 0;  // used when factor == 0
  double factor = 0.0;
  static rotary_width absolute(std::uint32_t d) { return {d, 0.0}; }
  static rotary_width fraction(double f) { return {0, f}; }
  bool operator==(const rotary_width&) const = default;
};

struct config_draft {
  std::optional<std::uint32_t> head_dim;
  std::optional<rotary_width> rotary;
  std::optional<double> base;
  std::optional<rope_layout> layout;
  std::optional<scaling_type> scaling;
  std::optional<double> factor;
  std::optional<std::uint32_t> original_max_position_embeddings;
  std::optional<std::uint32_t> max_position_embeddings;
  std::optional<double> beta_fast;
  std::optional<double> beta_slow;
  std::optional<bool> truncate;
  std::optional<double> mscale;
  std::optional<double> mscale_all_dim;
  std::optional<double> attention_factor;
  std::optional<double> low_freq_factor;
  std::optional<double> high_freq_factor;
  std::optional<std::vector<double>> short_factor;
  std::optional<std::vector<double>> long_factor;
  // M-RoPE (spec/mrope.hpp): the pairs of each position stream (temporal, height, width) and
  // whether the sections interleave (Qwen3-VL). Read by `apply` and `layers`; resolve() ignores
  // them (echo_mrope echoes them).
  std::optional<std::array<std::uint32_t, 3>> mrope_section;
  std::optional<bool> mrope_interleaved;
  bool operator==(const config_draft&) const = default;
};

// `base` with every field that `over` sets replaced by over's.
config_draft overlay(config_draft base, const config_draft& over);

// Where each field of a draft came from, one label a field (docs/cli.md, "What was computed"):
// "preset NAME", "config FILE KEY" (--hf-config), "gguf FILE KEY", "flag --X"; empty when unset.
struct draft_sources {
  std::string head_dim, rotary, base, layout, scaling, factor, original_max_position_embeddings,
      max_position_embeddings, beta_fast, beta_slow, truncate, mscale, mscale_all_dim,
      attention_factor, low_freq_factor, high_freq_factor, short_factor, long_factor, mrope_section,
      mrope_interleaved;
  bool operator==(const draft_sources&) const = default;
};

// `label` for every field that `d` sets.
draft_sources label_fields(const config_draft& d, const std::string& label);

// `base` with the label of every field that `over` sets replaced by over_sources'.
draft_sources overlay_sources(draft_sources base, const config_draft& over,
                              const draft_sources& over_sources);

// One value of the resolved configuration and where it came from, as a command echoes it:
// `json` is the value as JSON, `text` as CSV/text headers print it.
struct echo_entry {
  std::string name;
  std::string json;
  std::string text;
  std::string source;
  bool operator==(const echo_entry&) const = default;
};

// What a command computed with, in order (docs/cli.md, "What was computed"). One writer prints it
// for every command and format (output.hpp: echo_json, echo_header).
struct config_echo {
  std::vector<echo_entry> entries;
  // The file read (--hf-config, --gguf), printable; empty when none. Then the keys it had.
  std::string file;
  std::vector<std::string> keys_used;
  std::vector<std::string> keys_not_used;

  // Appends, or replaces the entry of the same name.
  void set_uint(const std::string& name, std::uint64_t v, const std::string& source);
  void set_number(const std::string& name, double v, const std::string& source);
  void set_bool(const std::string& name, bool v, const std::string& source);
  void set_text(const std::string& name, const std::string& v, const std::string& source);
  void set_list(const std::string& name, const std::vector<double>& v, const std::string& source);
  void set(echo_entry e);
  // The entry of that name, or nullptr.
  const echo_entry* find(const std::string& name) const;
};

// The M-RoPE entries of the echo: mrope_section (a list, T,H,W) from `section_source` and
// mrope_interleaved from `interleaved_source` ("default" when empty: contiguous sections).
void echo_mrope(config_echo& echo, const std::array<std::uint32_t, 3>& section, bool interleaved,
                const std::string& section_source, const std::string& interleaved_source);

// A JSON string literal of `s` (quotes, backslashes and control characters escaped).
std::string json_quote(const std::string& s);
// The shortest decimal text that reads back to `x` (std::to_chars), for the echo.
std::string shortest_double(double x);

// Every field of a complete configuration (a preset), except the scaling fields when the scaling
// is none, and a longrope factor that equals max_position_embeddings / original (left to derive).
config_draft draft_from_config(const rope_config& c);

// A validated rope_config that owns its longrope factor lists. config() returns a view whose spans
// point into this object: keep the object alive while the view is used.
class resolved_config {
 public:
  resolved_config(const rope_config& c, std::vector<double> short_factor,
                  std::vector<double> long_factor);
  rope_config config() const;
  // The resolved values with their sources (resolve fills it; commands add their own entries).
  config_echo echo;

 private:
  rope_config config_;
  std::vector<double> short_factor_;
  std::vector<double> long_factor_;
};

// The configuration a draft describes, with these defaults and derivations (HF's where HF has one):
//   rotary width     head_dim (partial_rotary_factor 1); a factor f gives int(head_dim * f)
//   base 10000, layout half, scaling none
//   original_max_position_embeddings (yarn, llama3, longrope)  max_position_embeddings if unset
//   factor  required for linear, ntk, dynamic and llama3; for yarn and longrope, if unset,
//           max_position_embeddings / original_max_position_embeddings
//   the rest: the defaults of posenc::rope_scaling (beta 32/1, truncate, llama3 1/4, ...)
// Throws cli_error: exit 2 when head_dim is missing, exit 1 when the configuration is invalid
// (with the text of posenc::message(validate(c)) for the library's rules). The echo names each
// value's source from `sources`, "default" for a default and "derived: ..." for a derivation.
resolved_config resolve(const config_draft& d, const draft_sources& sources = {});

}  // namespace posenc::cli
