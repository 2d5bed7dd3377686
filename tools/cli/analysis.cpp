#include "cli/analysis.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstddef>
#include <string>
#include <string_view>

#include <posenc/analysis/decay.hpp>
#include <posenc/analysis/dials.hpp>
#include <posenc/analysis/ramp.hpp>
#include <posenc/frequencies/rope.hpp>
#include <posenc/math.hpp>

#include "cli/error.hpp"
#include "cli/output.hpp"
#include "cli/run.hpp"

namespace posenc::cli {

namespace {

std::string pad_left(std::string s, std::size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}
std::string pad_right(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// A short form for text output (9 significant digits).
std::string short_double(double x) {
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::general, 9);
  return std::string(buf, r.ptr);
}

const char* json_bool(bool b) {
  return b ? "true" : "false";
}

void write_svg_if_asked(const invocation& inv, const svg::plot& p) {
  if (inv.accuracy.svg) svg::write_file(*inv.accuracy.svg, p);
}

std::string config_title(const rope_config& c) {
  std::string t = "R = " + std::to_string(c.rotary_dim) + ", base " + short_double(c.base);
  if (c.scaling.type != scaling_type::none)
    t += ", " + std::string(scaling_name(c.scaling.type)) + " x" + short_double(c.scaling.factor);
  return t;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// decay

decay_result compute_decay(const rope_config& c, std::uint64_t max_distance,
                           std::uint64_t seq_len) {
  const analysis::rope_thetas thetas{c, seq_len};
  decay_result r;
  r.pairs = c.rotary_dim / 2;
  r.max_distance = max_distance;
  // Windows k = 0..K with 2^K <= N; f is evaluated through the end of window K.
  const unsigned K = static_cast<unsigned>(std::bit_width(max_distance)) - 1;
  const std::uint64_t r_end = std::uint64_t{2} << K;  // exclusive
  if (static_cast<std::uint64_t>(r.pairs) * r_end > max_decay_work)
    invalid("posenc: decay over " + std::to_string(r_end) + " distances with " +
            std::to_string(r.pairs) + " pairs is beyond the limit of " +
            std::to_string(max_decay_work) + " steps; lower --max-distance");
  r.bound.reserve(max_distance + 1);
  r.dyadic_means.assign(K + 1, 0.0);
  math::dd sum{0.0, 0.0};
  unsigned k = 0;
  analysis::for_each_decay_bound(thetas, 0, r_end, [&](std::uint64_t d, double f) {
    if (d <= max_distance) r.bound.push_back(f);
    if (d == 0) return;
    sum = sum + f;
    if (d + 1 == (std::uint64_t{2} << k)) {  // the last distance of window k
      r.dyadic_means[k] = math::to_double(sum / static_cast<double>(std::uint64_t{1} << k));
      sum = {0.0, 0.0};
      ++k;
    }
  });
  r.window_mean.resize(max_distance + 1);
  r.window_mean[0] = r.bound[0];
  for (std::uint64_t d = 1; d <= max_distance; ++d)
    r.window_mean[d] = r.dyadic_means[static_cast<std::size_t>(std::bit_width(d)) - 1];
  r.error_bound = analysis::decay_error(r.pairs);
  return r;
}

void write_decay(std::ostream& out, const decay_result& r, output_format f, bool text) {
  std::string s;
  if (!text && f == output_format::csv) {
    s = "distance,bound,window_mean\n";
    for (std::uint64_t d = 0; d <= r.max_distance; ++d) {
      s += std::to_string(d);
      s += ',';
      s += format_double(r.bound[d]);
      s += ',';
      s += format_double(r.window_mean[d]);
      s += '\n';
      if (s.size() > (1u << 16)) {
        out << s;
        s.clear();
      }
    }
    out << s;
    return;
  }
  if (!text && f == output_format::json) {
    out << "{\"pairs\": " << r.pairs << ", \"max_distance\": " << r.max_distance
        << ", \"error_bound\": " << format_double(r.error_bound) << ", \"dyadic_means\": [";
    for (std::size_t k = 0; k < r.dyadic_means.size(); ++k)
      out << (k ? ", " : "") << "{\"k\": " << k << ", \"first\": " << (std::uint64_t{1} << k)
          << ", \"last\": " << ((std::uint64_t{2} << k) - 1)
          << ", \"mean\": " << format_double(r.dyadic_means[k]) << '}';
    out << "], \"bound\": [";
    for (std::uint64_t d = 0; d <= r.max_distance; ++d) {
      s += d ? ", " : "";
      s += format_double(r.bound[d]);
      if (s.size() > (1u << 16)) {
        out << s;
        s.clear();
      }
    }
    out << s << "], \"window_mean\": [";
    s.clear();
    for (std::uint64_t d = 0; d <= r.max_distance; ++d) {
      s += d ? ", " : "";
      s += format_double(r.window_mean[d]);
      if (s.size() > (1u << 16)) {
        out << s;
        s.clear();
      }
    }
    out << s << "]}\n";
    return;
  }
  // Text summary.
  std::uint64_t decreasing_to = 0;  // f strictly decreasing on [0, decreasing_to]
  while (decreasing_to < r.max_distance && r.bound[decreasing_to + 1] < r.bound[decreasing_to])
    ++decreasing_to;
  std::uint64_t r_min = 0;
  std::uint64_t r_max = r.max_distance >= 1 ? 1 : 0;
  for (std::uint64_t d = 1; d <= r.max_distance; ++d) {
    if (r.bound[d] < r.bound[r_min]) r_min = d;
    if (r.bound[d] > r.bound[r_max]) r_max = d;
  }
  std::size_t means_decrease = 0;  // M_0 > ... > M_k for k <= means_decrease
  while (means_decrease + 1 < r.dyadic_means.size() &&
         r.dyadic_means[means_decrease + 1] < r.dyadic_means[means_decrease])
    ++means_decrease;
  out << "RoFormer decay bound f(r) = (1/n) sum_j |S_j|, n = " << r.pairs << " pairs, r = 0.."
      << r.max_distance << " (each value within " << short_double(r.error_bound) << ")\n";
  out << "  f(0) = " << format_double(r.bound[0]) << " = (n + 1)/2\n";
  if (r.max_distance >= 1)
    out << "  f(1) = " << format_double(r.bound[1]) << "; largest for r >= 1: f(" << r_max
        << ") = " << format_double(r.bound[r_max]) << '\n';
  out << "  smallest: f(" << r_min << ") = " << format_double(r.bound[r_min]) << '\n';
  out << "  strictly decreasing on [0, " << decreasing_to << "]"
      << (decreasing_to < r.max_distance ? " (f is not monotone)" : "") << '\n';
  out << "  dyadic-window means M_k over [2^k, 2^(k+1)):\n";
  for (std::size_t k = 0; k < r.dyadic_means.size(); ++k)
    out << "    k = " << pad_left(std::to_string(k), 2) << "  ["
        << pad_left(std::to_string(std::uint64_t{1} << k), 8) << ", "
        << pad_left(std::to_string((std::uint64_t{2} << k) - 1), 8) << "]  "
        << format_double(r.dyadic_means[k]) << '\n';
  out << "  the means strictly decrease for k = 0.." << means_decrease << " (r < "
      << (std::uint64_t{2} << means_decrease) << ")\n";
}

svg::plot decay_plot(const decay_result& r) {
  svg::plot p;
  p.title = "RoFormer decay bound, " + std::to_string(r.pairs) + " pairs";
  p.x.title = "relative distance r (tokens)";
  p.x.log = true;
  p.y.title = "f(r) = (1/n) sum_j |S_j|";
  p.y.min = 0.0;
  svg::series f{"f(r)", {}, {}, true, false, false, ""};
  svg::series m{"dyadic-window mean", {}, {}, true, false, true, ""};
  f.x.reserve(r.max_distance);
  f.y.reserve(r.max_distance);
  for (std::uint64_t d = 1; d <= r.max_distance; ++d) {
    f.x.push_back(static_cast<double>(d));
    f.y.push_back(r.bound[d]);
    m.x.push_back(static_cast<double>(d));
    m.y.push_back(r.window_mean[d]);
  }
  p.lines = {std::move(f), std::move(m)};
  return p;
}

void run_decay(const invocation& inv, std::ostream& out) {
  const resolved_config rc = configure(inv);
  const decay_result r = compute_decay(rc.config(), *inv.analysis.max_distance, inv.seq_len);
  const svg::plot p = decay_plot(r);  // before any output: an error leaves nothing written
  write_svg_if_asked(inv, p);
  write_decay(out, r, inv.format, !inv.analysis.format_given);
}

// ---------------------------------------------------------------------------------------------
// dials

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

void write_dials(std::ostream& out, const dials_result& r, output_format f) {
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
    out << "{\"context\": " << r.context << ", \"rotary_dim\": " << r.rotary_dim
        << ", \"base\": " << format_double(r.base) << ", \"scaling\": \"" << scaling_name(r.scaling)
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

void run_dials(const invocation& inv, std::ostream& out) {
  const resolved_config rc = configure(inv);
  const rope_config c = rc.config();
  const dials_result r = compute_dials(c, *inv.analysis.context, inv.seq_len);
  svg::plot p = dials_plot(r);
  p.title += ", " + config_title(c);
  write_svg_if_asked(inv, p);
  write_dials(out, r, inv.format);
}

// ---------------------------------------------------------------------------------------------
// ramp

ramp_result compute_ramp(const rope_config& c) {
  if (!analysis::has_ramp(c))
    invalid("posenc: ramp needs a yarn or llama3 configuration (this one has scaling " +
            std::string(scaling_name(c.scaling.type)) + ")");
  ramp_result r;
  r.scaling = c.scaling.type;
  r.factor = c.scaling.factor;
  if (r.scaling == scaling_type::yarn) {
    const auto range = analysis::yarn_ramp_range(c);
    r.low = math::to_double(range.low);
    r.high = math::to_double(range.high);
  } else {
    const double L = static_cast<double>(c.scaling.original_max_position_embeddings);
    r.low = math::to_double(math::dd{L, 0.0} / c.scaling.high_freq_factor);
    r.high = math::to_double(math::dd{L, 0.0} / c.scaling.low_freq_factor);
  }
  const rope_config d = analysis::unscaled(c);
  for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i) {
    r.weight.push_back(math::to_double(analysis::interpolation_weight(c, i)));
    r.source.push_back(math::to_double(r.scaling == scaling_type::yarn
                                           ? analysis::yarn_ramp_factor(c, i)
                                           : analysis::llama3_smooth_factor(c, i)));
    r.inv_freq.push_back(inv_freq<double>(c, i));
    r.default_inv_freq.push_back(inv_freq<double>(d, i));
  }
  return r;
}

void write_ramp(std::ostream& out, const ramp_result& r, output_format f) {
  const bool yarn = r.scaling == scaling_type::yarn;
  const char* source = yarn ? "ramp_factor" : "smooth_factor";
  const std::size_t n = r.weight.size();
  if (f == output_format::csv) {
    out << "pair,interpolation_weight," << source << ",inv_freq,default_inv_freq\n";
    for (std::size_t i = 0; i < n; ++i)
      out << i << ',' << format_double(r.weight[i]) << ',' << format_double(r.source[i]) << ','
          << format_double(r.inv_freq[i]) << ',' << format_double(r.default_inv_freq[i]) << '\n';
    return;
  }
  if (f == output_format::json) {
    out << "{\"scaling\": \"" << scaling_name(r.scaling)
        << "\", \"factor\": " << format_double(r.factor) << ", "
        << (yarn ? "\"correction_range\": [" : "\"wavelength_band\": [") << format_double(r.low)
        << ", " << format_double(r.high) << "], \"pairs\": [";
    for (std::size_t i = 0; i < n; ++i)
      out << (i ? ", " : "") << "{\"pair\": " << i
          << ", \"interpolation_weight\": " << format_double(r.weight[i]) << ", \"" << source
          << "\": " << format_double(r.source[i])
          << ", \"inv_freq\": " << format_double(r.inv_freq[i])
          << ", \"default_inv_freq\": " << format_double(r.default_inv_freq[i]) << '}';
    out << "]}\n";
    return;
  }
  out << scaling_name(r.scaling) << " x" << short_double(r.factor) << ": ";
  if (yarn) {
    out << "correction range [" << short_double(r.low) << ", " << short_double(r.high)
        << "] (pairs at or below low keep theta, pairs at or above high use theta/factor)\n";
  } else {
    out << "wavelength band [" << short_double(r.low) << ", " << short_double(r.high)
        << "] tokens (shorter: theta kept; longer: theta/factor)\n";
  }
  out << "interpolation_weight: 0 = theta unchanged, 1 = theta/factor; " << source
      << (yarn ? " (HF linear_ramp_factor) equals it\n" : " (HF) is 1 - interpolation_weight\n");
  const std::size_t w = 16;
  out << pad_left("pair", 5) << pad_left("weight", w) << pad_left(source, w)
      << pad_left("inv_freq", w) << pad_left("default_inv_freq", w + 2) << '\n';
  for (std::size_t i = 0; i < n; ++i)
    out << pad_left(std::to_string(i), 5) << pad_left(short_double(r.weight[i]), w)
        << pad_left(short_double(r.source[i]), w) << pad_left(short_double(r.inv_freq[i]), w)
        << pad_left(short_double(r.default_inv_freq[i]), w + 2) << '\n';
}

svg::plot ramp_plot(const ramp_result& r) {
  const bool yarn = r.scaling == scaling_type::yarn;
  svg::plot p;
  p.title = std::string(yarn ? "YaRN" : "llama3") + " interpolation weight per pair";
  p.x.title = "pair i";
  p.y.title = "weight of theta_i / factor";
  p.y.min = -0.05;  // room around 0 and 1, where most pairs sit
  p.y.max = 1.05;
  p.x.min = 0.0;
  p.x.max = std::max(static_cast<double>(r.weight.size()) - 1.0, 1.0);
  svg::series w{"interpolation weight", {}, {}, true, true, false, ""};
  svg::series s{"HF smooth_factor", {}, {}, true, false, true, ""};
  for (std::size_t i = 0; i < r.weight.size(); ++i) {
    w.x.push_back(static_cast<double>(i));
    w.y.push_back(r.weight[i]);
    s.x.push_back(static_cast<double>(i));
    s.y.push_back(r.source[i]);
  }
  p.lines.push_back(std::move(w));
  if (!yarn) p.lines.push_back(std::move(s));
  return p;
}

void run_ramp(const invocation& inv, std::ostream& out) {
  const resolved_config rc = configure(inv);
  const ramp_result r = compute_ramp(rc.config());
  svg::plot p = ramp_plot(r);
  p.title += ", " + config_title(rc.config());
  write_svg_if_asked(inv, p);
  write_ramp(out, r, inv.format);
}

// ---------------------------------------------------------------------------------------------
// check

analysis::check_options check_options_for(const rope_config& c, std::uint64_t seq_len,
                                          std::uint64_t max_distance) {
  analysis::check_options o;
  o.seq_len = seq_len;
  const std::uint64_t pairs = std::max<std::uint64_t>(c.rotary_dim / 2, 1);
  o.samples = static_cast<std::uint32_t>(std::clamp<std::uint64_t>((1u << 16) / pairs, 4, 64));
  o.decay_distance = std::clamp<std::uint64_t>((std::uint64_t{1} << 26) / pairs, 1, 65536);
  std::uint64_t reach = 0;  // the windows must end at or below this distance
  if (max_distance != 0) {
    reach = max_distance + 1;
  } else {
    // The unscaled slowest wavelength: a scaling stretches only some pairs, and the rest keep
    // the plateau where it was (YaRN's untouched fast pairs).
    const double sixteenth =
        math::to_double(analysis::slowest_wavelength(analysis::unscaled(c))) / 16.0;
    reach = static_cast<std::uint64_t>(std::min(sixteenth, 0x1p40));
    reach = std::min<std::uint64_t>(reach, (std::uint64_t{1} << 26) / pairs);
  }
  // The largest K with 2^(K+1) <= reach, at least 0.
  const auto width = static_cast<unsigned>(std::bit_width(std::max<std::uint64_t>(reach, 2)));
  o.dyadic_windows = width >= 2 ? width - 2 : 0;
  return o;
}

void write_check(std::ostream& out, const analysis::check_report& r,
                 const analysis::check_options& o, output_format f) {
  if (f == output_format::csv) {
    out << "law,worst,limit,pass,samples\n";
    for (const analysis::law_result& l : r.laws)
      out << analysis::law_name(l.which) << ',' << format_double(l.worst) << ','
          << format_double(l.limit) << ',' << (l.pass ? 1 : 0) << ',' << l.samples << '\n';
    return;
  }
  if (f == output_format::json) {
    out << "{\"all_pass\": " << json_bool(r.all_pass()) << ", \"samples\": " << o.samples
        << ", \"seed\": " << o.seed << ", \"decay_distance\": " << o.decay_distance
        << ", \"dyadic_windows\": " << o.dyadic_windows << ", \"laws\": [";
    for (std::size_t i = 0; i < r.laws.size(); ++i) {
      const analysis::law_result& l = r.laws[i];
      out << (i ? ", " : "") << "{\"law\": \"" << analysis::law_name(l.which)
          << "\", \"worst\": " << format_double(l.worst)
          << ", \"limit\": " << format_double(l.limit) << ", \"pass\": " << json_bool(l.pass)
          << ", \"samples\": " << l.samples << '}';
    }
    out << "]}\n";
    return;
  }
  out << "laws on " << o.samples << " sample positions (seed " << o.seed
      << "); decay: f(r) < f(0) for 1 <= r <= " << o.decay_distance
      << ", dyadic means decreasing for r < " << (std::uint64_t{2} << o.dyadic_windows) << '\n';
  out << pad_right("law", 28) << pad_left("worst", 24) << pad_left("limit", 24) << "  result\n";
  for (const analysis::law_result& l : r.laws) {
    const bool decay = l.which == analysis::law::decay_below_origin ||
                       l.which == analysis::law::dyadic_means_decreasing;
    out << pad_right(std::string(analysis::law_name(l.which)), 28)
        << pad_left(format_double(l.worst), 24) << pad_left(format_double(l.limit), 24)
        << (decay ? "  < " : "  <=") << (l.pass ? " pass" : " FAIL") << '\n';
  }
  out << (r.all_pass() ? "all laws hold\n" : "a law FAILS\n");
}

int run_check(const invocation& inv, std::ostream& out) {
  const resolved_config rc = configure(inv);
  const rope_config c = rc.config();
  const analysis::check_options o =
      check_options_for(c, inv.seq_len, inv.analysis.max_distance.value_or(0));
  const analysis::check_report r = analysis::check_laws(c, o);
  write_check(out, r, o, inv.analysis.format_given ? inv.format : output_format::text);
  return r.all_pass() ? exit_ok : exit_law_failed;
}

}  // namespace posenc::cli
