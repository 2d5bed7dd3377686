// posenc frequencies: inv_freq and attention_factor for every RoPE scaling.
#pragma once

#include <posenc/frequencies/rope.hpp>
