// The benchmark's conversion baseline for f16 storage: every element widened to float and
// narrowed back (round to nearest even), with the conversion instructions of this CPU, nothing
// else. Against memcpy of the same bytes it is the part of an f16 kernel's time that no kernel
// converting each element once each way can avoid (docs/benchmarks.md).
#pragma once

#include <posenc/kernels/storage.hpp>

#include <cstddef>

namespace posenc_bench {

// dst[i] = to_f16(to_float(src[i])) for i < n (the same bits for every value but a signalling
// NaN, which the hardware conversion makes quiet); dst and src do not overlap.
void convert_copy(posenc::f16* dst, const posenc::f16* src, std::size_t n);

// What it runs: "avx512f" (vcvtph2ps / vcvtps2ph on 16 floats), "f16c" (the same on 8) (x86-64,
// by CPUID at the first call), or "scalar" (posenc::to_float / posenc::to_f16, element by element).
const char* convert_copy_isa();

}  // namespace posenc_bench
