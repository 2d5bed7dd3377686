// Adding the T5 relative position bias to a block of attention scores, the public entry point: the
// SIMD kernel of the build-time architecture (simd/t5.hpp, where POSENC_SIMD), else the scalar
// reference (t5_reference.hpp, which says what is computed). The same bits either way.
#pragma once

#include <cstdint>

#include <posenc/kernels/detail/simd.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/t5_reference.hpp>
#include <posenc/kernels/tensor.hpp>
#if POSENC_SIMD
#include <posenc/kernels/simd/t5.hpp>
#endif

namespace posenc::kernels {

// Checks every argument first (heads, layout, max_distance, positions) and writes nothing on
// error.
template <storage_type T>
kernel_error add_t5_bias(const t5_bias_view& bias, score_view<T> scores, std::uint64_t q_offset = 0,
                         std::uint64_t k_offset = 0) {
#if POSENC_SIMD
  return simd::add_t5_bias<build_arch, T>(bias, scores, q_offset, k_offset);
#else
  return add_t5_bias_reference<T>(bias, scores, q_offset, k_offset);
#endif
}

}  // namespace posenc::kernels
