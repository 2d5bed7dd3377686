// Lists, for an encoding and a rule name, the cases that compiling must reject and the messages
// each must produce: first message(rule), then the message of the other rule the broken config
// also breaks. The messages come from message() at run time, so a passing compile_fail test proves
// that the static_assert texts and the runtime messages are the same.
//
//   rule_message <encoding> <rule>           one line per case of the rule:
//                                            <case number> TAB <case name> TAB <messages, TAB
//                                            separated> (exit 1 for an unknown encoding or rule)
//   rule_message --check <encoding> <rules..> exit 0 when the names are those of
//                                            all_<encoding>_rules, in order, and every broken
//                                            config breaks exactly its rules (its twin none)
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string_view>

#include "broken_additive.hpp"
#include "broken_multiaxis.hpp"
#include "broken_specs.hpp"
#include "broken_t5_temperature.hpp"

namespace {

template <class Case, class Error, std::size_t R>
bool breaks_exactly(const Case& c, const Error (&all_rules)[R]) {
  if (validate(c.broken) != c.rule) return false;
  if (validate(c.valid) != Error::ok) return false;
  for (Error e : all_rules) {
    const bool expected = e == c.rule || e == c.also_broken;
    if (satisfies(c.broken, e) == expected) return false;
    if (!satisfies(c.valid, e)) return false;
  }
  return true;
}

template <class Cases, class More, class Error, std::size_t R>
int check(const Cases& cases, const More& more, const Error (&all_rules)[R], int n, char** names) {
  bool ok = static_cast<std::size_t>(n) == std::size(cases);
  for (int i = 0; ok && i < n; ++i) ok = cases[i].name == names[i];
  if (!ok) {
    std::fprintf(stderr, "the rule list does not match all_<encoding>_rules:");
    for (const auto& c : cases)
      std::fprintf(stderr, " %.*s", static_cast<int>(c.name.size()), c.name.data());
    std::fprintf(stderr, "\n");
    return 1;
  }
  int status = 0;
  auto check_case = [&](const auto& c) {
    if (breaks_exactly(c, all_rules)) return;
    std::fprintf(stderr, "the broken config of %.*s does not break exactly its rules\n",
                 static_cast<int>(c.name.size()), c.name.data());
    status = 1;
  };
  for (const auto& c : cases) check_case(c);
  for (const auto& c : more) check_case(c);
  return status;
}

template <class Cases, class More>
int list(const Cases& cases, const More& more, std::string_view rule) {
  const auto* primary = std::begin(cases);
  while (primary != std::end(cases) && primary->name != rule) ++primary;
  if (primary == std::end(cases)) {
    std::fprintf(stderr, "rule_message: unknown rule '%.*s'\n", static_cast<int>(rule.size()),
                 rule.data());
    return 1;
  }
  std::size_t number = 0;
  auto print = [&](const auto& c) {
    if (c.rule == primary->rule) {
      std::printf("%zu\t%.*s\t%s", number, static_cast<int>(c.name.size()), c.name.data(),
                  message(c.rule));
      if (c.also_broken != decltype(c.rule)::ok) std::printf("\t%s", message(c.also_broken));
      std::printf("\n");
    }
    ++number;
  };
  for (const auto& c : cases) print(c);
  for (const auto& c : more) print(c);
  return 0;
}

// f(cases, more, all_<encoding>_rules) for the encoding called `name`; 1 for an unknown one.
template <class F>
int with_encoding(std::string_view name, F f) {
  namespace pt = posenc_test;
  if (name == "rope") return f(pt::rules::cases, pt::rules::more_cases, posenc::all_rope_rules);
  if (name == "sinusoidal")
    return f(pt::sinusoidal_rules::cases, pt::sinusoidal_rules::more_cases,
             posenc::all_sinusoidal_rules);
  if (name == "alibi")
    return f(pt::alibi_rules::cases, pt::alibi_rules::more_cases, posenc::all_alibi_rules);
  if (name == "learned")
    return f(pt::learned_rules::cases, pt::learned_rules::more_cases, posenc::all_learned_rules);
  if (name == "mrope")
    return f(pt::mrope_rules::cases, pt::mrope_rules::more_cases, posenc::all_mrope_rules);
  if (name == "axial_rope")
    return f(pt::axial_rope_rules::cases, pt::axial_rope_rules::more_cases,
             posenc::all_axial_rope_rules);
  if (name == "t5") return f(pt::t5_rules::cases, pt::t5_rules::more_cases, posenc::all_t5_rules);
  if (name == "temperature")
    return f(pt::temperature_rules::cases, pt::temperature_rules::more_cases,
             posenc::all_temperature_rules);
  std::fprintf(stderr, "rule_message: unknown encoding '%.*s'\n", static_cast<int>(name.size()),
               name.data());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--check") == 0) {
    return with_encoding(argv[2], [&](const auto& cases, const auto& more, const auto& rules) {
      return check(cases, more, rules, argc - 3, argv + 3);
    });
  }
  if (argc != 3) {
    std::fprintf(stderr, "usage: rule_message <encoding> <rule> | --check <encoding> <rule>...\n");
    return 2;
  }
  const std::string_view rule = argv[2];
  return with_encoding(argv[1], [&](const auto& cases, const auto& more, const auto&) {
    return list(cases, more, rule);
  });
}
