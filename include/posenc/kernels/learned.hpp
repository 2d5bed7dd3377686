// Adding learned absolute position embeddings to activations, the public entry points: the SIMD
// kernel of the build-time architecture (simd/learned.hpp, where POSENC_SIMD), else the scalar
// reference (learned_reference.hpp). The same bits either way.
#pragma once

#include <posenc/kernels/detail/simd.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/learned_reference.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/tables/learned.hpp>
#if POSENC_SIMD
#include <posenc/kernels/simd/learned.hpp>
#endif

namespace posenc::kernels {

// out = in + table[pos(t)]; in place when out is the same view as in.
template <storage_type T>
kernel_error add_learned(const learned_table_view<T>& table, tensor_view<const T> in,
                         tensor_view<T> out, token_positions pos) {
#if POSENC_SIMD
  return simd::add_learned<build_arch, T>(table, in, out, pos);
#else
  return add_learned_reference<T>(table, in, out, pos);
#endif
}

// In place.
template <storage_type T>
kernel_error add_learned(const learned_table_view<T>& table, tensor_view<T> x,
                         token_positions pos) {
  return add_learned<T>(table, tensor_view<const T>(x), x, pos);
}

}  // namespace posenc::kernels
