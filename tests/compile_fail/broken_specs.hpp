// For each rule of posenc::all_rope_rules, a configuration that breaks it and a valid twin (the
// same configuration with the offending fields fixed). validate() returns the rule for the broken
// one and ok for the twin. Used by tests/compile_fail (as a compile-time spec the broken one must
// not compile, stopping with the rule's message) and by tests/frequencies (at run time).
//
// Each broken config breaks only its rule, except head_dim: head_dim = 0 leaves no valid
// rotary_dim (>= 2 and <= head_dim), so it breaks rotary_dim as well (validate reports head_dim,
// the first). also_broken lists such companions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <posenc/spec/rope.hpp>

namespace posenc_test::rules {

using posenc::rope_config;
using posenc::rope_error;
using posenc::rope_layout;
namespace scaling = posenc::scaling;

// longrope factor lists for rotary_dim 4 (2 entries each).
inline constexpr std::array<double, 2> two_factors = {1.0, 2.0};
inline constexpr std::array<double, 3> three_factors = {1.0, 2.0, 3.0};
inline constexpr std::array<double, 2> zero_factor = {1.0, 0.0};

// longrope with max_position_embeddings < original_max_position_embeddings but a factor >= 1
// set by hand (scaling::longrope would derive factor 0.5 and break the factor rule first).
constexpr posenc::rope_scaling longrope_short_context() {
  posenc::rope_scaling s = scaling::longrope(two_factors, two_factors, 4096, 2048);
  s.factor = 2.0;
  return s;
}

// head_dim 8 in the half layout, with the scaling (and rotary_dim, base) a case varies.
constexpr rope_config head_dim_8(posenc::rope_scaling s, std::uint32_t rotary_dim = 8,
                                 double base = 10000.0) {
  return {8, rotary_dim, base, rope_layout::half, s};
}

struct rule_case {
  rope_error rule;
  std::string_view name;
  rope_config broken;
  rope_config valid;
  rope_error also_broken = rope_error::ok;  // a second rule the broken config cannot avoid
};

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
};

// The table covers posenc::all_rope_rules, in the same order.
constexpr bool covers_all_rules() {
  if (std::size(cases) != std::size(posenc::all_rope_rules)) return false;
  for (std::size_t i = 0; i < std::size(cases); ++i)
    if (cases[i].rule != posenc::all_rope_rules[i]) return false;
  return true;
}
static_assert(covers_all_rules(), "tests/compile_fail: one case per rule of all_rope_rules");

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
