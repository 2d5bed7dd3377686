// The float bodies of the RoPE SIMD kernels, for one xsimd architecture Arch: every head of a
// token with each block of the row loaded once (half_f32_heads, interleaved_f32_heads), for float
// storage and, widened and narrowed a vector at a time by detail/batch.hpp, for f16 and _Float16,
// and for bf16 in small calls (in the register path, and past it two blocks a step, two vectors
// at a time as even and odd elements, rope_bf16.hpp); with optional streaming stores. The layouts
// are separate code paths: the half bodies take the a and b channels of pair i at i and i + R/2,
// the interleaved ones at 2i and 2i + 1 (pair_channels, spec/rope.hpp).
//
// Part of the RoPE SIMD kernels: included by simd/rope.hpp (inside its GCC 12 AVX-512 diagnostic
// region), which is the header to include.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <posenc/kernels/detail/batch.hpp>
#include <posenc/kernels/simd/rope_bf16.hpp>
#include <posenc/kernels/simd/rope_ops.hpp>
#include <posenc/kernels/simd/rope_rows.hpp>
#include <posenc/kernels/tensor.hpp>

namespace posenc::kernels::simd::detail {

// Outputs of at least stream_threshold_bytes per call (kernels/rope_table.hpp; or any size, by the
// table's output_stores) are written with non-temporal (streaming) stores where the ISA has them
// and every vector store is aligned: such outputs do not fit in the caches anyway, and a
// streaming store writes a whole line without first reading it (ordinary stores read each line of
// the output before overwriting it, a third memory stream besides the input and the output).
// Smaller outputs stay in the cache for whatever reads them next.
using kernels::stream_threshold_bytes;

// Calls writing at most this many bytes loop over heads inside each block of the row when the
// row does not fit in registers (see run_rows).
inline constexpr std::size_t blocks_outer_max_bytes = std::size_t{512} << 10;

// Stores v at p; with Stream (has_stream<Arch> only), as a non-temporal store (p aligned to 64).
template <class Arch, bool Stream>
inline void store_f32(float* p, const fbatch<Arch>& v) {
#if XSIMD_WITH_AVX512F
  if constexpr (Stream && std::is_base_of_v<xsimd::avx512f, Arch>) {
    _mm512_stream_ps(p, v);
    return;
  }
#endif
  v.store_unaligned(p);
}

// Stores v at p as storage type T: float with store_f32, bf16 and f16 narrowed (one vector of them
// is half a cache line or less: streamed only in pairs, stream_narrowed2).
template <class Arch, bool Stream, class T>
inline void store_rotated(T* p, const fbatch<Arch>& v) {
  if constexpr (std::is_same_v<T, float>) {
    store_f32<Arch, Stream>(p, v);
  } else {
    static_assert(!Stream, "posenc: 16-bit outputs are not streamed");
    store_narrowed<Arch>(p, v);
  }
}

// lo and hi (2W consecutive elements) narrowed to 16-bit storage T and written as one whole
// 64-byte line at p (aligned to 64) with one streaming store (has_stream<Arch> only).
template <class Arch, class T>
inline void stream_narrowed2(T* p, const fbatch<Arch>& lo, const fbatch<Arch>& hi) {
#if XSIMD_WITH_AVX512F
  if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) {
    // Named first: clang defines _mm512_inserti64x4 as a macro, whose arguments cannot hold the
    // comma of a template argument list.
    const __m256i low_half = narrow16_avx512<Arch, T>(lo);
    const __m256i high_half = narrow16_avx512<Arch, T>(hi);
    const __m512i line = _mm512_inserti64x4(_mm512_castsi256_si512(low_half), high_half, 1);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(p), line);
    return;
  }
#endif
  store_narrowed<Arch>(p, lo);
  store_narrowed<Arch>(p + fbatch<Arch>::size, hi);
}

// Whether the kernels stream for Arch: only where one vector store is one whole 64-byte cache line
// (AVX-512). Streaming stores of half lines (AVX2, SSE) measured up to 28x slower here than
// ordinary stores, the write-combining buffers being flushed before the line is complete.
template <class Arch>
inline constexpr bool has_stream =
#if XSIMD_WITH_AVX512F
    std::is_base_of_v<xsimd::avx512f, Arch>;
#else
    false;
#endif

// Whether large float and bf16 calls past the register path stream on Arch with two 32-byte
// stores to a line, back to back (AVX and AVX2): the loops that go over every head of a token in
// one pass (half_heads_outside, interleaved_heads_outside) and the bf16 bodies (line_pairs,
// rope_bf16.hpp) write each line whole that way, and a write-combining buffer so filled goes to
// memory as a line. The other loops store a half line at a time to alternating lines, which is
// what measured slow (has_stream).
template <class Arch>
inline constexpr bool has_line_stream =
#if XSIMD_WITH_AVX
    std::is_base_of_v<xsimd::avx, Arch> && sizeof(fbatch<Arch>) == 32;
#else
    false;
#endif

// v0 and v1 (2W consecutive floats) at p; with Lines (has_line_stream<Arch>, p aligned to 64),
// as two streaming stores: one whole line.
template <class Arch, bool Lines, class T>
inline void store_rotated2(T* p, const fbatch<Arch>& v0, const fbatch<Arch>& v1) {
#if XSIMD_WITH_AVX
  if constexpr (Lines) {
    static_assert(has_line_stream<Arch> && std::is_same_v<T, float>);
    _mm256_stream_ps(p, v0);
    _mm256_stream_ps(p + fbatch<Arch>::size, v1);
    return;
  }
#endif
  store_rotated<Arch, false>(p, v0);
  store_rotated<Arch, false>(p + fbatch<Arch>::size, v1);
}

// How many vectors of one token's row the register path below keeps: 16 with AVX-512 (half of its
// 32 registers, the other half for the operands), where a head_dim 128 row fits. Elsewhere none:
// with 16 registers (SSE, AVX2) or 16-byte vectors (NEON) only rows of a few dozen channels
// would fit, and the path is not compiled at all.
template <class Arch>
inline constexpr std::size_t row_registers = sizeof(fbatch<Arch>) == 64 ? 16 : 0;

// Whether the bodies' loops past the register path (small calls) take several vector blocks a
// step: where there is no register path (16 registers or 16-byte vectors). AVX-512 keeps a block
// a step for rows past its register path, whose code is then as it was.
template <class Arch>
inline constexpr bool several_blocks_a_step = row_registers<Arch> == 0;

// Whether a chunk of n pairs goes through the register path of half_f32_heads /
// interleaved_f32_heads: its whole row as at most row_registers<Arch> vectors (half layout: c_a,
// s_a, s_b, and c_b unless compact, per block of W pairs; interleaved: C and S per block of W
// channels), in pairs of blocks where 16-bit storage is streamed (one line per pair).
template <class Arch, class T>
constexpr bool row_in_registers(bool interleaved, bool compact, bool stream, std::size_t n) {
  constexpr std::size_t W = fbatch<Arch>::size;
  const std::size_t per_block = interleaved ? 2 : (compact ? 3 : 4);
  const std::size_t blocks = interleaved ? 2 * n / W : n / W;
  // 16-bit storage is streamed a line (two blocks) at a time.
  if (stream && !std::is_same_v<T, float> && blocks % 2 != 0) return false;
  return blocks > 0 && blocks * per_block <= row_registers<Arch>;
}

// lo and hi (2W consecutive entries of a row) replaced by their even and odd entries: the lane
// order in which widen_bf16 / store_bf16 hold 2W consecutive bf16 values (register path, bf16).
template <class Arch>
inline void split_even_odd(fbatch<Arch>& lo, fbatch<Arch>& hi) {
#if XSIMD_WITH_AVX512F
  if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) {
    const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i io = _mm512_add_epi32(ie, _mm512_set1_epi32(1));
    const fbatch<Arch> even = _mm512_permutex2var_ps(lo, ie, hi);
    hi = _mm512_permutex2var_ps(lo, io, hi);
    lo = even;
    return;
  }
#endif
#if XSIMD_WITH_AVX
  if constexpr (std::is_base_of_v<xsimd::avx, Arch>) {
    // As deinterleave (rope_rows.hpp), in registers.
    const __m256 a = _mm256_permute2f128_ps(lo, hi, 0x20), b = _mm256_permute2f128_ps(lo, hi, 0x31);
    lo = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    hi = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    return;
  }
#endif
  constexpr std::size_t W = fbatch<Arch>::size;
  alignas(Arch::alignment()) float row[2 * W], even[W], odd[W];
  lo.store_aligned(row);
  hi.store_aligned(row + W);
  for (std::size_t k = 0; k < W; ++k) {
    even[k] = row[2 * k];
    odd[k] = row[2 * k + 1];
  }
  lo = fbatch<Arch>::load_aligned(even);
  hi = fbatch<Arch>::load_aligned(odd);
}

// Whether interleaved_f32_heads<..., CompactRow = true> takes a compact chunk of n pairs: the
// register path holds it whole, expanded from whole vectors of the compact row.
template <class Arch, class T>
constexpr bool compact_row_in_registers(std::size_t n) {
  if constexpr (row_registers<Arch> == 0 || fbatch<Arch>::size < 4) {
    return false;
  } else {
    return n % fbatch<Arch>::size == 0 && row_in_registers<Arch, T>(true, false, false, n);
  }
}

// The float kernels for every head of every operand of one token. The row's cos/sin is the same
// for all heads: a row that fits in row_registers<Arch> vectors is loaded once and the heads are
// walked one after the other in address order (the register path); a longer row loops over its
// vector blocks outside and heads inside, each block loaded once per token and kept in registers
// for every head, in small calls, and heads outside and blocks inside in large ones
// (half_heads_outside, interleaved_heads_outside, called by the driver).

// One tensor (in, out) of a call.
template <class T>
struct rope_operand {
  tensor_view<const T> in;
  tensor_view<T> out;
};

// f(x, y) for every head of every operand of token t, x and y at channel c of the head.
template <class T, class F>
inline void for_each_head(const rope_operand<T>* ops, std::size_t n_ops, std::size_t t,
                          std::size_t c, F&& f) {
  for (std::size_t o = 0; o < n_ops; ++o) {
    const std::size_t heads = ops[o].in.heads;
    const std::size_t in_step = ops[o].in.head_stride, out_step = ops[o].out.head_stride;
    const T* x = ops[o].in.at(t, 0) + c;
    T* y = ops[o].out.at(t, 0) + c;
    for (std::size_t hd = 0; hd < heads; ++hd, x += in_step, y += out_step) f(x, y);
  }
}

// Heads ahead whose input the large calls ask the caches for (prefetch_ahead).
inline constexpr std::size_t prefetch_heads = 4;

// Asks the caches for the `bytes` bytes at x moved by prefetch_heads head strides of in_step
// elements: the same channels of a later head. The addresses are integers, never dereferenced (a
// prefetch of memory past the tensor does nothing). Used where the hardware prefetchers alone
// left the loads waiting on memory (docs/benchmarks.md, Intel Xeon, Emerald Rapids):
// - the bf16 bodies of large calls (bf16_chunk), which take about twice the instructions per line
//   of the f16 ones: at [4096, 32, 128] with AVX2, half layout 1.55-1.67x memcpy without and
//   1.41-1.43x with, interleaved 1.50-1.55x and 1.35-1.39x; SSE (half) 3.6-3.7x and 3.0-3.1x;
//   AVX-512 the same within the noise;
// - the AVX-512 register path of the interleaved layout in f32 calls over blocks_outer_max_bytes
//   that do not stream: [512, 32, 128] 1.13-1.17x and 1.04-1.11x. Calls in L1 and L2 (decode)
//   take none: at [1, 32, 128] they cost 1.86x -> 2.3x.
// The float loops past the register path (f32, f16; half layout) gained nothing from them.
template <class T>
inline void prefetch_ahead(const T* x, std::size_t in_step, std::size_t bytes) {
  const std::uintptr_t at =
      reinterpret_cast<std::uintptr_t>(x) + prefetch_heads * in_step * sizeof(T);
  for (std::size_t off = 0; off < bytes; off += 64)
    __builtin_prefetch(reinterpret_cast<const void*>(at + off), 0, 3);
}

// row, or its first n floats copied to `to` (64-byte aligned, room for n) where row is not
// aligned to the size of a vector B.
template <class B>
inline const float* aligned_row(const float* row, float* to, std::size_t n) {
  if (reinterpret_cast<std::uintptr_t>(row) % sizeof(B) == 0) return row;
  std::memcpy(to, row, n * sizeof(float));
  return to;
}

// Large calls past the register path (in_address_order): heads outside, the row's blocks inside,
// each block reloaded from L1 for every head. The half layout's pairs [i0, i0 + len) of token t
// (len a multiple of W, at most row_chunk), rows indexed from pair i0 as in half_f32_heads. Large
// calls used to run one call of the body per head, with a tensor view built for each: 1.6-1.8x
// memcpy at [512, 32, 128] f32 with AVX2 against 1.1-1.3x (AMD Zen 5). In small calls (data in L1
// and L2) this order measured faster for some rows and slower for others than blocks outside and
// heads inside (docs/benchmarks.md, "The AVX2 entry on the same CPU"), which they keep. Out of
// line (one call per token), and called by the driver (float_heads) rather than by the bodies,
// which stay as they were for the small calls.
// Two blocks a step, the a channels' two stores and then the b channels': with 32-byte vectors
// and 64-byte aligned heads, each line of the output is written whole by two stores back to back.
// A block a step wrote half a line of a, half a line of b, the other half of a, ...: 1.40-1.47x
// memcpy at [512, 32, 128] f32 with AVX2 against 1.02-1.08x (Intel Xeon, Emerald Rapids). Lines:
// those pairs of stores streamed (has_line_stream; the driver says when).
template <class Arch, bool Compact, class T, bool Lines = false>
[[gnu::noinline]] void half_heads_outside(const rope_operand<T>* ops, std::size_t n_ops,
                                          std::size_t t, std::size_t h, std::size_t i0,
                                          std::size_t len, const float* ca, const float* sa,
                                          const float* cb, const float* sb) {
  using B = fbatch<Arch>;
  constexpr std::size_t W = B::size;
  // Rows not aligned to the vector size (as a table in a std::vector is not) are copied to
  // aligned stack rows first: reloaded for every head, their loads would split cache lines. An
  // expanded f32 row 16 bytes off: 1.27-1.42x memcpy against 1.10-1.18x aligned, at
  // [512, 32, 128] with AVX2 (AMD Zen 5).
  alignas(64) float rows[4][row_chunk];
  ca = aligned_row<B>(ca, rows[0], len);
  sb = aligned_row<B>(sb, rows[1], len);
  if constexpr (!Compact) {
    sa = aligned_row<B>(sa, rows[2], len);
    cb = aligned_row<B>(cb, rows[3], len);
  }
  for_each_head(ops, n_ops, t, i0, [&](const T* x, T* y) {
    std::size_t m = 0;
    for (; m + 2 * W <= len; m += 2 * W) {
      const B a0 = load_operand<Arch>(x + m), a1 = load_operand<Arch>(x + m + W);
      const B b0 = load_operand<Arch>(x + h + m), b1 = load_operand<Arch>(x + h + m + W);
      const B c0 = B::load_unaligned(ca + m), c1 = B::load_unaligned(ca + m + W);
      const B sb0 = B::load_unaligned(sb + m), sb1 = B::load_unaligned(sb + m + W);
      const B sa0 = Compact ? negate<Arch>(sb0) : B::load_unaligned(sa + m);
      const B sa1 = Compact ? negate<Arch>(sb1) : B::load_unaligned(sa + m + W);
      store_rotated2<Arch, Lines>(y + m, mul_add<Arch>(a0, c0, b0 * sa0),
                                  mul_add<Arch>(a1, c1, b1 * sa1));
      const B cb0 = Compact ? c0 : B::load_unaligned(cb + m);
      const B cb1 = Compact ? c1 : B::load_unaligned(cb + m + W);
      store_rotated2<Arch, Lines>(y + h + m, mul_add<Arch>(b0, cb0, a0 * sb0),
                                  mul_add<Arch>(b1, cb1, a1 * sb1));
    }
    if (m < len) {  // one block left (len is a multiple of W)
      const B c_a = B::load_unaligned(ca + m);
      const B s_b = B::load_unaligned(sb + m);
      const B c_b = Compact ? c_a : B::load_unaligned(cb + m);
      const B s_a = Compact ? negate<Arch>(s_b) : B::load_unaligned(sa + m);
      const B a = load_operand<Arch>(x + m), b = load_operand<Arch>(x + h + m);
      store_rotated<Arch, false>(y + m, mul_add<Arch>(a, c_a, b * s_a));
      store_rotated<Arch, false>(y + h + m, mul_add<Arch>(b, c_b, a * s_b));
    }
  });
}

// The same for the interleaved layout: channels [j0, j0 + len) of token t (len a multiple of W,
// at most 2 row_chunk), C and S in expanded channel order from channel j0; Lines: the two-block
// steps' stores (one line with 32-byte vectors) streamed.
template <class Arch, class T, bool Lines = false>
[[gnu::noinline]] void interleaved_heads_outside(const rope_operand<T>* ops, std::size_t n_ops,
                                                 std::size_t t, std::size_t j0, std::size_t len,
                                                 const float* C, const float* S) {
  using B = fbatch<Arch>;
  constexpr std::size_t W = B::size;
  alignas(64) float rows[2][2 * row_chunk];
  C = aligned_row<B>(C, rows[0], len);
  S = aligned_row<B>(S, rows[1], len);
  for_each_head(ops, n_ops, t, j0, [&](const T* x, T* y) {
    std::size_t m = 0;
    // Two blocks a step, both loads of x first: a loop written so measured 1.03-1.08x memcpy at
    // [512, 32, 128] f32 with AVX2 against 1.05-1.15x a block a step (AMD Zen 5).
    for (; m + 2 * W <= len; m += 2 * W) {
      const B v0 = load_operand<Arch>(x + m), v1 = load_operand<Arch>(x + m + W);
      const B c0 = B::load_unaligned(C + m), c1 = B::load_unaligned(C + m + W);
      const B s0 = B::load_unaligned(S + m), s1 = B::load_unaligned(S + m + W);
      store_rotated2<Arch, Lines>(y + m, mul_add<Arch>(v0, c0, swap_pairs<Arch>(v0) * s0),
                                  mul_add<Arch>(v1, c1, swap_pairs<Arch>(v1) * s1));
    }
    for (; m < len; m += W) {
      const B c = B::load_unaligned(C + m);
      const B sn = B::load_unaligned(S + m);
      const B v = load_operand<Arch>(x + m);
      store_rotated<Arch, false>(y + m, mul_add<Arch>(v, c, swap_pairs<Arch>(v) * sn));
    }
  });
}

// Half layout, pairs [i0, i0 + n) of token t; the rows are indexed by k = i - i0. Compact:
// c = ca, s_b = sb, s_a = -sb (ca == cb and sa == sb are the compact row); expanded: four rows in
// channel order. Stream with 16-bit T: blocks of 2W pairs, each channel's two vectors one line.
// in_address_order (float storage, register path, not streamed): each head's a blocks are all
// loaded before its b blocks; the driver sets it for calls over blocks_outer_max_bytes (the
// register path's comment says why). Always inlined into half_f32_heads (which the compiler may
// keep out of line) and, without the register path, into the decode path (float_heads).
template <class Arch, bool Compact, bool Stream, class T>
[[gnu::always_inline]] inline void half_f32_heads_body(
    const rope_operand<T>* ops, std::size_t n_ops, std::size_t t, std::size_t h, std::size_t i0,
    std::size_t n, const float* ca, const float* sa, const float* cb, const float* sb,
    [[maybe_unused]] bool in_address_order = false) {
  using B = fbatch<Arch>;
  constexpr std::size_t W = B::size;
  constexpr bool stream_one = Stream && std::is_same_v<T, float>;
  std::size_t k = 0;
  if constexpr (row_registers < Arch >> 0) {
    if (row_in_registers<Arch, T>(false, Compact, Stream, n)) {
      // Register path: the whole row in registers, heads outside and the blocks of one head inside,
      // so that each head's channels are read and written in address order. (Blocks outside and
      // heads inside walk the tensor at the head stride, in steps that map to the same few cache
      // sets and 4 KiB offsets: measured up to 1.9x slower on AMD Zen 5.)
      constexpr std::size_t MB = row_registers<Arch> / (Compact ? 3 : 4);
      const std::size_t nb = n / W;
      B c_a[MB], s_a[MB], c_b[MB], s_b[MB];
#pragma GCC unroll 16
      for (std::size_t j = 0; j < MB; ++j) {
        if (j >= nb) break;
        c_a[j] = B::load_unaligned(ca + j * W);
        s_b[j] = B::load_unaligned(sb + j * W);
        c_b[j] = Compact ? c_a[j] : B::load_unaligned(cb + j * W);
        s_a[j] = Compact ? negate<Arch>(s_b[j]) : B::load_unaligned(sa + j * W);
      }
      // bf16: blocks j, j + 1 (one 64-byte line of each half) widened as even and odd elements
      // (widen_bf16: two instructions per vector, no reordering), the row put in that order once.
      std::size_t j0 = 0;
      if constexpr (std::is_same_v<T, bf16> && !Stream) {
        j0 = nb & ~std::size_t{1};
#pragma GCC unroll 8
        for (std::size_t j = 0; j + 1 < MB; j += 2) {
          if (j >= j0) break;
          split_even_odd<Arch>(c_a[j], c_a[j + 1]);
          split_even_odd<Arch>(s_a[j], s_a[j + 1]);
          split_even_odd<Arch>(c_b[j], c_b[j + 1]);
          split_even_odd<Arch>(s_b[j], s_b[j + 1]);
        }
      }
      for (std::size_t o = 0; o < n_ops; ++o) {
        const std::size_t heads = ops[o].in.heads;
        const std::size_t in_step = ops[o].in.head_stride, out_step = ops[o].out.head_stride;
        const T* x = ops[o].in.at(t, 0) + i0;
        T* y = ops[o].out.at(t, 0) + i0;
        for (std::size_t hd = 0; hd < heads; ++hd, x += in_step, y += out_step) {
          if constexpr (Stream && !std::is_same_v<T, float>) {
            // 16-bit, streamed: blocks j, j + 1 narrowed into one whole line (nb is even).
#pragma GCC unroll 8
            for (std::size_t j = 0; j + 1 < MB; j += 2) {
              if (j + 1 >= nb) break;
              const B a0 = load_operand<Arch>(x + j * W), a1 = load_operand<Arch>(x + j * W + W);
              const B b0 = load_operand<Arch>(x + h + j * W);
              const B b1 = load_operand<Arch>(x + h + j * W + W);
              stream_narrowed2<Arch>(y + j * W, mul_add<Arch>(a0, c_a[j], b0 * s_a[j]),
                                     mul_add<Arch>(a1, c_a[j + 1], b1 * s_a[j + 1]));
              stream_narrowed2<Arch>(y + h + j * W, mul_add<Arch>(b0, c_b[j], a0 * s_b[j]),
                                     mul_add<Arch>(b1, c_b[j + 1], a1 * s_b[j + 1]));
            }
            continue;
          }
          if constexpr (std::is_same_v<T, bf16>) {
            const auto* xw = reinterpret_cast<const std::uint16_t*>(x);
            auto* yw = reinterpret_cast<std::uint16_t*>(y);
#pragma GCC unroll 8
            for (std::size_t j = 0; j + 1 < MB; j += 2) {
              if (j >= j0) break;
              B ae, ao, be, bo;
              widen_bf16<Arch>(xw + j * W, ae, ao);
              widen_bf16<Arch>(xw + h + j * W, be, bo);
              store_bf16<Arch, false>(yw + j * W, mul_add<Arch>(ae, c_a[j], be * s_a[j]),
                                      mul_add<Arch>(ao, c_a[j + 1], bo * s_a[j + 1]));
              store_bf16<Arch, false>(yw + h + j * W, mul_add<Arch>(be, c_b[j], ae * s_b[j]),
                                      mul_add<Arch>(bo, c_b[j + 1], ao * s_b[j + 1]));
            }
          }
          if constexpr (!Stream && std::is_same_v<T, float>) {
            // The head's input read in address order, all a blocks and then all b blocks, before
            // any result is stored. Reading a and b block by block (lines 0, 4, 1, 5, ... of a
            // 128-channel f32 head) cost 10-15 % of a [512, 32, 128] call on AMD Zen 5, a copy
            // reading in that order as well; the order of the stores made no difference. The
            // compiler barrier keeps GCC from interleaving the two groups of loads again. Calls
            // whose data stay in L1 or L2 (decode) keep the block-by-block order below, which
            // the compiler schedules freely: there the barrier measured up to 5 % slower.
            if (in_address_order) {
              B a[MB], b[MB];
#pragma GCC unroll 16
              for (std::size_t j = 0; j < MB; ++j) {
                if (j >= nb) break;
                a[j] = load_operand<Arch>(x + j * W);
              }
              asm volatile("" ::: "memory");
#pragma GCC unroll 16
              for (std::size_t j = 0; j < MB; ++j) {
                if (j >= nb) break;
                b[j] = load_operand<Arch>(x + h + j * W);
              }
#pragma GCC unroll 16
              for (std::size_t j = 0; j < MB; ++j) {
                if (j >= nb) break;
                store_rotated<Arch, false>(y + j * W, mul_add<Arch>(a[j], c_a[j], b[j] * s_a[j]));
              }
#pragma GCC unroll 16
              for (std::size_t j = 0; j < MB; ++j) {
                if (j >= nb) break;
                store_rotated<Arch, false>(y + h + j * W,
                                           mul_add<Arch>(b[j], c_b[j], a[j] * s_b[j]));
              }
              continue;
            }
          }
#pragma GCC unroll 16
          for (std::size_t j = 0; j < MB; ++j) {
            if (j >= nb) break;
            if (j < j0) continue;
            const B a = load_operand<Arch>(x + j * W), b = load_operand<Arch>(x + h + j * W);
            store_rotated<Arch, stream_one>(y + j * W, mul_add<Arch>(a, c_a[j], b * s_a[j]));
            store_rotated<Arch, stream_one>(y + h + j * W, mul_add<Arch>(b, c_b[j], a * s_b[j]));
          }
        }
      }
      k = nb * W;
    }
  }
  // Past the register path (SSE, AVX2, NEON): blocks outside and heads inside, two blocks a step,
  // so that each head's step has twice the arithmetic per loop increment and branch. A block a
  // step: [1, 32, 128] f32 3.4-3.5x memcpy with AVX2 on an Intel Xeon (Emerald Rapids), two:
  // 2.4x, where the rotation's multiplies and FMAs alone take 1.8x (docs/benchmarks.md). bf16:
  // blocks k and k + W of each half are one load, widened as even and odd elements (widen_bf16),
  // the row's blocks put in that order once per token (split_even_odd) and the results narrowed
  // two vectors at a time (store_bf16): 11-12x memcpy at [1, 32, 128] with AVX2 against 16-17x
  // a vector at a time (load_operand, store_rotated).
  if constexpr (several_blocks_a_step<Arch> && !Stream && std::is_same_v<T, bf16>) {
    for (; k + 2 * W <= n; k += 2 * W) {
      B c_a0 = B::load_unaligned(ca + k), c_a1 = B::load_unaligned(ca + k + W);
      B s_b0 = B::load_unaligned(sb + k), s_b1 = B::load_unaligned(sb + k + W);
      split_even_odd<Arch>(c_a0, c_a1);
      split_even_odd<Arch>(s_b0, s_b1);
      B c_b0 = c_a0, c_b1 = c_a1, s_a0 = negate<Arch>(s_b0), s_a1 = negate<Arch>(s_b1);
      if constexpr (!Compact) {
        c_b0 = B::load_unaligned(cb + k);
        c_b1 = B::load_unaligned(cb + k + W);
        s_a0 = B::load_unaligned(sa + k);
        s_a1 = B::load_unaligned(sa + k + W);
        split_even_odd<Arch>(c_b0, c_b1);
        split_even_odd<Arch>(s_a0, s_a1);
      }
      for (std::size_t o = 0; o < n_ops; ++o) {
        const std::size_t heads = ops[o].in.heads;
        const std::size_t in_step = ops[o].in.head_stride, out_step = ops[o].out.head_stride;
        const auto* x = reinterpret_cast<const std::uint16_t*>(ops[o].in.at(t, 0) + i0 + k);
        auto* y = reinterpret_cast<std::uint16_t*>(ops[o].out.at(t, 0) + i0 + k);
        for (std::size_t hd = 0; hd < heads; ++hd, x += in_step, y += out_step) {
          B ae, ao, be, bo;
          widen_bf16<Arch>(x, ae, ao);
          widen_bf16<Arch>(x + h, be, bo);
          store_bf16<Arch, false>(y, mul_add<Arch>(ae, c_a0, be * s_a0),
                                  mul_add<Arch>(ao, c_a1, bo * s_a1));
          store_bf16<Arch, false>(y + h, mul_add<Arch>(be, c_b0, ae * s_b0),
                                  mul_add<Arch>(bo, c_b1, ao * s_b1));
        }
      }
    }
  }
  // Two blocks a step: 16-bit storage streamed (a line per channel and step), and the loops past
  // the register path above.
  if constexpr ((Stream && !std::is_same_v<T, float>) ||
                (several_blocks_a_step<Arch> && (!Stream || std::is_same_v<T, float>))) {
    for (; k + 2 * W <= n; k += 2 * W) {
      const B c_a0 = B::load_unaligned(ca + k), c_a1 = B::load_unaligned(ca + k + W);
      const B s_b0 = B::load_unaligned(sb + k), s_b1 = B::load_unaligned(sb + k + W);
      const B c_b0 = Compact ? c_a0 : B::load_unaligned(cb + k);
      const B c_b1 = Compact ? c_a1 : B::load_unaligned(cb + k + W);
      const B s_a0 = Compact ? negate<Arch>(s_b0) : B::load_unaligned(sa + k);
      const B s_a1 = Compact ? negate<Arch>(s_b1) : B::load_unaligned(sa + k + W);
      for (std::size_t o = 0; o < n_ops; ++o) {
        const std::size_t heads = ops[o].in.heads;
        const std::size_t in_step = ops[o].in.head_stride, out_step = ops[o].out.head_stride;
        const T* x = ops[o].in.at(t, 0) + i0 + k;
        T* y = ops[o].out.at(t, 0) + i0 + k;
        for (std::size_t hd = 0; hd < heads; ++hd, x += in_step, y += out_step) {
          const B a0 = load_operand<Arch>(x), a1 = load_operand<Arch>(x + W);
          const B b0 = load_operand<Arch>(x + h), b1 = load_operand<Arch>(x + h + W);
          if constexpr (Stream && !std::is_same_v<T, float>) {
            stream_narrowed2<Arch>(y, mul_add<Arch>(a0, c_a0, b0 * s_a0),
                                   mul_add<Arch>(a1, c_a1, b1 * s_a1));
            stream_narrowed2<Arch>(y + h, mul_add<Arch>(b0, c_b0, a0 * s_b0),
                                   mul_add<Arch>(b1, c_b1, a1 * s_b1));
          } else {
            store_rotated<Arch, stream_one>(y, mul_add<Arch>(a0, c_a0, b0 * s_a0));
            store_rotated<Arch, stream_one>(y + W, mul_add<Arch>(a1, c_a1, b1 * s_a1));
            store_rotated<Arch, stream_one>(y + h, mul_add<Arch>(b0, c_b0, a0 * s_b0));
            store_rotated<Arch, stream_one>(y + h + W, mul_add<Arch>(b1, c_b1, a1 * s_b1));
          }
        }
      }
    }
  }
  for (; k + W <= n; k += W) {
    const B c_a = B::load_unaligned(ca + k);
    const B s_b = B::load_unaligned(sb + k);
    const B c_b = Compact ? c_a : B::load_unaligned(cb + k);
    const B s_a = Compact ? negate<Arch>(s_b) : B::load_unaligned(sa + k);
    for (std::size_t o = 0; o < n_ops; ++o) {
      // Locals, so that the compiler need not reload them after every store through y.
      const std::size_t heads = ops[o].in.heads;
      const std::size_t in_step = ops[o].in.head_stride, out_step = ops[o].out.head_stride;
      const T* x = ops[o].in.at(t, 0) + i0 + k;
      T* y = ops[o].out.at(t, 0) + i0 + k;
      for (std::size_t hd = 0; hd < heads; ++hd, x += in_step, y += out_step) {
        const B a = load_operand<Arch>(x), b = load_operand<Arch>(x + h);
        const B ra = mul_add<Arch>(a, c_a, b * s_a);
        const B rb = mul_add<Arch>(b, c_b, a * s_b);
        store_rotated<Arch, stream_one>(y, ra);
        store_rotated<Arch, stream_one>(y + h, rb);
      }
    }
  }
  if (k == n) return;
  if constexpr (!std::is_same_v<T, float>) {
    // 16-bit storage: the last n - k < W pairs as one partial vector (lanes are independent, so
    // the same bits as whole ones), converted like the others.
    const std::size_t r = n - k;
    const B c_a = load_widened_n<Arch>(ca + k, r);
    const B s_b = load_widened_n<Arch>(sb + k, r);
    const B c_b = Compact ? c_a : load_widened_n<Arch>(cb + k, r);
    const B s_a = Compact ? negate<Arch>(s_b) : load_widened_n<Arch>(sa + k, r);
    for (std::size_t o = 0; o < n_ops; ++o) {
      for (std::size_t hd = 0; hd < ops[o].in.heads; ++hd) {
        const T* x = ops[o].in.at(t, hd) + i0 + k;
        T* y = ops[o].out.at(t, hd) + i0 + k;
        const B a = load_operand_n<Arch>(x, r), b = load_operand_n<Arch>(x + h, r);
        const B ra = mul_add<Arch>(a, c_a, b * s_a);
        const B rb = mul_add<Arch>(b, c_b, a * s_b);
        store_narrowed_n<Arch>(y, ra, r);
        store_narrowed_n<Arch>(y + h, rb, r);
      }
    }
  } else {
    for (std::size_t o = 0; o < n_ops; ++o) {
      for (std::size_t hd = 0; hd < ops[o].in.heads; ++hd) {
        const float* x = ops[o].in.at(t, hd) + i0;
        float* y = ops[o].out.at(t, hd) + i0;
        for (std::size_t m = k; m < n; ++m) {
          const float s_a = Compact ? negate1(sb[m]) : sa[m];
          pair1<has_fma<Arch>>(x[m], x[m + h], ca[m], s_a, Compact ? ca[m] : cb[m], sb[m], y[m],
                               y[m + h]);
        }
      }
    }
  }
}

// Interleaved layout, pairs [i0, i0 + n) of token t = channels [2 i0, 2 i0 + 2n); C, S in
// expanded channel order from channel 2 i0. Stream with 16-bit T: blocks of 2W channels, one line.
// CompactRow: C and S are the compact row's cos and sin of those pairs instead, expanded in
// registers (expand_block); only where the register path takes the whole row
// (compact_row_in_registers). Always inlined where half_f32_heads_body is.
template <class Arch, bool Stream, class T, bool CompactRow = false>
[[gnu::always_inline]] inline void interleaved_f32_heads_body(
    const rope_operand<T>* ops, std::size_t n_ops, std::size_t t, std::size_t i0, std::size_t n,
    const float* C, const float* S, [[maybe_unused]] bool in_address_order = false) {
  using B = fbatch<Arch>;
  constexpr std::size_t W = B::size;
  constexpr bool stream_one = Stream && std::is_same_v<T, float>;
  const std::size_t channels = 2 * n;
  std::size_t j = 0;
  if constexpr (row_registers < Arch >> 0) {
    if (row_in_registers<Arch, T>(true, false, Stream, n)) {
      // Register path, as in half_f32_heads.
      constexpr std::size_t MB = row_registers<Arch> / 2;
      const std::size_t nb = channels / W;
      B c[MB], sn[MB];
      if constexpr (CompactRow) {
#pragma GCC unroll 8
        for (std::size_t m = 0; m + 1 < MB; m += 2) {
          if (m >= nb) break;
          expand_block<Arch>(C + m * W / 2, S + m * W / 2, c[m], c[m + 1], sn[m], sn[m + 1]);
        }
      } else {
#pragma GCC unroll 16
        for (std::size_t m = 0; m < MB; ++m) {
          if (m >= nb) break;
          c[m] = B::load_unaligned(C + m * W);
          sn[m] = B::load_unaligned(S + m * W);
        }
      }
      // bf16: blocks m, m + 1 (one 64-byte line) widened as even and odd elements, which are the
      // a and b channels of 16 pairs: no lane swap, the row put in that order once.
      std::size_t m0 = 0;
      if constexpr (std::is_same_v<T, bf16> && !Stream) {
        m0 = nb & ~std::size_t{1};
#pragma GCC unroll 8
        for (std::size_t m = 0; m + 1 < MB; m += 2) {
          if (m >= m0) break;
          split_even_odd<Arch>(c[m], c[m + 1]);
          split_even_odd<Arch>(sn[m], sn[m + 1]);
        }
      }
      for (std::size_t o = 0; o < n_ops; ++o) {
        const std::size_t heads = ops[o].in.heads;
        const std::size_t in_step = ops[o].in.head_stride, out_step = ops[o].out.head_stride;
        const T* x = ops[o].in.at(t, 0) + 2 * i0;
        T* y = ops[o].out.at(t, 0) + 2 * i0;
        for (std::size_t hd = 0; hd < heads; ++hd, x += in_step, y += out_step) {
          if constexpr (std::is_same_v<T, float> && !Stream) {
            // Large calls (the driver's in_address_order): the input prefetched (prefetch_ahead).
            if (in_address_order) prefetch_ahead(x, in_step, nb * W * sizeof(T));
          }
          if constexpr (Stream && !std::is_same_v<T, float>) {
            // 16-bit, streamed: blocks m, m + 1 narrowed into one whole line (nb is even).
#pragma GCC unroll 8
            for (std::size_t m = 0; m + 1 < MB; m += 2) {
              if (m + 1 >= nb) break;
              const B v0 = load_operand<Arch>(x + m * W), v1 = load_operand<Arch>(x + m * W + W);
              stream_narrowed2<Arch>(y + m * W,
                                     mul_add<Arch>(v0, c[m], swap_pairs<Arch>(v0) * sn[m]),
                                     mul_add<Arch>(v1, c[m + 1], swap_pairs<Arch>(v1) * sn[m + 1]));
            }
            continue;
          }
          if constexpr (std::is_same_v<T, bf16>) {
            const auto* xw = reinterpret_cast<const std::uint16_t*>(x);
            auto* yw = reinterpret_cast<std::uint16_t*>(y);
#pragma GCC unroll 8
            for (std::size_t m = 0; m + 1 < MB; m += 2) {
              if (m >= m0) break;
              B e, od;
              widen_bf16<Arch>(xw + m * W, e, od);
              store_bf16<Arch, false>(yw + m * W, mul_add<Arch>(e, c[m], od * sn[m]),
                                      mul_add<Arch>(od, c[m + 1], e * sn[m + 1]));
            }
          }
#pragma GCC unroll 16
          for (std::size_t m = 0; m < MB; ++m) {
            if (m >= nb) break;
            if (m < m0) continue;
            const B v = load_operand<Arch>(x + m * W);
            store_rotated<Arch, stream_one>(y + m * W,
                                            mul_add<Arch>(v, c[m], swap_pairs<Arch>(v) * sn[m]));
          }
        }
      }
      j = nb * W;
    }
  }
  if constexpr (CompactRow) return;  // the whole row went through the register path
  // Past the register path, as in half_f32_heads_body: bf16 two blocks a step as even and odd
  // elements (the a and b channels: no lane swap); float and f16 four blocks a step (a block a
  // step: [1, 32, 128] f32 4.9-5.1x memcpy with AVX2 on an Intel Xeon, two: 3.3-3.4x, four:
  // 2.9x; bf16 with four measured slower than with two).
  if constexpr (several_blocks_a_step<Arch> && !Stream && std::is_same_v<T, bf16>) {
    for (; j + 2 * W <= channels; j += 2 * W) {
      B c0 = B::load_unaligned(C + j), c1 = B::load_unaligned(C + j + W);
      B s0 = B::load_unaligned(S + j), s1 = B::load_unaligned(S + j + W);
      split_even_odd<Arch>(c0, c1);
      split_even_odd<Arch>(s0, s1);
      for (std::size_t o = 0; o < n_ops; ++o) {
        const std::size_t heads = ops[o].in.heads;
        const std::size_t in_step = ops[o].in.head_stride, out_step = ops[o].out.head_stride;
        const auto* x = reinterpret_cast<const std::uint16_t*>(ops[o].in.at(t, 0) + 2 * i0 + j);
        auto* y = reinterpret_cast<std::uint16_t*>(ops[o].out.at(t, 0) + 2 * i0 + j);
        for (std::size_t hd = 0; hd < heads; ++hd, x += in_step, y += out_step) {
          B e, od;
          widen_bf16<Arch>(x, e, od);
          store_bf16<Arch, false>(y, mul_add<Arch>(e, c0, od * s0), mul_add<Arch>(od, c1, e * s1));
        }
      }
    }
  }
  if constexpr (several_blocks_a_step<Arch> && (!Stream || std::is_same_v<T, float>)) {
    for (; !std::is_same_v<T, bf16> && j + 4 * W <= channels; j += 4 * W) {
      const B c0 = B::load_unaligned(C + j), c1 = B::load_unaligned(C + j + W);
      const B c2 = B::load_unaligned(C + j + 2 * W), c3 = B::load_unaligned(C + j + 3 * W);
      const B s0 = B::load_unaligned(S + j), s1 = B::load_unaligned(S + j + W);
      const B s2 = B::load_unaligned(S + j + 2 * W), s3 = B::load_unaligned(S + j + 3 * W);
      for (std::size_t o = 0; o < n_ops; ++o) {
        const std::size_t heads = ops[o].in.heads;
        const std::size_t in_step = ops[o].in.head_stride, out_step = ops[o].out.head_stride;
        const T* x = ops[o].in.at(t, 0) + 2 * i0 + j;
        T* y = ops[o].out.at(t, 0) + 2 * i0 + j;
        for (std::size_t hd = 0; hd < heads; ++hd, x += in_step, y += out_step) {
          const B v0 = load_operand<Arch>(x), v1 = load_operand<Arch>(x + W);
          const B v2 = load_operand<Arch>(x + 2 * W), v3 = load_operand<Arch>(x + 3 * W);
          store_rotated<Arch, stream_one>(y, mul_add<Arch>(v0, c0, swap_pairs<Arch>(v0) * s0));
          store_rotated<Arch, stream_one>(y + W, mul_add<Arch>(v1, c1, swap_pairs<Arch>(v1) * s1));
          store_rotated<Arch, stream_one>(y + 2 * W,
                                          mul_add<Arch>(v2, c2, swap_pairs<Arch>(v2) * s2));
          store_rotated<Arch, stream_one>(y + 3 * W,
                                          mul_add<Arch>(v3, c3, swap_pairs<Arch>(v3) * s3));
        }
      }
    }
  }
  // Two blocks a step: 16-bit storage streamed (one line a step), and the loops past the register
  // path (after the four-block steps above).
  if constexpr ((Stream && !std::is_same_v<T, float>) ||
                (several_blocks_a_step<Arch> && (!Stream || std::is_same_v<T, float>))) {
    for (; j + 2 * W <= channels; j += 2 * W) {
      const B c0 = B::load_unaligned(C + j), c1 = B::load_unaligned(C + j + W);
      const B s0 = B::load_unaligned(S + j), s1 = B::load_unaligned(S + j + W);
      for (std::size_t o = 0; o < n_ops; ++o) {
        const std::size_t heads = ops[o].in.heads;
        const std::size_t in_step = ops[o].in.head_stride, out_step = ops[o].out.head_stride;
        const T* x = ops[o].in.at(t, 0) + 2 * i0 + j;
        T* y = ops[o].out.at(t, 0) + 2 * i0 + j;
        for (std::size_t hd = 0; hd < heads; ++hd, x += in_step, y += out_step) {
          const B v0 = load_operand<Arch>(x), v1 = load_operand<Arch>(x + W);
          if constexpr (Stream && !std::is_same_v<T, float>) {
            stream_narrowed2<Arch>(y, mul_add<Arch>(v0, c0, swap_pairs<Arch>(v0) * s0),
                                   mul_add<Arch>(v1, c1, swap_pairs<Arch>(v1) * s1));
          } else {
            store_rotated<Arch, stream_one>(y, mul_add<Arch>(v0, c0, swap_pairs<Arch>(v0) * s0));
            store_rotated<Arch, stream_one>(y + W,
                                            mul_add<Arch>(v1, c1, swap_pairs<Arch>(v1) * s1));
          }
        }
      }
    }
  }
  for (; j + W <= channels; j += W) {
    const B c = B::load_unaligned(C + j);
    const B sn = B::load_unaligned(S + j);
    for (std::size_t o = 0; o < n_ops; ++o) {
      const std::size_t heads = ops[o].in.heads;
      const std::size_t in_step = ops[o].in.head_stride, out_step = ops[o].out.head_stride;
      const T* x = ops[o].in.at(t, 0) + 2 * i0 + j;
      T* y = ops[o].out.at(t, 0) + 2 * i0 + j;
      for (std::size_t hd = 0; hd < heads; ++hd, x += in_step, y += out_step) {
        const B v = load_operand<Arch>(x);
        store_rotated<Arch, stream_one>(y, mul_add<Arch>(v, c, swap_pairs<Arch>(v) * sn));
      }
    }
  }
  if (j == channels) return;
  if constexpr (!std::is_same_v<T, float>) {
    // 16-bit storage: the last channels - j < W channels (whole pairs) as one partial vector.
    const std::size_t r = channels - j;
    const B c = load_widened_n<Arch>(C + j, r);
    const B sn = load_widened_n<Arch>(S + j, r);
    for (std::size_t o = 0; o < n_ops; ++o) {
      for (std::size_t hd = 0; hd < ops[o].in.heads; ++hd) {
        const B v = load_operand_n<Arch>(ops[o].in.at(t, hd) + 2 * i0 + j, r);
        store_narrowed_n<Arch>(ops[o].out.at(t, hd) + 2 * i0 + j,
                               mul_add<Arch>(v, c, swap_pairs<Arch>(v) * sn), r);
      }
    }
  } else {
    for (std::size_t o = 0; o < n_ops; ++o) {
      for (std::size_t hd = 0; hd < ops[o].in.heads; ++hd) {
        const float* x = ops[o].in.at(t, hd) + 2 * i0;
        float* y = ops[o].out.at(t, hd) + 2 * i0;
        for (std::size_t m = j; m < channels; m += 2) {
          pair1<has_fma<Arch>>(x[m], x[m + 1], C[m], S[m], C[m + 1], S[m + 1], y[m], y[m + 1]);
        }
      }
    }
  }
}

// The bodies where the compiler chooses whether to inline them (prefill, large calls, AVX-512
// decode). In the AVX2 decode path GCC 12 kept half_f32_heads out of line once the driver grew
// (the heads-outside calls): a [1, 32, 128] f16 call 270 ns against 240 ns inlined, the same
// loop (AMD Zen 5, each the faster of the two times the call takes by the stack's placement:
// 235-320 ns with the same binary, by the size of the environment).
template <class Arch, bool Compact, bool Stream, class T>
inline void half_f32_heads(const rope_operand<T>* ops, std::size_t n_ops, std::size_t t,
                           std::size_t h, std::size_t i0, std::size_t n, const float* ca,
                           const float* sa, const float* cb, const float* sb,
                           bool in_address_order = false) {
  half_f32_heads_body<Arch, Compact, Stream, T>(ops, n_ops, t, h, i0, n, ca, sa, cb, sb,
                                                in_address_order);
}

template <class Arch, bool Stream, class T, bool CompactRow = false>
inline void interleaved_f32_heads(const rope_operand<T>* ops, std::size_t n_ops, std::size_t t,
                                  std::size_t i0, std::size_t n, const float* C, const float* S,
                                  bool in_address_order = false) {
  interleaved_f32_heads_body<Arch, Stream, T, CompactRow>(ops, n_ops, t, i0, n, C, S,
                                                          in_address_order);
}

}  // namespace posenc::kernels::simd::detail
