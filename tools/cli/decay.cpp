#include "cli/analysis.hpp"

#include <unistd.h>

#include <bit>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include <posenc/analysis/decay.hpp>
#include <posenc/math.hpp>

#include "cli/error.hpp"
#include "cli/output.hpp"
#include "cli/run.hpp"

namespace posenc::cli {

namespace {
// A line on stderr ("posenc: decay 42%") while a long pass runs, when stderr is a terminal;
// cleared at the end. Short passes print nothing.
class progress_line {
 public:
  progress_line(bool wanted, std::string_view what, std::uint64_t total)
      : on_(wanted && total >= (std::uint64_t{1} << 16) && ::isatty(STDERR_FILENO) == 1),
        what_(what),
        total_(total) {}
  ~progress_line() {
    if (on_ && shown_ >= 0) std::fputs("\r\033[K", stderr);
  }
  progress_line(const progress_line&) = delete;
  progress_line& operator=(const progress_line&) = delete;
  void at(std::uint64_t done) {
    if (!on_) return;
    const int percent = static_cast<int>(done * 100 / total_);
    if (percent == shown_) return;
    shown_ = percent;
    std::fprintf(stderr, "\rposenc: %s %3d%%", what_.data(), percent);
    std::fflush(stderr);
  }

 private:
  bool on_;
  std::string_view what_;
  std::uint64_t total_;
  int shown_ = -1;
};

// f(r) for r = 0..max_distance in order, evaluated again.
template <class Visit>
void each_bound(const decay_result& r, bool progress, Visit&& visit) {
  progress_line line(progress, "decay (writing)", r.max_distance + 1);
  analysis::for_each_decay_bound(r.thetas, 0, r.max_distance + 1, [&](std::uint64_t d, double f) {
    if ((d & 0xffff) == 0) line.at(d);
    visit(d, f);
  });
}

// Appends to `s`, handing `s` to `out` in large pieces.
void flush_large(std::ostream& out, std::string& s) {
  if (s.size() > (1u << 16)) {
    out << s;
    s.clear();
  }
}
}  // namespace

double decay_result::window_mean(std::uint64_t r) const {
  return r == 0 ? f0 : dyadic_means[static_cast<std::size_t>(std::bit_width(r)) - 1];
}

decay_result compute_decay(const rope_config& c, std::uint64_t max_distance, std::uint64_t seq_len,
                           std::uint64_t work_limit, svg::thinned_series* plot_points,
                           bool progress) {
  decay_result r;
  r.thetas = analysis::rope_thetas{c, seq_len};
  r.pairs = c.rotary_dim / 2;
  r.max_distance = max_distance;
  // Windows k = 0..K with 2^K <= N; f is evaluated through the end of window K.
  const unsigned K = static_cast<unsigned>(std::bit_width(max_distance)) - 1;
  const std::uint64_t r_end = std::uint64_t{2} << K;  // exclusive
  if (static_cast<std::uint64_t>(r.pairs) * r_end > work_limit)
    invalid("posenc: decay over " + std::to_string(r_end) + " distances with " +
            std::to_string(r.pairs) + " pairs is beyond the limit of " +
            std::to_string(work_limit) +
            " steps; lower --max-distance or --head-dim / --rotary-dim, or raise the budget with "
            "--work-limit N");
  r.dyadic_means.assign(K + 1, 0.0);
  math::dd sum{0.0, 0.0};
  unsigned k = 0;
  bool decreasing = true;
  double previous = 0.0;
  progress_line line(progress, "decay", r_end);
  analysis::for_each_decay_bound(r.thetas, 0, r_end, [&](std::uint64_t d, double f) {
    if ((d & 0xffff) == 0) line.at(d);
    if (d <= max_distance) {
      if (plot_points != nullptr && d >= 1) plot_points->add(static_cast<double>(d), f);
      if (d == 0) {
        r.f0 = f;
        r.f_min = f;
      } else {
        if (decreasing && f < previous) {
          r.decreasing_to = d;
        } else {
          decreasing = false;
        }
        if (f < r.f_min) {
          r.f_min = f;
          r.r_min = d;
        }
        if (d == 1) {
          r.f1 = f;
          r.r_max = 1;
          r.f_max = f;
        } else if (f > r.f_max) {
          r.f_max = f;
          r.r_max = d;
        }
      }
      previous = f;
    }
    if (d == 0) return;
    sum = sum + f;
    if (d + 1 == (std::uint64_t{2} << k)) {  // the last distance of window k
      r.dyadic_means[k] = math::to_double(sum / static_cast<double>(std::uint64_t{1} << k));
      sum = {0.0, 0.0};
      ++k;
    }
  });
  r.error_bound = analysis::decay_error(r.pairs);
  return r;
}

void write_decay(std::ostream& out, const decay_result& r, output_format f, bool text,
                 const config_echo& echo, bool progress) {
  std::string s = echo_prefix(echo, text ? output_format::text : f);
  if (!text && f == output_format::csv) {
    s += "distance,bound,window_mean\n";
    each_bound(r, progress, [&](std::uint64_t d, double v) {
      s += std::to_string(d);
      s += ',';
      s += format_double(v);
      s += ',';
      s += format_double(r.window_mean(d));
      s += '\n';
      flush_large(out, s);
    });
    out << s;
    return;
  }
  if (!text && f == output_format::json) {
    out << "{\"config\": " << echo_json(echo) << ",\n\"pairs\": " << r.pairs
        << ", \"max_distance\": " << r.max_distance
        << ", \"error_bound\": " << format_double(r.error_bound) << ", \"dyadic_means\": [";
    for (std::size_t k = 0; k < r.dyadic_means.size(); ++k)
      out << (k ? ", " : "") << "{\"k\": " << k << ", \"first\": " << (std::uint64_t{1} << k)
          << ", \"last\": " << ((std::uint64_t{2} << k) - 1)
          << ", \"mean\": " << format_double(r.dyadic_means[k]) << '}';
    out << "], \"bound\": [";
    each_bound(r, progress, [&](std::uint64_t d, double v) {
      if (d > 0) s += ", ";
      s += format_double(v);
      flush_large(out, s);
    });
    out << s;
    s.clear();
    out << "], \"window_mean\": [";
    for (std::uint64_t d = 0; d <= r.max_distance; ++d) {
      if (d > 0) s += ", ";
      s += format_double(r.window_mean(d));
      flush_large(out, s);
    }
    out << s;
    out << "]}\n";
    return;
  }
  // Text summary, after the echo's header.
  out << s;
  std::size_t means_decrease = 0;  // M_0 > ... > M_k for k <= means_decrease
  while (means_decrease + 1 < r.dyadic_means.size() &&
         r.dyadic_means[means_decrease + 1] < r.dyadic_means[means_decrease])
    ++means_decrease;
  out << "RoFormer decay bound f(r) = (1/n) sum_j |S_j|, n = " << r.pairs << " pairs, r = 0.."
      << r.max_distance << " (each value within " << short_double(r.error_bound) << ")\n";
  out << "  f(0) = " << format_double(r.f0) << " = (n + 1)/2\n";
  if (r.max_distance >= 1)
    out << "  f(1) = " << format_double(r.f1) << "; largest for r >= 1: f(" << r.r_max
        << ") = " << format_double(r.f_max) << '\n';
  out << "  smallest: f(" << r.r_min << ") = " << format_double(r.f_min) << '\n';
  out << "  strictly decreasing on [0, " << r.decreasing_to << "]"
      << (r.decreasing_to < r.max_distance ? " (f is not monotone)" : "") << '\n';
  out << "  dyadic-window means M_k over [2^k, 2^(k+1)):\n";
  for (std::size_t k = 0; k < r.dyadic_means.size(); ++k)
    out << "    k = " << pad_left(std::to_string(k), 2) << "  ["
        << pad_left(std::to_string(std::uint64_t{1} << k), 8) << ", "
        << pad_left(std::to_string((std::uint64_t{2} << k) - 1), 8) << "]  "
        << format_double(r.dyadic_means[k]) << '\n';
  out << "  the means strictly decrease for k = 0.." << means_decrease << " (r < "
      << (std::uint64_t{2} << means_decrease) << ")\n";
}

svg::plot decay_plot(std::uint32_t pairs, std::uint64_t max_distance) {
  svg::plot p;
  p.title = "RoFormer decay bound, " + std::to_string(pairs) + " pairs";
  p.x.title = "relative distance r (tokens)";
  p.x.log = true;
  // The range the plot of r = 1..N shows (whole decades), given before the points, which are
  // thinned by pixel column as they come.
  const svg::range x = svg::auto_range(p.x, 1.0, static_cast<double>(max_distance));
  p.x.min = x.min;
  p.x.max = x.max;
  p.y.title = "f(r) = (1/n) sum_j |S_j|";
  p.y.min = 0.0;
  p.lines = {svg::series{"f(r)", {}, {}, true, false, false, ""},
             svg::series{"dyadic-window mean", {}, {}, true, false, true, ""}};
  return p;
}

void decay_plot_points(svg::plot& p, svg::thinned_series& f, const decay_result& r) {
  f.move_into(p.lines[0]);
  svg::thinned_series m(p);
  for (std::uint64_t d = 1; d <= r.max_distance; ++d)
    m.add(static_cast<double>(d), r.window_mean(d));
  m.move_into(p.lines[1]);
}

int run_decay(const invocation& inv, std::ostream& out) {
  const resolved_config rc = configure(inv);
  const std::uint64_t n = *inv.analysis.max_distance;
  std::optional<svg::plot> plot;
  std::optional<svg::thinned_series> f_points;
  if (inv.svg) {
    plot = decay_plot(rc.config().rotary_dim / 2, n);
    f_points.emplace(*plot);
  }
  const decay_result r =
      compute_decay(rc.config(), n, inv.seq_len, inv.work_limit.value_or(max_decay_work),
                    f_points ? &*f_points : nullptr, true);
  if (inv.svg) {
    decay_plot_points(*plot, *f_points, r);
    svg::write_file(*inv.svg, *plot);
  }
  write_decay(out, r, inv.format, !inv.analysis.format_given, rc.echo, true);
  return exit_ok;
}

}  // namespace posenc::cli
