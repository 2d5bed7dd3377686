// Multi-axis RoPE (spec/mrope.hpp, tables/mrope.hpp, kernels/mrope_reference.hpp):
//   multimodal/map      the pair -> stream map against HF's own statements of it, written here
//   multimodal/rows     rows against MPFR (theta from support/exact_rope, or from HF's vision
//                       exponents), compile time == run time == gathered from a 1-D cache
//   multimodal/rules    every rule at run time; builders write nothing on a broken config
//   multimodal/kernel   the reference against MPFR, equal streams == rope_reference, table formats,
//                       errors with nothing written
//   multimodal/golden   HF Qwen2-VL (tests/golden/hf_mrope_qwen2vl.json)
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <posenc/kernels/mrope_reference.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/spec/mrope.hpp>
#include <posenc/tables/mrope.hpp>
#include <posenc/tables/runtime_rope_cache.hpp>

#include "golden/golden.hpp"
#include "support/exact_rope.hpp"
#include "support/mpfr_ref.hpp"
#include "support/rope.hpp"

namespace pk = posenc::kernels;
using posenc::axial_frequencies;
using posenc::axial_rope_config;
using posenc::mrope_config;
using posenc::mrope_layout;
using posenc::pair_source;
using posenc::rope_config;
using posenc::rope_layout;
using posenc_test::Mpfr;

namespace {

constexpr mrope_config qwen2_vl{{128, 128, 1000000.0, rope_layout::half}, {16, 24, 24}};
constexpr mrope_config qwen3_vl{
    {128, 128, 5000000.0, rope_layout::half}, {24, 20, 20}, mrope_layout::interleaved};
constexpr axial_rope_config pixtral{{64, 64, 10000.0, rope_layout::half}};
constexpr axial_rope_config qwen2_vl_vision{{80, 80, 10000.0, rope_layout::half},
                                            axial_frequencies::shared};

// HF Qwen2-VL apply_multimodal_rotary_pos_emb (models/qwen2_vl/modeling_qwen2_vl.py): cos of
// width R is split into chunks mrope_section * 2 = [s0, s1, s2, s0, s1, s2], chunk j taken from
// stream j % 3. The stream of each channel.
std::vector<std::uint32_t> hf_contiguous_channels(std::uint32_t R, std::array<std::uint32_t, 3> s) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t j = 0; j < 6; ++j)
    for (std::uint32_t n = 0; n < s[j % 3]; ++n) out.push_back(j % 3);
  REQUIRE(out.size() == R);
  return out;
}

// HF Qwen3-VL apply_interleaved_mrope (models/qwen3_vl/modeling_qwen3_vl.py): freqs of stream 0,
// then for dim 1, 2: freqs[..., dim : 3 * s[dim] : 3] = stream dim's. The stream of each pair.
std::vector<std::uint32_t> hf_interleaved_pairs(std::uint32_t pairs,
                                                std::array<std::uint32_t, 3> s) {
  std::vector<std::uint32_t> out(pairs, 0);
  for (std::uint32_t dim = 1; dim <= 2; ++dim)
    for (std::uint32_t i = dim; i < 3 * s[dim] && i < pairs; i += 3) out[i] = dim;
  return out;
}

// theta of pair i of the 2-D encoders, from HF's own exponents: Pixtral freqs =
// base^(-m/(D/2)) for m = 0, 2, .., D - 2 (arange(0, D, 2) / D), height freqs[::2], width
// freqs[1::2] (models/pixtral/modeling_pixtral.py); Qwen2-VL VisionRotaryEmbedding(D/2):
// base^(-2j/(D/2)) for j < D/4, the same for both axes (models/qwen2_vl/modeling_qwen2_vl.py).
void hf_axial_theta(Mpfr& out, const axial_rope_config& c, std::uint32_t i) {
  const std::int64_t D = c.rope.rotary_dim, quarter = D / 4;
  const std::int64_t j = i < quarter ? i : i - quarter;
  if (c.frequencies == axial_frequencies::shared) {
    posenc_test::set_pow_ratio(out, c.rope.base, -2 * j, D / 2);
  } else {
    const std::int64_t m = 2 * (2 * j + (i < quarter ? 0 : 1));  // arange(0, D, 2)[2j or 2j+1]
    posenc_test::set_pow_ratio(out, c.rope.base, -m, D);
  }
}

// Exact af * cos/sin(p * theta) of each entry, and whether a float rounding may go either way.
void exact_entry(posenc_test::ExactSinCos& e, std::uint64_t p, mpfr_srcptr theta) {
  Mpfr angle(posenc_test::kPrec + 64), pm;
  mpfr_set_uj(pm, p, MPFR_RNDN);
  mpfr_mul(angle, theta, pm, MPFR_RNDN);
  e.set(angle);
}

template <class T>
bool rounded_ok(T got, const Mpfr& exact, bool near) {
  return near || posenc_test::correctly_rounded(got, exact);
}

std::uint64_t xorshift(std::uint64_t& s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}
// A float in [-1, 1) with 24 random bits.
float random_unit(std::uint64_t& s) {
  return static_cast<float>(static_cast<double>(xorshift(s) >> 40) * 0x1p-23 - 1.0);
}

}  // namespace

// ---- map --------------------------------------------------------------------------------------

TEST_CASE("multimodal/map: contiguous sections are HF Qwen2-VL's channel split", "[map]") {
  for (const std::array<std::uint32_t, 3> s :
       {std::array<std::uint32_t, 3>{16, 24, 24}, {1, 1, 6}, {5, 2, 1}, {3, 3, 2}}) {
    const std::uint32_t R = 2 * (s[0] + s[1] + s[2]);
    const mrope_config c{{R, R, 10000.0, rope_layout::half}, s};
    REQUIRE(posenc::validate(c) == posenc::mrope_error::ok);
    const auto hf = hf_contiguous_channels(R, s);
    for (std::uint32_t ch = 0; ch < R; ++ch) {
      const pair_source src = posenc::mrope_pair_source(c, ch % (R / 2));
      CHECK(src.stream == hf[ch]);
      CHECK(src.inv_freq_index == ch % (R / 2));
    }
  }
}

TEST_CASE("multimodal/map: interleaved sections are HF Qwen3-VL's slices", "[map]") {
  for (const std::array<std::uint32_t, 3> s :
       {std::array<std::uint32_t, 3>{24, 20, 20}, {3, 3, 2}, {2, 3, 3}, {6, 1, 1}, {1, 2, 1}}) {
    const std::uint32_t pairs = s[0] + s[1] + s[2];
    const mrope_config c{
        {2 * pairs, 2 * pairs, 10000.0, rope_layout::half}, s, mrope_layout::interleaved};
    const auto hf = hf_interleaved_pairs(pairs, s);
    std::array<std::uint32_t, 3> count{};
    for (std::uint32_t i = 0; i < pairs; ++i) ++count[hf[i]];
    // HF's slices give each stream its section exactly when the rule holds.
    CHECK((posenc::validate(c) == posenc::mrope_error::ok) == (count == s));
    if (posenc::validate(c) != posenc::mrope_error::ok) continue;
    for (std::uint32_t i = 0; i < pairs; ++i) {
      CHECK(posenc::mrope_pair_source(c, i) == pair_source{hf[i], i});
    }
  }
}

namespace {
struct qwen3_vl_spec {
  static constexpr mrope_config config = qwen3_vl;
};
struct pixtral_spec {
  static constexpr axial_rope_config config = pixtral;
};
struct small_spec {
  static constexpr mrope_config config{
      {16, 16, 1000000.0, rope_layout::half}, {3, 3, 2}, mrope_layout::interleaved};
};
struct small_axial_spec {
  static constexpr axial_rope_config config{{16, 16, 10000.0, rope_layout::half}};
};
}  // namespace

TEST_CASE("multimodal/map: compile-time and run-time maps agree", "[map]") {
  using spec = qwen3_vl_spec;
  using axial_spec = pixtral_spec;
  std::array<pair_source, 64> run{};
  REQUIRE(posenc::build_mrope_pair_sources(qwen3_vl, run.data()) == posenc::mrope_error::ok);
  CHECK(run == posenc::mrope_pair_sources_v<spec>);
  std::array<pair_source, 32> axial{};
  REQUIRE(posenc::build_axial_pair_sources(pixtral, axial.data()) == posenc::axial_rope_error::ok);
  CHECK(axial == posenc::axial_pair_sources_v<axial_spec>);
}

// ---- rows -------------------------------------------------------------------------------------

TEST_CASE("multimodal/rows: M-RoPE rows against MPFR", "[rows]") {
  const std::array<std::uint64_t, 3> positions[] = {
      {0, 0, 0}, {3, 3, 5}, {6, 7, 8}, {100, 4095, 4096}, {65535, 1, 1000000}, {4294967295u, 7, 1}};
  for (const mrope_config& c : {qwen2_vl, qwen3_vl}) {
    std::vector<std::uint32_t> streams;
    if (c.section_layout == mrope_layout::interleaved) {
      streams = hf_interleaved_pairs(64, c.mrope_section);
    } else {
      const auto ch = hf_contiguous_channels(128, c.mrope_section);
      streams.assign(ch.begin(), ch.begin() + 64);
    }
    for (const auto& p : positions) {
      std::array<float, 64> cf{}, sf{};
      std::array<double, 64> cd{}, sd{};
      REQUIRE(posenc::build_mrope_row<float>(c, p, cf.data(), sf.data()) ==
              posenc::mrope_error::ok);
      REQUIRE(posenc::build_mrope_row<double>(c, p, cd.data(), sd.data()) ==
              posenc::mrope_error::ok);
      for (std::uint32_t i = 0; i < 64; ++i) {
        Mpfr theta;
        bool near_discrete = false;
        posenc_test::exact_rope_inv_freq(theta, c.rope, i, 0, near_discrete);
        posenc_test::ExactSinCos e;
        exact_entry(e, p[streams[i]], theta);
        INFO("layout " << posenc::mrope_layout_name(c.section_layout) << " pair " << i << " p "
                       << p[streams[i]]);
        CHECK(rounded_ok(cf[i], e.c, e.cos_near));
        CHECK(rounded_ok(sf[i], e.s, e.sin_near));
        CHECK(rounded_ok(cd[i], e.c, e.cos_near_double));
        CHECK(rounded_ok(sd[i], e.s, e.sin_near_double));
      }
    }
  }
}

TEST_CASE("multimodal/rows: 2-D rows against MPFR with HF's vision exponents", "[rows]") {
  const std::array<std::uint64_t, 2> positions[] = {{0, 0}, {0, 5}, {3, 0}, {23, 17}, {1023, 511}};
  for (const axial_rope_config& c : {pixtral, qwen2_vl_vision}) {
    const std::uint32_t pairs = c.rope.rotary_dim / 2;
    for (const auto& p : positions) {
      std::vector<float> cf(pairs), sf(pairs);
      REQUIRE(posenc::build_axial_row<float>(c, p, cf.data(), sf.data()) ==
              posenc::axial_rope_error::ok);
      for (std::uint32_t i = 0; i < pairs; ++i) {
        Mpfr theta;
        hf_axial_theta(theta, c, i);
        posenc_test::ExactSinCos e;
        exact_entry(e, p[i < pairs / 2 ? 0 : 1], theta);
        INFO("frequencies " << posenc::axial_frequencies_name(c.frequencies) << " pair " << i);
        CHECK(rounded_ok(cf[i], e.c, e.cos_near));
        CHECK(rounded_ok(sf[i], e.s, e.sin_near));
      }
    }
  }
}

TEST_CASE("multimodal/rows: compile time == run time == gathered from the 1-D cache", "[rows]") {
  using spec = small_spec;
  using axial_spec = small_axial_spec;
  constexpr auto row = posenc::mrope_row_v<spec, float, 7, 200, 31>;
  constexpr auto axial = posenc::axial_row_v<axial_spec, float, 31, 2>;
  std::array<float, 8> c{}, s{}, gc{}, gs{};
  REQUIRE(posenc::build_mrope_row<float>(spec::config, {7, 200, 31}, c.data(), s.data()) ==
          posenc::mrope_error::ok);
  CHECK(std::bit_cast<std::array<std::uint32_t, 8>>(c) ==
        std::bit_cast<std::array<std::uint32_t, 8>>(row.cos));
  CHECK(std::bit_cast<std::array<std::uint32_t, 8>>(s) ==
        std::bit_cast<std::array<std::uint32_t, 8>>(row.sin));
  const auto cache = posenc::runtime_rope_cache<float>::make(spec::config.rope, 201);
  const std::array<std::uint64_t, 3> p{7, 200, 31};
  REQUIRE(posenc::gather_row(cache.view(), posenc::mrope_pair_sources_v<spec>, p, gc.data(),
                             gs.data()));
  CHECK(gc == c);
  CHECK(gs == s);
  // A position past the cache, or a stream that is not given: nothing written.
  std::array<float, 8> untouched{};
  const std::array<std::uint64_t, 3> past{7, 201, 31};
  CHECK_FALSE(posenc::gather_row(cache.view(), posenc::mrope_pair_sources_v<spec>, past,
                                 untouched.data(), untouched.data()));
  const std::array<std::uint64_t, 2> two{7, 200};
  CHECK_FALSE(posenc::gather_row(cache.view(), posenc::mrope_pair_sources_v<spec>, two,
                                 untouched.data(), untouched.data()));
  CHECK(untouched == std::array<float, 8>{});
  REQUIRE(posenc::build_axial_row<float>(axial_spec::config, {31, 2}, c.data(), s.data()) ==
          posenc::axial_rope_error::ok);
  CHECK(c == axial.cos);
  CHECK(s == axial.sin);
}

// ---- rules ------------------------------------------------------------------------------------

TEST_CASE("multimodal/rules: each rule at run time, nothing written", "[rules]") {
  using E = posenc::mrope_error;
  const rope_config r8{8, 8, 10000.0, rope_layout::half};
  CHECK(posenc::validate(mrope_config{{8, 8, 1.0, rope_layout::half}, {1, 1, 2}}) == E::rope);
  CHECK(posenc::validate(mrope_config{r8, {0, 2, 2}}) == E::mrope_section_value);
  CHECK(posenc::validate(mrope_config{r8, {1, 1, 1}}) == E::mrope_section_sum);
  CHECK(posenc::validate(mrope_config{r8, {4294967295u, 4294967295u, 6}}) ==
        E::mrope_section_sum);  // no wrap-around in the sum
  CHECK(posenc::validate(
            mrope_config{{16, 16, 1e4, rope_layout::half}, {2, 3, 3}, mrope_layout::interleaved}) ==
        E::mrope_section_interleave);
  CHECK(posenc::validate(mrope_config{r8, {1, 1, 2}}) == E::ok);
  for (E e : posenc::all_mrope_rules)
    CHECK(std::string(posenc::message(e)).rfind("posenc: ", 0) == 0);
  using A = posenc::axial_rope_error;
  CHECK(posenc::validate(axial_rope_config{{8, 10, 1e4, rope_layout::half}}) == A::rope);
  CHECK(posenc::validate(axial_rope_config{{8, 6, 1e4, rope_layout::half}}) == A::rotary_dim);
  CHECK(posenc::validate(axial_rope_config{{8, 4, 1e4, rope_layout::half}}) == A::ok);

  std::array<float, 8> c{}, s{};
  std::array<pair_source, 4> src{};
  const mrope_config bad{r8, {1, 1, 1}};
  CHECK(posenc::build_mrope_row<float>(bad, {1, 2, 3}, c.data(), s.data()) == E::mrope_section_sum);
  CHECK(posenc::build_mrope_pair_sources(bad, src.data()) == E::mrope_section_sum);
  const axial_rope_config bad_axial{{8, 6, 1e4, rope_layout::half}};
  CHECK(posenc::build_axial_row<float>(bad_axial, {1, 2}, c.data(), s.data()) == A::rotary_dim);
  CHECK(posenc::build_axial_pair_sources(bad_axial, src.data()) == A::rotary_dim);
  CHECK(c == std::array<float, 8>{});
  CHECK(s == std::array<float, 8>{});
  CHECK(src == std::array<pair_source, 4>{});
}

// ---- kernel -----------------------------------------------------------------------------------

namespace {
struct kernel_case {
  std::uint32_t tokens = 5, heads = 3, head_dim = 128;
  std::vector<float> x;
  std::vector<std::int64_t> ids[3];
  kernel_case() {
    std::uint64_t seed = 0x9e3779b97f4a7c15u;
    x.resize(std::size_t{tokens} * heads * head_dim);
    for (float& v : x) v = random_unit(seed);
    ids[0] = {0, 3, 3, 6, 70000};
    ids[1] = {0, 3, 4, 6, 12};
    ids[2] = {0, 5, 3, 6, 4096};
  }
  std::array<pk::token_positions, 3> streams() const {
    return {pk::token_positions::of(std::span<const std::int64_t>(ids[0])),
            pk::token_positions::of(std::span<const std::int64_t>(ids[1])),
            pk::token_positions::of(std::span<const std::int64_t>(ids[2]))};
  }
};
}  // namespace

TEST_CASE("multimodal/kernel: Qwen3-VL interleaved against MPFR", "[kernel]") {
  kernel_case k;
  const mrope_config& c = qwen3_vl;
  // A 1-D cache of 4097 positions; 70000 (temporal) is computed on the fly.
  const auto cache = posenc::runtime_rope_cache<float>::make(c.rope, 4097);
  const pk::rope_table table = pk::make_rope_table(cache.view(), c.rope);
  std::array<pair_source, 64> src{};
  REQUIRE(posenc::build_mrope_pair_sources(c, src.data()) == posenc::mrope_error::ok);
  std::vector<float> y(k.x.size());
  const auto in = pk::dense(static_cast<const float*>(k.x.data()), k.tokens, k.heads, k.head_dim);
  const auto out = pk::dense(y.data(), k.tokens, k.heads, k.head_dim);
  const auto streams = k.streams();
  REQUIRE(pk::multi_axis_rope_reference<float>(table, src, in, out, streams) ==
          pk::kernel_error::ok);
  const auto hf = hf_interleaved_pairs(64, c.mrope_section);
  double worst = 0.0;
  for (std::uint32_t t = 0; t < k.tokens; ++t)
    for (std::uint32_t i = 0; i < 64; ++i) {
      Mpfr theta, xa, xb, ya, yb, tmp;
      bool near_discrete = false;
      posenc_test::exact_rope_inv_freq(theta, c.rope, i, 0, near_discrete);
      posenc_test::ExactSinCos e;
      exact_entry(e, static_cast<std::uint64_t>(k.ids[hf[i]][t]), theta);
      for (std::uint32_t h = 0; h < k.heads; ++h) {
        const std::size_t base = (std::size_t{t} * k.heads + h) * k.head_dim;
        const float a = k.x[base + i], b = k.x[base + i + 64];
        // y_a = a cos - b sin, y_b = b cos + a sin, exactly.
        mpfr_set_flt(xa, a, MPFR_RNDN);
        mpfr_set_flt(xb, b, MPFR_RNDN);
        mpfr_mul(ya, xa, e.c, MPFR_RNDN);
        mpfr_mul(tmp, xb, e.s, MPFR_RNDN);
        mpfr_sub(ya, ya, tmp, MPFR_RNDN);
        mpfr_mul(yb, xb, e.c, MPFR_RNDN);
        mpfr_mul(tmp, xa, e.s, MPFR_RNDN);
        mpfr_add(yb, yb, tmp, MPFR_RNDN);
        // Entries rounded once (2^-24 relative each: <= 2^-24 (|a| + |b|) in y), two products
        // and one sum rounded to float (each <= 2^-24 of a value <= |a| + |b|): 4 2^-24 (|a| +
        // |b|).
        const double bound = 4.0 * 0x1p-24 * (std::fabs(a) + std::fabs(b));
        const double ea = std::fabs(static_cast<double>(y[base + i]) - mpfr_get_d(ya, MPFR_RNDN));
        const double eb =
            std::fabs(static_cast<double>(y[base + i + 64]) - mpfr_get_d(yb, MPFR_RNDN));
        INFO("token " << t << " pair " << i << " head " << h);
        CHECK(ea <= bound);
        CHECK(eb <= bound);
        worst = std::max({worst, ea / bound, eb / bound});
      }
    }
  WARN("largest error / bound: " << worst);
}

TEST_CASE("multimodal/kernel: equal streams give rope_reference's bits", "[kernel]") {
  kernel_case k;
  const mrope_config& c = qwen2_vl;
  const auto cache = posenc::runtime_rope_cache<float>::make(c.rope, 4097);
  const pk::rope_table table = pk::make_rope_table(cache.view(), c.rope);
  std::array<pair_source, 64> src{};
  REQUIRE(posenc::build_mrope_pair_sources(c, src.data()) == posenc::mrope_error::ok);
  const auto in = pk::dense(static_cast<const float*>(k.x.data()), k.tokens, k.heads, k.head_dim);
  for (std::uint32_t s = 0; s < 3; ++s) {
    const auto one = pk::token_positions::of(std::span<const std::int64_t>(k.ids[s]));
    const std::array<pk::token_positions, 3> same{one, one, one};
    for (pk::fma_mode mode : {pk::fma_mode::unfused, pk::fma_mode::fused}) {
      std::vector<float> y1(k.x.size()), y2(k.x.size());
      REQUIRE(pk::rope_reference<float>(table, in, pk::dense(y1.data(), k.tokens, k.heads, 128),
                                        one, mode) == pk::kernel_error::ok);
      REQUIRE(pk::multi_axis_rope_reference<float>(table, src, in,
                                                   pk::dense(y2.data(), k.tokens, k.heads, 128),
                                                   same, mode) == pk::kernel_error::ok);
      CHECK(std::equal(y1.begin(), y1.end(), y2.begin(), [](float p, float q) {
        return std::bit_cast<std::uint32_t>(p) == std::bit_cast<std::uint32_t>(q);
      }));
    }
  }
}

TEST_CASE("multimodal/kernel: compact, expanded and on-the-fly tables give the same bits",
          "[kernel]") {
  kernel_case k;
  const mrope_config& c = qwen2_vl;
  const auto cache = posenc::runtime_rope_cache<float>::make(c.rope, 70001);
  std::vector<float> ec(70001 * 128), es(70001 * 128);
  pk::expand_rope_cache(cache.view(), c.rope.layout, ec.data(), es.data());
  pk::rope_table expanded = pk::make_rope_table(cache.view(), c.rope.layout);
  expanded.cos = ec.data();
  expanded.sin = es.data();
  expanded.format = pk::rope_table_format::expanded;
  const pk::rope_table compact = pk::make_rope_table(cache.view(), c.rope.layout);
  const pk::rope_table fly = pk::on_the_fly_table(c.rope);
  std::array<pair_source, 64> src{};
  REQUIRE(posenc::build_mrope_pair_sources(c, src.data()) == posenc::mrope_error::ok);
  const auto in = pk::dense(static_cast<const float*>(k.x.data()), k.tokens, k.heads, k.head_dim);
  const auto streams = k.streams();
  std::vector<float> y[3];
  const pk::rope_table* tables[] = {&compact, &expanded, &fly};
  for (int n = 0; n < 3; ++n) {
    y[n].resize(k.x.size());
    REQUIRE(pk::multi_axis_rope_reference<float>(*tables[n], src, in,
                                                 pk::dense(y[n].data(), k.tokens, k.heads, 128),
                                                 streams) == pk::kernel_error::ok);
  }
  CHECK(y[0] == y[1]);
  CHECK(y[0] == y[2]);
  // In place: the same bits.
  std::vector<float> x = k.x;
  REQUIRE(pk::multi_axis_rope_reference<float>(compact, src,
                                               pk::dense(x.data(), k.tokens, k.heads, 128),
                                               streams) == pk::kernel_error::ok);
  CHECK(x == y[0]);
}

TEST_CASE("multimodal/kernel: errors, nothing written", "[kernel]") {
  kernel_case k;
  const mrope_config& c = qwen2_vl;
  const auto cache = posenc::runtime_rope_cache<float>::make(c.rope, 16);
  const pk::rope_table table = pk::make_rope_table(cache.view(), c.rope.layout);
  std::array<pair_source, 64> src{};
  REQUIRE(posenc::build_mrope_pair_sources(c, src.data()) == posenc::mrope_error::ok);
  const auto in = pk::dense(static_cast<const float*>(k.x.data()), k.tokens, k.heads, k.head_dim);
  std::vector<float> y(k.x.size(), 7.0f);
  const auto out = pk::dense(y.data(), k.tokens, k.heads, k.head_dim);
  const std::vector<std::int64_t> small = {0, 1, 2, 3, 4}, short_ids = {0, 1, 2, 3},
                                  negative = {0, 1, -2, 3, 4}, past = {0, 1, 2, 3, 16};
  const auto of = [](const std::vector<std::int64_t>& v) {
    return pk::token_positions::of(std::span<const std::int64_t>(v));
  };
  const std::array<pk::token_positions, 3> good{of(small), of(small), of(small)};
  auto run = [&](std::span<const pair_source> s, std::span<const pk::token_positions> st) {
    return pk::multi_axis_rope_reference<float>(table, s, in, out, st);
  };
  CHECK(run(src, std::array{of(small), of(short_ids), of(small)}) ==
        pk::kernel_error::shape_mismatch);
  CHECK(run(src, std::array{of(small), of(small), of(negative)}) ==
        pk::kernel_error::negative_position);
  CHECK(run(src, std::array{of(past), of(small), of(small)}) ==
        pk::kernel_error::position_out_of_range);
  CHECK(run(src, std::span<const pk::token_positions>{}) == pk::kernel_error::invalid_argument);
  // Two streams for a map that names the third; a map of the wrong length; a frequency past R/2.
  CHECK(run(src, std::array{of(small), of(small)}) == pk::kernel_error::invalid_argument);
  CHECK(run(std::span(src).first(63), good) == pk::kernel_error::invalid_argument);
  auto bad = src;
  bad[5].inv_freq_index = 64;
  CHECK(run(bad, good) == pk::kernel_error::invalid_argument);
  const auto other = pk::dense(y.data(), k.tokens, k.heads, 64);
  CHECK(pk::multi_axis_rope_reference<float>(table, src, in, other, good) ==
        pk::kernel_error::shape_mismatch);
  std::vector<float> kk(k.x.size(), 7.0f);
  CHECK(pk::multi_axis_rope_reference_qk<float>(
            table, src, in, out, in, pk::dense(kk.data(), k.tokens, k.heads, k.head_dim),
            std::array{of(small), of(small), of(past)}) == pk::kernel_error::position_out_of_range);
  for (float v : y) REQUIRE(v == 7.0f);
  for (float v : kk) REQUIRE(v == 7.0f);
  CHECK(run(src, good) == pk::kernel_error::ok);
  CHECK(y != std::vector<float>(k.x.size(), 7.0f));
}

// ---- golden: HF Qwen2-VL --------------------------------------------------------------------

namespace {
std::vector<float> floats(const nlohmann::json& field) {
  std::vector<float> v;
  for (const auto& h : field.at("hex"))
    v.push_back(std::bit_cast<float>(
        static_cast<std::uint32_t>(std::stoul(h.get<std::string>(), nullptr, 16))));
  return v;
}
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i])) return false;
  return true;
}
}  // namespace

TEST_CASE("multimodal/golden: HF Qwen2-VL M-RoPE", "[golden]") {
  const auto j = posenc_test::golden::load("hf_mrope_qwen2vl.json");
  const auto& par = j.at("parameters");
  const auto R = par.at("head_dim").get<std::uint32_t>();
  const auto sec = par.at("mrope_section").get<std::array<std::uint32_t, 3>>();
  const mrope_config c{{R, R, par.at("rope_theta").get<double>(), rope_layout::half}, sec};
  REQUIRE(posenc::validate(c) == posenc::mrope_error::ok);
  const std::uint32_t pairs = R / 2;
  const auto tokens = par.at("tokens").get<std::size_t>();
  const auto heads = par.at("heads").get<std::size_t>();

  // Which stream feeds each channel: an integer map, exactly.
  const auto soc = j.at("stream_of_channel").at("values").get<std::vector<std::uint32_t>>();
  REQUIRE(soc.size() == R);
  for (std::uint32_t ch = 0; ch < R; ++ch)
    CHECK(posenc::mrope_pair_source(c, ch % pairs).stream == soc[ch]);

  // The three streams, [3, 1, tokens].
  const auto pid =
      j.at("position_ids_input").at("position_ids").at("values").get<std::vector<std::int64_t>>();
  REQUIRE(pid.size() == 3 * tokens);
  std::vector<std::int64_t> ids[3];
  for (int s = 0; s < 3; ++s)
    ids[s].assign(pid.begin() + s * static_cast<std::ptrdiff_t>(tokens),
                  pid.begin() + (s + 1) * static_cast<std::ptrdiff_t>(tokens));
  const std::array<pk::token_positions, 3> streams{
      pk::token_positions::of(std::span<const std::int64_t>(ids[0])),
      pk::token_positions::of(std::span<const std::int64_t>(ids[1])),
      pk::token_positions::of(std::span<const std::int64_t>(ids[2]))};
  std::int64_t max_pos = 0;
  for (const auto& v : ids)
    for (std::int64_t p : v) max_pos = std::max(max_pos, p);
  const auto positions = static_cast<std::size_t>(max_pos) + 1;

  // q, k, outputs: [1, heads, tokens, R], a head-major view.
  const auto q = floats(j.at("q")), kv = floats(j.at("k"));
  const auto q_embed = floats(j.at("q_embed")), k_embed = floats(j.at("k_embed"));
  REQUIRE(q.size() == heads * tokens * R);
  auto view = [&](auto* data) {
    return pk::tensor_view<std::remove_pointer_t<decltype(data)>>{data, tokens, heads,
                                                                  R,    R,      tokens * R};
  };
  std::array<pair_source, 64> src{};
  REQUIRE(pairs == src.size());
  REQUIRE(posenc::build_mrope_pair_sources(c, src.data()) == posenc::mrope_error::ok);

  SECTION("given HF's cos and sin, q_embed and k_embed bit for bit") {
    // HF's per-stream cos/sin [3, 1, tokens, R] as a compact table by position: every (stream,
    // token) of one position must carry the same row, and both halves the same angles.
    const auto hc = floats(j.at("cos")), hs = floats(j.at("sin"));
    std::vector<float> tc(positions * pairs), ts(positions * pairs);
    std::vector<bool> seen(positions, false);
    for (std::size_t s = 0; s < 3; ++s)
      for (std::size_t t = 0; t < tokens; ++t) {
        const auto p = static_cast<std::size_t>(ids[s][t]);
        for (std::size_t i = 0; i < pairs; ++i) {
          const float cv = hc[(s * tokens + t) * R + i], sv = hs[(s * tokens + t) * R + i];
          REQUIRE(std::bit_cast<std::uint32_t>(cv) ==
                  std::bit_cast<std::uint32_t>(hc[(s * tokens + t) * R + i + pairs]));
          if (seen[p]) {
            REQUIRE(std::bit_cast<std::uint32_t>(tc[p * pairs + i]) ==
                    std::bit_cast<std::uint32_t>(cv));
            REQUIRE(std::bit_cast<std::uint32_t>(ts[p * pairs + i]) ==
                    std::bit_cast<std::uint32_t>(sv));
          }
          tc[p * pairs + i] = cv;
          ts[p * pairs + i] = sv;
        }
        seen[p] = true;
      }
    for (bool b : seen) REQUIRE(b);
    pk::rope_table table;
    table.cos = tc.data();
    table.sin = ts.data();
    table.positions = positions;
    table.rotary_dim = R;
    table.layout = rope_layout::half;
    // HF's merged cos: each channel from its section's stream, as gather_row reads our map.
    const auto merged = floats(j.at("cos_merged"));
    const posenc::rope_cache_view<float> hf_cache{tc.data(), ts.data(), positions, pairs, 1.0};
    for (std::size_t t = 0; t < tokens; ++t) {
      std::array<float, 64> gc{}, gs{};
      const std::array<std::uint64_t, 3> p{static_cast<std::uint64_t>(ids[0][t]),
                                           static_cast<std::uint64_t>(ids[1][t]),
                                           static_cast<std::uint64_t>(ids[2][t])};
      REQUIRE(posenc::gather_row(hf_cache, src, p, gc.data(), gs.data()));
      for (std::size_t ch = 0; ch < R; ++ch)
        CHECK(std::bit_cast<std::uint32_t>(gc[ch % pairs]) ==
              std::bit_cast<std::uint32_t>(merged[t * R + ch]));
    }
    std::vector<float> qo(q.size()), ko(q.size());
    REQUIRE(pk::multi_axis_rope_reference_qk<float>(table, src, view(q.data()), view(qo.data()),
                                                    view(kv.data()), view(ko.data()),
                                                    streams) == pk::kernel_error::ok);
    CHECK(same_bits(qo, q_embed));
    CHECK(same_bits(ko, k_embed));
  }

  SECTION("with posenc's own table, within HF's float32 angle error plus ours") {
    const auto cache = posenc::runtime_rope_cache<float>::make(c.rope, positions);
    const pk::rope_table table = pk::make_rope_table(cache.view(), c.rope.layout);
    std::vector<float> qo(q.size()), ko(q.size());
    REQUIRE(pk::multi_axis_rope_reference_qk<float>(table, src, view(q.data()), view(qo.data()),
                                                    view(kv.data()), view(ko.data()),
                                                    streams) == pk::kernel_error::ok);
    // tests/golden/README.md, hf_apply_rotary.json, tools/apply_golden: M (3|a| + 7.5) 2^-24,
    // a = p_s theta_i the angle of the pair's stream, M = |x_a| + |x_b|.
    double worst = 0.0;
    for (const auto& [x, got, hf] : {std::tuple{&q, &qo, &q_embed}, std::tuple{&kv, &ko, &k_embed}})
      for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t t = 0; t < tokens; ++t)
          for (std::size_t i = 0; i < pairs; ++i) {
            const std::size_t b = (h * tokens + t) * R;
            const double a = static_cast<double>(ids[src[i].stream][t]) *
                             std::pow(c.rope.base, -2.0 * static_cast<double>(i) / R);
            const double M = std::fabs((*x)[b + i]) + std::fabs((*x)[b + i + pairs]);
            const double bound = M * (3.0 * std::fabs(a) + 7.5) * 0x1p-24;
            for (std::size_t ch : {i, i + pairs}) {
              const double d = std::fabs(static_cast<double>((*got)[b + ch]) - (*hf)[b + ch]);
              CHECK(d <= bound);
              worst = std::max(worst, d / bound);
            }
          }
    WARN("largest |ours - HF| / bound: " << worst);
  }
}
