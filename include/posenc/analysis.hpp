// posenc analysis: the RoFormer decay bound and the laws every RoPE rotation is held to
// (orthogonality, norm preservation, relative-only dependence, decay), each a constexpr function
// usable in static_assert and at run time alike (docs/laws.md); per-pair wavelengths and turns
// ("dials"), the YaRN/llama3 interpolation ramps, and the laws run on one configuration
// (docs/analysis.md).
#pragma once

#include <posenc/analysis/check.hpp>
#include <posenc/analysis/decay.hpp>
#include <posenc/analysis/dials.hpp>
#include <posenc/analysis/laws.hpp>
#include <posenc/analysis/ramp.hpp>
