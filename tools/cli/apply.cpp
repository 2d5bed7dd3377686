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
#include <functional>
#include <set>
#include <string>

#include "cli/compute.hpp"
#include "cli/error.hpp"
#include "cli/input_file.hpp"
#include "cli/output.hpp"
#include "cli/run.hpp"

namespace posenc::cli {

namespace {
using json = nlohmann::json;

// A non-negative JSON integer (1.0 and 1e3 are not integers here), or nullopt.
std::optional<std::uint64_t> json_uint(const json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  return std::nullopt;
}
}  // namespace

namespace {
// The checks made while parsing, so that a hostile file is refused at its first excess rather than
// after it is a tree in memory: nesting deeper than the format, a repeated or unknown key, and more
// elements in an array than the format allows (x and positions up to max_apply_elements, shape 3).
struct parse_checks {
  std::string source;
  std::set<std::string> top_keys;
  std::string key;  // the member being parsed
  std::uint64_t elements = 0;

  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    if (depth > 2) invalid("posenc: " + source + ": nested deeper than the input format allows");
    if (event == json::parse_event_t::key && depth == 1) {
      key = parsed.get<std::string>();
      if (key != "x" && key != "shape" && key != "positions")
        invalid("posenc: " + source + ": unknown key \"" + printable(key) +
                "\" (x, shape, positions)");
      if (!top_keys.insert(key).second)
        invalid("posenc: " + source + ": key \"" + printable(key) + "\" appears twice");
      elements = 0;
    }
    if (event == json::parse_event_t::value && depth == 2) {
      ++elements;
      if (key == "shape" && elements > 3)
        invalid("posenc: " + source +
                ": \"shape\" must be [tokens, heads, head_dim], positive integers");
      if (key != "shape" && elements > max_apply_elements)
        invalid("posenc: " + source + ": more than " + std::to_string(max_apply_elements) +
                (key == "x" ? " elements in x" : " positions"));
    }
    return true;
  }
};

apply_input apply_input_of(const json& root, const std::string& source);
}  // namespace

apply_input parse_apply_input(std::string_view text, const std::string& name) {
  parse_checks checks{printable(name), {}, {}, 0};
  return apply_input_of(parse_json_object(text, checks.source, std::ref(checks)), checks.source);
}

apply_input load_apply_input(const std::string& path) {
  parse_checks checks{printable(path), {}, {}, 0};
  return apply_input_of(parse_json_file(path, max_apply_file_bytes, "1 GiB", std::ref(checks)),
                        checks.source);
}

namespace {
apply_input apply_input_of(const json& root, const std::string& source) {
  // shape: three positive integers whose product is at most max_apply_elements.
  const auto shape_it = root.find("shape");
  if (shape_it == root.end()) invalid("posenc: " + source + ": missing \"shape\"");
  const json& shape = *shape_it;
  const char* shape_rule = ": \"shape\" must be [tokens, heads, head_dim], positive integers";
  if (!shape.is_array() || shape.size() != 3) invalid("posenc: " + source + shape_rule);
  std::uint64_t dims[3];
  std::uint64_t count = 1;
  for (std::size_t i = 0; i < 3; ++i) {
    const auto v = json_uint(shape[i]);
    if (!v || *v == 0) invalid("posenc: " + source + shape_rule);
    dims[i] = std::min<std::uint64_t>(*v, max_apply_elements + 1);
    count = std::min(count * dims[i], max_apply_elements + 1);
  }
  if (dims[2] > max_head_dim)
    invalid("posenc: " + source + ": head_dim must be at most " + std::to_string(max_head_dim));
  if (count > max_apply_elements)
    invalid("posenc: " + source + ": more than " + std::to_string(max_apply_elements) +
            " elements in x");
  apply_input in;
  in.tokens = static_cast<std::size_t>(dims[0]);
  in.heads = static_cast<std::size_t>(dims[1]);
  in.head_dim = static_cast<std::size_t>(dims[2]);

  // x: count finite numbers, each rounded once to float (and finite there).
  const auto x_it = root.find("x");
  if (x_it == root.end()) invalid("posenc: " + source + ": missing \"x\"");
  if (!x_it->is_array()) invalid("posenc: " + source + ": \"x\" must be an array of numbers");
  if (x_it->size() != count)
    invalid("posenc: " + source + ": \"x\" has " + std::to_string(x_it->size()) +
            " numbers; shape needs " + std::to_string(count));
  in.x.reserve(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < x_it->size(); ++i) {
    const json& v = (*x_it)[i];
    if (!v.is_number())
      invalid("posenc: " + source + ": x[" + std::to_string(i) + "] is not a number");
    // Values from 0x1.ffffffp127 up round to infinity in float32.
    const double dv = v.get<double>();
    if (!(std::fabs(dv) < 0x1.ffffffp+127))
      invalid("posenc: " + source + ": x[" + std::to_string(i) + "] is not a finite float32");
    in.x.push_back(static_cast<float>(dv));
  }

  // positions: one integer in [0, 2^32) per token; default 0, 1, ..., tokens - 1.
  const auto p_it = root.find("positions");
  if (p_it == root.end()) {
    in.positions.resize(in.tokens);
    for (std::size_t t = 0; t < in.tokens; ++t) in.positions[t] = static_cast<std::int64_t>(t);
    return in;
  }
  if (!p_it->is_array() || p_it->size() != in.tokens)
    invalid("posenc: " + source + ": \"positions\" must have one integer per token (" +
            std::to_string(in.tokens) + ")");
  in.positions.reserve(in.tokens);
  for (std::size_t t = 0; t < p_it->size(); ++t) {
    const auto p = json_uint((*p_it)[t]);
    if (!p || *p >= position_limit)
      invalid("posenc: " + source + ": positions[" + std::to_string(t) +
              "] must be an integer with 0 <= p < 4294967296");
    in.positions.push_back(static_cast<std::int64_t>(*p));
  }
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
  std::string s;
  s.reserve(r.y.size() * 16 + 64);
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
          }
        }
      }
      break;
  }
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
}

int run_apply(const invocation& inv, std::ostream& out) {
  require_valid_isa_request();
  const apply_input in = load_apply_input(*inv.input);
  invocation with_dim = inv;
  if (!inv.preset && !inv.hf_config && !inv.flags.head_dim)
    with_dim.flags.head_dim = static_cast<std::uint32_t>(in.head_dim);
  const resolved_config rc = configure(with_dim);
  const apply_result r = compute_apply(rc.config(), in, inv.seq_len);
  write_apply(out, r, inv.format);
  return exit_ok;
}

}  // namespace posenc::cli
