// Deprecated: this header is posenc/spec/select.hpp (select_preset, select_head_dim, find_preset);
// "dispatch" now means only the choice of an ISA at run time (posenc/kernels/dispatch.hpp).
#pragma once

#include <posenc/spec/select.hpp>
