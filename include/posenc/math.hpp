// posenc constexpr elementary functions: exp, log, pow, sin, cos, sincos in double and float,
// their double-double forms, and cos/sin of p * theta rounded once. No <cmath> needed.
#pragma once

#include <posenc/math/angle.hpp>
#include <posenc/math/angle_grid.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/exp.hpp>
#include <posenc/math/log.hpp>
#include <posenc/math/pow.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/math/trig.hpp>
