// Attention temperature (posenc/spec/attention_temperature.hpp, docs/formulas.md §12): on
// compile-time tables around the steps, s >= 1, s is non-decreasing, log-n is exactly 1 up to
// its training length, Llama-4 (HF defaults) is exactly 1 below floor_scale - 1.
#include <posenc/spec/attention_temperature.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

namespace {
using posenc::attention_temperature;

struct llama4_defaults {
  static constexpr attention_temperature config = posenc::temperature::llama4();
};
struct qwen_7b_logn {  // Qwen-7B config.json: seq_length 8192, use_logn_attn true
  static constexpr attention_temperature config = posenc::temperature::logn(8192);
};

template <class T, std::size_t N>
constexpr bool at_least_one_and_non_decreasing(const std::array<T, N>& t) {
  for (std::size_t i = 0; i < N; ++i) {
    if (!(t[i] >= T{1})) return false;
    if (i > 0 && t[i] < t[i - 1]) return false;
  }
  return true;
}

// Positions 8160..8223 (the first step of both) and 16352..16415 (Llama-4's second step).
constexpr auto l4_a = posenc::query_scale_table_v<llama4_defaults, float, 64, 8160>;
constexpr auto l4_b = posenc::query_scale_table_v<llama4_defaults, double, 64, 16352>;
constexpr auto qw_a = posenc::query_scale_table_v<qwen_7b_logn, float, 64, 8160>;
constexpr auto qw_b = posenc::query_scale_table_v<qwen_7b_logn, double, 64, 131040>;

static_assert(at_least_one_and_non_decreasing(l4_a), "llama4: s >= 1, non-decreasing (8160..)");
static_assert(at_least_one_and_non_decreasing(l4_b), "llama4: s >= 1, non-decreasing (16352..)");
static_assert(at_least_one_and_non_decreasing(qw_a), "logn: s >= 1, non-decreasing (8160..)");
static_assert(at_least_one_and_non_decreasing(qw_b), "logn: s >= 1, non-decreasing (131040..)");
static_assert(l4_a[8190 - 8160] == 1.0f && l4_a[8191 - 8160] > 1.0f,
              "llama4: 1 below p = 8191, above from it");
static_assert(l4_b[16382 - 16352] == l4_b[16381 - 16352] &&
                  l4_b[16383 - 16352] > l4_b[16382 - 16352],
              "llama4: the second step at p = 16383");
static_assert(qw_a[8191 - 8160] == 1.0f && qw_a[8192 - 8160] > 1.0f,
              "logn: 1 up to the training length, above past it");
static_assert(qw_b[131071 - 131040] == 17.0 / 13.0, "logn: log_8192(131072) = 17/13");
}  // namespace
