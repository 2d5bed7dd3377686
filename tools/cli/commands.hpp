// The commands of `posenc`, one row each in tools/cli/commands.cpp: the command's name, its usage
// line and description in `posenc --help`, and the function that runs it. parse_args
// (options.cpp), usage_text (usage.cpp) and run (run.cpp) work from these rows alone.
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "cli/options.hpp"

namespace posenc::cli {

// A flag a command takes beyond its groups, or a group flag whose default differs there.
struct command_flag {
  std::string_view name{};
  std::string_view default_value{};  // empty: the flag row's
  std::string_view example{};        // empty: the flag row's
  std::string_view help{};           // empty: the flag row's help line
  std::string_view metavar{};        // empty: the flag row's
};

struct command_info {
  command id = command::none;
  std::string_view name{};
  // The usage line after "posenc NAME " and the text after the name under "Commands:"; a line
  // break in either continues the text under its first line.
  std::string_view synopsis{};
  std::string_view description{};
  bool starts_group = false;  // a blank line before it under "Commands:"
  std::string_view note{};    // a line of its own after the description
  // Runs the parsed invocation, output to `out`; returns the exit status. Throws cli_error.
  int (*run)(const invocation&, std::ostream&) = nullptr;
  // The flags it takes: those of the groups (flag_group bits, flags.hpp) and its own list. Any
  // other flag is the usage error "posenc: --svg is not a flag of table (see posenc help table)".
  std::uint8_t groups = 0;
  std::span<const command_flag> own_flags{};
  // Flags of its groups that it does not take (entropy: --seq-len); they are "not a flag of" it
  // and `posenc help CMD` leaves them out.
  std::span<const std::string_view> without_flags{};
};

// Whether command `c` takes the flag named `name` (a name of flags(), not an old spelling).
bool takes_flag(const command_info& c, std::string_view name);
// The default of flag `name` in command `c`: its own list's, else the flag row's.
std::string_view flag_default(const command_info& c, std::string_view name);
// The row of flag `name` in the own list of `c`, or nullptr.
const command_flag* own_flag(const command_info& c, std::string_view name);
// An example of flag `name` for command `c`: its own list's, else the flag row's.
std::string_view flag_example(const command_info& c, std::string_view name);

// Every command, in the order of `posenc --help`.
std::span<const command_info> commands();
const command_info& command_of(command id);

// "freqs, table, ... or accuracy", for messages.
std::string command_list();

}  // namespace posenc::cli
