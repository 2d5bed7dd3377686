// Scaling queries by an attention temperature, the scalar reference: out[t, h, :] = in[t, h, :] *
// scales[pos(t)], the query scale s(p) of each position (spec/attention_temperature.hpp:
// query_scale_table writes s(0), s(1), ... as float). HF multiplies the query states by the
// float32 scales and casts back to the query dtype (transformers models/llama4/modeling_llama4.py,
// Llama4TextAttention.forward: `query_states = (query_states * attn_scales).to(...)`); so does
// this: load_float(x) * scale, rounded once to T. The SIMD kernel (simd/temperature.hpp) does the
// same single multiplication, so it equals this bit for bit. A position without a scale (p >=
// scales.size()) is kernel_error::position_out_of_range, checked before anything is written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <posenc/kernels/detail/additive.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>

namespace posenc::kernels {

namespace detail {
// Every argument, in the additive kernels' order: views, shapes, overlap (the same view is in
// place), positions (check_rows_call), then the scales.
template <storage_type T>
kernel_error check_query_scale(std::span<const float> scales, const tensor_view<const T>& in,
                               const tensor_view<T>& out, const token_positions& pos) {
  std::uint64_t max_pos = 0;
  if (const kernel_error e = check_rows_call(in, out, pos, &max_pos); e != kernel_error::ok)
    return e;
  if (out.empty()) return kernel_error::ok;
  if (scales.data() == nullptr) return kernel_error::null_data;
  if (max_pos >= scales.size()) return kernel_error::position_out_of_range;
  return kernel_error::ok;
}
}  // namespace detail

// out = in * scales[pos(t)], out of place (in and out must not partly overlap; the same view is
// in place). Checks every argument first and writes nothing on error.
template <storage_type T>
kernel_error apply_query_scale_reference(std::span<const float> scales, tensor_view<const T> in,
                                         tensor_view<T> out, token_positions pos) {
  if (const kernel_error e = detail::check_query_scale(scales, in, out, pos); e != kernel_error::ok)
    return e;
  for (std::size_t tok = 0; tok < out.tokens; ++tok) {
    const float s = scales[static_cast<std::size_t>(pos.at(tok))];
    for (std::size_t h = 0; h < out.heads; ++h) {
      const T* src = in.at(tok, h);
      T* dst = out.at(tok, h);
      for (std::size_t c = 0; c < out.head_dim; ++c) dst[c] = store_as<T>(load_float(src[c]) * s);
    }
  }
  return kernel_error::ok;
}

// In place: x *= scales[pos(t)].
template <storage_type T>
kernel_error apply_query_scale_reference(std::span<const float> scales, tensor_view<T> x,
                                         token_positions pos) {
  return apply_query_scale_reference<T>(scales, tensor_view<const T>(x), x, pos);
}

}  // namespace posenc::kernels
