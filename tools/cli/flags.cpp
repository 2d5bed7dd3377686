#include "cli/flags.hpp"

#include <array>
#include <concepts>
#include <optional>
#include <type_traits>

#include "cli/entropy.hpp"
#include "cli/numbers.hpp"
#include "cli/t5.hpp"

namespace posenc::cli {

namespace {

// Setting a field from a flag's value, by the field's type.
void assign(bool& field, const flag_value&) {
  field = true;
}
void assign(double& field, const flag_value& v) {
  field = v.number;
}
void assign(std::vector<double>& field, const flag_value& v) {
  field = v.numbers;
}
void assign(std::string& field, const flag_value& v) {
  field = std::string(v.text);
}
template <std::unsigned_integral T>
requires(!std::same_as<T, bool>) void assign(T& field, const flag_value& v) {
  field = static_cast<T>(v.integer);
}
template <class E>
requires std::is_enum_v<E>
void assign(E& field, const flag_value& v) {
  field = static_cast<E>(v.choice);
}
template <class T>
void assign(std::optional<T>& field, const flag_value& v) {
  T value{};
  assign(value, v);
  field = std::move(value);
}

// The setter of the field at inv.*Path[0].*Path[1]...: to<&invocation::flags, &config_draft::base>
// sets inv.flags.base.
template <auto... Path>
void to(invocation& inv, const flag_value& v) {
  assign((inv.*....*Path), v);
}

void rotary_dim(invocation& inv, const flag_value& v) {
  inv.flags.rotary = rotary_width::absolute(static_cast<std::uint32_t>(v.integer));
}
void rotary_factor(invocation& inv, const flag_value& v) {
  inv.flags.rotary = rotary_width::fraction(v.number);
}

// --layout: a RoPE layout, or the sinusoidal command's (which its own check keeps to it).
void layout(invocation& inv, const flag_value& v) {
  if (const auto l = rope_layout_names.find(v.text)) {
    inv.flags.layout = *l;
  } else if (const auto s = sinusoidal_layout_names.find(v.text)) {
    inv.additive.layout = *s;
  } else {
    bad_value(v.flag, expected_value(choice(rope_layout_names)));
  }
}

template <bool On>
void truncate(invocation& inv, const flag_value&) {
  inv.flags.truncate = On;
}

template <bool On>
void scale_cos_sin(invocation& inv, const flag_value&) {
  inv.apply.scale_cos_sin = On;
}

void seq_len(invocation& inv, const flag_value& v) {
  inv.seq_len = v.integer;
  inv.seq_len_given = true;
}

// --preset, --hf-config and --gguf: the configuration the flags are laid over, one at most.
template <std::optional<std::string> invocation::*Source>
void source(invocation& inv, const flag_value& v) {
  if (inv.preset || inv.hf_config || inv.gguf)
    usage_error("posenc: give at most one --preset, --hf-config or --gguf");
  inv.*Source = std::string(v.text);
}

void format(invocation& inv, const flag_value& v) {
  inv.format = static_cast<output_format>(v.choice);
  inv.analysis.format_given = true;
}
void csv(invocation& inv, const flag_value&) {
  inv.format = output_format::csv;
  inv.analysis.format_given = true;
}

// accuracy --positions: comma-separated positions below 2^32, at most max_accuracy_positions.
std::vector<std::uint64_t> parse_position_list(std::string_view text) {
  const std::string what =
      "posenc: --positions needs p1,p2,... with integers 0 <= p < 4294967296 (at most " +
      std::to_string(max_accuracy_positions) + ")";
  std::vector<std::uint64_t> out;
  while (true) {
    const std::size_t comma = text.find(',');
    const auto p = parse_uint(text.substr(0, comma), 0, position_limit - 1);
    if (!p || out.size() == max_accuracy_positions) usage_error(what);
    out.push_back(*p);
    if (comma == std::string_view::npos) return out;
    text = text.substr(comma + 1);
  }
}

// --positions takes three forms: p1,p2,... (accuracy), N (sinusoidal: rows 0..N-1) and A:B
// (table). Which command may have which is checked once the command is known (options.cpp).
void positions(invocation& inv, const flag_value& v) {
  if (v.text.find(',') != std::string_view::npos) {
    inv.accuracy.positions = parse_position_list(v.text);
  } else if (const auto n = parse_uint(v.text, 0, UINT64_MAX);
             n && v.text.find(':') == std::string_view::npos) {
    inv.additive.rows = n;
  } else {
    inv.positions = parse_position_range(v.text);
  }
}

// --mrope-section T,H,W: three non-negative pair counts (spec/mrope.hpp; whether they sum to
// rotary_dim/2 is the library's rule, checked with the configuration).
void mrope_section(invocation& inv, const flag_value& v) {
  std::array<std::uint32_t, 3> s{};
  std::string_view text = v.text;
  for (std::size_t i = 0; i < 3; ++i) {
    const std::size_t comma = text.find(',');
    const auto n = parse_uint(text.substr(0, comma), 0, 65536);
    if (!n || (i < 2) == (comma == std::string_view::npos))
      bad_value(v.flag,
                "T,H,W: the rotary pairs of the temporal, height and width streams "
                "(non-negative integers)");
    s[i] = static_cast<std::uint32_t>(*n);
    if (comma != std::string_view::npos) text = text.substr(comma + 1);
  }
  inv.flags.mrope_section = s;
}
void mrope_interleaved(invocation& inv, const flag_value&) {
  inv.flags.mrope_interleaved = true;
}

template <t5_direction D>
void t5_direction_flag(invocation& inv, const flag_value&) {
  if (inv.t5.direction && *inv.t5.direction != D)
    usage_error("posenc: give --bidirectional or --causal, not both");
  inv.t5.direction = D;
}
void relative_positions(invocation& inv, const flag_value& v) {
  inv.t5.relative = parse_t5_relative_range(v.text);
}

void lengths(invocation& inv, const flag_value& v) {
  inv.entropy.lengths = parse_entropy_lengths(v.text);
}

using enum help_section;

// Row by row: name, value, setter, help section, help lines. The order is that of the Config and
// Run lines of `posenc --help`; the flags of single commands follow.
// clang-format off
constexpr flag table[] = {
    {"--preset", nonempty("a preset name"), source<&invocation::preset>,
     config, {{{"NAME", "a published model's configuration"}}}},
    {"--hf-config", nonempty("a file name"), source<&invocation::hf_config>,
     config, {{{"FILE", "a Hugging Face config.json"}}}},
    {"--gguf", nonempty("a file name"), source<&invocation::gguf>,
     config, {{{"FILE", "a llama.cpp GGUF file (its metadata only)"}}}},
    {"--layer-type", nonempty("a layer type"), to<&invocation::layer_type>,
     config, {{{"T", "--hf-config: the rope parameters of layer type T\n"
                     "(e.g. sliding_attention)"}}}},
    {"--head-dim", integer(1, UINT32_MAX, "a positive integer", max_head_dim),
     to<&invocation::flags, &config_draft::head_dim>,
     config, {{{"D", "head dimension (at most 65536)"}}}},
    {"--rotary-dim", integer(1, UINT32_MAX, "a positive integer"), rotary_dim,
     config, {{{"R", "rotated channels (default D)"}}}},
    {"--partial-rotary-factor", fraction(), rotary_factor,
     config, {{{"F", "R = int(D * F), F in (0, 1]"}}}},
    {"--base", number(), to<&invocation::flags, &config_draft::base>,
     config, {{{"B", "rope_theta (default 10000)"}}}},
    {"--layout", text(), layout,
     config, {{{"interleaved|half", "rotation pairs (2i, 2i+1) or (i, i + R/2) (default half)"}}}},
    {"--scaling", one_of(scaling_names), to<&invocation::flags, &config_draft::scaling>,
     config, {{{"", "(default none)"}}}},
    {"--factor", number(), to<&invocation::flags, &config_draft::factor>,
     config, {{{"S", "scaling factor"}}}},
    {"--original-max", integer(1, UINT32_MAX, "a positive integer below 2^32"),
     to<&invocation::flags, &config_draft::original_max_position_embeddings>,
     config, {{{"N", "original_max_position_embeddings (yarn, llama3, longrope)"}}}},
    {"--max-position-embeddings", integer(1, UINT32_MAX, "a positive integer below 2^32"),
     to<&invocation::flags, &config_draft::max_position_embeddings>,
     config, {{{"N", "max_position_embeddings (dynamic, longrope)"}}}},
    {"--beta-fast", number(), to<&invocation::flags, &config_draft::beta_fast>,
     config, {{{"X", "yarn correction range (default 32, 1)"}}}},
    {"--beta-slow", number(), to<&invocation::flags, &config_draft::beta_slow>,
     same_line, {{{"X", ""}}}},
    {"--no-truncate", no_value(), truncate<false>,
     config, {{{"", "yarn: keep the correction range unrounded, or floor/ceil it"}}}},
    {"--truncate", no_value(), truncate<true>, same_line},
    {"--mscale", number(), to<&invocation::flags, &config_draft::mscale>,
     config, {{{"X", "yarn (DeepSeek) magnitude pair"}}}},
    {"--mscale-all-dim", number(), to<&invocation::flags, &config_draft::mscale_all_dim>,
     same_line, {{{"X", ""}}}},
    {"--attention-factor", number(), to<&invocation::flags, &config_draft::attention_factor>,
     config, {{{"X", "yarn, longrope: explicit attention factor"}}}},
    {"--low-freq-factor", number(), to<&invocation::flags, &config_draft::low_freq_factor>,
     config, {{{"X", "llama3 (default 1, 4)"}}}},
    {"--high-freq-factor", number(), to<&invocation::flags, &config_draft::high_freq_factor>,
     same_line, {{{"X", ""}}}},
    {"--short-factor", numbers(), to<&invocation::flags, &config_draft::short_factor>,
     config, {{{"a,b,...", "longrope: R/2 factors each"}}}},
    {"--long-factor", numbers(), to<&invocation::flags, &config_draft::long_factor>,
     config, {{{"a,b,...", ""}}}},
    {"--mrope-section", text(), mrope_section,
     config, {{{"T,H,W", "apply: M-RoPE, the pairs of the temporal, height and\n"
                         "width position streams (Qwen2-VL: 16,24,24)"}}}},
    {"--mrope-interleaved", no_value(), mrope_interleaved,
     config, {{{"", "apply: M-RoPE sections interleaved across pairs (Qwen3-VL)"}}}},

    {"--seq-len", integer(0, std::uint64_t{1} << 53, "a non-negative integer (at most 2^53)"),
     seq_len,
     run, {{{"N", "HF's seq_len (dynamic: grows the base past\n"
                  "max_position_embeddings; longrope: long factors past the\n"
                  "original context); default none (apply: max position + 1)"}}}},
    {"--positions", text(), positions,
     run, {{{"A:B", "table: positions A to B-1"},
            {"p1,p2,...", "accuracy: the positions (each below 2^32, at most 4096)"}}}},
    {"--input", nonempty("a file name"), to<&invocation::input>,
     run, {{{"FILE", "apply: the input tensor (x or q), JSON or .npy"}}}},
    {"--input-k", nonempty("a file name"), to<&invocation::apply, &apply_flags::input_k>,
     run, {{{"FILE", "apply: k, rotated with the same positions"}}}},
    {"--position-ids", nonempty("a file name"), to<&invocation::apply, &apply_flags::position_ids>,
     run, {{{"FILE", "apply: .npy int32/int64 [tokens] or [batch, tokens]"}}}},
    {"--shape-order", choice(shape_order_names), to<&invocation::apply, &apply_flags::order>,
     run, {{{"", "apply: the input's dimensions (3-D: THD; 4-D: required)"}}}},
    {"--output", nonempty("a file name"), to<&invocation::apply, &apply_flags::output>,
     run, {{{"FILE", "apply: write the result as .npy"}}}},
    {"--output-k", nonempty("a file name"), to<&invocation::apply, &apply_flags::output_k>,
     run, {{{"FILE", "apply: write k's result as .npy"}}}},
    {"--no-scale-cos-sin", no_value(), scale_cos_sin<false>,
     run, {{{"", "apply: cos, sin without the attention factor, or with it (HF)"}}}},
    {"--scale-cos-sin", no_value(), scale_cos_sin<true>, same_line},
    {"--format", choice(format_names), format,
     run, {{{"", "output format (default json)"}}}},
    {"--work-limit", integer(1, UINT64_MAX, "a positive integer"), to<&invocation::work_limit>,
     run, {{{"N", "accuracy, decay, check, entropy: the work budget (docs/cli.md)"}}}},
    {"--max-input-bytes", integer(1, max_input_bytes_limit), to<&invocation::max_input_bytes>,
     run, {{{"N", "the largest --input / --hf-config file, the most of\n"
                  "--gguf read (default 1 GiB / 16 MiB / 64 MiB)"}}}},
    {"--max-elements", integer(1, max_elements_limit), to<&invocation::max_elements>,
     run, {{{"N", "apply: the most numbers in x (default 2^24)"}}}},
    {"--max-depth", integer(1, max_depth_limit), to<&invocation::max_depth>,
     run, {{{"N", "--hf-config: the deepest nesting (default 64)"}}}},
    {"--verbose", no_value(), to<&invocation::verbose>,
     run, {{{"", "--hf-config, --gguf: the keys used and not used, on stderr"}}}},

    // alibi
    {"--heads", integer(1, max_alibi_heads), to<&invocation::additive, &additive_flags::heads>},
    {"--length", integer(1, max_positions), to<&invocation::additive, &additive_flags::length>},
    {"--variant", choice(alibi_variant_names), to<&invocation::additive, &additive_flags::variant>},
    {"--bloom", no_value(), to<&invocation::additive, &additive_flags::bloom>},
    // sinusoidal (and --positions N, --layout paper|split, --base B)
    {"--dim", integer(1, max_head_dim), to<&invocation::additive, &additive_flags::dim>},
    {"--padding-idx", integer(0, UINT32_MAX, "a non-negative integer below 2^32"),
     to<&invocation::additive, &additive_flags::padding_idx>},
    // emit
    {"--lang", choice(emit_lang_names), to<&invocation::emit, &emit_flags::lang>},
    {"--max-pos", integer(1, position_limit), to<&invocation::emit, &emit_flags::max_pos>},
    {"--table", choice(emit_table_names), to<&invocation::emit, &emit_flags::table>},
    {"--name", text(), to<&invocation::emit, &emit_flags::name>},  // emit checks the identifier
    // accuracy, decay, dials, ramp, check
    {"--svg", nonempty("a file name"), to<&invocation::svg>},
    {"--csv", no_value(), csv},
    {"--max-distance", integer(1, std::uint64_t{1} << 24),  // decay, check, t5-bias
     to<&invocation::analysis, &analysis_flags::max_distance>},
    {"--context", integer(1, position_limit), to<&invocation::analysis, &analysis_flags::context>},
    // entropy
    {"--lengths", text(), lengths},
    {"--samples", integer(1, UINT32_MAX, "a positive integer", analysis::max_entropy_samples),
     to<&invocation::entropy, &entropy_flags::samples>},
    {"--seed", integer(0, UINT64_MAX), to<&invocation::entropy, &entropy_flags::seed>},
    {"--temperature", choice(temperature_choice_names),
     to<&invocation::entropy, &entropy_flags::temperature>},
    {"--floor-scale", number(), to<&invocation::entropy, &entropy_flags::floor_scale>},
    {"--attn-scale", number(), to<&invocation::entropy, &entropy_flags::attn_scale>},
    {"--training-length", integer(2, max_temperature_position),
     to<&invocation::entropy, &entropy_flags::training_length>},
    {"--qk", nonempty("a file name"), to<&invocation::entropy, &entropy_flags::qk>},
    // t5-bias (and --max-distance)
    {"--num-buckets", integer(0, UINT32_MAX, "a non-negative integer below 2^32"),
     to<&invocation::t5, &t5_flags::num_buckets>},
    {"--bidirectional", no_value(), t5_direction_flag<t5_direction::bidirectional>},
    {"--causal", no_value(), t5_direction_flag<t5_direction::causal>},
    {"--log", choice(t5_log_kind_names), to<&invocation::t5, &t5_flags::log>},
    {"--relative-positions", text(), relative_positions},
    {"--query-length", integer(1, max_t5_matrix_entries),
     to<&invocation::t5, &t5_flags::query_length>},
    {"--key-length", integer(1, max_t5_matrix_entries),
     to<&invocation::t5, &t5_flags::key_length>},
    {"--weights", nonempty("a file name"), to<&invocation::t5, &t5_flags::weights>},

    {"--version", no_value(), to<&invocation::version>},
};
// clang-format on

}  // namespace

std::span<const flag> flags() {
  return table;
}

std::string expected_value(const value_spec& spec) {
  if (!spec.what.empty()) return std::string(spec.what);
  switch (spec.kind) {
    case value_kind::integer:
      return "an integer in [" + std::to_string(spec.min) + ", " + std::to_string(spec.max) + "]";
    case value_kind::number:
      return "a finite number";
    case value_kind::fraction:
      return "a number in (0, 1]";
    case value_kind::numbers:
      return "comma-separated finite numbers";
    case value_kind::choice:
      return spec.one_of ? "one of " + join_names(spec.names, ", ", ", ")
                         : join_names(spec.names, ", ", " or ");
    default:
      return "a value";
  }
}

position_range parse_position_range(std::string_view text) {
  const char* what =
      "posenc: --positions needs A:B with integers 0 <= A < B <= 4294967296 (positions A to B-1)";
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) usage_error(what);
  const auto first = parse_uint(text.substr(0, colon), 0, position_limit - 1);
  const auto last = parse_uint(text.substr(colon + 1), 1, position_limit);
  if (!first || !last || *first >= *last) usage_error(what);
  if (*last - *first > max_positions)
    usage_error("posenc: --positions covers " + std::to_string(*last - *first) +
                " positions; at most " + std::to_string(max_positions) + " per call");
  return {*first, *last};
}

}  // namespace posenc::cli
