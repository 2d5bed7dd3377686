// Proofs for the T5 relative position bias: static_asserts only; building this translation unit is
// the proof. On the t5-base encoder and decoder tables (hf_float32 and exact) and a configuration
// where the two forms differ: exact region identity, monotone buckets in |distance|, saturation at
// num_buckets - 1 (per side) from max_distance on, symmetry of bidirectional buckets, causal keys
// after the query in bucket 0; the bias table reads HF's [num_buckets, heads] layout.
#include <posenc/kernels/t5.hpp>
#include <posenc/spec/t5.hpp>
#include <posenc/tables/t5.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

namespace {
using namespace posenc;

template <t5_direction D, t5_log_kind K>
struct t5_base {
  static constexpr t5_config config = [] {
    t5_config c = t5_base_config(D);
    c.log = K;
    return c;
  }();
};
using enc_hf = t5_base<t5_direction::bidirectional, t5_log_kind::hf_float32>;
using enc_exact = t5_base<t5_direction::bidirectional, t5_log_kind::exact>;
using dec_hf = t5_base<t5_direction::causal, t5_log_kind::hf_float32>;
using dec_exact = t5_base<t5_direction::causal, t5_log_kind::exact>;

static_assert(validate(t5_base_config(t5_direction::bidirectional)) == t5_error::ok);
static_assert(validate(t5_base_config(t5_direction::causal)) == t5_error::ok);

// The laws over one table (index rel + max_distance).
template <class S>
constexpr bool laws_hold() {
  constexpr t5_config c = checked_t5<S>;
  constexpr auto& b = t5_buckets_v<S>;
  const bool bidi = c.direction == t5_direction::bidirectional;
  const std::uint32_t side = t5_side_buckets(c);
  const std::uint32_t me = t5_max_exact(c);
  const auto md = static_cast<std::int64_t>(c.max_distance);
  auto at = [&](std::int64_t rel) { return b[static_cast<std::size_t>(rel + md)]; };
  for (std::int64_t n = 0; n <= md; ++n) {
    if (at(-n) >= c.num_buckets) return false;
    if (n < me && at(-n) != n) return false;                    // exact region
    if (n > 0 && at(-n) < at(-(n - 1))) return false;           // monotone in |rel|
    if (n > 0 && bidi && at(n) != at(-n) + side) return false;  // symmetry
    if (n > 0 && bidi && at(n) < at(n - 1)) return false;       // monotone, keys after
    if (!bidi && at(n) != 0) return false;                      // causal: later keys
  }
  // Saturation: at max_distance, and (t5_bucket) far beyond it.
  if (at(-md) != side - 1 || t5_bucket(c, -md - 1000000) != side - 1) return false;
  if (bidi && (at(md) != c.num_buckets - 1 || t5_bucket(c, md + 1000000) != c.num_buckets - 1))
    return false;
  return true;
}
static_assert(laws_hold<enc_hf>());
static_assert(laws_hold<enc_exact>());
static_assert(laws_hold<dec_hf>());
static_assert(laws_hold<dec_exact>());

// For 32 buckets and max_distance 128 HF's float32 buckets are the exact ones (formulas.md §13).
static_assert(t5_buckets_v<enc_hf> == t5_buckets_v<enc_exact>);
static_assert(t5_buckets_v<dec_hf> == t5_buckets_v<dec_exact>);

// Values by hand (encoder: side 16, max_exact 8, R = 8, bucket 8 + floor(2 log2(n / 8)) below
// 128; decoder: side 32, max_exact 16, R = 16, bucket 16 + floor((16/3) log2(n / 16))).
constexpr std::size_t md128 = 128;
static_assert(t5_buckets_v<enc_hf>[md128 - 12] == 9);   // 2 log2(1.5) = 1.17
static_assert(t5_buckets_v<enc_hf>[md128 - 16] == 10);  // 2 log2(2) = 2, an integer
static_assert(t5_buckets_v<enc_hf>[md128 + 16] == 26);  // 16 + the same 10
static_assert(t5_buckets_v<enc_hf>[md128 - 127] == 15);
static_assert(t5_buckets_v<enc_hf>[md128 + 1] == 17);
static_assert(t5_buckets_v<dec_hf>[md128 - 32] == 21);  // (16/3) log2(2) = 5.33
static_assert(t5_buckets_v<dec_hf>[md128 - 64] == 26);  // (16/3) 2 = 10.67
static_assert(t5_buckets_v<dec_hf>[md128 + 5] == 0);

// Where the forms differ: 17 causal buckets, max_distance 27 (max_exact 8, R = 9). At n = 18,
// 9 log(18/8) / log(27/8) = 9 (2 log 1.5) / (3 log 1.5) = 6 exactly: bucket 14; HF's float32
// quotient falls just below 6 and truncates to 5: bucket 13.
struct differ_hf {
  static constexpr t5_config config = {17, 27, 1, t5_direction::causal, t5_log_kind::hf_float32};
};
struct differ_exact {
  static constexpr t5_config config = {17, 27, 1, t5_direction::causal, t5_log_kind::exact};
};
static_assert(t5_buckets_v<differ_exact>[27 - 18] == 14);
static_assert(t5_buckets_v<differ_hf>[27 - 18] == 13);
static_assert(laws_hold<differ_hf>());
static_assert(laws_hold<differ_exact>());

// The bias: head h at rel reads weights[bucket * heads + h]. Weights 100 bucket + head.
struct small {
  static constexpr t5_config config = {8, 20, 3, t5_direction::bidirectional};
};
constexpr std::array<float, 24> weights = [] {
  std::array<float, 24> w{};
  for (std::size_t b = 0; b < 8; ++b)
    for (std::size_t h = 0; h < 3; ++h) w[b * 3 + h] = static_cast<float>(100 * b + h);
  return w;
}();
constexpr auto bias = t5_relative_bias<small>(weights);
static_assert(bias.size() == 3 * 41);
constexpr bool bias_layout() {
  for (std::size_t h = 0; h < 3; ++h)
    for (std::size_t at = 0; at < 41; ++at)
      if (bias[h * 41 + at] != static_cast<float>(100 * t5_buckets_v<small>[at] + h)) return false;
  return true;
}
static_assert(bias_layout());
// Bidirectional 8 buckets: side 4, max_exact 2; rel 0 -> 0, -1 -> 1, +1 -> 5, far -> 3 and 7.
static_assert(bias[20] == 0.0f && bias[19] == 100.0f && bias[21] == 500.0f);
static_assert(bias[41 + 0] == 301.0f && bias[2 * 41 + 40] == 702.0f);

}  // namespace
