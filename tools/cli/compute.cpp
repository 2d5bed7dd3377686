#include "cli/compute.hpp"

#include <posenc/frequencies/rope.hpp>
#include <posenc/math/angle.hpp>
#include <posenc/math/angle_grid.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/tables/rope_cache.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "cli/error.hpp"

namespace posenc::cli {

namespace {
// theta_i as double-double, checked to be finite in float32 and double.
math::dd checked_inv_freq(const rope_config& c, std::uint32_t i, std::uint64_t seq_len) {
  const math::dd t = inv_freq_dd(c, i, seq_len);
  const float f = math::round_to<float>(t);
  if (!std::isfinite(t.hi) || !std::isfinite(f) || !(t.hi >= 0.0))
    invalid("posenc: inv_freq of pair " + std::to_string(i) + " is not a finite float32");
  return t;
}
}  // namespace

void check_derived(const rope_config& c, std::uint64_t /*seq_len*/) {
  // The library's derived rules cover every seq_len (longrope's both factor lists, dynamic NTK at
  // its largest base), so the rules alone decide.
  require_ok(validate(c));
}

freqs_result compute_freqs(const rope_config& c, std::uint64_t seq_len) {
  freqs_result r;
  r.rotary_dim = c.rotary_dim;
  const std::uint32_t pairs = c.rotary_dim / 2;
  r.inv_freq.reserve(pairs);
  r.inv_freq_f64.reserve(pairs);
  for (std::uint32_t i = 0; i < pairs; ++i) {
    const math::dd t = checked_inv_freq(c, i, seq_len);
    r.inv_freq.push_back(math::round_to<float>(t));
    r.inv_freq_f64.push_back(math::round_to<double>(t));
  }
  r.attention_factor = attention_factor(c);
  return r;
}

table_result compute_table(const rope_config& c, position_range range, std::uint64_t seq_len) {
  table_result r;
  r.positions = range;
  r.pairs = c.rotary_dim / 2;
  const std::uint64_t count = range.last - range.first;
  const std::uint64_t entries = count * r.pairs;
  if (entries > max_table_entries)
    over_limit("the table", entries, "entries (positions x rotary_dim/2)", max_table_entries);

  const double af = attention_factor(c);
  if (!(af >= 0.0 && af <= 1e38))
    invalid("posenc: the attention factor is too large for float32 tables");

  // Every frequency checked before any work: finite in float32, and p * theta far below double
  // overflow.
  std::vector<math::dd> thetas;
  thetas.reserve(r.pairs);
  for (std::uint32_t i = 0; i < r.pairs; ++i) {
    thetas.push_back(checked_inv_freq(c, i, seq_len));
    if (thetas.back().hi * static_cast<double>(range.last) > 0x1p1000)
      invalid("posenc: the angle of pair " + std::to_string(i) + " overflows at these positions");
  }

  const auto n = static_cast<std::size_t>(count);
  const std::size_t stride = r.pairs;
  r.cos.resize(static_cast<std::size_t>(entries));
  r.sin.resize(static_cast<std::size_t>(entries));

  // All three ways below give math::sincos_of_product<float>'s bits. The table builders run from
  // position 0 at ~1/50 of the per-entry cost: the library's runtime cache builder when the range
  // starts at 0, a scratch run from 0 when the range starts close enough to 0, and the per-entry
  // path otherwise.
  if (range.first == 0) {
    require_ok(build_rope_cache<float>(c, n, r.cos.data(), r.sin.data(), seq_len));
    return r;
  }
  const std::uint64_t last = range.last;
  const bool via_scratch = last <= (std::uint64_t{1} << 21) && last <= 32 * count;
  std::vector<float> scratch_cos(via_scratch ? static_cast<std::size_t>(last) : 0);
  std::vector<float> scratch_sin(scratch_cos.size());
  const math::dd scale = attention_factor_dd(c);
  for (std::uint32_t i = 0; i < r.pairs; ++i) {
    float* cos_out = r.cos.data() + i;
    float* sin_out = r.sin.data() + i;
    if (via_scratch) {
      math::sincos_of_products<float>(thetas[i], scratch_cos.size(), scratch_cos.data(),
                                      scratch_sin.data(), 1, scale);
      const auto first = static_cast<std::size_t>(range.first);
      for (std::size_t k = 0; k < n; ++k) {
        cos_out[k * stride] = scratch_cos[first + k];
        sin_out[k * stride] = scratch_sin[first + k];
      }
    } else {
      for (std::size_t k = 0; k < n; ++k) {
        const auto v = math::sincos_of_product<float>(range.first + k, thetas[i], scale);
        cos_out[k * stride] = v.cos;
        sin_out[k * stride] = v.sin;
      }
    }
  }
  return r;
}

}  // namespace posenc::cli
