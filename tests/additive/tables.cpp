// posenc/spec and posenc/tables for sinusoidal, ALiBi and learned encodings.
//
// Sinusoidal: every entry of the runtime tables (float and double) equals the per-entry definition
// (sinusoidal_entry) and the compile-time table bit for bit, and is the correctly rounded value of
// sin/cos(p * w_k) computed by MPFR from the exact w_k = base^(-2k/d) or base^(-k/(d/2-1))
// (positions 0..255 for several configurations, sampled positions up to 2^31). An entry may round
// either way only when the exact value lies within the double-double residue (2^-90 relative, plus
// the angle's residue relative to the value) of a float or double rounding midpoint; such entries
// are counted (none occur here).
//
// Laws, with bounds derived below and negative controls (a table whose cos columns use a frequency
// 0.1% off must fail them):
// - translation: (sin, cos)(t + D) = R(D w) (sin, cos)(t) per frequency;
// - the inner product <PE_t, PE_{t+D}> = sum_k cos(D w_k) depends on D only, and is the same for
//   -D (t >= D).
//
// ALiBi: the reference slopes equal get_slopes re-run here with the C library's pow (CPython's
// float
// ** is C pow), bit for bit for 1..512 heads, and lie within (i + 3) 2^-53 of the exact
// 2^(-8(h+1)/c) / 2^(-8(2j+1)/2c) (MPFR); BLOOM slopes are the float32 base's exact power rounded
// once (MPFR) and within 1 ulp of the C library's powf.
#include <posenc/spec/alibi.hpp>
#include <posenc/spec/learned.hpp>
#include <posenc/spec/sinusoidal.hpp>
#include <posenc/tables/alibi.hpp>
#include <posenc/tables/learned.hpp>
#include <posenc/tables/sinusoidal.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/mpfr_ref.hpp"

namespace {
using namespace posenc;
using posenc_test::Mpfr;

// ---------------------------------------------------------------------------------------------
// Sinusoidal vs MPFR.

// The exact entry (p, col) of c at kPrec bits; also its angle (0 for zero entries).
void exact_entry(const sinusoidal_config& c, std::uint64_t p, std::uint32_t col, Mpfr& out,
                 double& angle) {
  angle = 0.0;
  if (c.padding_idx >= 0 && p == static_cast<std::uint64_t>(c.padding_idx)) {
    mpfr_set_zero(out, 1);
    return;
  }
  std::uint32_t k = 0;
  bool is_sin = true;
  std::int64_t num = 0, den = 1;
  if (c.layout == sinusoidal_layout::paper) {
    k = col / 2;
    is_sin = col % 2 == 0;
    num = -2 * static_cast<std::int64_t>(k);
    den = c.dim;
  } else {
    const std::uint32_t half = c.dim / 2;
    if (col >= 2 * half) {
      mpfr_set_zero(out, 1);
      return;
    }
    k = col < half ? col : col - half;
    is_sin = col < half;
    num = -static_cast<std::int64_t>(k);
    den = half > 1 ? half - 1 : 1;  // tensor2tensor's guard
  }
  Mpfr w(posenc_test::kPrec + 64);
  posenc_test::set_pow_ratio(w, c.base, num, den);
  Mpfr a(posenc_test::kPrec + 64);
  mpfr_mul_ui(a, w, static_cast<unsigned long>(p), MPFR_RNDN);
  angle = mpfr_get_d(a, MPFR_RNDN);
  if (is_sin)
    mpfr_sin(out, a, MPFR_RNDN);
  else
    mpfr_cos(out, a, MPFR_RNDN);
}

struct accuracy_count {
  std::size_t checked = 0;
  std::size_t near_midpoint = 0;
  std::size_t wrong = 0;
};

template <class T>
void check_entry(const sinusoidal_config& c, std::uint64_t p, std::uint32_t col, T got,
                 accuracy_count& n) {
  Mpfr exact;
  double angle = 0.0;
  exact_entry(c, p, col, exact, angle);
  ++n.checked;
  if (mpfr_zero_p(exact)) {
    if (!(got == T(0) && !std::signbit(got))) ++n.wrong;
    return;
  }
  if (posenc_test::correctly_rounded(got, exact)) return;
  // The residue: 2^-90 of the value, plus the angle's (~2^-100 of the angle) relative to the value.
  const double v = std::fabs(mpfr_get_d(exact, MPFR_RNDN));
  const double rel = posenc_test::kResidue * (1.0 + std::fabs(angle) / v);
  const bool near = std::is_same_v<T, float> ? posenc_test::near_float_midpoint(exact, rel)
                                             : false;  // double midpoints: counted as wrong
  if (near) {
    ++n.near_midpoint;
  } else {
    ++n.wrong;
    if (n.wrong <= 5)
      std::printf("wrong entry d=%u layout=%d p=%llu col=%u got=%a exact=%s\n", c.dim,
                  static_cast<int>(c.layout), static_cast<unsigned long long>(p), col,
                  static_cast<double>(got), posenc_test::dec(exact).c_str());
  }
}

const sinusoidal_config configs[] = {
    {128, sinusoidal_layout::paper},
    {128, sinusoidal_layout::split},
    {7, sinusoidal_layout::paper},
    {9, sinusoidal_layout::split, 10000.0, 1},
    {2, sinusoidal_layout::split},
    {3, sinusoidal_layout::split, 10000.0, 0},
    {64, sinusoidal_layout::paper, 500.0, 3},
};

TEST_CASE("additive/sinusoidal tables are correctly rounded (MPFR)", "[tables]") {
  accuracy_count nf, nd;
  for (const sinusoidal_config& c : configs) {
    const std::size_t P = 256;
    std::vector<float> tf(P * c.dim);
    std::vector<double> td(P * c.dim);
    REQUIRE(build_sinusoidal_table<float>(c, P, tf.data()) == sinusoidal_error::ok);
    REQUIRE(build_sinusoidal_table<double>(c, P, td.data()) == sinusoidal_error::ok);
    for (std::uint32_t p = 0; p < P; ++p) {
      for (std::uint32_t col = 0; col < c.dim; ++col) {
        const float f = tf[p * c.dim + col];
        REQUIRE(std::bit_cast<std::uint32_t>(f) ==
                std::bit_cast<std::uint32_t>(sinusoidal_entry<float>(c, p, col)));
        REQUIRE(std::bit_cast<std::uint64_t>(td[p * c.dim + col]) ==
                std::bit_cast<std::uint64_t>(sinusoidal_entry<double>(c, p, col)));
        check_entry(c, p, col, f, nf);
        if (p % 8 == 0) check_entry(c, p, col, td[p * c.dim + col], nd);
      }
    }
    // Sampled large positions, per entry.
    std::uint64_t p = 1000003;
    for (int s = 0; s < 40; ++s) {
      p = (p * 2862933555777941757ull + 3037000493ull) % (std::uint64_t{1} << 31);
      const auto col = static_cast<std::uint32_t>(p % c.dim);
      check_entry(c, p, col, sinusoidal_entry<float>(c, p, col), nf);
      check_entry(c, p, col, sinusoidal_entry<double>(c, p, col), nd);
    }
  }
  std::printf(
      "sinusoidal MPFR: float %zu checked, %zu near a midpoint, %zu wrong; double %zu "
      "checked, %zu wrong\n",
      nf.checked, nf.near_midpoint, nf.wrong, nd.checked, nd.wrong);
  CHECK(nf.wrong == 0);
  CHECK(nd.wrong == 0);
}

struct paper128 {
  static constexpr sinusoidal_config config{128, sinusoidal_layout::paper};
};
struct split9 {
  static constexpr sinusoidal_config config{9, sinusoidal_layout::split, 10000.0, 1};
};

TEST_CASE("additive/sinusoidal compile time == run time", "[tables]") {
  constexpr auto& ct = sinusoidal_table_v<paper128, float, 64>;
  static_assert(ct.positions() == 64 && ct.dim() == 128);
  std::vector<float> rt(64 * 128);
  REQUIRE(build_sinusoidal_table<float>(paper128::config, 64, rt.data()) == sinusoidal_error::ok);
  CHECK(std::memcmp(rt.data(), ct.data, rt.size() * sizeof(float)) == 0);
  constexpr auto& ct9 = sinusoidal_table_v<split9, double, 16>;
  const auto owned = runtime_sinusoidal_table<double>::make(split9::config, 16);
  REQUIRE(owned.positions() == 16);
  REQUIRE(owned.dim() == 9);
  CHECK(std::memcmp(owned.data().data(), ct9.data, 16 * 9 * sizeof(double)) == 0);
  CHECK(owned.view().at(1, 3) == 0.0);  // padding row
}

TEST_CASE("additive/sinusoidal invalid configs write nothing", "[tables]") {
  std::vector<float> out(16, 7.0f);
  CHECK(build_sinusoidal_table<float>({0}, 2, out.data()) == sinusoidal_error::dim);
  CHECK(build_sinusoidal_table<float>({1, sinusoidal_layout::split}, 2, out.data()) ==
        sinusoidal_error::split_dim);
  CHECK(build_sinusoidal_table<float>({4, sinusoidal_layout::paper, 1.0}, 2, out.data()) ==
        sinusoidal_error::base);
  CHECK(build_sinusoidal_table<float>({4, sinusoidal_layout::paper, NAN}, 2, out.data()) ==
        sinusoidal_error::base);
  CHECK(build_sinusoidal_table<float>({4, sinusoidal_layout::paper, 1e4, -2}, 2, out.data()) ==
        sinusoidal_error::padding_idx);
  CHECK(build_sinusoidal_table<float>({4}, (std::size_t{1} << 32) + 1, out.data()) ==
        sinusoidal_error::positions);
  for (float x : out) CHECK(x == 7.0f);
  // No positions: a null output is valid (no offset is applied to it), errors still reported.
  CHECK(build_sinusoidal_table<float>({4}, 0, nullptr) == sinusoidal_error::ok);
  CHECK(build_sinusoidal_table<double>({5, sinusoidal_layout::split}, 0, nullptr) ==
        sinusoidal_error::ok);
  CHECK(build_sinusoidal_table<float>({0}, 0, nullptr) == sinusoidal_error::dim);
  CHECK(runtime_sinusoidal_table<float>::make({8}, 0).positions() == 0);
  runtime_sinusoidal_table<float> t;
  CHECK(runtime_sinusoidal_table<float>::try_make({0}, 4, t) == sinusoidal_error::dim);
  CHECK(t.positions() == 0);
  CHECK_THROWS_WITH(runtime_sinusoidal_table<float>::make({0}, 4),
                    "posenc: sinusoidal dim must be positive");
  CHECK(std::string(message(sinusoidal_error::split_dim)) ==
        "posenc: the split sinusoidal layout needs dim >= 2");
}

// ---------------------------------------------------------------------------------------------
// Laws.

// Frequency pairs (sin column, cos column) of a table.
std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs_of(const sinusoidal_config& c) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> v;
  for (std::uint32_t k = 0; k < sinusoidal_frequencies(c); ++k) {
    const sinusoidal_columns cols = sinusoidal_columns_of(c, k);
    if (cols.cos_column < c.dim) v.emplace_back(cols.sin_column, cols.cos_column);
  }
  return v;
}

// max over t, D, k of |PE_{t+D} - R(D w_k) PE_t| / bound, with R from the double table's row D.
// Bound: float entries are within 2^-25 of exact (|v| <= 1); the rotation of the rounded
// (sin, cos)(t) by the double row D adds (|cos| + |sin|) 2^-25 <= sqrt(2) 2^-25 plus 2^-52 for
// the double row and the double arithmetic: (1 + sqrt 2) 2^-25 + 2^-50.
double translation_ratio(const sinusoidal_config& c, const std::vector<float>& tf,
                         const std::vector<double>& td, std::size_t P) {
  const double bound = (1.0 + std::sqrt(2.0)) * 0x1p-25 + 0x1p-50;
  double worst = 0.0;
  const std::size_t d = c.dim;
  for (const auto& [sc, cc] : pairs_of(c))
    for (std::size_t dlt = 1; dlt < P / 2; dlt += 7)
      for (std::size_t t = 0; t + dlt < P; t += 5) {
        const double s = tf[t * d + sc], co = tf[t * d + cc];
        const double sd = td[dlt * d + sc], cd = td[dlt * d + cc];
        const double es = std::fabs(s * cd + co * sd - tf[(t + dlt) * d + sc]);
        const double ec = std::fabs(co * cd - s * sd - tf[(t + dlt) * d + cc]);
        worst = std::max(worst, std::max(es, ec) / bound);
      }
  return worst;
}

// max over t, D of |<PE_t, PE_{t+D}> - <PE_0, PE_D>| / bound and of the same for -D. Bound: each
// of the two inner products is within F (2 sqrt(2) 2^-25 + 2^-49) + 2F F 2^-53 of sum_k cos(D w_k)
// (per pair, products of entries within 2^-25 of exact; then the double sum), so their difference
// within twice that.
double inner_product_ratio(const sinusoidal_config& c, const std::vector<float>& tf,
                           std::size_t P) {
  const std::size_t d = c.dim;
  const auto pairs = pairs_of(c);
  const double F = static_cast<double>(pairs.size());
  const double bound =
      2.0 * (F * (2.0 * std::sqrt(2.0) * 0x1p-25 + 0x1p-49) + 2.0 * F * F * 0x1p-53);
  // Over the complete (sin, cos) pairs: a lone sin column (odd-d paper) or the zero column (odd-d
  // split) is not part of the law.
  auto dot = [&](std::size_t a, std::size_t b) {
    double s = 0.0;
    for (const auto& [sc, cc] : pairs)
      s += static_cast<double>(tf[a * d + sc]) * static_cast<double>(tf[b * d + sc]) +
           static_cast<double>(tf[a * d + cc]) * static_cast<double>(tf[b * d + cc]);
    return s;
  };
  double worst = 0.0;
  for (std::size_t dlt = 0; dlt < P / 2; dlt += 3) {
    const double ref = dot(0, dlt);
    for (std::size_t t = 1; t + dlt < P; t += 11) {
      worst = std::max(worst, std::fabs(dot(t, t + dlt) - ref) / bound);
      if (t >= dlt) worst = std::max(worst, std::fabs(dot(t, t - dlt) - ref) / bound);
    }
  }
  return worst;
}

TEST_CASE("additive/sinusoidal laws: translation and relative inner products", "[laws]") {
  const std::size_t P = 1024;
  for (const sinusoidal_config& c0 : configs) {
    sinusoidal_config c = c0;
    c.padding_idx = -1;  // the padding row is not part of the encoding's geometry
    std::vector<float> tf(P * c.dim);
    std::vector<double> td(P * c.dim);
    REQUIRE(build_sinusoidal_table<float>(c, P, tf.data()) == sinusoidal_error::ok);
    REQUIRE(build_sinusoidal_table<double>(c, P, td.data()) == sinusoidal_error::ok);
    const double tr = translation_ratio(c, tf, td, P);
    const double ip = inner_product_ratio(c, tf, P);
    INFO("dim " << c.dim << " layout " << static_cast<int>(c.layout));
    CHECK(tr <= 1.0);
    CHECK(ip <= 1.0);
    // Negative control: the cos columns 0.1% off in frequency.
    std::vector<float> bad = tf;
    for (std::uint32_t k = 0; k < sinusoidal_frequencies(c); ++k) {
      const sinusoidal_columns cols = sinusoidal_columns_of(c, k);
      if (cols.cos_column >= c.dim) continue;
      const double w = math::to_double(sinusoidal_frequency_dd(c, k)) * 1.001;
      for (std::size_t p = 0; p < P; ++p)
        bad[p * c.dim + cols.cos_column] = static_cast<float>(std::cos(static_cast<double>(p) * w));
    }
    CHECK(translation_ratio(c, bad, td, P) > 1.0);
    CHECK(inner_product_ratio(c, bad, P) > 1.0);
  }
}

// ---------------------------------------------------------------------------------------------
// ALiBi slopes.

// The reference get_slopes re-run with the C library's pow, as CPython evaluates it: for n a power
// of two, start = 2**(-2**-(log2(n)-3)) and [start*ratio**i for i in range(n)] with ratio = start;
// otherwise the list for c = 2**floor(log2(n)) followed by the list for 2c at even indices.
std::vector<double> python_get_slopes(std::uint32_t n) {
  auto pow2_list = [](std::uint32_t m) {
    const double start = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(m)) - 3.0)));
    std::vector<double> v;
    for (std::uint32_t i = 0; i < m; ++i) {
      volatile double r = std::pow(start, static_cast<double>(i));
      v.push_back(start * r);
    }
    return v;
  };
  const double l = std::log2(static_cast<double>(n));
  if (l == std::floor(l)) return pow2_list(n);
  const auto c = static_cast<std::uint32_t>(std::pow(2.0, std::floor(l)));
  std::vector<double> v = pow2_list(c);
  const std::vector<double> w = pow2_list(2 * c);
  for (std::uint32_t j = 0; j < n - c; ++j) v.push_back(w[2 * j]);
  return v;
}

TEST_CASE("additive/alibi reference slopes == get_slopes (C pow) and exact math", "[tables]") {
  std::size_t checked = 0;
  for (std::uint32_t n = 1; n <= 512; ++n) {
    const std::vector<double> want = python_get_slopes(n);
    const std::vector<double> got = make_alibi_slopes<double>({n});
    const std::vector<float> got32 = make_alibi_slopes<float>({n});
    REQUIRE(got.size() == n);
    const std::uint32_t c = alibi_power_of_two_heads(n);
    for (std::uint32_t h = 0; h < n; ++h) {
      INFO("n " << n << " head " << h);
      REQUIRE(std::bit_cast<std::uint64_t>(got[h]) == std::bit_cast<std::uint64_t>(want[h]));
      REQUIRE(got32[h] == static_cast<float>(want[h]));
      // Exact: 2^(-8 e / q) with (e, q) = (h + 1, c) or (2j + 1, 2c); i = h or 2j.
      const bool first = h < c;
      const std::int64_t e = first ? h + 1 : 2 * (h - c) + 1;
      const std::int64_t q = first ? c : 2 * c;
      const double i = first ? h : 2.0 * (h - c);
      Mpfr exact;
      posenc_test::set_pow_ratio(exact, 2.0, -8 * e, q);
      Mpfr diff;
      mpfr_sub_d(diff, exact, got[h], MPFR_RNDN);
      mpfr_div(diff, diff, exact, MPFR_RNDN);
      REQUIRE(std::fabs(mpfr_get_d(diff, MPFR_RNDN)) <= (i + 3.0) * 0x1p-53);
      ++checked;
    }
  }
  std::printf("alibi reference: %zu slopes (1..512 heads) == get_slopes bit for bit\n", checked);
  CHECK(make_alibi_slopes<double>({8}) ==
        std::vector<double>{0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625});
}

TEST_CASE("additive/alibi BLOOM slopes: exact power of the float32 base, rounded once",
          "[tables]") {
  std::size_t checked = 0, equal_powf = 0, near = 0;
  for (std::uint32_t n = 1; n <= 512; ++n) {
    const std::vector<float> got =
        make_alibi_slopes<float>({n, alibi_variant::causal, alibi_slope_kind::bloom});
    const std::uint32_t c = alibi_power_of_two_heads(n);
    for (std::uint32_t h = 0; h < n; ++h) {
      const bool first = h < c;
      const double q = first ? c : 2.0 * c;
      const auto base = static_cast<float>(std::pow(2.0, -8.0 / q));  // fl32(Python float)
      const unsigned long k = first ? h + 1u : 2u * (h - c) + 1u;
      Mpfr exact(4096);
      mpfr_set_flt(exact, base, MPFR_RNDN);
      mpfr_pow_ui(exact, exact, k, MPFR_RNDN);  // 4096 bits hold base^k for k <= 170 exactly
      INFO("n " << n << " head " << h);
      if (!posenc_test::correctly_rounded(got[h], exact)) {
        REQUIRE(posenc_test::near_float_midpoint(exact, 0x1p-90));
        ++near;
      }
      const float libm = std::pow(base, static_cast<float>(k));
      REQUIRE(std::fabs(posenc_test::ulp_error(libm, exact)) <= 1.0);
      if (libm == got[h]) ++equal_powf;
      ++checked;
    }
  }
  std::printf(
      "alibi BLOOM: %zu slopes correctly rounded (%zu near a midpoint); the C library's "
      "powf agrees on %zu\n",
      checked, near, equal_powf);
}

struct alibi40 {
  static constexpr alibi_config config{40};
};
TEST_CASE("additive/alibi compile-time slopes == run time; invalid configs", "[tables]") {
  constexpr const auto& s = alibi_slopes_v<alibi40, float>;
  const std::vector<float> rt = make_alibi_slopes<float>({40});
  REQUIRE(rt.size() == s.size());
  CHECK(std::memcmp(rt.data(), s.data(), rt.size() * sizeof(float)) == 0);
  float out[2] = {3.0f, 3.0f};
  CHECK(build_alibi_slopes<float>({0}, out) == alibi_error::heads);
  CHECK(out[0] == 3.0f);
  alibi_error e = alibi_error::ok;
  CHECK(make_alibi_slopes<float>({0}, &e).empty());
  CHECK(e == alibi_error::heads);
  CHECK_THROWS_WITH(make_alibi_slopes<float>({0}), "posenc: alibi heads must be positive");
}

// ---------------------------------------------------------------------------------------------
// Learned tables.

TEST_CASE("additive/learned tables: views, lookups, bounds", "[tables]") {
  const learned_config opt{4, 3, 2};
  std::vector<float> w(6 * 3);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i);
  const auto v = make_learned_view<float>(opt, w);
  REQUIRE(v.data == w.data());
  CHECK(v.positions() == 4);
  CHECK(v.lookup(0) == w.data() + 6);
  CHECK(v.lookup(3) == w.data() + 15);
  CHECK(v.lookup(4) == nullptr);
  CHECK(v.lookup(~std::uint64_t{0}) == nullptr);
  CHECK(make_learned_view<float>(opt, std::span<const float>(w).first(17)).data == nullptr);
  CHECK(make_learned_view<float>({0, 3, 0}, w).data == nullptr);

  runtime_learned_table<float> t;
  CHECK(runtime_learned_table<float>::try_make(opt, std::span<const float>(w).first(5), t) ==
        learned_error::rows);
  CHECK(t.view().data == nullptr);
  REQUIRE(runtime_learned_table<float>::try_make(opt, w, t) == learned_error::ok);
  CHECK(t.lookup(1)[0] == 9.0f);
  CHECK(t.lookup(4) == nullptr);
  CHECK_THROWS_WITH(runtime_learned_table<float>::make(opt, std::span<const float>(w).first(5)),
                    "posenc: learned weights must have rows * dim values");
  CHECK_THROWS_WITH(runtime_learned_table<float>::make({1, 0, 0}, w),
                    "posenc: learned dim must be positive");
  runtime_learned_table<float> z;
  REQUIRE(runtime_learned_table<float>::try_make(presets::bert_base::config, z) ==
          learned_error::ok);
  CHECK(z.data().size() == 512u * 768u);
  CHECK(z.lookup(511) != nullptr);
  CHECK(z.lookup(512) == nullptr);
  CHECK(validate(learned_config{0xffffffffu, 1, 1}) == learned_error::rows);
  CHECK(learned_rows(presets::opt_125m::config) == 2050u);
  CHECK(learned_rows(presets::roberta_base::config) == 514u);
}

}  // namespace
