// Misuses of the per-layer plan (posenc/spec/layer_plan.hpp) that must not compile
// (-DPOSENC_MISUSE_<case>), each with a corrected twin (-DPOSENC_VALID) that must. Compiled by
// misuse.sh with -fsyntax-only; the cases and the text the compiler's output must contain are
// listed in meson.build.
#include <posenc/spec/layer_plan.hpp>
#include <posenc/spec/presets.hpp>

#include <array>
#include <cstdint>

namespace presets = posenc::presets;

namespace {

#if defined(POSENC_MISUSE_layer_index_past_model)
// Gemma-3-4B has 34 layers, 0 to 33.
#ifdef POSENC_VALID
[[maybe_unused]] constexpr posenc::layer_spec layer = posenc::layer_v<presets::gemma_3_4b, 33>;
#else
[[maybe_unused]] constexpr posenc::layer_spec layer = posenc::layer_v<presets::gemma_3_4b, 34>;
#endif

#elif defined(POSENC_MISUSE_table_index_past_model)
// Llama-4 Scout's RoPE layers share one table.
#ifdef POSENC_VALID
[[maybe_unused]] constexpr posenc::rope_config table =
    posenc::layer_table_spec<presets::llama_4_scout, 0>::config;
#else
[[maybe_unused]] constexpr posenc::rope_config table =
    posenc::layer_table_spec<presets::llama_4_scout, 1>::config;
#endif

#elif defined(POSENC_MISUSE_no_rope_layers_length)
// A model written out by hand with a no_rope_layers list one entry short.
#ifdef POSENC_VALID
constexpr std::array<std::uint8_t, 4> flags{1, 1, 1, 0};
#else
constexpr std::array<std::uint8_t, 3> flags{1, 1, 1};
#endif
struct four_layers {
  static constexpr posenc::model_config model{
      .num_hidden_layers = 4,
      .rope = {64, 64, 10000.0, posenc::rope_layout::half, {}},
      .no_rope_layers = flags};
};
[[maybe_unused]] constexpr posenc::layer_spec layer = posenc::layer_v<four_layers, 3>;
#endif

}  // namespace
