// xsimd ALiBi bias kernel for one architecture Arch (explicitly instantiable per ISA:
// template <class Arch, storage_type T> simd::add_alibi_bias). Along a row the distance is linear
// in j, so each row splits into the keys at or before the query (d = a - j) and those after it
// (d = j - a, symmetric only); d is formed as float(a - j0) -/+ iota, exact because every position
// is below 2^24. Product rounded once (barrier), then one subtraction: bit-identical to
// add_alibi_bias_reference.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

#include <posenc/kernels/alibi_reference.hpp>
#include <posenc/kernels/detail/batch.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/spec/alibi.hpp>

namespace posenc::kernels::simd {

namespace detail {
// Keeps the compiler from fusing the value's computation with a later addition (GCC contracts
// vector a*b+c into an FMA when FMA is enabled, across statements; an empty asm statement that
// claims to modify the register stops it). The scalar code has the same barrier
// (kernels::detail::alibi_product), so both round the product once.
template <class B>
inline void opaque(B& v) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __asm__("" : "+v"(v.data));
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(v.data));
#else
  static_cast<void>(v);
#endif
}

template <class Arch>
fbatch<Arch> iota() {
  alignas(Arch::alignment()) float v[fbatch<Arch>::size];
  for (std::size_t i = 0; i < fbatch<Arch>::size; ++i) v[i] = static_cast<float>(i);
  return fbatch<Arch>::load_aligned(v);
}

// row[j] -= m * d_j for j in [j0, j1), d_j = sign * (a - j) >= 0 with sign = +1 (keys at or before
// the query: d = a - j) or -1 (after it: d = j - a).
template <class Arch, storage_type T>
void alibi_span(T* row, std::size_t j0, std::size_t j1, float m, std::int64_t a, bool before) {
  constexpr std::size_t N = fbatch<Arch>::size;
  const fbatch<Arch> mv(m);
  const fbatch<Arch> lanes = iota<Arch>();
  std::size_t j = j0;
  for (; j + N <= j1; j += N) {
    const std::int64_t d0 =
        before ? a - static_cast<std::int64_t>(j) : static_cast<std::int64_t>(j) - a;
    const fbatch<Arch> d0v(static_cast<float>(d0));
    const fbatch<Arch> d = before ? d0v - lanes : d0v + lanes;
    fbatch<Arch> b = mv * d;
    detail::opaque(b);
    detail::store_narrowed<Arch>(row + j, detail::load_widened<Arch>(row + j) - b);
  }
  for (; j < j1; ++j) {
    const std::int64_t dj =
        before ? a - static_cast<std::int64_t>(j) : static_cast<std::int64_t>(j) - a;
    kernels::detail::alibi_update(row[j], m, static_cast<std::uint64_t>(dj));
  }
}
}  // namespace detail

template <class Arch, storage_type T>
kernel_error add_alibi_bias(std::span<const float> slopes, const score_view<T>& scores,
                            alibi_variant variant, std::uint64_t q_offset, std::uint64_t k_offset) {
  if (const kernel_error e =
          kernels::detail::check_alibi(slopes, scores, variant, q_offset, k_offset);
      e != kernel_error::ok)
    return e;
  if (scores.empty()) return kernel_error::ok;
  const auto k0 = static_cast<std::int64_t>(k_offset);
  const auto k_len = static_cast<std::int64_t>(scores.k_len);
  for (std::size_t h = 0; h < scores.heads; ++h) {
    const float m = slopes[h];
    for (std::size_t i = 0; i < scores.q_len; ++i) {
      // a = q_pos - k_offset: key j is at or before the query iff j <= a.
      const std::int64_t a = static_cast<std::int64_t>(q_offset + i) - k0;
      const std::int64_t split = a < 0 ? 0 : (a + 1 < k_len ? a + 1 : k_len);
      T* row = scores.row(h, i);
      detail::alibi_span<Arch>(row, 0, static_cast<std::size_t>(split), m, a, true);
      if (variant == alibi_variant::symmetric)
        detail::alibi_span<Arch>(row, static_cast<std::size_t>(split), scores.k_len, m, a, false);
    }
  }
  return kernel_error::ok;
}

}  // namespace posenc::kernels::simd
