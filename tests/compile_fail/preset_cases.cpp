// Presets edited the way a user adds a model next to posenc::presets (spec/presets.hpp): a type
// with the preset's name, max_position_embeddings and config, one field of the config wrong. Each
// (-DPOSENC_CASE_<case>) must stop its table or frequencies with the rule's message; with
// -DPOSENC_VALID each is the published preset itself, through the same entry point, and every
// preset of posenc::presets::all goes through select_preset and checked_rope. Compiled by case.sh
// with -fsyntax-only; the cases and their rules are listed in meson.build.
#include <posenc/frequencies/rope.hpp>
#include <posenc/spec/presets.hpp>
#include <posenc/spec/select.hpp>
#include <posenc/tables/rope_cache.hpp>
#include <posenc/tables/rotation.hpp>

#include <span>
#include <string_view>

namespace {

namespace presets = posenc::presets;

#ifdef POSENC_VALID
constexpr bool broken = false;
#else
constexpr bool broken = true;
#endif

// P with its config replaced by edit(P::config) when broken.
template <class P, auto Edit>
struct edited : P {
  static constexpr posenc::rope_config config = broken ? Edit(P::config) : P::config;
};

// Llama 3.1 with its llama3 band reversed (low_freq_factor above high_freq_factor; equal ones
// are Llama-4 Scout's empty band, which is valid).
#if defined(POSENC_VALID) || defined(POSENC_CASE_preset_llama3_freq_factors)
using llama = edited<presets::llama_3_1_8b, [](posenc::rope_config c) {
  c.scaling.low_freq_factor = 2.0 * c.scaling.high_freq_factor;
  return c;
}>;
[[maybe_unused]] constexpr const auto& llama_cache = posenc::rope_cache_v<llama, float, 2>;
#endif

// Phi-3 with a long_factor list one entry short.
#if defined(POSENC_VALID) || defined(POSENC_CASE_preset_longrope_factor_length)
using phi3 = edited<presets::phi_3_mini_128k_instruct, [](posenc::rope_config c) {
  c.scaling.long_factor = c.scaling.long_factor.first(c.scaling.long_factor.size() - 1);
  return c;
}>;
[[maybe_unused]] constexpr const auto& phi3_freqs = posenc::inv_freq_v<phi3, float>;
#endif

// DeepSeek-V2-Lite with mscale_all_dim negated.
#if defined(POSENC_VALID) || defined(POSENC_CASE_preset_yarn_mscale)
using deepseek = edited<presets::deepseek_v2_lite, [](posenc::rope_config c) {
  c.scaling.mscale_all_dim = -c.scaling.mscale_all_dim;
  return c;
}>;
[[maybe_unused]] constexpr auto deepseek_pairs = posenc::rotation_pairs<deepseek, double>(1);
#endif

// GPT-NeoX-20B with rotary_pct 0.27: int(96 * 0.27) = 25, odd.
#if defined(POSENC_VALID) || defined(POSENC_CASE_preset_partial_rotary)
using neox = edited<presets::gpt_neox_20b, [](posenc::rope_config c) {
  c.rotary_dim = posenc::rotary_dim_from_factor(c.head_dim, 0.27);
  return c;
}>;
[[maybe_unused]] constexpr const auto& neox_cache = posenc::rope_cache_v<neox, double, 1>;
#endif

#ifdef POSENC_VALID
// Every published preset passes its rules, through the runtime name lookup.
constexpr bool every_preset_checked() {
  bool ok = true;
  for (std::string_view name : posenc::preset_names) {
    const bool found = posenc::select_preset(name, [&](auto t) {
      using P = typename decltype(t)::type;
      ok = ok && posenc::checked_rope<P>.head_dim == P::config.head_dim;
    });
    ok = ok && found;
  }
  return ok;
}
static_assert(every_preset_checked());
#endif

}  // namespace
