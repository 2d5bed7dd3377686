// Prints, for a rule name, the messages that compiling its broken spec must produce: first
// message(rule), then the message of each other rule that the broken config also breaks. The
// messages come from posenc::message() at run time, so a passing compile_fail test proves that the
// static_assert texts and the runtime messages are the same.
//
//   rule_message <rule>            the messages, one per line (exit 1 for an unknown rule)
//   rule_message --check <rules..> exit 0 when the names are those of all_rope_rules, in order,
//                                  and every broken config breaks exactly its rules
#include <cstdio>
#include <cstring>
#include <string_view>

#include <posenc/spec/rope.hpp>

#include "broken_specs.hpp"

namespace rules = posenc_test::rules;

namespace {

bool breaks_exactly(const rules::rule_case& c) {
  if (posenc::validate(c.broken) != c.rule) return false;
  if (posenc::validate(c.valid) != posenc::rope_error::ok) return false;
  for (posenc::rope_error e : posenc::all_rope_rules) {
    const bool expected = e == c.rule || e == c.also_broken;
    if (posenc::satisfies(c.broken, e) == expected) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--check") == 0) {
    const auto n = static_cast<std::size_t>(argc - 2);
    bool ok = n == std::size(rules::cases);
    for (std::size_t i = 0; ok && i < n; ++i) ok = rules::cases[i].name == argv[i + 2];
    if (!ok) {
      std::fprintf(stderr, "the rule list does not match all_rope_rules:");
      for (const auto& c : rules::cases)
        std::fprintf(stderr, " %.*s", static_cast<int>(c.name.size()), c.name.data());
      std::fprintf(stderr, "\n");
      return 1;
    }
    for (const auto& c : rules::cases) {
      if (!breaks_exactly(c)) {
        std::fprintf(stderr, "the broken config of %.*s does not break exactly its rules\n",
                     static_cast<int>(c.name.size()), c.name.data());
        return 1;
      }
    }
    return 0;
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: rule_message <rule> | --check <rule>...\n");
    return 2;
  }
  for (const auto& c : rules::cases) {
    if (c.name != argv[1]) continue;
    std::printf("%s\n", posenc::message(c.rule));
    if (c.also_broken != posenc::rope_error::ok)
      std::printf("%s\n", posenc::message(c.also_broken));
    return 0;
  }
  std::fprintf(stderr, "rule_message: unknown rule '%s'\n", argv[1]);
  return 1;
}
