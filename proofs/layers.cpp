// Compile-time proofs of the per-layer plan (spec/layer_plan.hpp) on the model presets
// (spec/presets.hpp, presets::models): building this translation unit is the proof.
//
// - The plan of each published model against the layer lists its config.json implies, written
//   out by hand here (not derived from the plan's own rules): Gemma-3's global layers, Llama-4's
//   NoPE layers and where the query temperature applies.
// - Every RoPE layer names a table of distinct_tables, every table is used, and the tables are the
//   configurations HF builds per layer kind (Gemma-3: theta 1e4 without scaling on sliding
//   layers; theta 1e6 with linear factor 8 on global ones).
// - The laws of analysis/laws.hpp on a compile-time float table (rope_cache_v of
//   layer_table_spec, 4 positions) of every distinct table of every model: orthogonality at every
//   position, norm preservation, and relative-only dependence, with the tolerances derived beside
//   each law.
#include <array>
#include <cstddef>
#include <cstdint>

#include <boost/hana/for_each.hpp>

#include <posenc/analysis/laws.hpp>
#include <posenc/spec/layer_plan.hpp>
#include <posenc/spec/presets.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/tables/rope_cache.hpp>

namespace hana = boost::hana;
namespace pa = posenc::analysis;
namespace presets = posenc::presets;
using posenc::attention_type;
using posenc::layer_encoding;
using posenc::model_config;

namespace {

// The layers i < n of M whose attention is `a`, as a bit mask (at most 64 layers).
template <class M>
constexpr std::uint64_t layers_with(attention_type a) {
  std::uint64_t mask = 0;
  for (std::uint32_t i = 0; i < M::model.num_hidden_layers; ++i)
    if (posenc::layer_at(posenc::checked_model<M>, i).attention == a) mask |= std::uint64_t{1} << i;
  return mask;
}
template <class M>
constexpr std::uint64_t layers_encoded(layer_encoding e) {
  std::uint64_t mask = 0;
  for (std::uint32_t i = 0; i < M::model.num_hidden_layers; ++i)
    if (posenc::layer_at(posenc::checked_model<M>, i).encoding == e) mask |= std::uint64_t{1} << i;
  return mask;
}
template <class M>
constexpr std::uint64_t layers_tempered() {
  std::uint64_t mask = 0;
  for (std::uint32_t i = 0; i < M::model.num_hidden_layers; ++i)
    if (posenc::layer_at(posenc::checked_model<M>, i).temperature_tuning)
      mask |= std::uint64_t{1} << i;
  return mask;
}
template <std::size_t N>
constexpr std::uint64_t mask_of(const std::array<std::uint32_t, N>& layers) {
  std::uint64_t mask = 0;
  for (std::uint32_t i : layers) mask |= std::uint64_t{1} << i;
  return mask;
}
constexpr std::uint64_t all_of(std::uint32_t n) {
  return n == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
}

// ---- the published layer lists ---------------------------------------------------------------

// google/gemma-3-4b-it: 34 layers, global every sixth (tests/golden/hf_gemma3_rope.json lists the
// same indices from HF's Gemma3TextConfig).
constexpr std::array<std::uint32_t, 5> gemma_3_4b_global{5, 11, 17, 23, 29};
static_assert(layers_with<presets::gemma_3_4b>(attention_type::full_attention) ==
                  mask_of(gemma_3_4b_global),
              "gemma-3-4b: full-attention layers 5, 11, 17, 23, 29");
static_assert(layers_with<presets::gemma_3_4b>(attention_type::sliding_attention) ==
                  (all_of(34) & ~mask_of(gemma_3_4b_global)),
              "gemma-3-4b: every other layer sliding");
// google/gemma-3-27b-it: 62 layers, 10 global.
constexpr std::array<std::uint32_t, 10> gemma_3_27b_global{5, 11, 17, 23, 29, 35, 41, 47, 53, 59};
static_assert(layers_with<presets::gemma_3_27b>(attention_type::full_attention) ==
                  mask_of(gemma_3_27b_global),
              "gemma-3-27b: 10 full-attention layers, every sixth");
static_assert(layers_encoded<presets::gemma_3_27b>(layer_encoding::rope) == all_of(62),
              "gemma-3-27b: every layer rotates");

// meta-llama/Llama-4-Scout-17B-16E: 48 layers, NoPE every fourth; the RoPE layers chunked, the
// NoPE layers full attention with the query temperature.
constexpr std::array<std::uint32_t, 12> llama_4_nope{3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47};
static_assert(layers_encoded<presets::llama_4_scout>(layer_encoding::nope) == mask_of(llama_4_nope),
              "llama-4-scout: NoPE layers 3, 7, ..., 47");
static_assert(layers_encoded<presets::llama_4_scout>(layer_encoding::rope) ==
                  (all_of(48) & ~mask_of(llama_4_nope)),
              "llama-4-scout: RoPE on the others");
static_assert(layers_with<presets::llama_4_scout>(attention_type::full_attention) ==
                  mask_of(llama_4_nope),
              "llama-4-scout: NoPE layers attend to everything");
static_assert(layers_with<presets::llama_4_scout>(attention_type::chunked_attention) ==
                  (all_of(48) & ~mask_of(llama_4_nope)),
              "llama-4-scout: RoPE layers attend within chunks");
static_assert(layers_tempered<presets::llama_4_scout>() == mask_of(llama_4_nope),
              "llama-4-scout: the query temperature on NoPE layers only");
static_assert(posenc::layer_v<presets::llama_4_scout, 3>.table == posenc::no_table);

// Multi-axis and uniform models: one kind of layer.
static_assert(layers_encoded<presets::qwen2_vl_7b>(layer_encoding::mrope) == all_of(28));
static_assert(layers_encoded<presets::qwen2_5_vl_7b>(layer_encoding::mrope) == all_of(28));
static_assert(layers_encoded<presets::pixtral_12b>(layer_encoding::axial_rope) == all_of(24));
static_assert(layers_encoded<presets::deepseek_v3>(layer_encoding::rope) == all_of(61));

// ---- the distinct tables ---------------------------------------------------------------------

// Every RoPE layer names a table below count, NoPE layers none, and every table is used.
template <class M>
constexpr bool tables_consistent() {
  constexpr model_config m = posenc::checked_model<M>;
  constexpr posenc::layer_tables t = posenc::layer_tables_v<M>;
  std::array<bool, posenc::max_layer_tables> used{};
  for (std::uint32_t i = 0; i < m.num_hidden_layers; ++i) {
    const posenc::layer_spec s = posenc::layer_at(m, i);
    if (s.encoding == layer_encoding::nope) {
      if (s.table != posenc::no_table) return false;
      continue;
    }
    if (s.table >= t.count) return false;
    used[s.table] = true;
  }
  for (std::uint32_t k = 0; k < t.count; ++k)
    if (!used[k]) return false;
  return true;
}

constexpr bool all_tables_consistent() {
  bool ok = true;
  hana::for_each(presets::models, [&](auto t) {
    using M = typename decltype(t)::type;
    ok = ok && tables_consistent<M>();
  });
  return ok;
}
static_assert(all_tables_consistent(),
              "every RoPE layer names a distinct table, NoPE layers none, every table used");

// Gemma-3: the sliding table first (layer 0), then the global one; HF's per-layer-type
// parameters (hf_gemma3_rope.json, resulting_rope_parameters).
constexpr posenc::layer_tables gemma_tables = posenc::layer_tables_v<presets::gemma_3_4b>;
static_assert(gemma_tables.count == 2);
static_assert(gemma_tables.rope[0].base == 10000.0 &&
              gemma_tables.rope[0].scaling.type == posenc::scaling_type::none);
static_assert(gemma_tables.rope[1].base == 1000000.0 &&
              gemma_tables.rope[1].scaling.type == posenc::scaling_type::linear &&
              gemma_tables.rope[1].scaling.factor == 8.0);
static_assert(posenc::layer_v<presets::gemma_3_4b, 0>.table == 0 &&
              posenc::layer_v<presets::gemma_3_4b, 5>.table == 1);
static_assert(posenc::layer_tables_v<presets::llama_4_scout>.count == 1);
static_assert(posenc::layer_tables_v<presets::qwen2_vl_7b>.count == 1);

// ---- the laws on each distinct table ---------------------------------------------------------

template <std::size_t D>
constexpr std::array<double, D> vector_in_unit_box(std::uint64_t seed) {
  std::array<double, D> out{};
  std::uint64_t state = seed;
  for (double& v : out) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    v = static_cast<double>(z >> 11) * 0x1p-52 - 1.0;
  }
  return out;
}

constexpr std::size_t P = 4;

template <class M, std::uint32_t K>
constexpr bool laws_on_table() {
  using S = posenc::layer_table_spec<M, K>;
  constexpr posenc::rope_config c = posenc::checked_rope<S>;
  constexpr std::size_t F = c.rotary_dim / 2;
  constexpr auto& cache = posenc::rope_cache_v<S, float, P>;
  static_assert(cache.attention_factor == 1.0, "the model presets' tables carry no factor");
  const pa::grid_rotation<float, P, F> rot{&cache, c};
  constexpr std::uint32_t D = c.head_dim;
  constexpr auto q = vector_in_unit_box<D>(1);
  constexpr auto k = vector_in_unit_box<D>(2);
  const double norm_tol = pa::norm_tolerance<float>(D, pa::vector_norm(q));
  const double rel_tol = pa::relative_tolerance<float>(D, pa::vector_norm(q), pa::vector_norm(k));
  for (std::uint64_t m = 0; m < P; ++m)
    if (!(pa::orthogonality(rot, m) <= pa::orthogonality_tolerance<float>())) return false;
  if (!(pa::norm_preservation(rot, P - 1, q) <= norm_tol)) return false;
  if (!(pa::relative_dependence(rot, 0, 1, 2, q, k) <= rel_tol)) return false;
  return true;
}

template <class M>
constexpr bool laws_on_tables() {
  if constexpr (posenc::layer_tables_v<M>.count == 2)
    return laws_on_table<M, 0>() && laws_on_table<M, 1>();
  else
    return laws_on_table<M, 0>();
}

constexpr bool laws_on_every_model() {
  bool ok = true;
  hana::for_each(presets::models, [&](auto t) {
    using M = typename decltype(t)::type;
    ok = ok && laws_on_tables<M>();
  });
  return ok;
}
static_assert(laws_on_every_model(),
              "orthogonality, norm and relative-only dependence on every distinct table of every "
              "model preset");

}  // namespace
