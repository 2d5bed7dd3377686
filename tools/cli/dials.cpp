#include "cli/analysis.hpp"

#include <algorithm>
#include <string>

#include <posenc/analysis/dials.hpp>
#include <posenc/math.hpp>

#include "cli/error.hpp"
#include "cli/output.hpp"
#include "cli/run.hpp"

namespace posenc::cli {

dials_result compute_dials(const rope_config& c, std::uint64_t context, std::uint64_t seq_len) {
  dials_result r;
  r.context = context;
  r.rotary_dim = c.rotary_dim;
  r.base = c.base;
  r.scaling = c.scaling.type;
  const auto row = [](const analysis::dial& d) {
    return dial_row{math::to_double(d.inv_freq), math::to_double(d.wavelength),
                    math::to_double(d.turns), d.never_turns};
  };
  for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i) {
    const analysis::dial_pair d = analysis::dial_pair_of(c, i, context, seq_len);
    r.scaled.push_back(row(d.scaled));
    r.unscaled.push_back(row(d.unscaled));
    r.never_turning += d.scaled.never_turns ? 1 : 0;
    r.default_never_turning += d.unscaled.never_turns ? 1 : 0;
  }
  r.slowest_wavelength = math::to_double(analysis::slowest_wavelength(c, seq_len));
  r.default_slowest_wavelength =
      math::to_double(analysis::slowest_wavelength(analysis::unscaled(c)));
  return r;
}

void write_dials(std::ostream& out, const dials_result& r, output_format f,
                 const config_echo& echo) {
  out << echo_prefix(echo, f);
  const std::size_t n = r.scaled.size();
  if (f == output_format::csv) {
    out << "pair,inv_freq,wavelength,turns,never_turns,default_inv_freq,default_wavelength,"
           "default_turns,default_never_turns\n";
    for (std::size_t i = 0; i < n; ++i) {
      const dial_row& a = r.scaled[i];
      const dial_row& b = r.unscaled[i];
      out << i << ',' << format_double(a.inv_freq) << ',' << format_double(a.wavelength) << ','
          << format_double(a.turns) << ',' << (a.never_turns ? 1 : 0) << ','
          << format_double(b.inv_freq) << ',' << format_double(b.wavelength) << ','
          << format_double(b.turns) << ',' << (b.never_turns ? 1 : 0) << '\n';
    }
    return;
  }
  if (f == output_format::json) {
    out << "{\"config\": " << echo_json(echo) << ",\n\"context\": " << r.context
        << ", \"rotary_dim\": " << r.rotary_dim << ", \"base\": " << format_double(r.base)
        << ", \"scaling\": \"" << scaling_name(r.scaling)
        << "\", \"slowest_wavelength\": " << format_double(r.slowest_wavelength)
        << ", \"default_slowest_wavelength\": " << format_double(r.default_slowest_wavelength)
        << ", \"pairs_never_turning\": " << r.never_turning
        << ", \"default_pairs_never_turning\": " << r.default_never_turning << ", \"pairs\": [";
    for (std::size_t i = 0; i < n; ++i) {
      const dial_row& a = r.scaled[i];
      const dial_row& b = r.unscaled[i];
      out << (i ? ", " : "") << "{\"pair\": " << i
          << ", \"inv_freq\": " << format_double(a.inv_freq)
          << ", \"wavelength\": " << format_double(a.wavelength)
          << ", \"turns\": " << format_double(a.turns)
          << ", \"never_turns\": " << json_bool(a.never_turns)
          << ", \"default_inv_freq\": " << format_double(b.inv_freq)
          << ", \"default_wavelength\": " << format_double(b.wavelength)
          << ", \"default_turns\": " << format_double(b.turns)
          << ", \"default_never_turns\": " << json_bool(b.never_turns) << '}';
    }
    out << "]}\n";
    return;
  }
  out << "context " << r.context << " tokens, rotary_dim " << r.rotary_dim << ", base "
      << short_double(r.base) << ", scaling " << scaling_name(r.scaling) << '\n';
  out << "slowest wavelength " << short_double(r.slowest_wavelength) << " tokens (default "
      << short_double(r.default_slowest_wavelength)
      << "); pairs never completing a turn: " << r.never_turning << " (default "
      << r.default_never_turning << ")\n";
  const std::size_t w = 16;
  out << pad_left("pair", 5) << pad_left("inv_freq", w) << pad_left("wavelength", w)
      << pad_left("turns", w) << "  never" << pad_left("default_wavelen", w)
      << pad_left("default_turns", w) << '\n';
  for (std::size_t i = 0; i < n; ++i) {
    const dial_row& a = r.scaled[i];
    const dial_row& b = r.unscaled[i];
    out << pad_left(std::to_string(i), 5) << pad_left(short_double(a.inv_freq), w)
        << pad_left(short_double(a.wavelength), w) << pad_left(short_double(a.turns), w)
        << pad_left(a.never_turns ? "yes" : "no", 7) << pad_left(short_double(b.wavelength), w)
        << pad_left(short_double(b.turns), w) << '\n';
  }
}

svg::plot dials_plot(const dials_result& r) {
  svg::plot p;
  p.title = "Wavelength per rotary pair (context " + std::to_string(r.context) + ")";
  p.x.title = "pair i";
  p.x.min = 0.0;
  p.x.max = std::max(static_cast<double>(r.scaled.size()) - 1.0, 1.0);
  p.y.title = "wavelength 2 pi / theta_i (tokens)";
  p.y.log = true;
  const bool scaled = r.scaling != scaling_type::none;
  svg::series s{scaled ? std::string("scaled (") + std::string(scaling_name(r.scaling)) + ")"
                       : std::string("wavelength"),
                {},
                {},
                true,
                true,
                false,
                ""};
  svg::series d{"default (unscaled)", {}, {}, true, false, true, ""};
  for (std::size_t i = 0; i < r.scaled.size(); ++i) {
    s.x.push_back(static_cast<double>(i));
    s.y.push_back(r.scaled[i].wavelength);
    d.x.push_back(static_cast<double>(i));
    d.y.push_back(r.unscaled[i].wavelength);
  }
  const double last = r.scaled.empty() ? 1.0 : static_cast<double>(r.scaled.size() - 1);
  svg::series ctx{
      "context", {0.0, last}, {static_cast<double>(r.context), static_cast<double>(r.context)},
      true,      false,       true,
      "#444444"};
  p.lines.push_back(std::move(s));
  if (scaled) p.lines.push_back(std::move(d));
  p.lines.push_back(std::move(ctx));
  return p;
}

int run_dials(const invocation& inv, std::ostream& out) {
  const resolved_config rc = configure(inv);
  const rope_config c = rc.config();
  const dials_result r = compute_dials(c, *inv.analysis.context, inv.seq_len);
  svg::plot p = dials_plot(r);
  p.title += ", " + config_title(c);
  if (inv.svg) svg::write_file(*inv.svg, p);
  write_dials(out, r, inv.format, rc.echo);
  return exit_ok;
}

}  // namespace posenc::cli
