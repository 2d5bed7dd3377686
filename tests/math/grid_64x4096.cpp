// The compile-time table of the compile-time-cost probe (benchmarks/compile_time): head_dim 128,
// base 10000, 64 frequencies x 4096 positions of float cos/sin, built by the compiler. Every entry
// must equal the run-time builder bit for bit, and a sample must be MPFR's correctly rounded float.
#include <posenc/math/angle_grid.hpp>
#include <posenc/math/pow.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <vector>

#include "support/check.hpp"
#include "support/mpfr_ref.hpp"
#include "support/rope.hpp"

namespace pm = posenc::math;
using namespace posenc_test;

namespace {
constexpr std::size_t kPositions = 4096;
constexpr std::size_t kPairs = 64;

constexpr std::array<pm::dd, kPairs> thetas() {
  std::array<pm::dd, kPairs> th{};
  for (std::size_t i = 0; i < kPairs; ++i)
    th[i] = pm::pow_ratio(10000.0, -2 * static_cast<std::int64_t>(i), 2 * kPairs);
  return th;
}

constexpr auto kGrid = pm::make_sincos_grid<float, kPositions, kPairs>(thetas());
}  // namespace

TEST_CASE("compile-time 64 x 4096 table == run-time builder, bit for bit", "[angle_grid][table]") {
  const auto th = thetas();
  std::vector<float> c(kPositions * kPairs), s(kPositions * kPairs);
  for (std::size_t i = 0; i < kPairs; ++i)
    pm::sincos_of_products<float>(th[i], kPositions, c.data() + i, s.data() + i, kPairs);
  std::size_t differ = 0;
  for (std::size_t k = 0; k < kPositions * kPairs; ++k)
    if (!same_bits(c[k], kGrid.cos[k]) || !same_bits(s[k], kGrid.sin[k])) ++differ;
  std::cout << "[table] 64 x 4096 float table: " << kPositions * kPairs << " entries, " << differ
            << " differ between compile time and run time\n";
  CHECK(differ == 0);
}

TEST_CASE("compile-time 64 x 4096 table: sampled entries are MPFR's correctly rounded floats",
          "[angle_grid][table][mpfr]") {
  RoundReport rs("constexpr 64 x 4096 table: sin (every 7th entry)");
  RoundReport rc_("constexpr 64 x 4096 table: cos (every 7th entry)");
  Mpfr theta, angle(kPrec + 64);
  ExactSinCos ex;
  for (std::size_t k = 0; k < kPositions * kPairs; k += 7) {
    const std::size_t p = k / kPairs;
    const std::size_t i = k % kPairs;
    set_pow_ratio(theta, 10000.0, -2 * static_cast<std::int64_t>(i), 2 * kPairs);
    mpfr_mul_ui(angle, theta, static_cast<unsigned long>(p), MPFR_RNDN);
    ex.set(angle);
    auto desc = [&] { return "p=" + std::to_string(p) + " i=" + std::to_string(i); };
    rs.check_near(kGrid.sin[k], ex.s, ex.sin_near, desc);
    rc_.check_near(kGrid.cos[k], ex.c, ex.cos_near, desc);
  }
  INFO(rs.first_violations() << rc_.first_violations());
  CHECK(rs.violations() == 0);
  CHECK(rc_.violations() == 0);
  CHECK(rs.count() >= 37000);
}
