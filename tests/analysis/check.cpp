// posenc/analysis/check.hpp: the laws run on one configuration.
// - The limits are the error bounds of laws.hpp, recomputed here from their formulas (entries in
//   double: eps = 2^-52 (1 + 2^-40), u = 2^-53).
// - Configurations where the laws hold pass every law; the counter-examples of
//   docs/formulas.md §8 fail the law they break and only that one: one pair (f(r) = f(0) = 1
//   for every r), two equal frequencies (longrope factors that make theta_1 == theta_0, so
//   f(r) = f(0) = 3/2), and the dyadic means of d = 128, base 10^4 checked past k = 13 (published:
//   M_14 = 4.700 > M_13 = 4.659).
// - The decay results agree with the exact bound: max_{1<=r<=N} f(r) - f(0) is f(1) - f(0) for
//   d = 128, base 10^4 (f(1) is the largest for r >= 1, formulas.md §8), checked against MPFR
//   within decay_tolerance.
// - The sample is deterministic (same seed, same report) and depends on the seed.
#include <posenc/analysis/check.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>

#include "support/exact.hpp"

namespace {
using posenc::rope_config;
using posenc::rope_layout;
namespace pa = posenc::analysis;

constexpr double eps = 0x1.0000000001p-52;
constexpr double u = 0x1p-53;

const pa::law_result& get(const pa::check_report& r, pa::law l) {
  return r.laws[static_cast<std::size_t>(l)];
}

pa::check_options small_options() {
  pa::check_options o;
  o.samples = 16;
  o.decay_distance = 4096;
  o.dyadic_windows = 11;
  return o;
}

}  // namespace

TEST_CASE("check: every law holds on well-formed configurations; limits as laws.hpp derives",
          "[check]") {
  const std::array<rope_config, 4> configs{{
      {128, 128, 10000.0, rope_layout::half},
      {128, 64, 10000.0, rope_layout::interleaved},
      {128, 128, 500000.0, rope_layout::half, posenc::scaling::llama3(8.0, 1.0, 4.0, 8192)},
      {64, 64, 10000.0, rope_layout::half, posenc::scaling::yarn(4.0, 4096)},
  }};
  for (const rope_config& c : configs) {
    INFO("head_dim " << c.head_dim << ", rotary_dim " << c.rotary_dim << ", base " << c.base);
    pa::check_options o = small_options();
    o.dyadic_windows = 10;
    const pa::check_report r = pa::check_laws(c, o);
    for (const pa::law_result& l : r.laws) {
      INFO(pa::law_name(l.which) << ": worst " << l.worst << ", limit " << l.limit);
      CHECK(l.pass);
      CHECK(l.worst == l.worst);  // not NaN
    }
    CHECK(r.all_pass());
    CHECK(get(r, pa::law::orthogonality).limit == 2 * eps + eps * eps + 4 * u);
    CHECK(get(r, pa::law::relative_dependence_blocks).limit == 3 * eps + eps * eps + 3 * u);
    const double n = c.rotary_dim / 2 + 1.0;
    const double decay_tol = 2 * (n * 0x1p-42 + n * n * 0x1p-52);
    CHECK(get(r, pa::law::decay_below_origin).limit == -decay_tol);
    CHECK(get(r, pa::law::dyadic_means_decreasing).limit == -decay_tol);
    // norm_preservation's limit is (eps + (D + 8) u) ||x|| for the deciding sample, whose
    // entries lie in [-1, 1): so at most (eps + (D + 8) u) sqrt(D).
    const double norm_limit = get(r, pa::law::norm_preservation).limit;
    CHECK(norm_limit > 0.0);
    CHECK(norm_limit <= (eps + (c.head_dim + 8) * u) * std::sqrt(double(c.head_dim)));
  }
}

TEST_CASE("check: decay_below_origin's worst is f(1) - f(0) for d = 128, base 1e4 (MPFR)",
          "[check]") {
  const rope_config c{128, 128, 10000.0, rope_layout::half};
  const pa::check_report r = pa::check_laws(c, small_options());
  const double f1 = posenc_test::exact_decay_bound(10000.0, 128, 1);
  const pa::law_result& l = get(r, pa::law::decay_below_origin);
  // f(1) = 31.538 (published), f(0) = 32.5 exactly; the computed f(1) is within decay_error(64),
  // half of the limit's magnitude.
  CHECK(std::fabs(f1 - 31.538) <= 0.0005);
  CHECK(std::fabs(l.worst - (f1 - 32.5)) <= -l.limit / 2);
}

TEST_CASE("check: the counter-examples fail their law (one pair, equal frequencies, far means)",
          "[check]") {
  // One pair: |S_1| = 1 = f(0) for every r.
  {
    const pa::check_report r = pa::check_laws(rope_config{2, 2, 10000.0}, small_options());
    CHECK_FALSE(get(r, pa::law::decay_below_origin).pass);
    // f(r) = 1 = f(0) up to the evaluation error decay_error(1), half the limit's magnitude.
    CHECK(std::fabs(get(r, pa::law::decay_below_origin).worst) <=
          -get(r, pa::law::decay_below_origin).limit / 2);
    CHECK(get(r, pa::law::orthogonality).pass);
    CHECK(get(r, pa::law::relative_dependence).pass);
    CHECK_FALSE(r.all_pass());
  }
  // Two equal frequencies: R = 4, base 4 gives theta = 1, 1/2; longrope factors {1, 1/2} divide
  // them to 1, 1 (equal to within the double-double residue of the power, far below what the
  // evaluation of f resolves), so |S_2| = 2 and f(r) = 3/2 = f(0).
  {
    static constexpr std::array<double, 2> ext{1.0, 0.5};
    rope_config c{4, 4, 4.0, rope_layout::half};
    c.scaling = posenc::scaling::longrope(ext, ext, 4096, 4096);
    REQUIRE(posenc::validate(c) == posenc::rope_error::ok);
    const posenc::math::dd gap = posenc::inv_freq_dd(c, 1) - posenc::inv_freq_dd(c, 0);
    REQUIRE(std::fabs(gap.hi) <= 0x1p-90);
    const pa::check_report r = pa::check_laws(c, small_options());
    CHECK_FALSE(get(r, pa::law::decay_below_origin).pass);
    CHECK(get(r, pa::law::norm_preservation).pass);
  }
  // Dyadic means of d = 128, base 1e4: decreasing through k = 13, not through k = 14.
  {
    const rope_config c{128, 128, 10000.0, rope_layout::half};
    pa::check_options o = small_options();
    o.dyadic_windows = 13;
    CHECK(get(pa::check_laws(c, o), pa::law::dyadic_means_decreasing).pass);
    o.dyadic_windows = 14;
    const pa::law_result l = get(pa::check_laws(c, o), pa::law::dyadic_means_decreasing);
    CHECK_FALSE(l.pass);
    // M_14 - M_13 = 4.700 - 4.659 (published to 3 decimals).
    CHECK(std::fabs(l.worst - (4.700 - 4.659)) <= 0.001);
  }
}

TEST_CASE("check: the sample is deterministic and depends on the seed", "[check]") {
  const rope_config c{64, 64, 10000.0, rope_layout::interleaved};
  pa::check_options o = small_options();
  o.decay_distance = 16;
  o.dyadic_windows = 2;
  const pa::check_report a = pa::check_laws(c, o);
  const pa::check_report b = pa::check_laws(c, o);
  o.seed += 1;
  const pa::check_report d = pa::check_laws(c, o);
  bool differs = false;
  for (std::size_t i = 0; i < pa::law_count; ++i) {
    CHECK(a.laws[i].worst == b.laws[i].worst);
    CHECK(a.laws[i].limit == b.laws[i].limit);
    differs = differs || a.laws[i].limit != d.laws[i].limit || a.laws[i].worst != d.laws[i].worst;
  }
  CHECK(differs);
}
