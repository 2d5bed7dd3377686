// Accuracy of the RoPE kernels (float32 storage) against exact mathematics (MPFR, 256 bits), for
// positions from 0 to 10^6 (and 2^20 - 1, 2^20 just past it):
//   - three configurations: Llama-2 style (head_dim 128, base 1e4, half layout, theta_i exact from
//     MPFR as base^(-2i/R)); llama3 scaling x8 (base 5e5, interleaved); partial rotary (R = 32 of
//     128, base 1e6, half) with YaRN x4 and its attention factor 1.1386. For the scaled
//     configurations theta_i and the attention factor are the library's double-double values
//     (inv_freq_dd, attention_factor_dd), correct to ~2^-100 relative (tests/frequencies checks
//     them against MPFR); the angle is p times that value exactly, and everything after it is MPFR.
//   - positions below 4096 read the table, the others are computed on the fly (make_rope_table
//     with a fallback configuration); a table that is on-the-fly only gives the same bits
//     everywhere, and its rows equal the cache's rows for all 4096 cached positions.
//   - every output element is within its a-priori bound (common.hpp: <= 3 sqrt(2) af 2^-24 +
//     O(2^-48) for |x| <= 1, i.e. 2.53e-7 for af = 1), hence within the issue's 5e-7; the table
//     values read back through the kernel are within (2^-24 + 2^-89) relative of exact.
//   - negative control: HF's float32 angle fl32(fl32(p) fl32(theta_i)) with cosf/sinf exceeds
//     5e-7 (by orders of magnitude) at large positions, so the check can fail.
// The measured maxima are printed (stdout) per position range.
#include <posenc/frequencies/rope.hpp>
#include <posenc/kernels/rope.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/tables/runtime_rope_cache.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common.hpp"
#include "support/check.hpp"
#include "support/mpfr_ref.hpp"

using namespace posenc_test;
using namespace posenc_test::kacc;
using posenc::rope_config;
using posenc::rope_layout;

namespace {

constexpr std::size_t kCached = 4096;  // table rows; positions at or past this are on the fly
constexpr std::size_t kHeads = 4;

struct Config {
  const char* name;
  rope_config cfg;
  bool theta_from_mpfr;  // theta_i = base^(-2i/R) in MPFR (unscaled only)
};

std::vector<Config> configs() {
  return {
      {"hd128 R128 base1e4 half",
       {128, 128, 10000.0, rope_layout::half, posenc::scaling::none()},
       true},
      {"hd128 R128 base5e5 interleaved llama3x8",
       {128, 128, 500000.0, rope_layout::interleaved, posenc::scaling::llama3(8.0, 1.0, 4.0, 8192)},
       false},
      {"hd128 R32 base1e6 half yarnx4",
       {128, 32, 1e6, rope_layout::half, posenc::scaling::yarn(4.0, 4096)},
       false},
  };
}

// 0..7, 2^k - 1 and 2^k for k = 3..20, the table's edge, 10^6 - 1, 10^6, and 24 random positions
// (12 uniform below 10^6, 12 log-uniform) from a fixed seed.
std::vector<std::uint64_t> positions() {
  std::vector<std::uint64_t> p;
  for (std::uint64_t q = 0; q < 8; ++q) p.push_back(q);
  for (int k = 3; k <= 20; ++k) {
    p.push_back((std::uint64_t{1} << k) - 1);
    p.push_back(std::uint64_t{1} << k);
  }
  for (std::uint64_t q :
       {std::uint64_t{4095}, std::uint64_t{4097}, std::uint64_t{999999}, std::uint64_t{1000000}})
    p.push_back(q);
  std::mt19937_64 rng(20240611);
  std::uniform_int_distribution<std::uint64_t> uni(0, 1000000);
  std::uniform_real_distribution<double> lg(0.0, std::log2(1e6));
  for (int k = 0; k < 12; ++k) p.push_back(uni(rng));
  for (int k = 0; k < 12; ++k) p.push_back(static_cast<std::uint64_t>(std::exp2(lg(rng))));
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  return p;
}

// theta_i exactly (MPFR) or as the library's double-double value.
void exact_theta(const Config& c, std::size_t i, Mpfr& theta) {
  if (c.theta_from_mpfr) {
    set_pow_ratio(theta, c.cfg.base, -2 * static_cast<std::int64_t>(i),
                  static_cast<std::int64_t>(c.cfg.rotary_dim));
  } else {
    const posenc::math::dd t = posenc::inv_freq_dd(c.cfg, static_cast<std::uint32_t>(i));
    set_dd(theta, t.hi, t.lo);
  }
}

struct RangeStat {
  const char* name;
  std::uint64_t lo, hi;  // [lo, hi)
  double max_err = 0.0;
  double max_ratio = 0.0;  // max err / per-element bound
  std::uint64_t worst_p = 0;
  std::size_t positions = 0;
};

std::vector<RangeStat> ranges() {
  return {{"[0, 4096) table", 0, 4096},
          {"[4096, 65536) on the fly", 4096, 65536},
          {"[65536, 10^6] on the fly", 65536, 1000001},
          {"(10^6, 2^20] on the fly", 1000001, (1u << 20) + 1}};
}

RangeStat& range_of(std::vector<RangeStat>& r, std::uint64_t p) {
  for (RangeStat& s : r)
    if (p >= s.lo && p < s.hi) return s;
  return r.back();
}

}  // namespace

TEST_CASE("kernels/accuracy: f32 outputs vs MPFR up to p = 10^6", "[accuracy]") {
  const std::vector<std::uint64_t> pos = positions();
  const std::size_t n = pos.size();
  std::vector<std::int64_t> ids(n);
  for (std::size_t t = 0; t < n; ++t) ids[t] = static_cast<std::int64_t>(pos[t]);

  for (const Config& conf : configs()) {
    const rope_config& cfg = conf.cfg;
    const std::size_t D = cfg.head_dim, R = cfg.rotary_dim, H = R / 2;
    const auto cache = posenc::runtime_rope_cache<float>::make(cfg, kCached);
    const pk::rope_table table = pk::make_rope_table(cache.view(), cfg);
    const pk::rope_table otf = pk::on_the_fly_table(cfg);

    // Inputs: kHeads random heads per token.
    Xorshift32 rng{0x9e3779b9u + static_cast<std::uint32_t>(R)};
    std::vector<float> x(n * kHeads * D);
    for (float& v : x) v = rng.unit();

    // Exact cos/sin per (position, pair), at kPrec bits; af exact (1) or the dd value.
    Mpfr af;
    {
      const posenc::math::dd a = posenc::attention_factor_dd(cfg);
      set_dd(af, a.hi, a.lo);
    }
    const double af_d = mpfr_get_d(af, MPFR_RNDN);
    std::vector<Mpfr> C(n * H), S(n * H);
    {
      Mpfr theta, angle(kPrec + 64);
      for (std::size_t i = 0; i < H; ++i) {
        exact_theta(conf, i, theta);
        for (std::size_t t = 0; t < n; ++t) {
          mpfr_mul_ui(angle, theta, static_cast<unsigned long>(pos[t]), MPFR_RNDN);
          exact_cos_sin(angle, af, C[t * H + i], S[t * H + i]);
        }
      }
    }

    for (const Kernel& k : kernels_under_test()) {
      INFO(conf.name << ", kernel " << k.name);
      const auto in = pk::dense<const float>(x.data(), n, kHeads, D);
      std::vector<float> y(x.size()), y_otf(x.size());
      REQUIRE(k.fn(table, in, pk::dense(y.data(), n, kHeads, D), pk::token_positions::of(ids)) ==
              pk::kernel_error::ok);
      REQUIRE(k.fn(otf, in, pk::dense(y_otf.data(), n, kHeads, D), pk::token_positions::of(ids)) ==
              pk::kernel_error::ok);
      // Cache + fallback and on-the-fly only: the same bits at every position.
      std::size_t diff = 0;
      for (std::size_t e = 0; e < y.size(); ++e) diff += same_bits(y[e], y_otf[e]) ? 0 : 1;
      CHECK(diff == 0);
      // Channels >= R pass through unchanged.
      std::size_t changed = 0;
      for (std::size_t r = 0; r < n * kHeads; ++r)
        for (std::size_t ch = R; ch < D; ++ch)
          changed += same_bits(y[r * D + ch], x[r * D + ch]) ? 0 : 1;
      CHECK(changed == 0);

      // The table values the kernel used (probes), against exact: the bound's assumption.
      std::vector<float> pc;
      REQUIRE(read_table(k, table, pk::token_positions::of(ids), n, D, pc) == pk::kernel_error::ok);
      std::size_t table_bad = 0;
      double table_worst = 0.0;  // in units of the bound
      for (std::size_t t = 0; t < n; ++t) {
        for (std::size_t i = 0; i < H; ++i) {
          const auto [a, b] = expected_channels(cfg.layout, R, i);
          const float c = pc[t * D + a];
          const float s = pc[t * D + b];
          const double ec = abs_err(c, C[t * H + i]), es = abs_err(s, S[t * H + i]);
          const double bc = kTableRel * std::fabs(mpfr_get_d(C[t * H + i], MPFR_RNDN)) + kEta;
          const double bs = kTableRel * std::fabs(mpfr_get_d(S[t * H + i], MPFR_RNDN)) + kEta;
          table_worst = std::max({table_worst, ec / bc, es / bs});
          if (ec > bc || es > bs) ++table_bad;
          if (pos[t] < kCached) {
            table_bad += same_bits(c, cache.cos_at(pos[t], i)) ? 0 : 1;
            table_bad += same_bits(s, cache.sin_at(pos[t], i)) ? 0 : 1;
          }
        }
      }
      INFO("table values: worst error / bound " << table_worst);
      CHECK(table_bad == 0);

      // Outputs against exact.
      std::vector<RangeStat> st = ranges();
      std::size_t over_bound = 0, over_issue = 0;
      std::string first_bad;
      double global_max = 0.0;
      ExactPair ex;
      for (std::size_t t = 0; t < n; ++t) {
        RangeStat& rs = range_of(st, pos[t]);
        ++rs.positions;
        for (std::size_t h = 0; h < kHeads; ++h) {
          const float* xi = x.data() + (t * kHeads + h) * D;
          const float* yo = y.data() + (t * kHeads + h) * D;
          for (std::size_t i = 0; i < H; ++i) {
            const auto [a, b] = expected_channels(cfg.layout, R, i);
            ex.set(xi[a], xi[b], C[t * H + i], S[t * H + i]);
            const double Cd = mpfr_get_d(C[t * H + i], MPFR_RNDN);
            const double Sd = mpfr_get_d(S[t * H + i], MPFR_RNDN);
            const double c = pc[t * D + a], s = pc[t * D + b];
            const double xa = xi[a], xb = xi[b];
            const double ea = abs_err(yo[a], ex.ya), eb = abs_err(yo[b], ex.yb);
            const double ba = element_bound(xa, xb, Cd, Sd, c, s);
            const double bb = element_bound(xb, xa, Cd, Sd, c, s);
            const double e = std::max(ea, eb);
            if (e > rs.max_err) {
              rs.max_err = e;
              rs.worst_p = pos[t];
            }
            rs.max_ratio = std::max({rs.max_ratio, ea / ba, eb / bb});
            global_max = std::max(global_max, e);
            if (ea > ba || eb > bb) {
              if (over_bound++ == 0)
                first_bad = "p " + std::to_string(pos[t]) + " head " + std::to_string(h) +
                            " pair " + std::to_string(i) + ": errors " + std::to_string(ea) + ", " +
                            std::to_string(eb) + " bounds " + std::to_string(ba) + ", " +
                            std::to_string(bb);
            }
            if (e > kIssueLimit) ++over_issue;
          }
        }
      }
      std::printf("%s, %s (af %.7f; a-priori max %.3e):\n", conf.name, k.name.c_str(), af_d,
                  element_bound_max(af_d));
      for (const RangeStat& rs : st) {
        if (rs.positions == 0) continue;
        std::printf(
            "  %-26s %3zu positions  max abs error %.3e (at p = %llu)  max error/bound %.3f\n",
            rs.name, rs.positions, rs.max_err, static_cast<unsigned long long>(rs.worst_p),
            rs.max_ratio);
      }
      std::printf("  table values read back: max error / ((2^-24 + 2^-89)|exact|) %.3f\n",
                  table_worst);
      std::fflush(stdout);
      INFO("first element over its bound: " << first_bad);
      CHECK(over_bound == 0);
      CHECK(over_issue == 0);
      CHECK(global_max <= element_bound_max(af_d));
      CHECK(global_max <= kIssueLimit);
    }
  }
}

TEST_CASE("kernels/accuracy: on-the-fly rows == table rows for every cached position",
          "[accuracy]") {
  // Probes (x_a = 1, x_b = 0) at all 4096 cached positions read back c and s through the kernel:
  // from the cache, from on-the-fly rows, and the cache entries themselves must agree bit for bit.
  std::vector<std::int64_t> ids(kCached);
  for (std::size_t t = 0; t < kCached; ++t) ids[t] = static_cast<std::int64_t>(t);
  for (const Config& conf : configs()) {
    const rope_config& cfg = conf.cfg;
    const std::size_t D = cfg.head_dim, R = cfg.rotary_dim, H = R / 2;
    const auto cache = posenc::runtime_rope_cache<float>::make(cfg, kCached);
    const pk::rope_table table = pk::make_rope_table(cache.view(), cfg.layout);
    const pk::rope_table otf = pk::on_the_fly_table(cfg);
    const std::vector<float> probe = probes(kCached, D, cfg.layout, R);
    const auto in = pk::dense<const float>(probe.data(), kCached, 1, D);
    for (const Kernel& k : kernels_under_test()) {
      INFO(conf.name << ", kernel " << k.name);
      std::vector<float> yt(probe.size()), yo(probe.size());
      REQUIRE(k.fn(table, in, pk::dense(yt.data(), kCached, 1, D), pk::token_positions::from(0)) ==
              pk::kernel_error::ok);
      // Position ids this time (the other test uses ids for both).
      REQUIRE(k.fn(otf, in, pk::dense(yo.data(), kCached, 1, D), pk::token_positions::of(ids)) ==
              pk::kernel_error::ok);
      std::size_t bad = 0;
      for (std::size_t t = 0; t < kCached; ++t) {
        for (std::size_t i = 0; i < H; ++i) {
          const auto [a, b] = expected_channels(cfg.layout, R, i);
          bad += same_bits(yt[t * D + a], cache.cos_at(t, i)) ? 0 : 1;
          bad += same_bits(yt[t * D + b], cache.sin_at(t, i)) ? 0 : 1;
          bad += same_bits(yo[t * D + a], yt[t * D + a]) ? 0 : 1;
          bad += same_bits(yo[t * D + b], yt[t * D + b]) ? 0 : 1;
        }
      }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("kernels/accuracy: negative control, a float32 angle exceeds 5e-7 at large p",
          "[accuracy]") {
  // HF's way (docs/formulas.md §2): angle = fl32(fl32(p) * fl32(theta_i)), then float32 cos
  // and sin (here <cmath>'s float overloads), then the same float rotation. Its angle error is up
  // to half an ulp of the angle, ~2^-24 |angle| (3e-2 at p = 2^20), and that error goes straight
  // into the outputs: the comparison that passes for the kernels must fail here.
  const Config conf = configs()[0];
  const rope_config& cfg = conf.cfg;
  const std::size_t R = cfg.rotary_dim, H = R / 2;
  Mpfr af;
  mpfr_set_ui(af, 1, MPFR_RNDN);
  Xorshift32 rng{12345u};
  Mpfr theta, angle(kPrec + 64), C, S;
  ExactPair ex;
  double worst_all = 0.0;
  for (const std::uint64_t p : {std::uint64_t{4096}, std::uint64_t{131071}, std::uint64_t{500000},
                                std::uint64_t{1000000}, std::uint64_t{(1u << 20) - 1}}) {
    double worst = 0.0;
    for (std::size_t i = 0; i < H; ++i) {
      exact_theta(conf, i, theta);
      const float theta32 = round_float(theta);
      const float a32 = static_cast<float>(p) * theta32;
      const float c = std::cos(a32), s = std::sin(a32);
      mpfr_mul_ui(angle, theta, static_cast<unsigned long>(p), MPFR_RNDN);
      exact_cos_sin(angle, af, C, S);
      for (int h = 0; h < 4; ++h) {
        const float xa = rng.unit(), xb = rng.unit();
        ex.set(xa, xb, C, S);
        const float ya = xa * c + xb * -s, yb = xb * c + xa * s;
        worst = std::max({worst, abs_err(ya, ex.ya), abs_err(yb, ex.yb)});
      }
    }
    std::printf("negative control (float32 angle, cosf/sinf) at p = %llu: max abs error %.3e\n",
                static_cast<unsigned long long>(p), worst);
    worst_all = std::max(worst_all, worst);
    if (p >= 131071) {
      INFO("p = " << p);
      CHECK(worst > kIssueLimit);
      CHECK(worst > element_bound_max(1.0));
    }
  }
  std::fflush(stdout);
  CHECK(worst_all > 1e-2);  // ~2^-24 * 2^20 / 2 at p = 2^20 - 1, pair 0
}
