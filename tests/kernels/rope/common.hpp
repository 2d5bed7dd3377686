// Shared pieces of the RoPE kernel tests (equivalence.cpp, semantics.cpp): tables in both formats,
// random tensors in strided layouts, bitwise comparison, seeded properties.
//
// Random data comes from a std::mt19937_64 seeded by RapidCheck (shapes shrink, data follows the
// seed), so a failing case is reproduced from the shape and seed that RapidCheck prints.
//
// With POSENC_TEST_NO_RAPIDCHECK=1 (cross builds, where RapidCheck is not available) the
// properties written with KROPE_ASSERT / KROPE_FAIL run as plain Catch2 checks over a fixed list of
// seeds (seeded_cases), and the properties that need RapidCheck's generators are left out.
#pragma once

#ifndef POSENC_TEST_NO_RAPIDCHECK
#define POSENC_TEST_NO_RAPIDCHECK 0
#endif
#if POSENC_TEST_NO_RAPIDCHECK
#define KROPE_ASSERT(cond) REQUIRE(cond)
#define KROPE_FAIL(msg) FAIL(msg)
#else
#define KROPE_ASSERT(cond) RC_ASSERT(cond)
#define KROPE_FAIL(msg) RC_FAIL(msg)
#endif

#include <posenc/kernels.hpp>
#include <posenc/tables/rope_cache.hpp>

#if !POSENC_TEST_NO_RAPIDCHECK
#include <rapidcheck/catch.h>
#endif
#include <catch2/catch.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/rope/tables.hpp"
#include "support/channels.hpp"
#if !POSENC_TEST_NO_RAPIDCHECK
#include "support/gen.hpp"
#endif

namespace posenc_test::krope {

using posenc::bf16;
using posenc::f16;

// ---- bits
// ----------------------------------------------------------------------------------------

template <class T>
std::uint32_t bits(T v) {
  if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<std::uint32_t>(v);
  } else {
    return v.bits;
  }
}

template <class T>
T from_bits(std::uint32_t b) {
  if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<float>(b);
  } else {
    return T{static_cast<std::uint16_t>(b)};
  }
}

// Index of the first element whose bits differ, or -1.
template <class T>
long first_difference(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (bits(a[i]) != bits(b[i])) return static_cast<long>(i);
  return -1;
}

template <class T>
std::string describe_difference(const std::vector<T>& a, const std::vector<T>& b) {
  const long i = first_difference(a, b);
  if (i < 0) return "equal";
  char buf[96];
  std::snprintf(buf, sizeof buf, "element %ld: 0x%08x vs 0x%08x (sizes %zu, %zu)", i,
                a.size() > static_cast<std::size_t>(i) ? bits(a[static_cast<std::size_t>(i)]) : 0u,
                b.size() > static_cast<std::size_t>(i) ? bits(b[static_cast<std::size_t>(i)]) : 0u,
                a.size(), b.size());
  return buf;
}

// ---- random values
// -------------------------------------------------------------------------------

// Finite or infinite values of every class, never NaN (two NaNs in one pair would leave the
// propagated payload to the compiler; NaN inputs are tested on their own): zeros, subnormals,
// infinities, and normal values of magnitude 2^-12 .. 2^12.
template <class T>
T random_value(std::mt19937_64& rng) {
  const std::uint64_t r = rng();
  if constexpr (std::is_same_v<T, float>) {
    const auto sign = static_cast<std::uint32_t>(r >> 63) << 31;
    switch (r % 64) {
      case 0:
        return std::bit_cast<float>(sign);
      case 1:
        return std::bit_cast<float>(sign | 0x7f800000u);
      case 2:
      case 3:
        return std::bit_cast<float>(sign | static_cast<std::uint32_t>((r >> 8) & 0x7fffffu));
      default: {
        const auto e = static_cast<std::uint32_t>(127 - 12 + static_cast<int>((r >> 8) % 25));
        return std::bit_cast<float>(sign | (e << 23) |
                                    static_cast<std::uint32_t>((r >> 16) & 0x7fffffu));
      }
    }
  } else {
    // Any 16-bit pattern; NaNs are made finite by clearing the exponent's top bit.
    auto b = static_cast<std::uint16_t>(r >> 20);
    const bool nan = std::is_same_v<T, bf16> ? (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0
                                             : (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) != 0;
    if (nan) b = static_cast<std::uint16_t>(b & 0xbfffu);
    return T{b};
  }
}

template <class T>
void fill_random(std::vector<T>& v, std::mt19937_64& rng) {
  for (T& x : v) x = random_value<T>(rng);
}

// ---- tensors
// -------------------------------------------------------------------------------------

// Layouts of a [tokens, heads, head_dim] view inside a buffer.
enum class layout_kind : int {
  dense,       // [T, H, D]
  qkv_slice,   // the k slice of a fused [T, 3 * H * D] qkv buffer
  head_major,  // [H, T, D]
  padded,      // gaps between heads and between tokens
  count
};

template <class T>
struct Tensor {
  std::vector<T> buf;
  pk::tensor_view<T> view;
};

// A view of the given shape and layout, starting `misalign` elements into its buffer (odd starts
// for 16-bit types test unaligned word loads), the whole buffer filled with random values.
template <class T>
Tensor<T> make_tensor(layout_kind kind, std::size_t tokens, std::size_t heads, std::size_t dim,
                      std::size_t misalign, std::mt19937_64& rng) {
  std::size_t ts = 0, hs = 0, size = 0, start = misalign;
  switch (kind) {
    case layout_kind::dense:
      ts = heads * dim;
      hs = dim;
      size = tokens * ts;
      break;
    case layout_kind::qkv_slice:
      ts = 3 * heads * dim;
      hs = dim;
      start += heads * dim;
      size = tokens * ts;
      break;
    case layout_kind::head_major:
      hs = tokens * dim;
      ts = dim;
      size = heads * hs;
      break;
    default:
      hs = dim + 3;
      ts = heads * hs + 5;
      size = tokens * ts;
      break;
  }
  Tensor<T> t;
  t.buf.resize(size + misalign + 1);
  fill_random(t.buf, rng);
  t.view = {t.buf.data() + start, tokens, heads, dim, ts, hs};
  return t;
}

// A view of the same shape and strides over another buffer (for copies).
template <class T>
pk::tensor_view<T> same_view_in(std::vector<T>& buf, const Tensor<T>& t) {
  pk::tensor_view<T> v = t.view;
  v.data = buf.data() + (t.view.data - t.buf.data());
  return v;
}

// Without RapidCheck: f(seed) for `cases` fixed seeds (a failure names the case and its seed).
template <class F>
void seeded_cases(const char* name, int cases, F&& f) {
  for (int i = 0; i < cases; ++i) {
    const std::uint64_t seed = 0x9e3779b97f4a7c15u * static_cast<std::uint64_t>(i + 1);
    INFO(name << ": case " << i << ", seed " << seed);
    f(seed);
  }
}

// A property of a seed: rc::prop `name` over random seeds, or without RapidCheck as many fixed
// seeds as RapidCheck's default number of cases (100).
template <class F>
void seeded_property(const char* name, F f) {
#if !POSENC_TEST_NO_RAPIDCHECK
  rc::prop(name, [f] { f(*rc::gen::arbitrary<std::uint64_t>()); });
#else
  seeded_cases(name, 100, f);
#endif
}

// f(T{}) for each storage type the kernels take: float, bf16, f16.
template <class F>
void for_each_storage(F&& f) {
  f(float{});
  f(bf16{});
  f(f16{});
}

using posenc::layout_name;
inline const char* format_name(pk::rope_table_format f) {
  return f == pk::rope_table_format::compact ? "compact" : "expanded";
}

}  // namespace posenc_test::krope
