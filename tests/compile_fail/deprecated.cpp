// Every public name that "one name per idea" replaced, used once under its old name:
// each must still compile and mean what its new name means (the static_asserts), and each use must
// draw a deprecation warning. deprecated.sh compiles this file with -Wno-deprecated-declarations
// (no warning may remain) and with -Wdeprecated-declarations (every line marked "deprecated:"
// must get one, and no other line).
#include <posenc/analysis/laws.hpp>
#include <posenc/kernels/dispatch.hpp>
#include <posenc/spec/dispatch.hpp>  // the header's old name (a comment says so; no warning)
#include <posenc/spec/learned.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/spec/select.hpp>
#include <posenc/tables/learned.hpp>
#include <posenc/tables/rotation.hpp>

#include <cstdint>
#include <string_view>
#include <type_traits>

namespace {

struct spec {
  static constexpr posenc::rope_config config{8, 8, 10000.0, posenc::rope_layout::interleaved};
};

constexpr bool same_config(const posenc::rope_config& a, const posenc::rope_config& b) {
  return a.head_dim == b.head_dim && a.rotary_dim == b.rotary_dim && a.base == b.base &&
         a.layout == b.layout && a.scaling.type == b.scaling.type;
}
constexpr bool same_learned(const posenc::learned_config& a, const posenc::learned_config& b) {
  return a.positions == b.positions && a.dim == b.dim && a.offset == b.offset;
}

// The marker must stay on the line of the use it names: no reformatting below.
// clang-format off

// spec/rope.hpp
static_assert(same_config(posenc::checked_config<spec>, posenc::checked_rope<spec>));  // deprecated: checked_config

// tables/rotation.hpp
static_assert(std::is_same_v<posenc::rope_pair_channels, posenc::channel_pair>);  // deprecated: rope_pair_channels

// analysis/laws.hpp
static_assert(std::is_same_v<posenc::analysis::channel_pair, posenc::channel_pair>);  // deprecated: analysis::channel_pair
static_assert(posenc::analysis::channels_of(posenc::rope_layout::half, 8, 1).second ==  // deprecated: analysis::channels_of
              posenc::pair_channels(posenc::rope_layout::half, 8, 1).second);

// spec/learned.hpp
static_assert(posenc::learned_error::max_positions == posenc::learned_error::positions);  // deprecated: learned_error::max_positions
static_assert(same_learned(posenc::learned_presets::bert_base, posenc::presets::bert_base::config));  // deprecated: learned_presets (bert_base)
static_assert(same_learned(posenc::learned_presets::gpt2, posenc::presets::gpt2::config));  // deprecated: learned_presets (gpt2)
static_assert(same_learned(posenc::learned_presets::roberta_base, posenc::presets::roberta_base::config));  // deprecated: learned_presets (roberta_base)
static_assert(same_learned(posenc::learned_presets::opt_125m, posenc::presets::opt_125m::config));  // deprecated: learned_presets (opt_125m)

// tables/learned.hpp
static_assert(std::is_same_v<posenc::static_learned_table<float, 4, 2, 1>, posenc::learned_table<float, 4, 2, 1>>);  // deprecated: static_learned_table (alias template)

// spec/select.hpp
constexpr bool old_select() {
  bool preset = false;
  bool head_dim = false;
  const bool found = posenc::dispatch_preset("llama-2-7b", [&](auto) { preset = true; });  // deprecated: dispatch_preset
  const bool found_dim = posenc::dispatch_head_dim(128, [&](auto) { head_dim = true; });  // deprecated: dispatch_head_dim
  return found && found_dim && preset && head_dim;
}
static_assert(old_select());

// kernels/dispatch.hpp
namespace pd = posenc::kernels::dispatch;
static_assert(std::is_same_v<pd::rope_fn<float>, pd::apply_fn<float>>);  // deprecated: rope_fn (alias template)
static_assert(std::is_same_v<pd::rope_in_place_fn<float>, pd::apply_in_place_fn<float>>);  // deprecated: rope_in_place_fn (alias template)
static_assert(std::is_same_v<pd::rope_qk_fn<float>, pd::apply_qk_fn<float>>);  // deprecated: rope_qk_fn (alias template)
static_assert(std::is_same_v<pd::encoding_kernels<float>, pd::additive_kernels<float>>);  // deprecated: encoding_kernels (alias template)
constexpr pd::isa_kernels no_kernels{};
static_assert(&no_kernels.encodings<float>() == &no_kernels.additive<float>());  // deprecated: isa_kernels::encodings

// clang-format on

}  // namespace
