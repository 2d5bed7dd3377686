// What the RoPE kernels compute, checked independently of the SIMD == reference comparison:
//   - the reference against the rotation written out in double, with an error bound derived below;
//   - partial rotary: channels >= R are copied bit for bit;
//   - compact and expanded tables give the same bits; interleaved and half layouts are the same
//     rotation up to a permutation of channels;
//   - rows past the table computed on the fly equal the rows of a larger table, bit for bit;
//   - every error: the right kernel_error, and the output left bit for bit as it was.
// Each check runs on the reference and on the build-time entry points (apply_rope).
// Without RapidCheck (POSENC_TEST_NO_RAPIDCHECK=1, cross builds) the seed-driven properties run on
// fixed seeds and the two that draw from RapidCheck's generators (the rotation in double, and
// on-the-fly rows) are left out.
#include <posenc/kernels.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

// Catch2, and RapidCheck unless POSENC_TEST_NO_RAPIDCHECK (cross builds).
#include "kernels/rope/common.hpp"

using namespace posenc_test::krope;

namespace {

#if !POSENC_TEST_NO_RAPIDCHECK
using posenc_test::int_in;

// ---- the rotation in double -------------------------------------------------------------------
//
// For a pair (a, b) with table entries c, s (floats) the exact rotation is
//   Y_a = x_a c - x_b s,   Y_b = x_b c + x_a s          (RoFormer eq. 34, HF rotate_half).
// The kernel computes, with u = 2^-24 and each fl() a relative error <= u (no underflow: inputs
// are normal with |x| >= 2^-12 or zero, and |c|, |s| >= 2^-40 or zero, so products stay far above
// 2^-126):
//   unfused: y_a = fl(fl(x_a c) + fl(-x_b s))      fused: y_a = fl(x_a c + fl(-x_b s))
// so |y_a - Y_a| <= u |x_a c| + u |x_b s| + u (1 + u)(|x_a c| + |x_b s|) = u (2 + u)(|x_a c| + |x_b
// s|) for both orders (the fused order drops one product rounding). That is the tolerance, with
// nothing added; the negative control (sin with the wrong sign) must exceed it.
double pair_bound(double xa, double xb, double c, double s) {
  const double u = 0x1p-24;
  return u * (2 + u) * (std::fabs(xa * c) + std::fabs(xb * s));
}

template <class F>
void for_each_mode(F&& f) {
  f(pk::fma_mode::unfused);
  f(pk::fma_mode::fused);
}

TEST_CASE("kernels/rope: reference == the rotation in double within u(2+u)(|x_a c|+|x_b s|)",
          "[rope]") {
  rc::prop("random configs, positions and inputs", [] {
    const auto layout = *rc::gen::element(rope_layout::half, rope_layout::interleaved);
    const auto R = static_cast<std::uint32_t>(2 * *int_in(1, 24));
    const auto D = R + static_cast<std::uint32_t>(*int_in(0, 3));
    const auto base = static_cast<double>(*int_in(2, 1000000));
    const auto P = static_cast<std::size_t>(*int_in(1, 300));
    const auto seed = *rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>());
    std::mt19937_64 rng(seed);
    const Tables tabs(D, R, base, layout, P);
    const pk::rope_table table = tabs.table(pk::rope_table_format::compact, false);
    const std::size_t heads = 2, tokens = 3, h = R / 2;
    std::vector<float> x(tokens * heads * D);
    for (float& v : x) {
      const int e = static_cast<int>(rng() % 25) - 12;
      const double m = 1.0 + static_cast<double>(rng() % (1u << 23)) * 0x1p-23;
      v = rng() % 16 == 0 ? 0.0f : static_cast<float>((rng() % 2 ? -1 : 1) * std::ldexp(m, e));
    }
    std::vector<std::int64_t> ids(tokens);
    for (auto& id : ids) id = static_cast<std::int64_t>(rng() % P);
    for_each_mode([&](pk::fma_mode mode) {
      std::vector<float> y(x.size());
      RC_ASSERT(pk::rope_reference<float>(table, pk::dense<const float>(x.data(), tokens, heads, D),
                                          pk::dense(y.data(), tokens, heads, D),
                                          pk::token_positions::of(ids),
                                          mode) == pk::kernel_error::ok);
      double worst_wrong_sign = 0;  // negative control: deviation / bound with sin negated
      bool control_applies = false;
      for (std::size_t t = 0; t < tokens; ++t) {
        const auto p = static_cast<std::size_t>(ids[t]);
        for (std::size_t hd = 0; hd < heads; ++hd) {
          const float* xi = x.data() + (t * heads + hd) * D;
          const float* yi = y.data() + (t * heads + hd) * D;
          for (std::size_t i = 0; i < h; ++i) {
            const auto [a, b] = posenc_test::expected_channels(layout, R, i);
            const double c = tabs.cos[p * h + i], s = tabs.sin[p * h + i];
            RC_PRE(c == 0 || std::fabs(c) >= 0x1p-40);
            RC_PRE(s == 0 || std::fabs(s) >= 0x1p-40);
            const double xa = xi[a], xb = xi[b];
            const double Ya = xa * c - xb * s, Yb = xb * c + xa * s;
            // The products of two floats are exact in double; the sums round once more, by at
            // most 2^-53 relative of the larger term: add that to the bound.
            const double extra = 0x1p-52 * (std::fabs(xa * c) + std::fabs(xb * s));
            RC_ASSERT(std::fabs(yi[a] - Ya) <= pair_bound(xa, xb, c, s) + extra);
            RC_ASSERT(std::fabs(yi[b] - Yb) <= pair_bound(xb, xa, c, s) + extra);
            if (std::fabs(xb * s) > 0x1p-10 * std::fabs(xa * c) && xb != 0 && s != 0) {
              control_applies = true;
              const double wrong = xa * c + xb * s;
              worst_wrong_sign = std::max(
                  worst_wrong_sign, std::fabs(yi[a] - wrong) / (pair_bound(xa, xb, c, s) + extra));
            }
          }
        }
      }
      if (control_applies) RC_ASSERT(worst_wrong_sign > 1.0);
    });
  });
}
#endif  // !POSENC_TEST_NO_RAPIDCHECK

TEST_CASE("kernels/rope: a known rotation", "[rope]") {
  // R = 2: theta_0 = 1, so position p rotates by p radians. x = (1, 0) gives (cos p, sin p) as
  // the table holds them (1 * c + 0 * -s and 0 * c + 1 * s are exact), and x = (0, 1) gives
  // (-sin p, cos p); cos 1 and sin 1 are correctly rounded in the table.
  const Tables tabs(2, 2, 10000.0, rope_layout::interleaved, 2);
  const pk::rope_table table = tabs.table(pk::rope_table_format::compact, false);
  CHECK(tabs.cos[1] == static_cast<float>(std::cos(1.0)));
  CHECK(tabs.sin[1] == static_cast<float>(std::sin(1.0)));
  std::vector<float> x = {1.0f, 0.0f, 0.0f, 1.0f}, y(4);
  REQUIRE(pk::apply_rope<float>(table, pk::dense<const float>(x.data(), 1, 2, 2),
                                pk::dense(y.data(), 1, 2, 2),
                                pk::token_positions::from(1)) == pk::kernel_error::ok);
  CHECK(y[0] == tabs.cos[1]);
  CHECK(y[1] == tabs.sin[1]);
  CHECK(y[2] == -tabs.sin[1]);
  CHECK(y[3] == tabs.cos[1]);
}

// ---- structural laws ------------------------------------------------------------------------

template <class T>
std::vector<T> apply_public(const pk::rope_table& table, const std::vector<T>& x,
                            std::size_t tokens, std::size_t heads, std::size_t D,
                            pk::token_positions pos) {
  std::vector<T> y(x.size());
  const auto e = pk::apply_rope<T>(table, pk::dense<const T>(x.data(), tokens, heads, D),
                                   pk::dense(y.data(), tokens, heads, D), pos);
  KROPE_ASSERT(e == pk::kernel_error::ok);
  return y;
}

template <class T>
void partial_and_formats(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto layout = rng() % 2 ? rope_layout::half : rope_layout::interleaved;
  const auto R = static_cast<std::uint32_t>(2 * (1 + rng() % 40));
  const auto D = R + static_cast<std::uint32_t>(1 + rng() % 9);
  const std::size_t P = 16, tokens = 1 + rng() % 4, heads = 1 + rng() % 4;
  const Tables tabs(D, R, 10000.0, layout, P);
  std::vector<T> x(tokens * heads * D);
  // Any bits, NaN payloads included: pass-through channels must be copied, not converted.
  for (T& v : x) v = from_bits<T>(static_cast<std::uint32_t>(rng()));
  // Rotary channels without NaN (two NaNs in a pair would leave the payload to the hardware).
  std::mt19937_64 rng2(seed + 1);
  for (std::size_t k = 0; k < tokens * heads; ++k)
    for (std::size_t c = 0; c < R; ++c) x[k * D + c] = random_value<T>(rng2);
  const auto pos = pk::token_positions::from(rng() % (P - tokens + 1));
  const auto compact =
      apply_public(tabs.table(pk::rope_table_format::compact, false), x, tokens, heads, D, pos);
  const auto expanded =
      apply_public(tabs.table(pk::rope_table_format::expanded, false), x, tokens, heads, D, pos);
  KROPE_ASSERT(first_difference(compact, expanded) < 0);
  for (std::size_t k = 0; k < tokens * heads; ++k)
    for (std::size_t c = R; c < D; ++c)
      KROPE_ASSERT(bits(compact[k * D + c]) == bits(x[k * D + c]));
  // In place leaves them too.
  std::vector<T> z = x;
  KROPE_ASSERT(pk::apply_rope<T>(tabs.table(pk::rope_table_format::compact, false),
                                 pk::dense(z.data(), tokens, heads, D),
                                 pos) == pk::kernel_error::ok);
  KROPE_ASSERT(first_difference(z, compact) < 0);
}

TEST_CASE("kernels/rope: partial rotary copies bits; compact == expanded", "[rope]") {
  for_each_storage([](auto t) {
    using T = decltype(t);
    seeded_property(posenc::storage_name<T>(), partial_and_formats<T>);
  });
}

// Half pairs (i, i + R/2) and interleaved pairs (2i, 2i + 1) rotate by the same angles (theta_i
// does not depend on the layout, docs/formulas.md §1), so moving channel i to 2i and i + R/2
// to 2i + 1 maps one layout's input and output onto the other's, bit for bit.
template <class T>
void layouts_permute(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto R = static_cast<std::uint32_t>(2 * (1 + rng() % 40));
  const auto D = R + static_cast<std::uint32_t>(rng() % 4);
  const std::size_t P = 16, tokens = 1 + rng() % 3, heads = 1 + rng() % 3, h = R / 2;
  const Tables half(D, R, 10000.0, rope_layout::half, P);
  const Tables inter(D, R, 10000.0, rope_layout::interleaved, P);
  KROPE_ASSERT(half.cos == inter.cos);
  std::vector<T> xh(tokens * heads * D);
  fill_random(xh, rng);
  std::vector<T> xi = xh;
  for (std::size_t k = 0; k < tokens * heads; ++k)
    for (std::size_t i = 0; i < h; ++i) {
      xi[k * D + 2 * i] = xh[k * D + i];
      xi[k * D + 2 * i + 1] = xh[k * D + i + h];
    }
  const auto pos = pk::token_positions::from(rng() % (P - tokens + 1));
  for (const auto format : {pk::rope_table_format::compact, pk::rope_table_format::expanded}) {
    const auto yh = apply_public(half.table(format, false), xh, tokens, heads, D, pos);
    const auto yi = apply_public(inter.table(format, false), xi, tokens, heads, D, pos);
    for (std::size_t k = 0; k < tokens * heads; ++k) {
      for (std::size_t i = 0; i < h; ++i) {
        KROPE_ASSERT(bits(yi[k * D + 2 * i]) == bits(yh[k * D + i]));
        KROPE_ASSERT(bits(yi[k * D + 2 * i + 1]) == bits(yh[k * D + i + h]));
      }
      for (std::size_t c = R; c < D; ++c) KROPE_ASSERT(bits(yi[k * D + c]) == bits(yh[k * D + c]));
    }
  }
}

TEST_CASE("kernels/rope: interleaved == half up to the channel permutation", "[rope]") {
  for_each_storage([](auto t) {
    using T = decltype(t);
    seeded_property(posenc::storage_name<T>(), layouts_permute<T>);
  });
}

#if !POSENC_TEST_NO_RAPIDCHECK
// Rows past a short table, computed on the fly, are the rows of a larger table; an on-the-fly-only
// table gives the same bits too.
TEST_CASE("kernels/rope: on-the-fly rows == rows of a larger table", "[rope]") {
  rc::prop("random configs and positions", [] {
    const auto layout = *rc::gen::element(rope_layout::half, rope_layout::interleaved);
    const auto R = static_cast<std::uint32_t>(2 * *int_in(1, 80));  // up to 80 pairs: 2 chunks
    const auto D = R + static_cast<std::uint32_t>(*int_in(0, 2));
    const auto base = *rc::gen::element(10000.0, 500000.0, 1e6, 12345.5);
    const std::size_t P = 48, tokens = 5, heads = 2;
    const Tables small(D, R, base, layout, 3);
    const Tables big(D, R, base, layout, P);
    std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
    std::vector<float> x(tokens * heads * D);
    fill_random(x, rng);
    std::vector<std::int64_t> ids(tokens);
    for (auto& id : ids) id = static_cast<std::int64_t>(rng() % P);
    const auto pos = pk::token_positions::of(ids);
    const auto want =
        apply_public(big.table(pk::rope_table_format::compact, false), x, tokens, heads, D, pos);
    for (const auto format : {pk::rope_table_format::compact, pk::rope_table_format::expanded}) {
      const auto got = apply_public(small.table(format, true), x, tokens, heads, D, pos);
      RC_ASSERT(first_difference(want, got) < 0);
    }
    const auto only = apply_public(pk::on_the_fly_table(big.cfg), x, tokens, heads, D, pos);
    RC_ASSERT(first_difference(want, only) < 0);
    // The row function itself, entry by entry.
    const pk::rope_table otf = pk::on_the_fly_table(big.cfg);
    std::vector<float> c(R / 2), s(R / 2);
    const std::uint64_t p = rng() % P;
    pk::detail::on_the_fly_row(otf, p, 0, R / 2, c.data(), s.data());
    for (std::size_t i = 0; i < R / 2; ++i) {
      RC_ASSERT(std::bit_cast<std::uint32_t>(c[i]) ==
                std::bit_cast<std::uint32_t>(big.cos[p * (R / 2) + i]));
      RC_ASSERT(std::bit_cast<std::uint32_t>(s[i]) ==
                std::bit_cast<std::uint32_t>(big.sin[p * (R / 2) + i]));
    }
  });
}
#endif  // !POSENC_TEST_NO_RAPIDCHECK

// ---- errors -----------------------------------------------------------------------------------

constexpr float kSentinel = 1234.5f;

// Calls the reference, the out-of-place and (where in == out is meaningful) in-place entry points
// and checks the code and that out (and in) kept their bits.
void expect_error(const char* what, pk::kernel_error want, const pk::rope_table& table,
                  pk::tensor_view<const float> in, pk::tensor_view<float> out,
                  pk::token_positions pos, const std::vector<float>& out_buf,
                  const std::vector<float>& in_buf) {
  INFO(what << ": want " << pk::message(want));
  const std::vector<float> out_before = out_buf, in_before = in_buf;
  CHECK(pk::rope_reference<float>(table, in, out, pos) == want);
  CHECK(first_difference(out_buf, out_before) < 0);
  CHECK(pk::apply_rope<float>(table, in, out, pos) == want);
  CHECK(first_difference(out_buf, out_before) < 0);
  CHECK(first_difference(in_buf, in_before) < 0);
}

TEST_CASE("kernels/rope: every error is reported and writes nothing", "[rope]") {
  const std::uint32_t R = 8, D = 10;
  const std::size_t T = 3, H = 2, P = 4;
  const Tables tabs(D, R, 10000.0, rope_layout::half, P);
  const pk::rope_table good = tabs.table(pk::rope_table_format::compact, false);
  std::vector<float> in_buf(T * H * D + 8, 0.5f), out_buf(T * H * D + 8, kSentinel);
  const auto in = pk::dense<const float>(in_buf.data(), T, H, D);
  const auto out = pk::dense(out_buf.data(), T, H, D);
  const auto pos0 = pk::token_positions::from(0);
  using E = pk::kernel_error;

  // Sanity: the good call works (and does write).
  {
    std::vector<float> o(T * H * D, kSentinel);
    CHECK(pk::apply_rope<float>(good, in, pk::dense(o.data(), T, H, D), pos0) == E::ok);
    CHECK(o[0] != kSentinel);
  }

  // null data
  {
    auto v = in;
    v.data = nullptr;
    expect_error("null input", E::null_data, good, v, out, pos0, out_buf, in_buf);
    auto o = out;
    o.data = nullptr;
    expect_error("null output", E::null_data, good, in, o, pos0, out_buf, in_buf);
    pk::rope_table t = good;
    t.cos = nullptr;
    expect_error("null table cos", E::null_data, t, in, out, pos0, out_buf, in_buf);
    t = good;
    t.sin = nullptr;
    expect_error("null table sin", E::null_data, t, in, out, pos0, out_buf, in_buf);
  }
  // shape mismatch
  {
    auto o = pk::dense(out_buf.data(), T - 1, H, D);
    expect_error("tokens differ", E::shape_mismatch, good, in, o, pos0, out_buf, in_buf);
    o = pk::dense(out_buf.data(), T, H - 1, D);
    expect_error("heads differ", E::shape_mismatch, good, in, o, pos0, out_buf, in_buf);
    o = pk::dense(out_buf.data(), T, H, D - 2);
    expect_error("head_dim differs", E::shape_mismatch, good, in, o, pos0, out_buf, in_buf);
    const std::vector<std::int64_t> ids = {0, 1};
    expect_error("ids size != tokens", E::shape_mismatch, good, in, out,
                 pk::token_positions::of(ids), out_buf, in_buf);
  }
  // bad strides
  {
    auto o = out;
    o.head_stride = D - 1;  // heads overlap
    expect_error("overlapping heads", E::bad_strides, good, in, o, pos0, out_buf, in_buf);
    o = out;
    o.token_stride = D;  // tokens overlap the second head
    expect_error("overlapping tokens", E::bad_strides, good, in, o, pos0, out_buf, in_buf);
    auto v = in;
    v.head_stride = 0;
    expect_error("input heads share elements", E::bad_strides, good, v, out, pos0, out_buf, in_buf);
    o = out;
    o.token_stride = std::numeric_limits<std::size_t>::max() / 2;
    expect_error("extent overflows", E::bad_strides, good, in, o, pos0, out_buf, in_buf);
    o = out;
    o.token_stride = std::numeric_limits<std::size_t>::max() / 8;  // fits size_t, not bytes
    expect_error("extent in bytes overflows", E::bad_strides, good, in, o, pos0, out_buf, in_buf);
  }
  // overlap
  {
    std::vector<float> buf(T * H * D + 8, 0.25f);
    const auto i2 = pk::dense<const float>(buf.data(), T, H, D);
    const auto o2 = pk::dense(buf.data() + 1, T, H, D);
    expect_error("output shifted by one element", E::overlap, good, i2, o2, pos0, buf, buf);
    auto o3 = pk::dense(buf.data(), T, H, D);
    o3.head_stride = D;
    o3.token_stride = H * D + 2;  // same start, different strides
    std::vector<float> big(T * (H * D + 2) + 8, 0.25f);
    const auto i3 = pk::dense<const float>(big.data(), T, H, D);
    auto o4 = o3;
    o4.data = big.data();
    expect_error("same start, other strides", E::overlap, good, i3, o4, pos0, big, big);
  }
  // rotary_dim
  {
    pk::rope_table t = good;
    t.rotary_dim = 7;
    expect_error("odd rotary_dim", E::rotary_dim_mismatch, t, in, out, pos0, out_buf, in_buf);
    t.rotary_dim = 0;
    expect_error("zero rotary_dim", E::rotary_dim_mismatch, t, in, out, pos0, out_buf, in_buf);
    const Tables wide(12, 12, 10000.0, rope_layout::half, P);
    expect_error("rotary_dim > head_dim", E::rotary_dim_mismatch,
                 wide.table(pk::rope_table_format::compact, false), in, out, pos0, out_buf, in_buf);
  }
  // positions
  {
    expect_error("offset past the table", E::position_out_of_range, good, in, out,
                 pk::token_positions::from(P - T + 1), out_buf, in_buf);
    const std::vector<std::int64_t> past = {0, static_cast<std::int64_t>(P), 1};
    expect_error("id past the table", E::position_out_of_range, good, in, out,
                 pk::token_positions::of(past), out_buf, in_buf);
    expect_error("offset + tokens overflows", E::position_out_of_range,
                 tabs.table(pk::rope_table_format::compact, true), in, out,
                 pk::token_positions::from(std::numeric_limits<std::uint64_t>::max() - 1), out_buf,
                 in_buf);
    const std::vector<std::int64_t> neg = {0, -1, 1};
    expect_error("negative id", E::negative_position, good, in, out, pk::token_positions::of(neg),
                 out_buf, in_buf);
    expect_error("negative id with on the fly", E::negative_position,
                 tabs.table(pk::rope_table_format::compact, true), in, out,
                 pk::token_positions::of(neg), out_buf, in_buf);
  }
  // on-the-fly config
  {
    posenc::rope_config bad = tabs.cfg;
    bad.base = -1.0;
    pk::rope_table t = good;
    t.on_the_fly = &bad;
    expect_error("invalid on-the-fly config", E::invalid_config, t, in, out, pos0, out_buf, in_buf);
    posenc::rope_config other_r = tabs.cfg;
    other_r.rotary_dim = 6;
    t.on_the_fly = &other_r;
    expect_error("on-the-fly rotary_dim differs", E::invalid_config, t, in, out, pos0, out_buf,
                 in_buf);
    posenc::rope_config other_layout = tabs.cfg;
    other_layout.layout = rope_layout::interleaved;
    t.on_the_fly = &other_layout;
    expect_error("on-the-fly layout differs", E::invalid_config, t, in, out, pos0, out_buf, in_buf);
  }
  // enums out of range
  {
    pk::rope_table t = good;
    t.format = static_cast<pk::rope_table_format>(7);
    expect_error("invalid format", E::invalid_argument, t, in, out, pos0, out_buf, in_buf);
    t = good;
    t.layout = static_cast<rope_layout>(9);
    expect_error("invalid layout", E::invalid_argument, t, in, out, pos0, out_buf, in_buf);
    t = good;
    t.stores = static_cast<pk::output_stores>(3);
    expect_error("invalid output_stores", E::invalid_argument, t, in, out, pos0, out_buf, in_buf);
  }
  // In place: an error leaves the tensor as it was.
  {
    std::vector<float> x(T * H * D, 0.75f);
    const std::vector<float> before = x;
    CHECK(pk::apply_rope<float>(good, pk::dense(x.data(), T, H, D), pk::token_positions::from(P)) ==
          E::position_out_of_range);
    CHECK(first_difference(x, before) < 0);
  }
  // q and k: an error in k leaves q unwritten too.
  {
    std::vector<float> qo(T * H * D, kSentinel), ko(T * H * D, kSentinel);
    const auto qo_before = qo, ko_before = ko;
    auto k_out = pk::dense(ko.data(), T, H, D);
    k_out.head_stride = 1;
    CHECK(pk::apply_rope_qk<float>(good, in, pk::dense(qo.data(), T, H, D), in, k_out, pos0) ==
          E::bad_strides);
    CHECK(pk::rope_reference_qk<float>(good, in, pk::dense(qo.data(), T, H, D), in, k_out, pos0) ==
          E::bad_strides);
    CHECK(first_difference(qo, qo_before) < 0);
    CHECK(first_difference(ko, ko_before) < 0);
    // q and k with different token counts.
    const auto k_in2 = pk::dense<const float>(in_buf.data(), T - 1, H, D);
    CHECK(pk::apply_rope_qk<float>(good, in, pk::dense(qo.data(), T, H, D), k_in2,
                                   pk::dense(ko.data(), T - 1, H, D), pos0) == E::shape_mismatch);
    CHECK(first_difference(qo, qo_before) < 0);
    CHECK(first_difference(ko, ko_before) < 0);
  }
  // Empty tensors are fine whatever the table (nothing to do), except for table errors.
  {
    CHECK(pk::apply_rope<float>(good, pk::dense<const float>(nullptr, 0, H, D),
                                pk::dense<float>(nullptr, 0, H, D), pos0) == E::ok);
    std::vector<float> qo(T * H * D, kSentinel);
    const auto qo_before = qo;
    // k has head_dim 0 (empty) while q is real: q is rotated, k untouched.
    CHECK(pk::apply_rope_qk<float>(good, in, pk::dense(qo.data(), T, H, D),
                                   pk::dense<const float>(nullptr, T, H, 0),
                                   pk::dense<float>(nullptr, T, H, 0), pos0) == E::ok);
    CHECK(first_difference(qo, qo_before) >= 0);
  }
}

}  // namespace
