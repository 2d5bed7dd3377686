// The command line of `posenc` as an invocation: a command, config flags, output flags. The
// commands and flags themselves are tables (commands.cpp, flags.cpp); parsing reads each flag's
// value by its row (strict numbers, known names), then checks which flags go with which command.
// The configuration is checked as a whole later (resolve), after the flags have been laid over a
// preset or a config.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <posenc/spec/alibi.hpp>
#include <posenc/spec/sinusoidal.hpp>
#include <posenc/spec/t5.hpp>

#include "cli/draft.hpp"
#include "cli/names.hpp"

namespace posenc::cli {

// In the order of `posenc --help` (commands.cpp).
enum class command : std::uint8_t {
  none,
  freqs,
  table,
  apply,
  alibi,
  sinusoidal,
  decay,
  dials,
  ramp,
  check,
  emit,
  accuracy,
  layers,
  entropy,
  t5_bias,
};
enum class output_format : std::uint8_t { json, csv, text };
inline constexpr name_table<output_format, 3> format_names{{"json", "csv", "text"}};

// Positions [first, last) of `table`.
struct position_range {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};

// The value of --positions (parse_positions, flags.hpp): A:B:S, the positions first, first + step,
// ... below last (N is 0:N:1, A:B is A:B:1); or a list a,b,c (list not empty, step 0, first and
// last the smallest and the largest + 1). Every position is below 2^32.
struct position_set {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::uint64_t step = 1;
  std::vector<std::uint64_t> list;

  // How many positions (with repeats, for a list).
  std::uint64_t count() const { return step == 0 ? list.size() : (last - first + step - 1) / step; }
  // first, first + 1, ..., last - 1 in order (A:B, N, or a list such as 0,1,2,3).
  bool consecutive() const {
    if (step != 0) return step == 1 || count() == 1;
    for (std::size_t i = 0; i < list.size(); ++i)
      if (list[i] != first + i) return false;
    return true;
  }
  // 0, 1, ..., N-1: what the commands that take a length (N) need.
  bool from_zero() const { return first == 0 && consecutive(); }
  // Every position, in order. For A:B:S the caller bounds count() first.
  std::vector<std::uint64_t> values() const {
    if (step == 0) return list;
    std::vector<std::uint64_t> out;
    for (std::uint64_t p = first; p < last; p += step) out.push_back(p);
    return out;
  }
};

// Limits of one `table` call: positions are below 2^32 (the library's angle path), and one call
// covers at most 2^20 positions.
inline constexpr std::uint64_t position_limit = std::uint64_t{1} << 32;
inline constexpr std::uint64_t max_positions = std::uint64_t{1} << 20;
// accuracy --positions p1,p2,...: at most this many positions.
inline constexpr std::size_t max_accuracy_positions = 4096;
// alibi --heads: at most this many heads.
inline constexpr std::uint64_t max_alibi_heads = 65536;
// The input limits' flags take values up to these: 1 TiB files (read as a stream), 2^32 elements
// (apply holds 8 bytes per element: x and y as float32), 4096 levels (the parser keeps a few
// bytes per level, on the heap).
inline constexpr std::uint64_t max_input_bytes_limit = std::uint64_t{1} << 40;
inline constexpr std::uint64_t max_elements_limit = std::uint64_t{1} << 32;
inline constexpr std::uint64_t max_depth_limit = 4096;

// Flags of the alibi and sinusoidal commands (tools/cli/additive.hpp).
struct additive_flags {
  std::optional<std::uint32_t> heads;        // alibi --heads H
  std::optional<std::uint64_t> length;       // alibi --positions L (0 to L-1)
  std::optional<alibi_variant> variant;      // alibi --variant causal|symmetric
  bool bloom = false;                        // alibi --bloom
  std::optional<std::uint32_t> dim;          // sinusoidal --head-dim D
  std::optional<std::uint64_t> rows;         // sinusoidal --positions N (rows 0..N-1)
  std::optional<sinusoidal_layout> layout;   // sinusoidal --layout paper|split
  std::optional<std::uint32_t> padding_idx;  // sinusoidal --padding-idx P
};

// Flags of `emit` (tools/cli/emit.hpp) and `accuracy` (tools/cli/accuracy.hpp).
enum class emit_lang : std::uint8_t { c, cpp };
enum class emit_table : std::uint8_t { compact, simd };
inline constexpr name_table<emit_lang, 2> emit_lang_names{{"c", "cpp"}};
inline constexpr name_table<emit_table, 2> emit_table_names{{"compact", "simd"}};
struct emit_flags {
  std::optional<emit_lang> lang;           // --lang c|cpp
  std::optional<std::uint64_t> max_pos;    // --positions N (0 to N-1)
  emit_table table = emit_table::compact;  // --table compact|simd
  std::optional<std::string> name;         // --name PREFIX
};
struct accuracy_flags {
  std::vector<std::uint64_t> positions;  // --positions (any set)
};

// Flags of `apply` (tools/cli/apply.hpp). THD: [tokens, heads, head_dim]; BHTD: [batch, heads,
// tokens, head_dim] (HF's query_states); BTHD: [batch, tokens, heads, head_dim].
enum class shape_order : std::uint8_t { thd, bhtd, bthd };
inline constexpr name_table<shape_order, 3> shape_order_names{{"THD", "BHTD", "BTHD"}};
struct apply_flags {
  std::optional<std::string> input_k;       // --input-k FILE: k, with the same positions
  std::optional<std::string> output;        // --output FILE: the result as .npy
  std::optional<std::string> output_k;      // --output-k FILE: k's result as .npy
  std::optional<std::string> position_ids;  // --position-ids FILE: [tokens] or [batch, tokens]
  std::optional<shape_order> order;         // --shape-order
  bool scale_cos_sin = true;                // false: --no-scale-cos-sin
};

// Flags of decay, dials, ramp and check (tools/cli/analysis.hpp).
struct analysis_flags {
  std::optional<std::uint64_t> max_distance;  // decay, check --max-distance N
  std::optional<std::uint64_t> context;       // dials --positions N (0 to N-1)
  bool format_given = false;                  // --format or --csv appeared
};

// Flags of `entropy` (tools/cli/entropy.hpp). The temperature's words: none, llama4 (Llama-4's
// attn_temperature_tuning) and log-n (Qwen's logn_attn).
enum class temperature_choice : std::uint8_t { none, llama4, log_n };
inline constexpr name_table<temperature_choice, 3> temperature_choice_names{
    {"none", "llama4", "log-n"}};
struct entropy_flags {
  std::vector<std::uint64_t> lengths;             // --lengths A:B | a,b,c
  std::optional<std::uint32_t> samples;           // --samples N
  std::optional<std::uint64_t> seed;              // --seed S
  std::optional<temperature_choice> temperature;  // --temperature none|llama4|log-n
  std::optional<double> floor_scale;              // --floor-scale X (llama4)
  std::optional<double> attn_scale;               // --attn-scale X (llama4)
  std::optional<std::uint64_t> training_length;   // --training-length N (log-n)
  std::optional<std::string> qk;                  // --qk FILE: given q and k instead of draws
};

// Flags of `t5-bias` (tools/cli/t5.hpp); its max_distance is --max-distance (analysis_flags).
inline constexpr auto t5_log_kind_names = names_from(all_t5_log_kinds, t5_log_kind_name);
struct t5_relative_range {
  std::int64_t first = 0;  // relative positions first .. last - 1
  std::int64_t last = 0;
};
struct t5_flags {
  std::optional<std::uint32_t> num_buckets;   // --num-buckets N
  std::optional<t5_direction> direction;      // --bidirectional / --causal
  std::optional<t5_log_kind> log;             // --log hf-float32|exact
  std::optional<t5_relative_range> relative;  // --relative-positions A:B
  std::optional<std::uint64_t> query_length;  // --query-length Q
  std::optional<std::uint64_t> key_length;    // --key-length K
  std::optional<std::string> weights;         // --weights FILE: .npy [num_buckets, heads]
};

struct invocation {
  command cmd = command::none;
  bool help = false;
  bool version = false;
  output_format format = output_format::json;
  // --positions: table (consecutive), sinusoidal, alibi, dials and emit (from 0: a length),
  // accuracy (any). parse_args moves it to the command's own field (additive.rows, ...).
  std::optional<position_set> positions;
  std::uint64_t seq_len = 0;   // HF's seq_len; 0 = none
  bool seq_len_given = false;  // --seq-len appeared (apply: else max position + 1)
  std::optional<std::string> preset;
  std::optional<std::string> hf_config;
  std::optional<std::string> gguf;        // --gguf FILE: a llama.cpp GGUF file's metadata
  std::optional<std::string> layer_type;  // --layer-type T: the rope entry of this layer type
  bool verbose = false;                   // --verbose: the keys read from the config file
  // Old spellings used (renamed_flags, flags.hpp): one line each for standard error.
  std::vector<std::string> warnings;
  // Where configure() writes warnings (run() sets it to standard error); none when null.
  std::ostream* diagnostics = nullptr;
  std::optional<std::string> input;  // apply only: the input JSON file
  std::optional<std::string> svg;    // --svg FILE: accuracy, decay, dials, ramp, entropy
  config_draft flags;                // the config flags, laid over the preset or config.json
  draft_sources flag_sources;        // "flag --X" for each field of `flags` a flag set
  additive_flags additive;           // alibi and sinusoidal only
  emit_flags emit;                   // emit only
  accuracy_flags accuracy;           // accuracy only
  apply_flags apply;                 // apply only
  analysis_flags analysis;           // decay, dials, ramp, check
  entropy_flags entropy;             // entropy only
  t5_flags t5;                       // t5-bias only

  // --work-limit N: the work budget of accuracy, decay, check and entropy (accuracy.hpp,
  // analysis.hpp, entropy.hpp).
  std::optional<std::uint64_t> work_limit;
  // The input limits (docs/cli.md, "Input limits"): --max-input-bytes N, the largest --input or
  // --hf-config file; --max-elements N, apply's numbers in x and positions; --max-depth N, the
  // nesting of a config.json.
  std::optional<std::uint64_t> max_input_bytes;
  std::optional<std::uint64_t> max_elements;
  std::optional<std::uint64_t> max_depth;
};

// Parses argv[1..]. Throws cli_error (exit 2) with a one-line message on the first problem.
// --help / -h anywhere wins over everything else.
invocation parse_args(std::span<const std::string_view> args);

}  // namespace posenc::cli
