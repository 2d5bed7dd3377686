// Shared by the law tests (rotation.cpp, decay.cpp): the number of cases per law, the frequencies
// of a random configuration, and the configuration the published numbers are about.
#pragma once

#include <posenc/analysis.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/random_rope.hpp"

namespace posenc_test::laws {

// Law cases per property: POSENC_LAW_CASES (default 200), spread over RapidCheck's 100 cases as
// batches of max(1, ceil(N / 100)).
inline std::size_t law_batch() {
  static const std::size_t batch = [] {
    const char* s = std::getenv("POSENC_LAW_CASES");
    long long n = 200;
    if (s != nullptr && *s != '\0') n = std::strtoll(s, nullptr, 10);
    if (n < 100) n = 100;
    return static_cast<std::size_t>((n + 99) / 100);
  }();
  return batch;
}

// theta_i of every pair (the library's double-double values: the laws are about the rotation
// built from them, not about their accuracy, which tests/frequencies checks).
inline std::vector<posenc::math::dd> thetas_of(const RandomRope& r) {
  std::vector<posenc::math::dd> t(r.config.rotary_dim / 2);
  for (std::uint32_t i = 0; i < t.size(); ++i) t[i] = posenc::inv_freq_dd(r.config, i, r.seq_len);
  return t;
}

// Llama-2: d = 128, base 10^4, half layout (the configuration of docs/formulas.md §8).
inline constexpr posenc::rope_config kLlama{128, 128, 10000.0, posenc::rope_layout::half};

// "1.234e-05".
inline std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", x);
  return buf;
}

}  // namespace posenc_test::laws
