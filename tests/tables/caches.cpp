// posenc/tables/rope_cache.hpp and runtime_rope_cache.hpp: the compile-time caches (rope_cache_v)
// equal the runtime builders (build_rope_cache, runtime_rope_cache) bit for bit, whole tables, for
// several configs including scaled ones with an attention factor != 1; every entry is
// attention_factor * cos/sin(p * theta_i) correctly rounded (MPFR, sampled); invalid runtime
// configs are rejected without writing anything.
//
// The MPFR reference takes theta_i = inv_freq_dd(c, i, seq_len) and the attention factor
// attention_factor_dd(c) as exact inputs (their own accuracy is the frequencies layer's, tested
// there): the exact entry is af * cos(p * theta) at 256+ bits. The tables round a double-double
// value within 2^-90 relative of it (kResidue: the product p * theta, the double-double sin/cos
// and the product by af each add ~2^-104), so an entry must be the correctly rounded float or
// double unless a rounding midpoint lies within that residue (counted, either rounding accepted).
#include <posenc/tables.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "support/check.hpp"
#include "support/ct_args.hpp"
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

// ---- compile-time specs
// --------------------------------------------------------------------------
struct llama_like {  // Llama-2-7B: head_dim 128, base 10000, half-split
  static constexpr rope_config config{128, 128, 10000.0, rope_layout::half};
};
struct yarn_4 {  // YaRN factor 4: attention factor 0.1 ln 4 + 1 = 1.1386
  static constexpr rope_config config{64, 64, 10000.0, rope_layout::half,
                                      posenc::scaling::yarn(4.0, 2048)};
};
struct deepseek_like {  // DeepSeek-style mscale / mscale_all_dim ratio (here != 1), interleaved
  static constexpr rope_config config{64, 64, 10000.0, rope_layout::interleaved,
                                      posenc::scaling::yarn(40.0, 4096, 32.0, 1.0, true, 1.0, 0.8)};
};
struct neox_partial {  // GPT-NeoX-20B: 24 of 96 channels rotated
  static constexpr rope_config config{96, 24, 10000.0, rope_layout::half};
};
struct dynamic_ntk {  // depends on seq_len: compile time uses 0 (the original base)
  static constexpr rope_config config{16, 16, 10000.0, rope_layout::half,
                                      posenc::scaling::dynamic(2.0, 256)};
};
inline constexpr std::array<double, 8> kShort = {1.0, 1.05, 1.1, 1.2, 1.5, 2.0, 3.0, 4.0};
inline constexpr std::array<double, 8> kLong = {1.0, 1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0};
struct longrope_16 {  // short factors at seq_len 0; attention factor sqrt(1 + ln 4 / ln 64)
  static constexpr rope_config config{16, 16, 10000.0, rope_layout::half,
                                      posenc::scaling::longrope(kShort, kLong, 64, 256)};
};
// Double caches take the per-entry double-double path at compile time (~1-6 ms an entry), so
// they stay small.
struct small_interleaved {
  static constexpr rope_config config{8, 8, 10000.0, rope_layout::interleaved};
};
struct yarn_16 {
  static constexpr rope_config config{16, 16, 10000.0, rope_layout::half,
                                      posenc::scaling::yarn(4.0, 256)};
};

// The same config, read through volatile (rt, support/ct_args.hpp) so that nothing below is
// folded at compile time.
rope_config runtime_copy(const rope_config& c) {
  rope_config r = c;
  r.base = rt(c.base);
  r.scaling.factor = rt(c.scaling.factor);
  r.head_dim = rt(c.head_dim);
  return r;
}

// Checks entry (p, i) of a cache view of c against MPFR.
template <class T>
bool check_entry(const posenc::rope_cache_view<T>& v, const rope_config& c, std::uint64_t seq_len,
                 std::size_t p, std::size_t i, RoundReport& r_cos, RoundReport& r_sin) {
  const pm::dd theta = posenc::inv_freq_dd(c, static_cast<std::uint32_t>(i), seq_len);
  const pm::dd af = posenc::attention_factor_dd(c);
  ExactSinCos ex;
  ex.set_entry(p, theta.hi, theta.lo, af.hi, af.lo);
  auto desc = [&] {
    return describe(c, seq_len) + " p=" + std::to_string(p) + " i=" + std::to_string(i);
  };
  constexpr bool is_float = std::is_same_v<T, float>;
  const bool a =
      r_cos.check_near(v.cos_at(p, i), ex.c, is_float ? ex.cos_near : ex.cos_near_double, desc);
  const bool b =
      r_sin.check_near(v.sin_at(p, i), ex.s, is_float ? ex.sin_near : ex.sin_near_double, desc);
  return a && b;
}

// ---- compile time == run time, whole tables ----------------------------------------------------
template <class S, class T, std::size_t P>
void check_compile_time_table(const char* name) {
  const auto& ct = posenc::rope_cache_v<S, T, P>;
  const rope_config c = runtime_copy(S::config);
  const std::size_t pairs = c.rotary_dim / 2;
  const std::size_t n = P * pairs;

  std::vector<T> cos(n, T(-7)), sin(n, T(-7));
  REQUIRE(posenc::build_rope_cache<T>(c, P, cos.data(), sin.data()) == rope_error::ok);
  const auto built = posenc::runtime_rope_cache<T>::make(c, P);

  const posenc::rope_cache_view<T> vc = ct.view();
  const posenc::rope_cache_view<T> vr = built.view();
  CHECK(vc.positions == P);
  CHECK(vc.pairs == pairs);
  CHECK(vr.positions == P);
  CHECK(vr.pairs == pairs);
  CHECK(built.size() == n);
  CHECK(same_bits(vc.attention_factor, posenc::attention_factor(c)));
  CHECK(same_bits(vr.attention_factor, posenc::attention_factor(c)));

  std::size_t differ_builder = 0;
  std::size_t differ_owning = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (!same_bits(ct.cos[k], cos[k]) || !same_bits(ct.sin[k], sin[k])) ++differ_builder;
    if (!same_bits(ct.cos[k], built.cos()[k]) || !same_bits(ct.sin[k], built.sin()[k]))
      ++differ_owning;
  }
  std::cout << "[table] " << name << ": " << n << " entries per table (" << P << " positions x "
            << pairs << " pairs, attention factor " << vc.attention_factor << "), "
            << differ_builder << " differ from build_rope_cache, " << differ_owning
            << " from runtime_rope_cache\n";
  CHECK(differ_builder == 0);
  CHECK(differ_owning == 0);

  // Accessors agree with the raw layout [p * pairs + i].
  for (std::size_t p : {std::size_t{0}, P / 2, P - 1}) {
    for (std::size_t i : {std::size_t{0}, pairs - 1}) {
      CHECK(same_bits(ct.cos_at(p, i), ct.cos[p * pairs + i]));
      CHECK(same_bits(vc.sin_row(p)[i], ct.sin[p * pairs + i]));
      CHECK(same_bits(built.cos_at(p, i), vr.cos_row(p)[i]));
      CHECK(same_bits(built.sin_at(p, i), vr.sin_at(p, i)));
    }
  }

  // A sample against MPFR (about 1500 entries, always including position 0 and the last one).
  RoundReport rc_(std::string(name) + ": cos (sample)"), rs(std::string(name) + ": sin (sample)");
  const std::size_t step = n / 1500 + 1;
  for (std::size_t k = 0; k < n; k += step) check_entry(vc, c, 0, k / pairs, k % pairs, rc_, rs);
  check_entry(vc, c, 0, P - 1, pairs - 1, rc_, rs);
  INFO(first_violations_of(rc_, rs));
  CHECK(violations_of(rc_, rs) == 0);
}

}  // namespace

TEST_CASE("tables/compile-time caches == runtime builders, whole tables; sampled entries exact",
          "[tables][cache][mpfr]") {
  check_compile_time_table<llama_like, float, 512>("llama-like 128/10000 half, float");
  check_compile_time_table<yarn_4, float, 300>("yarn factor 4, float");
  check_compile_time_table<deepseek_like, float, 200>(
      "yarn factor 40, mscale 1 / mscale_all_dim 0.8, interleaved, float");
  check_compile_time_table<neox_partial, float, 512>("neox 24 of 96 channels, float");
  check_compile_time_table<dynamic_ntk, float, 300>("dynamic NTK (seq_len 0), float");
  check_compile_time_table<longrope_16, float, 200>("longrope (short factors), float");
  check_compile_time_table<small_interleaved, double, 24>("8/10000 interleaved, double");
  check_compile_time_table<yarn_16, double, 12>("yarn factor 4, 16 channels, double");
}

TEST_CASE("tables/the attention factor multiplies cos and sin", "[tables][cache]") {
  const auto& yarn = posenc::rope_cache_v<yarn_4, float, 300>;
  const auto& ds = posenc::rope_cache_v<deepseek_like, float, 200>;
  // HF get_mscale: 0.1 ln 4 + 1; DeepSeek: (0.1 * 1 ln 40 + 1) / (0.1 * 0.8 ln 40 + 1).
  CHECK(yarn.attention_factor == Approx(1.1386294361119891).epsilon(1e-15));
  CHECK(ds.attention_factor == Approx(1.3688879454113936 / 1.2951103563291149).epsilon(1e-15));
  CHECK(posenc::rope_cache_v<longrope_16, float, 200>.attention_factor ==
        Approx(1.1547005383792515).epsilon(1e-15));  // sqrt(1 + ln 4 / ln 64) = sqrt(4/3)
  // Position 0: cos = attention factor (rounded to float), sin = 0, for every pair.
  for (std::size_t i = 0; i < yarn.pairs(); ++i) {
    CHECK(yarn.cos_at(0, i) == static_cast<float>(yarn.attention_factor));
    CHECK(yarn.sin_at(0, i) == 0.0f);
  }
  // cos^2 + sin^2 = af^2 within float rounding: |c^2 + s^2 - af^2| <= af^2 (2^-23 + 2^-48) + ...
  for (std::size_t p = 0; p < yarn.positions(); p += 7) {
    for (std::size_t i = 0; i < yarn.pairs(); ++i) {
      const double c = yarn.cos_at(p, i);
      const double s = yarn.sin_at(p, i);
      const double af2 = yarn.attention_factor * yarn.attention_factor;
      REQUIRE(std::abs(c * c + s * s - af2) <= af2 * (0x1p-23 + 0x1p-44));
    }
  }
}

TEST_CASE("tables/dynamic and longrope: the runtime builder takes seq_len (HF semantics)",
          "[tables][cache]") {
  // Every entry of a runtime cache at seq_len equals the per-element value with
  // inv_freq_dd(c, i, seq_len); seq_len at or below the threshold gives the compile-time cache.
  auto check = [](const rope_config& cfg, const auto& ct, std::uint64_t seq_len,
                  bool same_as_compile_time) {
    const rope_config c = runtime_copy(cfg);
    const std::size_t P = ct.positions();
    const auto built = posenc::runtime_rope_cache<float>::make(c, P, seq_len);
    const pm::dd af = posenc::attention_factor_dd(c);
    std::size_t wrong = 0;
    std::size_t differ_ct = 0;
    for (std::size_t p = 0; p < P; ++p) {
      for (std::size_t i = 0; i < ct.pairs(); ++i) {
        const auto v = pm::sincos_of_product<float>(
            p, posenc::inv_freq_dd(c, static_cast<std::uint32_t>(i), seq_len), af);
        if (!same_bits(v.cos, built.cos_at(p, i)) || !same_bits(v.sin, built.sin_at(p, i))) ++wrong;
        if (!same_bits(ct.cos_at(p, i), built.cos_at(p, i))) ++differ_ct;
      }
    }
    INFO(describe(c, seq_len));
    CHECK(wrong == 0);
    if (same_as_compile_time) {
      CHECK(differ_ct == 0);
    } else {
      CHECK(differ_ct > 0);
    }
  };
  const auto& dyn = posenc::rope_cache_v<dynamic_ntk, float, 300>;
  check(dynamic_ntk::config, dyn, 0, true);
  check(dynamic_ntk::config, dyn, 256, true);  // seq_len <= max_position_embeddings: base kept
  check(dynamic_ntk::config, dyn, 257, false);
  check(dynamic_ntk::config, dyn, 1000, false);
  const auto& lr = posenc::rope_cache_v<longrope_16, float, 200>;
  check(longrope_16::config, lr, 0, true);
  check(longrope_16::config, lr, 64, true);   // not > original_max_position_embeddings: short
  check(longrope_16::config, lr, 65, false);  // long factors
}

TEST_CASE("tables/runtime builders on random configs: per-element values, correctly rounded",
          "[tables][cache][mpfr]") {
  RoundReport fc("runtime caches, random configs: float cos (sample)");
  RoundReport fs("runtime caches, random configs: float sin (sample)");
  RoundReport dc("runtime caches, random configs: double cos (sample)");
  RoundReport ds("runtime caches, random configs: double sin (sample)");
  std::uint64_t entries = 0;
  rc::prop("build_rope_cache == sincos_of_product(p, inv_freq_dd(c, i, seq_len), af)", [&] {
    const RandomRope r = *random_rope(128);
    const rope_config& c = r.config;
    const auto P = static_cast<std::size_t>(*int_in(1, 200));
    const std::size_t pairs = c.rotary_dim / 2;
    std::vector<float> cf(P * pairs), sf(P * pairs);
    std::vector<double> cd(P * pairs), sd(P * pairs);
    RC_ASSERT(posenc::build_rope_cache<float>(c, P, cf.data(), sf.data(), r.seq_len) ==
              rope_error::ok);
    RC_ASSERT(posenc::build_rope_cache<double>(c, P, cd.data(), sd.data(), r.seq_len) ==
              rope_error::ok);
    const pm::dd af = posenc::attention_factor_dd(c);
    for (std::size_t i = 0; i < pairs; ++i) {
      const pm::dd theta = posenc::inv_freq_dd(c, static_cast<std::uint32_t>(i), r.seq_len);
      for (std::size_t p = 0; p < P; ++p) {
        const std::size_t k = p * pairs + i;
        const auto f = pm::sincos_of_product<float>(p, theta, af);
        const auto d = pm::sincos_of_product<double>(p, theta, af);
        if (!same_bits(f.cos, cf[k]) || !same_bits(f.sin, sf[k]) || !same_bits(d.cos, cd[k]) ||
            !same_bits(d.sin, sd[k]))
          RC_FAIL("entry p=" + std::to_string(p) + " i=" + std::to_string(i) +
                  " differs from sincos_of_product");
      }
    }
    entries += 2 * P * pairs;
    const posenc::rope_cache_view<float> vf{cf.data(), sf.data(), P, pairs, 1.0};
    const posenc::rope_cache_view<double> vd{cd.data(), sd.data(), P, pairs, 1.0};
    for (int s = 0; s < 6; ++s) {
      const auto p = static_cast<std::size_t>(*int_in(0, static_cast<std::int64_t>(P) - 1));
      const auto i = static_cast<std::size_t>(*int_in(0, static_cast<std::int64_t>(pairs) - 1));
      check_entry(vf, c, r.seq_len, p, i, fc, fs);
      check_entry(vd, c, r.seq_len, p, i, dc, ds);
    }
    assert_batch(fc, fs, dc, ds);
    // The owning cache holds the same entries.
    const auto owned = posenc::runtime_rope_cache<float>::make(c, P, r.seq_len);
    RC_ASSERT(owned.positions() == P);
    RC_ASSERT(owned.pairs() == pairs);
    RC_ASSERT(same_bits(owned.attention_factor(), posenc::attention_factor(c)));
    for (std::size_t k = 0; k < P * pairs; ++k)
      RC_ASSERT(same_bits(owned.cos()[k], cf[k]) && same_bits(owned.sin()[k], sf[k]));
  });
  if (entries > 0)
    std::cout << "[table] runtime builders on random configs: " << entries
              << " entries equal sincos_of_product (float and double)\n";
  INFO(first_violations_of(fc, fs, dc, ds));
  CHECK(violations_of(fc, fs, dc, ds) == 0);
}

TEST_CASE("tables/invalid runtime configs: error returned, nothing written, make throws",
          "[tables][cache][errors]") {
  rc::prop("build_rope_cache rejects an invalid config without writing", [] {
    const rope_config c = *invalid_rope();
    const rope_error e = posenc::validate(c);
    RC_ASSERT(e != rope_error::ok);
    constexpr float kSentinel = -12345.0f;
    // Large enough for what a (wrong) write of 3 positions could touch.
    std::vector<float> cs(3 * 64, kSentinel), sn(3 * 64, kSentinel);
    RC_ASSERT(posenc::build_rope_cache<float>(c, 3, cs.data(), sn.data()) == e);
    for (std::size_t k = 0; k < cs.size(); ++k) RC_ASSERT(cs[k] == kSentinel && sn[k] == kSentinel);
    std::vector<double> cd(3 * 64, -1.0), sd(3 * 64, -1.0);
    RC_ASSERT(posenc::build_rope_cache<double>(c, 3, cd.data(), sd.data(), 100) == e);
    for (std::size_t k = 0; k < cd.size(); ++k) RC_ASSERT(cd[k] == -1.0 && sd[k] == -1.0);

    std::string what;
    try {
      static_cast<void>(posenc::runtime_rope_cache<float>::make(c, 3));
    } catch (const std::invalid_argument& ex) {
      what = ex.what();
    }
    RC_ASSERT(what == posenc::message(e));

    auto kept = posenc::runtime_rope_cache<double>::make(llama_like::config, 5);
    RC_ASSERT(posenc::runtime_rope_cache<double>::try_make(c, 3, kept) == e);
    RC_ASSERT(kept.positions() == 5u);
    RC_ASSERT(kept.pairs() == 64u);
    RC_ASSERT(kept.cos_at(0, 0) == 1.0);
  });

  // One named rule: the message is the rule's.
  rope_config bad{64, 63, 10000.0, rope_layout::half};
  std::vector<float> buf(256, 3.0f);
  CHECK(posenc::build_rope_cache<float>(bad, 2, buf.data(), buf.data() + 128) ==
        rope_error::rotary_dim);
  CHECK(buf == std::vector<float>(256, 3.0f));
  CHECK_THROWS_WITH(posenc::runtime_rope_cache<float>::make(bad, 2),
                    "posenc: rotary_dim must be even, >= 2 and <= head_dim");
}

TEST_CASE("tables/runtime_rope_cache: empty caches, sizes that overflow", "[tables][cache]") {
  const posenc::runtime_rope_cache<float> none;
  CHECK(none.positions() == 0);
  CHECK(none.view().empty());
  const auto zero = posenc::runtime_rope_cache<float>::make(yarn_4::config, 0);
  CHECK(zero.positions() == 0);
  CHECK(zero.pairs() == 32);
  CHECK(zero.view().empty());
  CHECK(zero.attention_factor() == posenc::attention_factor(yarn_4::config));
  // No positions: null outputs are valid (no offset is applied to them: UBSan's pointer-overflow
  // check in the sanitizer stage), and an invalid config is still reported.
  CHECK(posenc::build_rope_cache<float>(yarn_4::config, 0, nullptr, nullptr) == rope_error::ok);
  CHECK(posenc::build_rope_cache<double>(llama_like::config, 0, nullptr, nullptr, 4096) ==
        rope_error::ok);
  CHECK(posenc::build_rope_cache<float>(rope_config{64, 63, 10000.0, rope_layout::half}, 0,
                                        nullptr, nullptr) == rope_error::rotary_dim);
  // max_pos * pairs overflows std::size_t: reported by std::vector, never truncated.
  CHECK_THROWS_AS(posenc::runtime_rope_cache<float>::make(
                      yarn_4::config, std::numeric_limits<std::size_t>::max() / 4),
                  std::length_error);
}
