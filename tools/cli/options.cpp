#include "cli/options.hpp"

#include <algorithm>
#include <string>

#include "cli/commands.hpp"
#include "cli/error.hpp"
#include "cli/flags.hpp"
#include "cli/numbers.hpp"

namespace posenc::cli {

namespace {
bool looks_like_flag(std::string_view a) {
  return a.starts_with("--") || std::ranges::find(help_flags, a) != help_flags.end();
}

// --help or -h where a flag stands; in the place of a flag's value it is that flag's error.
bool help_requested(std::span<const std::string_view> args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (std::ranges::find(help_flags, a) != help_flags.end()) return true;
    if (!a.starts_with("--") || a.find('=') != std::string_view::npos) continue;
    const flag* f = find_named(flags(), a);
    if (f != nullptr && f->value.kind != value_kind::none) ++i;  // its value (or its error)
  }
  return false;
}

// One flag and its value: "--name value" or "--name=value".
class arg_reader {
 public:
  explicit arg_reader(std::span<const std::string_view> args) : args_(args) {}

  bool done() const { return next_ >= args_.size(); }

  // Advances to the next argument; returns it without any "=value" part.
  std::string_view take() {
    std::string_view a = args_[next_++];
    inline_value_.reset();
    if (a.starts_with("--")) {
      if (const std::size_t eq = a.find('='); eq != std::string_view::npos) {
        inline_value_ = a.substr(eq + 1);
        a = a.substr(0, eq);
      }
    }
    flag_ = a;
    return a;
  }

  // A separate value is never a flag: "--head-dim -h" and "--svg --csv" are usage errors, not help
  // or a file named --csv. A value that starts with "--" is given as --flag=value; negative
  // numbers ("-0.5") and "-" stay values.
  std::string_view value() {
    if (inline_value_) return *inline_value_;
    if (next_ >= args_.size()) usage_error("posenc: " + printable(flag_) + " needs a value");
    const std::string_view v = args_[next_];
    if (looks_like_flag(v))
      usage_error("posenc: " + printable(flag_) + " needs a value, not the flag " + printable(v) +
                  " (write " + printable(flag_) + "=VALUE for a value that starts with --)");
    ++next_;
    return v;
  }

  void no_value() const {
    if (inline_value_) usage_error("posenc: " + printable(flag_) + " takes no value");
  }

 private:
  std::span<const std::string_view> args_;
  std::size_t next_ = 0;
  std::string_view flag_;
  std::optional<std::string_view> inline_value_;
};

// The value of flag `f`, read as its row says.
flag_value read_value(const flag& f, arg_reader& r) {
  flag_value v;
  v.flag = f.name;
  const value_spec& spec = f.value;
  if (spec.kind == value_kind::none) {
    r.no_value();
    return v;
  }
  v.text = r.value();
  bool ok = true;
  switch (spec.kind) {
    case value_kind::none:
    case value_kind::text:
      break;
    case value_kind::nonempty:
      ok = !v.text.empty();
      break;
    case value_kind::integer:
      if (const auto n = parse_uint(v.text, spec.min, spec.max)) {
        if (spec.at_most != 0 && *n > spec.at_most)
          usage_error("posenc: " + std::string(f.name) + " must be at most " +
                      std::to_string(spec.at_most));
        v.integer = *n;
      } else {
        ok = false;
      }
      break;
    case value_kind::number:
    case value_kind::fraction:
      if (const auto x = parse_double(v.text);
          x && (spec.kind == value_kind::number || (*x > 0.0 && *x <= 1.0))) {
        v.number = *x;
      } else {
        ok = false;
      }
      break;
    case value_kind::numbers:
      if (auto list = parse_double_list(v.text)) {
        v.numbers = std::move(*list);
      } else {
        ok = false;
      }
      break;
    case value_kind::choice: {
      const auto it = std::ranges::find(spec.names, v.text);
      v.choice = static_cast<std::size_t>(it - spec.names.begin());
      ok = it != spec.names.end();
      break;
    }
  }
  if (!ok) bad_value(f.name, expected_value(spec));
  return v;
}

// The alibi and sinusoidal commands take their own flags only (sinusoidal also --base and
// --format); the other commands take none of theirs.
void check_additive_flags(invocation& inv) {
  const additive_flags& e = inv.additive;
  const bool alibi_flags = e.heads || e.length || e.variant || e.bloom;
  const bool sinusoidal_flags = e.dim || e.layout || e.padding_idx;
  if (inv.cmd == command::alibi || inv.cmd == command::sinusoidal) {
    config_draft allowed;  // none, or sinusoidal's --base B
    if (inv.cmd == command::sinusoidal) allowed.base = inv.flags.base;
    if (inv.flags != allowed || inv.preset || inv.hf_config || inv.gguf || inv.layer_type ||
        inv.verbose || inv.seq_len != 0 || inv.input)
      usage_error("posenc: " + std::string(command_of(inv.cmd).name) +
                  " takes no RoPE configuration flags");
    if (inv.cmd == command::alibi) {
      if (sinusoidal_flags || e.rows || inv.positions)
        usage_error(
            "posenc: --dim, --positions, --layout and --padding-idx are for the "
            "sinusoidal command");
      if (!e.heads) usage_error("posenc: alibi needs --heads H");
    } else {
      if (alibi_flags)
        usage_error("posenc: --heads, --length, --variant and --bloom are for the alibi command");
      if (inv.positions || !e.rows || *e.rows == 0 || *e.rows > max_positions)
        usage_error("posenc: sinusoidal needs --positions N with 1 <= N <= " +
                    std::to_string(max_positions) + " (rows 0 to N-1)");
      if (!e.dim) usage_error("posenc: sinusoidal needs --dim D");
      // The padding row is one of the rows printed, 0 to N-1 (fairseq zeroes row padding_idx).
      if (e.padding_idx && *e.padding_idx >= *e.rows)
        usage_error("posenc: --padding-idx " + std::to_string(*e.padding_idx) +
                    " is not one of the rows 0 to " + std::to_string(*e.rows - 1) +
                    " that --positions " + std::to_string(*e.rows) + " gives");
    }
    return;
  }
  if (e.rows) {
    // A bare count is the sinusoidal form; elsewhere it is the malformed A:B it always was.
    inv.positions = parse_position_range(std::to_string(*e.rows));
  }
  if (alibi_flags)
    usage_error("posenc: --heads, --length, --variant and --bloom are for the alibi command");
  if (sinusoidal_flags)
    usage_error(
        "posenc: --dim, --padding-idx and --layout paper|split are for the sinusoidal "
        "command");
}

// emit and accuracy flags belong to their commands; accuracy takes --positions as a list (a single
// number arrives as additive.rows), emit takes none.
void check_emit_accuracy_flags(invocation& inv) {
  const emit_flags& e = inv.emit;
  const bool emit_only = e.lang || e.max_pos || e.name || e.table != emit_table::compact;
  if (emit_only && inv.cmd != command::emit)
    usage_error("posenc: --lang, --max-pos, --table and --name are for the emit command");
  if (inv.svg && inv.cmd != command::accuracy && inv.cmd != command::decay &&
      inv.cmd != command::dials && inv.cmd != command::ramp && inv.cmd != command::entropy)
    usage_error("posenc: --svg is for the accuracy, decay, dials, ramp and entropy commands");
  if (inv.cmd == command::accuracy) {
    if (inv.positions) usage_error("posenc: accuracy takes --positions p1,p2,... (not A:B)");
    if (inv.additive.rows) {
      if (*inv.additive.rows >= position_limit)
        usage_error("posenc: --positions needs integers 0 <= p < 4294967296");
      inv.accuracy.positions.push_back(*inv.additive.rows);
      inv.additive.rows.reset();
    }
  } else if (!inv.accuracy.positions.empty()) {
    usage_error("posenc: a list of positions is for the accuracy command only");
  }
  if (inv.cmd == command::emit) {
    if (inv.positions || inv.additive.rows)
      usage_error("posenc: emit takes --max-pos N, not --positions");
    if (!e.lang) usage_error("posenc: emit needs --lang c|cpp");
    if (!e.max_pos) usage_error("posenc: emit needs --max-pos N");
  }
}

// decay, dials, ramp and check: --max-distance (decay, check), --context (dials, required), no
// positions or input file; decay needs --max-distance.
void check_analysis_flags(const invocation& inv) {
  const bool analysis = inv.cmd == command::decay || inv.cmd == command::dials ||
                        inv.cmd == command::ramp || inv.cmd == command::check;
  const analysis_flags& a = inv.analysis;
  if (a.max_distance && inv.cmd != command::decay && inv.cmd != command::check &&
      inv.cmd != command::t5_bias)
    usage_error("posenc: --max-distance is for the decay, check and t5-bias commands");
  if (a.context && inv.cmd != command::dials)
    usage_error("posenc: --context is for the dials command");
  if (!analysis) return;
  if (inv.positions || inv.additive.rows || !inv.accuracy.positions.empty())
    usage_error("posenc: --positions is for the table, sinusoidal and accuracy commands");
  if (inv.input) usage_error("posenc: --input is for the apply command only");
  if (inv.cmd == command::decay && !a.max_distance)
    usage_error("posenc: decay needs --max-distance N (1 <= N <= 16777216)");
  if (inv.cmd == command::dials && !a.context)
    usage_error("posenc: dials needs --context N (1 <= N <= 4294967296)");
}

// The limit flags act where there is something to limit; elsewhere they are usage errors rather
// than silently ignored. The other commands' work is bounded by fixed limits (docs/cli.md).
void check_limit_flags(const invocation& inv) {
  if (inv.work_limit && inv.cmd != command::accuracy && inv.cmd != command::decay &&
      inv.cmd != command::check && inv.cmd != command::entropy)
    usage_error(
        "posenc: --work-limit is for the accuracy, decay, check and entropy commands (the other "
        "commands have fixed limits)");
  if (inv.max_input_bytes && !inv.input && !inv.hf_config && !inv.gguf && !inv.t5.weights &&
      !inv.entropy.qk)
    usage_error(
        "posenc: --max-input-bytes limits the file of --input, --hf-config or --gguf; give one");
  if (inv.layer_type && !inv.hf_config)
    usage_error(
        "posenc: --layer-type picks the rope parameters of one layer type of --hf-config's file; "
        "give --hf-config");
  if (inv.verbose && !inv.hf_config && !inv.gguf)
    usage_error("posenc: --verbose lists the keys of --hf-config's or --gguf's file; give one");
  if (inv.max_elements && inv.cmd != command::apply)
    usage_error("posenc: --max-elements is for the apply command only");
  if (inv.max_depth && !inv.hf_config)
    usage_error(
        "posenc: --max-depth limits the nesting of --hf-config's file (apply's --input has a "
        "fixed depth of 2)");
}

// apply's own flags belong to it; --output-k and --input-k go together, and with --output the
// results of both tensors are files.
void check_apply_flags(const invocation& inv) {
  const apply_flags& a = inv.apply;
  if (inv.cmd != command::apply && (inv.flags.mrope_section || inv.flags.mrope_interleaved))
    usage_error("posenc: --mrope-section and --mrope-interleaved are for the apply command");
  const bool any =
      a.input_k || a.output || a.output_k || a.position_ids || a.order || !a.scale_cos_sin;
  if (inv.cmd != command::apply) {
    if (any)
      usage_error(
          "posenc: --input-k, --output, --output-k, --position-ids, --shape-order and "
          "--no-scale-cos-sin are for the apply command");
    return;
  }
  if (a.output && inv.analysis.format_given)
    usage_error("posenc: --format and --output conflict (--output writes .npy)");
  if (a.output_k && !a.input_k) usage_error("posenc: --output-k needs --input-k");
  if (a.input_k && a.output.has_value() != a.output_k.has_value())
    usage_error("posenc: with --input-k, give both --output and --output-k, or neither");
  if (a.input_k && !a.output && inv.format != output_format::json)
    usage_error(
        "posenc: --format csv and text print one tensor; with --input-k use json or "
        "--output/--output-k");
}

// entropy's flags belong to it; it needs --lengths, takes no positions or input file, and the
// temperature's parameters go with their temperature.
void check_entropy_flags(const invocation& inv) {
  const entropy_flags& e = inv.entropy;
  const bool any = !e.lengths.empty() || e.samples || e.seed || e.temperature || e.floor_scale ||
                   e.attn_scale || e.training_length || e.qk;
  if (inv.cmd != command::entropy) {
    if (any)
      usage_error(
          "posenc: --lengths, --samples, --seed, --temperature, --floor-scale, --attn-scale, "
          "--training-length and --qk are for the entropy command");
    return;
  }
  if (inv.positions || inv.additive.rows || !inv.accuracy.positions.empty())
    usage_error("posenc: entropy takes --lengths, not --positions");
  if (e.lengths.empty()) usage_error("posenc: entropy needs --lengths A:B or a,b,...");
  if (e.qk && (e.samples || e.seed))
    usage_error("posenc: --qk gives q and k; --samples and --seed are for random draws");
  if (inv.seq_len_given)
    usage_error(
        "posenc: entropy takes the frequencies of each length L (dynamic and longrope at "
        "seq_len L); --seq-len does not apply");
  const temperature_choice t = e.temperature.value_or(temperature_choice::none);
  if ((e.floor_scale || e.attn_scale) && t != temperature_choice::llama4)
    usage_error("posenc: --floor-scale and --attn-scale are for --temperature llama4");
  if (e.training_length && t != temperature_choice::log_n)
    usage_error("posenc: --training-length is for --temperature log-n");
}

// t5-bias's flags belong to it; it takes no RoPE configuration, and either a range of relative
// positions or both lengths of a matrix.
void check_t5_flags(const invocation& inv) {
  const t5_flags& t = inv.t5;
  const bool any = t.num_buckets || t.direction || t.log || t.relative || t.query_length ||
                   t.key_length || t.weights;
  if (inv.cmd != command::t5_bias) {
    if (any)
      usage_error(
          "posenc: --num-buckets, --bidirectional, --causal, --log, --relative-positions, "
          "--query-length, --key-length and --weights are for the t5-bias command");
    return;
  }
  if (inv.flags != config_draft{} || inv.preset || inv.hf_config || inv.gguf || inv.layer_type ||
      inv.seq_len_given || inv.svg || inv.positions || inv.additive.rows ||
      !inv.accuracy.positions.empty())
    usage_error(
        "posenc: t5-bias takes no RoPE configuration flags (nor --positions: use "
        "--relative-positions A:B)");
  if (t.query_length.has_value() != t.key_length.has_value())
    usage_error("posenc: t5-bias needs both --query-length Q and --key-length K");
  if (t.relative && t.query_length)
    usage_error("posenc: give --relative-positions or --query-length/--key-length, not both");
}

}  // namespace

invocation parse_args(std::span<const std::string_view> args) {
  invocation inv;
  if (help_requested(args)) {
    inv.help = true;
    return inv;
  }

  arg_reader r(args);
  while (!r.done()) {
    const std::string_view a = r.take();
    if (!a.starts_with("-")) {
      if (inv.cmd != command::none)
        usage_error("posenc: unexpected argument '" + printable(a) + "'");
      const command_info* c = find_named(commands(), a);
      if (c == nullptr)
        usage_error("posenc: unknown command '" + printable(a) + "' (" + command_list() + ")");
      inv.cmd = c->id;
      continue;
    }
    const flag* f = find_named(flags(), a);
    if (f == nullptr) usage_error("posenc: unknown flag " + printable(a));
    f->set(inv, read_value(*f, r));
  }

  if (inv.version) return inv;
  if (inv.cmd == command::none)
    usage_error("posenc: missing command (" + command_list() + "); see posenc --help");
  if (inv.cmd == command::layers) {
    // The plan comes from a model preset or a config.json whole: no flag changes part of it.
    if (inv.flags != config_draft{} || inv.gguf || inv.layer_type || inv.seq_len_given ||
        inv.positions || inv.input || inv.svg)
      usage_error(
          "posenc: layers takes --preset or --hf-config (and --format), no configuration flags");
    if (!inv.preset && !inv.hf_config)
      usage_error("posenc: layers needs --preset NAME or --hf-config FILE");
  }
  check_emit_accuracy_flags(inv);
  check_analysis_flags(inv);
  check_additive_flags(inv);
  if (inv.cmd == command::table && !inv.positions)
    usage_error("posenc: table needs --positions A:B");
  if (inv.cmd == command::freqs && inv.positions)
    usage_error("posenc: --positions is for the table command only");
  if (inv.cmd == command::apply && !inv.input) usage_error("posenc: apply needs --input FILE");
  if (inv.cmd == command::apply && inv.positions)
    usage_error("posenc: --positions is for the table command only");
  if (inv.cmd != command::apply && inv.input)
    usage_error("posenc: --input is for the apply command only");
  check_limit_flags(inv);
  check_apply_flags(inv);
  check_entropy_flags(inv);
  check_t5_flags(inv);
  return inv;
}

}  // namespace posenc::cli
