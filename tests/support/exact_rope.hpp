// Exact theta_i and attention factor of every RoPE scaling in MPFR (docs/formulas.md §2, HF
// modeling_rope_utils.py), the expected values of tests/frequencies/exact.cpp (inv_freq and
// attention_factor) and of support/rotation_oracle (the kernels' rotation).
//
// Nothing here calls posenc code: the configuration is read field by field, and the pieces shared
// with other MPFR tests (theta_i, 2 pi, YaRN's range and ramp) come from support/exact.hpp.
// Intermediates are kept at kPrec + 64 bits; the last step rounds to the precision of `out`.
#pragma once

#include <cstdint>

#include <posenc/spec/rope.hpp>

#include "support/mpfr_ref.hpp"

namespace posenc_test {

// The exact theta_i of config c at HF sequence length seq_len (dynamic: the base grows with
// max(seq_len, max_position_embeddings); longrope: long factors when seq_len >
// original_max_position_embeddings; the other scalings ignore seq_len). near_discrete is set (never
// cleared) when a truncated YaRN correction dim lies within 2^-70 of an integer: the library's
// double-double dims might be floored or ceiled the other way.
void exact_rope_inv_freq(Mpfr& out, const posenc::rope_config& c, std::uint32_t i,
                         std::uint64_t seq_len, bool& near_discrete);

// The exact attention factor (yarn: 0.1 ln s + 1, DeepSeek's mscale ratio or the explicit value;
// longrope: sqrt(1 + ln s / ln L) or the explicit value; 1 otherwise).
void exact_rope_attention_factor(Mpfr& out, const posenc::rope_config& c);

}  // namespace posenc_test
