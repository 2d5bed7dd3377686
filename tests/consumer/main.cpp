// Built by run.sh against an installed posenc (pkg-config) and against posenc as a meson
// subproject. It must compile with -Wall -Wextra -Wpedantic -Wconversion -Wshadow -Werror and
// without any constexpr-limit flags.
#include <posenc/posenc.hpp>

static_assert(posenc::math::cos(0.0) == 1.0);

int main() {
  // volatile: evaluate at run time, not at compile time.
  volatile double base = 2.0;
  volatile double exponent = 10.0;
  return posenc::math::pow(base, exponent) == 1024.0 ? 0 : 1;
}
