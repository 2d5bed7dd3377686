// posenc's storage conversions (posenc/kernels/storage.hpp: to_f16, to_bf16, to_float, load_float,
// store_as<T> for f16, bf16 and _Float16) and the kernels' SIMD conversions (simd/rope_bf16.hpp:
// widen_bf16, narrow_bf16 through store_bf16; detail/batch.hpp: load_widened, store_narrowed)
// against references that share no code with them:
//
// - The CPU's own conversion instructions, on every float bit pattern (2^32) and every 16-bit
//   pattern (2^16): F16C vcvtps2ph with an immediate round-to-nearest-even and vcvtph2ps for
//   binary16, AVX-512 BF16 vcvtneps2bf16 for bfloat16, each used only where the CPU has it.
// - MPFR rounding to the target precision with IEEE subnormalisation (mpfr_set_emin/emax,
//   mpfr_subnormalize) on a dense sample: every sign and exponent, a tie at every rounding
//   position with the kept bit even and odd and its two neighbours, and random mantissas. It runs
//   always (it is the reference where an instruction is missing), and the instructions are checked
//   against it too, so that both references are exercised wherever the test runs.
// - Rules written out here, for the classes where the instructions and posenc differ by design:
//   * vcvtneps2bf16 treats subnormal inputs as zero (DAZ, Intel SDM "VCVTNEPS2BF16"), whereas
//     posenc rounds them to nearest even like any other float (as PyTorch's round_to_nearest_even
//     does): a subnormal float m * 2^-149 becomes the bf16 k * 2^-133 with k = m / 2^16 rounded to
//     nearest even (std::nearbyint in double; k = 128 is the smallest normal, bits 0x0080).
//   * NaN: posenc's rule (storage.hpp) is "NaN stays NaN, quiet, sign and top payload bits kept":
//     f32 -> f16 gives sign | 0x7e00 | (mantissa >> 13), f32 -> bf16 gives (bits >> 16) | 0x0040.
//     Widening is exact, a signalling NaN included, whereas vcvtph2ps makes it quiet: a 16-bit NaN
//     h widens to sign | 0x7f800000 | (payload << 13) (f16) or h << 16 (bf16).
//   The instructions' NaN results are printed next to the rule, not required to match it.
// - Widening: besides vcvtph2ps, a decoder written with std::ldexp (value = significand * 2^e).
//
// Sizes. The 2^32 sweeps cost about 6 s (f16) and 12 s (bf16, five SIMD architectures) of CPU
// time with GCC -O3, spread over POSENC_CONVERSIONS_THREADS threads (default: the hardware's
// count, at most 16). Under sanitizers the SIMD helpers are not inlined and run about 100 times
// slower, so meson.build sets POSENC_CONVERSIONS_STRIDE=4096 when b_sanitize is not none: each
// block of 2^16 floats that share their upper 16 bits (every sign, exponent and bf16 value) is
// sampled instead, every 4096th low half from an offset that moves with the block (every low half
// is used by some block), plus the low halves of a tie at every bit position with the kept bit
// even and odd and the neighbours of each (128 floats per block, 2^23 in all). The knob takes any
// power of two up to 4096; 1 is the full sweep. POSENC_CONVERSIONS_NARROW_STRIDE (meson.build: 16)
// samples the same way the SIMD architectures narrower than the widest one this CPU runs (most of
// the sweeps' time: five architectures' narrowing per float); the widest one, which the
// dispatcher picks, and the scalar conversions keep POSENC_CONVERSIONS_STRIDE.
#include <posenc/kernels/storage.hpp>

#include <mpfr.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cfenv>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/storage/simd_conversions_impl.hpp"
#include "support/storage_oracle.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define POSENC_TEST_X86 1
#else
#define POSENC_TEST_X86 0
#endif

namespace {

using u16 = std::uint16_t;
using u32 = std::uint32_t;
using posenc::bf16;
using posenc::f16;
namespace conv = posenc_test::conv;

float as_float(u32 u) {
  return std::bit_cast<float>(u);
}
u32 bits_of(float x) {
  return std::bit_cast<u32>(x);
}
bool is_nan32(u32 u) {
  return (u & 0x7fffffffu) > 0x7f800000u;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string hex(u32 v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// ---- the instructions -------------------------------------------------------------------------

#if POSENC_TEST_X86
// Clang 16's __builtin_cpu_supports does not know "f16c": CPUID.1:ECX bit 29 (after the check
// for AVX, which includes the operating system's support of the YMM state).
bool cpu_has_f16c() {
  __builtin_cpu_init();
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) != 0 &&
         (c & bit_F16C) != 0;
}
bool cpu_has_avx512bf16() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
}

// n a multiple of 16 (all three).
__attribute__((target("avx,f16c"))) void hw_to_f16(const u32* in, u16* out, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 8) {
    const __m256 v =
        _mm256_castsi256_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
}
__attribute__((target("avx,f16c"))) void hw_from_f16(const u16* in, u32* out, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 8) {
    const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_castps_si256(v));
  }
}
__attribute__((target("avx512f,avx512bf16"))) void hw_to_bf16(const u32* in, u16* out,
                                                              std::size_t n) {
  for (std::size_t i = 0; i < n; i += 16) {
    const __m512 v = _mm512_castsi512_ps(_mm512_loadu_si512(in + i));
    const __m256bh h = _mm512_cvtneps_pbh(v);
    std::memcpy(out + i, &h, sizeof h);
  }
}
#else
bool cpu_has_f16c() {
  return false;
}
bool cpu_has_avx512bf16() {
  return false;
}
void hw_to_f16(const u32*, u16*, std::size_t) {}
void hw_from_f16(const u16*, u32*, std::size_t) {}
void hw_to_bf16(const u32*, u16*, std::size_t) {}
#endif

// The instructions round as the tests expect only without flush-to-zero or denormals-are-zero in
// MXCSR (the defaults); vcvtps2ph takes its rounding from the immediate.
bool default_float_environment() {
#if POSENC_TEST_X86
  if ((_mm_getcsr() & 0x8040u) != 0) return false;  // FTZ (bit 15), DAZ (bit 6)
#endif
  return std::fegetround() == FE_TONEAREST;
}

// ---- rules written out --------------------------------------------------------------------------

u16 nan_rule_f16(u32 u) {
  return static_cast<u16>(((u >> 16) & 0x8000u) | 0x7c00u | 0x0200u | ((u >> 13) & 0x03ffu));
}
u16 nan_rule_bf16(u32 u) {
  return static_cast<u16>((u >> 16) | 0x0040u);
}
// A float with exponent field 0 (zero or subnormal, m * 2^-149) to bf16: k * 2^-133 with
// k = m / 2^16 rounded to nearest even by the FPU (exact in double; round-to-nearest mode).
u16 subnormal_rule_bf16(u32 u) {
  const double k = std::nearbyint(static_cast<double>(u & 0x7fffffu) / 65536.0);
  return static_cast<u16>(((u >> 16) & 0x8000u) | static_cast<u32>(k));
}

// Decoders: the float value of each 16-bit pattern, from its fields. NaN patterns give the rule's
// bits (exact widening).
u32 decode_f16(u16 h) {
  const u32 sign = (h & 0x8000u) << 16;
  const int e = (h >> 10) & 0x1f;
  const int m = h & 0x3ff;
  if (e == 0x1f)
    return m == 0 ? sign | 0x7f800000u : sign | 0x7f800000u | static_cast<u32>(m) << 13;
  const double mag = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return sign | bits_of(static_cast<float>(mag));
}
u32 decode_bf16(u16 h) {
  const u32 sign = (h & 0x8000u) << 16;
  const int e = (h >> 7) & 0xff;
  const int m = h & 0x7f;
  if (e == 0xff) return static_cast<u32>(h) << 16;
  const double mag = e == 0 ? std::ldexp(m, -133) : std::ldexp(128 + m, e - 134);
  return sign | bits_of(static_cast<float>(mag));
}

// The binary16 bits of v, which is infinite or a binary16 value (checked).
u16 encode_f16(float v) {
  const u16 sign = std::signbit(v) ? 0x8000u : 0u;
  const double a = std::fabs(static_cast<double>(v));
  if (std::isinf(a)) return sign | 0x7c00u;
  int ex = 0;
  const double m = std::frexp(a, &ex);  // a = m * 2^ex, m in [0.5, 1), or a = 0
  double field;
  if (a == 0.0) {
    field = 0.0;
  } else if (ex - 1 >= -14) {
    field = (ex - 1 + 15) * 1024.0 + (std::ldexp(m, 11) - 1024.0);
  } else {
    field = std::ldexp(a, 24);  // subnormal: a multiple of 2^-24
  }
  REQUIRE(field == std::floor(field));
  REQUIRE(field < 31 * 1024.0);
  return static_cast<u16>(sign | static_cast<u32>(field));
}
// The bfloat16 bits of v, which is a bfloat16 value or infinite (checked).
u16 encode_bf16(float v) {
  const u32 u = bits_of(v);
  REQUIRE((u & 0xffffu) == 0);
  return static_cast<u16>(u >> 16);
}

// ---- MPFR ---------------------------------------------------------------------------------------

// x rounded to nearest even in a binary format of precision prec whose normal numbers are
// 0.1b...b * 2^e with e in [emin_normal, emax] (MPFR's convention) and whose subnormals are
// multiples of 2^(emin_sub - 1): binary16 is (11, -13, 16, -23), bfloat16 (8, -125, 128, -132).
// Overflow gives infinity.
class mpfr_format {
 public:
  mpfr_format(mpfr_prec_t prec, mpfr_exp_t emin_sub, mpfr_exp_t emax)
      : old_emin_(mpfr_get_emin()), old_emax_(mpfr_get_emax()) {
    mpfr_init2(r_, prec);
    mpfr_set_emin(emin_sub);
    mpfr_set_emax(emax);
  }
  ~mpfr_format() {
    mpfr_clear(r_);
    mpfr_set_emin(old_emin_);
    mpfr_set_emax(old_emax_);
  }
  mpfr_format(const mpfr_format&) = delete;
  mpfr_format& operator=(const mpfr_format&) = delete;

  float round(float x) {
    int t = mpfr_set_flt(r_, x, MPFR_RNDN);
    t = mpfr_subnormalize(r_, t, MPFR_RNDN);
    return mpfr_get_flt(r_, MPFR_RNDN);  // exact: a value of the format (or infinity, or 0)
  }

 private:
  mpfr_exp_t old_emin_, old_emax_;
  mpfr_t r_;
};

// The dense sample: for both signs and every finite exponent field, mantissas 0 and all ones, a
// tie at every rounding position d (bits below d dropped: the bit d - 1 set, below it zero) with
// random bits above it (and all ones) and the kept bit d both even and odd, its neighbours
// (tie +- 1 ulp of float), and random mantissas.
std::vector<u32> dense_sample() {
  std::mt19937_64 rng(0x5eedc0a7u);
  std::vector<u32> xs;
  for (u32 sign = 0; sign < 2; ++sign) {
    for (u32 e = 0; e < 0xff; ++e) {
      const u32 top = sign << 31 | e << 23;
      xs.push_back(top);
      xs.push_back(top | 0x7fffffu);
      for (u32 d = 1; d <= 23; ++d) {
        for (int r = 0; r < 5; ++r) {
          // The last: all ones above, whose rounding carries into the exponent (up to overflow).
          const u32 above = (r < 4 ? static_cast<u32>(rng()) << d : ~0u << d) & 0x7fffffu;
          for (const u32 kept : {0u, 1u}) {
            const u32 tie = ((above & ~(1u << d)) | (kept << d) | (1u << (d - 1))) & 0x7fffffu;
            for (const u32 m : {tie - 1u, tie, tie + 1u}) xs.push_back(top | (m & 0x7fffffu));
          }
        }
      }
      for (int r = 0; r < 64; ++r) xs.push_back(top | (static_cast<u32>(rng()) & 0x7fffffu));
    }
  }
  return xs;
}

// ---- failures -----------------------------------------------------------------------------------

// Mismatches of one conversion, with the first few for the report.
struct tally {
  explicit tally(std::string name) : what(std::move(name)) {}
  std::string what;
  std::uint64_t checked = 0, bad = 0;
  std::string examples;
  void add(u32 in, u32 got, u32 want) {
    ++checked;
    if (got == want) return;
    if (bad++ < 4)
      examples += "  " + what + "(" + hex(in) + ") = " + hex(got) + ", want " + hex(want) + "\n";
  }
  // want and got over n inputs (16-bit results).
  void add(const u32* in, const u16* got, const u16* want, std::size_t n) {
    if (std::memcmp(got, want, n * sizeof(u16)) == 0) {
      checked += n;
      return;
    }
    for (std::size_t j = 0; j < n; ++j) add(in[j], got[j], want[j]);
  }
  void add(const u16* in, const u32* got, const u32* want, std::size_t n) {
    for (std::size_t j = 0; j < n; ++j) add(in[j], got[j], want[j]);
  }
};

void report(const tally& t) {
  INFO(t.what << ": " << t.bad << " of " << t.checked << " differ\n" << t.examples);
  CHECK(t.checked > 0);
  CHECK(t.bad == 0);
}

// ---- SIMD entries -------------------------------------------------------------------------------

// want in the order of simd_conversions::narrow_bf16 for batches of W floats.
void in_store_bf16_order(const u16* want, u16* out, std::size_t n, std::size_t W) {
  for (std::size_t i = 0; i + 2 * W <= n; i += 2 * W) {
    for (std::size_t k = 0; k < W; ++k) {
      out[i + 2 * k] = want[i + k];
      out[i + 2 * k + 1] = want[i + W + k];
    }
  }
}
void in_store_bf16_order(const u32* in, u32* out, std::size_t n, std::size_t W) {
  for (std::size_t i = 0; i + 2 * W <= n; i += 2 * W) {
    for (std::size_t k = 0; k < W; ++k) {
      out[i + 2 * k] = in[i + k];
      out[i + 2 * k + 1] = in[i + W + k];
    }
  }
}

#if POSENC_SIMD
constexpr conv::simd_conversions simd_baseline = conv::make_simd_conversions<xsimd::default_arch>();
#endif

// The SIMD conversions of every architecture this build has and this CPU runs, printed.
std::vector<const conv::simd_conversions*> simd_entries() {
  std::vector<const conv::simd_conversions*> r;
  std::string skipped;
#if POSENC_SIMD
  r.push_back(&simd_baseline);
#endif
#if POSENC_TEST_X86
  __builtin_cpu_init();
  const auto add = [&](bool have, const conv::simd_conversions* c, const char* name) {
    if (have) {
      r.push_back(c);
    } else {
      skipped += std::string(" ") + name;
    }
  };
#if POSENC_TEST_CONV_HAVE_SSE4_2
  add(__builtin_cpu_supports("sse4.2"), &conv::simd_sse4_2, "sse4.2");
#endif
#if POSENC_TEST_CONV_HAVE_AVX
  add(__builtin_cpu_supports("avx"), &conv::simd_avx, "avx");
#endif
#if POSENC_TEST_CONV_HAVE_AVX2
  add(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"), &conv::simd_avx2, "avx2");
#endif
#if POSENC_TEST_CONV_HAVE_AVX512BW
  add(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd"),
      &conv::simd_avx512bw, "avx512bw");
#endif
#if POSENC_TEST_CONV_HAVE_AVX512BF16
  add(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd") &&
          cpu_has_avx512bf16(),
      &conv::simd_avx512bf16, "avx512bf16");
#endif
#endif
  static bool printed = false;
  if (!printed) {
    printed = true;
    std::cout << "storage: SIMD architectures:";
    for (const auto* c : r) std::cout << ' ' << c->arch;
    if (!skipped.empty()) std::cout << " (not on this CPU:" << skipped << ")";
    std::cout << '\n';
  }
  return r;
}

// ---- the sweep ----------------------------------------------------------------------------------

u32 sweep_stride() {
  const char* s = std::getenv("POSENC_CONVERSIONS_STRIDE");
  const long v = s != nullptr && *s != '\0' ? std::strtol(s, nullptr, 10) : 1;
  REQUIRE(v >= 1);
  REQUIRE(v <= 4096);
  REQUIRE((v & (v - 1)) == 0);
  return static_cast<u32>(v);
}

// The stride of the sweeps of the SIMD architectures narrower than the widest one this CPU runs
// (POSENC_CONVERSIONS_NARROW_STRIDE, a power of two up to 4096; default 1): those run on a sample
// of each block, fill_block's at that stride, when it is larger than the sweep's own stride. The
// widest architecture, the one the dispatcher picks here, and the scalar conversions keep the
// sweep's stride.
u32 narrow_sweep_stride() {
  const char* s = std::getenv("POSENC_CONVERSIONS_NARROW_STRIDE");
  const long v = s != nullptr && *s != '\0' ? std::strtol(s, nullptr, 10) : 1;
  REQUIRE(v >= 1);
  REQUIRE(v <= 4096);
  REQUIRE((v & (v - 1)) == 0);
  return static_cast<u32>(v);
}

constexpr std::size_t block_capacity = 0x10000 + 256;

// The floats of block h (upper 16 bits h) that the sweep checks, into in; their number, a multiple
// of 64 (the list is padded with its first element).
std::size_t fill_block(u32 h, u32 stride, u32* in) {
  std::size_t n = 0;
  for (u32 l = h % stride; l < 0x10000u; l += stride) in[n++] = h << 16 | l;
  if (stride > 1) {
    in[n++] = h << 16 | 0xffffu;
    for (u32 k = 0; k < 16; ++k)
      for (const u32 tie : {1u << k, 3u << k})
        for (const u32 l : {tie - 1u, tie, tie + 1u}) in[n++] = h << 16 | (l & 0xffffu);
  }
  while (n % 64 != 0) in[n++] = in[0];
  return n;
}

unsigned sweep_threads() {
  const char* s = std::getenv("POSENC_CONVERSIONS_THREADS");
  const long v = s != nullptr && *s != '\0'
                     ? std::strtol(s, nullptr, 10)
                     : static_cast<long>(std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::clamp(v, 1L, 16L));
}

// What one thread of a sweep accumulates: a tally per conversion, and scratch buffers.
struct sweep_state {
  std::vector<tally> tallies;
  std::vector<u16> want = std::vector<u16>(block_capacity), got = std::vector<u16>(block_capacity),
                   want_order = std::vector<u16>(block_capacity);
  std::vector<u32> in_order = std::vector<u32>(block_capacity);
  // The sample of the block for the narrower architectures (narrow_sweep_stride) and its want.
  std::vector<u32> sample = std::vector<u32>(block_capacity);
  std::vector<u16> sample_want = std::vector<u16>(block_capacity);
};

// Runs f(state, h, in, n) for every block h, on sweep_threads() threads (blocks handed out in
// runs of 256), and returns the tallies of all threads added up.
template <class F>
std::vector<tally> sweep(u32 stride, const std::vector<std::string>& names, F&& f) {
  std::vector<sweep_state> states(sweep_threads());
  for (sweep_state& st : states)
    for (const std::string& name : names) st.tallies.emplace_back(name);
  std::atomic<u32> next{0};
  const auto work = [&](sweep_state& st) {
    std::vector<u32> in(block_capacity);
    for (u32 h0 = next.fetch_add(256); h0 < 0x10000u; h0 = next.fetch_add(256))
      for (u32 h = h0; h < h0 + 256; ++h) f(st, h, in.data(), fill_block(h, stride, in.data()));
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < states.size(); ++t) threads.emplace_back(work, std::ref(states[t]));
  work(states[0]);
  for (std::thread& t : threads) t.join();
  std::vector<tally> sum = states[0].tallies;
  for (std::size_t t = 1; t < states.size(); ++t) {
    for (std::size_t i = 0; i < sum.size(); ++i) {
      sum[i].checked += states[t].tallies[i].checked;
      sum[i].bad += states[t].tallies[i].bad;
      if (sum[i].examples.size() < 1000) sum[i].examples += states[t].tallies[i].examples;
    }
  }
  return sum;
}

}  // namespace

// ---- tests
// ----------------------------------------------------------------------------------------

TEST_CASE("storage: float environment of the references", "[storage][mpfr][f16][bf16]") {
  CHECK(default_float_environment());
}

TEST_CASE("storage: widening, every 16-bit pattern", "[storage][widen]") {
  std::vector<u16> h(0x10000);
  for (u32 b = 0; b < 0x10000u; ++b) h[b] = static_cast<u16>(b);
  std::vector<u32> want_f16(0x10000), want_bf16(0x10000), got(0x10000);
  for (u32 b = 0; b < 0x10000u; ++b) {
    want_f16[b] = decode_f16(h[b]);
    want_bf16[b] = decode_bf16(h[b]);
  }

  tally dec16{"to_float(f16) vs decoder"}, ld16{"load_float(f16)"},
      dbf{"to_float(bf16) vs decoder"}, ldbf{"load_float(bf16)"},
      ld_float16{"load_float(_Float16)"}, hw16{"to_float(f16) vs vcvtph2ps (non-NaN)"},
      nan16{"vcvtph2ps(NaN) == rule | quiet"};
  for (u32 b = 0; b < 0x10000u; ++b) {
    dec16.add(b, bits_of(posenc::to_float(f16{h[b]})), want_f16[b]);
    ld16.add(b, bits_of(posenc::load_float(f16{h[b]})), want_f16[b]);
    dbf.add(b, bits_of(posenc::to_float(bf16{h[b]})), want_bf16[b]);
    ldbf.add(b, bits_of(posenc::load_float(bf16{h[b]})), want_bf16[b]);
#if POSENC_HAS_FLOAT16
    ld_float16.add(b, bits_of(posenc::load_float(std::bit_cast<_Float16>(h[b]))), want_f16[b]);
#endif
  }
  report(dec16);
  report(ld16);
  report(dbf);
  report(ldbf);
#if POSENC_HAS_FLOAT16
  report(ld_float16);
#endif

  if (cpu_has_f16c()) {
    hw_from_f16(h.data(), got.data(), h.size());
    for (u32 b = 0; b < 0x10000u; ++b) {
      if (is_nan32(want_f16[b])) {
        // vcvtph2ps sets the quiet bit of a signalling NaN; posenc keeps the bits (storage.hpp).
        nan16.add(b, got[b], want_f16[b] | 0x00400000u);
      } else {
        hw16.add(b, bits_of(posenc::to_float(f16{h[b]})), got[b]);
      }
    }
    report(hw16);
    std::cout << "storage: vcvtph2ps on the 2046 NaN patterns: " << nan16.bad
              << " differ from the rule with the quiet bit set\n";
  } else {
    std::cout << "storage: no F16C on this CPU: f16 widening checked against the decoder only\n";
  }

  // Round trips: every non-NaN pattern comes back; a NaN comes back quiet.
  tally rt16{"to_f16(to_float(f16))"}, rtbf{"to_bf16(to_float(bf16))"};
  for (u32 b = 0; b < 0x10000u; ++b) {
    const bool nan16_ = (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) != 0;
    const bool nanbf = (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0;
    rt16.add(b, posenc::to_f16(posenc::to_float(f16{h[b]})).bits, nan16_ ? b | 0x200u : b);
    rtbf.add(b, posenc::to_bf16(posenc::to_float(bf16{h[b]})).bits, nanbf ? b | 0x40u : b);
  }
  report(rt16);
  report(rtbf);

  // The SIMD widening of every architecture.
  for (const conv::simd_conversions* c : simd_entries()) {
    tally wb{std::string(c->arch) + " widen_bf16"},
        lb{std::string(c->arch) + " load_widened<bf16>"},
        lf{std::string(c->arch) + " load_widened<f16>"},
        lh{std::string(c->arch) + " load_widened<_Float16>"};
    c->widen_bf16(h.data(), got.data(), h.size());
    wb.add(h.data(), got.data(), want_bf16.data(), h.size());
    c->load_widened(conv::kind::bf16, h.data(), got.data(), h.size());
    lb.add(h.data(), got.data(), want_bf16.data(), h.size());
    c->load_widened(conv::kind::f16, h.data(), got.data(), h.size());
    lf.add(h.data(), got.data(), want_f16.data(), h.size());
    report(wb);
    report(lb);
    report(lf);
#if POSENC_HAS_FLOAT16
    c->load_widened(conv::kind::float16, h.data(), got.data(), h.size());
    lh.add(h.data(), got.data(), want_f16.data(), h.size());
    report(lh);
#endif
  }
}

TEST_CASE("storage: narrowing against MPFR on the dense sample", "[storage][mpfr]") {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<u32> xs = dense_sample();
  const std::size_t finite = xs.size();
  // NaNs (quiet and signalling, both signs, payloads in the kept and the dropped bits), for the
  // written-out rule: the sweeps check every NaN, but only where the instructions exist.
  for (const u32 sign : {0u, 0x80000000u})
    for (const u32 m : {0x000001u, 0x001fffu, 0x002000u, 0x00ffffu, 0x010000u, 0x3fffffu, 0x400000u,
                        0x400001u, 0x7fffffu, 0x2aaaaau, 0x555555u})
      xs.push_back(sign | 0x7f800000u | m);
  xs.resize((xs.size() + 63) / 64 * 64, xs[0]);
  const std::size_t n = xs.size();
  std::vector<u16> want16(n), wantbf(n), got(n);
  {
    mpfr_format binary16(11, -23, 16);
    for (std::size_t i = 0; i < n; ++i)
      want16[i] = i < finite || !is_nan32(xs[i]) ? encode_f16(binary16.round(as_float(xs[i])))
                                                 : nan_rule_f16(xs[i]);
  }
  {
    mpfr_format bfloat16(8, -132, 128);
    for (std::size_t i = 0; i < n; ++i)
      wantbf[i] = i < finite || !is_nan32(xs[i]) ? encode_bf16(bfloat16.round(as_float(xs[i])))
                                                 : nan_rule_bf16(xs[i]);
  }

  tally f{"to_f16"}, sf{"store_as<f16>"}, sh{"store_as<_Float16>"}, b{"to_bf16"},
      sb{"store_as<bf16>"};
  for (std::size_t i = 0; i < n; ++i) {
    const float x = as_float(xs[i]);
    f.add(xs[i], posenc::to_f16(x).bits, want16[i]);
    sf.add(xs[i], posenc::store_as<f16>(x).bits, want16[i]);
#if POSENC_HAS_FLOAT16
    sh.add(xs[i], std::bit_cast<u16>(posenc::store_as<_Float16>(x)), want16[i]);
#endif
    b.add(xs[i], posenc::to_bf16(x).bits, wantbf[i]);
    sb.add(xs[i], posenc::store_as<bf16>(x).bits, wantbf[i]);
  }
  for (const tally* t : {&f, &sf, &b, &sb}) report(*t);
#if POSENC_HAS_FLOAT16
  report(sh);
#endif

  for (const conv::simd_conversions* c : simd_entries()) {
    tally nb{std::string(c->arch) + " narrow_bf16"},
        snb{std::string(c->arch) + " store_narrowed<bf16>"},
        snf{std::string(c->arch) + " store_narrowed<f16>"},
        snh{std::string(c->arch) + " store_narrowed<_Float16>"};
    std::vector<u32> xs_order(n);
    std::vector<u16> want_order(n);
    in_store_bf16_order(xs.data(), xs_order.data(), n, c->width);
    in_store_bf16_order(wantbf.data(), want_order.data(), n, c->width);
    c->narrow_bf16(xs.data(), got.data(), n);
    nb.add(xs_order.data(), got.data(), want_order.data(), n);
    c->store_narrowed(conv::kind::bf16, xs.data(), got.data(), n);
    snb.add(xs.data(), got.data(), wantbf.data(), n);
    c->store_narrowed(conv::kind::f16, xs.data(), got.data(), n);
    snf.add(xs.data(), got.data(), want16.data(), n);
    report(nb);
    report(snb);
    report(snf);
#if POSENC_HAS_FLOAT16
    c->store_narrowed(conv::kind::float16, xs.data(), got.data(), n);
    snh.add(xs.data(), got.data(), want16.data(), n);
    report(snh);
#endif
  }

  // Each subnormal of the sample alone among normal floats of the sample, at lane j = s % 64 of
  // its block of 64 (every lane of every batch width, in the even and in the odd half of
  // narrow_bf16's pairs): a vector must take the integer rounding whichever of its lanes holds the
  // subnormal (avx512bf16, whose vcvtneps2bf16 treats subnormal inputs as zero).
  {
    std::vector<std::size_t> sub, normal;
    for (std::size_t i = 0; i < finite; ++i) {
      const u32 e = xs[i] & 0x7f800000u;
      if (e == 0 && (xs[i] & 0x7fffffu) != 0) sub.push_back(i);
      if (e != 0 && e != 0x7f800000u) normal.push_back(i);
    }
    REQUIRE(sub.size() > 64);
    std::vector<u32> lone;
    std::vector<u16> lone_want;
    for (std::size_t s = 0; s < sub.size(); ++s) {
      for (std::size_t j = 0; j < 64; ++j) {
        const std::size_t i = j == s % 64 ? sub[s] : normal[(64 * s + j) % normal.size()];
        lone.push_back(xs[i]);
        lone_want.push_back(wantbf[i]);
      }
    }
    const std::size_t m = lone.size();
    std::vector<u32> lone_order(m);
    std::vector<u16> want_order(m), lone_got(m);
    for (const conv::simd_conversions* c : simd_entries()) {
      tally nb{std::string(c->arch) + " narrow_bf16, one subnormal per block"},
          snb{std::string(c->arch) + " store_narrowed<bf16>, one subnormal per block"};
      in_store_bf16_order(lone.data(), lone_order.data(), m, c->width);
      in_store_bf16_order(lone_want.data(), want_order.data(), m, c->width);
      c->narrow_bf16(lone.data(), lone_got.data(), m);
      nb.add(lone_order.data(), lone_got.data(), want_order.data(), m);
      c->store_narrowed(conv::kind::bf16, lone.data(), lone_got.data(), m);
      snb.add(lone.data(), lone_got.data(), lone_want.data(), m);
      report(nb);
      report(snb);
    }
  }

  // The other tests' expected 16-bit values (support/storage_oracle.hpp, FPU rounding of the
  // scaled value) against MPFR, NaNs against the written-out rule: the same sample.
  {
    tally of{"oracle_f16_bits (support/storage_oracle.hpp)"},
        ob{"oracle_bf16_bits (support/storage_oracle.hpp)"};
    for (std::size_t i = 0; i < n; ++i) {
      of.add(xs[i], posenc_test::oracle_f16_bits(as_float(xs[i])), want16[i]);
      ob.add(xs[i], posenc_test::oracle_bf16_bits(as_float(xs[i])), wantbf[i]);
    }
    report(of);
    report(ob);
  }

  // The instructions against MPFR on the same sample: the two references agree, except for the
  // documented DAZ class of vcvtneps2bf16 (subnormal inputs give zero).
  if (cpu_has_f16c()) {
    tally hw{"vcvtps2ph vs MPFR"};
    hw_to_f16(xs.data(), got.data(), n);
    hw.add(xs.data(), got.data(), want16.data(), finite);  // NaNs: the rule, not the instruction
    report(hw);
  }
  if (cpu_has_avx512bf16()) {
    tally hw{"vcvtneps2bf16 vs MPFR (normal inputs)"},
        daz{"vcvtneps2bf16 (subnormal inputs) is +-0"}, rule{"MPFR vs the subnormal rule"};
    hw_to_bf16(xs.data(), got.data(), n);
    for (std::size_t i = 0; i < finite; ++i) {
      if ((xs[i] & 0x7f800000u) == 0) {
        daz.add(xs[i], got[i], (xs[i] >> 16) & 0x8000u);
        rule.add(xs[i], subnormal_rule_bf16(xs[i]), wantbf[i]);
      } else {
        hw.add(xs[i], got[i], wantbf[i]);
      }
    }
    report(hw);
    report(daz);
    report(rule);
  }
  std::cout << "storage: MPFR sample of " << n << " floats in " << seconds_since(t0) << " s\n";
}

TEST_CASE("storage: f32 -> f16, every float, against vcvtps2ph", "[storage][f16]") {
  if (!cpu_has_f16c()) {
    std::cout << "storage: no F16C on this CPU: f32 -> f16 checked on the MPFR sample only\n";
    return;
  }
  const u32 stride = sweep_stride();
  const u32 narrow_stride = std::max(stride, narrow_sweep_stride());
  const auto t0 = std::chrono::steady_clock::now();
  const auto simd = simd_entries();
  enum { to_f16, store_f16, store_float16, nan_hw, simd0 };
  std::vector<std::string> names{"to_f16", "store_as<f16>", "store_as<_Float16>",
                                 "vcvtps2ph(NaN) vs rule"};
  for (const auto* c : simd) names.push_back(std::string(c->arch) + " store_narrowed<f16>");
  const std::vector<tally> r =
      sweep(stride, names, [&](sweep_state& st, u32 h, const u32* in, std::size_t n) {
        u16* want = st.want.data();
        u16* got = st.got.data();
        // vcvtps2ph, with the NaN rule in place of its NaN results (tallied once, on `in`).
        const auto reference = [h](const u32* x, u16* w, std::size_t m, tally* nan) {
          hw_to_f16(x, w, m);
          if (((h >> 7) & 0xffu) != 0xffu) return;
          for (std::size_t j = 0; j < m; ++j) {
            if (!is_nan32(x[j])) continue;
            if (nan != nullptr) nan->add(x[j], w[j], nan_rule_f16(x[j]));
            w[j] = nan_rule_f16(x[j]);
          }
        };
        reference(in, want, n, &st.tallies[nan_hw]);
        std::size_t m = 0;
        if (narrow_stride > stride && simd.size() > 1) {
          m = fill_block(h, narrow_stride, st.sample.data());
          reference(st.sample.data(), st.sample_want.data(), m, nullptr);
        }
        // store_as<f16> and store_as<_Float16> are compared with to_f16 in the same loop (one
        // computation where the compiler sees they are the same); where all three agree,
        // to_f16's results are theirs.
        u32 differ = 0;
        for (std::size_t j = 0; j < n; ++j) {
          const float x = as_float(in[j]);
          const u16 a = posenc::to_f16(x).bits;
          differ |= static_cast<u32>(a ^ posenc::store_as<f16>(x).bits);
#if POSENC_HAS_FLOAT16
          differ |= static_cast<u32>(a ^ std::bit_cast<u16>(posenc::store_as<_Float16>(x)));
#endif
          got[j] = a;
        }
        st.tallies[to_f16].add(in, got, want, n);
        if (differ != 0)
          for (std::size_t j = 0; j < n; ++j) got[j] = posenc::store_as<f16>(as_float(in[j])).bits;
        st.tallies[store_f16].add(in, got, want, n);
#if POSENC_HAS_FLOAT16
        if (differ != 0)
          for (std::size_t j = 0; j < n; ++j)
            got[j] = std::bit_cast<u16>(posenc::store_as<_Float16>(as_float(in[j])));
        st.tallies[store_float16].add(in, got, want, n);
#endif
        // The SIMD narrowing of every architecture (F16C, AVX-512F or integer code); the
        // narrower ones on the sample when there is one.
        for (std::size_t k = 0; k < simd.size(); ++k) {
          const bool sampled = m > 0 && k + 1 < simd.size();
          const u32* x = sampled ? st.sample.data() : in;
          const u16* w = sampled ? st.sample_want.data() : want;
          const std::size_t nx = sampled ? m : n;
          simd[k]->store_narrowed(conv::kind::f16, x, got, nx);
          st.tallies[simd0 + k].add(x, got, w, nx);
        }
      });
  report(r[to_f16]);
  report(r[store_f16]);
#if POSENC_HAS_FLOAT16
  report(r[store_float16]);
#endif
  for (std::size_t k = simd0; k < r.size(); ++k) report(r[k]);
  std::cout << "storage: f32 -> f16: " << r[to_f16].checked << " floats (stride " << stride
            << ", narrower architectures " << narrow_stride << ", " << sweep_threads()
            << " threads) in " << seconds_since(t0) << " s; vcvtps2ph on NaNs: " << r[nan_hw].bad
            << " of " << r[nan_hw].checked << " differ from the rule\n";
}

TEST_CASE("storage: f32 -> bf16, every float, against vcvtneps2bf16", "[storage][bf16]") {
  if (!cpu_has_avx512bf16()) {
    std::cout << "storage: no AVX-512 BF16 on this CPU: f32 -> bf16 checked on the MPFR sample "
                 "only\n";
    return;
  }
  const u32 stride = sweep_stride();
  const u32 narrow_stride = std::max(stride, narrow_sweep_stride());
  const auto t0 = std::chrono::steady_clock::now();
  const auto simd = simd_entries();
  enum { to_bf16, store_bf16, nan_hw, simd0 };
  std::vector<std::string> names{"to_bf16", "store_as<bf16>", "vcvtneps2bf16(NaN) vs rule"};
  for (const auto* c : simd) names.push_back(std::string(c->arch) + " narrow_bf16");
  for (const auto* c : simd) names.push_back(std::string(c->arch) + " store_narrowed<bf16>");
  const std::vector<tally> r =
      sweep(stride, names, [&](sweep_state& st, u32 h, const u32* in, std::size_t n) {
        u16* want = st.want.data();
        u16* got = st.got.data();
        // vcvtneps2bf16, with the rules in place of its NaN results (tallied once, on `in`) and of
        // its subnormal ones.
        const auto reference = [h](const u32* x, u16* w, std::size_t m, tally* nan) {
          hw_to_bf16(x, w, m);
          const u32 e = (h >> 7) & 0xffu;
          if (e == 0xffu) {
            for (std::size_t j = 0; j < m; ++j) {
              if (!is_nan32(x[j])) continue;
              if (nan != nullptr) nan->add(x[j], w[j], nan_rule_bf16(x[j]));
              w[j] = nan_rule_bf16(x[j]);
            }
          } else if (e == 0) {
            // vcvtneps2bf16 flushes subnormal inputs to zero: the written-out rule instead.
            for (std::size_t j = 0; j < m; ++j) w[j] = subnormal_rule_bf16(x[j]);
          }
        };
        reference(in, want, n, &st.tallies[nan_hw]);
        std::size_t m = 0;
        if (narrow_stride > stride && simd.size() > 1) {
          m = fill_block(h, narrow_stride, st.sample.data());
          reference(st.sample.data(), st.sample_want.data(), m, nullptr);
        }
        u32 differ = 0;
        for (std::size_t j = 0; j < n; ++j) {
          const float x = as_float(in[j]);
          const u16 a = posenc::to_bf16(x).bits;
          differ |= static_cast<u32>(a ^ posenc::store_as<bf16>(x).bits);
          got[j] = a;
        }
        st.tallies[to_bf16].add(in, got, want, n);
        if (differ != 0)
          for (std::size_t j = 0; j < n; ++j) got[j] = posenc::store_as<bf16>(as_float(in[j])).bits;
        st.tallies[store_bf16].add(in, got, want, n);
        // The narrower architectures on the sample when there is one.
        std::size_t width = 0;
        bool order_of_sample = false;
        for (std::size_t k = 0; k < simd.size(); ++k) {
          const bool sampled = m > 0 && k + 1 < simd.size();
          const u32* x = sampled ? st.sample.data() : in;
          const u16* w = sampled ? st.sample_want.data() : want;
          const std::size_t nx = sampled ? m : n;
          if (simd[k]->width != width || sampled != order_of_sample) {
            width = simd[k]->width;
            order_of_sample = sampled;
            in_store_bf16_order(w, st.want_order.data(), nx, width);
            in_store_bf16_order(x, st.in_order.data(), nx, width);
          }
          simd[k]->narrow_bf16(x, got, nx);
          st.tallies[simd0 + k].add(st.in_order.data(), got, st.want_order.data(), nx);
        }
        for (std::size_t k = 0; k < simd.size(); ++k) {
          const bool sampled = m > 0 && k + 1 < simd.size();
          const u32* x = sampled ? st.sample.data() : in;
          const u16* w = sampled ? st.sample_want.data() : want;
          const std::size_t nx = sampled ? m : n;
          simd[k]->store_narrowed(conv::kind::bf16, x, got, nx);
          st.tallies[simd0 + simd.size() + k].add(x, got, w, nx);
        }
      });
  for (std::size_t i = 0; i < r.size(); ++i)
    if (i != nan_hw) report(r[i]);
  std::cout << "storage: f32 -> bf16: " << r[to_bf16].checked << " floats (stride " << stride
            << ", narrower architectures " << narrow_stride << ", " << sweep_threads()
            << " threads) in " << seconds_since(t0)
            << " s; vcvtneps2bf16 on NaNs: " << r[nan_hw].bad << " of " << r[nan_hw].checked
            << " differ from the rule\n";
}
