#include "cli/options.hpp"

#include <string>

#include "cli/error.hpp"
#include "cli/numbers.hpp"

namespace posenc::cli {

namespace {
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

  std::string_view value() {
    if (inline_value_) return *inline_value_;
    if (next_ >= args_.size()) usage_error("posenc: " + printable(flag_) + " needs a value");
    return args_[next_++];
  }

  void no_value() const {
    if (inline_value_) usage_error("posenc: " + printable(flag_) + " takes no value");
  }

  [[noreturn]] void bad(const char* what) const {
    usage_error("posenc: " + printable(flag_) + " needs " + what);
  }

 private:
  std::span<const std::string_view> args_;
  std::size_t next_ = 0;
  std::string_view flag_;
  std::optional<std::string_view> inline_value_;
};

std::uint32_t positive_u32(arg_reader& r, std::uint64_t max, const char* what) {
  const auto v = parse_uint(r.value(), 1, max);
  if (!v) r.bad(what);
  return static_cast<std::uint32_t>(*v);
}

double finite_number(arg_reader& r) {
  const auto v = parse_double(r.value());
  if (!v) r.bad("a finite number");
  return *v;
}

position_range parse_positions(std::string_view text) {
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

// The alibi and sinusoidal commands take their own flags only (sinusoidal also --base and
// --format); the other commands take none of theirs.
void check_encoding_flags(invocation& inv) {
  const encoding_flags& e = inv.encoding;
  const bool alibi_flags = e.heads || e.length || e.variant || e.bloom;
  const bool sinusoidal_flags = e.dim || e.layout || e.padding_idx;
  if (inv.cmd == command::alibi || inv.cmd == command::sinusoidal) {
    const char* name = inv.cmd == command::alibi ? "alibi" : "sinusoidal";
    const config_draft& d = inv.flags;
    const bool rope_flags =
        d.head_dim || d.rotary || (d.base && inv.cmd == command::alibi) || d.layout || d.scaling ||
        d.factor || d.original_max_position_embeddings || d.max_position_embeddings ||
        d.beta_fast || d.beta_slow || d.truncate || d.mscale || d.mscale_all_dim ||
        d.attention_factor || d.low_freq_factor || d.high_freq_factor || d.short_factor ||
        d.long_factor || inv.preset || inv.hf_config || inv.seq_len != 0 || inv.input;
    if (rope_flags)
      usage_error(std::string("posenc: ") + name + " takes no RoPE configuration flags");
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
    }
    return;
  }
  if (e.rows) {
    // A bare count is the sinusoidal form; elsewhere it is the malformed A:B it always was.
    inv.positions = parse_positions(std::to_string(*e.rows));
  }
  if (alibi_flags)
    usage_error("posenc: --heads, --length, --variant and --bloom are for the alibi command");
  if (sinusoidal_flags)
    usage_error(
        "posenc: --dim, --padding-idx and --layout paper|split are for the sinusoidal "
        "command");
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

// emit and accuracy flags belong to their commands; accuracy takes --positions as a list (a single
// number arrives as encoding.rows), emit takes none.
void check_emit_accuracy_flags(invocation& inv) {
  const emit_flags& e = inv.emit;
  const bool emit_only = e.lang || e.max_pos || e.name || e.table != emit_table::compact;
  if (emit_only && inv.cmd != command::emit)
    usage_error("posenc: --lang, --max-pos, --table and --name are for the emit command");
  if (inv.accuracy.svg && inv.cmd != command::accuracy && inv.cmd != command::decay &&
      inv.cmd != command::dials && inv.cmd != command::ramp)
    usage_error("posenc: --svg is for the accuracy, decay, dials and ramp commands");
  if (inv.cmd == command::accuracy) {
    if (inv.positions) usage_error("posenc: accuracy takes --positions p1,p2,... (not A:B)");
    if (inv.encoding.rows) {
      if (*inv.encoding.rows >= position_limit)
        usage_error("posenc: --positions needs integers 0 <= p < 4294967296");
      inv.accuracy.positions.push_back(*inv.encoding.rows);
      inv.encoding.rows.reset();
    }
  } else if (!inv.accuracy.positions.empty()) {
    usage_error("posenc: a list of positions is for the accuracy command only");
  }
  if (inv.cmd == command::emit) {
    if (inv.positions || inv.encoding.rows)
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
  if (a.max_distance && inv.cmd != command::decay && inv.cmd != command::check)
    usage_error("posenc: --max-distance is for the decay and check commands");
  if (a.context && inv.cmd != command::dials)
    usage_error("posenc: --context is for the dials command");
  if (!analysis) return;
  if (inv.positions || inv.encoding.rows || !inv.accuracy.positions.empty())
    usage_error("posenc: --positions is for the table, sinusoidal and accuracy commands");
  if (inv.input) usage_error("posenc: --input is for the apply command only");
  if (inv.cmd == command::decay && !a.max_distance)
    usage_error("posenc: decay needs --max-distance N (1 <= N <= 16777216)");
  if (inv.cmd == command::dials && !a.context)
    usage_error("posenc: dials needs --context N (1 <= N <= 4294967296)");
}

bool is_help(std::string_view a) {
  return a == "--help" || a == "-h";
}
}  // namespace

invocation parse_args(std::span<const std::string_view> args) {
  invocation inv;
  for (std::string_view a : args) {
    if (is_help(a)) {
      inv.help = true;
      return inv;
    }
  }

  arg_reader r(args);
  config_draft& d = inv.flags;
  while (!r.done()) {
    const std::string_view a = r.take();
    if (!a.starts_with("-")) {
      if (inv.cmd != command::none)
        usage_error("posenc: unexpected argument '" + printable(a) + "'");
      if (a == "freqs") {
        inv.cmd = command::freqs;
      } else if (a == "table") {
        inv.cmd = command::table;
      } else if (a == "apply") {
        inv.cmd = command::apply;
      } else if (a == "alibi") {
        inv.cmd = command::alibi;
      } else if (a == "sinusoidal") {
        inv.cmd = command::sinusoidal;
      } else if (a == "emit") {
        inv.cmd = command::emit;
      } else if (a == "accuracy") {
        inv.cmd = command::accuracy;
      } else if (a == "decay") {
        inv.cmd = command::decay;
      } else if (a == "dials") {
        inv.cmd = command::dials;
      } else if (a == "ramp") {
        inv.cmd = command::ramp;
      } else if (a == "check") {
        inv.cmd = command::check;
      } else {
        usage_error("posenc: unknown command '" + printable(a) +
                    "' (freqs, table, apply, alibi, sinusoidal, decay, dials, ramp, check, emit or "
                    "accuracy)");
      }
    } else if (a == "--version") {
      r.no_value();
      inv.version = true;
    } else if (a == "--head-dim") {
      d.head_dim = positive_u32(r, UINT32_MAX, "a positive integer");
      if (*d.head_dim > max_head_dim)
        usage_error("posenc: --head-dim must be at most " + std::to_string(max_head_dim));
    } else if (a == "--rotary-dim") {
      d.rotary = rotary_width::absolute(positive_u32(r, UINT32_MAX, "a positive integer"));
    } else if (a == "--partial-rotary-factor") {
      const auto f = parse_double(r.value());
      if (!f || !(*f > 0.0 && *f <= 1.0)) r.bad("a number in (0, 1]");
      d.rotary = rotary_width::fraction(*f);
    } else if (a == "--base") {
      d.base = finite_number(r);
    } else if (a == "--layout") {
      const std::string_view v = r.value();
      if (v == "interleaved") {
        d.layout = rope_layout::interleaved;
      } else if (v == "half") {
        d.layout = rope_layout::half;
      } else if (v == "paper" || v == "split") {  // sinusoidal
        inv.encoding.layout = v == "paper" ? sinusoidal_layout::paper : sinusoidal_layout::split;
      } else {
        r.bad("interleaved or half");
      }
    } else if (a == "--scaling") {
      const std::string_view v = r.value();
      if (v == "none") {
        d.scaling = scaling_type::none;
      } else if (v == "linear") {
        d.scaling = scaling_type::linear;
      } else if (v == "ntk") {
        d.scaling = scaling_type::ntk;
      } else if (v == "dynamic") {
        d.scaling = scaling_type::dynamic;
      } else if (v == "yarn") {
        d.scaling = scaling_type::yarn;
      } else if (v == "llama3") {
        d.scaling = scaling_type::llama3;
      } else if (v == "longrope") {
        d.scaling = scaling_type::longrope;
      } else {
        r.bad("one of none, linear, ntk, dynamic, yarn, llama3, longrope");
      }
    } else if (a == "--factor") {
      d.factor = finite_number(r);
    } else if (a == "--original-max") {
      d.original_max_position_embeddings =
          positive_u32(r, UINT32_MAX, "a positive integer below 2^32");
    } else if (a == "--max-position-embeddings") {
      d.max_position_embeddings = positive_u32(r, UINT32_MAX, "a positive integer below 2^32");
    } else if (a == "--seq-len") {
      const auto v = parse_uint(r.value(), 0, std::uint64_t{1} << 53);
      if (!v) r.bad("a non-negative integer (at most 2^53)");
      inv.seq_len = *v;
    } else if (a == "--beta-fast") {
      d.beta_fast = finite_number(r);
    } else if (a == "--beta-slow") {
      d.beta_slow = finite_number(r);
    } else if (a == "--no-truncate") {
      r.no_value();
      d.truncate = false;
    } else if (a == "--truncate") {
      r.no_value();
      d.truncate = true;
    } else if (a == "--mscale") {
      d.mscale = finite_number(r);
    } else if (a == "--mscale-all-dim") {
      d.mscale_all_dim = finite_number(r);
    } else if (a == "--attention-factor") {
      d.attention_factor = finite_number(r);
    } else if (a == "--low-freq-factor") {
      d.low_freq_factor = finite_number(r);
    } else if (a == "--high-freq-factor") {
      d.high_freq_factor = finite_number(r);
    } else if (a == "--short-factor" || a == "--long-factor") {
      auto v = parse_double_list(r.value());
      if (!v) r.bad("comma-separated finite numbers");
      (a == "--short-factor" ? d.short_factor : d.long_factor) = std::move(*v);
    } else if (a == "--preset" || a == "--hf-config") {
      const std::string_view v = r.value();
      if (v.empty()) r.bad(a == "--preset" ? "a preset name" : "a file name");
      if (inv.preset || inv.hf_config)
        usage_error("posenc: give at most one --preset or --hf-config");
      (a == "--preset" ? inv.preset : inv.hf_config) = std::string(v);
    } else if (a == "--format") {
      inv.analysis.format_given = true;
      const std::string_view v = r.value();
      if (v == "json") {
        inv.format = output_format::json;
      } else if (v == "csv") {
        inv.format = output_format::csv;
      } else if (v == "text") {
        inv.format = output_format::text;
      } else {
        r.bad("json, csv or text");
      }
    } else if (a == "--input") {
      const std::string_view v = r.value();
      if (v.empty()) r.bad("a file name");
      inv.input = std::string(v);
    } else if (a == "--positions") {
      const std::string_view v = r.value();
      if (v.find(',') != std::string_view::npos) {
        inv.accuracy.positions = parse_position_list(v);  // accuracy: p1,p2,... (checked below)
      } else if (v.find(':') == std::string_view::npos && parse_uint(v, 0, UINT64_MAX)) {
        inv.encoding.rows = parse_uint(v, 0, UINT64_MAX);  // sinusoidal: N rows (checked below)
      } else {
        inv.positions = parse_positions(v);
      }
    } else if (a == "--heads") {
      inv.encoding.heads = positive_u32(r, max_alibi_heads, "an integer in [1, 65536]");
    } else if (a == "--length") {
      inv.encoding.length = positive_u32(r, max_positions, "an integer in [1, 1048576]");
    } else if (a == "--variant") {
      const std::string_view v = r.value();
      if (v == "causal") {
        inv.encoding.variant = alibi_variant::causal;
      } else if (v == "symmetric") {
        inv.encoding.variant = alibi_variant::symmetric;
      } else {
        r.bad("causal or symmetric");
      }
    } else if (a == "--bloom") {
      r.no_value();
      inv.encoding.bloom = true;
    } else if (a == "--lang") {
      const std::string_view v = r.value();
      if (v == "c") {
        inv.emit.lang = emit_lang::c;
      } else if (v == "cpp") {
        inv.emit.lang = emit_lang::cpp;
      } else {
        r.bad("c or cpp");
      }
    } else if (a == "--max-pos") {
      const auto v = parse_uint(r.value(), 1, position_limit);
      if (!v) r.bad("an integer in [1, 4294967296]");
      inv.emit.max_pos = *v;
    } else if (a == "--table") {
      const std::string_view v = r.value();
      if (v == "compact") {
        inv.emit.table = emit_table::compact;
      } else if (v == "simd") {
        inv.emit.table = emit_table::simd;
      } else {
        r.bad("compact or simd");
      }
    } else if (a == "--name") {
      inv.emit.name = std::string(r.value());  // checked by emit (a C identifier)
    } else if (a == "--svg") {
      const std::string_view v = r.value();
      if (v.empty()) r.bad("a file name");
      inv.accuracy.svg = std::string(v);
    } else if (a == "--csv") {
      r.no_value();
      inv.format = output_format::csv;
      inv.analysis.format_given = true;
    } else if (a == "--max-distance") {
      const auto v = parse_uint(r.value(), 1, std::uint64_t{1} << 24);
      if (!v) r.bad("an integer in [1, 16777216]");
      inv.analysis.max_distance = *v;
    } else if (a == "--context") {
      const auto v = parse_uint(r.value(), 1, position_limit);
      if (!v) r.bad("an integer in [1, 4294967296]");
      inv.analysis.context = *v;
    } else if (a == "--dim") {
      inv.encoding.dim = positive_u32(r, max_head_dim, "an integer in [1, 65536]");
    } else if (a == "--padding-idx") {
      const auto v = parse_uint(r.value(), 0, UINT32_MAX);
      if (!v) r.bad("a non-negative integer below 2^32");
      inv.encoding.padding_idx = static_cast<std::uint32_t>(*v);
    } else {
      usage_error("posenc: unknown flag " + printable(a));
    }
  }

  if (inv.version) return inv;
  if (inv.cmd == command::none)
    usage_error(
        "posenc: missing command (freqs, table, apply, alibi, sinusoidal, decay, dials, ramp, "
        "check, emit or accuracy); see posenc --help");
  check_emit_accuracy_flags(inv);
  check_analysis_flags(inv);
  check_encoding_flags(inv);
  if (inv.cmd == command::table && !inv.positions)
    usage_error("posenc: table needs --positions A:B");
  if (inv.cmd == command::freqs && inv.positions)
    usage_error("posenc: --positions is for the table command only");
  if (inv.cmd == command::apply && !inv.input) usage_error("posenc: apply needs --input FILE");
  if (inv.cmd == command::apply && inv.positions)
    usage_error("posenc: --positions is for the table command only");
  if (inv.cmd != command::apply && inv.input)
    usage_error("posenc: --input is for the apply command only");
  return inv;
}

}  // namespace posenc::cli
