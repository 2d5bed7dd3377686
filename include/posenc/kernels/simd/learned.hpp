// xsimd kernel adding learned position embeddings, for one architecture Arch (explicitly
// instantiable per ISA: template <class Arch, storage_type T> simd::add_learned). Also the shared
// SIMD helpers of the encodings' kernels: widening loads and narrowing stores of a batch of
// float/bf16/f16, and a barrier that keeps a product from being fused into an FMA.
//
// Bit-identical to the scalar reference: float storage is loaded and stored as is; bf16/f16 go
// through the same load_float/store_as conversions lane by lane (a staging buffer on the stack),
// and the arithmetic is the same single float operations in the same order.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <posenc/kernels/error.hpp>
#include <posenc/kernels/learned.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/tables/learned.hpp>

namespace posenc::kernels::simd {

namespace detail {
template <class Arch>
using fbatch = xsimd::batch<float, Arch>;

// N consecutive values of storage type T as a float batch.
template <class Arch, storage_type T>
fbatch<Arch> load_widened(const T* p) {
  if constexpr (std::is_same_v<T, float>) {
    return fbatch<Arch>::load_unaligned(p);
  } else {
    alignas(Arch::alignment()) float tmp[fbatch<Arch>::size];
    for (std::size_t i = 0; i < fbatch<Arch>::size; ++i) tmp[i] = load_float(p[i]);
    return fbatch<Arch>::load_aligned(tmp);
  }
}

template <class Arch, storage_type T>
void store_narrowed(T* p, const fbatch<Arch>& v) {
  if constexpr (std::is_same_v<T, float>) {
    v.store_unaligned(p);
  } else {
    alignas(Arch::alignment()) float tmp[fbatch<Arch>::size];
    v.store_aligned(tmp);
    for (std::size_t i = 0; i < fbatch<Arch>::size; ++i) p[i] = store_as<T>(tmp[i]);
  }
}

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
        detail::store_narrowed<Arch>(
            dst + c, detail::load_widened<Arch>(src + c) + detail::load_widened<Arch>(r + c));
      for (; c < n; ++c) dst[c] = store_as<T>(load_float(src[c]) + load_float(r[c]));
    }
  }
}
}  // namespace detail

template <class Arch, storage_type T>
kernel_error add_learned(const learned_table_view<T>& table, tensor_view<const T> in,
                         tensor_view<T> out, token_positions pos) {
  const kernels::detail::table_rows<T> rows = kernels::detail::rows_of(table);
  if (const kernel_error e = kernels::detail::check_add(rows, in, out, pos); e != kernel_error::ok)
    return e;
  detail::add_rows<Arch>(rows, in, out, pos);
  return kernel_error::ok;
}

template <class Arch, storage_type T>
kernel_error add_learned(const learned_table_view<T>& table, tensor_view<T> x,
                         token_positions pos) {
  return add_learned<Arch, T>(table, tensor_view<const T>(x), x, pos);
}

}  // namespace posenc::kernels::simd
