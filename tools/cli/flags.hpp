// The flags of `posenc`, one row each in tools/cli/flags.cpp: the flag's name, how its value is
// read, where the value goes in the invocation, its group (which commands take it, with the
// command table's own lists, commands.cpp), and its lines in `posenc --help` and `posenc help CMD`.
// parse_args (options.cpp), usage_text and command_help (usage.cpp) work from these rows alone, so
// a flag is added by adding its row (and its field in options.hpp). The old spellings of renamed
// flags and the pairs of flags that conflict are tables here too.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/error.hpp"
#include "cli/names.hpp"
#include "cli/options.hpp"

namespace posenc::cli {

// How a flag's value is read. A value that does not fit is the usage error "FLAG needs WHAT".
enum class value_kind : std::uint8_t {
  none,      // no value: `--bloom` ("--bloom=x" is an error)
  text,      // any text, even the empty one
  nonempty,  // any text but the empty one
  integer,   // a decimal integer in [min, max] (parse_uint)
  number,    // a finite number (parse_double)
  fraction,  // a finite number in (0, 1]
  numbers,   // comma-separated finite numbers (parse_double_list)
  choice,    // one of `names`
};

struct value_spec {
  value_kind kind = value_kind::none;
  // WHAT in "FLAG needs WHAT"; when empty: "an integer in [min, max]", "a finite number",
  // "a number in (0, 1]", "comma-separated finite numbers", or the names ("a, b or c").
  std::string_view what{};
  std::uint64_t min = 0;
  std::uint64_t max = 0;
  // integer: a value in [min, max] above this is the usage error "FLAG must be at most AT_MOST";
  // 0: no such limit.
  std::uint64_t at_most = 0;
  std::span<const std::string_view> names{};  // choice
  bool one_of = false;                        // choice: WHAT is "one of a, b, c"
};

constexpr value_spec no_value() {
  return {};
}
constexpr value_spec text() {
  return {.kind = value_kind::text};
}
constexpr value_spec nonempty(std::string_view what) {
  return {.kind = value_kind::nonempty, .what = what};
}
constexpr value_spec integer(std::uint64_t min, std::uint64_t max, std::string_view what = {},
                             std::uint64_t at_most = 0) {
  return {.kind = value_kind::integer, .what = what, .min = min, .max = max, .at_most = at_most};
}
constexpr value_spec number() {
  return {.kind = value_kind::number};
}
constexpr value_spec fraction() {
  return {.kind = value_kind::fraction};
}
constexpr value_spec numbers() {
  return {.kind = value_kind::numbers};
}
template <class E, std::size_t N>
constexpr value_spec choice(const name_table<E, N>& t) {
  return {.kind = value_kind::choice, .names = t.names};
}
template <class E, std::size_t N>
constexpr value_spec one_of(const name_table<E, N>& t) {
  return {.kind = value_kind::choice, .names = t.names, .one_of = true};
}

// A flag's value as its value_spec read it.
struct flag_value {
  std::string_view flag;  // the flag's name, for messages
  std::string_view text;  // the value as given ("" for value_kind::none)
  std::uint64_t integer = 0;
  double number = 0.0;
  std::vector<double> numbers;
  std::size_t choice = 0;  // the index into value_spec::names
};

// Where a flag's help line goes in `posenc --help`: the Config or Run list, at the end of the
// line of the flag before it ("--beta-fast X, --beta-slow X"), or nowhere (the flags of one
// command appear in its usage line).
enum class help_section : std::uint8_t { none, config, run, same_line };

// One help line: "--flag METAVAR   TEXT". An empty metavar of a choice flag is its names
// ("interleaved|half"); TEXT may hold line breaks.
struct help_line {
  std::string_view metavar{};
  std::string_view text{};
};

// Which commands take a flag: every command whose command_info::groups has the flag's group, and
// those that name the flag in their own list (commands.hpp).
enum class flag_group : std::uint8_t {
  own = 0,          // only the commands that list it
  source = 1 << 0,  // --preset, --hf-config, --gguf and their companions
  rope = 1 << 1,    // the RoPE configuration and --seq-len
  format = 1 << 2,  // --format, --csv
};
constexpr std::uint8_t operator|(flag_group a, flag_group b) {
  return static_cast<std::uint8_t>(static_cast<std::uint8_t>(a) | static_cast<std::uint8_t>(b));
}
constexpr std::uint8_t operator|(std::uint8_t a, flag_group b) {
  return static_cast<std::uint8_t>(a | static_cast<std::uint8_t>(b));
}

struct flag {
  std::string_view name{};
  value_spec value{};
  void (*set)(invocation&, const flag_value&) = nullptr;
  help_section section = help_section::none;
  help_line help{};
  flag_group group = flag_group::own;
  // For `posenc help CMD`: the default ("required", "off", "10000", ...) and an example argument.
  std::string_view default_value{};
  std::string_view example{};
};

// Every flag, in the order of their help lines.
std::span<const flag> flags();

// An old spelling of a renamed flag: it still works, with one warning on stderr
// ("posenc: warning: --max-pos is now --positions; the old spelling will go").
struct renamed_flag {
  std::string_view name;     // the old spelling
  std::string_view renamed;  // the flag it now is
};
std::span<const renamed_flag> renamed_flags();

// Flags that contradict each other: giving two of one group is the usage error
// "posenc: A and B conflict (WHY)", A and B in the order given. Flags that override a
// preset's or a config file's fields are not conflicts (docs/cli.md, "Configuration").
struct conflict_group {
  std::array<std::string_view, 3> names{};  // two or three; the rest empty
  std::string_view why{};
};
std::span<const conflict_group> conflict_groups();

// --help and -h: the parser looks for them before anything else (they win wherever they are).
inline constexpr std::array<std::string_view, 2> help_flags = {"--help", "-h"};

// The usage error "posenc: FLAG needs WHAT".
[[noreturn]] inline void bad_value(std::string_view flag, std::string_view what) {
  usage_error("posenc: " + printable(flag) + " needs " + std::string(what));
}

// WHAT for a value that `spec` does not accept.
std::string expected_value(const value_spec& spec);

// --positions in every command that takes it: N (0 to N-1), A:B (A to B-1), A:B:S (A, A+S, ...
// below B) or a,b,c (those positions, in that order); every position below 2^32 and the set not
// empty. Throws the usage error naming the forms otherwise.
position_set parse_positions(std::string_view text);

}  // namespace posenc::cli
