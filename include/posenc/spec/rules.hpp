// What the rules of every encoding share (spec/rope.hpp, spec/sinusoidal.hpp, spec/learned.hpp,
// spec/alibi.hpp). Each encoding has an error enum (`ok` and one enumerator per rule),
// message(e), satisfies(c, e) and the list all_<encoding>_rules; validate(c) is the first rule of
// that list c breaks, and a run-time builder writes only when validate(c) is ok. A spec is a type
// with a `static constexpr` config; its checked form is that config once a check struct has
// asserted every rule, one static_assert each, with message(e) written out as the literal text (a
// static_assert message must be a string literal in C++20).
#pragma once

#include <concepts>
#include <cstddef>

namespace posenc::spec_detail {

// A type with a `static constexpr Config config` member: the compile-time face of an encoding.
template <class S, class Config>
concept spec_of = requires {
  { S::config } -> std::convertible_to<Config>;
};

// The first rule of `rules` that c breaks (satisfies(c, rule) is false; satisfies is found next
// to the config by argument-dependent lookup), or Error::ok.
template <class Config, class Error, std::size_t N>
constexpr Error first_broken_rule(const Config& c, const Error (&rules)[N]) {
  for (Error e : rules)
    if (!satisfies(c, e)) return e;
  return Error::ok;
}

// validate(c), having called write() only when it is ok: a run-time builder that finds a broken
// rule returns it and writes nothing.
template <class Config, class Write>
constexpr auto write_if_valid(const Config& c, Write write) {
  auto e = validate(c);
  if (e == decltype(e)::ok) write();
  return e;
}

// Check::c, after Check (a struct with a static_assert per rule on its config c, and
// `valid = validate(c) == ok`) has been instantiated: the checked form of a spec.
template <class Check>
inline constexpr auto checked_form = (static_cast<void>(Check::valid), Check::c);

}  // namespace posenc::spec_detail
