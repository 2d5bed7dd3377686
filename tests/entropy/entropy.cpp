// posenc/analysis/entropy.hpp against closed forms (MPFR) and its laws:
// - zero logits: H = log L; two-level logits (m at a, L - m at 0): H = log Z - m a e^a / Z,
//   Z = m e^a + L - m; both in MPFR, within softmax_entropy_error;
// - attention_entropy: q = 0 gives log L; pass-through channels give exact two-level logits;
// - laws (RapidCheck): 0 <= H <= log L; H(s z) non-increasing in the sharpening factor s;
//   the estimator's L = 1 point is 0; a temperature that is 1 up to L changes nothing there;
// - the estimator's logits (angle recurrence) against attention_entropy (exact rotations) on the
//   same draws; determinism in the seed; broken rules named, nothing written.
#include <posenc/analysis/entropy.hpp>

#include <rapidcheck.h>
#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "support/mpfr_ref.hpp"

namespace {
namespace pa = posenc::analysis;
using posenc::rope_config;
using posenc::rope_layout;
using posenc_test::Mpfr;
namespace temperature = posenc::temperature;

double mpfr_log_of(std::uint64_t n) {
  Mpfr x;
  mpfr_set_ui(x, n, MPFR_RNDN);
  mpfr_log(x, x, MPFR_RNDN);
  return mpfr_get_d(x, MPFR_RNDN);
}

// H of m logits a and L - m logits 0, in MPFR, rounded to double.
double two_level(std::uint64_t L, std::uint64_t m, double a) {
  Mpfr ea, z, t;
  mpfr_set_d(ea, a, MPFR_RNDN);
  mpfr_exp(ea, ea, MPFR_RNDN);
  mpfr_mul_ui(z, ea, m, MPFR_RNDN);
  mpfr_add_ui(z, z, L - m, MPFR_RNDN);  // Z
  mpfr_mul_ui(t, ea, m, MPFR_RNDN);
  mpfr_mul_d(t, t, a, MPFR_RNDN);
  mpfr_div(t, t, z, MPFR_RNDN);
  mpfr_log(z, z, MPFR_RNDN);
  mpfr_sub(z, z, t, MPFR_RNDN);
  return mpfr_get_d(z, MPFR_RNDN);
}

double range_of(const std::vector<double>& z, double s) {
  const auto [lo, hi] = std::minmax_element(z.begin(), z.end());
  return s * (*hi - *lo);
}
double max_abs(const std::vector<double>& z, double s) {
  double m = 0.0;
  for (double v : z) m = std::max(m, std::fabs(s * v));
  return m;
}

const rope_config kSmall{8, 8, 10000.0, rope_layout::half, posenc::scaling::none()};

}  // namespace

TEST_CASE("entropy: zero logits give log L", "[entropy][closed]") {
  for (std::uint64_t L : {1ull, 2ull, 3ull, 1000ull, 65537ull}) {
    const std::vector<double> z(L, 0.0);
    const double err = pa::softmax_entropy_error(L, 0.0, 0.0);
    CHECK(std::fabs(pa::softmax_entropy(z) - mpfr_log_of(L)) <= err + 0x1p-53 * 12.0);
    const std::vector<double> c(L, 3.5);  // equal logits, any value
    CHECK(std::fabs(pa::softmax_entropy(c, 2.0) - mpfr_log_of(L)) <=
          pa::softmax_entropy_error(L, 0.0, 7.0) + 0x1p-53 * 12.0);
  }
}

TEST_CASE("entropy: two-level logits == the closed form (MPFR)", "[entropy][closed]") {
  for (std::uint64_t L : {2ull, 10ull, 4096ull}) {
    for (const std::uint64_t m : std::initializer_list<std::uint64_t>{1, L / 2, L - 1}) {
      for (double a : {-30.0, -1.0, 0.25, 2.0, 40.0}) {
        std::vector<double> z(L, 0.0);
        for (std::uint64_t j = 0; j < m; ++j) z[j * (L / m) % L] = a;
        INFO("L " << L << " m " << m << " a " << a);
        CHECK(std::fabs(pa::softmax_entropy(z) - two_level(L, m, a)) <=
              pa::softmax_entropy_error(L, std::fabs(a), std::fabs(a)) + 0x1p-53 * 12.0);
      }
    }
  }
}

TEST_CASE("entropy: attention_entropy for given q and keys", "[entropy][given]") {
  // head_dim 4, rotary_dim 2: channels 2 and 3 pass through; sqrt(4) = 2.
  const rope_config c{4, 2, 10000.0, rope_layout::half, posenc::scaling::none()};
  const std::uint64_t L = 50;
  std::vector<double> keys(L * 4, 0.0);
  std::vector<std::uint64_t> pos(L);
  for (std::uint64_t j = 0; j < L; ++j) pos[j] = j * 7;
  double h = -1.0;
  const std::vector<double> zero_q(4, 0.0);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = 0.25 * static_cast<double>(i % 9);
  REQUIRE(pa::attention_entropy(c, temperature::none(), zero_q, 400, keys, pos, h) ==
          pa::entropy_error::ok);
  CHECK(std::fabs(h - mpfr_log_of(L)) <= pa::softmax_entropy_error(L, 0.0, 0.0) + 0x1p-50);
  // q = (0, 0, 2, 0); keys with channel 2 = 3 on every fifth key, 0 elsewhere: logits 3 and 0.
  std::fill(keys.begin(), keys.end(), 0.0);
  for (std::uint64_t j = 0; j < L; j += 5) keys[j * 4 + 2] = 3.0;
  const std::vector<double> q{0.0, 0.0, 2.0, 0.0};
  REQUIRE(pa::attention_entropy(c, temperature::none(), q, 400, keys, pos, h) ==
          pa::entropy_error::ok);
  CHECK(std::fabs(h - two_level(L, 10, 3.0)) <= pa::softmax_entropy_error(L, 3.0, 3.0) + 0x1p-50);
  // Llama-4 temperature at floor_scale 100: s(400) = 1 + 0.5 log 5: logits 3 s and 0.
  const auto t = temperature::llama4(100.0, 0.5);
  REQUIRE(pa::attention_entropy(c, t, q, 400, keys, pos, h) == pa::entropy_error::ok);
  const double s = posenc::query_scale<double>(t, 400);
  CHECK(std::fabs(h - two_level(L, 10, 3.0 * s)) <=
        pa::softmax_entropy_error(L, 3.0 * s, 3.0 * s) + 0x1p-48);
}

TEST_CASE("entropy: laws on random logits", "[entropy][laws]") {
  rc::prop("0 <= H <= log L, H non-increasing in the sharpening factor", [] {
    const auto ints =
        *rc::gen::nonEmpty(rc::gen::container<std::vector<int>>(rc::gen::inRange(-4000, 4000)));
    std::vector<double> z(ints.size());
    for (std::size_t i = 0; i < z.size(); ++i) z[i] = ints[i] / 100.0;
    const double s1 = *rc::gen::inRange(0, 400) / 100.0;
    const double s2 = s1 + *rc::gen::inRange(0, 400) / 100.0;
    const std::size_t L = z.size();
    const double h1 = pa::softmax_entropy(z, s1);
    const double h2 = pa::softmax_entropy(z, s2);
    const double e1 = pa::softmax_entropy_error(L, range_of(z, s1), max_abs(z, s1));
    const double e2 = pa::softmax_entropy_error(L, range_of(z, s2), max_abs(z, s2));
    const double log_l = mpfr_log_of(L);
    RC_ASSERT(h1 >= -e1);
    RC_ASSERT(h1 <= log_l + e1 + 0x1p-53 * log_l);
    RC_ASSERT(h2 <= h1 + e1 + e2);
  });
}

TEST_CASE("entropy: the estimate is non-increasing in the temperature", "[entropy][laws]") {
  rc::prop("llama4 attn_scale a1 <= a2: E[H] at a2 <= E[H] at a1, each L", [] {
    const double a1 = *rc::gen::inRange(0, 200) / 100.0;
    const double a2 = a1 + *rc::gen::inRange(0, 200) / 100.0;
    const double fs = *rc::gen::inRange(1, 64) * 1.0;
    const std::uint64_t seed = *rc::gen::arbitrary<std::uint64_t>();
    const std::uint64_t lengths[] = {1, 17, 100, 333};
    std::vector<pa::entropy_point> p1(4), p2(4);
    const pa::entropy_options o{3, seed, 2.0};
    RC_ASSERT(pa::expected_entropy(kSmall, temperature::llama4(fs, a1), lengths, o, p1) ==
              pa::entropy_error::ok);
    RC_ASSERT(pa::expected_entropy(kSmall, temperature::llama4(fs, a2), lengths, o, p2) ==
              pa::entropy_error::ok);
    for (std::size_t n = 0; n < 4; ++n) {
      RC_ASSERT(p2[n].query_scale >= p1[n].query_scale);
      // Per draw H(s2 z) <= H(s1 z) up to both rounding bounds; the scaled logits stay far
      // below 10^3 here (8 channels of N(0, 4) products / sqrt(8), s <= 1 + 2 log 334).
      RC_ASSERT(p2[n].mean <= p1[n].mean + 2.0 * pa::softmax_entropy_error(333, 1e3, 1e3));
    }
  });
}

TEST_CASE("entropy: the estimator's logits == exact rotations", "[entropy][estimator]") {
  // Same draws through attention_entropy: the query at L - 1, the same k at every position.
  const rope_config configs[] = {
      kSmall,
      {16, 12, 500000.0, rope_layout::interleaved, posenc::scaling::yarn(4.0, 256)},
      {8, 8, 10000.0, rope_layout::half, posenc::scaling::dynamic(2.0, 128)},
  };
  for (const rope_config& c : configs) {
    for (std::uint64_t L : {1ull, 7ull, 300ull, 700ull}) {
      const pa::entropy_options o{1, 99, 1.5};
      const std::uint64_t lengths[] = {L};
      pa::entropy_point pt;
      REQUIRE(pa::expected_entropy(c, temperature::logn(64), lengths, o,
                                   std::span<pa::entropy_point>(&pt, 1)) == pa::entropy_error::ok);
      std::vector<double> qk(2 * c.head_dim + 1);
      pa::entropy_detail::gaussians(99, 0, 1.5, qk);
      std::vector<double> keys(L * c.head_dim);
      std::vector<std::uint64_t> pos(L);
      for (std::uint64_t j = 0; j < L; ++j) {
        pos[j] = j;
        std::copy(qk.begin() + c.head_dim, qk.begin() + 2 * c.head_dim,
                  keys.begin() + static_cast<std::ptrdiff_t>(j * c.head_dim));
      }
      double h = -1.0;
      REQUIRE(pa::attention_entropy(c, temperature::logn(64),
                                    std::span<const double>(qk.data(), c.head_dim), L - 1, keys,
                                    pos, h) == pa::entropy_error::ok);
      // Logits differ by the recurrence (< 2^-42 per cos/sin, times sum |a_i| + |b_i| <= 100)
      // and the rounding of the rotated vectors: |dH| <= range * max |dz| < 2^-30.
      INFO("L " << L);
      CHECK(std::fabs(pt.mean - h) <= 0x1p-30);
      CHECK(pt.std_error == 0.0);
      CHECK(pt.log_length == std::log(static_cast<double>(L)));
      if (L == 1) CHECK(pt.mean == 0.0);
    }
  }
}

TEST_CASE("entropy: the estimate, its seed and the temperature", "[entropy][estimator]") {
  const std::uint64_t lengths[] = {1, 64, 256, 1024};
  std::vector<pa::entropy_point> a(4), b(4), t(4);
  const pa::entropy_options o{8, 5, 1.0};
  REQUIRE(pa::expected_entropy(kSmall, temperature::none(), lengths, o, a) ==
          pa::entropy_error::ok);
  REQUIRE(pa::expected_entropy(kSmall, temperature::none(), lengths, o, b) ==
          pa::entropy_error::ok);
  REQUIRE(pa::expected_entropy(kSmall, temperature::logn(64), lengths, o, t) ==
          pa::entropy_error::ok);
  for (std::size_t n = 0; n < 4; ++n) {
    CHECK(a[n].mean == b[n].mean);
    CHECK(a[n].mean <= a[n].log_length + 1e-12);
    CHECK(a[n].length == lengths[n]);
    CHECK((a[n].std_error > 0.0) == (n > 0));
  }
  // logn(64) is 1 up to L = 64 and sharpens past it: equal there, strictly lower after.
  CHECK(t[1].mean == a[1].mean);
  CHECK(t[1].query_scale == 1.0);
  CHECK(t[2].mean < a[2].mean);
  CHECK(t[3].mean < a[3].mean);
  CHECK(t[3].query_scale == 10.0 / 6.0);
}

TEST_CASE("entropy: broken rules are named and nothing is written", "[entropy][rules]") {
  using E = pa::entropy_error;
  const std::uint64_t ok_len[] = {16};
  const std::uint64_t zero_len[] = {0};
  const std::uint64_t long_len[] = {pa::max_entropy_length + 1};
  rope_config bad = kSmall;
  bad.rotary_dim = 7;
  const pa::entropy_point sentinel{12345, -7.0, -7.0, -7.0, -7.0};
  auto run = [&](const rope_config& c, const posenc::attention_temperature& t,
                 std::span<const std::uint64_t> L, pa::entropy_options o) {
    std::vector<pa::entropy_point> out(L.size(), sentinel);
    const E e = pa::expected_entropy(c, t, L, o, out);
    for (const auto& p : out) CHECK((p.length == 12345 && p.mean == -7.0));
    return e;
  };
  CHECK(run(bad, temperature::none(), ok_len, {}) == E::rope);
  CHECK(run(kSmall, temperature::logn(1), ok_len, {}) == E::temperature);
  CHECK(run(kSmall, temperature::none(), ok_len, {0, 1, 1.0}) == E::samples);
  CHECK(run(kSmall, temperature::none(), ok_len, {70000, 1, 1.0}) == E::samples);
  CHECK(run(kSmall, temperature::none(), ok_len, {1, 1, 0.0}) == E::qk_std);
  CHECK(run(kSmall, temperature::none(), ok_len, {1, 1, NAN}) == E::qk_std);
  CHECK(run(kSmall, temperature::none(), zero_len, {}) == E::length);
  CHECK(run(kSmall, temperature::none(), long_len, {}) == E::length);
  for (E e : {E::rope, E::temperature, E::samples, E::qk_std, E::length, E::shape})
    CHECK(std::string(pa::message(e)).rfind("posenc: ", 0) == 0);
  double h = -9.0;
  const std::vector<double> q(8, 1.0), keys(16, 1.0);
  const std::vector<std::uint64_t> pos{0, 1};
  const std::vector<std::uint64_t> pos3{0, 1, 2};
  const std::vector<std::uint64_t> far{0, std::uint64_t{1} << 32};
  CHECK(pa::attention_entropy(kSmall, temperature::none(), q, 3, keys, pos3, h) == E::shape);
  CHECK(pa::attention_entropy(kSmall, temperature::none(), q, 3, keys, far, h) == E::shape);
  CHECK(pa::attention_entropy(kSmall, temperature::none(), std::span<const double>(q).first(7), 3,
                              keys, pos, h) == E::shape);
  CHECK(pa::attention_entropy(bad, temperature::none(), q, 3, keys, pos, h) == E::rope);
  CHECK(h == -9.0);
  REQUIRE(pa::attention_entropy(kSmall, temperature::none(), q, 3, keys, pos, h) == E::ok);
  CHECK((h > 0.0 && h < std::log(2.0)));  // two keys, rotated by different angles
}
