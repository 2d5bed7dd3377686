// posenc/math/angle_grid.hpp: sincos_of_products and make_sincos_grid (the table builders) are
// bit-identical to sincos_of_product<T> for every entry, and hence correctly rounded against MPFR
// like it (checked again on a sample of a 2^20-entry table).
#include <posenc/math/angle_grid.hpp>
#include <posenc/math/pow.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <iostream>
#include <memory>
#include <vector>

#include "support/check.hpp"
#include "support/gen.hpp"
#include "support/mpfr_ref.hpp"
#include "support/rope.hpp"

namespace pm = posenc::math;
using namespace posenc_test;

TEST_CASE("sincos_of_products (table builder) equals sincos_of_product entry by entry", "[angle]") {
  std::uint64_t entries = 0;
  // RoPE frequencies, and arbitrary double-double theta (large ones too: the angle-addition
  // steps then cover many turns).
  const auto theta_gen = rc::gen::weightedOneOf<pm::dd>({
      {3, rc::gen::map(rope_arg(),
                       [](const RopeArg& a) { return pm::pow_ratio(a.base, -2 * a.i, a.R); })},
      {1, rc::gen::map(dd_arg(uniform(0.0, 4.0)),
                       [](DdArg t) {
                         return pm::dd{t.hi, t.lo};
                       })},
      {1, rc::gen::map(dd_arg(log_uniform(-60, 0, 0)),
                       [](DdArg t) {
                         return pm::dd{t.hi, t.lo};
                       })},
  });
  rc::prop("sincos_of_products == sincos_of_product<T>(p, theta) for every p < count", [&] {
    const pm::dd theta = *theta_gen;
    const auto count = static_cast<std::size_t>(*int_in(1, 4200));
    const auto stride = static_cast<std::size_t>(*int_in(1, 3));
    std::vector<float> cf(count * stride, -7.0f), sf(count * stride, -7.0f);
    std::vector<double> cd(count * stride, -7.0), sd(count * stride, -7.0);
    pm::sincos_of_products<float>(theta, count, cf.data(), sf.data(), stride);
    pm::sincos_of_products<double>(theta, count, cd.data(), sd.data(), stride);
    for (std::size_t p = 0; p < count; ++p) {
      const auto f = pm::sincos_of_product<float>(p, theta);
      const auto d = pm::sincos_of_product<double>(p, theta);
      if (!same_bits(f.cos, cf[p * stride]) || !same_bits(f.sin, sf[p * stride]) ||
          !same_bits(d.cos, cd[p * stride]) || !same_bits(d.sin, sd[p * stride])) {
        RC_FAIL("table entry differs: theta=" + hex_dd(theta.hi, theta.lo) +
                " p=" + std::to_string(p) + " table cos/sin " + hex(cf[p * stride]) + " " +
                hex(sf[p * stride]) + ", direct " + hex(f.cos) + " " + hex(f.sin));
      }
      // Entries between strides are left alone.
      for (std::size_t k = 1; k < stride; ++k) {
        RC_ASSERT(cf[p * stride + k] == -7.0f);
        RC_ASSERT(sd[p * stride + k] == -7.0);
      }
    }
    entries += count;
  });
  if (entries > 0)
    std::cout << "[accuracy] sincos_of_products vs sincos_of_product: " << entries
              << " entries compared (float and double)\n";
}

TEST_CASE(
    "sincos_of_products: a 2^20-entry float table, sampled entries equal the direct path "
    "and MPFR",
    "[angle][mpfr]") {
  // Large p exercise the table's angle-addition split (p = 64a + b with a up to 2^14).
  const std::size_t count = (std::size_t{1} << 20) + 37;
  RoundReport rs("sincos_of_products<float>, 2^20 entries, base 10000, R 128, i 5: sin (sample)");
  RoundReport rc_("sincos_of_products<float>, 2^20 entries, base 10000, R 128, i 5: cos (sample)");
  const pm::dd theta = pm::pow_ratio(10000.0, -10, 128);
  std::vector<float> cf(count), sf(count);
  pm::sincos_of_products<float>(theta, count, cf.data(), sf.data(), 1);
  Mpfr th, angle(kPrec + 64);
  set_pow_ratio(th, 10000.0, -10, 128);
  ExactSinCos ex;
  std::uint64_t mismatches = 0;
  for (std::size_t p = 0; p < count; p += (p < 4096 ? 1 : 97)) {
    const auto f = pm::sincos_of_product<float>(p, theta);
    if (!same_bits(f.cos, cf[p]) || !same_bits(f.sin, sf[p])) {
      ++mismatches;
      INFO("p=" << p << " table " << hex(cf[p]) << " " << hex(sf[p]) << " direct " << hex(f.cos)
                << " " << hex(f.sin));
      CHECK(false);
    }
    mpfr_mul_ui(angle, th, static_cast<unsigned long>(p), MPFR_RNDN);
    ex.set(angle);
    rs.check_near(sf[p], ex.s, ex.sin_near, [&] { return "p=" + std::to_string(p); });
    rc_.check_near(cf[p], ex.c, ex.cos_near, [&] { return "p=" + std::to_string(p); });
  }
  CHECK(mismatches == 0);
  INFO(rs.first_violations() << rc_.first_violations());
  CHECK(rs.violations() == 0);
  CHECK(rc_.violations() == 0);
}

namespace {

constexpr std::array<pm::dd, 5> kGridTheta{
    pm::pow_ratio(10000.0, 0, 128), pm::pow_ratio(10000.0, -2, 128),
    pm::pow_ratio(500000.0, -64, 128), pm::pow_ratio(10000.0, -126, 128),
    pm::pow_ratio(1234.5, -3, 7)};

template <class T, std::size_t P, std::size_t F>
std::size_t grid_mismatches(const pm::sincos_grid<T, P, F>& g, const std::array<pm::dd, F>& theta) {
  std::size_t bad = 0;
  for (std::size_t p = 0; p < P; ++p) {
    for (std::size_t i = 0; i < F; ++i) {
      const auto v = pm::sincos_of_product<T>(p, theta[i]);
      if (!same_bits(v.cos, g.cos[p * F + i]) || !same_bits(v.sin, g.sin[p * F + i])) {
        ++bad;
        UNSCOPED_INFO("grid entry p=" << p << " i=" << i << " differs");
      }
    }
  }
  return bad;
}

}  // namespace

TEST_CASE("make_sincos_grid equals sincos_of_product, at compile time and at run time",
          "[angle_grid]") {
  constexpr auto ct = pm::make_sincos_grid<float, 200, 5>(kGridTheta);
  CHECK(grid_mismatches(ct, kGridTheta) == 0);
  constexpr auto ctd = pm::make_sincos_grid<double, 70, 5>(kGridTheta);
  CHECK(grid_mismatches(ctd, kGridTheta) == 0);
  // At run time (heap-allocated: the grid is a large value), with theta read through volatile.
  std::array<pm::dd, 5> theta{};
  for (std::size_t i = 0; i < theta.size(); ++i) {
    volatile double hi = kGridTheta[i].hi;
    volatile double lo = kGridTheta[i].lo;
    theta[i] = {hi, lo};
  }
  auto rt = std::make_unique<pm::sincos_grid<float, 1000, 5>>();
  *rt = pm::make_sincos_grid<float, 1000, 5>(theta);
  CHECK(grid_mismatches(*rt, theta) == 0);
  std::size_t differ = 0;
  for (std::size_t k = 0; k < 200 * 5; ++k) {
    differ += same_bits(ct.cos[k], rt->cos[k]) && same_bits(ct.sin[k], rt->sin[k]) ? 0 : 1;
  }
  std::cout << "[constexpr] make_sincos_grid<float, 200, 5>: " << differ
            << " entries differ between compile time and run time\n";
  CHECK(differ == 0);
}
