// What the tests of the posenc tool share: running it in process (posenc::cli::run) or as a
// program (run_process, in spawn.cpp), the error a call throws, the configuration that flags
// describe, the files in tests/tools/data, bit patterns and lines of output, and the main() of the
// programs that run the binary against a golden file.
#pragma once

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

#include "cli/draft.hpp"
#include "cli/error.hpp"
#include "cli/options.hpp"
#include "cli/run.hpp"

namespace posenc_test {

// ---------------------------------------------------------------------------------------------
// The tool in process: exit status, standard output and standard error of posenc::cli::run.

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

// The message of the cli_error that f() throws, "" when it throws none. A cli_error with an exit
// status other than `status` becomes a std::logic_error naming both, which fails the test.
template <class F>
std::string cli_error_message(int status, F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const posenc::cli::cli_error& e) {
    if (e.exit_status() != status)
      throw std::logic_error("exit status " + std::to_string(e.exit_status()) + " instead of " +
                             std::to_string(status) + ": " + e.what());
    return e.what();
  }
  return "";
}

// The configuration of `posenc freqs FLAGS...`, as the tool resolves it.
inline posenc::cli::resolved_config config_of(const std::vector<std::string>& flags) {
  std::vector<std::string> a{"freqs"};
  a.insert(a.end(), flags.begin(), flags.end());
  const std::vector<std::string_view> args(a.begin(), a.end());
  return posenc::cli::configure(posenc::cli::parse_args(args));
}

// ---------------------------------------------------------------------------------------------
// The tool as a program (spawn.cpp, POSIX).

struct process_result {
  int status = -1;  // exit status, or -1 if it did not exit normally
  std::string out;
  std::string err;
};

// Runs `program` with `args` and collects its exit status, stdout and stderr.
process_result run_process(const std::string& program, const std::vector<std::string>& args);

// The path of the posenc binary under test (environment variable POSENC_CLI).
std::string posenc_cli_path();

// ---------------------------------------------------------------------------------------------
// Files, bits and lines.

// tests/tools/data/NAME (meson.build passes the directory as POSENC_TOOLS_DATA).
inline std::string tools_data(std::string_view name) {
  return std::string(POSENC_TOOLS_DATA) + "/" + std::string(name);
}

inline std::uint32_t bits(float x) {
  return std::bit_cast<std::uint32_t>(x);
}
inline std::uint64_t bits(double x) {
  return std::bit_cast<std::uint64_t>(x);
}

// A float as the tool prints it: 9 significant digits, which read back to the same bits.
inline std::string f32_text(float v) {
  char b[40];
  const auto r = std::to_chars(b, b + sizeof b, v, std::chars_format::general, 9);
  return {b, r.ptr};
}

inline std::size_t count_lines(std::string_view s) {
  std::size_t n = 0;
  for (char ch : s) n += ch == '\n';
  return n;
}

inline std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// A path in the temporary directory for `name`, unique to this process and call.
inline std::string scratch_path(const std::string& name) {
  static int n = 0;
  return (std::filesystem::temp_directory_path() /
          ("posenc_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++) + "_" + name))
      .string();
}

// A file holding `bytes` at scratch_path(name) (the tool tells .npy from JSON by the name);
// removed at scope exit.
class scratch_file {
 public:
  explicit scratch_file(const std::string& bytes, const std::string& name = "t.json")
      : path_(scratch_path(name)) {
    std::ofstream(path_, std::ios::binary) << bytes;
  }
  ~scratch_file() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  scratch_file(const scratch_file&) = delete;
  scratch_file& operator=(const scratch_file&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// An output without the echo of its configuration (docs/cli.md, "What was computed"): the
// leading "# " lines of CSV and text (and the blank line after them in text), or the first line
// of a JSON object, {"config": {...},\n. What the echo says is tested in echo.cpp.
inline std::string without_echo(const std::string& s) {
  if (s.starts_with("{\"config\": ")) {
    const std::size_t nl = s.find('\n');
    return nl == std::string::npos ? s : "{" + s.substr(nl + 1);
  }
  std::size_t at = 0;
  while (s.compare(at, 2, "# ") == 0) {
    const std::size_t nl = s.find('\n', at);
    if (nl == std::string::npos) return s;
    at = nl + 1;
  }
  if (at > 0 && s.compare(at, 1, "\n") == 0) ++at;
  return s.substr(at);
}

// `s` cut at every `sep` (n separators give n + 1 fields).
inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

// ---------------------------------------------------------------------------------------------
// main() of a program that runs the binary against a golden file:
//   PROGRAM POSENC_BINARY GOLDEN_JSON SCRATCH_DIR
// Another argument count: the usage on stderr, exit 2. A golden file that load(path) cannot
// read: "FAIL <why>", exit 1 (a missing file fails, it never passes or skips). Otherwise
// run(binary, golden, scratch_dir) returns the number of failures, which is printed; exit 0 when
// there are none.
template <class Load, class Run>
int golden_main(int argc, char** argv, Load load, Run run) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s POSENC_BINARY GOLDEN_JSON SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  decltype(load(argv[2])) golden;
  try {
    golden = load(argv[2]);
  } catch (const std::exception& e) {
    std::printf("FAIL %s\n", e.what());
    return 1;
  }
  const int failures = run(std::string(argv[1]), golden, std::string(argv[3]));
  std::printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace posenc_test
