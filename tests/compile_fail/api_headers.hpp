// The library headers of misuse.cpp and table_cases.cpp, precompiled once per GCC build
// (meson.build) and put in front of each of their compiles with -include: parsing them was about
// 1.0 of misuse.cpp's 1.6 CPU s per compile, and 0.3 of table_cases.cpp's 0.9 s. The cases still
// include what they use; what they must and must not compile does not depend on it. No #pragma
// once: a precompiled header's main file.
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <posenc/kernels.hpp>
#include <posenc/kernels/dispatch.hpp>
#include <posenc/spec/attention_temperature.hpp>
#include <posenc/tables.hpp>
