// The SIMD loop of the kernels that add a table row to each token (sinusoidal, learned), for one
// xsimd architecture Arch: the scalar loop of detail/additive.hpp with N lanes at a time (one
// float addition per element, the same conversions), so the same bits. Included only where
// POSENC_SIMD (detail/simd.hpp) is 1.
#pragma once

#include <cstddef>

#include <posenc/kernels/detail/additive.hpp>
#include <posenc/kernels/detail/batch.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>

namespace posenc::kernels::simd::detail {

// out = in + rows[pos(t)] (arguments checked).
template <class Arch, class U, storage_type T>
void add_rows(const kernels::detail::table_rows<U>& t, const tensor_view<const T>& in,
              const tensor_view<T>& out, const token_positions& pos) {
  constexpr std::size_t N = fbatch<Arch>::size;
  const std::size_t n = out.head_dim;
  for (std::size_t tok = 0; tok < out.tokens; ++tok) {
    const U* row = t.row(pos.at(tok));
    for (std::size_t h = 0; h < out.heads; ++h) {
      const T* src = in.at(tok, h);
      T* dst = out.at(tok, h);
      const U* r = row + h * n;
      std::size_t c = 0;
      for (; c + N <= n; c += N)
        store_narrowed<Arch>(dst + c, load_widened<Arch>(src + c) + load_widened<Arch>(r + c));
      if (c < n) {
        // The last n - c < N elements as one partial vector, converted like the others (for
        // float too: GCC 12 reports a scalar loop here, inlined into calls whose arguments it
        // sees, as one whose iteration 2^62 - 1 is undefined, -Waggressive-loop-optimizations).
        store_narrowed_n<Arch>(
            dst + c, load_widened_n<Arch>(src + c, n - c) + load_widened_n<Arch>(r + c, n - c),
            n - c);
      }
    }
  }
}

// The SIMD kernel of an additive table: add_table_reference's checks, then add_rows.
template <class Arch, class U, storage_type T>
kernel_error add_table(const kernels::detail::table_rows<U>& t, const tensor_view<const T>& in,
                       const tensor_view<T>& out, const token_positions& pos) {
  if (const kernel_error e = kernels::detail::check_add(t, in, out, pos); e != kernel_error::ok)
    return e;
  add_rows<Arch>(t, in, out, pos);
  return kernel_error::ok;
}

}  // namespace posenc::kernels::simd::detail
