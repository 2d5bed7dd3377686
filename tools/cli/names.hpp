// The words of the command line and the output for the values of an enum (--scaling yarn,
// "variant": "causal"): one table per enum, indexed by the enumerator's value, read both ways.
// The RoPE words are the library's own (posenc::layout_name, posenc::scaling_name); the library
// names the ALiBi and sinusoidal enums nowhere, so their tables are here; the tool's own enums
// have theirs next to their declaration (options.hpp). Commands and flags are looked up by name
// the same way (find_named).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <posenc/spec/alibi.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/spec/sinusoidal.hpp>

namespace posenc::cli {

template <class E, std::size_t N>
struct name_table {
  std::array<std::string_view, N> names;

  constexpr std::string_view operator()(E e) const { return names[static_cast<std::size_t>(e)]; }
  constexpr std::optional<E> find(std::string_view word) const {
    for (std::size_t i = 0; i < N; ++i)
      if (names[i] == word) return static_cast<E>(i);
    return std::nullopt;
  }
};

// The row of a table (commands, flags) whose `name` is `name`, or nullptr.
template <class Row>
const Row* find_named(std::span<const Row> rows, std::string_view name) {
  for (const Row& r : rows)
    if (r.name == name) return &r;
  return nullptr;
}

// The names joined by `separator`, the last two by `last` ("a, b or c").
inline std::string join_names(std::span<const std::string_view> names, std::string_view separator,
                              std::string_view last) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? last : separator;
    out += names[i];
  }
  return out;
}

// The table of a library name function over the enumerators from 0 to `Last`.
template <class E, E Last>
constexpr name_table<E, static_cast<std::size_t>(Last) + 1> names_from(const char* (*name)(E)) {
  name_table<E, static_cast<std::size_t>(Last) + 1> t{};
  for (std::size_t i = 0; i < t.names.size(); ++i) t.names[i] = name(static_cast<E>(i));
  return t;
}

// rope_layout::half and scaling_type::longrope are the last enumerators (spec/rope.hpp).
inline constexpr auto rope_layout_names = names_from<rope_layout, rope_layout::half>(layout_name);
inline constexpr auto scaling_names =
    names_from<scaling_type, scaling_type::longrope>(scaling_name);

inline constexpr name_table<sinusoidal_layout, 2> sinusoidal_layout_names{{"paper", "split"}};
inline constexpr name_table<alibi_variant, 2> alibi_variant_names{{"causal", "symmetric"}};
inline constexpr name_table<alibi_slope_kind, 2> alibi_slope_names{{"reference", "bloom"}};

}  // namespace posenc::cli
