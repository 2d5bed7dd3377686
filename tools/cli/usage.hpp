// `posenc --help` and `posenc help CMD`: the usage lines and descriptions of the commands
// (commands.cpp) and the help lines of the flags (flags.cpp), laid out in columns.
#pragma once

#include <string>

namespace posenc::cli {

std::string usage_text();

struct command_info;
// `posenc help CMD` and `posenc CMD --help`: the command's usage line and description, then every
// flag it takes (takes_flag) with its help line, its default there and an example.
std::string command_help(const command_info& c);

}  // namespace posenc::cli
