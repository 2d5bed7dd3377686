// Fuzz harness: a rope_config decoded from raw bytes (every double a raw bit pattern, so NaN, inf,
// subnormals and huge values all occur; head_dim at most 256), checked by posenc::validate; when
// valid, its cos/sin cache is built (runtime_rope_cache<float>) and a small tensor is rotated by
// the kernels at positions from the input, cached rows and rows on the fly alike. A finding: a
// sanitizer report, an exception, a kernel error for a valid call, or a non-finite cache entry,
// attention factor or output value of a configuration that validate accepted (issue 14: finite or
// an error).
#include <cmath>
#include <vector>

#include <posenc/frequencies/rope.hpp>
#include <posenc/kernels/rope.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/tables/runtime_rope_cache.hpp>

#include "fuzz.hpp"

namespace {
// Bounds of the work per input.
constexpr std::uint32_t max_head_dim = 256;
constexpr std::size_t cache_positions = 4;
constexpr std::size_t tokens = 3;
constexpr std::size_t heads = 2;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  posenc_fuzz::byte_reader r(data, size);
  posenc::rope_config c;
  c.head_dim = r.take<std::uint16_t>();
  c.rotary_dim = r.take<std::uint16_t>();
  c.base = r.take<double>();
  c.layout =
      (r.take<std::uint8_t>() & 1) ? posenc::rope_layout::interleaved : posenc::rope_layout::half;
  posenc::rope_scaling& s = c.scaling;
  s.type = static_cast<posenc::scaling_type>(r.take<std::uint8_t>() % 7);
  s.factor = r.take<double>();
  s.original_max_position_embeddings = r.take<std::uint32_t>();
  s.max_position_embeddings = r.take<std::uint32_t>();
  s.beta_fast = r.take<double>();
  s.beta_slow = r.take<double>();
  s.truncate = (r.take<std::uint8_t>() & 1) != 0;
  s.mscale = r.take<double>();
  s.mscale_all_dim = r.take<double>();
  s.attention_factor = r.take<double>();
  s.low_freq_factor = r.take<double>();
  s.high_freq_factor = r.take<double>();
  const std::uint64_t seq_len = r.take<std::uint32_t>();
  std::int64_t positions[tokens];
  for (auto& p : positions) p = r.take<std::uint32_t>();
  // LongRoPE's factors: a count each (usually R/2, which validate requires), then the values.
  const std::size_t n_short = r.take<std::uint8_t>();
  const std::size_t n_long = r.take<std::uint8_t>();
  std::vector<double> short_factor(n_short);
  std::vector<double> long_factor(n_long);
  for (auto& f : short_factor) f = r.take<double>();
  for (auto& f : long_factor) f = r.take<double>();
  s.short_factor = short_factor;
  s.long_factor = long_factor;

  // head_dim first: validate evaluates the frequency of every pair (its derived rules), which
  // for head_dim up to 65535 would take most of the fuzzing time on the same checks.
  if (c.head_dim > max_head_dim) return 0;
  if (posenc::validate(c) != posenc::rope_error::ok) return 0;

  if (!std::isfinite(posenc::attention_factor(c)))
    posenc_fuzz::finding("valid configuration, non-finite attention factor");
  for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i)
    if (!std::isfinite(posenc::inv_freq<double>(c, i, seq_len)))
      posenc_fuzz::finding("valid configuration, non-finite inv_freq");

  posenc::runtime_rope_cache<float> cache;
  if (posenc::runtime_rope_cache<float>::try_make(c, cache_positions, cache, seq_len) !=
      posenc::rope_error::ok)
    posenc_fuzz::finding("validate accepted what runtime_rope_cache rejects");
  for (std::size_t k = 0; k < cache.size(); ++k)
    if (!std::isfinite(cache.cos()[k]) || !std::isfinite(cache.sin()[k]))
      posenc_fuzz::finding("valid configuration, non-finite cache entry");

  // x in [-1, 1]: the output is bounded by sqrt(2) * attention_factor, finite when that is.
  std::vector<float> x(tokens * heads * c.head_dim);
  for (std::size_t k = 0; k < x.size(); ++k)
    x[k] = static_cast<float>(static_cast<int>(k % 17) - 8) / 8.0f;
  std::vector<float> y(x.size());
  const auto table = posenc::kernels::make_rope_table(cache.view(), c, seq_len);
  const auto e = posenc::kernels::apply_rope<float>(
      table, posenc::kernels::dense<const float>(x.data(), tokens, heads, c.head_dim),
      posenc::kernels::dense(y.data(), tokens, heads, c.head_dim),
      posenc::kernels::token_positions::of(std::span<const std::int64_t>(positions)));
  if (e != posenc::kernels::kernel_error::ok) posenc_fuzz::finding("kernel error on a valid call");
  for (const float v : y)
    if (!std::isfinite(v)) posenc_fuzz::finding("valid configuration, non-finite output");
  return 0;
}
