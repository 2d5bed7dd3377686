// For each rule of posenc::all_rope_rules, a configuration that breaks it and a valid twin (the
// same configuration with the offending fields fixed); more_cases break the same rules through
// every other parameter and clause that can break them (rule_case.hpp). validate() returns the
// rule for the broken one and ok for the twin. Used by tests/compile_fail (as a compile-time spec
// the broken one must not compile, stopping with the rule's message) and by tests/frequencies (at
// run time).
//
// Each broken config breaks only its rule, except where the rules overlap: head_dim = 0 leaves no
// valid rotary_dim (>= 2 and <= head_dim), and a longrope original_max_position_embeddings of 0 or
// max_position_embeddings of 0 also breaks longrope_context (validate reports the first).
// also_broken lists such companions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include <posenc/spec/rope.hpp>

#include "rule_case.hpp"

namespace posenc_test::rules {

using posenc::rope_config;
using posenc::rope_error;
using posenc::rope_layout;
namespace scaling = posenc::scaling;

// longrope factor lists for rotary_dim 4 (2 entries each).
inline constexpr std::array<double, 2> two_factors = {1.0, 2.0};
inline constexpr std::array<double, 3> three_factors = {1.0, 2.0, 3.0};
inline constexpr std::array<double, 2> zero_factor = {1.0, 0.0};
inline constexpr double inf = std::numeric_limits<double>::infinity();
inline constexpr std::array<double, 2> infinite_factor = {1.0, inf};
// theta_1 = 10^-2 (base 10^4, R 4): 10^-2 / 10^-41 is above FLT_MAX, 10^-2 / 10^-37 below it;
// 1 / 10^40 (pair 0) below FLT_MIN, 1 / 10^37 above it.
inline constexpr std::array<double, 2> tiny_factor = {1.0, 1e-41};
inline constexpr std::array<double, 2> small_factor = {1.0, 1e-37};
inline constexpr std::array<double, 2> huge_factor = {1e40, 2.0};
inline constexpr std::array<double, 2> large_factor = {1e37, 2.0};

// longrope with max_position_embeddings < original_max_position_embeddings but a factor >= 1
// set by hand (scaling::longrope would derive factor 0.5 and break the factor rule first).
constexpr posenc::rope_scaling longrope_short_context() {
  posenc::rope_scaling s = scaling::longrope(two_factors, two_factors, 4096, 2048);
  s.factor = 2.0;
  return s;
}

// longrope with every field set by hand (scaling::longrope derives the factor from the contexts).
constexpr posenc::rope_scaling longrope_with(std::uint32_t original_max_position_embeddings,
                                             std::uint32_t max_position_embeddings, double factor) {
  posenc::rope_scaling s = scaling::longrope(
      two_factors, two_factors, original_max_position_embeddings, max_position_embeddings);
  s.factor = factor;
  return s;
}

// head_dim 8 in the half layout, with the scaling (and rotary_dim, base) a case varies.
constexpr rope_config head_dim_8(posenc::rope_scaling s, std::uint32_t rotary_dim = 8,
                                 double base = 10000.0) {
  return {8, rotary_dim, base, rope_layout::half, s};
}

using rule_case = posenc_test::rule_case<rope_config, rope_error>;

inline constexpr rule_case cases[] = {
    {rope_error::head_dim,
     "head_dim",
     {0, 0, 10000.0, rope_layout::half},
     {8, 8, 10000.0, rope_layout::half},
     rope_error::rotary_dim},
    {rope_error::rotary_dim,
     "rotary_dim",
     {8, 7, 10000.0, rope_layout::half},
     {8, 8, 10000.0, rope_layout::half}},
    {rope_error::base,
     "base",
     {8, 8, 1.0, rope_layout::interleaved},
     {8, 8, 10000.0, rope_layout::interleaved}},
    {rope_error::factor, "factor", head_dim_8(scaling::linear(0.5)),
     head_dim_8(scaling::linear(2.0))},
    {rope_error::rotary_dim_for_ntk, "rotary_dim_for_ntk", head_dim_8(scaling::ntk(2.0), 2),
     head_dim_8(scaling::ntk(2.0), 4)},
    {rope_error::original_max_position_embeddings, "original_max_position_embeddings",
     head_dim_8(scaling::yarn(2.0, 0)), head_dim_8(scaling::yarn(2.0, 4096))},
    {rope_error::max_position_embeddings, "max_position_embeddings",
     head_dim_8(scaling::dynamic(2.0, 0)), head_dim_8(scaling::dynamic(2.0, 4096))},
    {rope_error::yarn_beta, "yarn_beta", head_dim_8(scaling::yarn(2.0, 4096, 1.0, 32.0)),
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0))},
    {rope_error::yarn_mscale, "yarn_mscale",
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, -1.0, 1.0)),
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, 1.0, 1.0))},
    {rope_error::llama3_freq_factors, "llama3_freq_factors",
     head_dim_8(scaling::llama3(8.0, 4.0, 1.0, 8192), 8, 500000.0),
     head_dim_8(scaling::llama3(8.0, 1.0, 4.0, 8192), 8, 500000.0)},
    {rope_error::longrope_factor_length, "longrope_factor_length",
     head_dim_8(scaling::longrope(three_factors, two_factors, 4096, 8192), 4),
     head_dim_8(scaling::longrope(two_factors, two_factors, 4096, 8192), 4)},
    {rope_error::longrope_factor_value, "longrope_factor_value",
     head_dim_8(scaling::longrope(zero_factor, two_factors, 4096, 8192), 4),
     head_dim_8(scaling::longrope(two_factors, two_factors, 4096, 8192), 4)},
    {rope_error::longrope_context, "longrope_context", head_dim_8(longrope_short_context(), 4),
     head_dim_8(scaling::longrope(two_factors, two_factors, 4096, 8192), 4)},
    {rope_error::attention_factor, "attention_factor",
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, 0.0, 0.0, -1.0)),
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, 0.0, 0.0, 1.25))},
    // The derived rules. FLT_MAX = 0x1.fffffep127 is the largest attention factor; 2^-126 the
    // smallest inv_freq (here 1 / factor, pair 0 of a linear scaling).
    {rope_error::attention_factor_float32, "attention_factor_float32",
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, 0.0, 0.0, 0x1.000001p128)),
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, 0.0, 0.0, 0x1.fffffep127))},
    {rope_error::yarn_correction_range, "yarn_correction_range",
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 0x1p-901)),
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 0x1p-900))},
    {rope_error::inv_freq_float32, "inv_freq_float32",
     head_dim_8(scaling::linear(0x1.0000000000001p126), 2),
     head_dim_8(scaling::linear(0x1p126), 2)},
};

// Every other parameter and clause that can break a rule; the twins sit on the rule's boundary
// where it has one (factor 1, mscale 0, attention_factor 0, rotary_dim 4 for ntk, ...).
inline constexpr std::array more_cases = std::to_array<rule_case>({
    // factor: finite and >= 1, for every scaling that has a factor.
    {rope_error::factor, "factor_infinite", head_dim_8(scaling::linear(inf)),
     head_dim_8(scaling::linear(1.0))},
    {rope_error::factor, "factor_ntk", head_dim_8(scaling::ntk(0.5)),
     head_dim_8(scaling::ntk(1.0))},
    {rope_error::factor, "factor_dynamic", head_dim_8(scaling::dynamic(0.5, 4096)),
     head_dim_8(scaling::dynamic(1.0, 4096))},
    {rope_error::factor, "factor_yarn", head_dim_8(scaling::yarn(0.5, 4096)),
     head_dim_8(scaling::yarn(1.0, 4096))},
    {rope_error::factor, "factor_llama3",
     head_dim_8(scaling::llama3(0.5, 1.0, 4.0, 8192), 8, 500000.0),
     head_dim_8(scaling::llama3(1.0, 1.0, 4.0, 8192), 8, 500000.0)},
    {rope_error::factor, "factor_longrope", head_dim_8(longrope_with(4096, 8192, 0.5), 4),
     head_dim_8(longrope_with(4096, 8192, 1.0), 4)},
    // base: finite (a NaN already fails base > 1).
    {rope_error::base,
     "base_infinite",
     {8, 8, inf, rope_layout::half},
     {8, 8, 10000.0, rope_layout::half}},
    // rotary_dim (partial rotary): <= head_dim, and HF's int(head_dim * partial_rotary_factor)
    // when it is odd or the factor is outside (0, 1].
    {rope_error::rotary_dim,
     "rotary_dim_above_head_dim",
     {8, 10, 10000.0, rope_layout::half},
     {8, 8, 10000.0, rope_layout::half}},
    {rope_error::rotary_dim,
     "partial_rotary_odd",
     {96, posenc::rotary_dim_from_factor(96, 0.27), 10000.0, rope_layout::half},
     {96, posenc::rotary_dim_from_factor(96, 0.25), 10000.0, rope_layout::half}},
    {rope_error::rotary_dim,
     "partial_rotary_factor_above_1",
     {8, posenc::rotary_dim_from_factor(8, 1.5), 10000.0, rope_layout::interleaved},
     {8, posenc::rotary_dim_from_factor(8, 1.0), 10000.0, rope_layout::interleaved}},
    {rope_error::rotary_dim_for_ntk, "rotary_dim_for_dynamic",
     head_dim_8(scaling::dynamic(2.0, 4096), 2), head_dim_8(scaling::dynamic(2.0, 4096), 4)},
    // original_max_position_embeddings of llama3 and longrope (yarn: cases above).
    {rope_error::original_max_position_embeddings, "original_max_position_embeddings_llama3",
     head_dim_8(scaling::llama3(8.0, 1.0, 4.0, 0), 8, 500000.0),
     head_dim_8(scaling::llama3(8.0, 1.0, 4.0, 8192), 8, 500000.0)},
    {rope_error::original_max_position_embeddings, "original_max_position_embeddings_longrope",
     head_dim_8(longrope_with(0, 8192, 2.0), 4), head_dim_8(longrope_with(4096, 8192, 2.0), 4),
     rope_error::longrope_context},
    {rope_error::max_position_embeddings, "max_position_embeddings_longrope",
     head_dim_8(longrope_with(4096, 0, 2.0), 4), head_dim_8(longrope_with(4096, 8192, 2.0), 4),
     rope_error::longrope_context},
    // yarn beta_fast > beta_slow > 0, both finite: through each parameter.
    {rope_error::yarn_beta, "yarn_beta_fast_infinite",
     head_dim_8(scaling::yarn(2.0, 4096, inf, 1.0)),
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0))},
    {rope_error::yarn_beta, "yarn_beta_fast_equal_slow",
     head_dim_8(scaling::yarn(2.0, 4096, 1.0, 1.0)),
     head_dim_8(scaling::yarn(2.0, 4096, 2.0, 1.0))},
    {rope_error::yarn_beta, "yarn_beta_slow_zero", head_dim_8(scaling::yarn(2.0, 4096, 32.0, 0.0)),
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 0.25))},
    // yarn mscale and mscale_all_dim: each finite and >= 0.
    {rope_error::yarn_mscale, "yarn_mscale_infinite",
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, inf, 1.0)),
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, 0.0, 1.0))},
    {rope_error::yarn_mscale, "yarn_mscale_all_dim_negative",
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, 1.0, -1.0)),
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, 1.0, 0.0))},
    {rope_error::yarn_mscale, "yarn_mscale_all_dim_infinite",
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, 1.0, inf)),
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, 1.0, 1.0))},
    // attention_factor: finite, of yarn and of longrope.
    {rope_error::attention_factor, "attention_factor_infinite",
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, 0.0, 0.0, inf)),
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, 0.0, 0.0, 0.0))},
    {rope_error::attention_factor, "attention_factor_longrope",
     head_dim_8(scaling::longrope(two_factors, two_factors, 4096, 8192, -1.0), 4),
     head_dim_8(scaling::longrope(two_factors, two_factors, 4096, 8192, 1.0), 4)},
    // llama3 high_freq_factor >= low_freq_factor > 0, high finite (an infinite low fails
    // high >= low; equal factors are Llama-4 Scout's empty band).
    {rope_error::llama3_freq_factors, "llama3_low_freq_factor_zero",
     head_dim_8(scaling::llama3(8.0, 0.0, 4.0, 8192), 8, 500000.0),
     head_dim_8(scaling::llama3(8.0, 0.5, 4.0, 8192), 8, 500000.0)},
    {rope_error::llama3_freq_factors, "llama3_freq_factors_reversed",
     head_dim_8(scaling::llama3(8.0, 4.0, 2.0, 8192), 8, 500000.0),
     head_dim_8(scaling::llama3(8.0, 4.0, 4.0, 8192), 8, 500000.0)},
    {rope_error::llama3_freq_factors, "llama3_high_freq_factor_infinite",
     head_dim_8(scaling::llama3(8.0, 1.0, inf, 8192), 8, 500000.0),
     head_dim_8(scaling::llama3(8.0, 1.0, 4.0, 8192), 8, 500000.0)},
    // longrope long_factor (short_factor: cases above): its length and its values.
    {rope_error::longrope_factor_length, "longrope_long_factor_length",
     head_dim_8(scaling::longrope(two_factors, three_factors, 4096, 8192), 4),
     head_dim_8(scaling::longrope(two_factors, two_factors, 4096, 8192), 4)},
    {rope_error::longrope_factor_value, "longrope_long_factor_infinite",
     head_dim_8(scaling::longrope(two_factors, infinite_factor, 4096, 8192), 4),
     head_dim_8(scaling::longrope(two_factors, two_factors, 4096, 8192), 4)},
    // attention factor <= FLT_MAX: DeepSeek's ratio of mscales, and its 2^512 bound.
    {rope_error::attention_factor_float32, "attention_factor_float32_mscale",
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, 0x1p500, 1.0)),
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, 1e30, 1.0))},
    {rope_error::attention_factor_float32, "attention_factor_float32_mscale_bound",
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, 0x1.0000000000001p512, 0x1p512)),
     head_dim_8(scaling::yarn(2.0, 4096, 32.0, 1.0, true, 0x1p512, 0x1p512))},
    // yarn correction range: beta_fast above 2^900 (L / (2 pi beta_fast) underflows).
    {rope_error::yarn_correction_range, "yarn_correction_range_beta_fast",
     head_dim_8(scaling::yarn(2.0, 4096, 0x1.0000000000001p900, 1.0)),
     head_dim_8(scaling::yarn(2.0, 4096, 0x1p900, 1.0))},
    // inv_freq a normal float32: longrope's short and long factors, dynamic at its largest base,
    // ntk, yarn and llama3 through base and factor, and the bounds of the evaluation.
    {rope_error::inv_freq_float32, "inv_freq_float32_longrope_short",
     head_dim_8(scaling::longrope(tiny_factor, two_factors, 4096, 8192), 4),
     head_dim_8(scaling::longrope(small_factor, two_factors, 4096, 8192), 4)},
    {rope_error::inv_freq_float32, "inv_freq_float32_longrope_long",
     head_dim_8(scaling::longrope(two_factors, huge_factor, 4096, 8192), 4),
     head_dim_8(scaling::longrope(two_factors, large_factor, 4096, 8192), 4)},
    {rope_error::inv_freq_float32, "inv_freq_float32_dynamic",
     head_dim_8(scaling::dynamic(2.0, 4096), 8, 1e30),
     head_dim_8(scaling::dynamic(2.0, 4096), 8, 1e20)},
    {rope_error::inv_freq_float32, "inv_freq_float32_ntk", head_dim_8(scaling::ntk(1e300), 4),
     head_dim_8(scaling::ntk(1e30), 4)},
    {rope_error::inv_freq_float32, "inv_freq_float32_base", head_dim_8(scaling::none(), 8, 1e200),
     head_dim_8(scaling::none(), 8, 1e40)},
    {rope_error::inv_freq_float32, "inv_freq_float32_yarn", head_dim_8(scaling::yarn(1e39, 4096)),
     head_dim_8(scaling::yarn(1e30, 4096))},
    {rope_error::inv_freq_float32, "inv_freq_float32_llama3",
     head_dim_8(scaling::llama3(1e39, 1.0, 4.0, 8192), 8, 500000.0),
     head_dim_8(scaling::llama3(1e30, 1.0, 4.0, 8192), 8, 500000.0)},
    {rope_error::inv_freq_float32, "inv_freq_float32_llama3_bound",
     head_dim_8(scaling::llama3(8.0, 1.0, 0x1.0000000000001p512, 8192), 8, 500000.0),
     head_dim_8(scaling::llama3(8.0, 1.0, 0x1p512, 8192), 8, 500000.0)},
    // longrope original_max_position_embeddings >= 2 (the attention factor's ln).
    {rope_error::longrope_context, "longrope_original_context_1",
     head_dim_8(scaling::longrope(two_factors, two_factors, 1, 8192), 4),
     head_dim_8(scaling::longrope(two_factors, two_factors, 2, 8192), 4)},
});
static_assert(posenc_test::one_case_per_rule(cases, more_cases, posenc::all_rope_rules),
              "tests/compile_fail: one case per rule of all_rope_rules, in order");

constexpr const rule_case& case_for(rope_error e) {
  for (const rule_case& c : cases)
    if (c.rule == e) return c;
  return cases[0];
}

// The broken config of rule e, or its valid twin.
constexpr rope_config config_for(rope_error e, bool valid) {
  return valid ? case_for(e).valid : case_for(e).broken;
}

}  // namespace posenc_test::rules
