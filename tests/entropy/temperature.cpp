// posenc/spec/attention_temperature.hpp against exact math (MPFR) and its laws:
// - llama4: s(p) = log(floor((p + 1) / floor_scale) + 1) attn_scale + 1 (HF modeling_llama4.py),
//   the floor taken in MPFR at 256 bits (exact for these operands), at random positions and at
//   every floor boundary (p + 1 = k floor_scale and one before);
// - logn: s(p) = log_L(p + 1) past L, exactly 1 up to L (Qwen modeling_qwen.py logn_list);
// - both rounded once: within 0.5 ulp + 2^-90 relative of MPFR (the double-double error);
// - laws: s >= 1 and non-decreasing in p on tables, runtime table == element function, the
//   compile-time table == the runtime one; rules: each broken rule named, nothing written.
#include <posenc/spec/attention_temperature.hpp>

#include <rapidcheck.h>
#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "support/mpfr_ref.hpp"

namespace {
using posenc::attention_temperature;
using posenc::temperature_error;
using posenc_test::Mpfr;
namespace temperature = posenc::temperature;

// The exact factor in MPFR.
void exact_scale(Mpfr& out, const attention_temperature& t, std::uint64_t p) {
  Mpfr n, x;
  mpfr_set_ui(n, 0, MPFR_RNDN);
  mpfr_set_d(n, static_cast<double>(p + 1), MPFR_RNDN);  // exact: p + 1 <= 2^51
  if (t.kind == posenc::temperature_kind::llama4) {
    mpfr_div_d(x, n, t.floor_scale, MPFR_RNDN);
    mpfr_floor(x, x);
    mpfr_log1p(x, x, MPFR_RNDN);
    mpfr_mul_d(x, x, t.attn_scale, MPFR_RNDN);
    mpfr_add_ui(out, x, 1, MPFR_RNDN);
  } else if (t.kind == posenc::temperature_kind::logn && p + 1 > t.seq_length) {
    Mpfr l;
    mpfr_log(x, n, MPFR_RNDN);
    mpfr_set_d(l, static_cast<double>(t.seq_length), MPFR_RNDN);
    mpfr_log(l, l, MPFR_RNDN);
    mpfr_div(out, x, l, MPFR_RNDN);
  } else {
    mpfr_set_ui(out, 1, MPFR_RNDN);
  }
}

// |got - exact| within half an ulp of the double plus the double-double error (2^-90 relative).
bool close(double got, const Mpfr& exact) {
  Mpfr d;
  mpfr_sub_d(d, exact, got, MPFR_RNDN);
  mpfr_abs(d, d, MPFR_RNDN);
  const double err = mpfr_get_d(d, MPFR_RNDU);
  return err <= 0.5 * posenc_test::ulp_double_of(exact) + 0x1p-90 * std::fabs(got);
}

}  // namespace

TEST_CASE("temperature: llama4 == MPFR at the floor boundaries", "[temperature][llama4]") {
  for (const attention_temperature t :
       {temperature::llama4(), temperature::llama4(8192.0, 0.25), temperature::llama4(3.0, 1.0),
        temperature::llama4(1000.5, 0.1), temperature::llama4(1.0, 0.1)}) {
    for (std::uint64_t k = 1; k < 4000; k += 37) {
      const double edge = std::floor(static_cast<double>(k) * t.floor_scale);  // p + 1 = edge
      for (double p1 : {edge - 1.0, edge, edge + 1.0}) {
        const auto p = static_cast<std::uint64_t>(p1) - 1;
        Mpfr exact;
        exact_scale(exact, t, p);
        const double got = posenc::query_scale<double>(t, p);
        INFO("floor_scale " << t.floor_scale << " p " << p);
        CHECK(close(got, exact));
      }
    }
  }
  // HF defaults: 1 below 8191, then 1 + 0.1 ln 2 from p = 8191.
  CHECK(posenc::query_scale<double>(temperature::llama4(), 8190) == 1.0);
  CHECK(posenc::query_scale<double>(temperature::llama4(), 8191) == 1.0 + 0.1 * std::log(2.0));
}

TEST_CASE("temperature: llama4 and logn == MPFR at random positions", "[temperature][mpfr]") {
  rc::prop("query_scale within 0.5 ulp + 2^-90 of MPFR", [] {
    const int kind = *rc::gen::inRange(0, 2);
    attention_temperature t;
    if (kind == 0) {
      const double fs = *rc::gen::inRange(1, 100000) * 0.5 + 0.5;
      const double as = *rc::gen::inRange(0, 1000) / 997.0;
      t = temperature::llama4(fs, as);
    } else {
      t = temperature::logn(*rc::gen::inRange<std::uint64_t>(2, 1u << 20));
    }
    const std::uint64_t p = *rc::gen::inRange<std::uint64_t>(0, std::uint64_t{1} << 40);
    Mpfr exact;
    exact_scale(exact, t, p);
    RC_ASSERT(close(posenc::query_scale<double>(t, p), exact));
    RC_ASSERT(posenc::query_scale<float>(t, p) == posenc_test::round_float(exact) ||
              posenc_test::near_float_midpoint(exact, 0x1p-90));
  });
}

TEST_CASE("temperature: logn is 1 up to the training length, log_L(p + 1) past it",
          "[temperature][logn]") {
  const attention_temperature t = temperature::logn(8192);
  for (std::uint64_t p = 0; p < 8192; p += 97) CHECK(posenc::query_scale<double>(t, p) == 1.0);
  CHECK(posenc::query_scale<double>(t, 8191) == 1.0);
  CHECK(posenc::query_scale<double>(t, 8192) > 1.0);
  CHECK(posenc::query_scale<double>(t, 16383) == 14.0 / 13.0);  // log_{2^13} 2^14
  CHECK(posenc::query_scale<double>(t, 131071) == 17.0 / 13.0);
  CHECK(posenc::query_scale<double>(temperature::none(), 1u << 30) == 1.0);
}

TEST_CASE("temperature: tables are >= 1, non-decreasing, == the element function",
          "[temperature][laws]") {
  rc::prop("monotone tables", [] {
    const bool l4 = *rc::gen::arbitrary<bool>();
    const attention_temperature t =
        l4 ? temperature::llama4(*rc::gen::inRange(1, 64) * 1.0, *rc::gen::inRange(0, 100) / 50.0)
           : temperature::logn(*rc::gen::inRange<std::uint64_t>(2, 300));
    const std::uint64_t first = *rc::gen::inRange<std::uint64_t>(0, 1u << 20);
    std::vector<double> v(600);
    RC_ASSERT(posenc::query_scale_table<double>(t, first, v) == temperature_error::ok);
    for (std::size_t i = 0; i < v.size(); ++i) {
      RC_ASSERT(v[i] >= 1.0);
      RC_ASSERT(v[i] == posenc::query_scale<double>(t, first + i));
      if (i > 0) RC_ASSERT(v[i] >= v[i - 1]);
    }
  });
}

namespace {
struct l4_spec {
  static constexpr attention_temperature config = temperature::llama4(16.0, 0.5);
};
struct logn_spec {
  static constexpr attention_temperature config = temperature::logn(100);
};
}  // namespace

TEST_CASE("temperature: compile-time tables == run time", "[temperature][compile]") {
  constexpr auto a = posenc::query_scale_table_v<l4_spec, float, 200, 7>;
  constexpr auto b = posenc::query_scale_table_v<logn_spec, double, 300>;
  std::vector<float> ra(200);
  std::vector<double> rb(300);
  REQUIRE(posenc::query_scale_table<float>(l4_spec::config, 7, std::span<float>(ra)) ==
          temperature_error::ok);
  REQUIRE(posenc::query_scale_table<double>(logn_spec::config, 0, std::span<double>(rb)) ==
          temperature_error::ok);
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == ra[i]);
  for (std::size_t i = 0; i < b.size(); ++i) CHECK(b[i] == rb[i]);
  static_assert(posenc::query_scale_table_v<logn_spec, double, 300>[99] == 1.0);
  static_assert(posenc::query_scale_table_v<logn_spec, double, 300>[100] > 1.0);
}

TEST_CASE("temperature: broken rules are named and nothing is written", "[temperature][rules]") {
  using E = temperature_error;
  struct Case {
    attention_temperature t;
    E e;
  };
  attention_temperature bad_kind;
  bad_kind.kind = static_cast<posenc::temperature_kind>(7);
  const Case cases[] = {
      {bad_kind, E::kind},
      {temperature::llama4(0.5, 0.1), E::floor_scale},
      {temperature::llama4(NAN, 0.1), E::floor_scale},
      {temperature::llama4(INFINITY, 0.1), E::floor_scale},
      {temperature::llama4(8192.0, -0.1), E::attn_scale},
      {temperature::llama4(8192.0, NAN), E::attn_scale},
      {temperature::logn(1), E::seq_length},
      {temperature::logn(0), E::seq_length},
      {temperature::logn(std::uint64_t{1} << 51), E::seq_length},
  };
  for (const Case& c : cases) {
    CHECK(posenc::validate(c.t) == c.e);
    CHECK(std::string(posenc::message(c.e)).rfind("posenc: ", 0) == 0);
    std::vector<double> out(4, -2.0);
    CHECK(posenc::query_scale_table<double>(c.t, 0, std::span<double>(out)) == c.e);
    CHECK(out == std::vector<double>(4, -2.0));
  }
  CHECK(posenc::validate(temperature::llama4(1.0, 0.0)) == E::ok);
  CHECK(posenc::validate(temperature::logn(2)) == E::ok);
  // The last position p + 1 = 2^51 is allowed, one past it is not.
  std::vector<double> out(2, -2.0);
  CHECK(posenc::query_scale_table<double>(temperature::logn(8),
                                          posenc::max_temperature_position - 1,
                                          std::span<double>(out)) == E::ok);
  std::vector<double> out3(3, -2.0);
  CHECK(posenc::query_scale_table<double>(temperature::logn(8),
                                          posenc::max_temperature_position - 1,
                                          std::span<double>(out3)) == E::position);
  CHECK(out3 == std::vector<double>(3, -2.0));
}
