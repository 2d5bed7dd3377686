// The benchmark's bandwidth baseline: a STREAM-style copy (McCalpin, STREAM "Copy" kernel,
// a[i] = b[i]) of n bytes with the widest vector loads and stores of this CPU, so that a ratio to
// memcpy can be set against what one thread of the machine can read and write at all.
#pragma once

#include <cstddef>

namespace posenc_bench {

enum class store_kind {
  temporal,      // ordinary stores: the destination's lines are read into the cache first
  non_temporal,  // streaming stores (movntdq family): whole lines written past the caches
};

// Copies n bytes from src to dst (not overlapping); dst must be 64-byte aligned.
void stream_copy(void* dst, const void* src, std::size_t n, store_kind kind);

// The vector width it runs: on x86-64 that of the dispatch library's ISA (POSENC_ISA included),
// chosen at the first call: "avx512f" for the AVX-512 entries, "avx" for avx2, "sse2" below;
// elsewhere "generic" (16-byte chunks the compiler vectorises; non_temporal stores ordinary ones
// there).
const char* stream_copy_isa();

}  // namespace posenc_bench
