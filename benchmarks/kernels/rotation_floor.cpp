// rotation_floor (rotation_floor.hpp). Compiled without ISA flags: the vector bodies carry target
// attributes and run only where the dispatch library's ISA (which the CPU runs) has them.
//
// Each step computes y = x * c + x * s for 8 values x held in registers, each through an empty asm
// statement that may have changed it (so the compiler can neither fold the arithmetic nor hoist it
// out of the loop), and hands each y to another (so it cannot drop it). The steps depend on
// nothing but x, as each element's rotation in a kernel depends only on its inputs: the CPU
// overlaps them as far as its vector units allow.
#include "rotation_floor.hpp"

#include "x86.hpp"

#include <posenc/kernels/dispatch.hpp>

#include <string_view>

namespace posenc_bench {

namespace {

constexpr std::size_t kValues = 8;

#if defined(__GNUC__) || defined(__clang__)
#if defined(__x86_64__) || defined(__i386__)
#define POSENC_BENCH_REG "x"
#elif defined(__aarch64__)
#define POSENC_BENCH_REG "w"
#else
#define POSENC_BENCH_REG "m"
#endif
// v in a register, as far as the compiler knows changed.
#define POSENC_BENCH_OPAQUE(v) __asm__ volatile("" : "+" POSENC_BENCH_REG(v))
// v computed: the compiler must produce it.
#define POSENC_BENCH_USE(v) __asm__ volatile("" : : POSENC_BENCH_REG(v))
#else
#define POSENC_BENCH_OPAQUE(v) static_cast<void>(v)
#define POSENC_BENCH_USE(v) static_cast<void>(v)
#endif

// The loop every body runs: n / LANES steps, kValues at a time; STEP(v) is one rotation of the
// vector v. Lambdas would not take the bodies' target attributes, hence a macro.
#define POSENC_BENCH_LOOP(LANES, STEP)                                          \
  std::size_t steps = 0;                                                        \
  for (std::size_t i = 0; i + kValues * (LANES) <= n; i += kValues * (LANES)) { \
    for (auto& v : x) {                                                         \
      POSENC_BENCH_OPAQUE(v);                                                   \
      const auto y = STEP(v);                                                   \
      POSENC_BENCH_USE(y);                                                      \
    }                                                                           \
    steps += kValues;                                                           \
  }

rotation_floor_result run_scalar(std::size_t n) {
  float x[kValues] = {1, 2, 3, 4, 5, 6, 7, 8};
  const float c = 0.75f, s = 0.25f;
  // Unfused, as the kernels' fma_mode::unfused.
#define POSENC_BENCH_STEP(v) ((v)*c + (v)*s)
  POSENC_BENCH_LOOP(1, POSENC_BENCH_STEP)
  float sum = 0;
  for (const float v : x) sum += POSENC_BENCH_STEP(v);
#undef POSENC_BENCH_STEP
  return {sum == 36.0f ? 1u : 0u, steps, 1};
}

#if POSENC_BENCH_X86
// The lanes set in a compare's mask.
std::size_t set_bits(int mask) {
  return static_cast<std::size_t>(__builtin_popcount(static_cast<unsigned>(mask)));
}

// The check's sum: y_0 + ... + y_7 of one more step, by vector adds.
#define POSENC_BENCH_CHECK_SUM(ADD, STEP)                            \
  ADD(ADD(ADD(STEP(x[0]), STEP(x[1])), ADD(STEP(x[2]), STEP(x[3]))), \
      ADD(ADD(STEP(x[4]), STEP(x[5])), ADD(STEP(x[6]), STEP(x[7]))))

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
__attribute__((target("avx512f"))) rotation_floor_result run_avx512(std::size_t n) {
  __m512 x[kValues];
  for (std::size_t k = 0; k < kValues; ++k) x[k] = _mm512_set1_ps(static_cast<float>(k + 1));
  const __m512 c = _mm512_set1_ps(0.75f), s = _mm512_set1_ps(0.25f);
#define POSENC_BENCH_STEP(v) _mm512_fmadd_ps(v, c, _mm512_mul_ps(v, s))
  POSENC_BENCH_LOOP(16, POSENC_BENCH_STEP)
  const __m512 sum = POSENC_BENCH_CHECK_SUM(_mm512_add_ps, POSENC_BENCH_STEP);
#undef POSENC_BENCH_STEP
  const std::size_t good = set_bits(_mm512_cmp_ps_mask(sum, _mm512_set1_ps(36.0f), _CMP_EQ_OQ));
  return {good, steps, 16};
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

__attribute__((target("avx2,fma"))) rotation_floor_result run_avx2(std::size_t n) {
  __m256 x[kValues];
  for (std::size_t k = 0; k < kValues; ++k) x[k] = _mm256_set1_ps(static_cast<float>(k + 1));
  const __m256 c = _mm256_set1_ps(0.75f), s = _mm256_set1_ps(0.25f);
#define POSENC_BENCH_STEP(v) _mm256_fmadd_ps(v, c, _mm256_mul_ps(v, s))
  POSENC_BENCH_LOOP(8, POSENC_BENCH_STEP)
  const __m256 sum = POSENC_BENCH_CHECK_SUM(_mm256_add_ps, POSENC_BENCH_STEP);
#undef POSENC_BENCH_STEP
  const std::size_t good =
      set_bits(_mm256_movemask_ps(_mm256_cmp_ps(sum, _mm256_set1_ps(36.0f), _CMP_EQ_OQ)));
  return {good, steps, 8};
}

rotation_floor_result run_sse2(std::size_t n) {
  __m128 x[kValues];
  for (std::size_t k = 0; k < kValues; ++k) x[k] = _mm_set1_ps(static_cast<float>(k + 1));
  const __m128 c = _mm_set1_ps(0.75f), s = _mm_set1_ps(0.25f);
#define POSENC_BENCH_STEP(v) _mm_add_ps(_mm_mul_ps(v, c), _mm_mul_ps(v, s))
  POSENC_BENCH_LOOP(4, POSENC_BENCH_STEP)
  const __m128 sum = POSENC_BENCH_CHECK_SUM(_mm_add_ps, POSENC_BENCH_STEP);
#undef POSENC_BENCH_STEP
  const std::size_t good = set_bits(_mm_movemask_ps(_mm_cmpeq_ps(sum, _mm_set1_ps(36.0f))));
  return {good, steps, 4};
}
#undef POSENC_BENCH_CHECK_SUM
#endif

#undef POSENC_BENCH_LOOP
#undef POSENC_BENCH_USE
#undef POSENC_BENCH_OPAQUE
#undef POSENC_BENCH_REG

struct chosen {
  rotation_floor_result (*fn)(std::size_t);
  const char* isa;
};

chosen choose() {
#if POSENC_BENCH_X86
  const std::string_view isa = posenc::kernels::dispatch::active_isa();
  if (isa.substr(0, 6) == "avx512") return {run_avx512, "avx512f"};
  if (isa == "avx2") return {run_avx2, "avx2"};
  if (isa == "sse4.2" || isa == "sse2") return {run_sse2, "sse2"};
#endif
  return {run_scalar, "scalar"};
}

const chosen& the_floor() {
  static const chosen c = choose();
  return c;
}

}  // namespace

rotation_floor_result rotation_floor(std::size_t n) {
  return the_floor().fn(n);
}

const char* rotation_floor_isa() {
  return the_floor().isa;
}

}  // namespace posenc_bench
