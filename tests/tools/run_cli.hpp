// Runs the posenc tool in process (posenc::cli::run, tools/cli/run.hpp) on the given arguments and
// captures its exit status, standard output and standard error.
#pragma once

#include <initializer_list>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/run.hpp"

namespace posenc_test {

struct cli_result {
  int status = 0;
  std::string out;
  std::string err;
};

inline cli_result run_cli(std::span<const std::string_view> args) {
  std::ostringstream out, err;
  const int status = posenc::cli::run(args, out, err);
  return {status, out.str(), err.str()};
}
inline cli_result run_cli(std::initializer_list<std::string_view> args) {
  return run_cli(std::span<const std::string_view>(args.begin(), args.size()));
}
inline cli_result run_cli(const std::vector<std::string_view>& args) {
  return run_cli(std::span<const std::string_view>(args));
}
inline cli_result run_cli(const std::vector<std::string>& args) {
  const std::vector<std::string_view> views(args.begin(), args.end());
  return run_cli(std::span<const std::string_view>(views));
}

}  // namespace posenc_test
