// The batches of xsimd the SIMD kernels (posenc/kernels/simd/) compute with, for one architecture
// Arch (float; 32- and 16-bit integers for bit manipulation), and the loads and stores of a float
// batch from and to each storage type. Included only where POSENC_SIMD (detail/simd.hpp) is 1.
//
// Bit-identical to the scalar code: float storage is loaded and stored as it is; bf16/f16 go
// through the scalar conversions load_float/store_as lane by lane (a staging buffer on the stack).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <posenc/kernels/storage.hpp>

namespace posenc::kernels::simd::detail {

template <class Arch>
using fbatch = xsimd::batch<float, Arch>;
template <class Arch>
using ubatch = xsimd::batch<std::uint32_t, Arch>;
template <class Arch>
using hbatch = xsimd::batch<std::uint16_t, Arch>;

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

// The N lanes of v rounded once to T, at p.
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

}  // namespace posenc::kernels::simd::detail
