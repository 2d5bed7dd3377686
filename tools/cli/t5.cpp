#include "cli/t5.hpp"

#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include <posenc/tables/t5.hpp>

#include "cli/error.hpp"
#include "cli/input_file.hpp"
#include "cli/npy.hpp"
#include "cli/output.hpp"

namespace posenc::cli {

namespace {

// A decimal integer with an optional '-', |v| <= limit.
std::optional<std::int64_t> parse_int(std::string_view text, std::int64_t limit) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  if (text.empty() || text.front() == '+') return std::nullopt;
  const auto r = std::from_chars(text.data(), end, v);
  if (r.ec != std::errc{} || r.ptr != end || v < -limit || v > limit) return std::nullopt;
  return v;
}

// The configuration of the flags: HF T5Config's defaults relative_attention_num_buckets 32 and
// relative_attention_max_distance 128; bidirectional (T5Attention with is_decoder = False).
t5_config config_of(const invocation& inv) {
  t5_config c;
  c.num_buckets = inv.t5.num_buckets.value_or(32);
  c.max_distance = static_cast<std::uint32_t>(inv.analysis.max_distance.value_or(128));
  c.heads = 1;  // buckets only: no bias table
  c.direction = inv.t5.direction.value_or(t5_direction::bidirectional);
  c.log = inv.t5.log.value_or(t5_log_kind::hf_float32);
  if (const t5_error e = validate(c); e != t5_error::ok) invalid(message(e));
  return c;
}

// HF's relative_attention_bias.weight [num_buckets, heads] from a float32 .npy; sets c.heads.
std::vector<float> load_weights(const invocation& inv, t5_config& c) {
  const std::uint64_t max_bytes = inv.max_input_bytes.value_or(max_t5_weights_bytes);
  input_file file(*inv.t5.weights, max_bytes,
                  byte_limit_text(max_bytes, max_t5_weights_bytes, "64 MiB"));
  static constexpr npy_dtype f32[] = {npy_dtype::f32};
  npy_array a;
  try {
    a = read_npy(file, file.shown(), f32, max_t5_bias_values);
  } catch (const cli_error&) {
    file.check_input();
    throw;
  }
  if (a.shape.size() != 2 || a.shape[0] != c.num_buckets || a.shape[1] == 0)
    invalid("posenc: " + file.shown() + ": the weights must have shape [" +
            std::to_string(c.num_buckets) +
            ", heads] (num_buckets rows, as HF's "
            "relative_attention_bias.weight)");
  for (std::size_t i = 0; i < a.f32_data.size(); ++i)
    if (!std::isfinite(a.f32_data[i]))
      invalid("posenc: " + file.shown() + ": weight " + std::to_string(i) + " is not finite");
  c.heads = static_cast<std::uint32_t>(a.shape[1]);
  return std::move(a.f32_data);
}

// The parameters and where each came from (docs/cli.md, "What was computed").
config_echo t5_echo(const invocation& inv, const t5_config& c) {
  const t5_flags& f = inv.t5;
  const auto given = [](bool flag, const char* name) {
    return flag ? std::string("flag ") + name : std::string("default");
  };
  config_echo e;
  e.set_uint("num_buckets", c.num_buckets, given(f.num_buckets.has_value(), "--num-buckets"));
  e.set_uint("max_distance", c.max_distance,
             given(inv.analysis.max_distance.has_value(), "--max-distance"));
  e.set_text("direction", std::string(t5_direction_name(c.direction)),
             !f.direction                           ? "default"
             : *f.direction == t5_direction::causal ? "flag --causal"
                                                    : "flag --bidirectional");
  e.set_text("log", std::string(t5_log_kind_name(c.log)), given(f.log.has_value(), "--log"));
  if (f.weights) e.set_uint("heads", c.heads, "weights " + printable(*f.weights) + " shape[1]");
  return e;
}

void write_header_json(std::ostream& out, const t5_config& c, const config_echo& echo) {
  out << "{\"config\": " << echo_json(echo) << ",\n\"num_buckets\": " << c.num_buckets
      << ", \"max_distance\": " << c.max_distance << ", \"direction\": \""
      << t5_direction_name(c.direction) << "\", \"log\": \"" << t5_log_kind_name(c.log)
      << "\", \"max_exact\": " << t5_max_exact(c);
}

}  // namespace

t5_relative_range parse_t5_relative_range(std::string_view text) {
  const std::string what =
      "posenc: --relative-positions needs A:B with integers -4294967296 <= A < B <= 4294967297 "
      "(relative positions A to B-1, key - query), at most " +
      std::to_string(max_t5_relative_positions);
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) usage_error(what);
  const auto a = parse_int(text.substr(0, colon), t5_relative_limit);
  const auto b = parse_int(text.substr(colon + 1), t5_relative_limit + 1);
  if (!a || !b || *a >= *b || static_cast<std::uint64_t>(*b - *a) > max_t5_relative_positions)
    usage_error(what);
  return {*a, *b};
}

int run_t5_bias(const invocation& inv, std::ostream& out) {
  t5_config c = config_of(inv);
  const t5_flags& f = inv.t5;
  std::vector<float> w;
  if (f.weights) w = load_weights(inv, c);
  const config_echo echo = t5_echo(inv, c);
  out << echo_prefix(echo, inv.format);
  const std::size_t heads = w.empty() ? 0 : c.heads;
  // Head h's bias at bucket b (HF: values = relative_attention_bias(buckets), [.., heads]).
  const auto bias = [&](std::uint32_t b, std::size_t h) {
    return format_float(w[std::size_t{b} * heads + h]);
  };
  const auto too_many = [&](std::uint64_t entries) {
    if (heads != 0 && entries * heads > max_t5_bias_values)
      invalid("posenc: t5-bias: " + std::to_string(entries) + " entries x " +
              std::to_string(heads) + " heads is more than " + std::to_string(max_t5_bias_values) +
              " bias values per call");
  };
  std::string s;
  if (f.query_length) {
    // HF T5Attention.compute_bias: relative_position = memory_position - context_position.
    const std::uint64_t q = *f.query_length, k = *f.key_length;
    if (q * k > max_t5_matrix_entries)
      invalid("posenc: t5-bias --query-length " + std::to_string(q) + " --key-length " +
              std::to_string(k) + " is " + std::to_string(q * k) + " entries; at most " +
              std::to_string(max_t5_matrix_entries) + " per call");
    too_many(q * k);
    const auto bucket = [&](std::uint64_t i, std::uint64_t j) {
      return t5_bucket(c, static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i));
    };
    switch (inv.format) {
      case output_format::json:
        write_header_json(out, c, echo);
        out << ", \"query_length\": " << q << ", \"key_length\": " << k << ", \"bucket\": [";
        for (std::uint64_t i = 0; i < q; ++i) {
          s += i > 0 ? ", [" : "[";
          for (std::uint64_t j = 0; j < k; ++j) {
            if (j > 0) s += ", ";
            s += std::to_string(bucket(i, j));
          }
          s += ']';
          out << s;
          s.clear();
        }
        out << ']';
        if (heads != 0) {
          out << ", \"heads\": " << heads << ", \"bias\": [";
          for (std::size_t h = 0; h < heads; ++h) {
            s += h > 0 ? ", [" : "[";
            for (std::uint64_t i = 0; i < q; ++i) {
              s += i > 0 ? ", [" : "[";
              for (std::uint64_t j = 0; j < k; ++j) {
                if (j > 0) s += ", ";
                s += bias(bucket(i, j), h);
              }
              s += ']';
              out << s;
              s.clear();
            }
            s += ']';
          }
          out << s << ']';
          s.clear();
        }
        out << "}\n";
        break;
      case output_format::csv:
        out << "query,key,relative_position,bucket\n";
        for (std::uint64_t i = 0; i < q; ++i) {
          for (std::uint64_t j = 0; j < k; ++j)
            s += std::to_string(i) + ',' + std::to_string(j) + ',' +
                 std::to_string(static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i)) + ',' +
                 std::to_string(bucket(i, j)) + '\n';
          out << s;
          s.clear();
        }
        break;
      case output_format::text:
        out << "T5 buckets, " << c.num_buckets << " buckets, max_distance " << c.max_distance
            << ", " << t5_direction_name(c.direction) << ", log " << t5_log_kind_name(c.log)
            << "; row: query i, column: key j (relative position j - i)\n";
        for (std::uint64_t i = 0; i < q; ++i) {
          for (std::uint64_t j = 0; j < k; ++j) {
            if (j > 0) s += ' ';
            s += pad_left(std::to_string(bucket(i, j)), 5);
          }
          out << s << '\n';
          s.clear();
        }
        for (std::size_t h = 0; h < heads; ++h) {
          out << "bias of head " << h << ":\n";
          for (std::uint64_t i = 0; i < q; ++i) {
            for (std::uint64_t j = 0; j < k; ++j) {
              if (j > 0) s += ' ';
              s += pad_left(bias(bucket(i, j), h), 16);
            }
            out << s << '\n';
            s.clear();
          }
        }
        break;
    }
    return exit_ok;
  }
  const auto md = static_cast<std::int64_t>(c.max_distance);
  const t5_relative_range r = f.relative.value_or(t5_relative_range{-md, md + 1});
  too_many(static_cast<std::uint64_t>(r.last - r.first));
  switch (inv.format) {
    case output_format::json:
      write_header_json(out, c, echo);
      out << ", \"relative_position\": [";
      for (std::int64_t p = r.first; p < r.last; ++p) {
        if (p > r.first) s += ", ";
        s += std::to_string(p);
      }
      out << s << "], \"bucket\": [";
      s.clear();
      for (std::int64_t p = r.first; p < r.last; ++p) {
        if (p > r.first) s += ", ";
        s += std::to_string(t5_bucket(c, p));
      }
      out << s << ']';
      s.clear();
      if (heads != 0) {
        out << ", \"heads\": " << heads << ", \"bias\": [";
        for (std::size_t h = 0; h < heads; ++h) {
          s += h > 0 ? ", [" : "[";
          for (std::int64_t p = r.first; p < r.last; ++p) {
            if (p > r.first) s += ", ";
            s += bias(t5_bucket(c, p), h);
          }
          s += ']';
        }
        out << s << ']';
      }
      out << "}\n";
      break;
    case output_format::csv:
      out << "relative_position,bucket";
      for (std::size_t h = 0; h < heads; ++h) out << ",bias_" << h;
      out << '\n';
      for (std::int64_t p = r.first; p < r.last; ++p) {
        s += std::to_string(p) + ',' + std::to_string(t5_bucket(c, p));
        for (std::size_t h = 0; h < heads; ++h) s += ',' + bias(t5_bucket(c, p), h);
        s += '\n';
      }
      out << s;
      break;
    case output_format::text:
      out << "T5 buckets, " << c.num_buckets << " buckets, max_distance " << c.max_distance << ", "
          << t5_direction_name(c.direction) << ", log " << t5_log_kind_name(c.log)
          << " (exact below " << t5_max_exact(c) << ")\n";
      out << pad_left("relative", 12) << pad_left("bucket", 8) << '\n';
      for (std::int64_t p = r.first; p < r.last; ++p)
        s += pad_left(std::to_string(p), 12) + pad_left(std::to_string(t5_bucket(c, p)), 8) + '\n';
      out << s;
      break;
  }
  return exit_ok;
}

}  // namespace posenc::cli
