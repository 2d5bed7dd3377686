// The library headers of the rule cases (broken_*.hpp), precompiled once per GCC build
// (meson.build) and put in front of every compile of check_rule.cpp with -include: about 0.45 of
// the 0.9 CPU s of each of those compiles was parsing them. The cases still include what they use;
// what they must and must not compile does not depend on it. No #pragma once: a precompiled
// header's main file.
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <span>
#include <string_view>
#include <utility>

#include <posenc/spec/alibi.hpp>
#include <posenc/spec/attention_temperature.hpp>
#include <posenc/spec/learned.hpp>
#include <posenc/spec/mrope.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/spec/sinusoidal.hpp>
#include <posenc/spec/t5.hpp>
