// The benchmark's arithmetic baseline for f32 RoPE: the vector multiplies and adds that rotating n
// floats takes on the dispatched ISA, on values held in registers (no loads, no stores). Against
// memcpy of the same bytes it is the part of a kernel's time that no kernel computing
// y = x * cos + x' * sin with that ISA's instructions can go below, however its loads and stores
// overlap them (docs/benchmarks.md).
#pragma once

#include <cstddef>

namespace posenc_bench {

struct rotation_floor_result {
  std::size_t good_lanes = 0;  // lanes of the check that hold 36 (all of them: `lanes`)
  std::size_t steps = 0;       // vector steps run: one rotation of `lanes` elements each
  std::size_t lanes = 0;       // floats per vector
};

// Rotates n elements' worth of values held in registers: n / lanes vector steps, each
// y = x * c + x * s as one multiply and one fused multiply-add where the ISA fuses (the kernels'
// fma_mode::fused), or two multiplies and an add where it does not, on 8 values x_k = k + 1 in
// every lane with c = 0.75 and s = 0.25, so that y_k = x_k exactly; the check adds up one more
// step's y_0 ... y_7 (36 in every lane). n is a multiple of 8 * lanes (8 * 16).
rotation_floor_result rotation_floor(std::size_t n);

// What it runs: "avx512f" (16 floats, FMA) on the AVX-512 entries, "avx2" (8, FMA) on avx2, "sse2"
// (4, unfused) on sse4.2 and sse2, "scalar" (1, unfused) elsewhere: chosen once, at the first
// call, by the dispatch library's ISA (POSENC_ISA included).
const char* rotation_floor_isa();

}  // namespace posenc_bench
