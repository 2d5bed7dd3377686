// posenc specs: RoPE configurations and their validation.
#pragma once

#include <posenc/spec/alibi.hpp>
#include <posenc/spec/learned.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/spec/rope_spec.hpp>
#include <posenc/spec/sinusoidal.hpp>
#include <posenc/spec/validate.hpp>
