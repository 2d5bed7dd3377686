// T5 relative position bias (Raffel et al. 2020, "Exploring the Limits of Transfer Learning with a
// Unified Text-to-Text Transformer", §2.1): each relative distance falls into one of num_buckets
// buckets, and a learned table [num_buckets, heads] gives the bias added to the attention score of
// each head. The configuration and its rules (run time: validate; compile time: t5_spec's
// static_asserts, with the same messages); the bucket function is in tables/t5.hpp
// (docs/formulas.md §13).
//
// - direction: `bidirectional` (encoders, HF compute_bias with is_decoder = false) gives half of
//   the buckets to keys after the query; `causal` (decoders) maps every later key to bucket 0.
// - log: `hf_float32` reproduces HF's T5Attention._relative_position_bucket, which takes the log
//   in float32 and truncates toward zero; `exact` is the formula in exact arithmetic (mesh
//   tensorflow's _relative_position_bucket computes it in float32 too; the exact form is the
//   formula itself). They differ only where the scaled log is an integer (docs/formulas.md §13).
//
// Rules, from the formula (with n the buckets of one side: num_buckets / 2 bidirectional, else
// num_buckets; max_exact = n / 2):
// - num_buckets > 0 (a bucket count of 0 has no table row to index);
// - bidirectional: num_buckets even (an odd count leaves the last row unreachable);
// - max_exact >= 1 (the log divides by max_exact): num_buckets >= 2, bidirectional >= 4;
// - max_distance > max_exact (the log divides by log(max_distance / max_exact): 0 at equality, and
//   below it the buckets would fall as the distance grows);
// - max_distance <= 2^24 (every distance at most max_distance is exact in float32, as HF's
//   relative_position.float() needs), num_buckets <= 2^16, heads > 0.
#pragma once

#include <cstdint>

#include <posenc/spec/rules.hpp>

namespace posenc {

enum class t5_direction : std::uint8_t { bidirectional, causal };
enum class t5_log_kind : std::uint8_t { hf_float32, exact };

// "bidirectional", "causal" and "hf-float32", "exact": the words of the docs; every value of each
// enum in declaration order.
constexpr const char* t5_direction_name(t5_direction d) {
  return d == t5_direction::bidirectional ? "bidirectional" : "causal";
}
constexpr const char* t5_log_kind_name(t5_log_kind k) {
  return k == t5_log_kind::hf_float32 ? "hf-float32" : "exact";
}
inline constexpr t5_direction all_t5_directions[] = {t5_direction::bidirectional,
                                                     t5_direction::causal};
inline constexpr t5_log_kind all_t5_log_kinds[] = {t5_log_kind::hf_float32, t5_log_kind::exact};

inline constexpr std::uint32_t t5_max_num_buckets = std::uint32_t{1} << 16;
inline constexpr std::uint32_t t5_max_distance_limit = std::uint32_t{1} << 24;

// HF T5Config names: relative_attention_num_buckets, relative_attention_max_distance, num_heads.
struct t5_config {
  std::uint32_t num_buckets = 32;
  std::uint32_t max_distance = 128;
  std::uint32_t heads = 0;
  t5_direction direction = t5_direction::bidirectional;
  t5_log_kind log = t5_log_kind::hf_float32;
};

// Buckets of one side (of keys at or before the query) and the end of its exact region.
constexpr std::uint32_t t5_side_buckets(const t5_config& c) {
  return c.direction == t5_direction::bidirectional ? c.num_buckets / 2 : c.num_buckets;
}
constexpr std::uint32_t t5_max_exact(const t5_config& c) {
  return t5_side_buckets(c) / 2;
}

enum class t5_error : std::uint8_t {
  ok,
  num_buckets,         // num_buckets must be positive
  num_buckets_odd,     // bidirectional num_buckets must be even
  num_buckets_small,   // num_buckets must be >= 2 (bidirectional: >= 4)
  num_buckets_large,   // num_buckets must be <= 2^16
  max_distance,        // max_distance must be > max_exact
  max_distance_large,  // max_distance must be <= 2^24
  heads,               // heads must be positive
  direction,           // direction must be bidirectional or causal
  log,                 // log must be hf_float32 or exact
  weights,             // a builder's weight table is not num_buckets * heads (not a config rule)
};

constexpr const char* message(t5_error e) {
  switch (e) {
    case t5_error::ok:
      return "posenc: ok";
    case t5_error::num_buckets:
      return "posenc: t5 num_buckets must be positive";
    case t5_error::num_buckets_odd:
      return "posenc: t5 bidirectional num_buckets must be even";
    case t5_error::num_buckets_small:
      return "posenc: t5 num_buckets must be >= 2 (bidirectional: >= 4)";
    case t5_error::num_buckets_large:
      return "posenc: t5 num_buckets must be <= 65536";
    case t5_error::max_distance:
      return "posenc: t5 max_distance must be > max_exact (a quarter of bidirectional "
             "num_buckets, half of causal)";
    case t5_error::max_distance_large:
      return "posenc: t5 max_distance must be <= 2^24";
    case t5_error::heads:
      return "posenc: t5 heads must be positive";
    case t5_error::direction:
      return "posenc: t5 direction must be bidirectional or causal";
    case t5_error::log:
      return "posenc: t5 log must be hf_float32 or exact";
    case t5_error::weights:
      return "posenc: t5 weights must hold num_buckets * heads values";
  }
  return "posenc: unknown error";
}

constexpr bool satisfies(const t5_config& c, t5_error e) {
  const bool bidi = c.direction == t5_direction::bidirectional;
  switch (e) {
    case t5_error::ok:
      return true;
    case t5_error::num_buckets:
      return c.num_buckets > 0;
    case t5_error::num_buckets_odd:
      return !bidi || c.num_buckets % 2 == 0;
    case t5_error::num_buckets_small:
      // 0 is num_buckets' rule.
      return c.num_buckets == 0 || c.num_buckets >= (bidi ? 4u : 2u);
    case t5_error::num_buckets_large:
      return c.num_buckets <= t5_max_num_buckets;
    case t5_error::max_distance:
      return c.max_distance > t5_max_exact(c);
    case t5_error::max_distance_large:
      return c.max_distance <= t5_max_distance_limit;
    case t5_error::heads:
      return c.heads > 0;
    case t5_error::direction:
      return bidi || c.direction == t5_direction::causal;
    case t5_error::log:
      return c.log == t5_log_kind::hf_float32 || c.log == t5_log_kind::exact;
    case t5_error::weights:
      return true;
  }
  return false;
}

// In this order: a config breaking an earlier rule is reported by it (the enums first, since the
// others read them).
inline constexpr t5_error all_t5_rules[] = {t5_error::direction,
                                            t5_error::log,
                                            t5_error::num_buckets,
                                            t5_error::num_buckets_odd,
                                            t5_error::num_buckets_small,
                                            t5_error::num_buckets_large,
                                            t5_error::max_distance,
                                            t5_error::max_distance_large,
                                            t5_error::heads};

// The first rule c breaks, or t5_error::ok.
constexpr t5_error validate(const t5_config& c) {
  return spec_detail::first_broken_rule(c, all_t5_rules);
}

// A compile-time T5 bias is a type with `static constexpr t5_config config`.
template <class S>
concept t5_spec = spec_detail::spec_of<S, t5_config>;

namespace spec_detail {
template <t5_spec S>
struct t5_spec_check {
  static constexpr t5_config c = S::config;
  static_assert(satisfies(c, t5_error::direction),
                "posenc: t5 direction must be bidirectional or causal");
  static_assert(satisfies(c, t5_error::log), "posenc: t5 log must be hf_float32 or exact");
  static_assert(satisfies(c, t5_error::num_buckets), "posenc: t5 num_buckets must be positive");
  static_assert(satisfies(c, t5_error::num_buckets_odd),
                "posenc: t5 bidirectional num_buckets must be even");
  static_assert(satisfies(c, t5_error::num_buckets_small),
                "posenc: t5 num_buckets must be >= 2 (bidirectional: >= 4)");
  static_assert(satisfies(c, t5_error::num_buckets_large),
                "posenc: t5 num_buckets must be <= 65536");
  static_assert(satisfies(c, t5_error::max_distance),
                "posenc: t5 max_distance must be > max_exact (a quarter of bidirectional "
                "num_buckets, half of causal)");
  static_assert(satisfies(c, t5_error::max_distance_large),
                "posenc: t5 max_distance must be <= 2^24");
  static_assert(satisfies(c, t5_error::heads), "posenc: t5 heads must be positive");
  static constexpr bool valid = validate(c) == t5_error::ok;
};
}  // namespace spec_detail

// S::config, validated at compile time (a broken rule stops compilation with its message).
template <t5_spec S>
inline constexpr t5_config checked_t5 = spec_detail::checked_form<spec_detail::t5_spec_check<S>>;

// Preset of t5-base, flan-t5-base and mt5-base (config.json of google-t5/t5-base,
// google/flan-t5-base and google/mt5-base on the HF hub: relative_attention_num_buckets 32,
// num_heads 12; relative_attention_max_distance 128, the T5Config default where a config.json
// omits it). The encoder is bidirectional, the decoder causal.
constexpr t5_config t5_base_config(t5_direction d = t5_direction::bidirectional) {
  return {32, 128, 12, d, t5_log_kind::hf_float32};
}

}  // namespace posenc
