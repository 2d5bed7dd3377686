// posenc/kernels/t5.hpp: the SIMD kernel (build-time architecture, and
// simd::add_t5_bias<xsimd::default_arch> explicitly) equals the scalar reference bit for bit, for
// float, bf16 and f16 scores, dense and padded layouts, prefill and decode offsets, keys before,
// around and past max_distance; the reference equals values computed here from the weight table
// and the bucket of each (query, key) pair (one float addition, 16-bit results rounded by
// support/storage_oracle.hpp); every error is reported before anything is written.
//
// Built twice (tests/t5/meson.build): default flags and -DPOSENC_NO_SIMD.
#include <posenc/kernels/t5.hpp>
#include <posenc/tables/t5.hpp>

#include <catch2/catch.hpp>

#include "support/storage_oracle.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {
using namespace posenc;
using namespace posenc::kernels;

std::uint32_t rng_state = 2024u;
std::uint32_t next_u32() {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}
float next_float() {
  return static_cast<float>(next_u32() >> 8) * 0x1p-21f - 4.0f;
}

template <storage_type T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <storage_type T>
void check_case(const t5_config& c, std::size_t q_len, std::size_t k_len, std::uint64_t q_off,
                std::uint64_t k_off, bool padded) {
  std::vector<float> weights(std::size_t{c.num_buckets} * c.heads);
  for (auto& w : weights) w = next_float();
  const std::vector<float> rel_bias = make_t5_relative_bias(c, weights);
  const t5_bias_view view{rel_bias.data(), c.heads, c.max_distance};
  const std::size_t q_stride = padded ? k_len + 5 : k_len;
  const std::size_t head_stride = q_stride * q_len + (padded ? 3 : 0);
  std::vector<T> base(head_stride * c.heads);
  for (auto& x : base) x = store_as<T>(next_float());
  auto ref = base, simd = base, entry = base, simd_default = base;
  auto sv = [&](std::vector<T>& v) {
    return score_view<T>{v.data(), c.heads, q_len, k_len, head_stride, q_stride};
  };
  REQUIRE(add_t5_bias_reference<T>(view, sv(ref), q_off, k_off) == kernel_error::ok);
  REQUIRE(add_t5_bias<T>(view, sv(entry), q_off, k_off) == kernel_error::ok);
#if POSENC_SIMD
  REQUIRE(simd::add_t5_bias<xsimd::default_arch, T>(view, sv(simd_default), q_off, k_off) ==
          kernel_error::ok);
  CHECK(same_bits(simd_default, ref));
#endif
  CHECK(same_bits(entry, ref));
  // Independent expectation: the bucket of the exact relative position (no clamping to
  // max_distance), the weight of that bucket and head, one float addition.
  std::size_t wrong = 0;
  for (std::size_t h = 0; h < c.heads; ++h)
    for (std::size_t i = 0; i < q_len; ++i)
      for (std::size_t j = 0; j < k_len; ++j) {
        const std::size_t at = h * head_stride + i * q_stride + j;
        const auto rel =
            static_cast<std::int64_t>(k_off + j) - static_cast<std::int64_t>(q_off + i);
        const float w = weights[std::size_t{t5_bucket(c, rel)} * c.heads + h];
        const T want = posenc_test::expected_as<T>(load_float(base[at]) + w);
        if (std::memcmp(&want, &ref[at], sizeof(T)) != 0) ++wrong;
      }
  CHECK(wrong == 0);
  // Padding between rows and heads is not touched.
  if (padded)
    for (std::size_t h = 0; h < c.heads; ++h)
      for (std::size_t i = 0; i < q_len; ++i)
        for (std::size_t j = k_len; j < q_stride; ++j) {
          const std::size_t at = h * head_stride + i * q_stride + j;
          CHECK(std::memcmp(&ref[at], &base[at], sizeof(T)) == 0);
        }
}

// A bias view of random values (every relative position its own bias, so a key given the bias
// of its neighbour shows), against the clamped index computed here.
template <storage_type T>
void check_raw(std::size_t heads, std::uint32_t md, std::size_t q_len, std::size_t k_len,
               std::uint64_t q_off, std::uint64_t k_off) {
  std::vector<float> rows(heads * (2 * std::size_t{md} + 1));
  for (auto& x : rows) x = next_float();
  const t5_bias_view view{rows.data(), heads, md};
  std::vector<T> base(heads * q_len * k_len);
  for (auto& x : base) x = store_as<T>(next_float());
  auto ref = base, entry = base;
  REQUIRE(add_t5_bias_reference<T>(view, dense_scores(ref.data(), heads, q_len, k_len), q_off,
                                   k_off) == kernel_error::ok);
  REQUIRE(add_t5_bias<T>(view, dense_scores(entry.data(), heads, q_len, k_len), q_off, k_off) ==
          kernel_error::ok);
  CHECK(same_bits(entry, ref));
  std::size_t wrong = 0;
  const auto m = static_cast<std::int64_t>(md);
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < q_len; ++i)
      for (std::size_t j = 0; j < k_len; ++j) {
        const std::size_t at = (h * q_len + i) * k_len + j;
        std::int64_t rel =
            static_cast<std::int64_t>(k_off + j) - static_cast<std::int64_t>(q_off + i);
        if (rel < -m) rel = -m;
        if (rel > m) rel = m;
        const float w = rows[h * (2 * std::size_t{md} + 1) + static_cast<std::size_t>(rel + m)];
        const T want = posenc_test::expected_as<T>(load_float(base[at]) + w);
        if (std::memcmp(&want, &ref[at], sizeof(T)) != 0) ++wrong;
      }
  CHECK(wrong == 0);
}

template <storage_type T>
void check_all() {
  for (const std::uint32_t md : {1u, 5u, 16u}) {
    check_raw<T>(2, md, 9, 45, 0, 0);
    check_raw<T>(2, md, 3, 40, 30, 2);
    check_raw<T>(1, md, 40, 3, 1, 17);
  }
  const t5_config enc = t5_base_config(t5_direction::bidirectional);
  const t5_config dec = t5_base_config(t5_direction::causal);
  // Windows wider than 2 max_distance + 1 (all three spans in one row), narrow rows (window
  // only), decode with a long cache, keys entirely past max_distance.
  for (const t5_config& c : {enc, dec}) {
    check_case<T>(c, 7, 300, 0, 0, false);
    check_case<T>(c, 300, 7, 0, 0, true);
    check_case<T>(c, 3, 37, 0, 0, true);
    check_case<T>(c, 1, 600, 599, 0, false);
    check_case<T>(c, 5, 40, 1000, 0, true);
    check_case<T>(c, 5, 40, 0, 1000, false);
  }
  check_case<T>({8, 20, 3, t5_direction::causal, t5_log_kind::exact}, 33, 35, 2, 1, true);
}

TEST_CASE("t5 kernel: SIMD == reference == expectation, float") {
  check_all<float>();
}
TEST_CASE("t5 kernel: SIMD == reference == expectation, bf16") {
  check_all<bf16>();
}
TEST_CASE("t5 kernel: SIMD == reference == expectation, f16") {
  check_all<f16>();
}

TEST_CASE("t5 kernel: errors write nothing") {
  const t5_config c = t5_base_config();
  const std::vector<float> weights(std::size_t{c.num_buckets} * c.heads, 1.0f);
  const std::vector<float> rel_bias = make_t5_relative_bias(c, weights);
  std::vector<float> s(12 * 4 * 5, 0.5f);
  const auto before = s;
  const score_view<float> v = dense_scores(s.data(), 12, 4, 5);
  const t5_bias_view good{rel_bias.data(), 12, c.max_distance};
  CHECK(add_t5_bias<float>({rel_bias.data(), 11, c.max_distance}, v) ==
        kernel_error::shape_mismatch);
  CHECK(add_t5_bias<float>({nullptr, 12, c.max_distance}, v) == kernel_error::null_data);
  CHECK(add_t5_bias<float>({rel_bias.data(), 12, 0}, v) == kernel_error::invalid_argument);
  CHECK(add_t5_bias<float>({rel_bias.data(), 12, t5_max_distance_limit + 1}, v) ==
        kernel_error::invalid_argument);
  CHECK(add_t5_bias<float>(good, v, t5_position_limit - 3, 0) ==
        kernel_error::position_out_of_range);
  CHECK(add_t5_bias<float>(good, v, 0, t5_position_limit) == kernel_error::position_out_of_range);
  CHECK(add_t5_bias_reference<float>(good, v, 0, t5_position_limit - 4) ==
        kernel_error::position_out_of_range);
  score_view<float> overlap = v;
  overlap.head_stride = 3;  // heads overlap rows
  CHECK(add_t5_bias<float>(good, overlap) != kernel_error::ok);
  CHECK(add_t5_bias_reference<float>(good, overlap) != kernel_error::ok);
  CHECK(s == before);
  CHECK(add_t5_bias<float>(good, v, t5_position_limit - 4, 0) == kernel_error::ok);
}

}  // namespace
