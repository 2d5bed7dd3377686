// posenc: positional encodings for transformer inference, computed and proven at compile time.
// Umbrella header.
#pragma once

#include <posenc/math.hpp>
#include <posenc/tables.hpp>
