// posenc: RoPE frequencies and cos/sin tables from the command line (docs/cli.md).
#include <cstdio>
#include <iostream>
#include <string_view>
#include <vector>

#include "cli/run.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  const std::vector<std::string_view> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  const int status = posenc::cli::run(args, std::cout, std::cerr);
  std::cout.flush();
  if (!std::cout) {
    std::fputs("posenc: cannot write to standard output\n", stderr);
    return 1;
  }
  return status;
}
