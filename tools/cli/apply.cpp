#include "cli/apply.hpp"

#include <nlohmann/json.hpp>

#include <posenc/kernels/dispatch.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/tables/mrope.hpp>
#include <posenc/tables/runtime_rope_cache.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "cli/compute.hpp"
#include "cli/error.hpp"
#include "cli/gguf.hpp"
#include "cli/hf_config.hpp"
#include "cli/input_file.hpp"
#include "cli/output.hpp"
#include "cli/run.hpp"

#if POSENC_CLI_PRESETS
#include <posenc/spec/select.hpp>
#endif

namespace posenc::cli {

namespace {
using json = nlohmann::json;

constexpr const char* shape_rule =
    ": \"shape\" must be [tokens, heads, head_dim] (THD), or 4 dimensions with --shape-order "
    "BHTD or BTHD; positive integers";

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
    if (array && key_ == member::x && shape_.size() >= 3 && !shape.bad) {
      std::uint64_t count = 1;
      for (const std::uint64_t d : shape_) count = capped_product(count, d, max_elements_);
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
  [[noreturn]] void invalid_shape() const { invalid("posenc: " + source_ + shape_rule); }
  // One more element of the current array, within the format's count.
  void element() {
    member_state& st = state(key_);
    ++st.size;
    if (key_ == member::shape && st.size > 4) invalid_shape();
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

// The dimensions of `shape` by the shape order, checked: 3 (THD) or 4 (BHTD, BTHD) positive
// integers whose product is at most max_elements, head_dim at most max_head_dim.
void set_dimensions(apply_input& in, const std::vector<std::uint64_t>& shape,
                    std::optional<shape_order> order, const std::string& source,
                    std::uint64_t max_elements) {
  if (shape.size() != 3 && shape.size() != 4) invalid("posenc: " + source + shape_rule);
  if (shape.size() == 4 && !order)
    invalid("posenc: " + source + ": a 4-dimensional tensor needs --shape-order BHTD or BTHD");
  const shape_order o = order.value_or(shape_order::thd);
  if ((o == shape_order::thd) != (shape.size() == 3))
    invalid("posenc: " + source + ": --shape-order " + std::string(shape_order_names(o)) +
            " needs " + (o == shape_order::thd ? "3" : "4") + " dimensions; the tensor has " +
            std::to_string(shape.size()));
  std::uint64_t dims[4] = {1, 1, 1, 1};
  std::uint64_t count = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) invalid("posenc: " + source + shape_rule);
    dims[i] = std::min<std::uint64_t>(shape[i], max_elements + 1);
    count = capped_product(count, dims[i], max_elements + 1);
  }
  if (dims[shape.size() - 1] > max_head_dim)
    invalid("posenc: " + source + ": head_dim must be at most " + std::to_string(max_head_dim));
  if (count > max_elements)
    invalid("posenc: " + source + ": more than " + std::to_string(max_elements) +
            " elements in x; raise the limit with --max-elements N");
  const auto d = [&](std::size_t i) { return static_cast<std::size_t>(dims[i]); };
  in.order = o;
  in.shape = shape;
  switch (o) {
    case shape_order::thd:
      in.batch = 1, in.tokens = d(0), in.heads = d(1), in.head_dim = d(2);
      break;
    case shape_order::bhtd:
      in.batch = d(0), in.heads = d(1), in.tokens = d(2), in.head_dim = d(3);
      break;
    case shape_order::bthd:
      in.batch = d(0), in.tokens = d(1), in.heads = d(2), in.head_dim = d(3);
      break;
  }
}

// Positions 0, 1, ..., tokens - 1 in every batch row and stream (HF's default position_ids; for
// M-RoPE get_rope_index's text-only case, the same on the three streams).
void default_positions(apply_input& in) {
  in.positions.resize(in.streams * in.batch * in.tokens);
  for (std::size_t r = 0; r < in.streams * in.batch; ++r)
    for (std::size_t t = 0; t < in.tokens; ++t)
      in.positions[r * in.tokens + t] = static_cast<std::int64_t>(t);
  in.positions_given = false;
}

// `ids` (streams * tokens of them: every batch row the same; or streams * batch * tokens) as
// in.positions.
void set_positions(apply_input& in, std::vector<std::int64_t> ids) {
  if (ids.size() == in.streams * in.tokens && in.batch > 1) {
    std::vector<std::int64_t> all(in.streams * in.batch * in.tokens);
    for (std::size_t st = 0; st < in.streams; ++st)
      for (std::size_t b = 0; b < in.batch; ++b)
        std::copy_n(ids.begin() + static_cast<std::ptrdiff_t>(st * in.tokens), in.tokens,
                    all.begin() + static_cast<std::ptrdiff_t>((st * in.batch + b) * in.tokens));
    ids = std::move(all);
  }
  in.positions = std::move(ids);
  in.positions_given = true;
}

std::string per_token_rule(const apply_input& in) {
  if (in.streams > 1) {
    const std::string s = std::to_string(in.streams);
    std::string r = s + " x tokens integers (" + std::to_string(in.streams * in.tokens) + ")";
    if (in.batch > 1)
      r += " or " + s + " x batch x tokens (" + std::to_string(in.streams * in.batch * in.tokens) +
           ")";
    return r + ", one row per position stream (" +
           (in.streams == 3 ? "temporal, height, width" : "height, width") +
           "): the configuration is " + (in.streams == 3 ? "M-RoPE" : "2-D axial RoPE");
  }
  std::string s = "one integer per token (" + std::to_string(in.tokens) + ")";
  if (in.batch > 1)
    s += " or per batch row and token (" + std::to_string(in.batch * in.tokens) + ")";
  return s;
}

apply_input apply_input_of(apply_reader& rd, const std::string& source, std::uint64_t max_elements,
                           std::optional<shape_order> order, std::size_t streams) {
  if (!rd.shape.present) invalid("posenc: " + source + ": missing \"shape\"");
  if (!rd.shape.array || rd.shape.bad) invalid("posenc: " + source + shape_rule);
  apply_input in;
  in.streams = streams;
  set_dimensions(in, rd.shape_values(), order, source, max_elements);
  std::uint64_t count = 1;
  for (const std::uint64_t d : in.shape) count *= d;

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

  // positions: one integer in [0, 2^32) per token (or per batch row and token).
  if (!rd.positions.present) {
    default_positions(in);
    return in;
  }
  if (!rd.positions.array || (rd.positions.size != in.streams * in.tokens &&
                              rd.positions.size != in.streams * in.batch * in.tokens))
    invalid("posenc: " + source + ": \"positions\" must have " + per_token_rule(in));
  if (rd.positions.bad)
    invalid("posenc: " + source + ": positions[" + std::to_string(rd.positions.first_bad) +
            "] must be an integer with 0 <= p < 4294967296");
  set_positions(in, std::move(rd.position_values));
  return in;
}

// A .npy tensor (float32 or float16) as apply's input; positions default.
apply_input npy_input_of(npy_array&& a, const std::string& source, std::uint64_t max_elements,
                         std::optional<shape_order> order, std::size_t streams) {
  apply_input in;
  in.streams = streams;
  set_dimensions(in, a.shape, order, source, max_elements);
  in.dtype = a.dtype;
  if (a.dtype == npy_dtype::f32) {
    for (std::size_t i = 0; i < a.f32_data.size(); ++i)
      if (!std::isfinite(a.f32_data[i]))
        invalid("posenc: " + source + ": x[" + std::to_string(i) + "] is not a finite float32");
    in.x = std::move(a.f32_data);
  } else {
    for (std::size_t i = 0; i < a.f16_data.size(); ++i)
      if (!std::isfinite(to_float(a.f16_data[i])))
        invalid("posenc: " + source + ": x[" + std::to_string(i) + "] is not a finite float16");
    in.x16 = std::move(a.f16_data);
  }
  default_positions(in);
  return in;
}
}  // namespace

apply_input parse_apply_input(std::string_view text, const std::string& name,
                              std::uint64_t max_elements, std::optional<shape_order> order,
                              std::size_t streams) {
  const std::string source = printable(name);
  apply_reader rd(source, max_elements);
  sax_parse_json(text, source, rd);
  return apply_input_of(rd, source, max_elements, order, streams);
}

apply_input load_apply_input(const std::string& path, std::uint64_t max_bytes,
                             std::uint64_t max_elements, std::optional<shape_order> order,
                             std::size_t streams) {
  input_file file(path, max_bytes, byte_limit_text(max_bytes, max_apply_file_bytes, "1 GiB"));
  // JSON text never starts with the .npy magic's first byte (0x93).
  if (file.sgetc() == 0x93) {
    static constexpr npy_dtype tensors[] = {npy_dtype::f32, npy_dtype::f16};
    npy_array a;
    try {
      a = read_npy(file, file.shown(), tensors, max_elements);
    } catch (const cli_error&) {
      file.check_input();  // over the byte limit, or a read error: that is the message
      throw;
    }
    return npy_input_of(std::move(a), file.shown(), max_elements, order, streams);
  }
  file.check_input();
  std::istream stream(&file);
  apply_reader rd(file.shown(), max_elements);
  sax_parse_json(stream, file.shown(), rd, &file);
  return apply_input_of(rd, file.shown(), max_elements, order, streams);
}

void load_position_ids(apply_input& in, const std::string& path, std::uint64_t max_bytes,
                       std::uint64_t max_elements) {
  input_file file(path, max_bytes, byte_limit_text(max_bytes, max_apply_file_bytes, "1 GiB"));
  static constexpr npy_dtype ids[] = {npy_dtype::i64, npy_dtype::i32};
  npy_array a;
  try {
    a = read_npy(file, file.shown(), ids, max_elements);
  } catch (const cli_error&) {
    file.check_input();
    throw;
  }
  const std::string& source = file.shown();
  if (in.streams > 1) {
    // HF's M-RoPE position_ids [3, batch, tokens] (Qwen2VLModel.get_rope_index), or [S, tokens]
    // for every batch row.
    const std::size_t S = in.streams;
    const bool shared = a.shape.size() == 2 && a.shape[0] == S && a.shape[1] == in.tokens;
    const bool per_row =
        a.shape.size() == 3 && a.shape[0] == S && a.shape[1] == in.batch && a.shape[2] == in.tokens;
    if (!shared && !per_row)
      invalid("posenc: " + source + ": position ids must have shape [" + std::to_string(S) + ", " +
              std::to_string(in.tokens) + "] or [" + std::to_string(S) + ", " +
              std::to_string(in.batch) + ", " + std::to_string(in.tokens) +
              "] (one row per position stream: the configuration is " +
              (S == 3 ? "M-RoPE" : "2-D axial RoPE") + ")");
  } else {
    const bool shared = a.shape.size() == 1 && a.shape[0] == in.tokens;
    const bool per_row = a.shape.size() == 2 && a.shape[0] == in.batch && a.shape[1] == in.tokens;
    if (!shared && !per_row)
      invalid("posenc: " + source + ": position ids must have shape [" + std::to_string(in.tokens) +
              "] or [" + std::to_string(in.batch) + ", " + std::to_string(in.tokens) +
              "] ([tokens] or [batch, tokens] of the input)");
  }
  for (std::size_t i = 0; i < a.ids.size(); ++i)
    if (a.ids[i] < 0 || static_cast<std::uint64_t>(a.ids[i]) >= position_limit)
      invalid("posenc: " + source + ": position_ids[" + std::to_string(i) +
              "] must be an integer with 0 <= p < 4294967296");
  set_positions(in, std::move(a.ids));
}

std::uint64_t hf_seq_len(const apply_input& in) {
  std::uint64_t max_pos = 0;
  for (const std::int64_t p : in.positions)
    max_pos = std::max(max_pos, static_cast<std::uint64_t>(p));
  return max_pos + 1;
}

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

namespace {
// Batch row b of a tensor in its order as a [tokens, heads, head_dim] view.
template <class T>
kernels::tensor_view<T> row_view(T* data, const apply_input& in, std::size_t b) {
  const std::size_t t = in.tokens, h = in.heads, d = in.head_dim;
  if (in.order == shape_order::bhtd) return {data + b * h * t * d, t, h, d, d, t * d};
  return {data + b * t * h * d, t, h, d, h * d, d};
}
}  // namespace

apply_result compute_apply(const rope_config& c, const apply_input& in, std::uint64_t seq_len,
                           const multi_axis& m) {
  if (in.head_dim != c.head_dim)
    invalid("posenc: the input's head_dim (shape[" + std::to_string(in.shape.size() - 1) +
            "] = " + std::to_string(in.head_dim) + ") differs from the configuration's (" +
            std::to_string(c.head_dim) + ")");
  apply_result r;
  r.order = in.order;
  r.shape = in.shape;
  r.batch = in.batch;
  r.tokens = in.tokens;
  r.heads = in.heads;
  r.head_dim = in.head_dim;
  r.positions = in.positions;
  r.axes = m;
  r.dtype = in.dtype;
  if (in.streams != m.streams())
    invalid("posenc: the input has " + std::to_string(in.streams) +
            " position streams; the configuration needs " + std::to_string(m.streams()));
  // The multi-axis map: pair i takes the angle of inv_freq index k from stream s.
  std::vector<pair_source> sources(c.rotary_dim / 2);
  if (m.form == rotary_form::mrope) {
    const mrope_error e =
        build_mrope_pair_sources({c, m.mrope_section, m.section_layout}, sources.data());
    if (e != mrope_error::ok) invalid(message(e));
  } else if (m.form == rotary_form::axial) {
    const axial_rope_error e = build_axial_pair_sources({c, m.frequencies}, sources.data());
    if (e != axial_rope_error::ok) invalid(message(e));
  }

  const std::uint64_t max_pos = hf_seq_len(in) - 1;
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
  const auto rows = [&](const auto* x, auto* y) {
    for (std::size_t b = 0; b < in.batch; ++b) {
      if (m.form == rotary_form::one_d) {
        const std::span<const std::int64_t> ids(in.positions.data() + b * in.tokens, in.tokens);
        require_ok(kernels::dispatch::apply_rope(table, row_view(x, in, b), row_view(y, in, b),
                                                 kernels::token_positions::of(ids)));
        continue;
      }
      std::array<kernels::token_positions, mrope_streams> st;
      for (std::size_t s = 0; s < in.streams; ++s)
        st[s] = kernels::token_positions::of(std::span<const std::int64_t>(
            in.positions.data() + (s * in.batch + b) * in.tokens, in.tokens));
      require_ok(kernels::dispatch::apply_multi_axis_rope(
          table, std::span<const pair_source>(sources), row_view(x, in, b), row_view(y, in, b),
          std::span<const kernels::token_positions>(st.data(), in.streams)));
    }
  };
  // Finite x can still rotate past the dtype's range (|y| up to sqrt(2) max|x| times the
  // attention factor): an error, not an inf in the output.
  const auto overflow = [](std::size_t i, const char* type, const char* max) {
    invalid("posenc: y[" + std::to_string(i) + "] overflows " + type +
            " (the rotation of finite x, times the attention factor, is beyond " + max + ")");
  };
  if (in.dtype == npy_dtype::f32) {
    r.y.resize(in.x.size());
    rows(in.x.data(), r.y.data());
    for (std::size_t i = 0; i < r.y.size(); ++i)
      if (!std::isfinite(r.y[i])) overflow(i, "float32", "3.4e38");
  } else {
    r.y16.resize(in.x16.size());
    rows(in.x16.data(), r.y16.data());
    for (std::size_t i = 0; i < r.y16.size(); ++i)
      if (!std::isfinite(to_float(r.y16[i]))) overflow(i, "float16", "65504");
  }
  r.isa = kernels::dispatch::active_isa();
  return r;
}

namespace {
// The element offset of (batch row b, token t, head h) in r's order.
std::size_t offset_of(const apply_result& r, std::size_t b, std::size_t t, std::size_t h) {
  if (r.order == shape_order::bhtd) return ((b * r.heads + h) * r.tokens + t) * r.head_dim;
  return ((b * r.tokens + t) * r.heads + h) * r.head_dim;
}

float value_at(const apply_result& r, std::size_t i) {
  return r.dtype == npy_dtype::f32 ? r.y[i] : to_float(r.y16[i]);
}

std::size_t size_of(const apply_result& r) {
  return r.dtype == npy_dtype::f32 ? r.y.size() : r.y16.size();
}
}  // namespace

void write_apply(std::ostream& out, const apply_result& r, output_format f, const config_echo& echo,
                 const apply_result* k) {
  // Handed to `out` in pieces of about 64 KiB: memory does not grow with the output (which is
  // about 13 bytes a number), and a failed write ends the command at the first piece.
  std::string s;
  s.reserve((std::size_t{1} << 16) + 4096);
  s += echo_prefix(echo, f);
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
  const bool batched = r.order != shape_order::thd;
  const std::size_t streams = r.axes.streams();
  // The stream names of a multi-axis form: temporal, height, width (M-RoPE) or height, width.
  const auto stream_of = [&](std::size_t st) {
    return stream_name(static_cast<position_stream>(streams == 3 ? st : st + 1));
  };
  // Row b, t, h's label: "[batch,]token,position,head"; a multi-axis form has a position per
  // stream ("token,position_temporal,position_height,position_width,head"; text "position 3/3/4").
  const auto row_label = [&](std::size_t bi, std::size_t t, std::size_t h, bool text) {
    std::string p;
    for (std::size_t st = 0; st < streams; ++st) {
      if (st > 0) p += text ? '/' : ',';
      p += std::to_string(r.positions[(st * r.batch + bi) * r.tokens + t]);
    }
    if (text)
      s += (batched ? "batch " + std::to_string(bi) + "  " : "") + "token " + std::to_string(t) +
           "  position " + p + "  head " + std::to_string(h) + '\n';
    else
      s += (batched ? std::to_string(bi) + ',' : "") + std::to_string(t) + ',' + p + ',' +
           std::to_string(h);
  };
  switch (f) {
    case output_format::json: {
      const auto array = [&](const apply_result& t) {
        s += '[';
        for (std::size_t i = 0, n = size_of(t); i < n; ++i) {
          if (i > 0) s += ", ";
          num(value_at(t, i));
          piece();
        }
        s += ']';
      };
      s += "{\"config\": " + echo_json(echo) + ",\n\"y\": ";
      array(r);
      if (k != nullptr) {
        s += ", \"y_k\": ";
        array(*k);
      }
      s += "}\n";
      break;
    }
    case output_format::csv:
      s += batched ? "batch,token," : "token,";
      if (streams == 1) {
        s += "position";
      } else {
        for (std::size_t st = 0; st < streams; ++st)
          s += std::string(st > 0 ? "," : "") + "position_" + stream_of(st);
      }
      s += ",head";
      for (std::size_t c = 0; c < d; ++c) s += ",y" + std::to_string(c);
      s += '\n';
      for (std::size_t bi = 0; bi < r.batch; ++bi)
        for (std::size_t t = 0; t < r.tokens; ++t)
          for (std::size_t h = 0; h < r.heads; ++h) {
            row_label(bi, t, h, false);
            const std::size_t o = offset_of(r, bi, t, h);
            for (std::size_t c = 0; c < d; ++c) {
              s += ',';
              num(value_at(r, o + c));
              piece();
            }
            s += '\n';
          }
      break;
    case output_format::text:
      for (std::size_t bi = 0; bi < r.batch; ++bi)
        for (std::size_t t = 0; t < r.tokens; ++t)
          for (std::size_t h = 0; h < r.heads; ++h) {
            row_label(bi, t, h, true);
            const std::size_t o = offset_of(r, bi, t, h);
            for (std::size_t c = 0; c < d; ++c) {
              const std::size_t w = s.size();
              num(value_at(r, o + c));
              const std::size_t len = s.size() - w;
              if (len < 16) s.insert(w, 16 - len, ' ');
              s += (c % 8 == 7 || c + 1 == d) ? '\n' : ' ';
              piece();
            }
          }
      break;
  }
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
}

namespace {
// The configuration `apply` computes with: HF multiplies cos and sin by attention_factor
// (LlamaRotaryEmbedding.forward, `cos = cos * self.attention_scaling`,
// src/transformers/models/llama/modeling_llama.py); --no-scale-cos-sin gives the unit rotation,
// an explicit attention factor of 1 (only yarn and longrope have another).
rope_config rotation_config(rope_config c, bool scale_cos_sin) {
  if (!scale_cos_sin &&
      (c.scaling.type == scaling_type::yarn || c.scaling.type == scaling_type::longrope))
    c.scaling.attention_factor = 1.0;
  return c;
}

void write_npy(const std::string& path, const apply_result& r) {
  const void* data = r.dtype == npy_dtype::f32 ? static_cast<const void*>(r.y.data())
                                               : static_cast<const void*>(r.y16.data());
  write_output_file(path, npy_file_bytes(r.dtype, r.shape, data));
}
}  // namespace

namespace {
// The configuration's multi-axis form, before the tensors are read (their positions depend on
// it): a model preset's (qwen2-vl-7b: M-RoPE, pixtral-12b: 2-D), a config.json's
// mrope_section / mrope_interleaved or a GGUF file's ARCH.rope.dimension_sections, then
// --mrope-section / --mrope-interleaved over any of them. `model_rope`: the rope configuration
// of a model preset (not one of --preset's 1-D presets). `sources`: where the M-RoPE section
// and layout came from, for the echo.
multi_axis multi_axis_of(const invocation& inv, std::optional<rope_config>& model_rope,
                         draft_sources& sources) {
  multi_axis m;
  std::optional<std::array<std::uint32_t, 3>> section;
  std::optional<bool> interleaved;
#if POSENC_CLI_PRESETS
  if (inv.preset && find_preset(*inv.preset) == nullptr) {
    if (const model_config* mc = find_model_preset(*inv.preset)) {
      model_rope = mc->rope;
      m.form = mc->form;
      m.frequencies = mc->frequencies;
      if (mc->form == rotary_form::mrope) {
        section = mc->mrope_section;
        interleaved = mc->section_layout == mrope_layout::interleaved;
        sources.mrope_section = sources.mrope_interleaved = "preset " + printable(*inv.preset);
      }
    }
  }
#endif
  if (inv.hf_config || inv.gguf) {
    config_keys keys;
    const config_draft d =
        inv.hf_config
            ? load_hf_config(*inv.hf_config, inv.max_input_bytes.value_or(max_config_bytes),
                             inv.max_depth.value_or(max_config_depth),
                             source_options{inv.layer_type.value_or("")}, &keys)
            : load_gguf(*inv.gguf, inv.max_input_bytes.value_or(max_gguf_bytes), &keys);
    section = d.mrope_section;
    interleaved = d.mrope_interleaved;
    sources.mrope_section = keys.sources.mrope_section;
    sources.mrope_interleaved = keys.sources.mrope_interleaved;
  }
  if (inv.flags.mrope_section) {
    section = inv.flags.mrope_section;
    sources.mrope_section = inv.flag_sources.mrope_section;
  }
  if (inv.flags.mrope_interleaved) {
    interleaved = inv.flags.mrope_interleaved;
    sources.mrope_interleaved = inv.flag_sources.mrope_interleaved;
  }
  if (m.form == rotary_form::axial && (inv.flags.mrope_section || inv.flags.mrope_interleaved))
    usage_error("posenc: --mrope-section and --mrope-interleaved do not apply to 2-D axial RoPE");
  if (section) {
    m.form = rotary_form::mrope;
    m.mrope_section = *section;
    m.section_layout =
        interleaved.value_or(false) ? mrope_layout::interleaved : mrope_layout::contiguous;
  } else if (interleaved.value_or(false)) {
    invalid("posenc: mrope_interleaved needs mrope_section (--mrope-section T,H,W)");
  }
  return m;
}
}  // namespace

int run_apply(const invocation& inv, std::ostream& out) {
  require_valid_isa_request();
  const std::uint64_t max_bytes = inv.max_input_bytes.value_or(max_apply_file_bytes);
  const std::uint64_t max_elements = inv.max_elements.value_or(max_apply_elements);
  const apply_flags& a = inv.apply;
  if (a.output && a.output_k && *a.output == *a.output_k)
    usage_error("posenc: --output and --output-k name the same file");
  std::optional<rope_config> model_rope;
  draft_sources axes_sources;
  const multi_axis axes = multi_axis_of(inv, model_rope, axes_sources);
  const std::size_t streams = axes.streams();
  apply_input q = load_apply_input(*inv.input, max_bytes, max_elements, a.order, streams);
  if (a.position_ids) {
    if (q.positions_given)
      invalid("posenc: " + printable(*inv.input) +
              ": \"positions\" and --position-ids conflict; give one");
    load_position_ids(q, *a.position_ids, max_bytes, max_elements);
  }
  if (axes.form == rotary_form::axial && !q.positions_given)
    invalid(
        "posenc: 2-D axial RoPE needs the (height, width) of every token: \"positions\" "
        "(2 x tokens) or --position-ids [2, tokens]");
  std::optional<apply_input> k;
  if (a.input_k) {
    k = load_apply_input(*a.input_k, max_bytes, max_elements, a.order, streams);
    const std::string shown = printable(*a.input_k);
    if (k->positions_given)
      invalid("posenc: " + shown + ": k takes the positions of --input (or --position-ids)");
    if (k->batch != q.batch || k->tokens != q.tokens || k->head_dim != q.head_dim)
      invalid("posenc: " + shown + ": k must have q's batch, tokens and head_dim (" +
              std::to_string(q.batch) + ", " + std::to_string(q.tokens) + ", " +
              std::to_string(q.head_dim) + "); its heads may differ");
    k->positions = q.positions;
  }
  invocation with_dim = inv;
  if (!inv.preset && !inv.hf_config && !inv.flags.head_dim) {
    with_dim.flags.head_dim = static_cast<std::uint32_t>(q.head_dim);
    with_dim.flag_sources.head_dim = "input " + printable(*inv.input) + " last dimension";
  }
  std::optional<resolved_config> rc;
  if (model_rope) {
    // A model preset's rope part, labelled as the 1-D presets' fields are (run.cpp, configure).
    const config_draft d = draft_from_config(*model_rope);
    draft_sources sources = label_fields(d, "preset " + printable(*inv.preset));
    rc.emplace(resolve(overlay(d, with_dim.flags),
                       overlay_sources(std::move(sources), with_dim.flags, with_dim.flag_sources)));
    check_derived(rc->config(), inv.seq_len);
  } else {
    rc.emplace(configure(with_dim));
  }
  const rope_config c = rotation_config(rc->config(), a.scale_cos_sin);
  // HF's seq_len unless --seq-len gives one.
  const std::uint64_t seq_len = inv.seq_len_given ? inv.seq_len : hf_seq_len(q);
  rc->echo.set_uint("seq_len", seq_len,
                    inv.seq_len_given ? "flag --seq-len" : "derived: max position + 1");
  if (rc->echo.find("attention_factor") != nullptr && !a.scale_cos_sin)
    rc->echo.set_number("attention_factor", 1.0, "flag --no-scale-cos-sin");
  // How the input was read: its dimensions, and whether cos and sin carry the attention factor.
  rc->echo.set_text("shape_order", std::string(shape_order_names(q.order)),
                    a.order ? "flag --shape-order" : "default");
  rc->echo.set_bool("scale_cos_sin", a.scale_cos_sin,
                    a.scale_cos_sin ? "default" : "flag --no-scale-cos-sin");
  // The M-RoPE section and layout the pairs took their streams by.
  if (axes.form == rotary_form::mrope)
    echo_mrope(rc->echo, axes.mrope_section, axes.section_layout == mrope_layout::interleaved,
               axes_sources.mrope_section, axes_sources.mrope_interleaved);
  const apply_result rq = compute_apply(c, q, seq_len, axes);
  std::optional<apply_result> rk;
  if (k) rk = compute_apply(c, *k, seq_len, axes);
  if (a.output) {
    write_npy(*a.output, rq);
    if (rk) write_npy(*a.output_k, *rk);
    return exit_ok;
  }
  write_apply(out, rq, inv.format, rc->echo, rk ? &*rk : nullptr);
  return exit_ok;
}

}  // namespace posenc::cli
