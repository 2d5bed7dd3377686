// The two channels of a RoPE pair, restated from docs/formulas.md §1 for the tests (independent of
// the library's posenc::pair_channels, which they check): pair i of rotary_dim R is (2i, 2i + 1) in
// the interleaved layout (GPT-J, RoFormer) and (i, i + R/2) in the half layout (GPT-NeoX, HF
// rotate_half). Header-only and free of posenc, MPFR and RapidCheck (the cross builds use it).
#pragma once

#include <cstddef>

namespace posenc_test {

struct ExpectedChannels {
  std::size_t first;   // a: multiplied by cos, its partner by -sin
  std::size_t second;  // b
};

// Layout: posenc::rope_layout (compared with its enumerator `interleaved`).
template <class Layout>
constexpr ExpectedChannels expected_channels(Layout layout, std::size_t rotary_dim, std::size_t i) {
  if (layout == Layout::interleaved) return {2 * i, 2 * i + 1};
  return {i, i + rotary_dim / 2};
}

}  // namespace posenc_test
