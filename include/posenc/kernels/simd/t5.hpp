// xsimd T5 relative-bias kernel for one architecture Arch (explicitly instantiable per ISA:
// template <class Arch, storage_type T> simd::add_t5_bias). Along a row the relative position
// j - a (a = q_pos - k_offset) grows by one per key, so a row splits into keys farther before the
// query than max_distance (one constant, the bias at -max_distance), the window |j - a| <=
// max_distance (a contiguous slice of the head's bias row) and keys farther after it (the bias at
// +max_distance). One float addition per element, the same conversions: bit-identical to
// add_t5_bias_reference.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>

#include <posenc/kernels/detail/batch.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/t5_reference.hpp>
#include <posenc/kernels/tensor.hpp>

namespace posenc::kernels::simd {

namespace detail {
// row[j] += c for j in [j0, j1).
template <class Arch, storage_type T>
void t5_constant_span(T* row, std::size_t j0, std::size_t j1, float c) {
  constexpr std::size_t N = fbatch<Arch>::size;
  const fbatch<Arch> cv(c);
  std::size_t j = j0;
  for (; j + N <= j1; j += N) store_narrowed<Arch>(row + j, load_widened<Arch>(row + j) + cv);
  for (; j < j1; ++j) row[j] = store_as<T>(load_float(row[j]) + c);
}

// row[j] += src[j - j0] for j in [j0, j1).
template <class Arch, storage_type T>
void t5_slice_span(T* row, std::size_t j0, std::size_t j1, const float* src) {
  constexpr std::size_t N = fbatch<Arch>::size;
  std::size_t j = j0;
  for (; j + N <= j1; j += N)
    store_narrowed<Arch>(
        row + j, load_widened<Arch>(row + j) + fbatch<Arch>::load_unaligned(src + (j - j0)));
  for (; j < j1; ++j) row[j] = store_as<T>(load_float(row[j]) + src[j - j0]);
}

constexpr std::size_t t5_clamp(std::int64_t v, std::size_t hi) {
  return v < 0 ? 0 : (static_cast<std::uint64_t>(v) > hi ? hi : static_cast<std::size_t>(v));
}
}  // namespace detail

template <class Arch, storage_type T>
kernel_error add_t5_bias(const t5_bias_view& bias, const score_view<T>& scores,
                         std::uint64_t q_offset, std::uint64_t k_offset) {
  if (const kernel_error e = kernels::detail::check_t5(bias, scores, q_offset, k_offset);
      e != kernel_error::ok)
    return e;
  if (scores.empty()) return kernel_error::ok;
  const auto md = static_cast<std::int64_t>(bias.max_distance);
  const auto k0 = static_cast<std::int64_t>(k_offset);
  for (std::size_t h = 0; h < scores.heads; ++h) {
    const float* b = bias.row(h);
    for (std::size_t i = 0; i < scores.q_len; ++i) {
      const std::int64_t a = static_cast<std::int64_t>(q_offset + i) - k0;
      // Keys [0, lo): rel < -md; [lo, hi): |rel| <= md; [hi, k_len): rel > md.
      const std::size_t lo = detail::t5_clamp(a - md, scores.k_len);
      const std::size_t hi = detail::t5_clamp(a + md + 1, scores.k_len);
      T* row = scores.row(h, i);
      detail::t5_constant_span<Arch>(row, 0, lo, b[0]);
      if (lo < hi)
        detail::t5_slice_span<Arch>(row, lo, hi, b + (static_cast<std::int64_t>(lo) - a + md));
      detail::t5_constant_span<Arch>(row, hi, scores.k_len, b[2 * md]);
    }
  }
  return kernel_error::ok;
}

}  // namespace posenc::kernels::simd
