// What the broken configs of every encoding share (broken_specs.hpp for RoPE, broken_additive.hpp
// for sinusoidal, ALiBi and learned, broken_multiaxis.hpp for M-RoPE and axial RoPE,
// broken_t5_temperature.hpp for T5 and attention temperature): a rule_case is a config that breaks
// one rule and its valid twin (the same config with the offending field fixed, at the rule's
// boundary where it has one).
//
// Each encoding lists `cases`, one per rule of all_<encoding>_rules in the same order (the name of
// that case is the rule's name), and `more_cases`: the same rules broken through another parameter
// or another clause (a yarn_beta broken by beta_fast and by beta_slow, a factor rule broken by each
// scaling that has a factor, ...). tests/compile_fail compiles every case as a compile-time spec.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace posenc_test {

template <class Config, class Error>
struct rule_case {
  Error rule;
  std::string_view name;
  Config broken;
  Config valid;
  Error also_broken = Error::ok;  // a second rule the broken config cannot avoid
};

// `cases` holds one case per rule of `rules`, in the same order, and every case of `more` breaks
// one of those rules: a rule added to all_<encoding>_rules without a case stops the build of the
// compile_fail helper (and of tests/frequencies for RoPE).
template <class Case, std::size_t N, std::size_t M, class Error, std::size_t R>
constexpr bool one_case_per_rule(const Case (&cases)[N], const std::array<Case, M>& more,
                                 const Error (&rules)[R]) {
  if (N != R) return false;
  for (std::size_t i = 0; i < N; ++i)
    if (cases[i].rule != rules[i] || cases[i].rule == Error::ok) return false;
  for (const Case& c : more) {
    bool known = false;
    for (Error e : rules) known = known || c.rule == e;
    if (!known) return false;
  }
  return true;
}

// Case i of cases followed by more (the numbering of -DPOSENC_CASE=<i> in check_rule.cpp).
template <class Case, std::size_t N, std::size_t M>
constexpr const Case& case_at(const Case (&cases)[N], const std::array<Case, M>& more,
                              std::size_t i) {
  return i < N ? cases[i] : more[i - N];
}

}  // namespace posenc_test
