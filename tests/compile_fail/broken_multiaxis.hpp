// For each rule of all_mrope_rules and all_axial_rope_rules, a configuration that breaks it and a
// valid twin on the rule's boundary (rule_case.hpp); more_cases break the same rules through
// another entry of mrope_section. Each broken config breaks only its rule.
#pragma once

#include <array>

#include <posenc/spec/mrope.hpp>
#include <posenc/spec/rope.hpp>

#include "rule_case.hpp"

namespace posenc_test::mrope_rules {

using posenc::mrope_config;
using posenc::mrope_error;
using rule_case = posenc_test::rule_case<mrope_config, mrope_error>;

inline constexpr posenc::rope_config rope8{8, 8, 10000.0, posenc::rope_layout::half, {}};
inline constexpr posenc::rope_config rope16{16, 16, 10000.0, posenc::rope_layout::half, {}};
inline constexpr posenc::rope_config rope8_base1{8, 8, 1.0, posenc::rope_layout::half, {}};
constexpr auto contiguous = posenc::mrope_layout::contiguous;
constexpr auto interleaved = posenc::mrope_layout::interleaved;

inline constexpr rule_case cases[] = {
    {mrope_error::rope,
     "rope",
     {rope8_base1, {1, 1, 2}, contiguous},
     {rope8, {1, 1, 2}, contiguous}},
    {mrope_error::mrope_section_value,
     "mrope_section_value",
     {rope8, {0, 2, 2}, contiguous},
     {rope8, {1, 1, 2}, contiguous}},
    {mrope_error::mrope_section_sum,
     "mrope_section_sum",
     {rope8, {1, 1, 1}, contiguous},
     {rope8, {1, 1, 2}, contiguous}},
    // 8 pairs: width takes pairs 2, 5 (and 8, which does not exist) for mrope_section[2] = 3.
    {mrope_error::mrope_section_interleave,
     "mrope_section_interleave",
     {rope16, {2, 3, 3}, interleaved},
     {rope16, {3, 3, 2}, interleaved}},
};

inline constexpr std::array more_cases = std::to_array<rule_case>({
    {mrope_error::mrope_section_value,
     "mrope_section_value_height",
     {rope8, {2, 0, 2}, contiguous},
     {rope8, {2, 1, 1}, contiguous}},
    {mrope_error::mrope_section_value,
     "mrope_section_value_width",
     {rope8, {2, 2, 0}, contiguous},
     {rope8, {2, 1, 1}, contiguous}},
    {mrope_error::mrope_section_sum,
     "mrope_section_sum_over",
     {rope8, {2, 1, 2}, contiguous},
     {rope8, {2, 1, 1}, contiguous}},
    // Height takes pairs 1, 4, 7 (and 10, which does not exist) for mrope_section[1] = 4.
    {mrope_error::mrope_section_interleave,
     "mrope_section_interleave_height",
     {rope16, {2, 4, 2}, interleaved},
     {rope16, {3, 3, 2}, interleaved}},
});
static_assert(one_case_per_rule(cases, more_cases, posenc::all_mrope_rules),
              "tests/compile_fail: one case per rule of all_mrope_rules, in order");

}  // namespace posenc_test::mrope_rules

namespace posenc_test::axial_rope_rules {

using posenc::axial_rope_config;
using posenc::axial_rope_error;
using rule_case = posenc_test::rule_case<axial_rope_config, axial_rope_error>;

constexpr auto half = posenc::rope_layout::half;
constexpr auto alternating = posenc::axial_frequencies::alternating;
constexpr auto shared = posenc::axial_frequencies::shared;

inline constexpr rule_case cases[] = {
    {axial_rope_error::rope,
     "rope",
     {{8, 12, 10000.0, half, {}}, alternating},
     {{8, 8, 10000.0, half, {}}, alternating}},
    {axial_rope_error::rotary_dim,
     "rotary_dim",
     {{8, 6, 10000.0, half, {}}, shared},
     {{8, 8, 10000.0, half, {}}, shared}},
};

inline constexpr std::array more_cases = std::to_array<rule_case>({
    {axial_rope_error::rotary_dim,
     "rotary_dim_2",
     {{8, 2, 10000.0, half, {}}, alternating},
     {{8, 4, 10000.0, half, {}}, alternating}},
});
static_assert(one_case_per_rule(cases, more_cases, posenc::all_axial_rope_rules),
              "tests/compile_fail: one case per rule of all_axial_rope_rules, in order");

}  // namespace posenc_test::axial_rope_rules
