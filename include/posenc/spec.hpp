// posenc specs: RoPE configurations and their validation.
#pragma once

#include <posenc/spec/rope.hpp>
#include <posenc/spec/rope_spec.hpp>
#include <posenc/spec/validate.hpp>
