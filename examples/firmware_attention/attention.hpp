// A fixed-size causal attention layer as firmware would carry it: 1 layer, 4 heads, head_dim 64,
// d_model 256, context 256, projections W_q, W_k, W_v (the output is the heads' concatenated
// attention outputs: an output projection is one more matrix product, with nothing to say about
// the encoding), RoPE with half-split pairs (i, i + 32), the layout of HF Llama's
// rotate_half and GPT-NeoX (docs/formulas.md §1), base 10000. The cos/sin cache is a
// compile-time constant in .rodata (attention.cpp), checked there by static_asserts of the laws.
//
// This header is shared by the kernel translation unit (attention.cpp, freestanding: no heap, no
// exceptions, no libm) and the host program (main.cpp), which recomputes the same layer in double
// precision. Everything here is freestanding-clean.
#pragma once

#include <cstddef>
#include <cstdint>

#include <posenc/spec/rope.hpp>

namespace fw {

inline constexpr std::uint32_t heads = 4;
inline constexpr std::uint32_t head_dim = 64;
inline constexpr std::uint32_t d_model = heads * head_dim;  // 256
inline constexpr std::uint32_t context = 256;               // positions 0 .. 255
// Scores are q.k / sqrt(head_dim) (Vaswani et al. 2017, eq. 1); 1/8 is exact in float.
inline constexpr float score_scale = 0.125f;
static_assert(score_scale * score_scale * static_cast<float>(head_dim) == 1.0f,
              "score_scale must be 1/sqrt(head_dim) exactly");

// The model's RoPE: a compile-time spec (posenc/spec/rope.hpp).
struct model {
  static constexpr posenc::rope_config config{head_dim, head_dim, 10000.0,
                                              posenc::rope_layout::half};
};

// The projection matrices, each [d_model][d_model] (row = input channel, column = output).
enum class matrix : std::uint32_t { wq = 0, wk = 1, wv = 2 };

// A 32-bit integer hash: Chris Wellons' "lowbias32" (https://nullprogram.com/blog/2018/07/31/,
// repository skeeto/hash-prospector, README "lowbias32"). Used as a counter-based generator, so
// that any weight can be recomputed from its index on the target and on the host alike.
constexpr std::uint32_t hash32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// Weight (row, col) of matrix m: an integer in [-128, 127] times 2^-10, exact in float (and in
// double), so that the host reference multiplies the very same numbers. |w| <= 1/8.
// With inputs on the grid 2^-7 Z, |x| <= 1 (main.cpp), every product x w is an integer multiple of
// 2^-17 of magnitude <= 2^14 * 2^-17, and every partial sum of d_model of them is one of magnitude
// <= 2^22 * 2^-17 < 2^24 * 2^-17: exact in float. So q, k and v are exact, and what the host
// measures is the error of the rotation, the scores and the softmax alone.
// Weights are generated rather than stored to keep the example's flash small and its compile
// short (a constexpr table costs ~10 us of constant evaluation per element,
// docs/compile-time.md); a real model would hold them as `static constexpr` arrays beside the tables.
constexpr float weight(matrix m, std::uint32_t row, std::uint32_t col) {
  const std::uint32_t index = (static_cast<std::uint32_t>(m) * d_model + row) * d_model + col;
  const auto v = static_cast<std::int32_t>(hash32(index ^ 0x9E3779B9u) >> 24) - 128;
  return static_cast<float>(v) * 0x1p-10f;
}
static_assert(d_model * 128u * 128u <= (1u << 24), "projections must stay exact in float");

}  // namespace fw

extern "C" {

// Status codes of the entry points.
enum posenc_fw_status : int {
  posenc_fw_ok = 0,
  posenc_fw_null_pointer = 1,     // x or y is null (with tokens > 0)
  posenc_fw_too_many_tokens = 2,  // tokens > fw::context, or a position >= fw::context
  posenc_fw_kernel_error = 3,     // the RoPE kernel rejected a call (cannot happen for valid input)
};

// The forward pass of the layer on x[tokens][d_model] (positions 0 .. tokens - 1, causal), writing
// y[tokens][d_model]. Uses static storage for the KV cache (not reentrant). No heap, no exceptions.
int posenc_fw_attention_forward(const float* x, std::uint32_t tokens, float* y);

// The query of one token x_t[d_model] at `position` (< fw::context), rotated: q = RoPE(x_t W_q),
// the first step of the forward pass, for checking the tables on their own.
int posenc_fw_rotated_query(const float* x_t, std::uint32_t position, float* q);

// The compile-time RoPE cache the kernel uses: cos and sin, each [fw::context][fw::head_dim / 2]
// (row-major, position-major), and the bytes it occupies in .rodata.
const float* posenc_fw_rope_cos(void);
const float* posenc_fw_rope_sin(void);
std::size_t posenc_fw_rope_table_bytes(void);

}  // extern "C"
