// stream_copy (stream_copy.hpp). Compiled without ISA flags: the AVX-512 and AVX bodies carry
// target attributes and run only where the dispatch library's ISA (which the CPU runs) has them.
//
// Why two store kinds are timed, as two strategies (stream_copy, stream_copy_nt), rather than one
// switched at a size: ordinary stores read each destination line before writing it (read for
// ownership), so for data that does not stay in the last-level cache between calls they move
// 3 bytes per byte copied, and streaming stores 2; for data that does stay cached streaming stores
// are slower, since they go to memory. Where the switch lies depends on the cache this process
// really gets, which a virtual machine's CPUID does not tell (a 2-vCPU guest here reports a
// 508 MiB L3). The faster of the two rows at a size is the machine's one-thread read+write
// bandwidth for those bytes.
#include "stream_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "x86.hpp"

#include <posenc/kernels/dispatch.hpp>

namespace posenc_bench {

namespace {

// The bytes before dst reaches a 64-byte boundary and the tail after the last whole vector group
// are copied with memcpy (at most 63 + 255 bytes; none for the benchmark's aligned, 64-byte
// multiple sizes).
#if POSENC_BENCH_X86
__attribute__((target("avx512f"))) void copy_avx512(char* d, const char* s, std::size_t n,
                                                    bool nt) {
  std::size_t i = 0;
  if (nt) {
    for (; i + 256 <= n; i += 256) {
      const __m512i a = _mm512_loadu_si512(s + i), b = _mm512_loadu_si512(s + i + 64),
                    c = _mm512_loadu_si512(s + i + 128), e = _mm512_loadu_si512(s + i + 192);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i), a);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i + 64), b);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i + 128), c);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i + 192), e);
    }
    _mm_sfence();  // streaming stores are weakly ordered: visible before the call returns
  } else {
    for (; i + 256 <= n; i += 256) {
      const __m512i a = _mm512_loadu_si512(s + i), b = _mm512_loadu_si512(s + i + 64),
                    c = _mm512_loadu_si512(s + i + 128), e = _mm512_loadu_si512(s + i + 192);
      _mm512_store_si512(d + i, a);
      _mm512_store_si512(d + i + 64, b);
      _mm512_store_si512(d + i + 128, c);
      _mm512_store_si512(d + i + 192, e);
    }
  }
  std::memcpy(d + i, s + i, n - i);
}

__attribute__((target("avx"))) void copy_avx(char* d, const char* s, std::size_t n, bool nt) {
  std::size_t i = 0;
  const auto at = [](const char* p) { return reinterpret_cast<const __m256i*>(p); };
  const auto to = [](char* p) { return reinterpret_cast<__m256i*>(p); };
  for (; i + 128 <= n; i += 128) {
    const __m256i a = _mm256_loadu_si256(at(s + i)), b = _mm256_loadu_si256(at(s + i + 32)),
                  c = _mm256_loadu_si256(at(s + i + 64)), e = _mm256_loadu_si256(at(s + i + 96));
    if (nt) {
      _mm256_stream_si256(to(d + i), a);
      _mm256_stream_si256(to(d + i + 32), b);
      _mm256_stream_si256(to(d + i + 64), c);
      _mm256_stream_si256(to(d + i + 96), e);
    } else {
      _mm256_store_si256(to(d + i), a);
      _mm256_store_si256(to(d + i + 32), b);
      _mm256_store_si256(to(d + i + 64), c);
      _mm256_store_si256(to(d + i + 96), e);
    }
  }
  if (nt) _mm_sfence();
  std::memcpy(d + i, s + i, n - i);
}

void copy_sse2(char* d, const char* s, std::size_t n, bool nt) {
  std::size_t i = 0;
  const auto at = [](const char* p) { return reinterpret_cast<const __m128i*>(p); };
  const auto to = [](char* p) { return reinterpret_cast<__m128i*>(p); };
  for (; i + 64 <= n; i += 64) {
    const __m128i a = _mm_loadu_si128(at(s + i)), b = _mm_loadu_si128(at(s + i + 16)),
                  c = _mm_loadu_si128(at(s + i + 32)), e = _mm_loadu_si128(at(s + i + 48));
    if (nt) {
      _mm_stream_si128(to(d + i), a);
      _mm_stream_si128(to(d + i + 16), b);
      _mm_stream_si128(to(d + i + 32), c);
      _mm_stream_si128(to(d + i + 48), e);
    } else {
      _mm_store_si128(to(d + i), a);
      _mm_store_si128(to(d + i + 16), b);
      _mm_store_si128(to(d + i + 32), c);
      _mm_store_si128(to(d + i + 48), e);
    }
  }
  if (nt) _mm_sfence();
  std::memcpy(d + i, s + i, n - i);
}

using copy_fn = void (*)(char*, const char*, std::size_t, bool);

struct chosen {
  copy_fn fn;
  const char* isa;
};

// The widest vectors of the dispatch library's ISA (POSENC_ISA included), which the CPU runs: with
// POSENC_ISA=avx2 on an AVX-512 CPU the copy is that of an AVX2 CPU, as the kernels are.
chosen choose() {
  const std::string_view isa = posenc::kernels::dispatch::active_isa();
  if (isa.substr(0, 6) == "avx512") return {copy_avx512, "avx512f"};
  if (isa == "avx2") return {copy_avx, "avx"};
  return {copy_sse2, "sse2"};
}
#else
void copy_generic(char* d, const char* s, std::size_t n, bool) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) std::memcpy(d + i, s + i, 16);
  std::memcpy(d + i, s + i, n - i);
}

struct chosen {
  void (*fn)(char*, const char*, std::size_t, bool);
  const char* isa;
};

chosen choose() {
  return {copy_generic, "generic"};
}
#endif

const chosen& the_copy() {
  static const chosen c = choose();
  return c;
}

}  // namespace

void stream_copy(void* dst, const void* src, std::size_t n, store_kind kind) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  const std::size_t head =
      std::min<std::size_t>(n, (64 - reinterpret_cast<std::uintptr_t>(d) % 64) % 64);
  std::memcpy(d, s, head);
  the_copy().fn(d + head, s + head, n - head, kind == store_kind::non_temporal);
}

const char* stream_copy_isa() {
  return the_copy().isa;
}

}  // namespace posenc_bench
