// The SIMD conversions of the kernels for one xsimd architecture, behind plain function pointers:
// simd_conversions.cpp is compiled once per x86 ISA (meson.build) and conversions.cpp calls the
// entries whose ISA this CPU has. Every function works on arrays of bit patterns, n a multiple of
// 64, out[j] the conversion of in[j].
#pragma once

#include <cstddef>
#include <cstdint>

namespace posenc_test::conv {

// Storage kinds of load_widened / store_narrowed (detail/batch.hpp).
enum class kind { bf16, f16, float16 };

struct simd_conversions {
  const char* arch;   // xsimd's name of the architecture
  std::size_t width;  // W, floats per batch
  // simd::detail::store_bf16 of even = in[i, i + W) and odd = in[i + W, i + 2W) for each group of
  // 2W: out[i + 2k] narrows in[i + k], out[i + 2k + 1] narrows in[i + W + k] (its own order).
  void (*narrow_bf16)(const std::uint32_t* in, std::uint16_t* out, std::size_t n);
  // simd::detail::widen_bf16, lanes put back in order.
  void (*widen_bf16)(const std::uint16_t* in, std::uint32_t* out, std::size_t n);
  // detail::store_narrowed<Arch, T> / load_widened<Arch, T> (bf16, f16, _Float16 where it exists).
  void (*store_narrowed)(kind k, const std::uint32_t* in, std::uint16_t* out, std::size_t n);
  void (*load_widened)(kind k, const std::uint16_t* in, std::uint32_t* out, std::size_t n);
};

// One per ISA translation unit (POSENC_TEST_CONV_ISA = sse4_2, avx, avx2, avx512bw, avx512bf16;
// the last is simd::avx512bf16, the others xsimd's default architecture of their flags).
extern const simd_conversions simd_sse4_2;
extern const simd_conversions simd_avx;
extern const simd_conversions simd_avx2;
extern const simd_conversions simd_avx512bw;
extern const simd_conversions simd_avx512bf16;

}  // namespace posenc_test::conv
