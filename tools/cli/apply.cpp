#include "cli/apply.hpp"

#include <nlohmann/json.hpp>

#include <posenc/kernels/dispatch.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/tables/runtime_rope_cache.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "cli/compute.hpp"
#include "cli/error.hpp"
#include "cli/input_file.hpp"
#include "cli/output.hpp"
#include "cli/run.hpp"

namespace posenc::cli {

namespace {
using json = nlohmann::json;

// a * b, or `cap` when that is more (a, b <= cap + 1 need not fit in 64 bits once multiplied).
std::uint64_t capped_product(std::uint64_t a, std::uint64_t b, std::uint64_t cap) {
  if (b != 0 && a > cap / b) return cap;
  return std::min(a * b, cap);
}

// apply's input read by nlohmann's SAX parser (input_file.hpp): the numbers of x go straight into
// a vector of float and those of shape and positions into theirs, so memory is the 4 bytes a
// number of x that the computation needs, never a tree of the document (about 26 times the input
// for short numbers). Refused at its first excess, while parsing: a top level other than an
// object, nesting deeper than the format, a repeated or unknown key, more elements in an array
// than the format allows (x and positions up to the element limit, shape 3). The other rules
// are checked once the document is read, in a fixed order (apply_input_of), so that the message
// does not depend on the order of the keys.
class apply_reader {
 public:
  apply_reader(std::string source, std::uint64_t max_elements)
      : source_(std::move(source)), max_elements_(max_elements) {}

  bool null() { return scalar(); }
  bool boolean(bool) { return scalar(); }
  bool string(std::string&) { return scalar(); }
  bool number_integer(std::int64_t v) {
    if (!in_array_) return scalar();
    if (key_ == member::x) return x_number(static_cast<double>(v));
    if (v >= 0) return number_unsigned(static_cast<std::uint64_t>(v));
    return scalar();
  }
  bool number_unsigned(std::uint64_t v) {
    if (!in_array_) return scalar();
    if (key_ == member::x) return x_number(static_cast<double>(v));
    const std::uint64_t i = state(key_).size;
    element();
    if (key_ == member::shape) {
      shape_.push_back(v);
    } else {  // positions
      if (v >= position_limit) mark_bad(positions, i, false);
      if (!positions.bad) position_values.push_back(static_cast<std::int64_t>(v));
    }
    return true;
  }
  bool number_float(double v, const std::string&) {
    if (in_array_ && key_ == member::x) return x_number(v);
    return scalar();
  }
  bool start_object(std::size_t) { return open(false); }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(true); }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    if (depth_ != 1) return true;  // inside an object that is a member's value: refused later
    const member m = k == "x"           ? member::x
                     : k == "shape"     ? member::shape
                     : k == "positions" ? member::positions
                                        : member::none;
    if (m == member::none)
      invalid("posenc: " + source_ + ": unknown key \"" + printable(k) +
              "\" (x, shape, positions)");
    auto& seen = state(m);
    if (seen.present)
      invalid("posenc: " + source_ + ": key \"" + printable(k) + "\" appears twice");
    seen.present = true;
    key_ = m;
    return true;
  }

  // What was read, for apply_input_of.
  struct member_state {
    bool present = false;
    bool array = false;              // the value is an array
    std::uint64_t size = 0;          // its elements
    std::uint64_t first_bad = 0;     // the index of its first element that breaks the rule
    bool bad = false;                // whether there is one
    bool bad_is_not_number = false;  // x: not a number (else: not a finite float32)
  };
  member_state x, shape, positions;
  std::vector<float> x_values;
  std::vector<std::uint64_t> shape_values() const { return shape_; }
  std::vector<std::int64_t> position_values;

 private:
  enum class member : std::uint8_t { none, x, shape, positions };
  member_state& state(member m) {
    return m == member::x ? x : m == member::shape ? shape : positions;
  }
  // A member's value (depth 1) that is not an array, or an element (depth 2) of the wrong kind.
  bool scalar() {
    if (depth_ == 0) top_level();
    if (depth_ == 1) return true;  // not an array: refused by apply_input_of
    if (in_array_) {
      member_state& st = state(key_);
      const std::uint64_t i = st.size;
      element();
      mark_bad(st, i, true);
    }
    return true;  // a member object's contents (depth 2, not in an array) are ignored
  }
  bool open(bool array) {
    if (depth_ == 0 && !array) {
      depth_ = 1;
      return true;
    }
    if (depth_ == 0) top_level();
    if (depth_ >= 2) invalid("posenc: " + source_ + ": nested deeper than the input format allows");
    // depth 1: a member's value. x after shape: its size is known.
    state(key_).array = array;
    in_array_ = array;
    depth_ = 2;
    if (array && key_ == member::x && shape_.size() == 3 && !shape.bad) {
      std::uint64_t count = 1;
      for (const std::uint64_t d : shape_)
        count = capped_product(count, d, max_elements_);
      x_values.reserve(static_cast<std::size_t>(count));
    }
    return true;
  }
  bool close() {
    --depth_;
    in_array_ = false;
    return true;
  }
  [[noreturn]] void top_level() const {
    invalid("posenc: " + source_ + ": the top level is not a JSON object");
  }
  [[noreturn]] void invalid_shape() const {
    invalid("posenc: " + source_ +
            ": \"shape\" must be [tokens, heads, head_dim], positive integers");
  }
  // One more element of the current array, within the format's count.
  void element() {
    member_state& st = state(key_);
    ++st.size;
    if (key_ == member::shape && st.size > 3) invalid_shape();
    if (key_ != member::shape && st.size > max_elements_)
      invalid("posenc: " + source_ + ": more than " + std::to_string(max_elements_) +
              (key_ == member::x ? " elements in x" : " positions") +
              "; raise the limit with --max-elements N");
  }
  static void mark_bad(member_state& st, std::uint64_t i, bool not_number) {
    if (st.bad) return;
    st.bad = true;
    st.first_bad = i;
    st.bad_is_not_number = not_number;
  }
  bool x_number(double v) {
    const std::uint64_t i = x.size;
    element();
    // Values from 0x1.ffffffp127 up round to infinity in float32.
    if (!(std::fabs(v) < 0x1.ffffffp+127)) mark_bad(x, i, false);
    if (!x.bad) x_values.push_back(static_cast<float>(v));
    return true;
  }

  std::string source_;
  std::uint64_t max_elements_;
  int depth_ = 0;
  bool in_array_ = false;
  member key_ = member::none;
  std::vector<std::uint64_t> shape_;
};

apply_input apply_input_of(apply_reader& rd, const std::string& source, std::uint64_t max_elements);
}  // namespace

apply_input parse_apply_input(std::string_view text, const std::string& name,
                              std::uint64_t max_elements) {
  const std::string source = printable(name);
  apply_reader rd(source, max_elements);
  sax_parse_json(text, source, rd);
  return apply_input_of(rd, source, max_elements);
}

apply_input load_apply_input(const std::string& path, std::uint64_t max_bytes,
                             std::uint64_t max_elements) {
  input_file file(path, max_bytes, byte_limit_text(max_bytes, max_apply_file_bytes, "1 GiB"));
  std::istream stream(&file);
  apply_reader rd(file.shown(), max_elements);
  sax_parse_json(stream, file.shown(), rd, &file);
  return apply_input_of(rd, file.shown(), max_elements);
}

namespace {
apply_input apply_input_of(apply_reader& rd, const std::string& source,
                           std::uint64_t max_elements) {
  // shape: three positive integers whose product is at most max_elements.
  if (!rd.shape.present) invalid("posenc: " + source + ": missing \"shape\"");
  const char* shape_rule = ": \"shape\" must be [tokens, heads, head_dim], positive integers";
  const std::vector<std::uint64_t> shape = rd.shape_values();
  if (!rd.shape.array || rd.shape.bad || shape.size() != 3)
    invalid("posenc: " + source + shape_rule);
  std::uint64_t dims[3];
  std::uint64_t count = 1;
  for (std::size_t i = 0; i < 3; ++i) {
    if (shape[i] == 0) invalid("posenc: " + source + shape_rule);
    dims[i] = std::min<std::uint64_t>(shape[i], max_elements + 1);
    count = capped_product(count, dims[i], max_elements + 1);
  }
  if (dims[2] > max_head_dim)
    invalid("posenc: " + source + ": head_dim must be at most " + std::to_string(max_head_dim));
  if (count > max_elements)
    invalid("posenc: " + source + ": more than " + std::to_string(max_elements) +
            " elements in x; raise the limit with --max-elements N");
  apply_input in;
  in.tokens = static_cast<std::size_t>(dims[0]);
  in.heads = static_cast<std::size_t>(dims[1]);
  in.head_dim = static_cast<std::size_t>(dims[2]);

  // x: count finite numbers, each rounded once to float (and finite there).
  if (!rd.x.present) invalid("posenc: " + source + ": missing \"x\"");
  if (!rd.x.array) invalid("posenc: " + source + ": \"x\" must be an array of numbers");
  if (rd.x.size != count)
    invalid("posenc: " + source + ": \"x\" has " + std::to_string(rd.x.size) +
            " numbers; shape needs " + std::to_string(count));
  if (rd.x.bad)
    invalid("posenc: " + source + ": x[" + std::to_string(rd.x.first_bad) +
            (rd.x.bad_is_not_number ? "] is not a number" : "] is not a finite float32"));
  in.x = std::move(rd.x_values);

  // positions: one integer in [0, 2^32) per token; default 0, 1, ..., tokens - 1.
  if (!rd.positions.present) {
    in.positions.resize(in.tokens);
    for (std::size_t t = 0; t < in.tokens; ++t) in.positions[t] = static_cast<std::int64_t>(t);
    return in;
  }
  if (!rd.positions.array || rd.positions.size != in.tokens)
    invalid("posenc: " + source + ": \"positions\" must have one integer per token (" +
            std::to_string(in.tokens) + ")");
  if (rd.positions.bad)
    invalid("posenc: " + source + ": positions[" + std::to_string(rd.positions.first_bad) +
            "] must be an integer with 0 <= p < 4294967296");
  in.positions = std::move(rd.position_values);
  return in;
}
}  // namespace

void require_valid_isa_request() {
  namespace d = kernels::dispatch;
  const d::isa_request r = d::isa_override();
  if (r != d::isa_request::unknown && r != d::isa_request::unsupported) return;
  const char* env = std::getenv("POSENC_ISA");
  std::string names;
  for (const d::isa_kernels& k : d::compiled_isas()) {
    if (!k.supported) continue;
    if (!names.empty()) names += ", ";
    names += k.name;
  }
  invalid("posenc: POSENC_ISA=" + printable(env != nullptr ? env : "") +
          (r == d::isa_request::unknown ? " names no ISA" : " names an ISA this CPU cannot run") +
          " (on this machine: " + names + ")");
}

apply_result compute_apply(const rope_config& c, const apply_input& in, std::uint64_t seq_len) {
  if (in.head_dim != c.head_dim)
    invalid("posenc: the input's head_dim (shape[2] = " + std::to_string(in.head_dim) +
            ") differs from the configuration's (" + std::to_string(c.head_dim) + ")");
  apply_result r;
  r.tokens = in.tokens;
  r.heads = in.heads;
  r.head_dim = in.head_dim;
  r.positions = in.positions;
  r.y.resize(in.x.size());

  std::uint64_t max_pos = 0;
  for (const std::int64_t p : in.positions)
    max_pos = std::max(max_pos, static_cast<std::uint64_t>(p));
  const std::uint64_t pairs = c.rotary_dim / 2;
  // The table of table_result's limit; past it, rows on the fly (about 1 us per pair and token).
  const bool cached = max_pos < max_positions && (max_pos + 1) * pairs <= max_table_entries;
  runtime_rope_cache<float> cache;
  kernels::rope_table table = kernels::on_the_fly_table(c, seq_len);
  if (cached) {
    require_ok(runtime_rope_cache<float>::try_make(c, static_cast<std::size_t>(max_pos + 1), cache,
                                                   seq_len));
    table = kernels::make_rope_table(cache.view(), c, seq_len);
  }
  const auto x = kernels::dense(in.x.data(), in.tokens, in.heads, in.head_dim);
  const auto y = kernels::dense(r.y.data(), in.tokens, in.heads, in.head_dim);
  require_ok(
      kernels::dispatch::apply_rope(table, x, y, kernels::token_positions::of(in.positions)));
  // Finite x can still rotate past float32's range (|y| up to sqrt(2) max|x| times the attention
  // factor): an error, not an inf in the output.
  for (std::size_t i = 0; i < r.y.size(); ++i)
    if (!std::isfinite(r.y[i]))
      invalid("posenc: y[" + std::to_string(i) +
              "] overflows float32 (the rotation of finite x, times the attention factor, is "
              "beyond 3.4e38)");
  r.isa = kernels::dispatch::active_isa();
  return r;
}

void write_apply(std::ostream& out, const apply_result& r, output_format f) {
  // Handed to `out` in pieces of about 64 KiB: memory does not grow with the output (which is
  // about 13 bytes a number), and a failed write ends the command at the first piece.
  std::string s;
  s.reserve((std::size_t{1} << 16) + 4096);
  const auto piece = [&] {
    if (s.size() >= (std::size_t{1} << 16)) {
      out.write(s.data(), static_cast<std::streamsize>(s.size()));
      s.clear();
    }
  };
  char b[40];
  auto num = [&](float v) {
    const auto res = std::to_chars(b, b + sizeof b, v, std::chars_format::general, 9);
    s.append(b, static_cast<std::size_t>(res.ptr - b));
  };
  const std::size_t d = r.head_dim;
  switch (f) {
    case output_format::json:
      s += "{\"y\": [";
      for (std::size_t i = 0; i < r.y.size(); ++i) {
        if (i > 0) s += ", ";
        num(r.y[i]);
        piece();
      }
      s += "]}\n";
      break;
    case output_format::csv:
      s += "token,position,head";
      for (std::size_t c = 0; c < d; ++c) s += ",y" + std::to_string(c);
      s += '\n';
      for (std::size_t t = 0; t < r.tokens; ++t) {
        for (std::size_t h = 0; h < r.heads; ++h) {
          s += std::to_string(t) + ',' + std::to_string(r.positions[t]) + ',' + std::to_string(h);
          for (std::size_t c = 0; c < d; ++c) {
            s += ',';
            num(r.y[(t * r.heads + h) * d + c]);
            piece();
          }
          s += '\n';
        }
      }
      break;
    case output_format::text:
      for (std::size_t t = 0; t < r.tokens; ++t) {
        for (std::size_t h = 0; h < r.heads; ++h) {
          s += "token " + std::to_string(t) + "  position " + std::to_string(r.positions[t]) +
               "  head " + std::to_string(h) + '\n';
          for (std::size_t c = 0; c < d; ++c) {
            const std::size_t w = s.size();
            num(r.y[(t * r.heads + h) * d + c]);
            const std::size_t len = s.size() - w;
            if (len < 16) s.insert(w, 16 - len, ' ');
            s += (c % 8 == 7 || c + 1 == d) ? '\n' : ' ';
            piece();
          }
        }
      }
      break;
  }
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
}

int run_apply(const invocation& inv, std::ostream& out) {
  require_valid_isa_request();
  const apply_input in =
      load_apply_input(*inv.input, inv.max_input_bytes.value_or(max_apply_file_bytes),
                       inv.max_elements.value_or(max_apply_elements));
  invocation with_dim = inv;
  if (!inv.preset && !inv.hf_config && !inv.flags.head_dim)
    with_dim.flags.head_dim = static_cast<std::uint32_t>(in.head_dim);
  const resolved_config rc = configure(with_dim);
  const apply_result r = compute_apply(rc.config(), in, inv.seq_len);
  write_apply(out, r, inv.format);
  return exit_ok;
}

}  // namespace posenc::cli
