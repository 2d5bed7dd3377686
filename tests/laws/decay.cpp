// The decay laws of posenc/analysis/laws.hpp (docs/formulas.md §8): the statements that are true
// for d = 128, base 10^4, checked over r <= 65536 with the numbers quoted there; the false ones
// shown false; f(r) < f(0) on random configurations (support/random_rope.hpp); the evaluation
// itself against MPFR. Every tolerance is the error bound written beside the law in laws.hpp, and
// the laws have a negative control: frequencies on which the same checks fail.
#include <posenc/analysis.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "laws/common.hpp"
#include "support/exact.hpp"
#include "support/gen.hpp"
#include "support/mpfr_ref.hpp"
#include "support/random_rope.hpp"
#include "support/rope.hpp"

namespace pa = posenc::analysis;
namespace pm = posenc::math;
using posenc::rope_config;
using posenc::rope_layout;
using namespace posenc_test;
using namespace posenc_test::laws;

namespace {

// theta_k = base^(-2k/d) for k = first .. first + n - 1 (first = 0: the paper's convention).
std::vector<pm::dd> paper_thetas(std::int64_t d, std::int64_t first) {
  std::vector<pm::dd> t(static_cast<std::size_t>(d / 2));
  for (std::size_t k = 0; k < t.size(); ++k)
    t[k] = pm::pow_ratio(10000.0, -2 * (first + static_cast<std::int64_t>(k)), d);
  return t;
}

constexpr std::uint64_t kLongRange = 65536;

// f(r) for r = 0 .. 65536, d = 128, base 10^4 (on the heap: 512 KiB).
std::unique_ptr<pa::decay_samples<kLongRange + 1>> paper_curve(std::int64_t first) {
  auto out = std::make_unique<pa::decay_samples<kLongRange + 1>>();
  const std::vector<pm::dd> t = paper_thetas(128, first);
  out->pairs = t.size();
  pa::for_each_decay_bound(t, 0, kLongRange + 1, [&](std::uint64_t r, double f) { out->f[r] = f; });
  return out;
}

// f(r) exactly (MPFR, 256 bits) for the double-double frequencies t.
double mpfr_decay(const std::vector<pm::dd>& t, std::uint64_t r, Mpfr& exact) {
  return exact_decay(
      t.size(), [&](std::size_t k, Mpfr& angle) { set_product(angle, r, t[k].hi, t[k].lo); },
      exact);
}

// x agrees with a value quoted to `digits` decimals, within one unit of the last digit (the
// quotes round, and not always to nearest).
bool near(double x, double quoted, double digits) {
  return std::fabs(x - quoted) <= std::pow(10.0, -digits) + 1e-12;
}

}  // namespace

TEST_CASE("decay_bound: both evaluations against MPFR, within decay_bound_dd_error and decay_error",
          "[laws][decay][mpfr]") {
  // d = 128 base 10^4, and random configurations, at r from 0 to 2^20.
  double worst_dd = 0.0;
  double worst_range = 0.0;
  auto check_at = [&](const std::vector<pm::dd>& t, std::uint64_t r, double f_range) {
    double max_theta = 0.0;
    for (const pm::dd& th : t) max_theta = std::max(max_theta, th.hi);
    const double dd_bound = pa::decay_bound_dd_error(t.size(), static_cast<double>(r) * max_theta);
    Mpfr exact, diff;
    mpfr_decay(t, r, exact);
    const pm::dd v = pa::decay_bound_dd(t, r);
    set_dd(diff, v.hi, v.lo);
    mpfr_sub(diff, diff, exact, MPFR_RNDN);
    const double e_dd = std::fabs(mpfr_get_d(diff, MPFR_RNDN));
    mpfr_sub_d(diff, exact, f_range, MPFR_RNDN);
    const double e_range = std::fabs(mpfr_get_d(diff, MPFR_RNDN));
    worst_dd = std::max(worst_dd, e_dd / dd_bound);
    worst_range = std::max(worst_range, e_range / pa::decay_error(t.size()));
    const bool ok = e_dd <= dd_bound && e_range <= pa::decay_error(t.size()) &&
                    pa::decay_bound(t, r) == pm::to_double(v);
    if (!ok)
      std::cout << "decay_bound vs MPFR at r=" << r << ": exact " << dec(exact) << ", dd error "
                << sci(e_dd) << " (bound " << sci(dd_bound) << "), range error " << sci(e_range)
                << " (bound " << sci(pa::decay_error(t.size())) << ")\n";
    return ok;
  };
  const std::vector<pm::dd> t = paper_thetas(128, 0);
  for (std::uint64_t r0 : {std::uint64_t{0}, std::uint64_t{4000}, std::uint64_t{1} << 20}) {
    // 300 consecutive r: the range evaluation restarts every 256, so both ends of a block are hit.
    std::vector<double> f(300);
    pa::for_each_decay_bound(t, r0, f.size(), [&](std::uint64_t r, double v) { f[r - r0] = v; });
    for (std::uint64_t r = r0; r < r0 + f.size(); r += 7) CHECK(check_at(t, r, f[r - r0]));
    CHECK(check_at(t, r0 + 255, f[255]));
  }
  rc::prop("decay_bound on random configurations agrees with MPFR", [&] {
    const RandomRope rope = *random_rope();
    const std::vector<pm::dd> th = thetas_of(rope);
    const std::uint64_t r = *position(20);
    double f = 0.0;
    pa::for_each_decay_bound(th, r, 1, [&](std::uint64_t, double v) { f = v; });
    if (!check_at(th, r, f)) RC_FAIL(describe(rope) + " r=" + std::to_string(r));
  });
  std::cout << "[law] decay_bound vs MPFR: max error " << worst_dd << " of decay_bound_dd_error, "
            << worst_range << " of decay_error\n"
            << std::flush;
  // The rope_config overload is the same function of the config's frequencies.
  CHECK(pa::decay_bound(kLlama, 100) == pa::decay_bound(t, 100));
}

TEST_CASE("decay: the true statements of formulas.md §8 for d = 128, base 10^4", "[laws][decay]") {
  const auto curve = paper_curve(0);
  const pa::decay_samples<kLongRange + 1>& f = *curve;
  const double tol = pa::decay_tolerance(64);
  // The numbers quoted in formulas.md §8.
  CHECK(f.f[0] == 32.5);
  CHECK(near(f.f[1], 31.538, 3));
  CHECK(near(f.f[10], 17.954, 3));
  CHECK(near(f.f[18], 15.349, 3));
  CHECK(near(f.f[19], 15.391, 3));
  CHECK(near(f.f[21], 14.835, 3));
  CHECK(near(f.f[50], 12.630, 3));
  CHECK(near(f.f[100], 10.227, 3));
  CHECK(near(f.f[250], 6.548, 3));
  CHECK(near(f.f[30950], 14.412, 3));
  CHECK(near(f.f[61061], 1.206, 3));

  // (a) f(r) < f(0) for 1 <= r <= 65536.
  CHECK(pa::decay_below_origin(f, kLongRange) < -tol);
  // (b) strictly decreasing on [0, 18].
  CHECK(pa::decay_decreasing(f, 0, 18) < -tol);
  // (c) the dyadic means decrease for k = 0..13 (r < 16384).
  CHECK(pa::dyadic_means_decreasing(f, 13) < -tol);
  // (d) f(r) < f(21) for 22 <= r <= 65536; the records up to 65536 are r0 in {0..17, 19, 20, 21}
  // and no other r0 < 30950.
  CHECK(pa::decay_below(f, 21, kLongRange) < -tol);
  std::vector<double> suffix_max(kLongRange + 2, -1.0);  // max f over (r, 65536]
  for (std::uint64_t r = kLongRange; r-- > 0;)
    suffix_max[r] = std::max(suffix_max[r + 1], f.f[r + 1]);
  std::vector<std::uint64_t> records;
  for (std::uint64_t r0 = 0; r0 < 30950; ++r0) {
    const double margin = suffix_max[r0] - f.f[r0];
    REQUIRE(std::fabs(margin) > tol);  // each decided beyond the evaluation error
    if (margin < 0.0) records.push_back(r0);
  }
  const std::vector<std::uint64_t> expected = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10,
                                               11, 12, 13, 14, 15, 16, 17, 19, 20, 21};
  CHECK(records == expected);
  for (std::uint64_t r0 : expected) CHECK(pa::decay_below(f, r0, kLongRange) < -tol);

  // The same laws computed from the frequencies directly (restarted at other r, so the values
  // differ in the last bits, within the evaluation error).
  const std::vector<pm::dd> t = paper_thetas(128, 0);
  CHECK(std::fabs(pa::decay_below_origin(t, 4096) - pa::decay_below_origin(f, 4096)) <= tol);
  CHECK(std::fabs(pa::dyadic_means_decreasing(t, 9) - pa::dyadic_means_decreasing(f, 9)) <= tol);
  CHECK(std::fabs(pa::decay_below_origin(kLlama, 300) - pa::decay_below_origin(f, 300)) <= tol);

  // The other indexing convention (theta_k for k = 1..64) is qualitatively the same: strictly
  // decreasing to r = 20, dyadic means decreasing to k = 13.
  const auto curve1 = paper_curve(1);
  CHECK(pa::decay_decreasing(*curve1, 0, 20) < -tol);
  CHECK(pa::decay_decreasing(*curve1, 0, 21) > tol);
  CHECK(pa::dyadic_means_decreasing(*curve1, 13) < -tol);
  CHECK(pa::decay_below_origin(*curve1, kLongRange) < -tol);
}

TEST_CASE("decay: the false statements of formulas.md §8 are false (each check fails there)",
          "[laws][decay][negative]") {
  const auto curve = paper_curve(0);
  const pa::decay_samples<kLongRange + 1>& f = *curve;
  const double tol = pa::decay_tolerance(64);
  // "f is monotone": f(19) > f(18); 113 of the 250 unit steps on [0, 250] are increases.
  CHECK(pa::decay_decreasing(f, 0, 19) > tol);
  CHECK(pa::decay_below(f, 18, kLongRange) > tol);
  int increases = 0;
  for (std::uint64_t r = 0; r < 250; ++r) increases += f.f[r + 1] > f.f[r] ? 1 : 0;
  CHECK(increases == 113);
  // The dyadic means stop decreasing at k = 14: M_14 > M_13.
  CHECK(pa::dyadic_means_decreasing(f, 14) > tol);
  std::vector<double> means;
  for (unsigned k = 0; k < 16; ++k) {
    double s = 0.0;
    for (std::uint64_t r = std::uint64_t{1} << k; r < (std::uint64_t{2} << k); ++r) s += f.f[r];
    means.push_back(s / static_cast<double>(std::uint64_t{1} << k));
  }
  const double quoted[] = {31.54, 27.28, 21.00, 17.70, 14.37, 12.02, 10.02, 8.27,
                           6.97,  5.96,  5.30,  4.88,  4.671, 4.659, 4.700, 4.723};
  for (unsigned k = 0; k < 16; ++k) {
    INFO("M_" << k << " = " << means[k]);
    CHECK(near(means[k], quoted[k], k >= 12 ? 3 : 2));
  }
  // "The windowed maximum decays": the octave maxima rise from k = 7 (10.72 at 183) to k = 8
  // (11.19 at 378), and k = 14 holds the maximum of all r >= 22 (14.41 at 30950).
  auto octave_max = [&](unsigned k) {
    std::uint64_t arg = std::uint64_t{1} << k;
    for (std::uint64_t r = arg; r < (std::uint64_t{2} << k); ++r)
      if (f.f[r] > f.f[arg]) arg = r;
    return arg;
  };
  CHECK(octave_max(7) == 183);
  CHECK(octave_max(8) == 378);
  CHECK(f.f[378] > f.f[183] + tol);
  CHECK(octave_max(14) == 30950);
  // "f -> 0": the mean over [8192, 65536] is 4.708 and f keeps producing spikes.
  double s = 0.0;
  for (std::uint64_t r = 8192; r <= kLongRange; ++r) s += f.f[r];
  CHECK(near(s / static_cast<double>(kLongRange - 8192 + 1), 4.708, 3));
  CHECK(f.f[30950] > f.f[250] + tol);
}

TEST_CASE("decay_below_origin: f(r) < f(0) on random configurations with at least two pairs",
          "[laws][decay]") {
  // Proven where the result is below -decay_tolerance(n). Where it is not (|S_2| near 2, i.e.
  // r (theta_0 - theta_1) near 2 pi Z, which the theorem excludes but double cannot always tell),
  // every such r is decided by the double-double evaluation instead.
  std::uint64_t cases = 0;
  std::uint64_t resolved_in_dd = 0;
  rc::prop("decay_below_origin", [&] {
    const auto b = *rc::gen::noShrink(rc::gen::container<std::vector<RandomRope>>(
        law_batch(), rc::gen::resize(rc::kNominalSize, random_rope())));
    for (const RandomRope& rope : b) {
      if (rope.config.rotary_dim < 4) continue;  // one pair: f = f(0) = 1 (the statement is false)
      ++cases;
      const std::vector<pm::dd> t = thetas_of(rope);
      const std::size_t n = t.size();
      const std::uint64_t r_last = *uint_in(1, 2048);
      const double tol = pa::decay_tolerance(n);
      if (pa::decay_below_origin(t, r_last) < -tol) continue;
      const double f0 = pa::decay_at_origin(n);
      pa::for_each_decay_bound(t, 1, r_last, [&](std::uint64_t r, double f) {
        if (f - f0 < -tol) return;
        ++resolved_in_dd;
        double max_theta = 0.0;
        for (const pm::dd& th : t) max_theta = std::max(max_theta, th.hi);
        const double margin = pm::to_double(pa::decay_bound_dd(t, r) - f0);
        RC_ASSERT(margin < -pa::decay_bound_dd_error(n, static_cast<double>(r) * max_theta));
      });
    }
  });
  std::cout << "[law] decay_below_origin: " << cases << " random configs, " << resolved_in_dd
            << " distances decided in double-double\n"
            << std::flush;
}

TEST_CASE("negative control: equal or commensurate frequencies break the decay laws",
          "[laws][decay][negative]") {
  // Equal frequencies: S_j = j e^{i r theta}, so f(r) = f(0) for every r.
  const std::vector<pm::dd> equal(32, pm::dd{0.3, 0.0});
  const double tol = pa::decay_tolerance(32);
  CHECK(pa::decay_below_origin(equal, 1000) > -tol);
  CHECK(pa::dyadic_means_decreasing(equal, 8) > -tol);
  CHECK(pa::decay_decreasing(equal, 0, 10) > -tol);
  // One pair (R = 2): f(r) = |e^{i r theta}| = 1 = f(0).
  const rope_config one_pair{2, 2, 10000.0, rope_layout::half};
  CHECK(pa::decay_below_origin(one_pair, 1000) > -pa::decay_tolerance(1));
  // Commensurate frequencies theta_k = 2 pi k / 97: f(r) < f(0) for r < 97, f(97) = f(0).
  std::vector<pm::dd> comm(16);
  const pm::dd two_pi{0x1.921fb54442d18p+2, 0x1.1a62633145c07p-52};
  for (std::size_t k = 0; k < comm.size(); ++k) comm[k] = two_pi * static_cast<double>(k) / 97.0;
  CHECK(pa::decay_below_origin(comm, 96) < -pa::decay_tolerance(16));
  CHECK(pa::decay_below_origin(comm, 97) > -pa::decay_tolerance(16));
  // A law asked beyond its samples fails (NaN).
  pa::decay_samples<8> few{64, {}};
  for (std::size_t r = 0; r < 8; ++r) few.f[r] = 32.5 - static_cast<double>(r);
  CHECK(pa::decay_below_origin(few, 7) < -tol);
  CHECK_FALSE(pa::decay_below_origin(few, 8) < -tol);
}
