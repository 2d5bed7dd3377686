// Writes every command and flag that posenc's parser knows (tools/cli/commands.cpp,
// tools/cli/flags.cpp, --help and -h) to the file named by argv[1], one a line, for
// tests/tools/manpage.sh.
#include <fstream>
#include <string_view>

#include "cli/commands.hpp"
#include "cli/flags.hpp"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::ofstream out(argv[1]);
  const auto word = [&](std::string_view name) { out << name << '\n'; };
  for (const posenc::cli::command_info& c : posenc::cli::commands()) word(c.name);
  for (const posenc::cli::flag& f : posenc::cli::flags()) word(f.name);
  for (const std::string_view h : posenc::cli::help_flags) word(h);
  out.close();
  return out ? 0 : 1;
}
