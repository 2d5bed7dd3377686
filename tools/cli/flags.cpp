#include "cli/flags.hpp"

#include <algorithm>
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

// --layout: a RoPE layout under its own name or an alias (HF, ggml), or the sinusoidal
// command's (parse_args keeps each kind to its commands).
void layout(invocation& inv, const flag_value& v) {
  if (const auto l = find_rope_layout(v.text)) {
    inv.flags.layout = *l;
  } else if (const auto s = sinusoidal_layout_names.find(v.text)) {
    inv.additive.layout = *s;
  } else {
    bad_value(v.flag, rope_layout_words);
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

// --preset, --hf-config and --gguf: the configuration the flags are laid over, one at most (two
// different ones are a conflict, conflict_groups).
template <std::optional<std::string> invocation::*Source>
void source(invocation& inv, const flag_value& v) {
  if (inv.*Source) usage_error("posenc: " + std::string(v.flag) + " given twice");
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

// --positions: one syntax in every command; parse_args checks what the command needs of the set.
void positions(invocation& inv, const flag_value& v) {
  inv.positions = parse_positions(v.text);
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

constexpr auto source_group = flag_group::source;
constexpr auto rope_group = flag_group::rope;
constexpr auto format_group = flag_group::format;
constexpr auto own_group = flag_group::own;

// Row by row: name, value, setter, help section, help line, group, default, example. The order is
// that of the Config and Run lines of `posenc --help`; the flags of single commands follow.
// clang-format off
constexpr flag table[] = {
    {"--preset", nonempty("a preset name"), source<&invocation::preset>,
     config, {"NAME", "a published model's configuration"},
     source_group, "none", "--preset llama-3.1-8b"},
    {"--hf-config", nonempty("a file name"), source<&invocation::hf_config>,
     config, {"FILE", "a Hugging Face config.json"},
     source_group, "none", "--hf-config config.json"},
    {"--gguf", nonempty("a file name"), source<&invocation::gguf>,
     config, {"FILE", "a llama.cpp GGUF file (its metadata only)"},
     source_group, "none", "--gguf model.gguf"},
    {"--layer-type", nonempty("a layer type"), to<&invocation::layer_type>,
     config, {"T", "--hf-config: the rope parameters of layer type T\n"
                   "(e.g. sliding_attention)"},
     source_group, "required when they differ by layer type", "--layer-type sliding_attention"},
    {"--head-dim", integer(1, UINT32_MAX, "a positive integer", max_head_dim),
     to<&invocation::flags, &config_draft::head_dim>,
     config, {"D", "head dimension (at most 65536); sinusoidal: the table's width"},
     rope_group, "required without a preset or file", "--head-dim 128"},
    {"--rotary-dim", integer(1, UINT32_MAX, "a positive integer"), rotary_dim,
     config, {"R", "rotated channels (default D)"},
     rope_group, "D", "--rotary-dim 64"},
    {"--partial-rotary-factor", fraction(), rotary_factor,
     config, {"F", "R = int(D * F), F in (0, 1]"},
     rope_group, "1", "--partial-rotary-factor 0.5"},
    {"--base", number(), to<&invocation::flags, &config_draft::base>,
     config, {"B", "rope_theta (default 10000)"},
     rope_group, "10000", "--base 500000"},
    {"--layout", text(), layout,
     config, {"interleaved|half", "rotation pairs (2i, 2i+1) or (i, i + R/2) (default half;\n"
                                  "aliases gptj, norm = interleaved; neox, rotate_half = half);\n"
                                  "sinusoidal: paper|split (default paper)"},
     rope_group, "half", "--layout gptj"},
    {"--scaling", one_of(scaling_names), to<&invocation::flags, &config_draft::scaling>,
     config, {"", "(default none)"},
     rope_group, "none", "--scaling yarn"},
    {"--factor", number(), to<&invocation::flags, &config_draft::factor>,
     config, {"S", "scaling factor"},
     rope_group, "yarn, longrope: max / original; else required", "--factor 8"},
    {"--original-max", integer(1, UINT32_MAX, "a positive integer below 2^32"),
     to<&invocation::flags, &config_draft::original_max_position_embeddings>,
     config, {"N", "original_max_position_embeddings (yarn, llama3, longrope)"},
     rope_group, "--max-position-embeddings", "--original-max 8192"},
    {"--max-position-embeddings", integer(1, UINT32_MAX, "a positive integer below 2^32"),
     to<&invocation::flags, &config_draft::max_position_embeddings>,
     config, {"N", "max_position_embeddings (dynamic, longrope)"},
     rope_group, "none", "--max-position-embeddings 131072"},
    {"--beta-fast", number(), to<&invocation::flags, &config_draft::beta_fast>,
     config, {"X", "yarn correction range (default 32, 1)"},
     rope_group, "32", "--beta-fast 32"},
    {"--beta-slow", number(), to<&invocation::flags, &config_draft::beta_slow>,
     same_line, {"X", "yarn correction range, the slow end"},
     rope_group, "1", "--beta-slow 1"},
    {"--no-truncate", no_value(), truncate<false>,
     config, {"", "yarn: keep the correction range unrounded, or floor/ceil it"},
     rope_group, "off (truncate)", "--no-truncate"},
    {"--truncate", no_value(), truncate<true>, same_line,
     {"", "yarn: floor/ceil the correction range (HF's default)"},
     rope_group, "on", "--truncate"},
    {"--mscale", number(), to<&invocation::flags, &config_draft::mscale>,
     config, {"X", "yarn (DeepSeek) magnitude pair"},
     rope_group, "0 (absent)", "--mscale 1"},
    {"--mscale-all-dim", number(), to<&invocation::flags, &config_draft::mscale_all_dim>,
     same_line, {"X", "yarn (DeepSeek) magnitude pair, the second"},
     rope_group, "0 (absent)", "--mscale-all-dim 1"},
    {"--attention-factor", number(), to<&invocation::flags, &config_draft::attention_factor>,
     config, {"X", "yarn, longrope: explicit attention factor"},
     rope_group, "0 (derive it)", "--attention-factor 1.2"},
    {"--low-freq-factor", number(), to<&invocation::flags, &config_draft::low_freq_factor>,
     config, {"X", "llama3 (default 1, 4)"},
     rope_group, "1", "--low-freq-factor 1"},
    {"--high-freq-factor", number(), to<&invocation::flags, &config_draft::high_freq_factor>,
     same_line, {"X", "llama3, the high band edge"},
     rope_group, "4", "--high-freq-factor 4"},
    {"--short-factor", numbers(), to<&invocation::flags, &config_draft::short_factor>,
     config, {"a,b,...", "longrope: R/2 factors each"},
     rope_group, "required for longrope", "--short-factor 1,1.5,2"},
    {"--long-factor", numbers(), to<&invocation::flags, &config_draft::long_factor>,
     config, {"a,b,...", "longrope: R/2 factors each, past the original context"},
     rope_group, "required for longrope", "--long-factor 1,2,4"},
    {"--mrope-section", text(), mrope_section,
     config, {"T,H,W", "apply: M-RoPE, the pairs of the temporal, height and\n"
                       "width position streams (Qwen2-VL: 16,24,24)"},
     own_group, "none (1-D RoPE)", "--mrope-section 16,24,24"},
    {"--mrope-interleaved", no_value(), mrope_interleaved,
     config, {"", "apply: M-RoPE sections interleaved across pairs (Qwen3-VL)"},
     own_group, "off (contiguous)", "--mrope-interleaved"},

    {"--seq-len", integer(0, std::uint64_t{1} << 53, "a non-negative integer (at most 2^53)"),
     seq_len,
     run, {"N", "HF's seq_len (dynamic: grows the base past\n"
                "max_position_embeddings; longrope: long factors past the\n"
                "original context); default none (apply: max position + 1)"},
     rope_group, "none (apply: max position + 1)", "--seq-len 8192"},
    {"--positions", text(), positions,
     run, {"SET", "positions: N (0 to N-1), A:B (A to B-1), A:B:S (step S) or\n"
                  "a,b,c (a list); each below 2^32 (table: consecutive; alibi,\n"
                  "sinusoidal, dials, emit: from 0, a length)"},
     own_group, "required", "--positions 0:4096"},
    {"--input", nonempty("a file name"), to<&invocation::input>,
     run, {"FILE", "apply: the input tensor (x or q), JSON or .npy"},
     own_group, "required", "--input q.npy"},
    {"--input-k", nonempty("a file name"), to<&invocation::apply, &apply_flags::input_k>,
     run, {"FILE", "apply: k, rotated with the same positions"},
     own_group, "none", "--input-k k.npy"},
    {"--position-ids", nonempty("a file name"), to<&invocation::apply, &apply_flags::position_ids>,
     run, {"FILE", "apply: .npy int32/int64 [tokens] or [batch, tokens]"},
     own_group, "0, 1, ..., tokens-1", "--position-ids pos.npy"},
    {"--shape-order", choice(shape_order_names), to<&invocation::apply, &apply_flags::order>,
     run, {"", "apply: the input's dimensions (3-D: THD; 4-D: required)"},
     own_group, "THD", "--shape-order BHTD"},
    {"--output", nonempty("a file name"), to<&invocation::apply, &apply_flags::output>,
     run, {"FILE", "apply: write the result as .npy"},
     own_group, "none (stdout)", "--output q_rot.npy"},
    {"--output-k", nonempty("a file name"), to<&invocation::apply, &apply_flags::output_k>,
     run, {"FILE", "apply: write k's result as .npy"},
     own_group, "none", "--output-k k_rot.npy"},
    {"--no-scale-cos-sin", no_value(), scale_cos_sin<false>,
     run, {"", "apply: cos, sin without the attention factor, or with it (HF)"},
     own_group, "off (scaled, as HF)", "--no-scale-cos-sin"},
    {"--scale-cos-sin", no_value(), scale_cos_sin<true>, same_line,
     {"", "apply: cos, sin times the attention factor (HF)"},
     own_group, "on", "--scale-cos-sin"},
    {"--format", choice(format_names), format,
     run, {"", "output format (default json)"},
     format_group, "json", "--format csv"},
    {"--csv", no_value(), csv, same_line,
     {"", "the same as --format csv"},
     format_group, "off", "--csv"},
    {"--work-limit", integer(1, UINT64_MAX, "a positive integer"), to<&invocation::work_limit>,
     run, {"N", "accuracy, decay, check, entropy: the work budget (docs/cli.md)"},
     own_group, "accuracy 2^22, decay and check 2^30, entropy 2^34", "--work-limit 4194304"},
    {"--max-input-bytes", integer(1, max_input_bytes_limit), to<&invocation::max_input_bytes>,
     run, {"N", "the largest --input / --hf-config file, the most of\n"
                "--gguf read (default 1 GiB / 16 MiB / 64 MiB)"},
     source_group, "1 GiB / 16 MiB / 64 MiB", "--max-input-bytes 1048576"},
    {"--max-elements", integer(1, max_elements_limit), to<&invocation::max_elements>,
     run, {"N", "apply: the most numbers in x (default 2^24)"},
     own_group, "16777216", "--max-elements 33554432"},
    {"--max-depth", integer(1, max_depth_limit), to<&invocation::max_depth>,
     run, {"N", "--hf-config: the deepest nesting (default 64)"},
     source_group, "64", "--max-depth 128"},
    {"--verbose", no_value(), to<&invocation::verbose>,
     run, {"", "--hf-config, --gguf: the keys used and not used, on stderr"},
     source_group, "off", "--verbose"},

    // alibi
    {"--heads", integer(1, max_alibi_heads), to<&invocation::additive, &additive_flags::heads>,
     none, {"H", "alibi: the number of heads"}, own_group, "required", "--heads 8"},
    {"--variant", choice(alibi_variant_names), to<&invocation::additive, &additive_flags::variant>,
     none, {"", "alibi: the bias of later keys: 0 (causal) or mirrored"}, own_group, "causal",
     "--variant symmetric"},
    {"--bloom", no_value(), to<&invocation::additive, &additive_flags::bloom>,
     none, {"", "alibi: BLOOM's float32 slopes"}, own_group, "off", "--bloom"},
    // sinusoidal (and --positions N, --head-dim D, --layout paper|split, --base B)
    {"--padding-idx", integer(0, UINT32_MAX, "a non-negative integer below 2^32"),
     to<&invocation::additive, &additive_flags::padding_idx>,
     none, {"P", "sinusoidal: zero row P (fairseq)"}, own_group, "none", "--padding-idx 1"},
    // emit
    {"--lang", choice(emit_lang_names), to<&invocation::emit, &emit_flags::lang>,
     none, {"", "emit: C99 or C++20"}, own_group, "required", "--lang c"},
    {"--table", choice(emit_table_names), to<&invocation::emit, &emit_flags::table>,
     none, {"", "emit: rotary_dim/2 entries a position, or rotary_dim by channel"},
     own_group, "compact", "--table simd"},
    {"--name", text(), to<&invocation::emit, &emit_flags::name>,  // emit checks the identifier
     none, {"PREFIX", "emit: the prefix of every name in the header"},
     own_group, "posenc_rope", "--name rope_llama"},
    // accuracy, decay, dials, ramp, check
    {"--svg", nonempty("a file name"), to<&invocation::svg>,
     none, {"FILE", "also write a plot (SVG)"}, own_group, "none", "--svg plot.svg"},
    {"--max-distance", integer(1, std::uint64_t{1} << 24),  // decay, check, t5-bias
     to<&invocation::analysis, &analysis_flags::max_distance>,
     none, {"N", "the largest relative distance r (0 to N), at most 2^24"},
     own_group, "required (check: from the configuration)", "--max-distance 4096"},
    // entropy
    {"--lengths", text(), lengths,
     none, {"A:B|a,b,...", "entropy: the context lengths L: A, 2A, ... up to B (1k = 1024,\n"
                          "1M = 2^20), or a list"},
     own_group, "required", "--lengths 1k:128k"},
    {"--samples", integer(1, UINT32_MAX, "a positive integer", analysis::max_entropy_samples),
     to<&invocation::entropy, &entropy_flags::samples>,
     none, {"N", "entropy: random q, k draws"}, own_group, "128", "--samples 64"},
    {"--seed", integer(0, UINT64_MAX), to<&invocation::entropy, &entropy_flags::seed>,
     none, {"S", "entropy: the seed of the draws"}, own_group, "1", "--seed 7"},
    {"--temperature", choice(temperature_choice_names),
     to<&invocation::entropy, &entropy_flags::temperature>,
     none, {"", "entropy: a query temperature as a third curve"}, own_group, "none",
     "--temperature llama4"},
    {"--floor-scale", number(), to<&invocation::entropy, &entropy_flags::floor_scale>,
     none, {"X", "entropy: llama4 floor_scale"}, own_group, "8192 (or the preset's)",
     "--floor-scale 8192"},
    {"--attn-scale", number(), to<&invocation::entropy, &entropy_flags::attn_scale>,
     none, {"X", "entropy: llama4 attn_scale"}, own_group, "0.1 (or the preset's)",
     "--attn-scale 0.1"},
    {"--training-length", integer(2, max_temperature_position),
     to<&invocation::entropy, &entropy_flags::training_length>,
     none, {"N", "entropy: log-n's training length L"}, own_group,
     "original_max_position_embeddings", "--training-length 8192"},
    {"--qk", nonempty("a file name"), to<&invocation::entropy, &entropy_flags::qk>,
     none, {"FILE", "entropy: a given q and k instead of random draws"}, own_group, "none",
     "--qk qk.json"},
    // t5-bias (and --max-distance)
    {"--num-buckets", integer(0, UINT32_MAX, "a non-negative integer below 2^32"),
     to<&invocation::t5, &t5_flags::num_buckets>,
     none, {"N", "t5-bias: relative_attention_num_buckets"}, own_group, "32", "--num-buckets 32"},
    {"--bidirectional", no_value(), t5_direction_flag<t5_direction::bidirectional>,
     none, {"", "t5-bias: encoder buckets (both directions)"}, own_group, "on",
     "--bidirectional"},
    {"--causal", no_value(), t5_direction_flag<t5_direction::causal>,
     none, {"", "t5-bias: decoder buckets (earlier keys only)"}, own_group, "off", "--causal"},
    {"--log", choice(t5_log_kind_names), to<&invocation::t5, &t5_flags::log>,
     none, {"", "t5-bias: HF's float32 log or the exact one"}, own_group, "hf-float32",
     "--log exact"},
    {"--relative-positions", text(), relative_positions,
     none, {"A:B", "t5-bias: relative positions key - query from A to B-1"}, own_group,
     "-D:D+1", "--relative-positions -8:9"},
    {"--query-length", integer(1, max_t5_matrix_entries),
     to<&invocation::t5, &t5_flags::query_length>,
     none, {"Q", "t5-bias: the Q x K matrix of compute_bias, Q queries"}, own_group, "none",
     "--query-length 4"},
    {"--key-length", integer(1, max_t5_matrix_entries),
     to<&invocation::t5, &t5_flags::key_length>,
     none, {"K", "t5-bias: the Q x K matrix, K keys"}, own_group, "none", "--key-length 6"},
    {"--weights", nonempty("a file name"), to<&invocation::t5, &t5_flags::weights>,
     none, {"FILE", "t5-bias: .npy [num_buckets, heads] of relative_attention_bias"}, own_group,
     "none", "--weights bias.npy"},

    {"--version", no_value(), to<&invocation::version>,
     none, {"", "the version of posenc"}, own_group, "", "--version"},
};
// clang-format on

// Old spelling -> the flag it now is (docs/cli.md, "Vocabulary").
constexpr renamed_flag renamed_table[] = {
    {"--max-pos", "--positions"},  // emit
    {"--context", "--positions"},  // dials
    {"--length", "--positions"},   // alibi
    {"--dim", "--head-dim"},       // sinusoidal
};

constexpr conflict_group conflict_table[] = {
    {{"--preset", "--hf-config", "--gguf"}, "give one configuration source"},
    {{"--format", "--csv"}, "--csv is --format csv"},
    {{"--format", "--output"}, "--output writes .npy"},
    {{"--csv", "--output"}, "--output writes .npy"},
    {{"--rotary-dim", "--partial-rotary-factor"}, "both set the rotary width"},
    {{"--truncate", "--no-truncate"}, ""},
    {{"--scale-cos-sin", "--no-scale-cos-sin"}, ""},
};

// clang-format on

}  // namespace

std::span<const flag> flags() {
  return table;
}

std::span<const renamed_flag> renamed_flags() {
  return renamed_table;
}

std::span<const conflict_group> conflict_groups() {
  return conflict_table;
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

position_set parse_positions(std::string_view text) {
  const std::string what =
      "posenc: --positions needs N, A:B, A:B:S or a,b,c: integers with 0 <= A < B <= 4294967296, "
      "1 <= S <= 4294967296, each position below 4294967296 (at most " +
      std::to_string(max_positions) + " listed)";
  position_set s;
  if (text.find(',') != std::string_view::npos) {
    s.step = 0;
    while (true) {
      const std::size_t comma = text.find(',');
      const auto p = parse_uint(text.substr(0, comma), 0, position_limit - 1);
      if (!p || s.list.size() == max_positions) usage_error(what);
      s.list.push_back(*p);
      if (comma == std::string_view::npos) break;
      text = text.substr(comma + 1);
    }
    s.first = *std::ranges::min_element(s.list);
    s.last = *std::ranges::max_element(s.list) + 1;
    return s;
  }
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    // N: the positions 0 to N-1.
    const auto n = parse_uint(text, 1, position_limit);
    if (!n) usage_error(what);
    s.last = *n;
    return s;
  }
  const std::string_view rest = text.substr(colon + 1);
  const std::size_t colon2 = rest.find(':');
  const auto first = parse_uint(text.substr(0, colon), 0, position_limit - 1);
  const auto last = parse_uint(rest.substr(0, colon2), 1, position_limit);
  std::optional<std::uint64_t> step = 1;
  if (colon2 != std::string_view::npos)
    step = parse_uint(rest.substr(colon2 + 1), 1, position_limit);
  if (!first || !last || !step || *first >= *last) usage_error(what);
  s.first = *first;
  s.last = *last;
  s.step = *step;
  return s;
}

}  // namespace posenc::cli
