#include "cli/commands.hpp"

#include <array>

#include "cli/accuracy.hpp"
#include "cli/additive.hpp"
#include "cli/analysis.hpp"
#include "cli/apply.hpp"
#include "cli/compute.hpp"
#include "cli/emit.hpp"
#include "cli/entropy.hpp"
#include "cli/error.hpp"
#include "cli/flags.hpp"
#include "cli/layers.hpp"
#include "cli/output.hpp"
#include "cli/run.hpp"
#include "cli/t5.hpp"

namespace posenc::cli {

namespace {

int run_freqs(const invocation& inv, std::ostream& out) {
  const resolved_config rc = configure(inv);
  write_freqs(out, compute_freqs(rc.config(), inv.seq_len), inv.format, rc.echo);
  return exit_ok;
}

int run_table(const invocation& inv, std::ostream& out) {
  const resolved_config rc = configure(inv);
  // parse_args has checked that the positions are consecutive.
  const position_range r{inv.positions->first, inv.positions->last};
  write_table(out, compute_table(rc.config(), r, inv.seq_len), inv.format, rc.echo);
  return exit_ok;
}

// The flags of each command beyond its groups (command_info::groups).
constexpr command_flag table_flags[] = {{"--positions"}};
constexpr command_flag apply_flags_list[] = {
    {"--input"},
    {"--input-k"},
    {"--position-ids"},
    {"--shape-order"},
    {"--output"},
    {"--output-k"},
    {"--no-scale-cos-sin"},
    {"--scale-cos-sin"},
    {"--max-elements"},
    {"--head-dim", "the input's last dimension"},
    {"--seq-len", "the largest position + 1 (HF)"},
    {"--max-input-bytes", "1 GiB (--input), 16 MiB (--hf-config), 64 MiB (--gguf)"},
    {"--mrope-section"},
    {"--mrope-interleaved"},
};
constexpr command_flag alibi_flags[] = {{"--heads"},
                                        {"--positions", "none (slopes only)", "--positions 512"},
                                        {"--variant"},
                                        {"--bloom"}};
// sinusoidal's --head-dim, --layout and --base are the RoPE flags' names for its own quantities.
constexpr command_flag sinusoidal_flags[] = {
    {"--head-dim", "required", "--head-dim 512", "the table's width (at most 65536)"},
    {"--positions", "", "--positions 1024"},
    {"--layout", "paper", "--layout split",
     "interleaved sin/cos, exponent 2k/D (paper), or [sin | cos],\n"
     "exponent k/(D/2-1) (split: fairseq, tensor2tensor)",
     "paper|split"},
    {"--padding-idx"},
    {"--base", "", "--base 10000", "the base of the exponent (default 10000)"},
};
constexpr command_flag decay_flags[] = {{"--max-distance", "required"},
                                        {"--svg"},
                                        {"--work-limit", "1073741824"},
                                        {"--format", "text"}};
constexpr command_flag dials_flags[] = {{"--positions", "", "--positions 131072"}, {"--svg"}};
constexpr command_flag ramp_flags[] = {{"--svg"}};
constexpr command_flag check_flags[] = {{"--max-distance", "from the configuration"},
                                        {"--work-limit", "1073741824"},
                                        {"--format", "text"}};
constexpr command_flag emit_flags_list[] = {
    {"--lang"}, {"--positions", "", "--positions 4096"}, {"--table"}, {"--name"}};
constexpr command_flag accuracy_flags_list[] = {
    {"--positions", "1000,65536,1000000", "--positions 1000,65536,1000000"},
    {"--svg"},
    {"--work-limit", "4194304"}};
constexpr command_flag layers_flags[] = {
    {"--preset"}, {"--hf-config"}, {"--max-input-bytes"}, {"--max-depth"}};
constexpr command_flag entropy_flags_list[] = {{"--lengths"},
                                               {"--samples"},
                                               {"--seed"},
                                               {"--temperature"},
                                               {"--floor-scale"},
                                               {"--attn-scale"},
                                               {"--training-length"},
                                               {"--qk"},
                                               {"--svg"},
                                               {"--work-limit", "17179869184"},
                                               {"--format", "text"}};
// entropy evaluates each length L at seq_len L (dynamic, longrope): the rope group's --seq-len
// has nothing to set there.
constexpr std::string_view entropy_without[] = {"--seq-len"};
constexpr command_flag t5_flags_list[] = {
    {"--num-buckets"},   {"--max-distance", "128", "--max-distance 128"},
    {"--bidirectional"}, {"--causal"},
    {"--log"},           {"--relative-positions"},
    {"--query-length"},  {"--key-length"},
    {"--weights"},       {"--max-input-bytes", "16 MiB"}};

constexpr std::uint8_t rope_command = flag_group::source | flag_group::rope | flag_group::format;

constexpr command_info table[] = {
    {command::freqs, "freqs", "[config] [--seq-len N] [--format json|csv|text]",
     "inv_freq of every rotary pair (float32 and float64) and the attention factor", false, "",
     run_freqs, rope_command},
    {command::table, "table", "--positions SET [config] [--seq-len N] [--format json|csv|text]",
     "cos and sin of p * inv_freq_i, times the attention factor, as float32, for\n"
     "consecutive positions (N, A:B; below 2^32, at most 2^20 positions and 2^24 entries\n"
     "per call)",
     false, "", run_table, rope_command, table_flags},
    {command::apply, "apply",
     "--input FILE [--input-k FILE] [--position-ids FILE] [--shape-order O]\n"
     "[config] [--seq-len N] [--format json|csv|text | --output FILE [--output-k FILE]]",
     "RoPE applied to the tensor x of a JSON file {\"x\": [...], \"shape\": [tokens, heads,\n"
     "head_dim], \"positions\": [...]} (positions optional: 0, 1, ...) -> {\"y\": [...]},\n"
     "or of a .npy (float32, float16; BHTD/BTHD with --shape-order) -> .npy (--output);\n"
     "head_dim defaults to the last dimension; seq_len to the largest position + 1",
     false, "", run_apply, rope_command, apply_flags_list},
    {command::alibi, "alibi",
     "--heads H [--positions L] [--variant causal|symmetric] [--bloom] [--format F]",
     "ALiBi slopes of H heads as float32 (the reference get_slopes, or BLOOM's float32\n"
     "powers with --bloom); with --positions L also each head's L x L bias (row-major, query i,\n"
     "key j): -m (i - j) for j <= i and 0 for later keys (causal), or -m |i - j| (symmetric)",
     false, "", run_alibi, static_cast<std::uint8_t>(flag_group::format), alibi_flags},
    {command::sinusoidal, "sinusoidal",
     "--head-dim D --positions N [--layout paper|split] [--padding-idx P]\n"
     "[--base B] [--format F]",
     "the sinusoidal position table, rows 0 to N-1 of width D, float32 correctly\n"
     "rounded: paper layout (interleaved sin/cos, exponent 2k/D) or split (fairseq/\n"
     "tensor2tensor: [sin | cos], exponent k/(D/2-1), zero column for odd D); --padding-idx\n"
     "zeroes that row as fairseq does (at most 2^24 values per call for both commands)",
     false, "", run_sinusoidal, static_cast<std::uint8_t>(flag_group::format), sinusoidal_flags},
    {command::decay, "decay", "--max-distance N [config] [--csv | --format F] [--svg FILE]",
     "the RoFormer decay bound f(r) for r = 0..N (N <= 2^24) and the means of f over the\n"
     "dyadic windows [2^k, 2^(k+1)); text summary, or --csv: distance,bound,window_mean",
     true, "", run_decay, rope_command, decay_flags},
    {command::dials, "dials", "--positions N [config] [--format F] [--svg FILE]",
     "per rotary pair: inv_freq, wavelength 2 pi/inv_freq, turns over the context of N\n"
     "positions (0 to N-1) and whether it never completes one, next to the unscaled\n"
     "configuration's values",
     false, "", run_dials, rope_command, dials_flags},
    {command::ramp, "ramp", "[config with yarn or llama3] [--format F] [--svg FILE]",
     "per pair, the weight of inv_freq/factor in the YaRN or llama3 blend (0: unchanged,\n"
     "1: divided by the factor) and HF's own ramp_factor / smooth_factor",
     false, "", run_ramp, rope_command, ramp_flags},
    {command::check, "check", "[config] [--max-distance N] [--format F]",
     "the laws (orthogonality, norm, relative dependence, decay) on samples of this\n"
     "configuration: worst deviation, limit, pass/fail; exit 3 if a law fails",
     false, "--svg FILE writes a plot (decay, dials, ramp); docs/analysis.md", run_check,
     rope_command, check_flags},
    {command::emit, "emit",
     "--lang c|cpp --positions N [config] [--table compact|simd] [--name PREFIX]",
     "a self-contained C99 (c) or C++20 (cpp) header on stdout: the float32 cos/sin table\n"
     "for positions 0 to N-1 (compact: rotary_dim/2 entries a position; simd: rotary_dim,\n"
     "by channel), its configuration and measured accuracy in a comment, and an in-place\n"
     "rotation function, bit for bit the library's (N x rotary_dim <= 2^21); --name\n"
     "sets the prefix (default posenc_rope)",
     true, "", run_emit, flag_group::source | flag_group::rope, emit_flags_list},
    {command::accuracy, "accuracy", "[config] [--positions SET] [--format F] [--svg FILE]",
     "max abs error of float32 cos/sin vs exact at each position (default 1000, 65536,\n"
     "1000000): posenc's table, HF's float32 angle, ggml's running product; --svg FILE\n"
     "plots a log-spaced sweep from 1 to 10^7 (docs/accuracy.md)",
     false, "", run_accuracy, rope_command, accuracy_flags_list},
    {command::layers, "layers", "--preset NAME | --hf-config FILE [--format json|csv|text]",
     "the per-layer plan of a model (docs/layers.md): each layer's encoding (rope, mrope,\n"
     "axial_rope or nope), attention (full, sliding, chunked), table and query temperature,\n"
     "and the distinct tables to build once; --preset takes a model preset (gemma-3-4b,\n"
     "llama-4-scout, ...), --hf-config reads layer_types, sliding_window_pattern,\n"
     "rope_local_base_freq, no_rope_layers and the other per-layer keys",
     true, "", run_layers, static_cast<std::uint8_t>(flag_group::format), layers_flags},
    {command::entropy, "entropy",
     "--lengths A:B|a,b,... [config] [--samples N] [--seed S]\n"
     "[--temperature none|llama4|log-n] [--floor-scale X] [--attn-scale X]\n"
     "[--training-length N] [--qk FILE] [--format F] [--svg FILE]",
     "expected softmax entropy of the last query's attention over L keys for seeded\n"
     "random q, k (default 128 samples): the configuration as given, without its scaling,\n"
     "and with a query temperature, next to log L; A:B is A, 2A, ... up to B (1k = 1024,\n"
     "1M = 2^20; L <= 4M, at most 64 lengths); --qk FILE: a given q and k instead",
     true, "", run_entropy, rope_command, entropy_flags_list, entropy_without},
    {command::t5_bias, "t5-bias",
     "[--num-buckets N] [--max-distance D] [--bidirectional | --causal]\n"
     "[--log hf-float32|exact] [--relative-positions A:B | --query-length Q\n"
     "--key-length K] [--weights FILE] [--format F]",
     "the T5 relative position bucket (HF _relative_position_bucket) of each relative\n"
     "position key - query A..B-1 (default -D..D: every bucket; 32 buckets, D = 128,\n"
     "bidirectional), or the Q x K matrix of HF's compute_bias; --weights FILE (.npy\n"
     "[num_buckets, heads]) adds each head's bias",
     false, "", run_t5_bias, static_cast<std::uint8_t>(flag_group::format), t5_flags_list},
};

// Row k is command k + 1 (command::none is 0), so that command_of indexes.
constexpr bool rows_in_enum_order() {
  for (std::size_t k = 0; k < std::size(table); ++k)
    if (static_cast<std::size_t>(table[k].id) != k + 1) return false;
  return true;
}
static_assert(rows_in_enum_order());

}  // namespace

std::span<const command_info> commands() {
  return table;
}

const command_info& command_of(command id) {
  return table[static_cast<std::size_t>(id) - 1];
}

bool takes_flag(const command_info& c, std::string_view name) {
  for (const std::string_view w : c.without_flags)
    if (w == name) return false;
  for (const command_flag& f : c.own_flags)
    if (f.name == name) return true;
  const flag* f = find_named(flags(), name);
  return f != nullptr && f->group != flag_group::own &&
         (c.groups & static_cast<std::uint8_t>(f->group)) != 0;
}

std::string_view flag_default(const command_info& c, std::string_view name) {
  for (const command_flag& f : c.own_flags)
    if (f.name == name && !f.default_value.empty()) return f.default_value;
  const flag* f = find_named(flags(), name);
  return f != nullptr ? f->default_value : std::string_view{};
}

std::string_view flag_example(const command_info& c, std::string_view name) {
  for (const command_flag& f : c.own_flags)
    if (f.name == name && !f.example.empty()) return f.example;
  const flag* f = find_named(flags(), name);
  return f != nullptr ? f->example : std::string_view{};
}

const command_flag* own_flag(const command_info& c, std::string_view name) {
  for (const command_flag& f : c.own_flags)
    if (f.name == name) return &f;
  return nullptr;
}

std::string command_list() {
  constexpr auto names = [] {
    std::array<std::string_view, std::size(table)> out{};
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = table[k].name;
    return out;
  }();
  return join_names(names, ", ", " or ");
}

}  // namespace posenc::cli
