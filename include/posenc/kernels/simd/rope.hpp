// RoPE kernels with xsimd, for one architecture Arch (xsimd 8.1 or later): the operation of
// rope_reference.hpp, bit for bit. For every token, head and pair (a, b) of channels
// (pair_channels, spec/rope.hpp)
//   y_a = x_a * c + x_b * s_a,   y_b = x_b * c_b + x_a * s_b      (s_a = -sin_i, s_b = sin_i)
// (RoFormer eq. 34; HF modeling_llama.py rotate_half for the half layout, ggml ops.cpp
// rope NORM / NEOX modes for interleaved / half), computed in float and rounded once to the storage
// type, with the FMA pattern of rope_reference(..., fma_mode_of<Arch>):
//   fused:   y = fma(x, c, x' * s)   (Arch has FMA: fma3<sse4_2>, fma3<avx>, fma3<avx2>, fma4,
//            avx512f and above, neon64, and neon where the target has VFPv4)
//   unfused: y = (x * c) + (x' * s)
// Every lane computes its channel with exactly these two or three IEEE operations, so the vector
// body and the scalar tail (std::fma when fused) give the reference's bits; translation units
// that instantiate these templates must not let the compiler contract x * c + t into an FMA on
// their own (GCC: -ffp-contract=off, the default in ISO modes such as -std=c++20; Clang:
// -ffp-contract=off).
//
// How the lanes are fed (all loads and stores unaligned; no allocation, no exceptions):
// - float, half layout: x_a and x_b are two loads at i and i + R/2; compact cos/sin are used as
//   they are (s_a = -s by flipping the sign bit, exact), expanded rows straight.
// - float, interleaved: y = x * C + swap(x) * S with swap exchanging adjacent lanes (a swizzle)
//   and C, S in the expanded channel order; a compact row is expanded once per token into a stack
//   buffer (chunks of row_chunk pairs) and shared by all heads.
// - bf16: 2W bf16 values are loaded as W 32-bit words; element 2k is (word << 16) and element
//   2k+1 is (word & 0xffff0000), both exact floats. For the interleaved layout these are exactly
//   the a and b channels of W pairs, so a compact row is used as it is; otherwise the row is
//   permuted once per token into the lane order. Narrowing is to_bf16's rounding (add 0x7fff plus
//   the lowest kept bit, NaN kept and made quiet) in 32-bit integer lanes, or AVX-512 BF16's
//   vcvtne2ps2bf16 on the avx512bf16 entry (a vector holding a subnormal: the integer rounding).
//   Calls that write at most blocks_outer_max_bytes (decode) run the float bodies instead: with
//   AVX-512 their register path, which loads bf16 as even and odd elements too (its row put in
//   that order once per token, in registers); elsewhere widening and narrowing each vector
//   (detail/batch.hpp), reusing each block of the row for every head.
// - f16 (and _Float16): the float bodies, each vector widened on load and narrowed on store by
//   load_operand / store_narrowed (detail/batch.hpp: F16C or AVX-512F conversions, integer code
//   on SSE, FCVTL / FCVTN on AArch64), giving the bits of to_float and to_f16; the last vector of
//   a row that is not a multiple of W goes through a stack buffer, converted the same way. Large
//   aligned outputs are streamed two vectors (one 64-byte line) at a time (AVX-512).
// - Large aligned float outputs on AVX and AVX2 (has_line_stream): the loops over every head of a
//   token in one pass stream two 32-byte stores to a line, back to back; nothing else streams.
// Rows past the table with an on_the_fly config are computed in chunks of on_the_fly_chunk pairs
// by detail::on_the_fly_row (the function every table entry comes from) into stack buffers.
//
// Bit-identical results hold for every input in which no pair holds two NaNs: when both x_a and
// x_b are NaN, IEEE 754 leaves open which payload an operation returns, and the scalar code's
// operand order is the compiler's choice.
//
// Files: rope_ops.hpp (FMA pattern, multiply-add, lane swap, negation), rope_f32.hpp (float
// bodies), rope_bf16.hpp (bf16 bodies), rope_rows.hpp (row sources, compact-to-expanded rows),
// and this one: the driver (chunks of a row, operands, loop order, streaming) and the entry
// points.
#pragma once

#include <xsimd/xsimd.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <posenc/kernels/error.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>

// GCC 12's AVX-512 intrinsics (_mm512_undefined_ps and friends, used by shifts and permutes)
// initialise a register from itself, which -Wmaybe-uninitialized (and, in sanitizer builds,
// -Wuninitialized) reports once inlined here (GCC bug 105593, fixed in GCC 13). The region covers
// the parts as well: they are included inside it.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <posenc/kernels/simd/rope_bf16.hpp>
#include <posenc/kernels/simd/rope_f32.hpp>
#include <posenc/kernels/simd/rope_ops.hpp>
#include <posenc/kernels/simd/rope_rows.hpp>

namespace posenc::kernels::simd {

namespace detail {

// ---- the driver ---------------------------------------------------------------------------------

template <class T>
using bits_t = std::conditional_t<std::is_same_v<T, float>, float, std::uint16_t>;

template <class T>
inline const bits_t<T>* bits_of(const T* p) {
  if constexpr (std::is_same_v<T, float>) {
    return p;
  } else {
    return &p->bits;  // bf16 and f16 are standard-layout wrappers of one uint16_t
  }
}
template <class T>
inline bits_t<T>* bits_of(T* p) {
  if constexpr (std::is_same_v<T, float>) {
    return p;
  } else {
    return &p->bits;
  }
}

// The bf16 kernels for pairs [i0, i0 + n) of token t's row, every head of every operand.
template <class Arch, bool Stream>
void bf16_chunk(const rope_table& table, const row_source& r, std::size_t i0, std::size_t n,
                const rope_operand<bf16>* ops, std::size_t n_ops, std::size_t t, row_buffers& buf) {
  const std::size_t h = table.rotary_dim / 2;
  const bool inter = table.layout == rope_layout::interleaved;
  if (inter && r.compact) {
    for (std::size_t o = 0; o < n_ops; ++o)
      for (std::size_t hd = 0; hd < ops[o].in.heads; ++hd) {
        const std::uint16_t* x = bits_of(ops[o].in.at(t, hd)) + 2 * i0;
        prefetch_ahead(x, ops[o].in.head_stride, 2 * n * sizeof(std::uint16_t));
        interleaved_bf16<Arch, true, Stream>(x, bits_of(ops[o].out.at(t, hd)) + 2 * i0, n, r.cos,
                                             r.sin, r.cos, r.sin);
      }
    return;
  }

  // The rows in lane order (vector copies, shuffles and sign flips): interleaved = pair order;
  // half = within each block of 2W pairs the W even pairs, then the W odd ones (the lanes of
  // widen_bf16), pairs after the last full block in plain order.
  constexpr std::size_t W = fbatch<Arch>::size;
  float* const ca = buf.v[0];
  float* const sa = buf.v[1];
  float* cb = buf.v[2];
  float* const sb = buf.v[3];
  if (inter) {
    // Expanded rows: channel 2i holds pair i's a values, 2i + 1 its b values.
    deinterleave<Arch>(r.cos + 2 * i0, ca, cb, n);
    deinterleave<Arch>(r.sin + 2 * i0, sa, sb, n);
  } else {
    const std::size_t full = n / (2 * W) * (2 * W);
    const auto lane_order = [&](const float* src, float* dst) {
      for (std::size_t blk = 0; blk < full; blk += 2 * W)
        deinterleave<Arch>(src + blk, dst + blk, dst + blk + W, W);
      std::memcpy(dst + full, src + full, (n - full) * sizeof(float));
    };
    if (r.compact) {
      // c_a = c_b = cos, s_b = sin, s_a = -sin.
      lane_order(r.cos, ca);
      lane_order(r.sin, sb);
      negate_row<Arch>(sb, sa, n);
      cb = ca;
    } else {
      lane_order(r.cos + i0, ca);
      lane_order(r.sin + i0, sa);
      lane_order(r.cos + h + i0, cb);
      lane_order(r.sin + h + i0, sb);
    }
  }
  for (std::size_t o = 0; o < n_ops; ++o) {
    for (std::size_t hd = 0; hd < ops[o].in.heads; ++hd) {
      const std::uint16_t* x = bits_of(ops[o].in.at(t, hd));
      std::uint16_t* y = bits_of(ops[o].out.at(t, hd));
      if (inter) {
        prefetch_ahead(x + 2 * i0, ops[o].in.head_stride, 2 * n * sizeof(std::uint16_t));
        interleaved_bf16<Arch, false, Stream>(x + 2 * i0, y + 2 * i0, n, ca, sa, cb, sb);
      } else {
        prefetch_ahead(x + i0, ops[o].in.head_stride, n * sizeof(std::uint16_t));
        prefetch_ahead(x + h + i0, ops[o].in.head_stride, n * sizeof(std::uint16_t));
        half_bf16<Arch, Stream>(x + i0, x + h + i0, y + i0, y + h + i0, n, ca, sa, cb, sb);
      }
    }
  }
}

// The float bodies for the pairs [i0, i0 + n) of token t's row (source r), every head of every
// operand. float, f16 and _Float16 share them: 16-bit storage is widened and narrowed a vector at a
// time (detail/batch.hpp), streamed two vectors (one line) at a time. compact_in_registers: the
// interleaved compact row goes to the register path as it is (compact_row_in_registers); C, S:
// otherwise an interleaved row in expanded channel order (unused in the half layout). Always
// inlined, like run_decode: in the dispatch library, whose ISA translation units instantiate
// every kernel for three storage types, GCC 12 kept both out of line (check_rope_call too), three
// calls between a decode call and its body: about 5 ns of a [1, 1, 128] f16 call, 28 ns -> 23 ns
// (AMD Zen 5). Decode: called by the decode path (inline_body below).
template <class Arch, bool Stream, class T, bool Decode = false>
[[gnu::always_inline]] inline void float_heads(const rope_table& table, const row_source& r,
                                               std::size_t i0, std::size_t n,
                                               const rope_operand<T>* ops, std::size_t n_ops,
                                               std::size_t t, bool compact_in_registers,
                                               const float* C, const float* S,
                                               bool in_address_order, bool lines = false) {
  const std::size_t h = table.rotary_dim / 2;
  const bool inter = table.layout == rope_layout::interleaved;
  // The pairs [i0 + done, i0 + n) go to the bodies below; the compact half-layout rows are
  // indexed from pair i0, the expanded ones by channel.
  std::size_t done = 0;
  if constexpr (!Stream && !std::is_same_v<T, bf16>) {
    // Large calls past the register path: heads outside and the row's whole vector blocks inside
    // (half_heads_outside, rope_f32.hpp), the rest (under a vector of pairs) by the bodies. (bf16
    // rows past the register path have bodies of their own in large calls: apply_chunk.)
    constexpr std::size_t W = fbatch<Arch>::size;
    if (in_address_order && !compact_in_registers &&
        !row_in_registers<Arch, T>(inter, r.compact, false, n)) {
      // lines: streamed a line at a time (has_line_stream; run_rows says when).
      const auto outside = [&]<bool Lines>() {
        if (inter) {
          const std::size_t channels = 2 * n / W * W;
          interleaved_heads_outside<Arch, T, Lines>(ops, n_ops, t, 2 * i0, channels, C, S);
          done = channels / 2;
        } else {
          done = n / W * W;
          if (r.compact)
            half_heads_outside<Arch, true, T, Lines>(ops, n_ops, t, h, i0, done, r.cos, r.sin,
                                                     r.cos, r.sin);
          else
            half_heads_outside<Arch, false, T, Lines>(ops, n_ops, t, h, i0, done, r.cos + i0,
                                                      r.sin + i0, r.cos + h + i0, r.sin + h + i0);
        }
      };
      if constexpr (has_line_stream<Arch> && std::is_same_v<T, float>) {
        if (lines)
          outside.template operator()<true>();
        else
          outside.template operator()<false>();
      } else {
        outside.template operator()<false>();
      }
      if (done == n) return;
    }
  }
  // Decode calls inline the bodies where those have no register path (SSE, AVX2, NEON): small
  // bodies, of which GCC 12 kept some out of line (half_f32_heads says what that cost). The
  // AVX-512 bodies, several times larger, stay where the compiler puts them.
  constexpr bool inline_body = Decode && row_registers<Arch> == 0;
  const auto half = [&]<bool Compact>(const float* ca, const float* sa, const float* cb,
                                      const float* sb) {
    if constexpr (inline_body)
      half_f32_heads_body<Arch, Compact, Stream>(ops, n_ops, t, h, i0 + done, n - done, ca, sa, cb,
                                                 sb, in_address_order);
    else
      half_f32_heads<Arch, Compact, Stream>(ops, n_ops, t, h, i0 + done, n - done, ca, sa, cb, sb,
                                            in_address_order);
  };
  const auto interleaved = [&]<bool CompactRow>(const float* c, const float* s) {
    const std::size_t from = CompactRow ? 0 : done;
    if constexpr (inline_body)
      interleaved_f32_heads_body<Arch, Stream, T, CompactRow>(ops, n_ops, t, i0 + from, n - from, c,
                                                              s, in_address_order);
    else
      interleaved_f32_heads<Arch, Stream, T, CompactRow>(ops, n_ops, t, i0 + from, n - from, c, s,
                                                         in_address_order);
  };
  if (compact_in_registers) {
    if constexpr (!Stream) interleaved.template operator()<true>(r.cos, r.sin);
  } else if (inter) {
    interleaved.template operator()<false>(C + 2 * done, S + 2 * done);
  } else if (r.compact) {
    half.template operator()<true>(r.cos + done, r.sin + done, r.cos + done, r.sin + done);
  } else {
    const std::size_t a = i0 + done;
    half.template operator()<false>(r.cos + a, r.sin + a, r.cos + h + a, r.sin + h + a);
  }
}

// Applies the pairs [i0, i0 + n) of token t's row (source r) to every head of every operand.
template <class Arch, class T>
void apply_chunk(const rope_table& table, const row_source& r, std::size_t i0, std::size_t n,
                 const rope_operand<T>* ops, std::size_t n_ops, std::size_t t, row_buffers& buf,
                 bool stream, bool blocks_outer, bool lines = false) {
  static_assert(sizeof(bf16) == 2 && sizeof(f16) == 2);
  const bool inter = table.layout == rope_layout::interleaved;
  if constexpr (std::is_same_v<T, bf16>) {
    static_assert(std::endian::native == std::endian::little,
                  "posenc: the bf16 kernels read pairs of bf16 values as little-endian words");
    // A row that the register path of the float bodies holds goes there at every size (even and
    // odd elements as here; streamed a line at a time).
    if (!row_in_registers<Arch, bf16>(inter, r.compact, stream, n)) {
      if (stream || lines) {
        bf16_chunk<Arch, true>(table, r, i0, n, ops, n_ops, t, buf);
        return;
      }
      if (!blocks_outer) {
        bf16_chunk<Arch, false>(table, r, i0, n, ops, n_ops, t, buf);
        return;
      }
    }
  }
  {  // float, f16, _Float16, and bf16 in small calls: the float kernels.
    const float* C = nullptr;
    const float* S = nullptr;
    // A compact interleaved row that the register path holds whole is expanded in registers.
    const bool compact_in_registers =
        inter && r.compact && !stream && compact_row_in_registers<Arch, T>(n);
    if (inter && !compact_in_registers) {
      if (r.compact) {
        expand_row<Arch>(r.cos, r.sin, n, buf.v[0], buf.v[1]);
        C = buf.v[0];
        S = buf.v[1];
      } else {
        C = r.cos + 2 * i0;
        S = r.sin + 2 * i0;
      }
    }
    const auto heads = [&]<bool Stream>(const rope_operand<T>* hops, std::size_t n_hops) {
      float_heads<Arch, Stream, T>(table, r, i0, n, hops, n_hops, t, compact_in_registers, C, S,
                                   !blocks_outer, lines);
    };
    if constexpr (has_stream<Arch>) {
      if (stream) {
        heads.template operator()<true>(ops, n_ops);
        return;
      }
    }
    heads.template operator()<false>(ops, n_ops);
  }
}

// Whether a call streams its stores, on an ISA that can (has_stream): aligned (every vector store
// one whole, aligned 64-byte line), and by the table's output_stores (kernels/rope_table.hpp).
constexpr bool streams(output_stores stores, bool aligned, std::size_t out_bytes) {
  return aligned && (stores == output_stores::streaming ||
                     (stores == output_stores::automatic && out_bytes >= stream_threshold_bytes));
}

// The driver: every token of every operand, row_of(t, chunk) calling chunk(r, i0, n) for the
// chunks of token t's row in order (n <= row_chunk each).
template <class Arch, storage_type T, class RowOf>
kernel_error run_rows(const rope_table& table, const rope_operand<T>* all_ops, std::size_t n_all,
                      const RowOf& row_of) {
  // Only non-empty operands are touched (an empty one may have head_dim < rotary_dim). They are
  // copied only when one is empty: the caller has just written them field by field, and a vector
  // copy of them right after stalls on store forwarding (measured: about 5 % of a decode call).
  const rope_operand<T>* ops = all_ops;
  std::size_t n_ops = n_all < 2 ? n_all : 2;
  rope_operand<T> kept[2];
  bool any_empty = false;
  for (std::size_t o = 0; o < n_ops; ++o) any_empty = any_empty || all_ops[o].in.empty();
  if (any_empty) {
    std::size_t n_kept = 0;
    for (std::size_t o = 0; o < n_ops; ++o)
      if (!all_ops[o].in.empty()) kept[n_kept++] = all_ops[o];
    ops = kept;
    n_ops = n_kept;
  }
  if (n_ops == 0) return kernel_error::ok;
  const std::size_t tokens = ops[0].in.tokens;
  const std::size_t R = table.rotary_dim, h = R / 2;
  std::size_t out_bytes = 0;
  for (std::size_t o = 0; o < n_ops; ++o)
    out_bytes += ops[o].out.tokens * ops[o].out.heads * ops[o].out.head_dim * sizeof(T);
  // A row that fits in registers goes head by head in address order at every size (the register
  // path of rope_f32.hpp). Otherwise small calls (decode) run blocks of the row outside and heads
  // inside, reusing each block of cos/sin from registers for every head; large ones go head by
  // head, streaming through memory (heads outside, the row's blocks inside, reloaded from L1).
  const bool blocks_outer = out_bytes <= blocks_outer_max_bytes;
  // stream: every store of the call streamed (AVX-512, has_stream); lines: the large float calls'
  // loops over every head in one pass, and the bf16 bodies, stream a whole line at a time (AVX,
  // AVX2: has_line_stream, line_pairs).
  // Both by the same rule: whole, aligned 64-byte lines, the size and the table's output_stores.
  bool stream = false, lines = false;
  if constexpr (has_stream<Arch> ||
                (has_line_stream<Arch> && (std::is_same_v<T, float> || std::is_same_v<T, bf16>))) {
    // Every line stored whole: E elements from element offsets that are multiples of E (half
    // layout: also the b channels, at R/2).
    constexpr std::size_t E = 64 / sizeof(T);
    bool aligned = table.layout == rope_layout::interleaved || h % E == 0;
    for (std::size_t o = 0; o < n_ops; ++o) {
      const tensor_view<T>& y = ops[o].out;
      aligned = aligned && reinterpret_cast<std::uintptr_t>(y.data) % 64 == 0 &&
                y.token_stride % E == 0 && y.head_stride % E == 0;
    }
    const bool streamed = streams(table.stores, aligned, out_bytes);
    if constexpr (has_stream<Arch>)
      stream = streamed;
    else
      lines = streamed && !blocks_outer;
  }
  row_buffers buf;
  for (std::size_t t = 0; t < tokens; ++t) {
    row_of(t, [&](const row_source& r, std::size_t i0, std::size_t n) {
      apply_chunk<Arch, T>(table, r, i0, n, ops, n_ops, t, buf, stream, blocks_outer, lines);
    });
    // Partial rotary: channels >= R are copied (nothing to do in place).
    for (std::size_t o = 0; o < n_ops; ++o) {
      const std::size_t rest = ops[o].in.head_dim - R;
      if (rest == 0) continue;
      for (std::size_t hd = 0; hd < ops[o].in.heads; ++hd) {
        const T* x = ops[o].in.at(t, hd);
        T* y = ops[o].out.at(t, hd);
        if (static_cast<const void*>(x) != static_cast<const void*>(y))
          std::memcpy(y + R, x + R, rest * sizeof(T));
      }
    }
  }
#if XSIMD_WITH_AVX
  // Streaming stores are weakly ordered: make them visible before the caller reads the output.
  if (stream || lines) _mm_sfence();
#endif
  return kernel_error::ok;
}

// Whether a call is a decode call: one token, one chunk of pairs, no channel past rotary_dim, a
// small output and stores not asked to stream. Decode, with the token's row in the table: the row
// straight to decode_chunk, without run's and run_rows' general machinery (its operand filter,
// sizes, streaming test, per-token callbacks and stack buffers measured about 25 ns of a one-token
// call on AMD Zen 5: 0.4x a memcpy of the 8 KiB of a [1, 32, 128] f16 tensor). False, having
// written nothing, where the call is not such a call.
template <class T>
bool decode_call(const rope_table& table, const rope_operand<T>* ops, std::size_t n_ops) {
  if (n_ops < 1 || n_ops > 2 || table.rotary_dim / 2 > row_chunk ||
      table.stores == output_stores::streaming)
    return false;
  // Each operand's output at most blocks_outer_max_bytes / n_ops (run_rows' blocks_outer, and
  // no streaming); heads * head_dim * sizeof(T) cannot overflow (check_view).
  const std::size_t max_bytes = n_ops == 2 ? blocks_outer_max_bytes / 2 : blocks_outer_max_bytes;
  for (std::size_t o = 0; o < n_ops; ++o) {
    const tensor_view<T>& y = ops[o].out;
    if (ops[o].in.tokens != 1 || y.heads == 0 || y.head_dim != table.rotary_dim ||
        y.heads * y.head_dim * sizeof(T) > max_bytes)
      return false;
  }
  return true;
}

// A compact interleaved row too long for the registers, in a decode call: expanded into stack
// rows by apply_chunk (a function of its own, so that decode_chunk has no 4 KiB frame).
template <class Arch, storage_type T>
[[gnu::noinline]] void decode_chunk_buffered(const rope_table& table, const row_source& r,
                                             std::size_t i0, std::size_t n,
                                             const rope_operand<T>* ops, std::size_t n_ops) {
  row_buffers buf;
  apply_chunk<Arch, T>(table, r, i0, n, ops, n_ops, 0, buf, false, true);
}

// The pairs [i0, i0 + n) of a decode call's one token (decode_call): what apply_chunk does for it
// (not streamed, blocks outside; bf16 too goes to the float bodies there), with a row that needs
// no buffer sent to the float bodies straight. Through apply_chunk, with its 4 KiB of stack rows
// and its other cases, a [1, 1, 128] f16 call through the dispatch library took 3-5 ns more, and
// the benchmark's [1, 32, 128] f16 half-layout call 2.9-3.0x memcpy instead of 2.7-2.8x (AMD Zen
// 5). Always inlined: one call less per decode call.
template <class Arch, storage_type T>
[[gnu::always_inline]] inline void decode_chunk(const rope_table& table, const row_source& r,
                                                std::size_t i0, std::size_t n,
                                                const rope_operand<T>* ops, std::size_t n_ops) {
  const bool inter = table.layout == rope_layout::interleaved;
  const bool compact_in_registers = inter && r.compact && compact_row_in_registers<Arch, T>(n);
  if (inter && r.compact && !compact_in_registers) {
    decode_chunk_buffered<Arch, T>(table, r, i0, n, ops, n_ops);
    return;
  }
  const float* C = inter && !r.compact ? r.cos + 2 * i0 : nullptr;
  const float* S = inter && !r.compact ? r.sin + 2 * i0 : nullptr;
  float_heads<Arch, false, T, true>(table, r, i0, n, ops, n_ops, 0, compact_in_registers, C, S,
                                    false);
}

// A decode call's row sent to decode_chunk, or false (nothing written) where the call is not one
// (decode_call) or its position is past the table. Always inlined (see float_heads).
template <class Arch, storage_type T>
[[gnu::always_inline]] inline bool run_decode(const rope_table& table, const rope_operand<T>* ops,
                                              std::size_t n_ops, token_positions pos) {
  if (!decode_call(table, ops, n_ops)) return false;
  const std::uint64_t p = pos.at(0);
  if (p >= table.positions) return false;
  const std::size_t row = table.row_size();
  decode_chunk<Arch, T>(table,
                        row_source{table.cos + static_cast<std::size_t>(p) * row,
                                   table.sin + static_cast<std::size_t>(p) * row,
                                   table.format == rope_table_format::compact},
                        0, table.rotary_dim / 2, ops, n_ops);
  return true;
}

// The 1-D rows: the table's row at the token's position, or on-the-fly chunks past it.
template <class Arch, storage_type T>
kernel_error run(const rope_table& table, const rope_operand<T>* all_ops, std::size_t n_all,
                 token_positions pos) {
  const std::size_t h = table.rotary_dim / 2, row = table.row_size();
  const bool compact = table.format == rope_table_format::compact;
  alignas(64) float cbuf[on_the_fly_chunk];
  alignas(64) float sbuf[on_the_fly_chunk];
  return run_rows<Arch, T>(table, all_ops, n_all, [&](std::size_t t, auto&& chunk) {
    const std::uint64_t p = pos.at(t);
    if (p < table.positions) {
      const float* cs = table.cos + static_cast<std::size_t>(p) * row;
      const float* sn = table.sin + static_cast<std::size_t>(p) * row;
      for (std::size_t i0 = 0; i0 < h; i0 += row_chunk) {
        const std::size_t n = h - i0 < row_chunk ? h - i0 : row_chunk;
        chunk(compact ? row_source{cs + i0, sn + i0, true} : row_source{cs, sn, false}, i0, n);
      }
    } else {
      for (std::size_t i0 = 0; i0 < h; i0 += on_the_fly_chunk) {
        const std::size_t n = h - i0 < on_the_fly_chunk ? h - i0 : on_the_fly_chunk;
        kernels::detail::on_the_fly_row(table, p, i0, i0 + n, cbuf, sbuf);
        chunk(row_source{cbuf, sbuf, true}, i0, n);
      }
    }
  });
}

}  // namespace detail

// out = RoPE(in) at the given positions; in place when out is the same view as in. Checks
// everything first (check_rope_call) and writes nothing on error. Same bits as
// rope_reference(table, in, out, pos, fma_mode_of<Arch>).
template <class Arch, storage_type T>
kernel_error apply_rope(const rope_table& table, const tensor_view<const T>& in,
                        const tensor_view<T>& out, const token_positions& pos) {
  if (const kernel_error e = check_rope_call(table, in, out, pos); e != kernel_error::ok) return e;
  const detail::rope_operand<T> op{in, out};
  if (detail::run_decode<Arch, T>(table, &op, 1, pos)) return kernel_error::ok;
  return detail::run<Arch, T>(table, &op, 1, pos);
}

// In place.
template <class Arch, storage_type T>
kernel_error apply_rope(const rope_table& table, const tensor_view<T>& x,
                        const token_positions& pos) {
  return apply_rope<Arch, T>(table, tensor_view<const T>(x), x, pos);
}

// q and k with one position list, token by token (each table row is read or computed once for
// both). q and k must not share elements (see check_rope_qk_call).
template <class Arch, storage_type T>
kernel_error apply_rope_qk(const rope_table& table, const tensor_view<const T>& q_in,
                           const tensor_view<T>& q_out, const tensor_view<const T>& k_in,
                           const tensor_view<T>& k_out, const token_positions& pos) {
  if (const kernel_error e = check_rope_qk_call(table, q_in, q_out, k_in, k_out, pos);
      e != kernel_error::ok)
    return e;
  const detail::rope_operand<T> ops[2] = {{q_in, q_out}, {k_in, k_out}};
  if (detail::run_decode<Arch, T>(table, ops, 2, pos)) return kernel_error::ok;
  return detail::run<Arch, T>(table, ops, 2, pos);
}

}  // namespace posenc::kernels::simd

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
