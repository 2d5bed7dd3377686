// The compile-time table of the kernel benchmark, in a translation unit of its own (the compiler
// computes its 2 x 262,144 floats: several seconds, and the raised constexpr limits of
// `constexpr_args`): head_dim 128, base 10000, no scaling, positions [0, 4096).
#include <posenc/spec/rope.hpp>
#include <posenc/tables/rope_cache.hpp>

#include "tables.hpp"

namespace posenc_bench {

namespace {
struct bench_spec {
  static constexpr posenc::rope_config config{kHeadDim, kHeadDim, kBase, posenc::rope_layout::half,
                                              posenc::scaling::none()};
};
}  // namespace

// The cache values do not depend on the layout (compact rows hold cos_i and sin_i per pair), so
// one cache serves both layouts through make_rope_table(view, layout).
posenc::rope_cache_view<float> constexpr_cache() {
  return posenc::rope_cache_v<bench_spec, float, kMaxPos>.view();
}

}  // namespace posenc_bench
