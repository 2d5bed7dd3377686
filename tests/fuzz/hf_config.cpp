// Fuzz harness: a Hugging Face config.json (tools/cli/hf_config.hpp) read and resolved as
// `--hf-config` does. Expected outcomes: a configuration, or cli_error (one line, exit 1). A
// finding: any other exception, a sanitizer report, or a resolved configuration that
// posenc::validate rejects (the tool must not accept what the library refuses).
#include <exception>
#include <string_view>

#include <posenc/spec/rope.hpp>

#include "cli/draft.hpp"
#include "cli/error.hpp"
#include "cli/hf_config.hpp"
#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const posenc::cli::config_draft d =
        posenc::cli::parse_hf_config(posenc_fuzz::as_text(data, size), "config.json");
    const posenc::cli::resolved_config rc = posenc::cli::resolve(d);
    if (posenc::validate(rc.config()) != posenc::rope_error::ok)
      posenc_fuzz::finding("resolve accepted a configuration that validate rejects");
  } catch (const posenc::cli::cli_error&) {
    // The expected rejection of invalid input.
  }
  return 0;
}
