// `posenc decay|dials|ramp|check` in-process (run()): every argument error is one line on stderr,
// nothing on stdout, exit 2 (usage) or 1 (configuration); decay's CSV has its header and one row
// per distance, with the bound against MPFR's f(r) and the published values of
// docs/formulas.md §8; dials' JSON against MPFR; ramp's llama3 bands as published; check's
// exit status (0 all laws hold, 3 a law fails).
//
// Tolerances: decay's f(r) comes from for_each_decay_bound, within decay_error(n) of exact
// (1.6e-11 for n = 64, analysis/decay.hpp), printed with 17 digits (read back exactly). Dials'
// numbers are double-doubles within ~2^-99 relative of exact rounded once to double: within
// 2^-53 + 2^-99 relative, so 2^-52 relative bounds them.
#include <posenc/analysis/decay.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/analysis.hpp"
#include "cli/run.hpp"
#include "support.hpp"
#include "support/exact.hpp"

namespace {
using json = nlohmann::json;
using posenc_test::Mpfr;

using posenc_test::lines_of;
using posenc_test::run_cli;
using posenc_test::split;
using result = posenc_test::cli_result;

void check_error(std::vector<std::string_view> args, int status, std::string_view needle) {
  const result r = run_cli(args);
  INFO("args: " <<
       [&] {
         std::string s;
         for (auto a : args) s += std::string(a) + " ";
         return s;
       }()
                << "\nstderr: " << r.err);
  CHECK(r.status == status);
  CHECK(r.out.empty());
  CHECK(r.err.find(needle) != std::string::npos);
  CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
}

}  // namespace

TEST_CASE("tools/analysis argument errors", "[analysis]") {
  check_error({"decay", "--head-dim", "128"}, 2, "decay needs --max-distance");
  check_error({"decay", "--head-dim", "128", "--max-distance", "0"}, 2, "--max-distance");
  check_error({"decay", "--head-dim", "128", "--max-distance", "16777217"}, 2, "16777216");
  check_error({"decay", "--max-distance", "10"}, 2, "head dimension");
  check_error({"decay", "--head-dim", "65536", "--max-distance", "16777216"}, 1,
              "beyond the limit");
  check_error({"decay", "--head-dim", "128", "--max-distance", "10", "--context", "5"}, 2,
              "--context is for the dials command");
  check_error({"dials", "--head-dim", "128"}, 2, "dials needs --context");
  check_error({"dials", "--head-dim", "128", "--context", "0"}, 2, "--context");
  check_error({"dials", "--head-dim", "128", "--context", "10", "--max-distance", "4"}, 2,
              "--max-distance is for the decay, check and t5-bias commands");
  check_error({"ramp", "--head-dim", "128"}, 1, "ramp needs a yarn or llama3 configuration");
  check_error({"ramp", "--head-dim", "128", "--scaling", "linear", "--factor", "2"}, 1,
              "scaling linear");
  check_error({"freqs", "--head-dim", "128", "--svg", "x.svg"}, 2, "--svg is for");
  check_error({"check", "--head-dim", "128", "--positions", "0:4"}, 2, "--positions");
  check_error(
      {"decay", "--head-dim", "128", "--max-distance", "10", "--svg", "/nonexistent-dir/x.svg"}, 1,
      "cannot write");
}

TEST_CASE("tools/analysis decay --csv: header, rows, f(r) == MPFR and published values",
          "[analysis]") {
  const result r =
      run_cli({"decay", "--head-dim", "128", "--base", "10000", "--max-distance", "300", "--csv"});
  REQUIRE(r.status == 0);
  const std::vector<std::string> lines = lines_of(r.out);
  REQUIRE(lines.size() == 302);
  CHECK(lines[0] == "distance,bound,window_mean");
  std::vector<double> f, m;
  for (std::size_t d = 0; d <= 300; ++d) {
    const std::vector<std::string> cells = split(lines[d + 1], ',');
    REQUIRE(cells.size() == 3);
    CHECK(cells[0] == std::to_string(d));
    f.push_back(std::stod(cells[1]));
    m.push_back(std::stod(cells[2]));
  }
  const double tol = posenc::analysis::decay_error(64);
  CHECK(f[0] == 32.5);  // (n + 1)/2 exactly
  for (const std::uint64_t d : {1u, 2u, 10u, 18u, 19u, 50u, 100u, 236u, 250u, 300u}) {
    INFO("r = " << d);
    CHECK(std::fabs(f[d] - posenc_test::exact_decay_bound(10000.0, 128, d)) <= tol);
  }
  // formulas.md §8, within one unit of the last printed digit (a few of its values are off by
  // more than half a unit, e.g. f(50) = 12.63055 printed as 12.630; MPFR above is the reference):
  // f(1) = 31.538, f(10) = 17.954, f(50) = 12.630, f(100) = 10.227,
  // f(250) = 6.548, f(18) = 15.349 < f(19) = 15.391, the minimum on [0, 250] 6.415 at r = 236.
  CHECK(std::fabs(f[1] - 31.538) <= 1e-3);
  CHECK(std::fabs(f[10] - 17.954) <= 1e-3);
  CHECK(std::fabs(f[50] - 12.630) <= 1e-3);
  CHECK(std::fabs(f[100] - 10.227) <= 1e-3);
  CHECK(std::fabs(f[250] - 6.548) <= 1e-3);
  CHECK(std::fabs(f[18] - 15.349) <= 1e-3);
  CHECK(std::fabs(f[19] - 15.391) <= 1e-3);
  CHECK(f[19] > f[18]);  // f is not monotone
  std::size_t argmin = 0;
  for (std::size_t d = 0; d <= 250; ++d)
    if (f[d] < f[argmin]) argmin = d;
  CHECK(argmin == 236);
  // Window means: r = 0 is f(0); r in [2^k, 2^(k+1)) has M_k, the mean of f over the whole
  // window (for r = 256..300, the window [256, 511] reaches past N). Published M_0..M_8:
  // 31.54, 27.28, 21.00, 17.70, 14.37, 12.02, 10.02, 8.27, 6.97 (within one unit of the second
  // decimal: M_3 = 17.69497 is printed 17.70).
  CHECK(m[0] == f[0]);
  const double published[] = {31.54, 27.28, 21.00, 17.70, 14.37, 12.02, 10.02, 8.27, 6.97};
  for (std::size_t k = 0; k <= 8; ++k) {
    INFO("k = " << k);
    const std::size_t first = std::size_t{1} << k;
    CHECK(std::fabs(m[first] - published[k]) <= 1e-2);
    for (std::size_t d = first; d < 2 * first && d <= 300; ++d) CHECK(m[d] == m[first]);
  }
  // M_4 (r = 16..31) against MPFR: the mean of 16 exact values; the computed values are within
  // decay_error each, their double-double sum adds nothing measurable.
  double exact_sum = 0.0;
  for (std::uint64_t d = 16; d < 32; ++d) exact_sum += posenc_test::exact_decay_bound(1e4, 128, d);
  CHECK(std::fabs(m[16] - exact_sum / 16) <= tol + 1e-14);
}

TEST_CASE("tools/analysis decay text summary and json", "[analysis]") {
  const result t = run_cli({"decay", "--head-dim", "128", "--max-distance", "65536"});
  REQUIRE(t.status == 0);
  // Published: strictly decreasing on [0, 18]; means decreasing for k = 0..13; min f at 61061.
  CHECK(t.out.find("strictly decreasing on [0, 18]") != std::string::npos);
  CHECK(t.out.find("decrease for k = 0..13 (r < 16384)") != std::string::npos);
  CHECK(t.out.find("smallest: f(61061)") != std::string::npos);
  const result j =
      run_cli({"decay", "--head-dim", "64", "--max-distance", "40", "--format", "json"});
  REQUIRE(j.status == 0);
  const json v = json::parse(j.out);
  CHECK(v["pairs"] == 32);
  CHECK(v["bound"].size() == 41);
  CHECK(v["window_mean"].size() == 41);
  CHECK(v["dyadic_means"].size() == 6);  // k = 0..5 (2^5 <= 40)
  CHECK(v["bound"][0].get<double>() == 16.5);
}

TEST_CASE("tools/analysis dials json == MPFR", "[analysis]") {
  const result r = run_cli(
      {"dials", "--head-dim", "128", "--base", "10000", "--context", "4096", "--format", "json"});
  REQUIRE(r.status == 0);
  const json v = json::parse(r.out);
  REQUIRE(v["pairs"].size() == 64);
  std::uint32_t never = 0;
  for (std::uint32_t i = 0; i < 64; ++i) {
    INFO("pair " << i);
    Mpfr theta, two_pi, wl, turns;
    posenc_test::set_theta(theta, 10000.0, i, 128);
    posenc_test::set_two_pi(two_pi);
    mpfr_div(wl, two_pi, theta, MPFR_RNDN);
    mpfr_mul_ui(turns, theta, 4096, MPFR_RNDN);
    mpfr_div(turns, turns, two_pi, MPFR_RNDN);
    const json& p = v["pairs"][i];
    const auto rel = [](double got, const Mpfr& exact) {
      return posenc_test::dd_rel_error(got, 0.0, exact);
    };
    CHECK(rel(p["inv_freq"].get<double>(), theta) <= 0x1p-52);
    CHECK(rel(p["wavelength"].get<double>(), wl) <= 0x1p-52);
    CHECK(rel(p["turns"].get<double>(), turns) <= 0x1p-52);
    CHECK(p["default_wavelength"] == p["wavelength"]);
    const bool exact_never = mpfr_cmp_ui(turns, 1) < 0;
    CHECK(p["never_turns"].get<bool>() == exact_never);
    never += exact_never ? 1 : 0;
  }
  CHECK(v["pairs_never_turning"] == never);
  // The slowest wavelength: 2 pi 10^4^(126/128).
  Mpfr want, two_pi;
  posenc_test::set_pow_ratio(want, 10000.0, 126, 128);
  posenc_test::set_two_pi(two_pi);
  mpfr_mul(want, want, two_pi, MPFR_RNDN);
  CHECK(posenc_test::dd_rel_error(v["slowest_wavelength"].get<double>(), 0.0, want) <= 0x1p-52);

  const result c = run_cli({"dials", "--head-dim", "64", "--context", "100", "--format", "csv"});
  REQUIRE(c.status == 0);
  const std::vector<std::string> lines = lines_of(c.out);
  REQUIRE(lines.size() == 33);
  CHECK(lines[0] ==
        "pair,inv_freq,wavelength,turns,never_turns,default_inv_freq,default_wavelength,"
        "default_turns,default_never_turns");
}

TEST_CASE("tools/analysis ramp: llama3 bands and yarn range as published", "[analysis]") {
  const result r = run_cli({"ramp", "--head-dim", "128", "--base", "500000", "--scaling", "llama3",
                            "--factor", "8", "--original-max", "8192", "--format", "csv"});
  REQUIRE(r.status == 0);
  const std::vector<std::string> lines = lines_of(r.out);
  REQUIRE(lines.size() == 65);
  CHECK(lines[0] == "pair,interpolation_weight,smooth_factor,inv_freq,default_inv_freq");
  for (std::size_t i = 0; i < 64; ++i) {
    INFO("pair " << i);
    const std::vector<std::string> cells = split(lines[i + 1], ',');
    REQUIRE(cells.size() == 5);
    const double w = std::stod(cells[1]);
    const double s = std::stod(cells[2]);
    if (i <= 28) {
      CHECK(w == 0.0);
      CHECK(s == 1.0);
      CHECK(cells[3] == cells[4]);
    } else if (i >= 35) {
      CHECK(w == 1.0);
      CHECK(s == 0.0);
    } else {
      CHECK(w > 0.0);
      CHECK(w < 1.0);
    }
  }
  const result y = run_cli({"ramp", "--head-dim", "128", "--scaling", "yarn", "--factor", "4",
                            "--original-max", "4096", "--format", "json"});
  REQUIRE(y.status == 0);
  const json v = json::parse(y.out);
  CHECK(v["correction_range"][0] == 20.0);
  CHECK(v["correction_range"][1] == 46.0);
  CHECK(v["pairs"][20]["interpolation_weight"] == 0.0);
  CHECK(v["pairs"][46]["interpolation_weight"] == 1.0);
  CHECK(v["pairs"][33]["interpolation_weight"].get<double>() == 13.0 / 26.0);
}

TEST_CASE("tools/analysis check: exit 0 when the laws hold, 3 when one fails", "[analysis]") {
  const result ok = run_cli({"check", "--head-dim", "64"});
  CHECK(ok.status == 0);
  CHECK(ok.out.find("all laws hold") != std::string::npos);
  // One rotary pair: f(r) = f(0), the laws say nothing; a usage error, not a verdict.
  for (const std::vector<std::string_view>& one_pair :
       {std::vector<std::string_view>{"check", "--head-dim", "2"},
        {"check", "--head-dim", "64", "--rotary-dim", "2"},
        {"check", "--head-dim", "8", "--partial-rotary-factor", "0.25"}}) {
    const result r = run_cli(one_pair);
    CHECK(r.status == posenc::cli::exit_usage);
    CHECK(r.out.empty());
    CHECK(r.err ==
          "posenc: check: the relative-position laws need at least 2 rotary pairs (rotary_dim >= "
          "4); got rotary_dim 2\n");
  }
  // Two pairs: the laws run (d = 4, base 10^4: decay_below_origin holds, the dyadic means do not).
  const result two_pairs = run_cli({"check", "--head-dim", "4"});
  CHECK(two_pairs.status == posenc::cli::exit_law_failed);
  CHECK(two_pairs.out.find("decay_below_origin") != std::string::npos);
  // d = 128, base 1e4: the dyadic means rise after k = 13 (published), so a distance that
  // includes window 14 fails.
  const result far = run_cli({"check", "--head-dim", "128", "--max-distance", "32767"});
  CHECK(far.status == posenc::cli::exit_law_failed);
  const result near = run_cli({"check", "--head-dim", "128", "--max-distance", "16383"});
  CHECK(near.status == 0);
  const result j = run_cli({"check", "--head-dim", "64", "--format", "json"});
  REQUIRE(j.status == 0);
  const json v = json::parse(j.out);
  CHECK(v["all_pass"] == true);
  CHECK(v["laws"].size() == 6);
}
