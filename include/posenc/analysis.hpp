// posenc analysis: the RoFormer decay bound and the laws every RoPE rotation is held to
// (orthogonality, norm preservation, relative-only dependence, decay), each a constexpr function
// usable in static_assert and at run time alike. See docs/laws.md.
#pragma once

#include <posenc/analysis/decay.hpp>
#include <posenc/analysis/laws.hpp>
