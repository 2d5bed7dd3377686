#include "cli/analysis.hpp"

#include <bit>
#include <string>

#include <posenc/analysis/decay.hpp>
#include <posenc/math.hpp>

#include "cli/error.hpp"
#include "cli/output.hpp"
#include "cli/run.hpp"

namespace posenc::cli {

namespace {
// The elements of a JSON array of doubles ("a, b, ..."), handed to `out` in large pieces.
void write_json_elements(std::ostream& out, const std::vector<double>& values) {
  std::string s;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) s += ", ";
    s += format_double(values[i]);
    if (s.size() > (1u << 16)) {
      out << s;
      s.clear();
    }
  }
  out << s;
}
}  // namespace

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
    write_json_elements(out, r.bound);
    out << "], \"window_mean\": [";
    write_json_elements(out, r.window_mean);
    out << "]}\n";
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

int run_decay(const invocation& inv, std::ostream& out) {
  const resolved_config rc = configure(inv);
  const decay_result r = compute_decay(rc.config(), *inv.analysis.max_distance, inv.seq_len);
  const svg::plot p = decay_plot(r);  // before any output: an error leaves nothing written
  if (inv.svg) svg::write_file(*inv.svg, p);
  write_decay(out, r, inv.format, !inv.analysis.format_given);
  return exit_ok;
}

}  // namespace posenc::cli
