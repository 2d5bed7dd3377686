// A compile-time spec built from the broken config of one rule (-DPOSENC_RULE=<rule>), or from its
// valid twin (-DPOSENC_VALID as well). checked_rope<S> must stop compilation of the first with
// the rule's static_assert message, and accept the second. Compiled by run.sh with -fsyntax-only.
#include <posenc/spec/rope.hpp>

#include "broken_specs.hpp"

#ifndef POSENC_RULE
#error "compile with -DPOSENC_RULE=<rule name>"
#endif

namespace {

#ifdef POSENC_VALID
constexpr bool kValid = true;
#else
constexpr bool kValid = false;
#endif

struct spec {
  static constexpr posenc::rope_config config =
      posenc_test::rules::config_for(posenc::rope_error::POSENC_RULE, kValid);
};

[[maybe_unused]] constexpr posenc::rope_config checked = posenc::checked_rope<spec>;

}  // namespace
