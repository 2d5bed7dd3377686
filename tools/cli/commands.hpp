// The commands of `posenc`, one row each in tools/cli/commands.cpp: the command's name, its usage
// line and description in `posenc --help`, and the function that runs it. parse_args
// (options.cpp), usage_text (usage.cpp) and run (run.cpp) work from these rows alone.
#pragma once

#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "cli/options.hpp"

namespace posenc::cli {

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
};

// Every command, in the order of `posenc --help`.
std::span<const command_info> commands();
const command_info& command_of(command id);

// "freqs, table, ... or accuracy", for messages.
std::string command_list();

}  // namespace posenc::cli
