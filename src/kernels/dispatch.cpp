// The dispatcher of posenc_kernels, compiled without ISA flags: the registry of compiled ISAs,
// the choice of one at run time, and the dispatching entry points of posenc/kernels/dispatch.hpp.
// It also holds the two entries that need no flags: the compiler's baseline architecture (x86-64:
// sse2; aarch64: neon64) and the scalar reference.
//
// How the choice is made:
// - xsimd::dispatch over the compiled architectures, best first. xsimd 8.1 compares each
//   architecture's version with the best version its cpuid code found. That code misreads the AVX
//   bit (it reads CPUID leaf 0x80000001 instead of leaf 1), so avx = 0 on CPUs that have AVX, but
//   the best version is a maximum over all the bits and the AVX2, FMA3 and AVX-512 bits are read
//   correctly, so the pick is right: we list no plain-AVX architecture and never read that bit.
// - xsimd 8.1 does not check that the OS saves the YMM/ZMM registers (XGETBV). The compiler's
//   __builtin_cpu_supports does, so an x86 entry counts as supported only if both agree, and if
//   xsimd's pick is not supported by that test the next supported entry is taken.
// - avx512bf16 (avx512bw with AVX-512 BF16's bf16 narrowing) is no xsimd architecture: where
//   xsimd picks avx512bw, avx512bf16 is tried first, supported when the CPUID bit AVX512_BF16 is
//   set as well.
//
// One-definition caveat: inline functions that do not depend on the architecture (argument
// checks, the on-the-fly sin/cos) are compiled in every per-ISA TU with its flags, and the linker
// keeps one copy. This TU instantiates the same kernels for the baseline architecture and is the
// first member of the library, and the ISA TUs follow in increasing order, so the kept copy is
// the baseline's, or one from the narrowest ISA that emits it out of line (meson.build).
#include <posenc/kernels/dispatch.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "isa_entry.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

// With POSENC_SIMD (posenc/kernels/detail/simd.hpp; meson defines POSENC_NO_SIMD when it finds no
// xsimd) this TU also holds the entry of its baseline architecture, xsimd::default_arch.

#ifndef POSENC_KERNELS_HAVE_SSE4_2
#define POSENC_KERNELS_HAVE_SSE4_2 0
#endif
#ifndef POSENC_KERNELS_HAVE_AVX2
#define POSENC_KERNELS_HAVE_AVX2 0
#endif
#ifndef POSENC_KERNELS_HAVE_AVX512BW
#define POSENC_KERNELS_HAVE_AVX512BW 0
#endif
#ifndef POSENC_KERNELS_HAVE_AVX512BF16
#define POSENC_KERNELS_HAVE_AVX512BF16 0
#endif

namespace posenc::kernels::dispatch {

namespace detail {
namespace {

#if POSENC_SIMD
// The documented entry names (dispatch.hpp) are xsimd's, except on ARM, where xsimd says
// "arm64+neon" and "arm32+neon" (the entry's xsimd_arch keeps those).
constexpr const char* baseline_name() {
#if XSIMD_WITH_NEON64
  return "neon64";
#elif XSIMD_WITH_NEON
  return "neon";
#else
  return xsimd::default_arch::name();
#endif
}
constinit const isa_kernels entry_baseline = simd_entry<xsimd::default_arch>(baseline_name());
#endif
constinit const isa_kernels entry_scalar = scalar_entry();

// The functor of xsimd::dispatch: the compiled entry of each architecture.
struct entry_of {
#if POSENC_KERNELS_HAVE_AVX512BW
  const isa_kernels* operator()(xsimd::avx512bw) const {
    return &entry_avx512bw;
  }
#endif
#if POSENC_KERNELS_HAVE_AVX2
  const isa_kernels* operator()(xsimd::fma3<xsimd::avx2>) const {
    return &entry_avx2;
  }
#endif
#if POSENC_KERNELS_HAVE_SSE4_2
  const isa_kernels* operator()(xsimd::sse4_2) const {
    return &entry_sse4_2;
  }
#endif
#if POSENC_SIMD
  const isa_kernels* operator()(xsimd::default_arch) const {
    return &entry_baseline;
  }
#endif
};

#if POSENC_SIMD
template <class... Archs>
using arch_list = xsimd::arch_list<Archs...>;
using compiled_archs = arch_list<
#if POSENC_KERNELS_HAVE_AVX512BW
    xsimd::avx512bw,
#endif
#if POSENC_KERNELS_HAVE_AVX2
    xsimd::fma3<xsimd::avx2>,
#endif
#if POSENC_KERNELS_HAVE_SSE4_2
    xsimd::sse4_2,
#endif
    xsimd::default_arch>;
#endif

#if POSENC_SIMD && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// CPUID leaf 7 subleaf 1, EAX bit 5 (Intel SDM vol. 2A, CPUID): AVX512_BF16, which xsimd 8.1 does
// not read.
[[maybe_unused]] bool cpu_has_avx512bf16() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 1, &a, &b, &c, &d) != 0 && (a & (1u << 5)) != 0;
}

// CPUID leaf 1, ECX bit 29 (Intel SDM vol. 2A, CPUID): F16C, which the avx2 entry's f16
// conversions use. Neither xsimd 8.1 nor Clang 16's __builtin_cpu_supports knows the bit.
[[maybe_unused]] bool cpu_has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
}
#endif

// Whether the CPU and the OS support an x86 entry: xsimd's cpuid bits and the compiler's test
// (and, for avx2, the F16C bit).
[[maybe_unused]] bool x86_supports(const isa_kernels& k) {
#if POSENC_SIMD && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  const auto cpu = xsimd::available_architectures();
  __builtin_cpu_init();
#if POSENC_KERNELS_HAVE_AVX512BW
  if (&k == &entry_avx512bw)
    return cpu.avx512f && cpu.avx512cd && cpu.avx512dq && cpu.avx512bw &&
           __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("fma");
#endif
#if POSENC_KERNELS_HAVE_AVX512BF16
  // avx512bw's requirements and AVX512_BF16 (xsimd's pick is avx512bw on such a CPU).
  if (&k == &entry_avx512bf16) return x86_supports(entry_avx512bw) && cpu_has_avx512bf16();
#endif
#if POSENC_KERNELS_HAVE_AVX2
  if (&k == &entry_avx2)
    return cpu.avx2 && cpu.fma3_avx2 && __builtin_cpu_supports("avx2") &&
           __builtin_cpu_supports("fma") && cpu_has_f16c();
#endif
#if POSENC_KERNELS_HAVE_SSE4_2
  if (&k == &entry_sse4_2) return cpu.sse4_2 && __builtin_cpu_supports("sse4.2");
#endif
  static_cast<void>(cpu);
#endif
  static_cast<void>(k);
  return false;
}

constexpr std::size_t max_entries = 6;

struct registry {
  std::array<isa_kernels, max_entries> entries{};
  std::size_t count = 0;
  std::size_t automatic = 0;
  std::size_t active = 0;
  isa_request request = isa_request::none;

  void add(const isa_kernels& k, bool supported) {
    entries[count] = k;
    entries[count].supported = supported;
    ++count;
  }
  std::size_t index_of(const char* name) const {
    for (std::size_t i = 0; i < count; ++i)
      if (std::strcmp(entries[i].name, name) == 0) return i;
    return count;
  }
};

registry build_registry() {
  registry r;
#if POSENC_KERNELS_HAVE_AVX512BF16
  r.add(entry_avx512bf16, x86_supports(entry_avx512bf16));
#endif
#if POSENC_KERNELS_HAVE_AVX512BW
  r.add(entry_avx512bw, x86_supports(entry_avx512bw));
#endif
#if POSENC_KERNELS_HAVE_AVX2
  r.add(entry_avx2, x86_supports(entry_avx2));
#endif
#if POSENC_KERNELS_HAVE_SSE4_2
  r.add(entry_sse4_2, x86_supports(entry_sse4_2));
#endif
#if POSENC_SIMD
  r.add(entry_baseline, true);  // this TU runs, so its baseline does
#endif
  r.add(entry_scalar, true);

  // xsimd's pick, then the first supported entry from there on (scalar at the latest).
  r.automatic = r.count - 1;
#if POSENC_SIMD
  const isa_kernels* pick = xsimd::dispatch<compiled_archs>(entry_of{})();
  std::size_t first = r.index_of(pick->name);
#if POSENC_KERNELS_HAVE_AVX512BF16 && POSENC_KERNELS_HAVE_AVX512BW
  // xsimd knows no avx512bf16: it is tried first wherever xsimd picks avx512bw.
  if (pick == &entry_avx512bw) first = r.index_of(entry_avx512bf16.name);
#endif
  for (std::size_t i = first; i < r.count; ++i) {
    if (r.entries[i].supported) {
      r.automatic = i;
      break;
    }
  }
#endif
  r.active = r.automatic;

  const char* env = std::getenv("POSENC_ISA");
  if (env != nullptr && env[0] != '\0') {
    const std::size_t i = r.index_of(env);
    if (i == r.count) {
      r.request = isa_request::unknown;
    } else if (!r.entries[i].supported) {
      r.request = isa_request::unsupported;
    } else {
      r.request = isa_request::honoured;
      r.active = i;
    }
  }
  return r;
}

const registry& the_registry() {
  static const registry r = build_registry();
  return r;
}

// The active entry, looked up once and kept in one pointer that every dispatching call reads
// before it calls through the entry. Through active() and the_registry(), two calls deep, the
// lookup took 2-3 ns of a 23 ns decode call ([1, 1, 128] f16, AMD Zen 5); a function-local
// static here made GCC save six registers on every call for the sake of its first one.
constinit std::atomic<const isa_kernels*> active_pointer{nullptr};

[[gnu::noinline, gnu::cold]] const isa_kernels* find_active() {
  const registry& r = the_registry();
  const isa_kernels* k = &r.entries[r.active];
  active_pointer.store(k, std::memory_order_release);
  return k;
}

[[gnu::always_inline]] inline const isa_kernels& active_entry() {
  const isa_kernels* k = active_pointer.load(std::memory_order_acquire);
  if (k == nullptr) [[unlikely]]
    k = find_active();
  return *k;
}

}  // namespace
}  // namespace detail

std::span<const isa_kernels> compiled_isas() {
  const detail::registry& r = detail::the_registry();
  return {r.entries.data(), r.count};
}

const isa_kernels& active() {
  return detail::active_entry();
}

const char* active_isa() {
  return active().name;
}

const char* automatic_isa() {
  const detail::registry& r = detail::the_registry();
  return r.entries[r.automatic].name;
}

isa_request isa_override() {
  return detail::the_registry().request;
}

// The dispatching entry points: each kernel of the list (posenc/kernels/detail/kernel_list.hpp)
// for each storage type of the entries, through the active entry's pointer.
#define POSENC_DISPATCH_ENTRY_POINT(T, group, member, function, reference, params, args) \
  kernel_error function params {                                                         \
    return detail::active_entry().group<T>().member args;                                \
  }
POSENC_DISPATCHED_KERNELS(POSENC_DISPATCH_ENTRY_POINT, float, POSENC_NO_DEFAULT_ARGUMENT)
POSENC_DISPATCHED_KERNELS(POSENC_DISPATCH_ENTRY_POINT, bf16, POSENC_NO_DEFAULT_ARGUMENT)
POSENC_DISPATCHED_KERNELS(POSENC_DISPATCH_ENTRY_POINT, f16, POSENC_NO_DEFAULT_ARGUMENT)
#undef POSENC_DISPATCH_ENTRY_POINT

}  // namespace posenc::kernels::dispatch
