// Shared constants of the kernel benchmark and the compile-time table's accessor.
#pragma once

#include <posenc/tables/rope_cache.hpp>

#include <cstddef>
#include <cstdint>

namespace posenc_bench {

inline constexpr std::uint32_t kHeadDim = 128;
inline constexpr std::size_t kHeads = 32;
inline constexpr double kBase = 10000.0;
inline constexpr std::size_t kMaxPos = 4096;  // table rows; the largest T benchmarked

// rope_cache_v<spec, float, kMaxPos> (constexpr_table.cpp), built by the compiler.
posenc::rope_cache_view<float> constexpr_cache();

}  // namespace posenc_bench
