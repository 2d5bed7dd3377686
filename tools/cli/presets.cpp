#include "cli/presets.hpp"

#include <string>

#include "cli/error.hpp"

#if POSENC_CLI_PRESETS
#include <posenc/spec/select.hpp>
#endif

namespace posenc::cli {

#if POSENC_CLI_PRESETS
bool presets_available() {
  return true;
}

config_draft preset_draft(std::string_view name) {
  const rope_config* c = find_preset(name);
  if (c == nullptr) usage_error("posenc: " + unknown_preset_message(printable(name)));
  return draft_from_config(*c);
}

std::string preset_list() {
  return preset_names_joined(", ");
}
#else
bool presets_available() {
  return false;
}

config_draft preset_draft(std::string_view) {
  usage_error("posenc: this build has no presets (they need Boost.Hana at build time)");
}

std::string preset_list() {
  return {};
}
#endif

}  // namespace posenc::cli
