// posenc: positional encodings for transformer inference, computed and proven at compile time.
// Umbrella header.
#pragma once

#include <posenc/analysis.hpp>
#include <posenc/frequencies.hpp>
#include <posenc/kernels.hpp>
#include <posenc/math.hpp>
#include <posenc/spec.hpp>
#include <posenc/tables.hpp>
#include <posenc/version.hpp>
