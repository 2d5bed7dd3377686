// For each rule of all_sinusoidal_rules, all_alibi_rules and all_learned_rules, a configuration
// that breaks it and a valid twin on the rule's boundary (rule_case.hpp); more_cases break the
// same rules through another parameter or clause. Each broken config breaks only its rule.
// sinusoidal_error::positions is not among them: it is a run-time builder's check on its
// positions argument, not a rule of the config (spec/sinusoidal.hpp).
#pragma once

#include <array>
#include <limits>

#include <posenc/spec/alibi.hpp>
#include <posenc/spec/learned.hpp>
#include <posenc/spec/sinusoidal.hpp>

#include "rule_case.hpp"

namespace posenc_test::sinusoidal_rules {

using posenc::sinusoidal_config;
using posenc::sinusoidal_error;
using posenc::sinusoidal_layout;
using rule_case = posenc_test::rule_case<sinusoidal_config, sinusoidal_error>;

inline constexpr rule_case cases[] = {
    {sinusoidal_error::dim,
     "dim",
     {0, sinusoidal_layout::paper, 10000.0, -1},
     {1, sinusoidal_layout::paper, 10000.0, -1}},
    {sinusoidal_error::split_dim,
     "split_dim",
     {1, sinusoidal_layout::split, 10000.0, -1},
     {2, sinusoidal_layout::split, 10000.0, -1}},
    {sinusoidal_error::base,
     "base",
     {8, sinusoidal_layout::paper, 1.0, -1},
     {8, sinusoidal_layout::paper, 10000.0, -1}},
    {sinusoidal_error::padding_idx,
     "padding_idx",
     {8, sinusoidal_layout::split, 10000.0, -2},
     {8, sinusoidal_layout::split, 10000.0, -1}},
};

inline constexpr std::array more_cases = std::to_array<rule_case>({
    // base: finite (a NaN already fails base > 1).
    {sinusoidal_error::base,
     "base_infinite",
     {8, sinusoidal_layout::split, std::numeric_limits<double>::infinity(), 1},
     {8, sinusoidal_layout::split, 10000.0, 1}},
});
static_assert(one_case_per_rule(cases, more_cases, posenc::all_sinusoidal_rules),
              "tests/compile_fail: one case per rule of all_sinusoidal_rules, in order");

}  // namespace posenc_test::sinusoidal_rules

namespace posenc_test::alibi_rules {

using posenc::alibi_config;
using posenc::alibi_error;
using rule_case = posenc_test::rule_case<alibi_config, alibi_error>;

inline constexpr rule_case cases[] = {
    {alibi_error::heads, "heads", {0}, {1}},
};
// heads is the only parameter a rule constrains.
inline constexpr std::array<rule_case, 0> more_cases{};
static_assert(one_case_per_rule(cases, more_cases, posenc::all_alibi_rules),
              "tests/compile_fail: one case per rule of all_alibi_rules, in order");

}  // namespace posenc_test::alibi_rules

namespace posenc_test::learned_rules {

using posenc::learned_config;
using posenc::learned_error;
using rule_case = posenc_test::rule_case<learned_config, learned_error>;

inline constexpr rule_case cases[] = {
    {learned_error::positions, "positions", {0, 768, 0}, {1, 768, 0}},
    {learned_error::dim, "dim", {512, 0, 0}, {512, 1, 0}},
    // positions + offset = 2^32.
    {learned_error::rows, "rows", {0xffffffffu, 768, 1}, {0xffffffffu, 768, 0}},
};

inline constexpr std::array more_cases = std::to_array<rule_case>({
    {learned_error::rows, "rows_offset", {1, 768, 0xffffffffu}, {1, 768, 0xfffffffeu}},
});
static_assert(one_case_per_rule(cases, more_cases, posenc::all_learned_rules),
              "tests/compile_fail: one case per rule of all_learned_rules, in order");

}  // namespace posenc_test::learned_rules
