// Scaling queries by an attention temperature (Llama-4's attn_temperature_tuning, Qwen's log-n;
// spec/attention_temperature.hpp), the public entry point: the SIMD kernel of the build-time
// architecture (simd/temperature.hpp, where POSENC_SIMD), else the scalar reference
// (temperature_reference.hpp, which says what is computed). The same bits either way.
#pragma once

#include <span>

#include <posenc/kernels/detail/simd.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/temperature_reference.hpp>
#include <posenc/kernels/tensor.hpp>
#if POSENC_SIMD
#include <posenc/kernels/simd/temperature.hpp>
#endif

namespace posenc::kernels {

// out = in * scales[pos(t)]: scales[p] is the query scale of position p (query_scale_table).
// Checks every argument first and writes nothing on error.
template <storage_type T>
kernel_error apply_query_scale(std::span<const float> scales, tensor_view<const T> in,
                               tensor_view<T> out, token_positions pos) {
#if POSENC_SIMD
  return simd::apply_query_scale<build_arch, T>(scales, in, out, pos);
#else
  return apply_query_scale_reference<T>(scales, in, out, pos);
#endif
}

// In place: x *= scales[pos(t)].
template <storage_type T>
kernel_error apply_query_scale(std::span<const float> scales, tensor_view<T> x,
                               token_positions pos) {
  return apply_query_scale<T>(scales, tensor_view<const T>(x), x, pos);
}

}  // namespace posenc::kernels
