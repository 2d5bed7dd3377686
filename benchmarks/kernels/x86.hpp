// POSENC_BENCH_X86: whether the benchmark's x86 baselines (stream_copy.cpp, convert_copy.cpp)
// have their vector bodies: x86-64 with GCC or Clang, which have the target attributes,
// __builtin_cpu_supports and <immintrin.h> they use. Elsewhere they run their portable code.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define POSENC_BENCH_X86 1
#else
#define POSENC_BENCH_X86 0
#endif
