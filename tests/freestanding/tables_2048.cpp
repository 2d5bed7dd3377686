// The umbrella header, freestanding: this translation unit includes posenc/posenc.hpp and holds
// the RoPE tables of head_dim 64 (base 10000, half-split pairs) for 2048 positions in both formats
// of posenc/kernels/rope_table.hpp, so that check.sh can read their sections and sizes:
//   compact:  rope_cache_v                   cos, sin: 2048 x 32 floats each, 2 * (R/2) * P * 4 B
//   expanded: kernels::expanded_rope_cache_v cos, sin: 2048 x 64 floats each, 2 * R * P * 4 B
// The exported functions keep the tables referenced (and so emitted) without any run-time work.
#include <posenc/posenc.hpp>

#include <cstddef>

namespace {
struct head64 {
  static constexpr posenc::rope_config config{64, 64, 10000.0, posenc::rope_layout::half};
};
constexpr std::size_t positions = 2048;

constexpr const auto& compact = posenc::rope_cache_v<head64, float, positions>;
constexpr const auto& expanded = posenc::kernels::expanded_rope_cache_v<head64, positions>;
static_assert(sizeof(compact.cos) + sizeof(compact.sin) == 2 * 32 * positions * sizeof(float));
static_assert(sizeof(expanded.cos) + sizeof(expanded.sin) == 2 * 64 * positions * sizeof(float));
// The expanded rows are copies and negations of the compact entries (exact).
static_assert(expanded.cos[2047 * 64 + 40] == compact.cos_at(2047, 8) &&
              expanded.sin[2047 * 64 + 8] == -compact.sin_at(2047, 8) &&
              expanded.sin[2047 * 64 + 40] == compact.sin_at(2047, 8));
}  // namespace

extern "C" const float* posenc_fs_compact_cos(void) {
  return compact.cos;
}
extern "C" const float* posenc_fs_expanded_cos(void) {
  return expanded.cos.data();
}
extern "C" const posenc::kernels::rope_table* posenc_fs_expanded_table(void) {
  static constexpr posenc::kernels::rope_table t = expanded.table();
  return &t;
}
