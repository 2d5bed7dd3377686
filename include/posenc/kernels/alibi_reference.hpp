// Adding ALiBi biases to a block of attention scores, the scalar reference. The block is
// [heads, q_len, k_len] (key index contiguous, head and query strides explicit); query i sits at
// position q_offset + i and key j at k_offset + j (decode with a KV cache: q_offset = tokens
// already cached, k_offset = 0). With d = q_pos - k_pos and m = slopes[h]:
//   causal:    score -= m * d for keys with k_pos <= q_pos; scores of later keys are not touched
//              (the causal mask removes them). The reference code adds +m * k_pos instead, which
//              differs from -m * d by a per-row constant that softmax ignores (formulas.md §5).
//   symmetric: score -= m * |d| for every key.
// Arithmetic: the product m * float(d) is rounded once (never fused with the subtraction), then
// subtracted in float; bf16/f16 scores are widened, updated and rounded once. The SIMD kernel
// (simd/alibi.hpp) does the same operations, so it equals the scalar reference bit for bit.
// Positions must be at most 2^24 (q_offset + q_len and k_offset + k_len), where every distance is
// exact in float32 (as torch's float32 arange); past that, kernel_error::position_out_of_range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <posenc/kernels/error.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/spec/alibi.hpp>
#include <posenc/tables/alibi.hpp>

namespace posenc::kernels {

// Positions up to this bound (exclusive ends) keep every distance exact in float32.
inline constexpr std::uint64_t alibi_position_limit = std::uint64_t{1} << 24;

namespace detail {
template <storage_type T>
constexpr kernel_error check_alibi(std::span<const float> slopes, const score_view<T>& s,
                                   alibi_variant v, std::uint64_t q_offset,
                                   std::uint64_t k_offset) {
  if (v != alibi_variant::causal && v != alibi_variant::symmetric)
    return kernel_error::invalid_argument;
  // The same layout rules as a [heads, q_len, k_len] tensor_view.
  const tensor_view<T> as_tensor{s.data, s.heads, s.q_len, s.k_len, s.head_stride, s.q_stride};
  if (const kernel_error e = check_view(as_tensor); e != kernel_error::ok) return e;
  if (slopes.size() != s.heads) return kernel_error::shape_mismatch;
  if (s.heads > 0 && slopes.data() == nullptr) return kernel_error::null_data;
  constexpr std::uint64_t lim = alibi_position_limit;
  if (q_offset > lim || s.q_len > lim - q_offset || k_offset > lim || s.k_len > lim - k_offset)
    return kernel_error::position_out_of_range;
  return kernel_error::ok;
}

// m * d rounded once, never fused with the subtraction that follows (the SIMD kernel has the same
// barrier, simd::detail::opaque).
inline float alibi_product(float m, float d) {
  float b = m * d;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __asm__("" : "+x"(b));
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(b));
#elif defined(__GNUC__) && defined(__arm__) && defined(__ARM_FP) && (__ARM_FP & 4)
  // 32-bit ARM with a single-precision FPU (Cortex-M4F): GCC fuses into vfms under gnu++20.
  __asm__("" : "+t"(b));
#endif
  return b;
}

// One element: score - m * d.
template <storage_type T>
inline void alibi_update(T& score, float m, std::uint64_t d) {
  score = store_as<T>(load_float(score) - alibi_product(m, static_cast<float>(d)));
}
}  // namespace detail

// Scalar reference. Checks every argument first (slopes.size() == heads, layout, positions) and
// writes nothing on error.
template <storage_type T>
kernel_error add_alibi_bias_reference(std::span<const float> slopes, score_view<T> scores,
                                      alibi_variant variant, std::uint64_t q_offset = 0,
                                      std::uint64_t k_offset = 0) {
  if (const kernel_error e = detail::check_alibi(slopes, scores, variant, q_offset, k_offset);
      e != kernel_error::ok)
    return e;
  if (scores.empty()) return kernel_error::ok;
  for (std::size_t h = 0; h < scores.heads; ++h) {
    const float m = slopes[h];
    for (std::size_t i = 0; i < scores.q_len; ++i) {
      const std::uint64_t qp = q_offset + i;
      T* row = scores.row(h, i);
      for (std::size_t j = 0; j < scores.k_len; ++j) {
        const std::uint64_t kp = k_offset + j;
        if (kp <= qp) {
          detail::alibi_update(row[j], m, qp - kp);
        } else if (variant == alibi_variant::symmetric) {
          detail::alibi_update(row[j], m, kp - qp);
        }
      }
    }
  }
  return kernel_error::ok;
}

}  // namespace posenc::kernels
