// The one error type of the command-line tool: a one-line message for stderr and the exit status.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace posenc::cli {

// Exit statuses: 0 success, 1 an invalid configuration or unreadable input, or a failure while
// running (output not written, out of memory), 2 a usage error (unknown flag, malformed value,
// missing command). docs/cli.md, "Errors".
inline constexpr int exit_ok = 0;
inline constexpr int exit_invalid = 1;
inline constexpr int exit_usage = 2;

class cli_error : public std::runtime_error {
 public:
  cli_error(const std::string& message, int exit_status)
      : std::runtime_error(message), status_(exit_status) {}
  int exit_status() const { return status_; }

 private:
  int status_;
};

// A usage error (exit 2) and an invalid-input error (exit 1); `message` starts with "posenc: ".
[[noreturn]] inline void usage_error(const std::string& message) {
  throw cli_error(message, exit_usage);
}
[[noreturn]] inline void invalid(const std::string& message) {
  throw cli_error(message, exit_invalid);
}

// invalid() with the library's message for an error code other than `ok` (posenc::validate,
// the table builders, the kernels; `message` is found next to the code's enum).
template <class Error>
void require_ok(Error e) {
  if (e != Error::ok) invalid(message(e));
}

// The result of one call would exceed its limit: "posenc: WHAT would have COUNT UNITS; at most
// LIMIT per call".
[[noreturn]] inline void over_limit(std::string_view what, std::uint64_t count,
                                    std::string_view units, std::uint64_t limit) {
  invalid("posenc: " + std::string(what) + " would have " + std::to_string(count) + " " +
          std::string(units) + "; at most " + std::to_string(limit) + " per call");
}

// Text from the user (a flag name, a file name, a preset name) made safe to echo inside a one-line
// message: control characters become '?', and very long text is cut.
inline std::string printable(std::string_view text) {
  constexpr std::size_t max_len = 200;
  std::string out;
  for (char c : text.substr(0, max_len)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? '?' : c;
  }
  if (text.size() > max_len) out += "...";
  return out;
}

}  // namespace posenc::cli
