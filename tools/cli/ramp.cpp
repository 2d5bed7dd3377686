#include "cli/analysis.hpp"

#include <algorithm>
#include <string>

#include <posenc/analysis/dials.hpp>
#include <posenc/analysis/ramp.hpp>
#include <posenc/frequencies/rope.hpp>
#include <posenc/math.hpp>

#include "cli/error.hpp"
#include "cli/output.hpp"
#include "cli/run.hpp"

namespace posenc::cli {

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

void write_ramp(std::ostream& out, const ramp_result& r, output_format f, const config_echo& echo) {
  out << echo_prefix(echo, f);
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
    out << "{\"config\": " << echo_json(echo) << ",\n\"scaling\": \"" << scaling_name(r.scaling)
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

int run_ramp(const invocation& inv, std::ostream& out) {
  const resolved_config rc = configure(inv);
  const ramp_result r = compute_ramp(rc.config());
  svg::plot p = ramp_plot(r);
  p.title += ", " + config_title(rc.config());
  if (inv.svg) svg::write_file(*inv.svg, p);
  write_ramp(out, r, inv.format, rc.echo);
  return exit_ok;
}

}  // namespace posenc::cli
