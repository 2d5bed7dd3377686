// Compile-time proofs for posenc/spec over the presets: building this translation unit is the
// proof. Every preset is iterated with boost::hana::for_each (a failing preset is named in the
// instantiation context of the error); published values are restated here from the models'
// config.json fields (cited in spec/presets.hpp) and compared with what the presets hold.
//
// Also here: the scaling law "factor 1 is the default" (a statement about scaling specs), with
// tolerances from the double-double error figures of docs/math.md (measured against MPFR): dd
// + - * / within 2^-104.2 relative, exp/log(dd) within 2^-104.7 / 2^-103.9, pow_ratio 2^-100.5.
#include <array>
#include <cstdint>
#include <iterator>
#include <span>
#include <string_view>
#include <type_traits>

#include <boost/hana/for_each.hpp>
#include <boost/hana/integral_constant.hpp>

#include <posenc/frequencies/rope.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/spec/alibi.hpp>
#include <posenc/spec/presets.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/spec/select.hpp>
#include <posenc/spec/sinusoidal.hpp>

#include "support.hpp"

using namespace posenc_proofs;  // proofs/support.hpp
using posenc::rope_layout;
using posenc::scaling_type;

namespace {

// ---- every preset is a valid spec --------------------------------------------------------------
// checked_rope<P> instantiates one static_assert per rule of spec/rope.hpp.
static_assert(for_every_preset([](auto t) {
                using P = typename decltype(t)::type;
                static_assert(posenc::rope_spec<P>);
                static_assert(posenc::validate(P::config) == posenc::rope_error::ok);
                constexpr rope_config c = posenc::checked_rope<P>;
                return c.rotary_dim == P::config.rotary_dim;
              }),
              "every preset satisfies every rule of spec/rope.hpp");

// Names: non-empty, lower case letters, digits, '-' and '.', and unique (they are keys).
constexpr bool name_ok(std::string_view s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.'))
      return false;
  return true;
}
static_assert(for_every_preset([](auto t) { return name_ok(decltype(t)::type::name); }),
              "preset names: [a-z0-9.-]+");
constexpr bool names_unique() {
  const auto& n = posenc::preset_names;
  for (std::size_t i = 0; i < n.size(); ++i)
    for (std::size_t j = i + 1; j < n.size(); ++j)
      if (n[i] == n[j]) return false;
  return true;
}
static_assert(names_unique(), "preset names are unique");
static_assert(posenc::preset_count == 13 && posenc::preset_names[0] == "llama-2-7b" &&
                  posenc::preset_names[10] == "deepseek-v2-lite" &&
                  posenc::preset_names[11] == "deepseek-v3" &&
                  posenc::preset_names[12] == "phi-3.5-mini-instruct",
              "preset_names lists presets::all in order");

// Every preset's head_dim is one that select_head_dim instantiates.
static_assert(for_every_preset([](auto t) {
                using P = typename decltype(t)::type;
                bool in_list = false;
                hana::for_each(posenc::supported_head_dims, [&](auto d) {
                  in_list = in_list ||
                            static_cast<std::uint32_t>(decltype(d)::value) == P::config.head_dim;
                });
                return in_list;
              }),
              "every preset's head_dim is in supported_head_dims");

// ---- published values --------------------------------------------------------------------------
// head_dim = hidden_size / num_attention_heads (or qk_rope_head_dim), rotary_dim = HF's
// int(head_dim * partial_rotary_factor) or the config's rotary_dim, base = rope_theta (Llama-2:
// absent, LlamaConfig's default 10000; GPT-J: modeling_gptj's 10000; NeoX: rotary_emb_base).
struct published {
  std::uint32_t head_dim;
  std::uint32_t rotary_dim;
  double base;
  rope_layout layout;
  scaling_type scaling;
  std::uint32_t max_position_embeddings;
};
template <class P>
constexpr bool matches(const published& p) {
  return P::config.head_dim == p.head_dim && P::config.rotary_dim == p.rotary_dim &&
         P::config.base == p.base && P::config.layout == p.layout &&
         P::config.scaling.type == p.scaling &&
         P::max_position_embeddings == p.max_position_embeddings;
}
constexpr auto half = rope_layout::half;
constexpr auto interleaved = rope_layout::interleaved;
static_assert(matches<presets::llama_2_7b>({4096 / 32, 4096 / 32, 10000.0, half, scaling_type::none,
                                            4096}));
static_assert(matches<presets::llama_3_8b>({4096 / 32, 4096 / 32, 500000.0, half,
                                            scaling_type::none, 8192}));
static_assert(matches<presets::llama_3_1_8b>({4096 / 32, 4096 / 32, 500000.0, half,
                                              scaling_type::llama3, 131072}));
static_assert(matches<presets::mistral_7b_v0_1>({4096 / 32, 4096 / 32, 10000.0, half,
                                                 scaling_type::none, 32768}));
static_assert(matches<presets::qwen2_7b>({3584 / 28, 3584 / 28, 1000000.0, half, scaling_type::none,
                                          131072}));
static_assert(matches<presets::codellama_7b>({4096 / 32, 4096 / 32, 1000000.0, half,
                                              scaling_type::none, 16384}));
static_assert(matches<presets::gpt_j_6b>({4096 / 16, 64, 10000.0, interleaved, scaling_type::none,
                                          2048}),
              "GPT-J-6B: head_dim 256, rotary_dim 64 (config.json rotary_dim), interleaved");
static_assert(matches<presets::gpt_neox_20b>({6144 / 64, 24, 10000.0, half, scaling_type::none,
                                              2048}),
              "GPT-NeoX-20B: head_dim 96, rotary_pct 0.25 -> int(96 * 0.25) = 24");
static_assert(matches<presets::phi_2>({2560 / 32, 32, 10000.0, half, scaling_type::none, 2048}),
              "Phi-2: head_dim 80, partial_rotary_factor 0.4 -> int(80 * 0.4) = 32");
static_assert(matches<presets::phi_3_mini_128k_instruct>({3072 / 32, 3072 / 32, 10000.0, half,
                                                          scaling_type::longrope, 131072}));
static_assert(matches<presets::deepseek_v2_lite>({64, 64, 10000.0, interleaved, scaling_type::yarn,
                                                  163840}),
              "DeepSeek-V2-Lite: the rope slice, qk_rope_head_dim 64, interleaved");
static_assert(matches<presets::deepseek_v3>({64, 64, 10000.0, interleaved, scaling_type::yarn,
                                             163840}),
              "DeepSeek-V3: the rope slice, qk_rope_head_dim 64, interleaved");
static_assert(presets::deepseek_v3::config.scaling.factor == 40.0 &&
                  presets::deepseek_v3::config.scaling.original_max_position_embeddings == 4096 &&
                  presets::deepseek_v3::config.scaling.beta_fast == 32.0 &&
                  presets::deepseek_v3::config.scaling.beta_slow == 1.0 &&
                  presets::deepseek_v3::config.scaling.mscale == 1.0 &&
                  presets::deepseek_v3::config.scaling.mscale_all_dim == 1.0,
              "DeepSeek-V3 rope_scaling: yarn 40 over 4096, beta 32/1, mscale 1.0/1.0");

// HF's int() truncation of head_dim * factor in double: 96 * 0.25 is exact; 0.4 is 2.2e-17 above
// 2/5, so 80 * 0.4 is 1.8e-15 above 32 and rounds to 32.0 (half an ulp there is 3.6e-15): neither
// lands below the integer that int() keeps.
static_assert(posenc::rotary_dim_from_factor(80, 0.4) == 32 &&
              posenc::rotary_dim_from_factor(96, 0.25) == 24);

// Scaling parameters.
constexpr const rope_scaling& llama31 = presets::llama_3_1_8b::config.scaling;
static_assert(
    llama31.factor == 8.0 && llama31.low_freq_factor == 1.0 && llama31.high_freq_factor == 4.0 &&
        llama31.original_max_position_embeddings == 8192,
    "Llama-3.1: rope_scaling factor 8, low_freq_factor 1, high_freq_factor 4, original 8192");
constexpr const rope_scaling& deepseek = presets::deepseek_v2_lite::config.scaling;
static_assert(deepseek.factor == 40.0 && deepseek.original_max_position_embeddings == 4096 &&
                  deepseek.beta_fast == 32.0 && deepseek.beta_slow == 1.0 &&
                  deepseek.mscale == 0.707 && deepseek.mscale_all_dim == 0.707 &&
                  deepseek.truncate && deepseek.attention_factor == 0.0,
              "DeepSeek-V2-Lite: yarn factor 40, original 4096, beta 32/1, mscale 0.707/0.707");
constexpr const rope_scaling& phi3 = presets::phi_3_mini_128k_instruct::config.scaling;
static_assert(phi3.original_max_position_embeddings == 4096 &&
                  phi3.max_position_embeddings == 131072 && phi3.factor == 32.0 &&
                  phi3.attention_factor == 0.0,
              "Phi-3-mini-128k: longrope factor 131072 / 4096 = 32, attention factor derived");

// Phi-3's lists: 48 = R/2 entries each, as floats would print them (the long list was stored as
// float32 values, e.g. 1.0700000524520874 = float(1.07)); both never decrease along the pairs and
// lie in [1, 65) (long is not >= short everywhere: pair 0 has short 1.1, long 1.07). The two
// entries quoted by an independent source (pairs 17 and 30, see tests/presets) are restated.
constexpr bool phi3_lists_ok() {
  const auto& s = presets::data::phi_3_mini_128k_short_factor;
  const auto& l = presets::data::phi_3_mini_128k_long_factor;
  if (!(phi3.short_factor.data() == s.data() && phi3.long_factor.data() == l.data())) return false;
  if (!(s.size() == 48 && l.size() == 48)) return false;
  for (std::size_t i = 0; i < 48; ++i) {
    if (!(1.0 <= s[i] && s[i] < 65.0 && 1.0 <= l[i] && l[i] < 65.0)) return false;
    if (i > 0 && !(s[i - 1] <= s[i] && l[i - 1] <= l[i])) return false;
  }
  for (double x : l)
    if (static_cast<double>(static_cast<float>(x)) != x) return false;
  return s[17] == 2.000000000000001 && l[17] == 19.809999465942383 && s[30] == 2.0500000000000007 &&
         l[30] == 60.887386322021484;
}
static_assert(phi3_lists_ok(), "Phi-3 longrope factor lists: shape and spot values");

// Phi-3.5-mini's lists: 48 entries each, non-decreasing along the pairs, in [1, 65), every entry
// a float32 value as the checkpoint stored it (e.g. 1.0800000429153442 = float(1.08)); the short
// list starts at exactly 1.
constexpr const rope_scaling& phi35 = presets::phi_3_5_mini_instruct::config.scaling;
constexpr bool phi35_lists_ok() {
  const auto& s = presets::data::phi_3_5_mini_short_factor;
  const auto& l = presets::data::phi_3_5_mini_long_factor;
  if (!(phi35.short_factor.data() == s.data() && phi35.long_factor.data() == l.data()))
    return false;
  if (!(phi35.original_max_position_embeddings == 4096 && phi35.max_position_embeddings == 131072 &&
        phi35.factor == 32.0 && phi35.attention_factor == 0.0))
    return false;
  for (std::size_t i = 0; i < 48; ++i) {
    if (!(1.0 <= s[i] && s[i] < 65.0 && 1.0 <= l[i] && l[i] < 65.0)) return false;
    if (i > 0 && !(s[i - 1] <= s[i] && l[i - 1] <= l[i])) return false;
    if (static_cast<double>(static_cast<float>(s[i])) != s[i]) return false;
    if (static_cast<double>(static_cast<float>(l[i])) != l[i]) return false;
  }
  return s[0] == 1.0;
}
static_assert(phi35_lists_ok(), "Phi-3.5-mini longrope factor lists: shape and float32 values");

// ---- runtime lookups are constant expressions too ----------------------------------------------
static_assert(posenc::find_preset("phi-2") == &presets::phi_2::config);
static_assert(posenc::find_preset("deepseek-v2-lite") == &presets::deepseek_v2_lite::config);
static_assert(posenc::find_preset("phi2") == nullptr && posenc::find_preset("") == nullptr);
static_assert([] {
  int hit = 0;
  const bool ok = posenc::select_head_dim(96, [&](auto d) { hit = decltype(d)::value; });
  return ok && hit == 96 && !posenc::select_head_dim(100, [&](auto) { hit = -1; }) && hit == 96;
}());
static_assert([] {
  bool right_type = false;
  const bool ok = posenc::select_preset("gpt-neox-20b", [&](auto t) {
    right_type = std::is_same_v<typename decltype(t)::type, presets::gpt_neox_20b>;
  });
  return ok && right_type;
}());

// ---- factor 1 is the default, for every scaling ------------------------------------------------
// linear: theta / 1 is exact in dd (quotient digit theta.hi, remainders 0). longrope with every
// factor 1 and max == original context (factor 1): theta / 1, exact too. ntk and dynamic (for
// seq_len <= max_position_embeddings, where the bracket 1 * max / max - 0 is exactly 1): the
// correction exp(ln(1) * e) is exp(0) = 1 exactly, so theta * 1 = theta. All bitwise in dd.
// yarn and llama3 blend: theta ramp + theta (1 - ramp) and (1 - s) theta + s theta are a few dd
// operations on theta, within 4 x 2^-104.2 < 2^-102 relative: asserted within 2^-100 in dd, and
// the same double and float (observed; a mismatch could only come from a theta within 2^-100 of a
// rounding midpoint).
// The variants depend on a preset only through rotary_dim and base, so each distinct shape is
// checked once (the first preset that has it), at pairs 0, s, 2s, ... and the last, s = R/16
// (Clang re-evaluates every log and exp; the whole law costs ~20 of them per pair).

inline constexpr std::array<double, 128> kOnes = [] {
  std::array<double, 128> a{};
  for (double& x : a) x = 1.0;
  return a;
}();

template <class P>
constexpr bool factor_one_is_default() {
  constexpr std::uint32_t L = 4096;
  constexpr std::uint32_t n = P::config.rotary_dim / 2;
  constexpr std::uint32_t stride = n / 8 > 0 ? n / 8 : 1;
  const std::span<const double> ones = std::span<const double>(kOnes).first(n);
  const rope_config none = with_scaling(P::config, posenc::scaling::none());
  const rope_config exact[] = {
      with_scaling(P::config, posenc::scaling::linear(1.0)),
      with_scaling(P::config, posenc::scaling::ntk(1.0)),
      with_scaling(P::config, posenc::scaling::dynamic(1.0, L)),
      with_scaling(P::config, posenc::scaling::longrope(ones, ones, L, L)),
  };
  const rope_config blended[] = {
      with_scaling(P::config, posenc::scaling::yarn(1.0, L)),
      with_scaling(P::config, posenc::scaling::llama3(1.0, 1.0, 4.0, L)),
  };
  for (const rope_config& c : exact)
    if (posenc::validate(c) != posenc::rope_error::ok) return false;
  for (const rope_config& c : blended)
    if (posenc::validate(c) != posenc::rope_error::ok) return false;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (i % stride != 0 && i + 1 != n) continue;
    const dd theta = posenc::inv_freq_dd(none, i);
    for (const rope_config& c : exact)
      if (!same(posenc::inv_freq_dd(c, i), theta)) return false;
    for (const rope_config& c : blended) {
      const dd v = posenc::inv_freq_dd(c, i);
      if (!(close_rel(v, theta, 0x1p-100) && same_rounding(v, theta))) return false;
    }
    if (i + 1 == n) {
      // dynamic at seq_len == max_position_embeddings: still the default; at twice that HF grows
      // the base even at factor 1 (bracket 2 * max / max - 0 = 2): the lowest frequency drops.
      if (!same(posenc::inv_freq_dd(exact[2], i, L), theta)) return false;
      if (!(posenc::inv_freq_dd(exact[2], i, 2 * L) < theta)) return false;
    }
  }
  // Attention factor at factor 1: HF get_mscale(1) = 1; longrope returns 1 for factor <= 1.
  return posenc::attention_factor(blended[0]) == 1.0 && posenc::attention_factor(exact[3]) == 1.0 &&
         posenc::attention_factor(exact[0]) == 1.0;
}
static_assert(for_every_preset([](auto t) {
                using P = typename decltype(t)::type;
                if constexpr (first_of_its_shape<P>()) {
                  return factor_one_is_default<P>();
                } else {
                  return true;
                }
              }),
              "factor 1 == default: linear, ntk, dynamic, longrope bitwise (dd); yarn and llama3 "
              "within 2^-100 in dd, the same double and float; attention factor 1");

}  // namespace

// ---- the words of each enum: every value listed once, in declaration order, named apart ------
namespace enum_words {
template <class E, std::size_t N>
constexpr bool listed_in_order_and_named_apart(const E (&values)[N], const char* (*name)(E)) {
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(values[i]) != i) return false;
    for (std::size_t j = 0; j < i; ++j)
      if (std::string_view(name(values[i])) == std::string_view(name(values[j]))) return false;
  }
  return true;
}
static_assert(listed_in_order_and_named_apart(posenc::all_rope_layouts, posenc::layout_name) &&
                  std::size(posenc::all_rope_layouts) == 2,
              "all_rope_layouts lists interleaved and half");
static_assert(listed_in_order_and_named_apart(posenc::all_scaling_types, posenc::scaling_name) &&
                  std::size(posenc::all_scaling_types) == 7 &&
                  posenc::all_scaling_types[6] == posenc::scaling_type::longrope,
              "all_scaling_types lists none .. longrope");
static_assert(listed_in_order_and_named_apart(posenc::all_sinusoidal_layouts,
                                              posenc::sinusoidal_layout_name) &&
                  std::string_view(
                      posenc::sinusoidal_layout_name(posenc::sinusoidal_layout::split)) == "split",
              "sinusoidal layouts: paper, split");
static_assert(
    listed_in_order_and_named_apart(posenc::all_alibi_variants, posenc::alibi_variant_name) &&
        listed_in_order_and_named_apart(posenc::all_alibi_slope_kinds,
                                        posenc::alibi_slope_kind_name) &&
        std::string_view(posenc::alibi_slope_kind_name(posenc::alibi_slope_kind::bloom)) == "bloom",
    "ALiBi variants and slope kinds: causal, symmetric; reference, bloom");
}  // namespace enum_words
