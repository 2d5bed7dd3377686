// Runs a program with arguments and collects its exit status, stdout and stderr (POSIX).
#pragma once

#include <string>
#include <vector>

namespace posenc_test {

struct process_result {
  int status = -1;  // exit status, or -1 if it did not exit normally
  std::string out;
  std::string err;
};

process_result run_process(const std::string& program, const std::vector<std::string>& args);

// The path of the posenc binary under test (environment variable POSENC_CLI).
std::string posenc_cli_path();

}  // namespace posenc_test
