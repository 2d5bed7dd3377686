#include "support/random_rope.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <posenc/spec/rope.hpp>

#include "support/gen.hpp"
#include "support/mpfr_ref.hpp"
#include "support/rope.hpp"

namespace posenc_test {

rc::Gen<double> scaling_factor() {
  return rc::gen::weightedOneOf<double>({
      {1, rc::gen::just(1.0)},
      {6, rc::gen::map(uniform(0.0, 6.0), [](double e) { return std::exp2(e); })},
  });
}

rc::Gen<std::uint32_t> context_length() {
  return rc::gen::map(uniform(1.0, 20.0),
                      [](double e) { return static_cast<std::uint32_t>(std::exp2(e)); });
}

namespace {

// 0 one time in three, else uniform in [0.05, 2] (DeepSeek's mscale and mscale_all_dim are set
// independently; HF uses their ratio only when both are).
double random_mscale() {
  return *int_in(0, 2) == 0 ? 0.0 : *uniform(0.05, 2.0);
}

// An explicit attention factor one time in four, else 0 (the scaling's own).
double random_attention_factor() {
  return *int_in(0, 3) == 0 ? *uniform(0.5, 2.0) : 0.0;
}

}  // namespace

rc::Gen<RandomRope> random_rope(posenc::scaling_type type, std::uint32_t max_head_dim) {
  using posenc::scaling_type;
  return rc::gen::exec([type, max_head_dim] {
    RandomRope r;
    posenc::rope_config& c = r.config;
    const std::int64_t min_half =
        (type == scaling_type::ntk || type == scaling_type::dynamic) ? 2 : 1;
    const std::int64_t max_half = std::min<std::int64_t>(256, max_head_dim / 2);
    RC_ASSERT(min_half <= max_half);
    c.rotary_dim = static_cast<std::uint32_t>(2 * *int_in(min_half, max_half));
    const std::int64_t max_extra = std::min<std::int64_t>(64, max_head_dim - c.rotary_dim);
    const bool partial = max_extra > 0 && *rc::gen::arbitrary<bool>();
    c.head_dim = c.rotary_dim + (partial ? static_cast<std::uint32_t>(*int_in(1, max_extra)) : 0u);
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
        r.seq_len = *uint_in(0, 4 * std::uint64_t{max_pos});
        break;
      }
      case scaling_type::yarn: {
        // HF's defaults (beta_fast 32, beta_slow 1) half of the time.
        const bool defaults = *rc::gen::arbitrary<bool>();
        const double beta_slow = defaults ? 1.0 : *uniform(0.25, 4.0);
        const double beta_fast = defaults ? 32.0 : beta_slow * *uniform(1.01, 64.0);
        const bool truncate = *rc::gen::arbitrary<bool>();
        const double mscale = random_mscale();
        const double mscale_all_dim = random_mscale();
        c.scaling = posenc::scaling::yarn(factor, *context_length(), beta_fast, beta_slow, truncate,
                                          mscale, mscale_all_dim, random_attention_factor());
        break;
      }
      case scaling_type::llama3: {
        const double low = *uniform(0.25, 4.0);
        c.scaling =
            posenc::scaling::llama3(factor, low, low * *uniform(1.01, 16.0), *context_length());
        break;
      }
      case scaling_type::longrope: {
        const std::size_t half = c.rotary_dim / 2;
        auto factors = [half] {
          auto v = std::make_shared<std::vector<double>>(half);
          for (double& x : *v) x = *uniform(0.5, 64.0);
          return std::shared_ptr<const std::vector<double>>(std::move(v));
        };
        r.short_factor = factors();
        r.long_factor = factors();
        const std::uint32_t orig = *context_length();
        const std::uint32_t max_pos = orig * static_cast<std::uint32_t>(*int_in(1, 64));
        c.scaling = posenc::scaling::longrope(*r.short_factor, *r.long_factor, orig, max_pos,
                                              random_attention_factor());
        r.seq_len = *uint_in(0, 2 * std::uint64_t{orig});
        break;
      }
    }
    RC_ASSERT(posenc::validate(c) == posenc::rope_error::ok);
    return r;
  });
}

rc::Gen<RandomRope> random_rope(std::uint32_t max_head_dim) {
  using posenc::scaling_type;
  // ntk and dynamic need two pairs: linear instead where the head has room for one only.
  const auto of = [max_head_dim](scaling_type t) {
    const bool one_pair = t == scaling_type::ntk || t == scaling_type::dynamic;
    return random_rope(one_pair && max_head_dim < 4 ? scaling_type::linear : t, max_head_dim);
  };
  return rc::gen::weightedOneOf<RandomRope>({
      {2, of(scaling_type::none)},
      {1, of(scaling_type::linear)},
      {1, of(scaling_type::ntk)},
      {1, of(scaling_type::dynamic)},
      {1, of(scaling_type::yarn)},
      {1, of(scaling_type::llama3)},
      {1, of(scaling_type::longrope)},
  });
}

rc::Gen<posenc::rope_config> invalid_rope() {
  return rc::gen::exec([] {
    posenc::rope_config c = (*random_rope(64)).config;
    c.scaling.short_factor = {};  // no storage behind the spans after this generator returns
    c.scaling.long_factor = {};
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    constexpr double inf = std::numeric_limits<double>::infinity();
    switch (*int_in(0, 9)) {
      case 0:
        c.head_dim = 0;
        break;
      case 1:
        c.rotary_dim = c.rotary_dim + 1;
        break;  // odd
      case 2:
        c.rotary_dim = c.head_dim + 2;
        break;  // wider than the head
      case 3:
        c.rotary_dim = 0;
        break;
      case 4:
        c.base = *rc::gen::element(1.0, 0.5, -10000.0, 0.0, nan, inf);
        break;
      case 5:
        c.scaling = posenc::scaling::linear(*rc::gen::element(0.5, 0.0, nan, inf));
        break;
      case 6:
        c.scaling = posenc::scaling::yarn(4.0, 0);
        break;
      case 7:
        c.scaling = posenc::scaling::yarn(4.0, 4096, 1.0, 32.0);
        break;  // beta_fast < slow
      case 8:
        c.scaling = posenc::scaling::dynamic(2.0, 0);
        break;
      default:
        c.scaling = posenc::scaling::longrope({}, {}, 4096, 8192);  // no factors for R/2 pairs
        break;
    }
    return c;  // every case above breaks a rule (checked by the tests)
  });
}

std::string describe(const posenc::rope_config& c, std::uint64_t seq_len) {
  using posenc::scaling_type;
  const posenc::rope_scaling& s = c.scaling;
  std::string out = "head_dim=" + std::to_string(c.head_dim) +
                    " rotary_dim=" + std::to_string(c.rotary_dim) + " base=" + hex(c.base) +
                    (c.layout == posenc::rope_layout::half ? " half" : " interleaved") + " " +
                    posenc::scaling_name(s.type);
  if (s.type != scaling_type::none) out += " factor=" + hex(s.factor);
  if (s.original_max_position_embeddings != 0)
    out += " orig=" + std::to_string(s.original_max_position_embeddings);
  if (s.max_position_embeddings != 0)
    out += " max_pos=" + std::to_string(s.max_position_embeddings);
  if (s.type == scaling_type::yarn)
    out += " beta_fast=" + hex(s.beta_fast) + " beta_slow=" + hex(s.beta_slow) +
           " truncate=" + (s.truncate ? "1" : "0") + " mscale=" + hex(s.mscale) + "/" +
           hex(s.mscale_all_dim);
  if (s.type == scaling_type::yarn || s.type == scaling_type::longrope)
    out += " attention_factor=" + hex(s.attention_factor);
  if (s.type == scaling_type::llama3)
    out += " low=" + hex(s.low_freq_factor) + " high=" + hex(s.high_freq_factor);
  if (seq_len != 0) out += " seq_len=" + std::to_string(seq_len);
  return out;
}

std::string describe(const RandomRope& r) {
  return describe(r.config, r.seq_len);
}

void showValue(const RandomRope& r, std::ostream& os) {
  os << describe(r);
}

}  // namespace posenc_test
