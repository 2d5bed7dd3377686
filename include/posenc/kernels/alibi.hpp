// Adding ALiBi biases to a block of attention scores, the public entry point: the SIMD kernel of
// the build-time architecture (simd/alibi.hpp, where POSENC_SIMD), else the scalar reference
// (alibi_reference.hpp, which says what is computed). The same bits either way.
#pragma once

#include <cstdint>
#include <span>

#include <posenc/kernels/alibi_reference.hpp>
#include <posenc/kernels/detail/simd.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/spec/alibi.hpp>
#if POSENC_SIMD
#include <posenc/kernels/simd/alibi.hpp>
#endif

namespace posenc::kernels {

// Checks every argument first (slopes.size() == heads, layout, positions) and writes nothing on
// error.
template <storage_type T>
kernel_error add_alibi_bias(std::span<const float> slopes, score_view<T> scores,
                            alibi_variant variant, std::uint64_t q_offset = 0,
                            std::uint64_t k_offset = 0) {
#if POSENC_SIMD
  return simd::add_alibi_bias<build_arch, T>(slopes, scores, variant, q_offset, k_offset);
#else
  return add_alibi_bias_reference<T>(slopes, scores, variant, q_offset, k_offset);
#endif
}

}  // namespace posenc::kernels
