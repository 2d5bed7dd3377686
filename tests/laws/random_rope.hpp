// Random valid RoPE configurations for the law tests (tests/laws) and the scaling properties
// (tests/frequencies): even rotary_dim R in [2, 512], head_dim in [R, R + 64], base in [2, 10^7]
// (support/rope.hpp), both layouts, and every scaling with valid random parameters. Each
// generated config satisfies validate() == ok (the generators assert it).
//
// longrope's factor lists are spans; a RandomRope owns their storage through shared pointers, so
// copies (RapidCheck copies values freely) keep the spans valid.
#pragma once

#include <rapidcheck.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <posenc/spec/rope.hpp>
#include <posenc/spec/validate.hpp>

#include "support/gen.hpp"
#include "support/mpfr_ref.hpp"
#include "support/rope.hpp"

namespace posenc_test {

struct RandomRope {
  posenc::rope_config config;
  std::uint64_t seq_len = 0;  // HF's runtime sequence length (dynamic, longrope); 0 = none
  std::shared_ptr<const std::vector<double>> short_factor;
  std::shared_ptr<const std::vector<double>> long_factor;
};

// Scaling factor: exactly 1 sometimes, else log-uniform in [1, 64].
inline rc::Gen<double> scaling_factor() {
  return rc::gen::weightedOneOf<double>({
      {1, rc::gen::just(1.0)},
      {6, rc::gen::map(uniform(0.0, 6.0), [](double e) { return std::exp2(e); })},
  });
}

// A context length, log-uniform in [2, 2^20].
inline rc::Gen<std::uint32_t> context_length() {
  return rc::gen::map(uniform(1.0, 20.0),
                      [](double e) { return static_cast<std::uint32_t>(std::exp2(e)); });
}

// A random valid config with the given scaling type.
inline rc::Gen<RandomRope> random_rope(posenc::scaling_type type) {
  using posenc::scaling_type;
  return rc::gen::exec([type] {
    RandomRope r;
    posenc::rope_config& c = r.config;
    const std::int64_t min_half =
        (type == scaling_type::ntk || type == scaling_type::dynamic) ? 2 : 1;
    c.rotary_dim = static_cast<std::uint32_t>(2 * *int_in(min_half, 256));
    const bool partial = *rc::gen::arbitrary<bool>();
    c.head_dim = c.rotary_dim + (partial ? static_cast<std::uint32_t>(*int_in(1, 64)) : 0u);
    c.base = *rope_base();
    c.layout =
        *rc::gen::arbitrary<bool>() ? posenc::rope_layout::half : posenc::rope_layout::interleaved;
    const double factor = *scaling_factor();
    switch (type) {
      case scaling_type::none:
        c.scaling = posenc::scaling::none();
        break;
      case scaling_type::linear:
        c.scaling = posenc::scaling::linear(factor);
        break;
      case scaling_type::ntk:
        c.scaling = posenc::scaling::ntk(factor);
        break;
      case scaling_type::dynamic: {
        const std::uint32_t max_pos = *context_length();
        c.scaling = posenc::scaling::dynamic(factor, max_pos);
        r.seq_len = *uint_in(0, 4ull * max_pos);
        break;
      }
      case scaling_type::yarn: {
        const double beta_slow = *uniform(0.25, 4.0);
        const double beta_fast = beta_slow * *uniform(1.01, 64.0);
        const bool explicit_attention = *int_in(0, 3) == 0;
        const bool deepseek = *int_in(0, 2) == 0;
        c.scaling = posenc::scaling::yarn(
            factor, *context_length(), beta_fast, beta_slow, *rc::gen::arbitrary<bool>(),
            deepseek ? *uniform(0.1, 2.0) : 0.0, deepseek ? *uniform(0.1, 2.0) : 0.0,
            explicit_attention ? *uniform(0.5, 2.0) : 0.0);
        break;
      }
      case scaling_type::llama3: {
        const double low = *uniform(0.5, 4.0);
        c.scaling =
            posenc::scaling::llama3(factor, low, low * *uniform(1.01, 16.0), *context_length());
        break;
      }
      case scaling_type::longrope: {
        const std::size_t half = c.rotary_dim / 2;
        auto short_f = std::make_shared<std::vector<double>>(half);
        auto long_f = std::make_shared<std::vector<double>>(half);
        for (std::size_t i = 0; i < half; ++i) {
          (*short_f)[i] = *uniform(0.5, 4.0);
          (*long_f)[i] = *uniform(1.0, 64.0);
        }
        r.short_factor = short_f;
        r.long_factor = long_f;
        const std::uint32_t orig = *context_length();
        const std::uint32_t max_pos = orig * static_cast<std::uint32_t>(*int_in(1, 64));
        const bool explicit_attention = *int_in(0, 3) == 0;
        c.scaling = posenc::scaling::longrope(*short_f, *long_f, orig, max_pos,
                                              explicit_attention ? *uniform(0.5, 2.0) : 0.0);
        r.seq_len = *uint_in(0, 2ull * orig);
        break;
      }
    }
    RC_ASSERT(posenc::validate(c) == posenc::rope_error::ok);
    return r;
  });
}

// Any scaling, "none" twice as often as each other.
inline rc::Gen<RandomRope> random_rope() {
  using posenc::scaling_type;
  return rc::gen::weightedOneOf<RandomRope>({
      {2, random_rope(scaling_type::none)},
      {1, random_rope(scaling_type::linear)},
      {1, random_rope(scaling_type::ntk)},
      {1, random_rope(scaling_type::dynamic)},
      {1, random_rope(scaling_type::yarn)},
      {1, random_rope(scaling_type::llama3)},
      {1, random_rope(scaling_type::longrope)},
  });
}

using posenc::scaling_name;

inline std::string describe(const RandomRope& r) {
  const posenc::rope_config& c = r.config;
  const posenc::rope_scaling& s = c.scaling;
  std::string out = "head_dim=" + std::to_string(c.head_dim) +
                    " rotary_dim=" + std::to_string(c.rotary_dim) + " base=" + hex(c.base) +
                    (c.layout == posenc::rope_layout::half ? " half" : " interleaved") + " " +
                    scaling_name(s.type);
  if (s.type != posenc::scaling_type::none) out += " factor=" + hex(s.factor);
  if (s.original_max_position_embeddings != 0)
    out += " orig=" + std::to_string(s.original_max_position_embeddings);
  if (s.max_position_embeddings != 0)
    out += " max_pos=" + std::to_string(s.max_position_embeddings);
  if (s.type == posenc::scaling_type::yarn)
    out += " beta_fast=" + hex(s.beta_fast) + " beta_slow=" + hex(s.beta_slow) +
           " truncate=" + (s.truncate ? "1" : "0") + " mscale=" + hex(s.mscale) + "/" +
           hex(s.mscale_all_dim) + " attention_factor=" + hex(s.attention_factor);
  if (s.type == posenc::scaling_type::llama3)
    out += " low=" + hex(s.low_freq_factor) + " high=" + hex(s.high_freq_factor);
  if (r.seq_len != 0) out += " seq_len=" + std::to_string(r.seq_len);
  return out;
}

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

}  // namespace posenc_test
