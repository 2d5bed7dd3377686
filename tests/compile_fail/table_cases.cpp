// The compile-time checks of the tables (tables/*.hpp, math/angle_grid.hpp) that a bad template
// argument trips, and a broken spec reaching each table's own entry point: one case each
// (-DPOSENC_CASE_<case>), which must not compile; with -DPOSENC_VALID, every case's valid twin at
// once, which must. Compiled by case.sh with -fsyntax-only; the cases and the text the compiler's
// output must contain are listed in meson.build.
#include <posenc/spec/attention_temperature.hpp>
#include <posenc/tables.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace {

#ifdef POSENC_VALID
constexpr bool broken = false;
#else
constexpr bool broken = true;
#endif

struct rope_spec {
  static constexpr posenc::rope_config config{8, 8, 10000.0, posenc::rope_layout::half, {}};
};
struct sinusoidal_spec {
  static constexpr posenc::sinusoidal_config config{8, posenc::sinusoidal_layout::paper};
};
struct alibi_spec {
  static constexpr posenc::alibi_config config{4};
};

// A learned table with no row for any position, or rows of width 0.
#if defined(POSENC_VALID) || defined(POSENC_CASE_learned_table_offset)
[[maybe_unused]] constexpr posenc::learned_table<float, broken ? 2 : 3, 4, 2> learned_offset{};
#endif
#if defined(POSENC_VALID) || defined(POSENC_CASE_learned_table_dim)
[[maybe_unused]] constexpr posenc::learned_table<float, 2, broken ? 0 : 1> learned_dim{};
#endif

// A compile-time cache of no positions, or of 2^32 (past the angle grid's accuracy guarantee).
#if defined(POSENC_VALID) || defined(POSENC_CASE_rope_cache_no_positions)
[[maybe_unused]] constexpr const auto &no_positions = posenc::rope_cache_v < rope_spec, float,
                                      broken ? 0 : 1 > ;
#endif
#if defined(POSENC_VALID) || defined(POSENC_CASE_rope_cache_positions_2_32)
[[maybe_unused]] constexpr const auto &many_positions = posenc::rope_cache_v < rope_spec, float,
                                      broken ? std::size_t{1} << 32 : 2 > ;
#endif

// The same for a sinusoidal table (a constraint of sinusoidal_table_v, not a static_assert).
#if defined(POSENC_VALID) || defined(POSENC_CASE_sinusoidal_table_no_positions)
[[maybe_unused]] constexpr const auto &sinusoidal_no_positions =
                                          posenc::sinusoidal_table_v < sinusoidal_spec,
                                      float, broken ? 0 : 1 > ;
#endif
#if defined(POSENC_VALID) || defined(POSENC_CASE_sinusoidal_table_positions_2_32)
[[maybe_unused]] constexpr const auto &sinusoidal_many_positions =
                                          posenc::sinusoidal_table_v < sinusoidal_spec,
                                      float, broken ? std::size_t{1} << 32 : 2 > ;
#endif

// Entries of a type other than float or double, at each table's entry point.
using entry = std::conditional_t<broken, int, float>;
#if defined(POSENC_VALID) || defined(POSENC_CASE_rope_cache_int)
[[maybe_unused]] constexpr const auto& int_cache = posenc::rope_cache_v<rope_spec, entry, 1>;
#endif
#if defined(POSENC_VALID) || defined(POSENC_CASE_build_rope_cache_int)
[[maybe_unused]] posenc::rope_error build_int(entry* cos, entry* sin) {
  return posenc::build_rope_cache<entry>(rope_spec::config, 1, cos, sin);
}
#endif
#if defined(POSENC_VALID) || defined(POSENC_CASE_runtime_rope_cache_int)
[[maybe_unused]] constexpr std::size_t runtime_cache_size =
    sizeof(posenc::runtime_rope_cache<entry>);
#endif
#if defined(POSENC_VALID) || defined(POSENC_CASE_rotation_pairs_int)
[[maybe_unused]] constexpr auto int_pairs = posenc::rotation_pairs<rope_spec, entry>(3);
#endif
#if defined(POSENC_VALID) || defined(POSENC_CASE_runtime_sinusoidal_table_int)
[[maybe_unused]] constexpr std::size_t runtime_sinusoidal_size =
    sizeof(posenc::runtime_sinusoidal_table<entry>);
#endif
#if defined(POSENC_VALID) || defined(POSENC_CASE_alibi_slopes_int)
[[maybe_unused]] constexpr const auto& int_slopes = posenc::alibi_slopes_v<alibi_spec, entry>;
#endif

// A broken spec stops the table built from it with the rule's message.
#if defined(POSENC_VALID) || defined(POSENC_CASE_sinusoidal_table_broken_spec)
struct broken_sinusoidal {
  static constexpr posenc::sinusoidal_config config{8, posenc::sinusoidal_layout::split, 10000.0,
                                                    broken ? -2 : 0};
};
[[maybe_unused]] constexpr const auto& broken_sinusoidal_table =
    posenc::sinusoidal_table_v<broken_sinusoidal, float, 2>;
#endif
#if defined(POSENC_VALID) || defined(POSENC_CASE_alibi_slopes_broken_spec)
struct broken_alibi {
  static constexpr posenc::alibi_config config{broken ? 0u : 1u};
};
[[maybe_unused]] constexpr const auto& broken_slopes = posenc::alibi_slopes_v<broken_alibi, float>;
#endif
#if defined(POSENC_VALID) || defined(POSENC_CASE_rope_cache_broken_spec)
struct broken_rope {
  static constexpr posenc::rope_config config{8, 8, 10000.0, posenc::rope_layout::half,
                                              posenc::scaling::ntk(broken ? 0.5 : 1.0)};
};
[[maybe_unused]] constexpr const auto& broken_cache = posenc::rope_cache_v<broken_rope, float, 2>;
#endif

// T5: a broken spec at t5_buckets_v and t5_relative_bias, and a weight table of the wrong size
// (bidirectional 4 buckets, 1 head: max_exact 1, so max_distance 2 is the least valid one).
#if defined(POSENC_VALID) || defined(POSENC_CASE_t5_buckets_broken_spec)
struct broken_t5_buckets {
  static constexpr posenc::t5_config config{broken ? 5u : 4u, 2, 1};
};
[[maybe_unused]] constexpr const auto& broken_buckets = posenc::t5_buckets_v<broken_t5_buckets>;
#endif
#if defined(POSENC_VALID) || defined(POSENC_CASE_t5_relative_bias_broken_spec)
struct broken_t5_bias {
  static constexpr posenc::t5_config config{4, broken ? 1u : 2u, 1};
};
constexpr std::array<float, 4> t5_weights{0.0f, 1.0f, 2.0f, 3.0f};
[[maybe_unused]] constexpr auto broken_bias = posenc::t5_relative_bias<broken_t5_bias>(t5_weights);
#endif
#if defined(POSENC_VALID) || defined(POSENC_CASE_t5_relative_bias_weights)
struct t5_spec {
  static constexpr posenc::t5_config config{4, 2, 1};
};
constexpr std::array<float, broken ? 3 : 4> wrong_weights{};
[[maybe_unused]] constexpr auto wrong_bias = posenc::t5_relative_bias<t5_spec>(wrong_weights);
#endif

// Attention temperature: a broken spec at query_scale_table_v, and positions past
// max_temperature_position = 2^51 - 1 through First and through N.
#if defined(POSENC_VALID) || defined(POSENC_CASE_query_scale_table_broken_spec)
struct broken_temperature {
  static constexpr posenc::attention_temperature config =
      posenc::temperature::llama4(broken ? 0.5 : 1.0);
};
[[maybe_unused]] constexpr const auto& broken_scales =
    posenc::query_scale_table_v<broken_temperature, float, 2>;
#endif
constexpr std::uint64_t last_temperature_position = (std::uint64_t{1} << 51) - 1;
struct llama4_temperature {
  static constexpr posenc::attention_temperature config = posenc::temperature::llama4();
};
#if defined(POSENC_VALID) || defined(POSENC_CASE_query_scale_table_first_2_51)
[[maybe_unused]] constexpr const auto& first_past =
    posenc::query_scale_table_v<llama4_temperature, float, 1,
                                last_temperature_position + (broken ? 1 : 0)>;
#endif
#if defined(POSENC_VALID) || defined(POSENC_CASE_query_scale_table_last_2_51)
[[maybe_unused]] constexpr const auto &last_past = posenc::query_scale_table_v < llama4_temperature,
                                      double, broken ? 2 : 1, last_temperature_position > ;
#endif

}  // namespace
