#include "cli/analysis.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include <posenc/analysis/dials.hpp>
#include <posenc/math.hpp>

#include "cli/error.hpp"
#include "cli/output.hpp"
#include "cli/run.hpp"

namespace posenc::cli {

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
                 const analysis::check_options& o, output_format f, const config_echo& echo) {
  out << echo_prefix(echo, f);
  if (f == output_format::csv) {
    out << "law,worst,limit,pass,samples\n";
    for (const analysis::law_result& l : r.laws)
      out << analysis::law_name(l.which) << ',' << format_double(l.worst) << ','
          << format_double(l.limit) << ',' << (l.pass ? 1 : 0) << ',' << l.samples << '\n';
    return;
  }
  if (f == output_format::json) {
    out << "{\"config\": " << echo_json(echo) << ",\n\"all_pass\": " << json_bool(r.all_pass())
        << ", \"samples\": " << o.samples << ", \"seed\": " << o.seed
        << ", \"decay_distance\": " << o.decay_distance
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
  // One rotary pair has one frequency: f(r) = f(0) for every r (docs/formulas.md §8), so the
  // decay laws say nothing about the configuration; a usage error, not a table of verdicts.
  if (c.rotary_dim / 2 < 2)
    usage_error(
        "posenc: check: the relative-position laws need at least 2 rotary pairs (rotary_dim >= "
        "4); got rotary_dim " +
        std::to_string(c.rotary_dim));
  const analysis::check_options o =
      check_options_for(c, inv.seq_len, inv.analysis.max_distance.value_or(0));
  // The dyadic means evaluate f through 2^(K+1) distances, each a step per pair; without
  // --max-distance that is at most 2^26 steps (check_options_for), with it up to 2^40. The budget
  // is decay's (analysis.hpp).
  const std::uint64_t pairs = c.rotary_dim / 2;
  const std::uint64_t distances = std::uint64_t{2} << o.dyadic_windows;
  const std::uint64_t limit = inv.work_limit.value_or(max_decay_work);
  if (pairs * distances > limit)
    invalid("posenc: check's dyadic means over " + std::to_string(distances) + " distances with " +
            std::to_string(pairs) + " pairs are beyond the limit of " + std::to_string(limit) +
            " steps; lower --max-distance or --head-dim / --rotary-dim, or raise the budget with "
            "--work-limit N");
  const analysis::check_report r = analysis::check_laws(c, o);
  write_check(out, r, o, inv.analysis.format_given ? inv.format : output_format::text, rc.echo);
  return r.all_pass() ? exit_ok : exit_law_failed;
}

}  // namespace posenc::cli
