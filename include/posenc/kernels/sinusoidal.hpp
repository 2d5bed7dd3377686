// Adding a sinusoidal position table to activations, the public entry points: the SIMD kernel of
// the build-time architecture (simd/sinusoidal.hpp, where POSENC_SIMD), else the scalar reference
// (sinusoidal_reference.hpp). The same bits either way.
#pragma once

#include <posenc/kernels/detail/simd.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/sinusoidal_reference.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/tables/sinusoidal.hpp>
#if POSENC_SIMD
#include <posenc/kernels/simd/sinusoidal.hpp>
#endif

namespace posenc::kernels {

// out = in + PE[pos(t)]; in place when out is the same view as in.
template <storage_type T>
kernel_error add_sinusoidal(const sinusoidal_table_view<float>& table, tensor_view<const T> in,
                            tensor_view<T> out, token_positions pos) {
#if POSENC_SIMD
  return simd::add_sinusoidal<build_arch, T>(table, in, out, pos);
#else
  return add_sinusoidal_reference<T>(table, in, out, pos);
#endif
}

// In place.
template <storage_type T>
kernel_error add_sinusoidal(const sinusoidal_table_view<float>& table, tensor_view<T> x,
                            token_positions pos) {
  return add_sinusoidal<T>(table, tensor_view<const T>(x), x, pos);
}

}  // namespace posenc::kernels
