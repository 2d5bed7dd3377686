// posenc: RoPE frequencies and cos/sin tables from the command line (docs/cli.md).
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <string_view>
#include <vector>

#include "cli/error.hpp"
#include "cli/run.hpp"

int main(int argc, char** argv) {
  // A closed pipe on stdout is a write error (EPIPE) that run() reports with one line and exit 1,
  // not a silent death by SIGPIPE (docs/cli.md, "Errors").
  std::signal(SIGPIPE, SIG_IGN);
  std::ios::sync_with_stdio(false);
  try {
    const std::vector<std::string_view> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    const int status = posenc::cli::run(args, std::cout, std::cerr);
    if (std::cout.bad()) return status == posenc::cli::exit_ok ? posenc::cli::exit_invalid : status;
    std::cout.flush();
    if (!std::cout) {
      std::fputs("posenc: cannot write to standard output\n", stderr);
      return posenc::cli::exit_invalid;
    }
    return status;
  } catch (const std::bad_alloc&) {
    std::fputs("posenc: out of memory\n", stderr);
  } catch (...) {
    std::fputs("posenc: internal error\n", stderr);
  }
  return posenc::cli::exit_invalid;
}
