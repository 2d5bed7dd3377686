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
  if (c == nullptr && find_model_preset(name) != nullptr)
    usage_error("posenc: '" + printable(name) +
                "' is a model preset (layers, apply, entropy); this command takes the presets " +
                preset_names_joined(", "));
  if (c == nullptr) usage_error("posenc: " + unknown_preset_message(printable(name)));
  return draft_from_config(*c);
}

std::string preset_list() {
  return preset_names_joined(", ");
}

std::string model_preset_list() {
  return model_preset_names_joined(", ");
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

std::string model_preset_list() {
  return {};
}
#endif

std::string preset_help() {
  if (!presets_available()) return {};
  return "Presets: " + preset_list() + "\nModel presets: " + model_preset_list() +
         "\n(--preset NAME: a preset for every RoPE command; a model preset, with its per-layer "
         "plan,\nfor layers, and for apply and entropy)\n";
}

}  // namespace posenc::cli
