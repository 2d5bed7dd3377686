// The benchmark's conversion baselines for 16-bit storage: every element widened to float and
// narrowed back (round to nearest even), with the conversions the dispatched ISA has, nothing
// else. Against memcpy of the same bytes it is the part of a 16-bit kernel's time that no kernel
// converting each element once each way on that ISA can avoid (docs/benchmarks.md).
#pragma once

#include <posenc/kernels/storage.hpp>

#include <cstddef>

namespace posenc_bench {

// dst[i] = to_f16(to_float(src[i])) for i < n (the same bits for every value but a signalling
// NaN, which the hardware conversion makes quiet); dst and src do not overlap.
void convert_copy(posenc::f16* dst, const posenc::f16* src, std::size_t n);

// dst[i] = to_bf16(to_float(src[i])) for i < n: the same bits for every value but a signalling
// NaN (made quiet) and, with "avx512bf16", a subnormal (vcvtne2ps2bf16 makes it a zero, where the
// kernels check each vector for one: this floor is below theirs); dst and src do not overlap.
void convert_copy(posenc::bf16* dst, const posenc::bf16* src, std::size_t n);

// What they run, e.g. "f16 avx512f, bf16 avx512bf16". Chosen once, at the first call, by the
// dispatch library's ISA (POSENC_ISA included), so that the floor is that of a CPU of that ISA:
// f16: "avx512f" (vcvtph2ps / vcvtps2ph on 16 floats) on the AVX-512 entries, "f16c" (the same on
// 8) on avx2, "scalar" (posenc::to_float / posenc::to_f16 element by element) elsewhere; bf16
// (widened by shifts): "avx512bf16" (vcvtne2ps2bf16), "avx512bw" and "avx2" (to_bf16's rounding
// in 32-bit integer lanes, as the kernels round), "scalar" elsewhere.
const char* convert_copy_isa();

}  // namespace posenc_bench
