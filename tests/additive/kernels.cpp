// posenc/kernels/{sinusoidal,learned,alibi}.hpp: the SIMD kernels (build-time architecture, and
// simd::<kernel><xsimd::default_arch> explicitly) equal the scalar references bit for bit, for
// float, bf16 and f16 storage, strided and head-major views, offsets and position ids, in and out
// of place; the references equal values computed here independently (one float addition per
// element; ALiBi: score - fl(m * d), d the exact distance); every error is reported before
// anything is written.
//
// Built three times (tests/additive/meson.build): default flags, with -DPOSENC_NO_SIMD (the
// scalar fallback of the public entry points), and, where the CPU has it, with -mavx2 -mfma
// -ffp-contract=off.
#include <posenc/kernels/alibi.hpp>
#include <posenc/kernels/learned.hpp>
#include <posenc/kernels/sinusoidal.hpp>
#include <posenc/tables/alibi.hpp>
#include <posenc/tables/sinusoidal.hpp>

#include <catch2/catch.hpp>

#include "support/storage_oracle.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace {
using namespace posenc;
using namespace posenc::kernels;

std::uint32_t rng_state = 12345u;
std::uint32_t next_u32() {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}
// Uniform in [-4, 4) (rounded once more by store_as for bf16/f16 storage).
float next_float() {
  return static_cast<float>(next_u32() >> 8) * 0x1p-21f - 4.0f;
}

template <storage_type T>
std::vector<T> random_values(std::size_t n) {
  std::vector<T> v(n);
  for (auto& x : v) x = store_as<T>(next_float());
  return v;
}

template <storage_type T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// A view over buf with the given layout: 0 dense, 1 padded token stride, 2 head-major.
template <class T>
tensor_view<T> layout_view(T* buf, std::size_t tokens, std::size_t heads, std::size_t hd,
                           int layout) {
  switch (layout) {
    case 1:
      return {buf, tokens, heads, hd, heads * hd + 3, hd};
    case 2:
      return {buf, tokens, heads, hd, hd, tokens * hd};
    default:
      return dense(buf, tokens, heads, hd);
  }
}
std::size_t layout_size(std::size_t tokens, std::size_t heads, std::size_t hd, int layout) {
  return layout == 1 ? tokens * (heads * hd + 3) : tokens * heads * hd;
}

// ---------------------------------------------------------------------------------------------
// Additive kernels.

template <storage_type T>
void check_sinusoidal(std::size_t tokens, std::size_t heads, std::size_t hd, int layout,
                      bool with_ids) {
  const std::size_t d = heads * hd;
  const sinusoidal_config cfg{static_cast<std::uint32_t>(d), sinusoidal_layout::split, 10000.0, 1};
  const std::size_t rows = tokens + 5;
  std::vector<float> table(rows * d);
  REQUIRE(build_sinusoidal_table<float>(cfg, rows, table.data()) == sinusoidal_error::ok);
  const sinusoidal_table_view<float> tv{table.data(), rows, d};

  std::vector<std::int64_t> ids(tokens);
  for (std::size_t t = 0; t < tokens; ++t) ids[t] = static_cast<std::int64_t>(next_u32() % rows);
  const token_positions pos = with_ids ? token_positions::of(ids) : token_positions::from(2);

  const std::size_t n = layout_size(tokens, heads, hd, layout);
  const std::vector<T> in = random_values<T>(n);
  std::vector<T> ref(n), simd_out(n), inplace = in;
  auto in_v =
      tensor_view<const T>(layout_view(const_cast<T*>(in.data()), tokens, heads, hd, layout));
  REQUIRE(add_sinusoidal_reference<T>(tv, in_v, layout_view(ref.data(), tokens, heads, hd, layout),
                                      pos) == kernel_error::ok);
  REQUIRE(add_sinusoidal<T>(tv, in_v, layout_view(simd_out.data(), tokens, heads, hd, layout),
                            pos) == kernel_error::ok);
  REQUIRE(add_sinusoidal<T>(tv, layout_view(inplace.data(), tokens, heads, hd, layout), pos) ==
          kernel_error::ok);
  // Independent expectation: in + table, one float addition, rounded once to T.
  const auto view = layout_view(const_cast<T*>(in.data()), tokens, heads, hd, layout);
  for (std::size_t t = 0; t < tokens; ++t) {
    const std::uint64_t p = pos.at(t);
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t c = 0; c < hd; ++c) {
        const std::size_t off = static_cast<std::size_t>(view.at(t, h) - in.data()) + c;
        const float want = load_float(in[off]) + table[p * d + h * hd + c];
        const T w = posenc_test::expected_as<T>(want);
        REQUIRE(std::memcmp(&w, &ref[off], sizeof(T)) == 0);
      }
  }
  CHECK(same_bits(ref, simd_out));
  // In place writes only the view's elements (padding untouched): compare the elements.
  for (std::size_t t = 0; t < tokens; ++t)
    for (std::size_t h = 0; h < heads; ++h) {
      const std::size_t off = static_cast<std::size_t>(view.at(t, h) - in.data());
      REQUIRE(std::memcmp(inplace.data() + off, ref.data() + off, hd * sizeof(T)) == 0);
    }
#if POSENC_SIMD
  std::vector<T> explicit_out(n);
  REQUIRE(simd::add_sinusoidal<xsimd::default_arch, T>(
              tv, in_v, layout_view(explicit_out.data(), tokens, heads, hd, layout), pos) ==
          kernel_error::ok);
  CHECK(same_bits(ref, explicit_out));
#endif
}

TEST_CASE("additive/sinusoidal kernel == reference == in + PE", "[kernels]") {
  for (int layout = 0; layout < 3; ++layout) {
    for (const std::size_t hd : {1u, 7u, 8u, 16u, 37u, 64u}) {
      check_sinusoidal<float>(5, 3, hd, layout, false);
      check_sinusoidal<bf16>(4, 2, hd, layout, true);
      check_sinusoidal<f16>(3, 4, hd, layout, layout == 1);
    }
  }
}

template <storage_type T>
void check_learned(std::size_t tokens, std::size_t heads, std::size_t hd, int layout) {
  const std::size_t d = heads * hd;
  const learned_config cfg{static_cast<std::uint32_t>(tokens + 3), static_cast<std::uint32_t>(d),
                           2};
  const std::vector<T> weights = random_values<T>(learned_rows(cfg) * d);
  const learned_table_view<T> tv = make_learned_view<T>(cfg, weights);
  REQUIRE(tv.data != nullptr);
  const token_positions pos = token_positions::from(3);
  const std::size_t n = layout_size(tokens, heads, hd, layout);
  const std::vector<T> in = random_values<T>(n);
  std::vector<T> ref(n), simd_out(n);
  auto in_v =
      tensor_view<const T>(layout_view(const_cast<T*>(in.data()), tokens, heads, hd, layout));
  REQUIRE(add_learned_reference<T>(tv, in_v, layout_view(ref.data(), tokens, heads, hd, layout),
                                   pos) == kernel_error::ok);
  REQUIRE(add_learned<T>(tv, in_v, layout_view(simd_out.data(), tokens, heads, hd, layout), pos) ==
          kernel_error::ok);
  CHECK(same_bits(ref, simd_out));
  const auto view = layout_view(const_cast<T*>(in.data()), tokens, heads, hd, layout);
  for (std::size_t t = 0; t < tokens; ++t)
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t c = 0; c < hd; ++c) {
        const std::size_t off = static_cast<std::size_t>(view.at(t, h) - in.data()) + c;
        // Position 3 + t reads row 3 + t + offset 2.
        const float want = load_float(in[off]) + load_float(weights[(t + 5) * d + h * hd + c]);
        const T w = posenc_test::expected_as<T>(want);
        REQUIRE(std::memcmp(&ref[off], &w, sizeof(T)) == 0);
      }
}

TEST_CASE("additive/learned kernel == reference == in + row", "[kernels]") {
  for (int layout = 0; layout < 3; ++layout)
    for (const std::size_t hd : {1u, 9u, 16u, 33u}) {
      check_learned<float>(6, 2, hd, layout);
      check_learned<bf16>(3, 3, hd, layout);
      check_learned<f16>(2, 1, hd, layout);
    }
}

TEST_CASE("additive/additive kernels reject bad arguments without writing", "[kernels]") {
  const learned_config cfg{4, 8, 0};
  std::vector<float> w(32, 1.0f);
  const auto tv = make_learned_view<float>(cfg, w);
  std::vector<float> x(3 * 8, 0.5f);
  const std::vector<float> before = x;
  auto v = dense(x.data(), 3, 1, 8);
  // Position 1 + 2 = 3 is the last row: fine; from 2, position 4 has no row.
  CHECK(add_learned<float>(tv, v, token_positions::from(2)) == kernel_error::position_out_of_range);
  CHECK(add_learned_reference<float>(tv, v, token_positions::from(2)) ==
        kernel_error::position_out_of_range);
  const std::int64_t bad_ids[] = {0, 4, 1};
  CHECK(add_learned<float>(tv, v, token_positions::of(bad_ids)) ==
        kernel_error::position_out_of_range);
  const std::int64_t neg_ids[] = {0, -1, 1};
  CHECK(add_learned<float>(tv, v, token_positions::of(neg_ids)) == kernel_error::negative_position);
  const std::int64_t two_ids[] = {0, 1};
  CHECK(add_learned<float>(tv, v, token_positions::of(two_ids)) == kernel_error::shape_mismatch);
  CHECK(add_learned<float>(tv, dense(x.data(), 3, 2, 4), token_positions::from(0)) ==
        kernel_error::ok);  // 2 heads x 4 = 8 channels
  x = before;
  CHECK(add_learned<float>(tv, dense(x.data(), 3, 1, 7), token_positions::from(0)) ==
        kernel_error::dim_mismatch);
  CHECK(add_learned<float>(learned_table_view<float>{nullptr, 4, 8, 0}, v,
                           token_positions::from(0)) == kernel_error::null_data);
  tensor_view<float> overlapping_strides{x.data(), 3, 1, 8, 4, 8};
  CHECK(add_learned<float>(tv, overlapping_strides, token_positions::from(0)) ==
        kernel_error::bad_strides);
  // Partial overlap of in and out.
  std::vector<float> big(40, 0.0f);
  CHECK(add_learned<float>(tv, tensor_view<const float>(dense(big.data(), 3, 1, 8)),
                           dense(big.data() + 4, 3, 1, 8),
                           token_positions::from(0)) == kernel_error::overlap);
  CHECK(x == before);
  // Sinusoidal: past the table's end.
  std::vector<float> table(4 * 8);
  REQUIRE(build_sinusoidal_table<float>({8}, 4, table.data()) == sinusoidal_error::ok);
  CHECK(add_sinusoidal<float>({table.data(), 4, 8}, v, token_positions::from(2)) ==
        kernel_error::position_out_of_range);
  CHECK(add_sinusoidal<float>({table.data(), 4, 8}, v, token_positions::from(1)) ==
        kernel_error::ok);
  CHECK(x != before);
  // An empty tensor is fine and touches nothing.
  CHECK(add_sinusoidal<float>({nullptr, 0, 8}, dense<float>(nullptr, 0, 1, 8),
                              token_positions::from(0)) == kernel_error::ok);
}

// ---------------------------------------------------------------------------------------------
// ALiBi.

// score - fl(m * d) with d exact, rounded once to T (volatile: no fusion in the expectation).
template <storage_type T>
T alibi_expected(T score, float m, std::uint64_t d) {
  volatile float b = m * static_cast<float>(d);
  const float bf = b;
  return posenc_test::expected_as<T>(load_float(score) - bf);
}

template <storage_type T>
void check_alibi(std::size_t heads, std::size_t q_len, std::size_t k_len, alibi_variant v,
                 std::uint64_t q_off, std::uint64_t k_off, bool padded) {
  const std::vector<float> slopes =
      make_alibi_slopes<float>({static_cast<std::uint32_t>(heads), v});
  const std::size_t q_stride = k_len + (padded ? 5 : 0);
  const std::size_t head_stride = q_len * q_stride + (padded ? 2 : 0);
  const std::size_t n = heads * head_stride;
  const std::vector<T> in = random_values<T>(n);
  std::vector<T> ref = in, fast = in;
  const score_view<T> rv{ref.data(), heads, q_len, k_len, head_stride, q_stride};
  const score_view<T> fv{fast.data(), heads, q_len, k_len, head_stride, q_stride};
  REQUIRE(add_alibi_bias_reference<T>(slopes, rv, v, q_off, k_off) == kernel_error::ok);
  REQUIRE(add_alibi_bias<T>(slopes, fv, v, q_off, k_off) == kernel_error::ok);
  CHECK(same_bits(ref, fast));
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < q_len; ++i)
      for (std::size_t j = 0; j < k_len; ++j) {
        const std::size_t off = h * head_stride + i * q_stride + j;
        const std::uint64_t qp = q_off + i, kp = k_off + j;
        T want = in[off];
        if (kp <= qp)
          want = alibi_expected(in[off], slopes[h], qp - kp);
        else if (v == alibi_variant::symmetric)
          want = alibi_expected(in[off], slopes[h], kp - qp);
        REQUIRE(std::memcmp(&want, &ref[off], sizeof(T)) == 0);
      }
  // Padding between rows untouched.
  if (padded)
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t i = 0; i < q_len; ++i)
        for (std::size_t j = k_len; j < q_stride && h * head_stride + i * q_stride + j < n; ++j) {
          const std::size_t off = h * head_stride + i * q_stride + j;
          REQUIRE(std::memcmp(&in[off], &ref[off], sizeof(T)) == 0);
        }
#if POSENC_SIMD
  std::vector<T> ex = in;
  REQUIRE(simd::add_alibi_bias<xsimd::default_arch, T>(
              slopes, {ex.data(), heads, q_len, k_len, head_stride, q_stride}, v, q_off, k_off) ==
          kernel_error::ok);
  CHECK(same_bits(ref, ex));
#endif
}

TEST_CASE("additive/alibi kernel == reference == score - m d", "[kernels]") {
  for (const alibi_variant v : {alibi_variant::causal, alibi_variant::symmetric}) {
    check_alibi<float>(12, 7, 37, v, 0, 0, false);   // prefill, q shorter than k
    check_alibi<float>(3, 19, 19, v, 0, 0, true);    // square, padded rows
    check_alibi<float>(5, 1, 70, v, 69, 0, false);   // decode: the last query
    check_alibi<float>(2, 4, 33, v, 100, 90, true);  // offsets on both sides
    check_alibi<float>(2, 3, 17, v, 5, 40, false);   // every key after every query
    check_alibi<bf16>(4, 6, 29, v, 3, 0, true);
    check_alibi<f16>(4, 6, 29, v, 0, 2, false);
    check_alibi<float>(1, 2, 20, v, (1u << 24) - 2, (1u << 24) - 20, false);  // largest positions
  }
}

TEST_CASE("additive/alibi kernel rejects bad arguments without writing", "[kernels]") {
  const std::vector<float> slopes = make_alibi_slopes<float>({4});
  std::vector<float> s(4 * 3 * 5, 1.0f);
  const std::vector<float> before = s;
  const auto v = dense_scores(s.data(), 4, 3, 5);
  CHECK(add_alibi_bias<float>(std::span<const float>(slopes).first(3), v, alibi_variant::causal) ==
        kernel_error::shape_mismatch);
  CHECK(add_alibi_bias<float>(slopes, v, static_cast<alibi_variant>(7)) ==
        kernel_error::invalid_argument);
  CHECK(add_alibi_bias<float>(slopes, v, alibi_variant::causal, (1u << 24) - 2) ==
        kernel_error::position_out_of_range);
  CHECK(add_alibi_bias<float>(slopes, v, alibi_variant::symmetric, 0, (1u << 24) - 4) ==
        kernel_error::position_out_of_range);
  CHECK(add_alibi_bias<float>(slopes, {s.data(), 4, 3, 5, 15, 4}, alibi_variant::causal) ==
        kernel_error::bad_strides);
  CHECK(add_alibi_bias<float>(slopes, {nullptr, 4, 3, 5, 15, 5}, alibi_variant::causal) ==
        kernel_error::null_data);
  CHECK(add_alibi_bias_reference<float>(slopes, v, alibi_variant::causal, (1u << 24)) ==
        kernel_error::position_out_of_range);
  CHECK(s == before);
  // Causal, no offsets: the diagonal and the future are untouched, the past gets -m d.
  REQUIRE(add_alibi_bias<float>(slopes, v, alibi_variant::causal) == kernel_error::ok);
  CHECK(s[0] == 1.0f);                      // h 0, i 0, j 0
  CHECK(s[1] == 1.0f);                      // future key
  CHECK(s[5] == 1.0f - slopes[0]);          // i 1, j 0: d = 1
  CHECK(s[10] == 1.0f - 2.0f * slopes[0]);  // i 2, j 0
}

}  // namespace
