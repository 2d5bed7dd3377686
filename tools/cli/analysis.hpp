// The analysis commands (docs/analysis.md): the RoFormer decay bound, per-pair dials, the
// YaRN/llama3 interpolation ramp and the laws run on one configuration, computed by
// posenc/analysis in full before anything is written (decay: everything but its N + 1 values,
// which are evaluated again while written), then printed as CSV, JSON or text, and plotted with
// --svg (cli/svg.hpp).
//   decay  csv   distance,bound,window_mean          (every r = 0..N; --csv or --format csv)
//          json  {"pairs", "max_distance", "bound": [...], "window_mean": [...],
//                 "dyadic_means": [{"k", "first", "last", "mean"}...], ...}
//          text  a summary (default)
//   dials  csv   pair,inv_freq,wavelength,turns,never_turns,default_inv_freq,default_wavelength,
//                default_turns,default_never_turns
//          json  {"context", "rotary_dim", "scaling", "slowest_wavelength", ..., "pairs": [...]}
//   ramp   csv   pair,interpolation_weight,<ramp_factor|smooth_factor>,inv_freq,default_inv_freq
//          json  {"scaling", "factor", "correction_range" or "wavelength_band", "pairs": [...]}
//   check  text  a table law | worst | limit | pass (default); json and csv the same rows
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <posenc/analysis/check.hpp>
#include <posenc/analysis/decay.hpp>
#include <posenc/spec/rope.hpp>

#include "cli/options.hpp"
#include "cli/svg.hpp"

namespace posenc::cli {

// Exit status of `check` when a law fails (0: all pass; 1 and 2 as for every command).
inline constexpr int exit_law_failed = 3;

// decay --max-distance N: N <= 2^24, and (R/2) * 2^(k+1) <= 2^30 for the window k holding N
// (the work, in complex steps, of evaluating f through the end of that window); --work-limit
// sets another budget. About 20 ns a step at -O3: 2^30 is some 20 s for the text summary and
// twice that for --csv or JSON, which evaluate f again while writing.
inline constexpr std::uint64_t max_decay_distance = std::uint64_t{1} << 24;
inline constexpr std::uint64_t max_decay_work = std::uint64_t{1} << 30;

// One pass over f(r) (analysis::for_each_decay_bound from r = 0) gives everything but the values
// themselves: the dyadic means and the text summary. The CSV and JSON outputs evaluate f again
// while they write (two passes, memory independent of N); --svg thins f while the first pass runs
// (svg::thinned_series, a few points per pixel column).
struct decay_result {
  analysis::rope_thetas thetas;
  std::uint32_t pairs = 0;
  std::uint64_t max_distance = 0;
  std::vector<double> dyadic_means;  // M_k over [2^k, 2^(k+1)), k = 0..floor(log2 N)
  double error_bound = 0.0;          // |f(r) - exact| <= this (analysis::decay_error)
  // The text summary: f strictly decreasing on [0, decreasing_to]; the first smallest f(r),
  // r >= 0, and the first largest, r >= 1 (r_max = 0 when N = 0).
  double f0 = 0.0;
  double f1 = 0.0;
  std::uint64_t decreasing_to = 0;
  std::uint64_t r_min = 0;
  double f_min = 0.0;
  std::uint64_t r_max = 0;
  double f_max = 0.0;
  // The mean of f over the dyadic window holding r (f(0) for r = 0).
  double window_mean(std::uint64_t r) const;
};

// c must be valid; 1 <= max_distance <= max_decay_distance. Throws cli_error (exit 1) beyond
// work_limit steps. plot_points: also given f(r), r = 1..N (decay_plot's first series). With
// progress, a line on stderr shows how far the pass is when stderr is a terminal and the work is
// long.
decay_result compute_decay(const rope_config& c, std::uint64_t max_distance, std::uint64_t seq_len,
                           std::uint64_t work_limit = max_decay_work,
                           svg::thinned_series* plot_points = nullptr, bool progress = false);
// Writes r; csv and json evaluate f again.
void write_decay(std::ostream& out, const decay_result& r, output_format f, bool text,
                 const config_echo& echo, bool progress = false);
// Log-x plot of f(r) and of the window means for r = 1..N, without points: decay_plot_points
// fills it from the thinned f(r) that compute_decay fed and r's window means.
svg::plot decay_plot(std::uint32_t pairs, std::uint64_t max_distance);
void decay_plot_points(svg::plot& p, svg::thinned_series& f, const decay_result& r);

struct dial_row {
  double inv_freq = 0.0;
  double wavelength = 0.0;
  double turns = 0.0;
  bool never_turns = false;
};
struct dials_result {
  std::uint64_t context = 0;
  std::uint32_t rotary_dim = 0;
  double base = 0.0;
  scaling_type scaling = scaling_type::none;
  std::vector<dial_row> scaled;    // per pair, the configuration as given
  std::vector<dial_row> unscaled;  // per pair, the same without scaling
  double slowest_wavelength = 0.0;
  double default_slowest_wavelength = 0.0;
  std::uint32_t never_turning = 0;
  std::uint32_t default_never_turning = 0;
};

dials_result compute_dials(const rope_config& c, std::uint64_t context, std::uint64_t seq_len);
void write_dials(std::ostream& out, const dials_result& r, output_format f,
                 const config_echo& echo);
// Wavelength per pair (log-y), scaled and default, and the context as a horizontal line.
svg::plot dials_plot(const dials_result& r);

struct ramp_result {
  scaling_type scaling = scaling_type::yarn;
  double factor = 1.0;
  // yarn: the correction range [low, high] in pair indices; llama3: the wavelength band edges
  // L/high_freq_factor (below: unchanged) and L/low_freq_factor (above: divided by the factor).
  double low = 0.0;
  double high = 0.0;
  std::vector<double> weight;  // analysis::interpolation_weight (1 = theta/factor)
  std::vector<double> source;  // yarn: HF linear_ramp_factor; llama3: HF smooth_factor
  std::vector<double> inv_freq;
  std::vector<double> default_inv_freq;
};

// Throws cli_error (exit 1) unless c's scaling is yarn or llama3.
ramp_result compute_ramp(const rope_config& c);
void write_ramp(std::ostream& out, const ramp_result& r, output_format f, const config_echo& echo);
svg::plot ramp_plot(const ramp_result& r);

// The check's sample and distances for c: 64 sample triples (fewer for very wide heads, so that
// samples * R/2 <= 2^16, at least 4); decay_below_origin up to 65536 (capped so that
// R/2 * distance <= 2^26); dyadic means up to the largest window [2^K, 2^(K+1)) with
// 2^(K+1) <= min(unscaled slowest wavelength / 16, 2^26 / (R/2)), or through max_distance when
// given (the windows ending at or below it).
analysis::check_options check_options_for(const rope_config& c, std::uint64_t seq_len,
                                          std::uint64_t max_distance);
void write_check(std::ostream& out, const analysis::check_report& r,
                 const analysis::check_options& o, output_format f, const config_echo& echo);

// The whole commands, each in its file (decay.cpp, dials.cpp, ramp.cpp, check.cpp); --svg FILE
// is written before anything goes to `out`. They return exit_ok, and run_check exit_law_failed
// when a law fails. Throw cli_error.
int run_decay(const invocation& inv, std::ostream& out);
int run_dials(const invocation& inv, std::ostream& out);
int run_ramp(const invocation& inv, std::ostream& out);
int run_check(const invocation& inv, std::ostream& out);

}  // namespace posenc::cli
