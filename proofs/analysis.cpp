// Compile-time proofs of posenc/analysis/{dials,ramp,check}.hpp on presets: building this
// translation unit is the proof.
// - Dials of llama-3.1-8b over its original context of 8192 tokens (docs/formulas.md §2
//   "llama3": pairs 0..28 unchanged, 35..63 divided by the factor 8): the fast band keeps its
//   default dials, every pair of the slow band turns 8 times slower and completes no turn.
// - The slowest wavelength of d = 128, base 10^4 lies below its limit 2 pi base = 62831.85 tokens
//   and within 2 ln(base)/R of it (1 - base^(-2/R) <= 2 ln(base)/R).
// - The YaRN ramp of deepseek-v2-lite (d = 64, base 10^4, L = 4096): the correction range is
//   floor/ceil of HF's dims 10.47 and 22.51 (formulas.md §2 find_correction_dim: R ln(L / (beta
//   2 pi)) / (2 ln base) for beta 32 and 1), so (10, 23); ramp 0 at or below 10, 1 at or above 23.
// - check_laws on a small configuration with a small sample passes every law, and fails
//   decay_below_origin for a single pair (f(r) = f(0) = 1).
#include <cstdint>

#include <posenc/analysis.hpp>
#include <posenc/spec/presets.hpp>

namespace pa = posenc::analysis;
namespace pm = posenc::math;
using posenc::rope_config;
using posenc::rope_layout;

namespace {

constexpr rope_config llama31 = posenc::presets::llama_3_1_8b::config;
constexpr auto llama31_dials = pa::dials_of<64>(llama31, 8192);

constexpr bool fast_band_unchanged() {
  for (std::size_t i = 0; i <= 28; ++i)
    if (!(llama31_dials[i].scaled.inv_freq == llama31_dials[i].unscaled.inv_freq)) return false;
  return true;
}
static_assert(fast_band_unchanged(), "llama3: pairs 0..28 keep their default frequency");

constexpr bool slow_band_eight_times_slower() {
  for (std::size_t i = 35; i < 64; ++i) {
    const pa::dial_pair& d = llama31_dials[i];
    const pm::dd ratio = d.scaled.wavelength / d.unscaled.wavelength;
    const double err = (ratio - 8.0).hi;
    if (!(err < 0x1p-90 && err > -0x1p-90)) return false;
    if (!d.scaled.never_turns) return false;
  }
  return true;
}
static_assert(slow_band_eight_times_slower(),
              "llama3: pairs 35..63 divided by the factor, no turn within 8192 tokens");

constexpr double slowest_d128 = pm::to_double(pa::slowest_wavelength(rope_config{128, 128}));
static_assert(slowest_d128 < 62831.853071795864, "the slowest wavelength is below 2 pi base");
// 1 - base^(-2/R) <= 2 ln(10^4)/128 = 0.1439 (ln 10^4 = 9.2103...).
static_assert(1.0 - slowest_d128 / 62831.853071795864 <= 2.0 * 9.2103403719761836 / 128.0,
              "the slowest wavelength is within 2 ln(base)/R of 2 pi base");

constexpr rope_config deepseek = posenc::presets::deepseek_v2_lite::config;
static_assert(pa::yarn_ramp_range(deepseek).low == pm::dd{10.0, 0.0} &&
                  pa::yarn_ramp_range(deepseek).high == pm::dd{23.0, 0.0},
              "deepseek-v2-lite: YaRN correction range (10, 23)");
static_assert(pa::yarn_ramp_factor(deepseek, 10) == pm::dd{0.0, 0.0} &&
                  pa::yarn_ramp_factor(deepseek, 23) == pm::dd{1.0, 0.0} &&
                  pa::interpolation_weight(deepseek, 31) == pm::dd{1.0, 0.0},
              "YaRN ramp: 0 keeps theta at or below low, 1 divides it at or above high");

constexpr pa::check_options tiny{0, 4, 0x706f73656e63ull, 64, 3};
static_assert(
    pa::check_laws(rope_config{16, 16, 10000.0, rope_layout::interleaved}, tiny).all_pass(),
    "the laws hold on d = 16, base 10^4 (4 samples, decay to r = 64, means to r < 16)");
static_assert(!pa::check_laws(rope_config{2, 2, 10000.0}, tiny)
                   .laws[static_cast<std::size_t>(pa::law::decay_below_origin)]
                   .pass,
              "a single pair has f(r) = f(0): decay_below_origin fails");

}  // namespace
