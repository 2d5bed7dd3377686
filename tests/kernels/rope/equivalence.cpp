// The SIMD RoPE kernels against the scalar reference, bit for bit: for every xsimd architecture
// this build supports, simd::apply_rope<Arch> == rope_reference(..., fma_mode_of<Arch>), and the
// public entry points == rope_reference(..., build_fma_mode). This file is built once per
// instruction set (tests/kernels/rope/meson.build: default flags, -mavx2 -mfma, AVX-512;
// tests/cross: aarch64 NEON), always with -ffp-contract=off, so both the unfused and the fused
// pattern are covered.
//
// Random cases: both layouts, both table formats, rotary_dim R even in [2, 80] or 128 or 300
// (several 128-pair row chunks and 64-pair on-the-fly chunks), head_dim R + [0, 9] (partial
// rotary; widths that are not multiples of any vector width), 1..5 heads (k: 1..5 of its own),
// 1..6 tokens, views dense / qkv slice / head-major / padded and misaligned by 0 or 1 element,
// positions from an offset or from unsorted, repeated ids (int64 for the reference; the same ids
// as int32 for the kernels under test on odd seeds where they fit), tables that cover every
// position, short tables with on-the-fly rows, and on-the-fly-only tables (positions up to 2^40),
// in place and out of place, q and k in one call, float, bf16 and f16 storage.
//
// One file (just over 500 lines): it is the program built once per instruction set (above), and
// each of its cases runs for every architecture that build supports.
#ifndef POSENC_TEST_ALL_ARCHS
#define POSENC_TEST_ALL_ARCHS 0
#endif

#include <posenc/kernels.hpp>
#include <posenc/kernels/simd/rope.hpp>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <limits>

// Catch2, and RapidCheck unless POSENC_TEST_NO_RAPIDCHECK (cross builds).
#include "kernels/rope/common.hpp"
#include "support/storage_oracle.hpp"

using namespace posenc_test::krope;
namespace simd = posenc::kernels::simd;

namespace {

// Calls f(Arch{}) for every architecture of interest that this translation unit's flags support.
// Without POSENC_TEST_ALL_ARCHS (the default build, and sanitizer builds of the ISA variants):
// sse2 and the build-time architecture only.
template <class F>
void for_each_arch(F&& f) {
#if !POSENC_TEST_ALL_ARCHS
  if constexpr (xsimd::sse2::supported()) f(xsimd::sse2{});
  if constexpr (!std::is_same_v<xsimd::default_arch, xsimd::sse2>) f(xsimd::default_arch{});
#else
  if constexpr (xsimd::sse2::supported()) f(xsimd::sse2{});
  if constexpr (xsimd::sse4_2::supported()) f(xsimd::sse4_2{});
  if constexpr (xsimd::fma3<xsimd::sse4_2>::supported()) f(xsimd::fma3<xsimd::sse4_2>{});
  if constexpr (xsimd::avx::supported()) f(xsimd::avx{});
  if constexpr (xsimd::avx2::supported()) f(xsimd::avx2{});
  if constexpr (xsimd::fma3<xsimd::avx2>::supported()) f(xsimd::fma3<xsimd::avx2>{});
  if constexpr (xsimd::avx512f::supported()) f(xsimd::avx512f{});
  if constexpr (xsimd::avx512bw::supported()) f(xsimd::avx512bw{});
  if constexpr (xsimd::neon::supported()) f(xsimd::neon{});
  if constexpr (xsimd::neon64::supported()) f(xsimd::neon64{});
#endif
}

struct Shape {
  rope_layout layout;
  pk::rope_table_format format;
  std::uint32_t R;
  std::uint32_t head_dim;
  std::size_t heads, kheads, tokens;
  layout_kind in_kind, out_kind, k_kind;
  std::size_t misalign;
  bool in_place, qk, use_ids;
  int table_kind;  // 0: table covers every position; 1: short table + on the fly; 2: on the fly
                   // only
  std::uint64_t seed;

  std::string describe() const {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%s %s R=%u head_dim=%u heads=%zu kheads=%zu tokens=%zu kinds=%d/%d/%d "
                  "misalign=%zu in_place=%d qk=%d ids=%d table=%d seed=%llu",
                  layout_name(layout), format_name(format), R, head_dim, heads, kheads, tokens,
                  static_cast<int>(in_kind), static_cast<int>(out_kind), static_cast<int>(k_kind),
                  misalign, in_place, qk, use_ids, table_kind,
                  static_cast<unsigned long long>(seed));
    return buf;
  }
};

// A random shape from int_in(lo, hi) (a uniform integer in [lo, hi]) and seed() (64 bits that are
// not shrunk): RapidCheck's generators, or a seeded engine where RapidCheck is not available.
template <class IntIn, class Seed>
Shape random_shape(IntIn&& int_in, Seed&& seed) {
  Shape s{};
  s.layout = int_in(0, 1) == 0 ? rope_layout::half : rope_layout::interleaved;
  s.format = int_in(0, 1) == 0 ? pk::rope_table_format::compact : pk::rope_table_format::expanded;
  const auto r_kind = int_in(0, 9);
  s.R = r_kind == 0 ? 128u : r_kind == 1 ? 300u : static_cast<std::uint32_t>(2 * int_in(1, 40));
  const auto extra = int_in(1, 9);  // partial rotary in one case of three
  s.head_dim = s.R + static_cast<std::uint32_t>(int_in(0, 2) == 2 ? extra : 0);
  s.heads = static_cast<std::size_t>(int_in(1, 5));
  s.kheads = static_cast<std::size_t>(int_in(1, 5));
  s.tokens = static_cast<std::size_t>(int_in(1, 6));
  const auto kind = [&] { return static_cast<layout_kind>(int_in(0, 3)); };
  s.in_kind = kind();
  s.out_kind = kind();
  s.k_kind = kind();
  s.misalign = static_cast<std::size_t>(int_in(0, 1));
  s.in_place = int_in(0, 1) == 1;
  s.qk = int_in(0, 1) == 1;
  s.use_ids = int_in(0, 1) == 1;
  s.table_kind = static_cast<int>(int_in(0, 2));
  s.seed = seed();
  return s;
}

// One case for one storage type: every architecture and the public entry points against the
// reference.
template <class T>
void check_case(const Shape& s) {
  std::mt19937_64 rng(s.seed);
  const double base = s.R == 2 ? 10000.0 : (rng() % 2 ? 10000.0 : 500000.0);
  const std::size_t P = s.table_kind == 0 ? 24 : s.table_kind == 1 ? 5 : 0;
  const Tables tabs(s.head_dim, s.R, base, s.layout, P);
  const pk::rope_table table = tabs.table_of_kind(s.format, s.table_kind);

  // Positions.
  std::vector<std::int64_t> ids(s.tokens);
  const std::uint64_t limit = s.table_kind == 0 ? P : s.table_kind == 1 ? P + 40 : 5000;
  for (auto& id : ids) {
    id = static_cast<std::int64_t>(rng() % limit);
    if (s.table_kind == 2 && rng() % 4 == 0) id += std::int64_t{1} << (31 + rng() % 10);
  }
  std::uint64_t offset = rng() % (limit - s.tokens + 1);
  if (s.table_kind == 2 && rng() % 4 == 0) offset += std::uint64_t{1} << 33;
  const pk::token_positions pos =
      s.use_ids ? pk::token_positions::of(ids) : pk::token_positions::from(offset);
  // The kernels under test read the same ids as int32 where they fit, on every other seed: the
  // reference keeps the int64 ids, so a difference in either path shows.
  std::vector<std::int32_t> ids32(ids.size());
  bool narrow = s.use_ids && s.seed % 2 == 1;
  for (std::size_t t = 0; t < ids.size(); ++t) {
    narrow = narrow && ids[t] <= std::numeric_limits<std::int32_t>::max();
    ids32[t] = static_cast<std::int32_t>(ids[t]);
  }
  const pk::token_positions pos_under_test = narrow ? pk::token_positions::of(ids32) : pos;

  const std::size_t mis = std::is_same_v<T, float> ? 0 : s.misalign;
  Tensor<T> q_in = make_tensor<T>(s.in_kind, s.tokens, s.heads, s.head_dim, mis, rng);
  Tensor<T> q_out = make_tensor<T>(s.out_kind, s.tokens, s.heads, s.head_dim, 0, rng);
  Tensor<T> k_in = make_tensor<T>(s.k_kind, s.tokens, s.kheads, s.head_dim, mis, rng);
  Tensor<T> k_out = make_tensor<T>(s.k_kind, s.tokens, s.kheads, s.head_dim, 1 - mis, rng);

  // Runs `call` on fresh copies of every buffer and returns the buffers after the call.
  struct Result {
    std::vector<T> q_in, q_out, k_in, k_out;
    pk::kernel_error e;
  };
  const auto run = [&](auto&& call) {
    Result r{q_in.buf, q_out.buf, k_in.buf, k_out.buf, pk::kernel_error::ok};
    pk::tensor_view<T> qi = same_view_in(r.q_in, q_in), qo = same_view_in(r.q_out, q_out);
    pk::tensor_view<T> ki = same_view_in(r.k_in, k_in), ko = same_view_in(r.k_out, k_out);
    if (s.in_place) {
      qo = qi;
      ko = ki;
    }
    r.e = call(pk::tensor_view<const T>(qi), qo, pk::tensor_view<const T>(ki), ko);
    return r;
  };
  const auto reference = [&](pk::fma_mode mode) {
    return run([&](auto qi, auto qo, auto ki, auto ko) {
      return s.qk ? pk::rope_reference_qk<T>(table, qi, qo, ki, ko, pos, mode)
                  : pk::rope_reference<T>(table, qi, qo, pos, mode);
    });
  };
  const auto expect_same = [&](const Result& want, const Result& got, const char* what) {
    const std::string where = s.describe() + " storage " + posenc::storage_name<T>() +
                              (narrow ? " int32 ids, " : ", ") + what;
    if (want.e != pk::kernel_error::ok || got.e != pk::kernel_error::ok)
      KROPE_FAIL(where + ": " + pk::message(want.e) + " / " + pk::message(got.e));
    if (first_difference(want.q_in, got.q_in) >= 0)
      KROPE_FAIL(where + ": q_in " + describe_difference(want.q_in, got.q_in));
    if (first_difference(want.q_out, got.q_out) >= 0)
      KROPE_FAIL(where + ": q_out " + describe_difference(want.q_out, got.q_out));
    if (first_difference(want.k_in, got.k_in) >= 0)
      KROPE_FAIL(where + ": k_in " + describe_difference(want.k_in, got.k_in));
    if (first_difference(want.k_out, got.k_out) >= 0)
      KROPE_FAIL(where + ": k_out " + describe_difference(want.k_out, got.k_out));
  };

  const Result ref_unfused = reference(pk::fma_mode::unfused);
  const Result ref_fused = reference(pk::fma_mode::fused);
  for_each_arch([&](auto arch) {
    using A = decltype(arch);
    const Result got = run([&](auto qi, auto qo, auto ki, auto ko) {
      if (s.qk) return simd::apply_rope_qk<A, T>(table, qi, qo, ki, ko, pos_under_test);
      if (s.in_place) return simd::apply_rope<A, T>(table, qo, pos_under_test);
      return simd::apply_rope<A, T>(table, qi, qo, pos_under_test);
    });
    expect_same(simd::fma_mode_of<A> == pk::fma_mode::fused ? ref_fused : ref_unfused, got,
                A::name());
  });
  const Result pub = run([&](auto qi, auto qo, auto ki, auto ko) {
    if (s.qk) return pk::apply_rope_qk<T>(table, qi, qo, ki, ko, pos_under_test);
    if (s.in_place) return pk::apply_rope<T>(table, qo, pos_under_test);
    return pk::apply_rope<T>(table, qi, qo, pos_under_test);
  });
  expect_same(pk::build_fma_mode == pk::fma_mode::fused ? ref_fused : ref_unfused, pub,
              "build-time entry points");
}

}  // namespace

TEST_CASE("kernels/rope: build-time architecture", "[rope]") {
  std::cout << "kernels/rope: build-time arch " << pk::build_arch_name << ", "
            << (pk::build_fma_mode == pk::fma_mode::fused ? "fused" : "unfused")
            << " pattern; architectures tested:";
  for_each_arch([](auto arch) { std::cout << ' ' << decltype(arch)::name(); });
  std::cout << '\n';
  INFO("build arch " << pk::build_arch_name);
  // The pattern follows the instruction set: FMA exactly where the compiler was allowed to use it.
#if defined(__FMA__) || defined(__AVX512F__) || defined(__ARM_FEATURE_FMA)
  CHECK(pk::build_fma_mode == pk::fma_mode::fused);
#else
  CHECK(pk::build_fma_mode == pk::fma_mode::unfused);
#endif
  CHECK(simd::fma_mode_of<xsimd::sse2> == pk::fma_mode::unfused);
  CHECK(simd::fma_mode_of<xsimd::avx2> == pk::fma_mode::unfused);
  CHECK(simd::fma_mode_of<xsimd::fma3<xsimd::avx2>> == pk::fma_mode::fused);
  CHECK(simd::fma_mode_of<xsimd::avx512f> == pk::fma_mode::fused);
  CHECK(simd::fma_mode_of<xsimd::avx512bw> == pk::fma_mode::fused);
  CHECK(simd::fma_mode_of<xsimd::neon64> == pk::fma_mode::fused);
}

TEST_CASE("kernels/rope: SIMD == reference bit for bit", "[rope]") {
  const auto check = [](const Shape& s) {
    for_each_storage([&](auto t) { check_case<decltype(t)>(s); });
  };
#if !POSENC_TEST_NO_RAPIDCHECK
  rc::prop("random shapes, layouts, formats, positions, storage types", [&] {
    check(
        random_shape([](std::int64_t lo, std::int64_t hi) { return *posenc_test::int_in(lo, hi); },
                     [] { return *rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()); }));
  });
#else
  // As many cases as RapidCheck's default (100).
  seeded_cases("random shapes", 100, [&](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    check(random_shape(
        [&](std::int64_t lo, std::int64_t hi) {
          return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
        },
        [&] { return static_cast<std::uint64_t>(rng()); }));
  });
#endif
}

// The widening and narrowing of the SIMD path on special values, with expected bits from the test
// oracle (support/storage_oracle.hpp, no posenc conversion) rather than from a kernel: a
// hand-made row with cos = v, sin = 0 for x = (1, 0) gives y_a = fma(1, v, 0 * -0) = v
// (or (1 * v) + -0 = v), so y_a's storage is v rounded to T; and cos = 1, sin = 0 for x = (x_a, 0)
// gives y_a = x_a + -0 = x_a, so widening and narrowing return x_a (NaNs made quiet).
// A table of one row, no rows on the fly: cos = cs, sin = sn (R/2 entries each).
pk::rope_table one_row_table(const std::vector<float>& cs, const std::vector<float>& sn,
                             rope_layout layout) {
  pk::rope_table table;
  table.cos = cs.data();
  table.sin = sn.data();
  table.positions = 1;
  table.rotary_dim = static_cast<std::uint32_t>(2 * cs.size());
  table.layout = layout;
  return table;
}

// y = the rope of x (one token, one head, at position 0) for every architecture, then
// check_out(name); with build_time, through the public entry point first.
template <class T, class Check>
void apply_every_arch(const pk::rope_table& table, const std::vector<T>& x, std::vector<T>& y,
                      bool build_time, Check&& check_out) {
  const std::size_t R = table.rotary_dim;
  const auto in = pk::dense<const T>(x.data(), 1, 1, R);
  const auto pos = pk::token_positions::from(0);
  if (build_time) {
    REQUIRE(pk::apply_rope<T>(table, in, pk::dense(y.data(), 1, 1, R), pos) ==
            pk::kernel_error::ok);
    check_out("build-time arch");
  }
  for_each_arch([&](auto arch) {
    using A = decltype(arch);
    std::fill(y.begin(), y.end(), T{});
    REQUIRE(simd::apply_rope<A, T>(table, in, pk::dense(y.data(), 1, 1, R), pos) ==
            pk::kernel_error::ok);
    check_out(A::name());
  });
}

template <class T>
void check_conversions(const std::vector<float>& values, const std::vector<std::uint16_t>& inputs) {
  for (const rope_layout layout : {rope_layout::half, rope_layout::interleaved}) {
    const auto a_of = [&](std::size_t i, std::size_t R) {
      return posenc_test::expected_channels(layout, R, i).first;
    };
    // Narrowing: one pair per value, enough pairs for vector bodies and scalar tails.
    {
      const std::size_t n = values.size(), R = 2 * n;  // pairs, channels
      const std::vector<float> cs(values), sn(n, 0.0f);
      std::vector<T> x(R, posenc::store_as<T>(0.0f)), y(R);
      for (std::size_t i = 0; i < n; ++i) x[a_of(i, R)] = posenc::store_as<T>(1.0f);
      apply_every_arch(one_row_table(cs, sn, layout), x, y, true, [&](const char* what) {
        for (std::size_t i = 0; i < n; ++i) {
          INFO(what << " " << layout_name(layout) << " pair " << i << " v bits 0x" << std::hex
                    << std::bit_cast<std::uint32_t>(values[i]));
          CHECK(bits(y[a_of(i, R)]) == bits(posenc_test::expected_as<T>(values[i])));
        }
      });
    }
    // Widening: x_a = each input pattern, cos 1, sin 0.
    {
      const std::size_t n = inputs.size(), R = 2 * n;
      const std::vector<float> cs(n, 1.0f), sn(n, 0.0f);
      std::vector<T> x(R, T{0}), y(R);
      for (std::size_t i = 0; i < n; ++i) x[a_of(i, R)] = T{inputs[i]};
      const std::uint16_t quiet = std::is_same_v<T, bf16> ? 0x0040u : 0x0200u;
      const auto is_nan = [](std::uint16_t b) {
        return std::is_same_v<T, bf16> ? (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0
                                       : (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) != 0;
      };
      apply_every_arch(one_row_table(cs, sn, layout), x, y, false, [&](const char* what) {
        for (std::size_t i = 0; i < n; ++i) {
          const std::uint16_t want =
              is_nan(inputs[i]) ? static_cast<std::uint16_t>(inputs[i] | quiet) : inputs[i];
          INFO(what << " " << layout_name(layout) << " input 0x" << std::hex << inputs[i]);
          CHECK(bits(y[a_of(i, R)]) == want);
        }
      });
    }
  }
}

TEST_CASE("kernels/rope: bf16 and f16 conversions of the SIMD path", "[rope]") {
  // Narrowing cases (floats): ties to even both ways, just above/below ties, overflow, the largest
  // finite values, subnormal results, signalling and quiet NaNs with payloads, infinities, zeros.
  const std::vector<float> bf16_values = {
      std::bit_cast<float>(0x3f808000u),  // tie, rounds down to even 0x3f80
      std::bit_cast<float>(0x3f818000u),  // tie, rounds up to even 0x3f82
      std::bit_cast<float>(0x3f808001u),  // above the tie: up
      std::bit_cast<float>(0x3f807fffu),  // below the tie: down
      std::bit_cast<float>(0x7f7fffffu),  // FLT_MAX: rounds to infinity
      std::bit_cast<float>(0x7f7f7fffu),  // stays finite
      std::bit_cast<float>(0xff7fffffu),  // -FLT_MAX: -infinity
      std::bit_cast<float>(0x00008000u),  // subnormal tie: to even 0
      std::bit_cast<float>(0x00018000u),  // subnormal tie: up
      std::bit_cast<float>(0x807fffffu),  // largest negative subnormal: rounds to -2^-126
      std::bit_cast<float>(0x7f800001u),  // signalling NaN, low payload
      std::bit_cast<float>(0xffc12345u),  // negative quiet NaN with payload
      std::bit_cast<float>(0x7fbfffffu),  // signalling NaN, high payload
      std::bit_cast<float>(0x7f800000u),
      std::bit_cast<float>(0xff800000u),
      0.0f,
      -0.0f,
      1.0f,
      -3.5f,
      1e-40f,
      0.1f,
      3.14159265f,
      65504.0f,
      1e30f,
      std::bit_cast<float>(0x3effffffu),
      std::bit_cast<float>(0x40490fdbu),
      std::bit_cast<float>(0x3f80ffffu),
      std::bit_cast<float>(0xbf817fffu),
      std::bit_cast<float>(0x3f7f8000u),  // tie at the top of a binade: up to 0x3f80
      std::bit_cast<float>(0x7f7f8000u),  // tie to infinity
      std::bit_cast<float>(0x00800000u),
      std::bit_cast<float>(0x80000001u),
      std::bit_cast<float>(0x12345678u),
      std::bit_cast<float>(0x9abcdef0u),
      std::bit_cast<float>(0x3f800001u)};
  const std::vector<float> f16_values = {
      std::bit_cast<float>(0x3f801000u),  // 1 + 2^-11: tie, down to 1
      std::bit_cast<float>(0x3f803000u),  // 1 + 3 * 2^-11: tie, up
      std::bit_cast<float>(0x3f801001u),
      std::bit_cast<float>(0x3f800fffu),
      65504.0f,
      65519.0f,
      65520.0f,
      -65520.0f,
      1e10f,  // largest, last below the overflow tie, tie
      0x1p-24f,
      0x1p-25f,
      0x1.8p-25f,
      0x1.8p-24f,
      0x1.4p-24f,
      0x1p-26f,  // subnormal rounding
      0x1.ffcp-15f,
      0x1.ffep-15f,
      0x1p-14f,
      -0x1.00201p-14f,  // subnormal/normal edge
      std::bit_cast<float>(0x7f800001u),
      std::bit_cast<float>(0xffc12345u),
      std::bit_cast<float>(0x7fbfe000u),
      std::bit_cast<float>(0x7f800000u),
      std::bit_cast<float>(0xff800000u),
      0.0f,
      -0.0f,
      1.0f,
      -2.75f,
      0.1f,
      3.14159265f,
      1e-8f,
      -1e-5f,
      1234.5678f,
      std::bit_cast<float>(0x12345678u)};
  // Widening cases (16-bit patterns): zeros, subnormals, normals, largest, infinities, NaNs.
  const std::vector<std::uint16_t> bf16_inputs = {
      0x0000, 0x8000, 0x0001, 0x807f, 0x0040, 0x0080, 0x3f80, 0xbf80, 0x7f7f, 0xff7f, 0x7f80,
      0xff80, 0x7f81, 0x7fc0, 0xffff, 0x7fbf, 0x4049, 0x1234, 0xc2f7, 0x0101, 0x3c00, 0xabcd,
      0x5555, 0xaaaa, 0x7f7e, 0x0002, 0x8001, 0xff81, 0x4000, 0x3e80, 0xfeff, 0x00ff, 0x7ff0};
  const std::vector<std::uint16_t> f16_inputs = {
      0x0000, 0x8000, 0x0001, 0x83ff, 0x0200, 0x0400, 0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x7c00,
      0xfc00, 0x7c01, 0x7e00, 0xffff, 0x7dff, 0x4248, 0x1234, 0xc2f7, 0x0101, 0x3555, 0xabcd,
      0x5555, 0xaaaa, 0x7bfe, 0x0002, 0x8001, 0xfc01, 0x4000, 0x3800, 0xf3ff, 0x03ff, 0x7ff0};
  check_conversions<bf16>(bf16_values, bf16_inputs);
  check_conversions<f16>(f16_values, f16_inputs);
}

// NaN inputs (one per pair) through every path: the same bits as the reference.
TEST_CASE("kernels/rope: NaN inputs (one per pair) match the reference", "[rope]") {
  const Tables tabs(38, 34, 10000.0, rope_layout::half, 4);
  for (const rope_layout layout : {rope_layout::half, rope_layout::interleaved}) {
    pk::rope_table table = tabs.table(pk::rope_table_format::compact, false);
    table.layout = layout;
    std::vector<float> x(38 * 2 * 3);
    std::mt19937_64 rng(7);
    fill_random(x, rng);
    for (std::size_t i = 0; i < x.size(); i += 5)
      x[i] = std::bit_cast<float>(0x7f800000u | static_cast<std::uint32_t>(1 + i));  // sNaN
    std::vector<float> want(x.size()), got(x.size());
    const auto in = pk::dense<const float>(x.data(), 2, 3, 38);
    REQUIRE(pk::rope_reference<float>(table, in, pk::dense(want.data(), 2, 3, 38),
                                      pk::token_positions::from(1),
                                      pk::build_fma_mode) == pk::kernel_error::ok);
    REQUIRE(pk::apply_rope<float>(table, in, pk::dense(got.data(), 2, 3, 38),
                                  pk::token_positions::from(1)) == pk::kernel_error::ok);
    INFO(layout_name(layout) << ": " << describe_difference(want, got));
    CHECK(first_difference(want, got) < 0);
  }
}

// Calls past the kernel's size thresholds take other loop orders: head by head above
// simd::detail::blocks_outer_max_bytes, and streaming stores (AVX-512, 64-byte aligned outputs;
// 16-bit ones two vectors to a line) from simd::detail::stream_threshold_bytes on. Their results
// are the reference's all the same. Only the build-time architecture is run (these sizes are slow
// under sanitizers). A rotary_dim of 100 leaves rows that are not a whole number of vector blocks
// (the bf16 bodies' lane order, the streamed blocks and the head-by-head loops end in partial
// ones); a head_dim of 256 gives rows too long for the AVX-512 register path.
template <class T>
void check_large_calls(std::size_t tokens, std::uint32_t rotary_dim = 128,
                       std::uint32_t head_dim = 128) {
  constexpr std::size_t heads = 32;
  const std::size_t n = tokens * heads * head_dim;
  REQUIRE(n * sizeof(T) > simd::detail::blocks_outer_max_bytes);
  std::mt19937_64 rng(20261130);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  // 64-byte aligned storage (the streaming path needs it), from vectors with room to align.
  std::vector<T> xs(n + 64), ys(n + 64), refs(2 * n + 64);
  const auto aligned = [](std::vector<T>& v) {
    auto* p = v.data();
    while (reinterpret_cast<std::uintptr_t>(p) % 64 != 0) ++p;
    return p;
  };
  T* x = aligned(xs);
  T* y = aligned(ys);
  T* ref_unfused = aligned(refs);
  T* ref_fused = ref_unfused + n;
  for (std::size_t i = 0; i < n; ++i) x[i] = posenc::store_as<T>(dist(rng));
  const auto in = pk::dense<const T>(x, tokens, heads, head_dim);
  const auto out = pk::dense(y, tokens, heads, head_dim);
  const auto pos = pk::token_positions::from(0);
  for (const rope_layout layout : {rope_layout::half, rope_layout::interleaved}) {
    const Tables tabs(head_dim, rotary_dim, 10000.0, layout, tokens);
    for (const auto format : {pk::rope_table_format::compact, pk::rope_table_format::expanded}) {
      const pk::rope_table table = tabs.table(format, false);
      REQUIRE(pk::rope_reference<T>(table, in, pk::dense(ref_unfused, tokens, heads, head_dim), pos,
                                    pk::fma_mode::unfused) == pk::kernel_error::ok);
      REQUIRE(pk::rope_reference<T>(table, in, pk::dense(ref_fused, tokens, heads, head_dim), pos,
                                    pk::fma_mode::fused) == pk::kernel_error::ok);
      {
        using A = xsimd::default_arch;
        INFO(A::name() << ' ' << layout_name(layout) << ' ' << format_name(format) << ' '
                       << posenc::storage_name<T>() << " rotary_dim " << rotary_dim);
        const T* ref = simd::fma_mode_of<A> == pk::fma_mode::fused ? ref_fused : ref_unfused;
        // Out of place (streams where the ISA can), then in place, then an output one element
        // off 64-byte alignment (no streaming, still head by head).
        REQUIRE(simd::apply_rope<A, T>(table, in, out, pos) == pk::kernel_error::ok);
        CHECK(std::memcmp(y, ref, n * sizeof(T)) == 0);
        std::memcpy(y, x, n * sizeof(T));
        REQUIRE(simd::apply_rope<A, T>(table, out, pos) == pk::kernel_error::ok);
        CHECK(std::memcmp(y, ref, n * sizeof(T)) == 0);
        const auto shifted = pk::dense(y + 1, tokens, heads, head_dim);  // ys has room for it
        std::memset(static_cast<void*>(y), 0, (n + 1) * sizeof(T));
        REQUIRE(simd::apply_rope<A, T>(table, in, shifted, pos) == pk::kernel_error::ok);
        CHECK(std::memcmp(y + 1, ref, n * sizeof(T)) == 0);
      }
    }
  }
}

TEST_CASE("kernels/rope: a call streams its stores by the table's output_stores and its size",
          "[rope]") {
  using simd::detail::streams;
  using S = pk::output_stores;
  constexpr std::size_t threshold = pk::stream_threshold_bytes, huge = std::size_t{1} << 40;
  static_assert(simd::detail::stream_threshold_bytes == threshold);
  CHECK_FALSE(streams(S::automatic, true, threshold - 1));
  CHECK(streams(S::automatic, true, threshold));
  CHECK(streams(S::streaming, true, 0));
  CHECK(streams(S::streaming, true, huge));
  CHECK_FALSE(streams(S::cached, true, huge));
  // An output whose vector stores are not whole, aligned lines never streams.
  for (const S s : {S::automatic, S::streaming, S::cached}) CHECK_FALSE(streams(s, false, huge));
}

TEST_CASE("kernels/rope: large calls (head by head, streaming stores) match the reference",
          "[rope]") {
  static_assert(simd::detail::stream_threshold_bytes > simd::detail::blocks_outer_max_bytes);
  // The build-time architecture only (each ISA has its own build of this file): past the
  // streaming threshold where it streams, else just past the head-by-head threshold.
  if constexpr (simd::detail::has_stream<xsimd::default_arch>) {
    check_large_calls<float>(2100);  // 34.4 MB of output
    check_large_calls<bf16>(4100);   // 33.6 MB
    check_large_calls<f16>(4100);
    check_large_calls<f16>(4100, 100);
  } else {
    check_large_calls<float>(40);  // 655 kB
    check_large_calls<bf16>(80);
    check_large_calls<f16>(80);
  }
  check_large_calls<bf16>(80, 100);
  check_large_calls<float>(40, 100);
  check_large_calls<f16>(80, 100);
  check_large_calls<float>(20, 256, 256);
  check_large_calls<f16>(40, 256, 256);
}
