// For each rule of all_t5_rules and all_temperature_rules, a configuration that breaks it and a
// valid twin on the rule's boundary (rule_case.hpp); more_cases break the same rules through
// another parameter or clause (T5: the causal side, max_distance reached by num_buckets or by the
// direction; temperature: the non-finite values and the upper bound of seq_length). Each broken
// config breaks only its rule.
#pragma once

#include <array>
#include <cstdint>
#include <limits>

#include <posenc/spec/attention_temperature.hpp>
#include <posenc/spec/t5.hpp>

#include "rule_case.hpp"

namespace posenc_test::t5_rules {

using posenc::t5_config;
using posenc::t5_error;
using rule_case = posenc_test::rule_case<t5_config, t5_error>;

constexpr auto bidi = posenc::t5_direction::bidirectional;
constexpr auto causal = posenc::t5_direction::causal;
constexpr auto hf = posenc::t5_log_kind::hf_float32;
constexpr auto exact = posenc::t5_log_kind::exact;
// One past the last enumerator: an enum value no rule other than its own reads as valid.
constexpr auto no_direction = static_cast<posenc::t5_direction>(2);
constexpr auto no_log = static_cast<posenc::t5_log_kind>(2);

// With n the buckets of one side (num_buckets / 2 bidirectional, num_buckets causal), max_exact is
// n / 2 (spec/t5.hpp); each comment gives the max_exact the max_distance rule compares with.
inline constexpr rule_case cases[] = {
    // The last valid direction, causal, is the twin.
    {t5_error::direction, "direction", {32, 128, 12, no_direction, hf}, {32, 128, 12, causal, hf}},
    {t5_error::log, "log", {32, 128, 12, bidi, no_log}, {32, 128, 12, bidi, exact}},
    // Causal 2 is the fewest buckets that is valid (max_exact 1 < max_distance 2).
    {t5_error::num_buckets, "num_buckets", {0, 2, 1, causal, hf}, {2, 2, 1, causal, hf}},
    {t5_error::num_buckets_odd, "num_buckets_odd", {5, 2, 1, bidi, hf}, {4, 2, 1, bidi, hf}},
    // Bidirectional 2 buckets: max_exact 0, so only num_buckets_small rejects it.
    {t5_error::num_buckets_small, "num_buckets_small", {2, 2, 1, bidi, hf}, {4, 2, 1, bidi, hf}},
    // max_exact 16384 and 16384 (65538 / 4 rounded down).
    {t5_error::num_buckets_large,
     "num_buckets_large",
     {65538, 32768, 1, bidi, hf},
     {65536, 32768, 1, bidi, hf}},
    // max_exact 8.
    {t5_error::max_distance, "max_distance", {32, 8, 12, bidi, hf}, {32, 9, 12, bidi, hf}},
    {t5_error::max_distance_large,
     "max_distance_large",
     {32, (std::uint32_t{1} << 24) + 1, 12, bidi, hf},
     {32, std::uint32_t{1} << 24, 12, bidi, hf}},
    {t5_error::heads, "heads", {32, 128, 0, bidi, hf}, {32, 128, 1, bidi, hf}},
};

inline constexpr std::array more_cases = std::to_array<rule_case>({
    // A causal side has num_buckets buckets: 1 is too few (and odd is allowed).
    {t5_error::num_buckets_small,
     "num_buckets_small_causal",
     {1, 2, 1, causal, hf},
     {2, 2, 1, causal, hf}},
    // An odd count past the limit, allowed odd only causal: max_exact 32768 and 32768.
    {t5_error::num_buckets_large,
     "num_buckets_large_causal",
     {65537, 32769, 1, causal, hf},
     {65536, 32769, 1, causal, hf}},
    // max_exact 16.
    {t5_error::max_distance,
     "max_distance_causal",
     {32, 16, 12, causal, hf},
     {32, 17, 12, causal, hf}},
    // max_distance fixed at 128, reached by max_exact: 512 / 4 = 128, 510 / 4 rounded down = 127.
    {t5_error::max_distance,
     "max_distance_by_num_buckets",
     {512, 128, 12, bidi, hf},
     {510, 128, 12, bidi, hf}},
    // The same 32 buckets and max_distance 16: max_exact 16 causal, 8 bidirectional.
    {t5_error::max_distance,
     "max_distance_by_direction",
     {32, 16, 12, causal, hf},
     {32, 16, 12, bidi, hf}},
    {t5_error::max_distance_large,
     "max_distance_large_causal",
     {32, (std::uint32_t{1} << 24) + 1, 12, causal, exact},
     {32, std::uint32_t{1} << 24, 12, causal, exact}},
});
static_assert(one_case_per_rule(cases, more_cases, posenc::all_t5_rules),
              "tests/compile_fail: one case per rule of all_t5_rules, in order");

}  // namespace posenc_test::t5_rules

namespace posenc_test::temperature_rules {

using posenc::attention_temperature;
using posenc::temperature_error;
using rule_case = posenc_test::rule_case<attention_temperature, temperature_error>;

constexpr auto none = posenc::temperature_kind::none;
constexpr auto llama4 = posenc::temperature_kind::llama4;
constexpr auto logn = posenc::temperature_kind::logn;
// One past the last enumerator; its seq_length would be valid for logn, its scales for llama4.
constexpr auto no_kind = static_cast<posenc::temperature_kind>(3);

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double max = std::numeric_limits<double>::max();
// 1 - 2^-53, the double below 1; and -2^-1074, the negative double closest to 0.
constexpr double below_one = 0x1.fffffffffffffp-1;
constexpr double below_zero = -0x1p-1074;
// 2^51 - 1: p + 1 <= 2^51 for every position p (max_temperature_position).
constexpr std::uint64_t max_seq_length = (std::uint64_t{1} << 51) - 1;

inline constexpr rule_case cases[] = {
    // The last valid kind, logn, is the twin.
    {temperature_error::kind, "kind", {no_kind, 8192.0, 0.1, 4096}, {logn, 8192.0, 0.1, 4096}},
    {temperature_error::floor_scale,
     "floor_scale",
     {llama4, below_one, 0.1, 0},
     {llama4, 1.0, 0.1, 0}},
    {temperature_error::attn_scale,
     "attn_scale",
     {llama4, 8192.0, below_zero, 0},
     {llama4, 8192.0, 0.0, 0}},
    {temperature_error::seq_length, "seq_length", {logn, 8192.0, 0.1, 1}, {logn, 8192.0, 0.1, 2}},
};

inline constexpr std::array more_cases = std::to_array<rule_case>({
    // Non-finite scales, which only is_finite rejects (the twins: the largest finite double).
    {temperature_error::floor_scale,
     "floor_scale_infinite",
     {llama4, inf, 0.1, 0},
     {llama4, max, 0.1, 0}},
    {temperature_error::floor_scale,
     "floor_scale_nan",
     {llama4, nan, 0.1, 0},
     {llama4, 8192.0, 0.1, 0}},
    {temperature_error::attn_scale,
     "attn_scale_infinite",
     {llama4, 8192.0, inf, 0},
     {llama4, 8192.0, max, 0}},
    {temperature_error::attn_scale,
     "attn_scale_nan",
     {llama4, 8192.0, nan, 0},
     {llama4, 8192.0, 0.1, 0}},
    // A broken scale of kind none or logn is not read: the kind makes a rule apply.
    {temperature_error::floor_scale,
     "floor_scale_by_kind",
     {llama4, 0.5, 0.1, 4096},
     {none, 0.5, 0.1, 4096}},
    {temperature_error::seq_length,
     "seq_length_zero",
     {logn, 8192.0, 0.1, 0},
     {logn, 8192.0, 0.1, 2}},
    {temperature_error::seq_length,
     "seq_length_2_51",
     {logn, 8192.0, 0.1, max_seq_length + 1},
     {logn, 8192.0, 0.1, max_seq_length}},
});
static_assert(one_case_per_rule(cases, more_cases, posenc::all_temperature_rules),
              "tests/compile_fail: one case per rule of all_temperature_rules, in order");

}  // namespace posenc_test::temperature_rules
