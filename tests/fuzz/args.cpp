// Fuzz harness: the command line of `posenc` (tools/cli/options.hpp), every subcommand. The input
// split at NUL bytes is argv[1..]. It is parsed (parse_args), and the configuration it describes
// is resolved (configure) unless it names a file (--hf-config, --gguf, --input); --help prints the
// usage (`posenc help CMD`: that command's).
// No command runs, so nothing is written and no work grows with a flag's value. Expected outcomes:
// an invocation, or cli_error. A finding: any other exception or a sanitizer report.
#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "cli/error.hpp"
#include "cli/options.hpp"
#include "cli/run.hpp"
#include "cli/usage.hpp"
#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace posenc::cli;
  const std::string_view text = posenc_fuzz::as_text(data, size);
  std::vector<std::string_view> args;
  std::size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const std::size_t end = std::min(text.find('\0', start), text.size());
    args.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  try {
    const invocation inv = parse_args(std::span<const std::string_view>(args));
    if (inv.help) {
      // posenc help CMD / CMD --help, or the whole usage.
      const std::string help =
          inv.cmd != command::none ? command_help(command_of(inv.cmd)) : usage_text();
      if (help.empty()) posenc_fuzz::finding("empty usage text");
      return 0;
    }
    if (inv.version || inv.hf_config || inv.gguf || inv.input) return 0;
    static_cast<void>(configure(inv));
  } catch (const cli_error&) {
    // The expected rejection of invalid input.
  }
  return 0;
}
