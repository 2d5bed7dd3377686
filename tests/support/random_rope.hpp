// Random RoPE configurations for RapidCheck (tests/laws, tests/frequencies, tests/tables): even
// rotary_dim R up to 512, head_dim in [R, R + 64] (full rotary half of the time), at most
// max_head_dim; base from rope_base() (support/rope.hpp); both layouts; every scaling with random
// valid parameters, HF's defaults among them; a runtime sequence length for the scalings that read
// one (dynamic, longrope). Each generated config satisfies validate() == ok (the generator
// asserts it); invalid_rope() breaks at least one rule.
//
// longrope's factor lists are spans; a RandomRope owns their storage through shared pointers, so
// copies (RapidCheck copies values freely) keep the spans valid.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <posenc/spec/rope.hpp>

namespace posenc_test {

struct RandomRope {
  posenc::rope_config config;
  std::uint64_t seq_len = 0;  // HF's runtime sequence length (dynamic, longrope); 0 = none
  std::shared_ptr<const std::vector<double>> short_factor;
  std::shared_ptr<const std::vector<double>> long_factor;
};

// The widest head random_rope() draws: R = 512 and 64 channels past it.
inline constexpr std::uint32_t kMaxRandomHeadDim = 576;

// Scaling factor: exactly 1 sometimes, else log-uniform in [1, 64].
rc::Gen<double> scaling_factor();
// A context length, log-uniform in [2, 2^20].
rc::Gen<std::uint32_t> context_length();

// A random valid config with the given scaling type and head_dim <= max_head_dim (>= 2; >= 4 for
// ntk and dynamic, which need two pairs).
rc::Gen<RandomRope> random_rope(posenc::scaling_type type,
                                std::uint32_t max_head_dim = kMaxRandomHeadDim);
// Any scaling, "none" twice as often as each other (ntk and dynamic become linear where
// max_head_dim < 4).
rc::Gen<RandomRope> random_rope(std::uint32_t max_head_dim = kMaxRandomHeadDim);

// A config that breaks at least one rule (validate(c) != ok), starting from a valid one with
// head_dim <= 64; its longrope factor spans are empty.
rc::Gen<posenc::rope_config> invalid_rope();

// Every field that matters for the config's scaling, doubles in hex.
std::string describe(const posenc::rope_config& c, std::uint64_t seq_len = 0);
std::string describe(const RandomRope& r);
void showValue(const RandomRope& r, std::ostream& os);

}  // namespace posenc_test
