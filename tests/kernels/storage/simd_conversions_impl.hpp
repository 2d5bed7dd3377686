// The entries of simd_conversions.hpp for one xsimd architecture Arch: the kernels' own SIMD
// helpers (simd/rope_bf16.hpp, detail/batch.hpp) called on arrays. Included by conversions.cpp
// (the build's baseline architecture) and by simd_conversions.cpp (one wider ISA per build of it).
#pragma once

#include <posenc/kernels/detail/simd.hpp>

#if POSENC_SIMD
#include <posenc/kernels/detail/batch.hpp>
#include <posenc/kernels/simd/rope.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>

#include "kernels/storage/simd_conversions.hpp"

namespace posenc_test::conv {

namespace simd = posenc::kernels::simd::detail;

template <class Arch>
void narrow_bf16(const std::uint32_t* in, std::uint16_t* out, std::size_t n) {
  using B = simd::fbatch<Arch>;
  constexpr std::size_t W = B::size;
  for (std::size_t i = 0; i + 2 * W <= n; i += 2 * W) {
    const B even = xsimd::bitwise_cast<B>(simd::ubatch<Arch>::load_unaligned(in + i));
    const B odd = xsimd::bitwise_cast<B>(simd::ubatch<Arch>::load_unaligned(in + i + W));
    simd::store_bf16<Arch, false>(out + i, even, odd);
  }
}

template <class Arch>
void widen_bf16(const std::uint16_t* in, std::uint32_t* out, std::size_t n) {
  using B = simd::fbatch<Arch>;
  constexpr std::size_t W = B::size;
  alignas(64) std::uint32_t even[W], odd[W];
  for (std::size_t i = 0; i + 2 * W <= n; i += 2 * W) {
    B e, o;
    simd::widen_bf16<Arch>(in + i, e, o);
    xsimd::bitwise_cast<simd::ubatch<Arch>>(e).store_unaligned(even);
    xsimd::bitwise_cast<simd::ubatch<Arch>>(o).store_unaligned(odd);
    for (std::size_t k = 0; k < W; ++k) {
      out[i + 2 * k] = even[k];
      out[i + 2 * k + 1] = odd[k];
    }
  }
}

template <class Arch, class T>
void store_narrowed_as(const std::uint32_t* in, std::uint16_t* out, std::size_t n) {
  using B = simd::fbatch<Arch>;
  T tmp[B::size] = {};
  for (std::size_t i = 0; i + B::size <= n; i += B::size) {
    simd::store_narrowed<Arch>(tmp,
                               xsimd::bitwise_cast<B>(simd::ubatch<Arch>::load_unaligned(in + i)));
    for (std::size_t k = 0; k < B::size; ++k) out[i + k] = std::bit_cast<std::uint16_t>(tmp[k]);
  }
}

template <class Arch, class T>
void load_widened_as(const std::uint16_t* in, std::uint32_t* out, std::size_t n) {
  using B = simd::fbatch<Arch>;
  T tmp[B::size] = {};
  for (std::size_t i = 0; i + B::size <= n; i += B::size) {
    for (std::size_t k = 0; k < B::size; ++k) tmp[k] = std::bit_cast<T>(in[i + k]);
    xsimd::bitwise_cast<simd::ubatch<Arch>>(simd::load_widened<Arch>(tmp)).store_unaligned(out + i);
  }
}

template <class Arch>
void store_narrowed(kind k, const std::uint32_t* in, std::uint16_t* out, std::size_t n) {
  if (k == kind::bf16) {
    store_narrowed_as<Arch, posenc::bf16>(in, out, n);
  } else if (k == kind::f16) {
    store_narrowed_as<Arch, posenc::f16>(in, out, n);
  } else {
#if POSENC_HAS_FLOAT16
    store_narrowed_as<Arch, _Float16>(in, out, n);
#endif
  }
}

template <class Arch>
void load_widened(kind k, const std::uint16_t* in, std::uint32_t* out, std::size_t n) {
  if (k == kind::bf16) {
    load_widened_as<Arch, posenc::bf16>(in, out, n);
  } else if (k == kind::f16) {
    load_widened_as<Arch, posenc::f16>(in, out, n);
  } else {
#if POSENC_HAS_FLOAT16
    load_widened_as<Arch, _Float16>(in, out, n);
#endif
  }
}

template <class Arch>
constexpr simd_conversions make_simd_conversions() {
  return {Arch::name(),      simd::fbatch<Arch>::size, &narrow_bf16<Arch>,
          &widen_bf16<Arch>, &store_narrowed<Arch>,    &load_widened<Arch>};
}

}  // namespace posenc_test::conv
#endif
