// --preset NAME: the configurations of published models (posenc/spec/presets.hpp), looked up
// by name through posenc/spec/select.hpp when the build has Boost.Hana.
#pragma once

#include <string>
#include <string_view>

#include "cli/draft.hpp"

namespace posenc::cli {

// Whether this build has the presets (they need Boost.Hana).
bool presets_available();

// The preset's configuration as a draft (every field set, so flags override field by field).
// Throws cli_error (exit 2) for an unknown name, listing the known ones.
config_draft preset_draft(std::string_view name);

// The names of the 1-D presets (posenc::presets::all, every RoPE command) and of the model
// presets (posenc::presets::models: layers, apply and entropy), each joined by ", ", from the
// library's lists (posenc/spec/select.hpp), so that help and completion follow them; empty when
// presets are not available.
std::string preset_list();
std::string model_preset_list();

// The help's lines about them: "Presets: ...", "Model presets: ..." and what takes which (empty
// when presets are not available). tools/completion/posenc.bash reads the first two.
std::string preset_help();

}  // namespace posenc::cli
