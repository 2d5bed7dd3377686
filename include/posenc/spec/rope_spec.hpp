// Deprecated: the rope_spec concept and checked_rope<S> are in posenc/spec/rope.hpp, next to
// rope_config, as every encoding's spec concept and checked form are next to its config.
#pragma once

#include <posenc/spec/rope.hpp>
