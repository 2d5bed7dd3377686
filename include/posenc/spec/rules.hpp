// What the rules of every encoding share (spec/rope.hpp, spec/sinusoidal.hpp, spec/learned.hpp,
// spec/alibi.hpp). Each encoding has an error enum (`ok` and one enumerator per rule),
// message(e), satisfies(c, e) and the list all_<encoding>_rules; validate(c) is the first rule of
// that list c breaks. A spec's checked form is its config once a check struct has asserted every
// rule, one static_assert each, with message(e) written out as the literal text (a static_assert
// message must be a string literal in C++20).
#pragma once

#include <cstddef>

namespace posenc::spec_detail {

// The first rule of `rules` that c breaks (satisfies(c, rule) is false; satisfies is found next
// to the config by argument-dependent lookup), or Error::ok.
template <class Config, class Error, std::size_t N>
constexpr Error first_broken_rule(const Config& c, const Error (&rules)[N]) {
  for (Error e : rules)
    if (!satisfies(c, e)) return e;
  return Error::ok;
}

// Check::c, after Check (a struct with a static_assert per rule on its config c, and
// `valid = validate(c) == ok`) has been instantiated: the checked form of a spec.
template <class Check>
inline constexpr auto checked_form = (static_cast<void>(Check::valid), Check::c);

}  // namespace posenc::spec_detail
