// posenc/spec/t5.hpp and posenc/tables/t5.hpp:
// - each rule of all_t5_rules is broken by a config that breaks only it, next to a valid twin on
//   the rule's boundary; the run-time builders report it (or throw) and write nothing;
// - the buckets equal MPFR, for every relative position in [-max_distance - 2, max_distance + 2]:
//   the exact form against floor(R log(n / max_exact) / log(max_distance / max_exact)) at 512
//   bits (a value within 2^-400 of an integer is that integer: the exact value is rational there),
//   the hf_float32 form against HF's arithmetic replayed in MPFR at 24 bits (n / max_exact and
//   the log rounded to float32, Python's float64 log(max_distance / max_exact) rounded to float32,
//   the quotient and the product by R rounded to float32, then truncated); on the presets, on
//   configs where the two forms differ, and on random configs;
// - the laws (RapidCheck): range, exact region, monotone in distance, saturation at and past
//   max_distance, bidirectional symmetry (bucket(d) = bucket(-d) + num_buckets / 2), causal keys
//   after the query in bucket 0;
// - compile-time tables equal the run-time ones; the bias of (head, rel) is the weight of
//   (bucket, head) in HF's [num_buckets, heads] layout.
#include <posenc/spec/t5.hpp>
#include <posenc/tables/t5.hpp>

#include <mpfr.h>
#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/mpfr_ref.hpp"

namespace {
using namespace posenc;
using posenc_test::Mpfr;

// ---------------------------------------------------------------------------------------------
// MPFR references, written from the formula (tables/t5.hpp cites it) without posenc's code.

// floor(R log(n / me) / log(md / me)), n >= me.
std::uint64_t mpfr_exact_step(std::uint64_t n, std::uint64_t me, std::uint64_t md,
                              std::uint64_t r) {
  constexpr mpfr_prec_t p = 512;
  Mpfr a(p), b(p), v(p), k(p), d(p);
  mpfr_set_ui(a, n, MPFR_RNDN);
  mpfr_div_ui(a, a, me, MPFR_RNDN);
  mpfr_log(a, a, MPFR_RNDN);
  mpfr_set_ui(b, md, MPFR_RNDN);
  mpfr_div_ui(b, b, me, MPFR_RNDN);
  mpfr_log(b, b, MPFR_RNDN);
  mpfr_div(v, a, b, MPFR_RNDN);
  mpfr_mul_ui(v, v, r, MPFR_RNDN);
  mpfr_round(k, v);
  mpfr_sub(d, v, k, MPFR_RNDN);
  mpfr_abs(d, d, MPFR_RNDN);
  if (mpfr_zero_p(d) != 0 || mpfr_cmp_ui_2exp(d, 1, -400) < 0) return mpfr_get_ui(k, MPFR_RNDN);
  return mpfr_get_ui(v, MPFR_RNDD);
}

// HF's float32 evaluation (modeling_t5.py), each operation correctly rounded at its precision.
std::uint64_t mpfr_hf_step(std::uint64_t n, std::uint64_t me, std::uint64_t md, std::uint64_t r) {
  Mpfr x(24), lx(24), q(53), l(24), y(24);
  mpfr_set_ui(x, n, MPFR_RNDN);
  mpfr_div_ui(x, x, me, MPFR_RNDN);
  mpfr_log(lx, x, MPFR_RNDN);
  mpfr_set_ui(q, md, MPFR_RNDN);
  mpfr_div_ui(q, q, me, MPFR_RNDN);
  mpfr_log(q, q, MPFR_RNDN);
  mpfr_set(l, q, MPFR_RNDN);
  mpfr_div(y, lx, l, MPFR_RNDN);
  mpfr_mul_ui(y, y, r, MPFR_RNDN);
  return mpfr_get_ui(y, MPFR_RNDZ);
}

std::uint32_t mpfr_bucket(const t5_config& c, std::int64_t rel) {
  std::uint64_t side = c.num_buckets;
  std::uint64_t offset = 0;
  std::uint64_t n = 0;
  if (c.direction == t5_direction::bidirectional) {
    side /= 2;
    if (rel > 0) offset = side;
    n = static_cast<std::uint64_t>(rel < 0 ? -rel : rel);
  } else {
    n = static_cast<std::uint64_t>(rel < 0 ? -rel : 0);
  }
  const std::uint64_t me = side / 2;
  if (n < me) return static_cast<std::uint32_t>(offset + n);
  const std::uint64_t step = c.log == t5_log_kind::exact
                                 ? mpfr_exact_step(n, me, c.max_distance, side - me)
                                 : mpfr_hf_step(n, me, c.max_distance, side - me);
  const std::uint64_t b = me + step;
  return static_cast<std::uint32_t>(offset + (b < side - 1 ? b : side - 1));
}

// Buckets of every rel in [-md - 2, md + 2] that differ from MPFR (0: all equal).
std::size_t mismatches(const t5_config& c) {
  std::size_t bad = 0;
  const auto md = static_cast<std::int64_t>(c.max_distance);
  for (std::int64_t rel = -md - 2; rel <= md + 2; ++rel)
    if (t5_bucket(c, rel) != mpfr_bucket(c, rel)) {
      if (bad < 5)
        UNSCOPED_INFO("nb=" << c.num_buckets << " md=" << c.max_distance << " "
                            << t5_direction_name(c.direction) << " " << t5_log_kind_name(c.log)
                            << " rel=" << rel << ": " << t5_bucket(c, rel) << " vs MPFR "
                            << mpfr_bucket(c, rel));
      ++bad;
    }
  return bad;
}

t5_config with_log(t5_config c, t5_log_kind k) {
  c.log = k;
  return c;
}

TEST_CASE("t5 buckets == MPFR: presets and configs where the forms differ") {
  std::vector<t5_config> cs = {t5_base_config(t5_direction::bidirectional),
                               t5_base_config(t5_direction::causal),
                               {8, 20, 1, t5_direction::causal, t5_log_kind::exact},
                               {64, 1000, 1, t5_direction::bidirectional, t5_log_kind::exact},
                               {4, 3, 1, t5_direction::bidirectional, t5_log_kind::exact},
                               {2, 2, 1, t5_direction::causal, t5_log_kind::exact}};
  // Causal configs where HF's float32 value and the exact one fall on either side of an integer
  // (rel -18 and -12 at 17/27, -15 at 19/25, -218 at 31/532, -30 at 36/50, -107 at 46/164, -54
  // and -36 at 48/81): both forms are checked on each.
  const std::pair<std::uint32_t, std::uint32_t> differ[] = {{17, 27}, {19, 25},  {31, 532},
                                                            {36, 50}, {46, 164}, {48, 81}};
  for (const auto& [nb, md] : differ) cs.push_back({nb, md, 1, t5_direction::causal});
  std::size_t forms_differ = 0;
  for (const t5_config& c : cs)
    for (const t5_log_kind k : all_t5_log_kinds) {
      const t5_config ck = with_log(c, k);
      REQUIRE(validate(ck) == t5_error::ok);
      CHECK(mismatches(ck) == 0);
    }
  for (const auto& [nb, md] : differ) {
    const t5_config hf{nb, md, 1, t5_direction::causal, t5_log_kind::hf_float32};
    const t5_config ex = with_log(hf, t5_log_kind::exact);
    for (std::int64_t rel = -static_cast<std::int64_t>(md); rel <= 0; ++rel)
      if (t5_bucket(hf, rel) != t5_bucket(ex, rel)) ++forms_differ;
  }
  CHECK(forms_differ == 8);
}

TEST_CASE("t5 buckets == MPFR: random configs") {
  rc::prop("exact and hf_float32 buckets", [] {
    const auto dir = *rc::gen::elementOf(
        std::vector<t5_direction>{t5_direction::bidirectional, t5_direction::causal});
    const std::uint32_t half = *rc::gen::inRange<std::uint32_t>(1, 150);
    const std::uint32_t nb = dir == t5_direction::bidirectional
                                 ? 2 * (half + 1)
                                 : *rc::gen::inRange<std::uint32_t>(2, 300);
    t5_config c{nb, 0, 1, dir};
    c.max_distance = t5_max_exact(c) + *rc::gen::inRange<std::uint32_t>(1, 300);
    for (const t5_log_kind k : all_t5_log_kinds) {
      c.log = k;
      RC_ASSERT(validate(c) == t5_error::ok);
      RC_ASSERT(mismatches(c) == 0u);
    }
  });
}

TEST_CASE("t5 bucket laws") {
  rc::prop("range, exact region, monotone, saturation, symmetry", [] {
    const auto dir = *rc::gen::elementOf(
        std::vector<t5_direction>{t5_direction::bidirectional, t5_direction::causal});
    const std::uint32_t nb = dir == t5_direction::bidirectional
                                 ? 2 * *rc::gen::inRange<std::uint32_t>(2, 300)
                                 : *rc::gen::inRange<std::uint32_t>(2, 600);
    t5_config c{
        nb, 0, 1, dir,
        *rc::gen::elementOf(std::vector<t5_log_kind>{t5_log_kind::hf_float32, t5_log_kind::exact})};
    const std::uint32_t me = t5_max_exact(c);
    c.max_distance = me + *rc::gen::inRange<std::uint32_t>(1, 2000);
    RC_ASSERT(validate(c) == t5_error::ok);
    const bool bidi = dir == t5_direction::bidirectional;
    const std::uint32_t side = bidi ? nb / 2 : nb;
    const auto md = static_cast<std::int64_t>(c.max_distance);
    std::uint32_t prev = 0;
    for (std::int64_t n = 0; n <= md + 3; ++n) {
      const std::uint32_t b = t5_bucket(c, -n);
      RC_ASSERT(b < nb);
      if (n < me) RC_ASSERT(b == static_cast<std::uint32_t>(n));
      if (n >= md) RC_ASSERT(b == side - 1);
      RC_ASSERT(b >= prev);
      prev = b;
      if (bidi && n > 0) RC_ASSERT(t5_bucket(c, n) == b + nb / 2);
      if (!bidi) RC_ASSERT(t5_bucket(c, n) == 0u);
    }
    const std::int64_t far = *rc::gen::inRange<std::int64_t>(md, INT64_MAX);
    RC_ASSERT(t5_bucket(c, -far) == side - 1);
    RC_ASSERT(t5_bucket(c, far) == (bidi ? nb - 1 : 0u));
  });
  CHECK(t5_bucket(t5_base_config(), INT64_MIN) == 15u);
}

// ---------------------------------------------------------------------------------------------
// Rules.

struct rule_case {
  t5_error rule;
  t5_config broken;
  t5_config twin;
};

const rule_case rule_cases[] = {
    {t5_error::direction,
     {32, 128, 1, static_cast<t5_direction>(2)},
     {32, 128, 1, t5_direction::causal}},
    {t5_error::log,
     {32, 128, 1, t5_direction::causal, static_cast<t5_log_kind>(2)},
     {32, 128, 1, t5_direction::causal, t5_log_kind::exact}},
    {t5_error::num_buckets, {0, 128, 1, t5_direction::causal}, {2, 128, 1, t5_direction::causal}},
    {t5_error::num_buckets_odd,
     {33, 128, 1, t5_direction::bidirectional},
     {34, 128, 1, t5_direction::bidirectional}},
    {t5_error::num_buckets_small,
     {2, 128, 1, t5_direction::bidirectional},
     {4, 128, 1, t5_direction::bidirectional}},
    {t5_error::num_buckets_small,
     {1, 128, 1, t5_direction::causal},
     {2, 2, 1, t5_direction::causal}},
    {t5_error::num_buckets_large,
     {65537, 1u << 16, 1, t5_direction::causal},
     {65536, 1u << 16, 1, t5_direction::causal}},
    {t5_error::max_distance,
     {32, 8, 1, t5_direction::bidirectional},
     {32, 9, 1, t5_direction::bidirectional}},
    {t5_error::max_distance, {32, 16, 1, t5_direction::causal}, {32, 17, 1, t5_direction::causal}},
    {t5_error::max_distance_large,
     {32, (1u << 24) + 1, 1, t5_direction::causal},
     {32, 1u << 24, 1, t5_direction::causal}},
    {t5_error::heads, {32, 128, 0, t5_direction::causal}, {32, 128, 1, t5_direction::causal}},
};

TEST_CASE("t5 rules: each broken alone, twin valid, builders write nothing") {
  for (const rule_case& rc : rule_cases) {
    INFO(message(rc.rule));
    CHECK(validate(rc.broken) == rc.rule);
    CHECK(validate(rc.twin) == t5_error::ok);
    for (const t5_error e : all_t5_rules) CHECK(satisfies(rc.broken, e) == (e != rc.rule));
    std::uint32_t sentinel[4] = {7, 7, 7, 7};
    CHECK(build_t5_buckets(rc.broken, sentinel) == rc.rule);
    CHECK(sentinel[0] == 7u);
    t5_error got = t5_error::ok;
    const std::vector<float> w(4, 1.0f);
    CHECK(make_t5_relative_bias(rc.broken, w, &got).empty());
    CHECK(got == rc.rule);
    CHECK_THROWS_AS(make_t5_relative_bias(rc.broken, w), std::invalid_argument);
  }
  // Every rule has a case, and distinct messages.
  for (const t5_error e : all_t5_rules) {
    bool has = false;
    for (const rule_case& rc : rule_cases) has = has || rc.rule == e;
    CHECK(has);
    CHECK(std::string(message(e)).rfind("posenc: t5 ", 0) == 0);
    for (const t5_error f : all_t5_rules)
      if (f != e) CHECK(std::string(message(e)) != message(f));
  }
  // The weight table's size.
  const t5_config c = t5_base_config();
  t5_error got = t5_error::ok;
  CHECK(make_t5_relative_bias(c, std::vector<float>(32 * 12 - 1), &got).empty());
  CHECK(got == t5_error::weights);
  CHECK_THROWS_WITH(make_t5_relative_bias(c, std::vector<float>(32 * 13)),
                    "posenc: t5 weights must hold num_buckets * heads values");
  std::vector<float> out(3, 5.0f);
  CHECK(build_t5_relative_bias(c, std::vector<float>(3), out.data()) == t5_error::weights);
  CHECK(out == std::vector<float>(3, 5.0f));
}

// ---------------------------------------------------------------------------------------------
// Tables.

struct enc_spec {
  static constexpr t5_config config = {8, 20, 3, t5_direction::bidirectional};
};
struct dec_spec {
  static constexpr t5_config config = {8, 20, 3, t5_direction::causal, t5_log_kind::exact};
};
// Weight of (bucket b, head h) = 100 b + h: the bias names its bucket and head.
constexpr std::array<float, 24> tagged_weights = [] {
  std::array<float, 24> w{};
  for (std::size_t b = 0; b < 8; ++b)
    for (std::size_t h = 0; h < 3; ++h) w[b * 3 + h] = static_cast<float>(100 * b + h);
  return w;
}();

template <class S>
void check_tables() {
  constexpr t5_config c = S::config;
  constexpr auto buckets = t5_buckets_v<S>;
  constexpr auto bias = t5_relative_bias<S>(tagged_weights);
  const std::vector<float> run = make_t5_relative_bias(c, tagged_weights);
  REQUIRE(run.size() == bias.size());
  const auto md = static_cast<std::int64_t>(c.max_distance);
  const std::size_t n = t5_distance_count(c);
  for (std::int64_t rel = -md; rel <= md; ++rel) {
    const auto at = static_cast<std::size_t>(rel + md);
    const std::uint32_t want = mpfr_bucket(c, rel);
    CHECK(buckets[at] == want);
    for (std::size_t h = 0; h < 3; ++h) {
      CHECK(bias[h * n + at] == static_cast<float>(100 * want + h));
      CHECK(run[h * n + at] == bias[h * n + at]);
    }
  }
}

TEST_CASE("t5 tables: compile time == run time == MPFR buckets, HF weight layout") {
  check_tables<enc_spec>();
  check_tables<dec_spec>();
}

}  // namespace
