// posenc/kernels/temperature.hpp: apply_query_scale (the entry point: SIMD of the build-time
// architecture, or the reference under -DPOSENC_NO_SIMD), the scalar reference, and the
// dispatch library's entry point against values computed here: each element is v * s with v a
// number every storage type holds exactly (k / 16, |k| < 128), the product taken exactly in double
// and rounded once to float, then to the storage type by support/storage_oracle.hpp (HF multiplies
// in float32 and casts back). Positions from 0, from an offset and as ids pick the row's scale;
// every error is reported before anything is written.
//
// Built twice (tests/kernels/temperature/meson.build): default flags and -DPOSENC_NO_SIMD.
#include <posenc/kernels/dispatch.hpp>
#include <posenc/kernels/temperature.hpp>
#include <posenc/spec/attention_temperature.hpp>

#include <catch2/catch.hpp>

#include "support/storage_oracle.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

namespace {
using namespace posenc;
using namespace posenc::kernels;

std::uint32_t rng_state = 4242u;
std::uint32_t next_u32() {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}
// k / 16 for k in (-128, 128): 8 significant bits at most, exact in float, bf16 and f16.
float exact_value() {
  return static_cast<float>(static_cast<int>(next_u32() % 255) - 127) / 16.0f;
}

template <storage_type T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Positions kind: 0 from 0, 1 from an offset, 2 ids.
template <storage_type T>
void check_case(std::span<const float> scales, std::size_t tokens, std::size_t heads,
                std::size_t head_dim, int kind) {
  std::vector<float> values(tokens * heads * head_dim);
  for (float& v : values) v = exact_value();
  std::vector<T> in(values.size());
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = posenc_test::expected_as<T>(values[i]);
  std::vector<std::int64_t> ids(tokens);
  for (auto& id : ids) id = static_cast<std::int64_t>(next_u32() % scales.size());
  const std::uint64_t offset = kind == 1 ? scales.size() - tokens : 0;
  const token_positions pos = kind == 2 ? token_positions::of(ids) : token_positions::from(offset);
  auto position = [&](std::size_t t) {
    return kind == 2 ? static_cast<std::uint64_t>(ids[t]) : offset + t;
  };
  std::vector<T> want(in.size());
  for (std::size_t t = 0; t < tokens; ++t)
    for (std::size_t i = t * heads * head_dim; i < (t + 1) * heads * head_dim; ++i)
      want[i] = posenc_test::expected_as<T>(static_cast<float>(
          static_cast<double>(values[i]) * static_cast<double>(scales[position(t)])));

  const auto iv = dense<const T>(in.data(), tokens, heads, head_dim);
  std::vector<T> ref(in.size()), entry(in.size()), dispatched(in.size());
  std::vector<T> in_place = in, in_place_dispatched = in;
  INFO("tokens " << tokens << " heads " << heads << " head_dim " << head_dim << " positions "
                 << kind);
  REQUIRE(apply_query_scale_reference<T>(scales, iv, dense(ref.data(), tokens, heads, head_dim),
                                         pos) == kernel_error::ok);
  REQUIRE(apply_query_scale<T>(scales, iv, dense(entry.data(), tokens, heads, head_dim), pos) ==
          kernel_error::ok);
  REQUIRE(dispatch::apply_query_scale(scales, iv, dense(dispatched.data(), tokens, heads, head_dim),
                                      pos) == kernel_error::ok);
  REQUIRE(apply_query_scale<T>(scales, dense(in_place.data(), tokens, heads, head_dim), pos) ==
          kernel_error::ok);
  REQUIRE(dispatch::apply_query_scale(scales,
                                      dense(in_place_dispatched.data(), tokens, heads, head_dim),
                                      pos) == kernel_error::ok);
  CHECK(same_bits(ref, want));
  CHECK(same_bits(entry, want));
  CHECK(same_bits(dispatched, want));
  CHECK(same_bits(in_place, want));
  CHECK(same_bits(in_place_dispatched, want));
}

template <storage_type T>
void check_all() {
  // Llama-4's scales (floor_scale 4 so that they change every 4 positions) and log-n's past a
  // training length of 8, and a table of arbitrary values.
  std::vector<float> llama4(64), logn(64), arbitrary(64);
  REQUIRE(query_scale_table<float>(temperature::llama4(4.0, 0.1), 0, std::span(llama4)) ==
          temperature_error::ok);
  REQUIRE(query_scale_table<float>(temperature::logn(8), 0, std::span(logn)) ==
          temperature_error::ok);
  for (float& s : arbitrary) s = static_cast<float>(next_u32() >> 8) * 0x1p-22f;
  for (const auto* scales : {&llama4, &logn, &arbitrary})
    for (int c = 0; c < 40; ++c)
      check_case<T>(*scales, 1 + next_u32() % 9, 1 + next_u32() % 4, 1 + next_u32() % 70,
                    static_cast<int>(next_u32() % 3));
}

}  // namespace

TEST_CASE("query scale: x * s(p) rounded once, every entry point", "[temperature][kernels]") {
  check_all<float>();
  check_all<bf16>();
  check_all<f16>();
}

TEST_CASE("query scale: Llama-4's scale at 8191 and 8192 (floor_scale 8192)",
          "[temperature][kernels]") {
  // s(p) = log(floor((p + 1) / 8192) + 1) * 0.1 + 1: 1 below p = 8191, 1 + 0.1 ln 2 from there.
  std::vector<float> scales(8193);
  REQUIRE(query_scale_table<float>(temperature::llama4(), 0, std::span(scales)) ==
          temperature_error::ok);
  const std::array<std::int64_t, 2> ids{8190, 8191};
  std::vector<float> q{2.0f, -3.0f};
  REQUIRE(apply_query_scale<float>(scales, dense(q.data(), 2, 1, 1), token_positions::of(ids)) ==
          kernel_error::ok);
  CHECK(q[0] == 2.0f);
  // 1 + 0.1 ln 2 = 1.0693147180559945...; rounded to float 0x3f88df4e (1.06931471824646),
  // times -3 rounded to float: -3.2079441547393799 -> 0xc04d4ef5.
  CHECK(std::bit_cast<std::uint32_t>(scales[8191]) == 0x3f88df4eu);
  CHECK(std::bit_cast<std::uint32_t>(q[1]) == 0xc04d4ef5u);
}

TEST_CASE("query scale: errors are reported and nothing is written", "[temperature][kernels]") {
  std::vector<float> scales{1.0f, 2.0f, 3.0f};
  std::vector<float> buf(2 * 3 * 4 * 2 + 8, 7.0f);
  const std::vector<float> before = buf;
  const auto in = dense<const float>(buf.data(), 3, 2, 4);
  const auto out = dense<float>(buf.data() + 24, 3, 2, 4);
  const std::array<std::int64_t, 3> negative{0, -1, 2};
  const std::array<std::int64_t, 3> past{0, 3, 1};
  struct error_case {
    const char* what;
    std::span<const float> scales;
    tensor_view<const float> in;
    tensor_view<float> out;
    token_positions pos;
    kernel_error want;
  };
  const std::vector<error_case> cases{
      {"position past the scales", scales, in, out, token_positions::from(1),
       kernel_error::position_out_of_range},
      {"id past the scales", scales, in, out, token_positions::of(past),
       kernel_error::position_out_of_range},
      {"negative id", scales, in, out, token_positions::of(negative),
       kernel_error::position_out_of_range},
      {"no scales", {}, in, out, token_positions::from(0), kernel_error::null_data},
      {"shape mismatch", scales, in, dense<float>(buf.data() + 24, 2, 2, 4),
       token_positions::from(0), kernel_error::shape_mismatch},
      {"partial overlap", scales, in, dense<float>(buf.data() + 3, 3, 2, 4),
       token_positions::from(0), kernel_error::overlap},
      {"null output", scales, in, tensor_view<float>{nullptr, 3, 2, 4, 8, 4},
       token_positions::from(0), kernel_error::null_data},
  };
  for (const error_case& c : cases) {
    INFO(c.what);
    const kernel_error ref = apply_query_scale_reference<float>(c.scales, c.in, c.out, c.pos);
    CHECK(ref != kernel_error::ok);
    CHECK(apply_query_scale<float>(c.scales, c.in, c.out, c.pos) == ref);
    CHECK(dispatch::apply_query_scale(c.scales, c.in, c.out, c.pos) == ref);
    CHECK(std::memcmp(buf.data(), before.data(), buf.size() * sizeof(float)) == 0);
  }
  // Which code each case gives, named once (kernels/error.hpp's order of checks).
  CHECK(apply_query_scale_reference<float>(scales, in, out, token_positions::from(1)) ==
        kernel_error::position_out_of_range);
  CHECK(apply_query_scale_reference<float>({}, in, out, token_positions::from(0)) ==
        kernel_error::null_data);
}
