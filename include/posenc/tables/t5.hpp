// T5 relative position buckets and biases (docs/formulas.md §13), as constexpr functions and
// tables.
//
// The bucket of a relative position rel = key position - query position (HF
// T5Attention._relative_position_bucket, huggingface/transformers
// src/transformers/models/t5/modeling_t5.py; mesh tensorflow _relative_position_bucket,
// tensorflow/mesh mesh_tensorflow/transformer/transformer_layers.py, which negates first and tests
// n < 0; the same buckets):
//   bidirectional: side = num_buckets / 2, offset = side if rel > 0 else 0, n = |rel|;
//   causal:        side = num_buckets,     offset = 0,                      n = max(-rel, 0);
//   max_exact = side / 2, R = side - max_exact;
//   bucket = offset + (n < max_exact ? n
//                      : min(max_exact + trunc(log(n / max_exact) / log(max_distance / max_exact)
//                                              * R), side - 1)).
// `hf_float32` evaluates the large branch as HF does: n / max_exact in float32, the log in float32,
// log(max_distance / max_exact) in float64 (Python's math.log) rounded to float32 as torch does
// with a Python scalar, the division and the product by R in float32, then .to(long) (truncation).
// We take the float32 log correctly rounded (math::log in double-double, rounded once); torch's
// vectorised logf is within 1 ulp, so the two agree wherever torch rounds correctly (all 601
// distances of tests/golden/hf_t5_relative_bucket.json do). `exact` is floor of the real value:
// double-double log, and where the scaled log lies within 2^-80 of an integer k, the rational test
// (n / max_exact)^R == (max_distance / max_exact)^k decides (integer arithmetic, t5_detail). The
// two kinds differ only at such integers, where float32 rounding may land below k (formulas.md §13
// lists them for the presets).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <posenc/math/double_double.hpp>
#include <posenc/math/log.hpp>
#include <posenc/spec/rules.hpp>
#include <posenc/spec/t5.hpp>
#include <posenc/tables/detail/owning.hpp>

namespace posenc {

namespace t5_detail {
constexpr std::uint64_t gcd(std::uint64_t a, std::uint64_t b) {
  while (b != 0) {
    const std::uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// b^e, or 0 when it exceeds 2^64 - 1 (b >= 1, so 0 is never a true power).
constexpr std::uint64_t saturating_pow(std::uint64_t b, std::uint64_t e) {
  std::uint64_t r = 1;
  for (std::uint64_t i = 0; i < e; ++i) {
    if (b != 0 && r > UINT64_MAX / b) return 0;
    r *= b;
  }
  return r;
}

// The integer e with e^k == a, or 0 if a is not a k-th power (a >= 1, k >= 1).
constexpr std::uint64_t exact_root(std::uint64_t a, std::uint64_t k) {
  std::uint64_t lo = 1;
  std::uint64_t hi = a;
  while (lo <= hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    const std::uint64_t p = saturating_pow(mid, k);
    if (p == a) return mid;
    if (p == 0 || p > a) {
      hi = mid - 1;
    } else {
      lo = mid + 1;
    }
  }
  return 0;
}

// a^r == c^k for integers a, c >= 1, r >= 1, k >= 0: with g = gcd(r, k), a^(r/g) == c^(k/g), and
// as gcd(r/g, k/g) = 1 that holds iff a = e^(k/g) and c = e^(r/g) for an integer e.
constexpr bool powers_equal(std::uint64_t a, std::uint64_t r, std::uint64_t c, std::uint64_t k) {
  if (k == 0) return a == 1;
  const std::uint64_t g = gcd(r, k);
  const std::uint64_t e = exact_root(a, k / g);
  return e != 0 && saturating_pow(e, r / g) == c;
}

// (n / me)^r == (md / me)^k: both fractions in lowest terms, numerators and denominators equal.
constexpr bool ratio_powers_equal(std::uint64_t n, std::uint64_t me, std::uint64_t md,
                                  std::uint64_t r, std::uint64_t k) {
  const std::uint64_t g1 = gcd(n, me);
  const std::uint64_t g2 = gcd(md, me);
  return powers_equal(n / g1, r, md / g2, k) && powers_equal(me / g1, r, me / g2, k);
}

// trunc(log(n / me) / log(md / me) * r) in HF's float32 arithmetic (n >= me, n <= 2^24).
constexpr std::uint64_t hf_float32_step(std::uint64_t n, std::uint64_t me, std::uint64_t md,
                                        std::uint64_t r) {
  const float x = static_cast<float>(n) / static_cast<float>(me);
  const float lx = math::log(x);
  const auto ld = static_cast<float>(math::log(static_cast<double>(md) / static_cast<double>(me)));
  const float v = lx / ld * static_cast<float>(r);
  return static_cast<std::uint64_t>(v);
}

// floor(log(n / me) / log(md / me) * r), exactly (n >= me, me < md).
constexpr std::uint64_t exact_step(std::uint64_t n, std::uint64_t me, std::uint64_t md,
                                   std::uint64_t r) {
  const math::dd ln = math::log(math::dd{static_cast<double>(n), 0.0} / static_cast<double>(me));
  const math::dd lm = math::log(math::dd{static_cast<double>(md), 0.0} / static_cast<double>(me));
  const math::dd v = ln / lm * static_cast<double>(r);
  // v >= 0 and below 2^53: the nearest integer of v.hi, then the sign of v - k.
  const auto k = static_cast<std::uint64_t>(v.hi + 0.5);
  const double diff = math::to_double(v - static_cast<double>(k));
  const double tol = 0x1p-80 * (v.hi > 1.0 ? v.hi : 1.0);
  if (diff >= tol) return k;
  if (diff <= -tol) return k - 1;
  return ratio_powers_equal(n, me, md, r, k) ? k : (diff > 0 ? k : k - 1);
}
}  // namespace t5_detail

// The bucket (0 .. num_buckets-1) of relative position rel = key position - query position under
// config c (valid).
constexpr std::uint32_t t5_bucket(const t5_config& c, std::int64_t rel) {
  const bool bidi = c.direction == t5_direction::bidirectional;
  const std::uint64_t side = t5_side_buckets(c);
  const std::uint64_t offset = bidi && rel > 0 ? side : 0;
  // |rel| without overflow at INT64_MIN.
  const std::uint64_t mag = rel < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(rel)
                                    : static_cast<std::uint64_t>(rel);
  const std::uint64_t n = bidi ? mag : (rel < 0 ? mag : 0);
  const std::uint64_t me = t5_max_exact(c);
  if (n < me) return static_cast<std::uint32_t>(offset + n);
  // At and past max_distance the value is >= R in exact arithmetic (and >= R - 1 after float32
  // rounding): both kinds saturate at side - 1.
  if (n >= c.max_distance) return static_cast<std::uint32_t>(offset + side - 1);
  const std::uint64_t r = side - me;
  const std::uint64_t step = c.log == t5_log_kind::hf_float32
                                 ? t5_detail::hf_float32_step(n, me, c.max_distance, r)
                                 : t5_detail::exact_step(n, me, c.max_distance, r);
  const std::uint64_t b = me + step < side - 1 ? me + step : side - 1;
  return static_cast<std::uint32_t>(offset + b);
}

// Relative positions -max_distance .. max_distance cover every bucket: past them the bucket is
// that of +-max_distance. A per-distance table has this many entries, index rel + max_distance.
constexpr std::size_t t5_distance_count(const t5_config& c) {
  return std::size_t{2} * c.max_distance + 1;
}

// out[rel + max_distance] = t5_bucket(c, rel) for rel in [-max_distance, max_distance]. Validates c
// first; on error returns the rule and writes nothing.
constexpr t5_error build_t5_buckets(const t5_config& c, std::uint32_t* out) {
  return spec_detail::write_if_valid(c, [&] {
    const auto md = static_cast<std::int64_t>(c.max_distance);
    for (std::int64_t rel = -md; rel <= md; ++rel)
      out[static_cast<std::size_t>(rel + md)] = t5_bucket(c, rel);
  });
}

// The bias of head h by relative position: out[h * t5_distance_count(c) + rel + max_distance] =
// weights[t5_bucket(c, rel) * heads + h], weights laid out as HF's relative_attention_bias
// embedding, [num_buckets, heads] (row = bucket). weights.size() must be num_buckets * heads
// (else t5_error::weights); c is validated first; nothing is written on error.
constexpr t5_error build_t5_relative_bias(const t5_config& c, std::span<const float> weights,
                                          float* out) {
  if (const t5_error e = validate(c); e != t5_error::ok) return e;
  if (weights.size() != std::size_t{c.num_buckets} * c.heads) return t5_error::weights;
  const std::size_t n = t5_distance_count(c);
  const auto md = static_cast<std::int64_t>(c.max_distance);
  for (std::int64_t rel = -md; rel <= md; ++rel) {
    const std::size_t b = t5_bucket(c, rel);
    const auto at = static_cast<std::size_t>(rel + md);
    for (std::size_t h = 0; h < c.heads; ++h) out[h * n + at] = weights[b * c.heads + h];
  }
  return t5_error::ok;
}

// The buckets of compile-time spec S (validated first), index rel + max_distance.
template <t5_spec S>
inline constexpr std::array<std::uint32_t, t5_distance_count(checked_t5<S>)> t5_buckets_v = [] {
  std::array<std::uint32_t, t5_distance_count(checked_t5<S>)> a{};
  static_cast<void>(build_t5_buckets(checked_t5<S>, a.data()));
  return a;
}();

// The per-head bias of compile-time spec S from a constexpr weight table [num_buckets, heads].
template <t5_spec S, std::size_t N>
constexpr std::array<float, t5_distance_count(checked_t5<S>) * checked_t5<S>.heads>
t5_relative_bias(const std::array<float, N>& weights) {
  static_assert(N == std::size_t{checked_t5<S>.num_buckets} * checked_t5<S>.heads,
                "posenc: t5 weights must hold num_buckets * heads values");
  std::array<float, t5_distance_count(checked_t5<S>) * checked_t5<S>.heads> a{};
  static_cast<void>(build_t5_relative_bias(checked_t5<S>, weights, a.data()));
  return a;
}

// Owning per-head bias built at run time (hosted code); the same values as build_t5_relative_bias.
inline std::vector<float> make_t5_relative_bias(const t5_config& c, std::span<const float> weights,
                                                t5_error* error = nullptr) {
  t5_error e = validate(c);
  if (e == t5_error::ok && weights.size() != std::size_t{c.num_buckets} * c.heads)
    e = t5_error::weights;
  if (error != nullptr) *error = e;
  if (e != t5_error::ok) {
#if defined(__cpp_exceptions)
    if (error == nullptr) tables_detail::throw_if_broken(e);
#endif
    return {};
  }
  std::vector<float> v(t5_distance_count(c) * c.heads);
  static_cast<void>(build_t5_relative_bias(c, weights, v.data()));
  return v;
}

}  // namespace posenc
