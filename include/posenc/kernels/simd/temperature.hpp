// The xsimd kernel scaling queries by an attention temperature, for one architecture Arch
// (explicitly instantiable per ISA: template <class Arch, storage_type T>
// simd::apply_query_scale): the reference's loop with N lanes at a time, one float
// multiplication per element and the same conversions, so bit-identical to
// apply_query_scale_reference.
#pragma once

#include <cstddef>
#include <span>
#include <type_traits>

#include <posenc/kernels/detail/batch.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/temperature_reference.hpp>
#include <posenc/kernels/tensor.hpp>

namespace posenc::kernels::simd {

template <class Arch, storage_type T>
kernel_error apply_query_scale(std::span<const float> scales, const tensor_view<const T>& in,
                               const tensor_view<T>& out, const token_positions& pos) {
  if (const kernel_error e = kernels::detail::check_query_scale(scales, in, out, pos);
      e != kernel_error::ok)
    return e;
  constexpr std::size_t N = detail::fbatch<Arch>::size;
  const std::size_t n = out.head_dim;
  for (std::size_t tok = 0; tok < out.tokens; ++tok) {
    const float s = scales[static_cast<std::size_t>(pos.at(tok))];
    const detail::fbatch<Arch> sv(s);
    for (std::size_t h = 0; h < out.heads; ++h) {
      const T* src = in.at(tok, h);
      T* dst = out.at(tok, h);
      std::size_t c = 0;
      for (; c + N <= n; c += N)
        detail::store_narrowed<Arch>(dst + c, detail::load_widened<Arch>(src + c) * sv);
      if constexpr (std::is_same_v<T, float>) {
        for (; c < n; ++c) dst[c] = src[c] * s;
      } else if (c < n) {
        // The last n - c < N elements as one partial vector, converted like the others.
        detail::store_narrowed_n<Arch>(dst + c, detail::load_widened_n<Arch>(src + c, n - c) * sv,
                                       n - c);
      }
    }
  }
  return kernel_error::ok;
}

template <class Arch, storage_type T>
kernel_error apply_query_scale(std::span<const float> scales, const tensor_view<T>& x,
                               const token_positions& pos) {
  return apply_query_scale<Arch, T>(scales, tensor_view<const T>(x), x, pos);
}

}  // namespace posenc::kernels::simd
