// posenc/tables/rotation.hpp on random configurations (every scaling, both layouts, partial
// rotary): the dense R_m is block-diagonal in the layout's pairs with identity beyond rotary_dim;
// dense R_m x equals the per-pair apply_rotation by value; the two layouts are conjugate by the
// channel permutation; R_m^T R_m = I, |R_m x| = |x| and R_m^T R_n = R_{n-m} within the error
// bounds derived in proofs/tables.cpp; the pairs' cos and sin are correctly rounded (MPFR) and
// carry no attention factor; invalid configs are rejected without writing anything.
//
// Bounds (u = 2^-53; double matrices, double arithmetic), from proofs/tables.cpp:
//   |R^T R - I| <= 4.5u entrywise; |R_m^T R_n - R_{n-m}| <= 5.5u entrywise;
//   | |R x|^2 - |x|^2 | <= (2D + 8) u |x|^2.
// For float entries (u_f = 2^-24) evaluated in double: c^2 + s^2 lies within 2u_f + u_f^2 of 1,
// the products are exact in double and the sum adds u (1 + 2u_f): |c^2 + s^2 - 1| <= 2^-23 + 2^-47.
#include <posenc/tables.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "support/check.hpp"
#include "support/gen.hpp"
#include "support/mpfr_ref.hpp"
#include "support/random_rope.hpp"
#include "support/rope.hpp"

namespace pm = posenc::math;
using posenc::rope_config;
using posenc::rope_error;
using posenc::rope_layout;
using namespace posenc_test;

namespace {

constexpr double u = 0x1p-53;
constexpr double kOrthoTol = 4.5 * u;
constexpr double kShiftTol = 5.5 * u;
constexpr double kFloatBlockTol = 0x1p-23 + 0x1p-47;

// The pair index and partner of channel k < R, restated from docs/formulas.md §1.
std::size_t pair_of(const rope_config& c, std::size_t k) {
  return c.layout == rope_layout::interleaved ? k / 2 : k % (c.rotary_dim / 2);
}
std::size_t partner_of(const rope_config& c, std::size_t k) {
  if (c.layout == rope_layout::interleaved) return k % 2 == 0 ? k + 1 : k - 1;
  const std::size_t h = c.rotary_dim / 2;
  return k < h ? k + h : k - h;
}
std::size_t to_half(const rope_config& c, std::size_t k) {
  if (k >= c.rotary_dim) return k;
  return k % 2 == 0 ? k / 2 : k / 2 + c.rotary_dim / 2;
}

// a * b rounded once, never contracted with the following addition.
template <class T>
T product(T a, T b) {
  volatile T p = a * b;
  return p;
}

// sum_k R[row][k] x[k], from +0 in increasing k, in T.
template <class T>
std::vector<T> dense_apply(const std::vector<T>& r, const std::vector<T>& x) {
  const std::size_t d = x.size();
  std::vector<T> y(d);
  for (std::size_t row = 0; row < d; ++row) {
    T acc = T(0);
    for (std::size_t k = 0; k < d; ++k) acc = acc + product(r[row * d + k], x[k]);
    y[row] = acc;
  }
  return y;
}

// Whether R (head_dim^2, row-major) is exactly: 1 on the diagonal beyond R, [[c, -s], [s, c]] on
// the layout's pairs with the given cos/sin, 0 elsewhere. Returns a description of the first
// mismatch, or "".
template <class T>
std::string structure_mismatch(const rope_config& c, const std::vector<T>& r,
                               const std::vector<pm::sincos_result<T>>& v) {
  const std::size_t d = c.head_dim;
  for (std::size_t row = 0; row < d; ++row) {
    for (std::size_t k = 0; k < d; ++k) {
      T want = T(0);
      if (row >= c.rotary_dim) {
        want = k == row ? T(1) : T(0);
      } else if (k == row) {
        want = v[pair_of(c, row)].cos;
      } else if (k == partner_of(c, row)) {
        want = row < k ? -v[pair_of(c, row)].sin : v[pair_of(c, row)].sin;
      }
      if (!same_bits(r[row * d + k], want))
        return "entry (" + std::to_string(row) + ", " + std::to_string(k) + ") is " +
               hex(r[row * d + k]) + ", expected " + hex(want);
    }
  }
  return "";
}

// Largest |(R^T R)_jk - delta_jk| over the matrix, each dot product in double over all rows.
double orthogonality_error(std::size_t d, const std::vector<double>& r) {
  double worst = 0.0;
  for (std::size_t j = 0; j < d; ++j) {
    for (std::size_t k = 0; k < d; ++k) {
      double acc = 0.0;
      for (std::size_t l = 0; l < d; ++l) acc = acc + product(r[l * d + j], r[l * d + k]);
      worst = std::max(worst, std::abs(acc - (j == k ? 1.0 : 0.0)));
    }
  }
  return worst;
}

template <class T>
std::vector<T> random_vector(std::size_t d) {
  std::vector<T> x(d);
  for (T& v : x) v = static_cast<T>(*uniform(-4.0, 4.0));
  return x;
}

// Worst ratios to the bounds, for the summary lines.
struct Worst {
  double ortho = 0.0;
  double shift = 0.0;
  double norm = 0.0;
  double float_block = 0.0;
  std::uint64_t matrices = 0;
};

}  // namespace

TEST_CASE("tables/rotation matrices on random configs: structure, dense == apply, layouts",
          "[tables][rotation]") {
  Worst w;
  rc::prop(
      "R_m is the layout's block rotation; R_m x == apply_rotation; R_half = P R_int P^T", [&] {
        const RandomRope rr = *random_rope(40);
        const rope_config& c = rr.config;
        const std::uint64_t m = *position(32);
        const std::size_t d = c.head_dim;
        const std::size_t pairs = c.rotary_dim / 2;

        // Pair form: cos/sin correctly rounded, no attention factor; layout channels.
        std::vector<posenc::pair_rotation<double>> pd(pairs);
        std::vector<posenc::pair_rotation<float>> pf(pairs);
        RC_ASSERT(posenc::rotation_pairs<double>(c, m, pd.data(), rr.seq_len) == rope_error::ok);
        RC_ASSERT(posenc::rotation_pairs<float>(c, m, pf.data(), rr.seq_len) == rope_error::ok);
        std::vector<pm::sincos_result<double>> vd(pairs);
        std::vector<pm::sincos_result<float>> vf(pairs);
        for (std::size_t i = 0; i < pairs; ++i) {
          const pm::dd theta = posenc::inv_freq_dd(c, static_cast<std::uint32_t>(i), rr.seq_len);
          vd[i] = pm::sincos_of_product<double>(m, theta);
          vf[i] = pm::sincos_of_product<float>(m, theta);
          RC_ASSERT(same_bits(pd[i].cos, vd[i].cos) && same_bits(pd[i].sin, vd[i].sin));
          RC_ASSERT(same_bits(pf[i].cos, vf[i].cos) && same_bits(pf[i].sin, vf[i].sin));
          RC_ASSERT(pd[i].first < pd[i].second);
          RC_ASSERT(pair_of(c, pd[i].first) == i);
          RC_ASSERT(partner_of(c, pd[i].first) == pd[i].second);
          RC_ASSERT(pf[i].first == pd[i].first && pf[i].second == pd[i].second);
          const double cf = vf[i].cos;
          const double sf = vf[i].sin;
          w.float_block =
              std::max(w.float_block, std::abs(cf * cf + sf * sf - 1.0) / kFloatBlockTol);
        }

        // Dense form, double and float: exactly the blocks above.
        std::vector<double> rd(d * d, -7.0);
        std::vector<float> rf(d * d, -7.0f);
        RC_ASSERT(posenc::rotation_matrix<double>(c, m, rd.data(), rr.seq_len) == rope_error::ok);
        RC_ASSERT(posenc::rotation_matrix<float>(c, m, rf.data(), rr.seq_len) == rope_error::ok);
        const std::string sd = structure_mismatch(c, rd, vd);
        const std::string sf = structure_mismatch(c, rf, vf);
        if (!sd.empty()) RC_FAIL("double R_m: " + sd);
        if (!sf.empty()) RC_FAIL("float R_m: " + sf);

        // Dense product == apply_rotation (by value: only zero signs may differ), in place
        // too.
        const auto xd = random_vector<double>(d);
        const auto xf = random_vector<float>(d);
        std::vector<double> yd(d);
        std::vector<float> yf(d);
        RC_ASSERT(posenc::apply_rotation<double>(c, m, xd.data(), yd.data(), rr.seq_len) ==
                  rope_error::ok);
        RC_ASSERT(posenc::apply_rotation<float>(c, m, xf.data(), yf.data(), rr.seq_len) ==
                  rope_error::ok);
        RC_ASSERT(dense_apply(rd, xd) == yd);
        RC_ASSERT(dense_apply(rf, xf) == yf);
        std::vector<float> zf = xf;
        RC_ASSERT(posenc::apply_rotation<float>(c, m, zf.data(), zf.data(), rr.seq_len) ==
                  rope_error::ok);
        RC_ASSERT(zf == yf);
        for (std::size_t k = c.rotary_dim; k < d; ++k) RC_ASSERT(same_bits(yf[k], xf[k]));

        // Orthogonality and norm preservation (double).
        w.ortho = std::max(w.ortho, orthogonality_error(d, rd) / kOrthoTol);
        double nx = 0.0;
        double ny = 0.0;
        for (std::size_t k = 0; k < d; ++k) {
          nx += xd[k] * xd[k];
          ny += yd[k] * yd[k];
        }
        const double norm_tol = (2.0 * static_cast<double>(d) + 8.0) * u;
        w.norm = std::max(w.norm, std::abs(ny - nx) / (norm_tol * nx));

        // The other layout: the same matrix up to the channel permutation.
        rope_config other = c;
        other.layout = c.layout == rope_layout::half ? rope_layout::interleaved : rope_layout::half;
        std::vector<double> ro(d * d);
        RC_ASSERT(posenc::rotation_matrix<double>(other, m, ro.data(), rr.seq_len) ==
                  rope_error::ok);
        const rope_config& ci = c.layout == rope_layout::interleaved ? c : other;
        const std::vector<double>& ri = c.layout == rope_layout::interleaved ? rd : ro;
        const std::vector<double>& rh = c.layout == rope_layout::interleaved ? ro : rd;
        for (std::size_t row = 0; row < d; ++row)
          for (std::size_t k = 0; k < d; ++k)
            RC_ASSERT(same_bits(rh[to_half(ci, row) * d + to_half(ci, k)], ri[row * d + k]));
        ++w.matrices;
      });
  if (w.matrices > 0) {
    std::cout << "[accuracy] rotation matrices (" << w.matrices
              << " random configs): worst |R^T R - I| = " << w.ortho
              << " x bound (4.5 * 2^-53); worst | |Rx|^2 - |x|^2 | = " << w.norm
              << " x bound ((2D + 8) * 2^-53 |x|^2); worst float |c^2 + s^2 - 1| = "
              << w.float_block << " x bound (2^-23 + 2^-47)\n";
  }
  CHECK(w.ortho <= 1.0);
  CHECK(w.norm <= 1.0);
  CHECK(w.float_block <= 1.0);
}

TEST_CASE("tables/relative-only dependence: R_m^T R_n = R_{n-m}", "[tables][rotation]") {
  // On the pair form: the non-zero entries of R_m^T R_n are, per pair, c_m c_n + s_m s_n and
  // c_m s_n - s_m c_n (and their negatives), which must equal cos and sin of (n - m) theta_i as
  // in R_{n-m}. Summing the zeros of the dense product would not change these values.
  double worst = 0.0;
  std::uint64_t pairs_checked = 0;
  rc::prop("R_m^T R_n == R_{n-m} within 5.5 * 2^-53", [&] {
    const RandomRope rr = *random_rope(256);
    const rope_config& c = rr.config;
    const std::uint64_t a = *position(32);
    const std::uint64_t b = *position(32);
    const std::uint64_t m = std::min(a, b);
    const std::uint64_t n = std::max(a, b);
    const std::size_t pairs = c.rotary_dim / 2;
    std::vector<posenc::pair_rotation<double>> rm(pairs), rn(pairs), rdiff(pairs);
    RC_ASSERT(posenc::rotation_pairs<double>(c, m, rm.data(), rr.seq_len) == rope_error::ok);
    RC_ASSERT(posenc::rotation_pairs<double>(c, n, rn.data(), rr.seq_len) == rope_error::ok);
    RC_ASSERT(posenc::rotation_pairs<double>(c, n - m, rdiff.data(), rr.seq_len) == rope_error::ok);
    for (std::size_t i = 0; i < pairs; ++i) {
      const double cc = product(rm[i].cos, rn[i].cos) + product(rm[i].sin, rn[i].sin);
      const double sc = product(rm[i].cos, rn[i].sin) - product(rm[i].sin, rn[i].cos);
      const double e = std::max(std::abs(cc - rdiff[i].cos), std::abs(sc - rdiff[i].sin));
      worst = std::max(worst, e / kShiftTol);
      if (e > kShiftTol)
        RC_FAIL(describe(c, rr.seq_len) + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
                " pair " + std::to_string(i) + ": error " + log2_str(e));
    }
    pairs_checked += pairs;
  });
  if (pairs_checked > 0)
    std::cout << "[accuracy] R_m^T R_n = R_{n-m}: " << pairs_checked
              << " pairs, worst error = " << worst << " x bound (5.5 * 2^-53)\n";
}

TEST_CASE("tables/rotation pairs: cos and sin correctly rounded, no attention factor",
          "[tables][rotation][mpfr]") {
  RoundReport fc("rotation_pairs<float>: cos"), fs("rotation_pairs<float>: sin");
  RoundReport dc("rotation_pairs<double>: cos"), ds("rotation_pairs<double>: sin");
  rc::prop("rotation_pairs entries are cos/sin(m theta_i) rounded once", [&] {
    const RandomRope rr = *random_rope(256);
    const rope_config& c = rr.config;
    const std::size_t pairs = c.rotary_dim / 2;
    std::vector<posenc::pair_rotation<float>> pf(pairs);
    std::vector<posenc::pair_rotation<double>> pd(pairs);
    for (int t = 0; t < 4; ++t) {
      const std::uint64_t m = *position(32);
      RC_ASSERT(posenc::rotation_pairs<float>(c, m, pf.data(), rr.seq_len) == rope_error::ok);
      RC_ASSERT(posenc::rotation_pairs<double>(c, m, pd.data(), rr.seq_len) == rope_error::ok);
      const auto i = static_cast<std::size_t>(*int_in(0, static_cast<std::int64_t>(pairs) - 1));
      const pm::dd theta = posenc::inv_freq_dd(c, static_cast<std::uint32_t>(i), rr.seq_len);
      ExactSinCos ex;  // attention factor 1
      ex.set_entry(m, theta.hi, theta.lo);
      auto desc = [&] {
        return describe(c, rr.seq_len) + " m=" + std::to_string(m) + " i=" + std::to_string(i);
      };
      fc.check_near(pf[i].cos, ex.c, ex.cos_near, desc);
      fs.check_near(pf[i].sin, ex.s, ex.sin_near, desc);
      dc.check_near(pd[i].cos, ex.c, ex.cos_near_double, desc);
      ds.check_near(pd[i].sin, ex.s, ex.sin_near_double, desc);
    }
    assert_batch(fc, fs, dc, ds);
  });
  INFO(first_violations_of(fc, fs, dc, ds));
  CHECK(violations_of(fc, fs, dc, ds) == 0);
}

TEST_CASE("tables/runtime caches with attention factor 1 are the rotation's cos and sin",
          "[tables][rotation][cache]") {
  rc::prop("cache entry (p, i) == rotation_pairs(c, p)[i] when the attention factor is 1", [] {
    const RandomRope rr = *random_rope(128);
    const rope_config& c = rr.config;
    RC_PRE((posenc::attention_factor_dd(c) == pm::dd{1.0, 0.0}));
    const auto cache = posenc::runtime_rope_cache<float>::make(c, 80, rr.seq_len);
    std::vector<posenc::pair_rotation<float>> pf(cache.pairs());
    for (std::size_t p = 0; p < 80; p += 13) {
      RC_ASSERT(posenc::rotation_pairs<float>(c, p, pf.data(), rr.seq_len) == rope_error::ok);
      for (std::size_t i = 0; i < cache.pairs(); ++i)
        RC_ASSERT(same_bits(cache.cos_at(p, i), pf[i].cos) &&
                  same_bits(cache.sin_at(p, i), pf[i].sin));
    }
  });
}

TEST_CASE("tables/rotation functions reject invalid configs without writing",
          "[tables][rotation][errors]") {
  rc::prop("rotation_pairs, rotation_matrix and apply_rotation return the broken rule", [] {
    const rope_config c = *invalid_rope();
    const rope_error e = posenc::validate(c);
    RC_ASSERT(e != rope_error::ok);
    constexpr double kSentinel = -12345.0;
    // Larger than anything a (wrong) write could touch for these configs (head_dim <= 66).
    std::vector<double> buf(70 * 70, kSentinel);
    std::vector<double> y(70, kSentinel);
    const std::vector<double> x(70, 1.0);
    std::vector<posenc::pair_rotation<double>> pairs(70, {kSentinel, kSentinel, 7, 7});
    RC_ASSERT(posenc::rotation_matrix<double>(c, 5, buf.data()) == e);
    RC_ASSERT(posenc::apply_rotation<double>(c, 5, x.data(), y.data()) == e);
    RC_ASSERT(posenc::rotation_pairs<double>(c, 5, pairs.data()) == e);
    RC_ASSERT(std::all_of(buf.begin(), buf.end(), [](double v) { return v == kSentinel; }));
    RC_ASSERT(std::all_of(y.begin(), y.end(), [](double v) { return v == kSentinel; }));
    for (const auto& p : pairs) RC_ASSERT(p.cos == kSentinel && p.first == 7u);
  });
}

TEST_CASE("tables/array forms: a failed precondition at run time gives NaN", "[tables][rotation]") {
  volatile std::uint32_t head_dim = 16;  // not the D = 8 below
  const rope_config c{head_dim, 8, 10000.0, rope_layout::half};
  const auto r = posenc::rotation_matrix<double, 8>(c, 3);
  CHECK(std::all_of(r.begin(), r.end(), [](double v) { return std::isnan(v); }));
  const auto p = posenc::rotation_pairs<float, 3>(c, 3);  // R/2 is 4
  CHECK(std::all_of(p.begin(), p.end(),
                    [](const auto& q) { return std::isnan(q.cos) && std::isnan(q.sin); }));
  const rope_config ok{8, 8, 10000.0, rope_layout::half};
  const auto good = posenc::rotation_matrix<double, 8>(ok, 3);
  std::vector<double> want(64);
  REQUIRE(posenc::rotation_matrix<double>(ok, 3, want.data()) == rope_error::ok);
  CHECK(std::equal(good.begin(), good.end(), want.begin()));
}
