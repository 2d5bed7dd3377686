#include "cli/additive.hpp"

#include <posenc/kernels/alibi.hpp>
#include <posenc/tables/alibi.hpp>
#include <posenc/tables/sinusoidal.hpp>

#include <algorithm>
#include <string>

#include "cli/error.hpp"
#include "cli/output.hpp"

namespace posenc::cli {

alibi_result compute_alibi(const invocation& inv) {
  const additive_flags& e = inv.additive;
  alibi_result r;
  r.config = {e.heads.value_or(0), e.variant.value_or(alibi_variant::causal),
              e.bloom ? alibi_slope_kind::bloom : alibi_slope_kind::reference};
  require_ok(validate(r.config));
  r.length = e.length.value_or(0);
  const std::uint64_t entries = std::uint64_t{r.config.heads} * r.length * r.length;
  if (r.length > 0 && (r.length > max_additive_entries || entries > max_additive_entries))
    over_limit("the bias", entries, "values (heads x length^2)", max_additive_entries);
  r.slopes.resize(r.config.heads);
  static_cast<void>(build_alibi_slopes<float>(r.config, r.slopes.data()));
  if (r.length > 0) {
    const auto L = static_cast<std::size_t>(r.length);
    r.bias.assign(static_cast<std::size_t>(entries), 0.0f);
    require_ok(kernels::add_alibi_bias<float>(
        r.slopes, kernels::dense_scores(r.bias.data(), r.config.heads, L, L), r.config.variant));
  }
  return r;
}

namespace {
// Hands `s` to `out` once it holds 64 KiB: a failed write stops the command after one piece
// (run() makes `out` throw), and memory does not grow with the length.
void flush_piece(std::ostream& out, std::string& s) {
  if (s.size() < (std::size_t{1} << 16)) return;
  out << s;
  s.clear();
}
}  // namespace

config_echo alibi_echo(const invocation& inv, const alibi_result& r) {
  const additive_flags& e = inv.additive;
  config_echo echo;
  echo.set_uint("heads", r.config.heads, "flag --heads");
  echo.set_uint("length", r.length, e.length ? "flag --positions" : "default");
  echo.set_text("variant", std::string(alibi_variant_names(r.config.variant)),
                e.variant ? "flag --variant" : "default");
  echo.set_text("slopes_kind", std::string(alibi_slope_names(r.config.slopes)),
                e.bloom ? "flag --bloom" : "default");
  return echo;
}

void write_alibi(std::ostream& out, const alibi_result& r, output_format f,
                 const config_echo& echo) {
  std::string s = echo_prefix(echo, f);
  const std::size_t H = r.config.heads;
  const auto L = static_cast<std::size_t>(r.length);
  switch (f) {
    case output_format::json:
      s += "{\"config\": " + echo_json(echo) + ",\n\"heads\": " + std::to_string(H) +
           ", \"variant\": \"" + std::string(alibi_variant_names(r.config.variant)) +
           "\", \"slopes_kind\": \"" + std::string(alibi_slope_names(r.config.slopes)) +
           "\",\n\"slopes\": [";
      for (std::size_t h = 0; h < H; ++h) s += (h ? ", " : "") + format_float(r.slopes[h]);
      s += "]";
      if (L > 0) {
        s += ",\n\"length\": " + std::to_string(L) + ",\n\"bias\": [";
        for (std::size_t h = 0; h < H; ++h) {
          s += h ? ",\n  [" : "\n  [";
          for (std::size_t k = 0; k < L * L; ++k) {
            s += (k ? ", " : "") + format_float(r.bias[h * L * L + k]);
            flush_piece(out, s);
          }
          s += "]";
          out << s;
          s.clear();
        }
        s += "\n]";
      }
      s += "}\n";
      break;
    case output_format::csv:
      if (L == 0) {
        s += "head,slope\n";
        for (std::size_t h = 0; h < H; ++h)
          s += std::to_string(h) + "," + format_float(r.slopes[h]) + "\n";
        break;
      }
      s += "head,slope,query,key,bias\n";
      for (std::size_t h = 0; h < H; ++h) {
        const std::string prefix = std::to_string(h) + "," + format_float(r.slopes[h]) + ",";
        for (std::size_t i = 0; i < L; ++i) {
          for (std::size_t j = 0; j < L; ++j)
            s += prefix + std::to_string(i) + "," + std::to_string(j) + "," +
                 format_float(r.bias[h * L * L + i * L + j]) + "\n";
          flush_piece(out, s);
        }
        out << s;
        s.clear();
      }
      break;
    case output_format::text:
      s += std::string("heads    ") + std::to_string(H) + "\nvariant  " +
           std::string(alibi_variant_names(r.config.variant)) + "\nslopes   " +
           std::string(alibi_slope_names(r.config.slopes)) + "\n\n";
      s += pad_left("head", 6) + "  " + pad_left("slope", 16) + "\n";
      for (std::size_t h = 0; h < H; ++h)
        s += pad_left(std::to_string(h), 6) + "  " + pad_left(format_float(r.slopes[h]), 16) + "\n";
      for (std::size_t h = 0; h < H && L > 0; ++h) {
        s += "\nbias of head " + std::to_string(h) + " (rows: queries, columns: keys)\n";
        for (std::size_t i = 0; i < L; ++i) {
          for (std::size_t j = 0; j < L; ++j) {
            // Not `(j ? " " : "") + pad_left(...)`: GCC 12 -O3 -Wrestrict false positive
            // (GCC PR 105329).
            if (j != 0) s += ' ';
            s += pad_left(format_float(r.bias[h * L * L + i * L + j]), 15);
          }
          s += "\n";
          flush_piece(out, s);
        }
        out << s;
        s.clear();
      }
      break;
  }
  out << s;
}

sinusoidal_result compute_sinusoidal(const invocation& inv) {
  const additive_flags& e = inv.additive;
  sinusoidal_result r;
  r.config.dim = e.dim.value_or(0);
  r.config.layout = e.layout.value_or(sinusoidal_layout::paper);
  r.config.base = inv.flags.base.value_or(10000.0);
  r.config.padding_idx = e.padding_idx ? static_cast<std::int64_t>(*e.padding_idx) : -1;
  require_ok(validate(r.config));
  r.positions = e.rows.value_or(0);
  const std::uint64_t entries = r.positions * r.config.dim;
  if (entries > max_additive_entries)
    over_limit("the table", entries, "entries (positions x dim)", max_additive_entries);
  r.table.resize(static_cast<std::size_t>(entries));
  require_ok(build_sinusoidal_table<float>(r.config, static_cast<std::size_t>(r.positions),
                                           r.table.data()));
  return r;
}

config_echo sinusoidal_echo(const invocation& inv, const sinusoidal_result& r) {
  const additive_flags& e = inv.additive;
  config_echo echo;
  echo.set_uint("dim", r.config.dim, "flag --head-dim");
  echo.set_uint("positions", r.positions, "flag --positions");
  echo.set_text("layout", std::string(sinusoidal_layout_names(r.config.layout)),
                e.layout ? "flag --layout" : "default");
  echo.set_number("base", r.config.base,
                  inv.flags.base ? inv.flag_sources.base : std::string("default"));
  if (r.config.padding_idx >= 0)
    echo.set_uint("padding_idx", static_cast<std::uint64_t>(r.config.padding_idx),
                  "flag --padding-idx");
  else
    echo.set({"padding_idx", "null", "none", "default"});
  return echo;
}

void write_sinusoidal(std::ostream& out, const sinusoidal_result& r, output_format f,
                      const config_echo& echo) {
  std::string s = echo_prefix(echo, f);
  const std::size_t D = r.config.dim;
  const auto P = static_cast<std::size_t>(r.positions);
  switch (f) {
    case output_format::json:
      s += "{\"config\": " + echo_json(echo) + ",\n\"dim\": " + std::to_string(D) +
           ", \"layout\": \"" + std::string(sinusoidal_layout_names(r.config.layout)) +
           "\", \"padding_idx\": " +
           (r.config.padding_idx >= 0 ? std::to_string(r.config.padding_idx) : "null") +
           ",\n\"table\": [";
      for (std::size_t p = 0; p < P; ++p) {
        s += p ? ",\n  [" : "\n  [";
        for (std::size_t c = 0; c < D; ++c) s += (c ? ", " : "") + format_float(r.table[p * D + c]);
        s += "]";
        if (s.size() > (1u << 16)) {
          out << s;
          s.clear();
        }
      }
      s += "\n]}\n";
      break;
    case output_format::csv:
      s += "position,column,value\n";
      for (std::size_t p = 0; p < P; ++p) {
        for (std::size_t c = 0; c < D; ++c)
          s += std::to_string(p) + "," + std::to_string(c) + "," +
               format_float(r.table[p * D + c]) + "\n";
        out << s;
        s.clear();
      }
      break;
    case output_format::text: {
      const std::size_t wp = std::max<std::size_t>(8, std::to_string(P ? P - 1 : 0).size());
      s += pad_left("position", wp) + "  " + pad_left("column", 6) + "  " + pad_left("value", 16) +
           "\n";
      for (std::size_t p = 0; p < P; ++p) {
        for (std::size_t c = 0; c < D; ++c)
          s += pad_left(std::to_string(p), wp) + "  " + pad_left(std::to_string(c), 6) + "  " +
               pad_left(format_float(r.table[p * D + c]), 16) + "\n";
        out << s;
        s.clear();
      }
      break;
    }
  }
  out << s;
}

int run_alibi(const invocation& inv, std::ostream& out) {
  const alibi_result r = compute_alibi(inv);
  write_alibi(out, r, inv.format, alibi_echo(inv, r));
  return exit_ok;
}

int run_sinusoidal(const invocation& inv, std::ostream& out) {
  const sinusoidal_result r = compute_sinusoidal(inv);
  write_sinusoidal(out, r, inv.format, sinusoidal_echo(inv, r));
  return exit_ok;
}

}  // namespace posenc::cli
