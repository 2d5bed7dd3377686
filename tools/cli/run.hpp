// The whole tool behind main(): parse, resolve, compute, write. Kept apart from main() so that
// tests run it in-process with string streams.
#pragma once

#include <ostream>
#include <span>
#include <string_view>

#include "cli/draft.hpp"
#include "cli/options.hpp"

namespace posenc::cli {

// The configuration an invocation describes: its --preset or --hf-config, with the config flags
// laid over it, resolved and validated. Throws cli_error.
resolved_config configure(const invocation& inv);

// Runs `posenc args...` (args excludes argv[0]): results to `out`; on error one line to `err`,
// nothing to `out`, and a non-zero return (1 invalid input, 2 usage error).
int run(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

}  // namespace posenc::cli
