// Adding the T5 relative position bias to a block of attention scores, the scalar reference. The
// block is [heads, q_len, k_len] (key index contiguous, head and query strides explicit); query i
// sits at position q_offset + i and key j at k_offset + j. The bias comes as t5_bias_view: per
// head, the bias of each relative position rel = k_pos - q_pos in [-max_distance, max_distance]
// (tables/t5.hpp, build_t5_relative_bias: HF's compute_bias for those distances); a farther key
// takes the bias of +-max_distance, where the buckets have saturated (formulas.md §13). HF adds
// position_bias to the scores (T5Attention.forward, scores += position_bias_masked); so does this:
// score + bias in float, bf16/f16 scores widened, added to and rounded once. The SIMD kernel
// (simd/t5.hpp) does the same single addition, so it equals this bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

#include <posenc/kernels/error.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/spec/t5.hpp>

namespace posenc::kernels {

// Per-head bias by relative position: data[h * (2 max_distance + 1) + rel + max_distance].
struct t5_bias_view {
  const float* data = nullptr;
  std::size_t heads = 0;
  std::uint32_t max_distance = 0;

  constexpr std::size_t distances() const { return std::size_t{2} * max_distance + 1; }
  constexpr const float* row(std::size_t h) const { return data + h * distances(); }
};

// Positions up to this bound (exclusive ends) keep every difference in std::int64_t.
inline constexpr std::uint64_t t5_position_limit = std::uint64_t{1} << 62;

namespace detail {
template <storage_type T>
constexpr kernel_error check_t5(const t5_bias_view& b, const score_view<T>& s,
                                std::uint64_t q_offset, std::uint64_t k_offset) {
  const tensor_view<T> as_tensor{s.data, s.heads, s.q_len, s.k_len, s.head_stride, s.q_stride};
  if (const kernel_error e = check_view(as_tensor); e != kernel_error::ok) return e;
  if (b.max_distance == 0 || b.max_distance > t5_max_distance_limit)
    return kernel_error::invalid_argument;
  if (b.heads != s.heads) return kernel_error::shape_mismatch;
  if (s.heads > 0 && b.data == nullptr) return kernel_error::null_data;
  constexpr std::uint64_t lim = t5_position_limit;
  if (q_offset > lim || s.q_len > lim - q_offset || k_offset > lim || s.k_len > lim - k_offset)
    return kernel_error::position_out_of_range;
  return kernel_error::ok;
}
}  // namespace detail

// Scalar reference. Checks every argument first (heads, layout, max_distance, positions) and
// writes nothing on error.
template <storage_type T>
kernel_error add_t5_bias_reference(const t5_bias_view& bias, score_view<T> scores,
                                   std::uint64_t q_offset = 0, std::uint64_t k_offset = 0) {
  if (const kernel_error e = detail::check_t5(bias, scores, q_offset, k_offset);
      e != kernel_error::ok)
    return e;
  if (scores.empty()) return kernel_error::ok;
  const auto md = static_cast<std::int64_t>(bias.max_distance);
  for (std::size_t h = 0; h < scores.heads; ++h) {
    const float* b = bias.row(h);
    for (std::size_t i = 0; i < scores.q_len; ++i) {
      const auto qp = static_cast<std::int64_t>(q_offset + i);
      T* row = scores.row(h, i);
      for (std::size_t j = 0; j < scores.k_len; ++j) {
        std::int64_t rel = static_cast<std::int64_t>(k_offset + j) - qp;
        rel = rel < -md ? -md : (rel > md ? md : rel);
        row[j] = store_as<T>(load_float(row[j]) + b[rel + md]);
      }
    }
  }
  return kernel_error::ok;
}

}  // namespace posenc::kernels
