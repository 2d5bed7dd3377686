// `posenc --help`: the usage lines and descriptions of the commands (commands.cpp) and the help
// lines of the flags (flags.cpp), laid out in columns.
#pragma once

#include <string>

namespace posenc::cli {

std::string usage_text();

}  // namespace posenc::cli
