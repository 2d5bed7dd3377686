// A compile-time spec of one encoding
// (-DPOSENC_ENCODING_<rope|sinusoidal|alibi|learned|mrope|axial_rope|t5|temperature>) built from
// the broken config of case <i> (-DPOSENC_CASE=<i>, numbered as rule_case.hpp's case_at), or,
// with -DPOSENC_VALID -DPOSENC_RULE=<rule>, one spec per valid twin of the cases of that rule.
// checked_<encoding><S> must stop compilation of the first with the rule's static_assert message,
// and accept all the second. Compiled by run.sh with -fsyntax-only.
#include <cstddef>
#include <iterator>
#include <utility>

#if defined(POSENC_ENCODING_rope)
#include "broken_specs.hpp"
namespace rules = posenc_test::rules;
using error = posenc::rope_error;
template <class S>
inline constexpr auto checked = posenc::checked_rope<S>;
#elif defined(POSENC_ENCODING_sinusoidal)
#include "broken_additive.hpp"
namespace rules = posenc_test::sinusoidal_rules;
using error = posenc::sinusoidal_error;
template <class S>
inline constexpr auto checked = posenc::checked_sinusoidal<S>;
#elif defined(POSENC_ENCODING_alibi)
#include "broken_additive.hpp"
namespace rules = posenc_test::alibi_rules;
using error = posenc::alibi_error;
template <class S>
inline constexpr auto checked = posenc::checked_alibi<S>;
#elif defined(POSENC_ENCODING_learned)
#include "broken_additive.hpp"
namespace rules = posenc_test::learned_rules;
using error = posenc::learned_error;
template <class S>
inline constexpr auto checked = posenc::checked_learned<S>;
#elif defined(POSENC_ENCODING_mrope)
#include "broken_multiaxis.hpp"
namespace rules = posenc_test::mrope_rules;
using error = posenc::mrope_error;
template <class S>
inline constexpr auto checked = posenc::checked_mrope<S>;
#elif defined(POSENC_ENCODING_axial_rope)
#include "broken_multiaxis.hpp"
namespace rules = posenc_test::axial_rope_rules;
using error = posenc::axial_rope_error;
template <class S>
inline constexpr auto checked = posenc::checked_axial_rope<S>;
#elif defined(POSENC_ENCODING_t5)
#include "broken_t5_temperature.hpp"
namespace rules = posenc_test::t5_rules;
using error = posenc::t5_error;
template <class S>
inline constexpr auto checked = posenc::checked_t5<S>;
#elif defined(POSENC_ENCODING_temperature)
#include "broken_t5_temperature.hpp"
namespace rules = posenc_test::temperature_rules;
using error = posenc::temperature_error;
template <class S>
inline constexpr auto checked = posenc::checked_temperature<S>;
#else
#error \
    "compile with -DPOSENC_ENCODING_<rope|sinusoidal|alibi|learned|mrope|axial_rope|t5|temperature>"
#endif

namespace {

constexpr std::size_t case_count = std::size(rules::cases) + rules::more_cases.size();

constexpr const auto& case_at(std::size_t i) {
  return posenc_test::case_at(rules::cases, rules::more_cases, i);
}

#ifdef POSENC_VALID
template <std::size_t I>
struct spec {
  static constexpr auto config = case_at(I).valid;
};

#ifndef POSENC_RULE
#error "compile the valid twins with -DPOSENC_RULE=<rule name>"
#endif

// Instantiates checked<spec<I>> for the twins of rule POSENC_RULE only.
template <std::size_t I>
constexpr bool twin_checked() {
  if constexpr (case_at(I).rule == error::POSENC_RULE)
    return static_cast<void>(checked<spec<I>>), true;
  else
    return false;
}
template <std::size_t... I>
constexpr std::size_t twins_checked(std::index_sequence<I...>) {
  return (std::size_t{twin_checked<I>()} + ...);
}
static_assert(twins_checked(std::make_index_sequence<case_count>{}) > 0,
              "tests/compile_fail: no case for this rule");

#else
#ifndef POSENC_CASE
#error "compile with -DPOSENC_CASE=<case number>"
#endif
static_assert(POSENC_CASE < case_count, "tests/compile_fail: no such case");

struct spec {
  static constexpr auto config = case_at(POSENC_CASE).broken;
};

[[maybe_unused]] constexpr auto checked_config = checked<spec>;
#endif

}  // namespace
