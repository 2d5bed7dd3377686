// Deprecated: the RoPE rules (rope_error, message, satisfies, all_rope_rules, validate) are in
// posenc/spec/rope.hpp, next to rope_config, as every encoding's rules are next to its config.
#pragma once

#include <posenc/spec/rope.hpp>
