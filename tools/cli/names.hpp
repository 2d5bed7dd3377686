// The words of the command line and the output for the values of an enum (--scaling yarn,
// "variant": "causal"): one table per enum, indexed by the enumerator's value, read both ways.
// The words are the library's own (its name function and list of values of each enum, spec/);
// the tool's own enums have their tables next to their declaration (options.hpp). Commands and
// flags are looked up by name the same way (find_named).
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

// The table of a library enum: its name function over its list of values (which must be the
// enumerators 0, 1, ... in order, as the spec's all_* lists are).
template <class E, std::size_t N>
constexpr name_table<E, N> names_from(const E (&values)[N], const char* (*name)(E)) {
  name_table<E, N> t{};
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(values[i]) != i) throw "posenc: enum values out of order";
    t.names[i] = name(values[i]);
  }
  return t;
}

inline constexpr auto rope_layout_names = names_from(all_rope_layouts, layout_name);
inline constexpr auto scaling_names = names_from(all_scaling_types, scaling_name);
inline constexpr auto sinusoidal_layout_names =
    names_from(all_sinusoidal_layouts, sinusoidal_layout_name);
inline constexpr auto alibi_variant_names = names_from(all_alibi_variants, alibi_variant_name);
inline constexpr auto alibi_slope_names = names_from(all_alibi_slope_kinds, alibi_slope_kind_name);

// --layout also takes the names other projects give the two RoPE layouts: GPT-J's and ggml's
// (GGML_ROPE_TYPE_NORM) for interleaved pairs, GPT-NeoX's, ggml's (GGML_ROPE_TYPE_NEOX) and HF's
// rotate_half for half-split pairs. Output always names the layout by rope_layout_names.
struct layout_alias {
  std::string_view alias;
  rope_layout layout;
};
inline constexpr layout_alias rope_layout_aliases[] = {
    {"gptj", rope_layout::interleaved},
    {"norm", rope_layout::interleaved},
    {"neox", rope_layout::half},
    {"rotate_half", rope_layout::half},
};
// WHAT in "--layout needs WHAT".
inline constexpr std::string_view rope_layout_words =
    "interleaved (gptj, norm) or half (neox, rotate_half); sinusoidal: paper or split";

// The RoPE layout named `word` (a name or an alias), or nullopt.
constexpr std::optional<rope_layout> find_rope_layout(std::string_view word) {
  if (const auto l = rope_layout_names.find(word)) return l;
  for (const layout_alias& a : rope_layout_aliases)
    if (a.alias == word) return a.layout;
  return std::nullopt;
}

}  // namespace posenc::cli
