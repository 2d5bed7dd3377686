// Compile-time cost probe: one translation unit holding a constexpr float table of cos/sin for
// 64 frequencies (head_dim 128, base 10000) x 4096 positions, every entry correctly rounded.
// measure.sh compiles it with each compiler and reports wall time and peak memory.
#include <array>
#include <cstddef>
#include <cstdint>

#include <posenc/math.hpp>

namespace pm = posenc::math;

namespace {
constexpr std::size_t kPositions = POSENC_GRID_POSITIONS;
constexpr std::size_t kPairs = 64;

constexpr std::array<pm::dd, kPairs> thetas() {
  std::array<pm::dd, kPairs> th{};
  for (std::size_t i = 0; i < kPairs; ++i)
    th[i] = pm::pow_ratio(10000.0, -2 * static_cast<std::int64_t>(i), 2 * kPairs);
  return th;
}
}  // namespace

constexpr auto kGrid = pm::make_sincos_grid<float, kPositions, kPairs>(thetas());

// Keeps the table in the object file (.rodata).
const float* posenc_grid_cos() { return kGrid.cos; }
const float* posenc_grid_sin() { return kGrid.sin; }
