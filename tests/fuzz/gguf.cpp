// Fuzz harness: the metadata of a GGUF file (tools/cli/gguf.hpp) read and resolved as `--gguf`
// does. Expected outcomes: a configuration, or cli_error (one line, exit 1). A finding: any other
// exception, a sanitizer report, metadata beyond the reader's limits (more pairs than
// max_gguf_kv_count, a longer key, a longer array), or a resolved configuration that
// posenc::validate rejects.
#include <sstream>
#include <string>

#include <posenc/spec/rope.hpp>

#include "cli/draft.hpp"
#include "cli/error.hpp"
#include "cli/gguf.hpp"
#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace posenc::cli;
  try {
    std::istringstream in{std::string(posenc_fuzz::as_text(data, size))};
    const gguf_metadata m = read_gguf_metadata(in, "model.gguf", max_gguf_bytes, "64 MiB");
    if (m.version != 2 && m.version != 3) posenc_fuzz::finding("a version other than 2 or 3");
    if (m.kv.size() > max_gguf_kv_count) posenc_fuzz::finding("more pairs than the limit");
    for (const auto& [key, value] : m.kv) {
      if (key.size() > max_gguf_key_bytes) posenc_fuzz::finding("a key beyond the limit");
      if (value.type == gguf_value::kind::array && value.u > max_gguf_array_length)
        posenc_fuzz::finding("an array beyond the limit");
      if (value.type == gguf_value::kind::string && value.u <= max_gguf_kept_string &&
          value.s.size() != value.u)
        posenc_fuzz::finding("a kept string whose length is not its declared length");
    }
    config_keys keys;
    const resolved_config rc = resolve(draft_from_gguf(m, "model.gguf", &keys));
    if (posenc::validate(rc.config()) != posenc::rope_error::ok)
      posenc_fuzz::finding("resolve accepted a configuration that validate rejects");
    if (keys.used.size() + keys.unused.size() != m.kv.size())
      posenc_fuzz::finding("a key neither used nor unused");
  } catch (const cli_error&) {
    // The expected rejection of invalid input.
  }
  return 0;
}
