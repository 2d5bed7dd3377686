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

// The flag row of `name`, or of the flag an old spelling now is (renamed_flags).
const flag* find_flag(std::string_view name) {
  if (const renamed_flag* old = find_named(renamed_flags(), name)) name = old->renamed;
  return find_named(flags(), name);
}

// `posenc help [CMD]`, or --help or -h where a flag stands (in the place of a flag's value it is
// that flag's error): sets inv.help, and inv.cmd to the command named on the line, if any.
bool help_requested(std::span<const std::string_view> args, invocation& inv) {
  std::size_t words = 0;   // the arguments that are not flags or their values
  bool help_word = false;  // the first of them is "help"
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (std::ranges::find(help_flags, a) != help_flags.end()) {
      inv.help = true;
      continue;
    }
    if (!a.starts_with("-")) {
      if (words == 0 && a == "help") {
        inv.help = help_word = true;
      } else if (inv.cmd == command::none) {
        if (const command_info* c = find_named(commands(), a)) {
          inv.cmd = c->id;
        } else if (help_word && words == 1) {
          usage_error("posenc: unknown command '" + printable(a) + "' (" + command_list() + ")");
        }
      }
      ++words;
      continue;
    }
    if (!a.starts_with("--") || a.find('=') != std::string_view::npos) continue;
    const flag* f = find_flag(a);
    if (f != nullptr && f->value.kind != value_kind::none) ++i;  // its value (or its error)
  }
  return inv.help;
}

// Giving `name` after the flags `given` (in their order): the usage error naming both when they
// conflict (conflict_groups).
void check_conflicts(std::span<const std::string_view> given, std::string_view name) {
  for (const conflict_group& g : conflict_groups()) {
    if (std::ranges::find(g.names, name) == g.names.end()) continue;
    for (const std::string_view other : given) {
      if (other == name || std::ranges::find(g.names, other) == g.names.end()) continue;
      usage_error("posenc: " + std::string(other) + " and " + std::string(name) + " conflict" +
                  (g.why.empty() ? std::string() : " (" + std::string(g.why) + ")"));
    }
  }
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

// --positions, one syntax everywhere (parse_positions); what each command needs of the set. The
// commands that take a length (alibi, sinusoidal, dials, emit) need 0 to N-1, and get N.
void check_positions(invocation& inv) {
  const std::string name(command_of(inv.cmd).name);
  if (!inv.positions) {
    switch (inv.cmd) {
      case command::table:
        usage_error("posenc: table needs --positions SET (e.g. 0:4096)");
      case command::sinusoidal:
        usage_error("posenc: sinusoidal needs --positions N with 1 <= N <= " +
                    std::to_string(max_positions) + " (rows 0 to N-1)");
      case command::dials:
        usage_error("posenc: dials needs --positions N (the context: positions 0 to N-1)");
      case command::emit:
        usage_error("posenc: emit needs --positions N (the table: positions 0 to N-1)");
      default:
        return;
    }
  }
  const position_set& p = *inv.positions;
  const auto at_most = [&](std::uint64_t limit, std::string_view per) {
    if (p.count() > limit)
      usage_error("posenc: --positions covers " + std::to_string(p.count()) +
                  " positions; at most " + std::to_string(limit) + std::string(per));
  };
  if (inv.cmd == command::table) {
    if (!p.consecutive())
      usage_error(
          "posenc: table --positions needs consecutive positions (N, A:B, or a list such as "
          "4,5,6)");
    at_most(max_positions, " per call");
    return;
  }
  if (inv.cmd == command::accuracy) {
    at_most(max_accuracy_positions, " for accuracy");
    inv.accuracy.positions = p.values();
    return;
  }
  if (!p.from_zero())
    usage_error("posenc: " + name +
                " --positions needs 0:N or N (a length: the positions 0 to N-1)");
  switch (inv.cmd) {
    case command::alibi:
      at_most(max_positions, " for alibi");
      inv.additive.length = p.last;
      break;
    case command::sinusoidal:
      if (p.last > max_positions)
        usage_error("posenc: sinusoidal needs --positions N with 1 <= N <= " +
                    std::to_string(max_positions) + " (rows 0 to N-1)");
      inv.additive.rows = p.last;
      break;
    case command::dials:
      inv.analysis.context = p.last;
      break;
    case command::emit:
      inv.emit.max_pos = p.last;
      break;
    default:
      break;
  }
}

// What each command needs beyond its flags (takes_flag): the required ones, and --layout of the
// kind the command takes (RoPE's or sinusoidal's).
void check_command_needs(invocation& inv) {
  const bool sinusoidal = inv.cmd == command::sinusoidal;
  if (sinusoidal && inv.flags.layout)
    usage_error("posenc: sinusoidal --layout needs paper or split");
  if (!sinusoidal && inv.additive.layout)
    usage_error(
        "posenc: --layout paper and split are for the sinusoidal command (RoPE: interleaved or "
        "half)");
  switch (inv.cmd) {
    case command::alibi:
      if (!inv.additive.heads) usage_error("posenc: alibi needs --heads H");
      break;
    case command::sinusoidal: {
      additive_flags& e = inv.additive;
      if (!inv.flags.head_dim) usage_error("posenc: sinusoidal needs --head-dim D");
      e.dim = *inv.flags.head_dim;
      inv.flags.head_dim.reset();
      // The padding row is one of the rows printed, 0 to N-1 (fairseq zeroes row padding_idx).
      if (e.padding_idx && *e.padding_idx >= *e.rows)
        usage_error("posenc: --padding-idx " + std::to_string(*e.padding_idx) +
                    " is not one of the rows 0 to " + std::to_string(*e.rows - 1) +
                    " that --positions " + std::to_string(*e.rows) + " gives");
      break;
    }
    case command::decay:
      if (!inv.analysis.max_distance)
        usage_error("posenc: decay needs --max-distance N (1 <= N <= 16777216)");
      break;
    case command::emit:
      if (!inv.emit.lang) usage_error("posenc: emit needs --lang c|cpp");
      break;
    case command::apply:
      if (!inv.input) usage_error("posenc: apply needs --input FILE");
      break;
    case command::layers:
      if (!inv.preset && !inv.hf_config)
        usage_error("posenc: layers needs --preset NAME or --hf-config FILE");
      break;
    default:
      break;
  }
}

// The flags that act on a configuration file act only with one; elsewhere they are usage errors
// rather than silently ignored.
void check_limit_flags(const invocation& inv) {
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
  if (inv.max_depth && !inv.hf_config)
    usage_error(
        "posenc: --max-depth limits the nesting of --hf-config's file (apply's --input has a "
        "fixed depth of 2)");
}

// apply: --output-k and --input-k go together, and with --output the results of both tensors are
// files.
void check_apply_flags(const invocation& inv) {
  const apply_flags& a = inv.apply;
  if (inv.cmd != command::apply) return;
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
  if (inv.cmd != command::entropy) return;
  const entropy_flags& e = inv.entropy;
  if (e.lengths.empty()) usage_error("posenc: entropy needs --lengths A:B or a,b,...");
  if (e.qk && (e.samples || e.seed))
    usage_error("posenc: --qk gives q and k; --samples and --seed are for random draws");
  const temperature_choice t = e.temperature.value_or(temperature_choice::none);
  if ((e.floor_scale || e.attn_scale) && t != temperature_choice::llama4)
    usage_error("posenc: --floor-scale and --attn-scale are for --temperature llama4");
  if (e.training_length && t != temperature_choice::log_n)
    usage_error("posenc: --training-length is for --temperature log-n");
}

// t5-bias takes either a range of relative positions or both lengths of a matrix (which flags it
// takes at all is its row of commands.cpp).
void check_t5_flags(const invocation& inv) {
  if (inv.cmd != command::t5_bias) return;
  const t5_flags& t = inv.t5;
  if (t.query_length.has_value() != t.key_length.has_value())
    usage_error("posenc: t5-bias needs both --query-length Q and --key-length K");
  if (t.relative && t.query_length)
    usage_error("posenc: give --relative-positions or --query-length/--key-length, not both");
}

}  // namespace

invocation parse_args(std::span<const std::string_view> args) {
  invocation inv;
  if (help_requested(args, inv)) return inv;
  inv = invocation{};

  std::vector<std::string_view> given;  // the flags given, once each, in order
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
    const flag* f = find_flag(a);
    if (f == nullptr) usage_error("posenc: unknown flag " + printable(a));
    if (f->name != a) {
      const std::string warning = "posenc: warning: " + std::string(a) + " is now " +
                                  std::string(f->name) + "; the old spelling will go";
      if (std::ranges::find(inv.warnings, warning) == inv.warnings.end())
        inv.warnings.push_back(warning);
    }
    check_conflicts(given, f->name);
    if (std::ranges::find(given, f->name) == given.end()) given.push_back(f->name);
    // The fields of the draft this flag sets are labelled with it, for the echo of the
    // configuration (docs/cli.md, "What was computed"); a later flag relabels what it resets.
    config_draft before = std::move(inv.flags);
    inv.flags = {};
    f->set(inv, read_value(*f, r));
    inv.flag_sources = overlay_sources(std::move(inv.flag_sources), inv.flags,
                                       label_fields(inv.flags, "flag " + std::string(f->name)));
    inv.flags = overlay(std::move(before), inv.flags);
  }

  if (inv.version) return inv;
  if (inv.cmd == command::none)
    usage_error("posenc: missing command (" + command_list() + "); see posenc --help");
  const command_info& c = command_of(inv.cmd);
  for (const std::string_view name : given)
    if (!takes_flag(c, name))
      usage_error("posenc: " + std::string(name) + " is not a flag of " + std::string(c.name) +
                  " (see posenc help " + std::string(c.name) + ")");
  check_positions(inv);
  check_command_needs(inv);
  check_limit_flags(inv);
  check_apply_flags(inv);
  check_entropy_flags(inv);
  check_t5_flags(inv);
  return inv;
}

}  // namespace posenc::cli
