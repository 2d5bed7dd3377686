// The compile-time checks of the tables (tables/*.hpp, math/angle_grid.hpp) that a bad template
// argument trips, and a broken spec reaching each table's own entry point: one case each
// (-DPOSENC_CASE_<case>), which must not compile; with -DPOSENC_VALID, every case's valid twin at
// once, which must. Compiled by case.sh with -fsyntax-only; the cases and the text the compiler's
// output must contain are listed in meson.build.
#include <posenc/tables.hpp>

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

}  // namespace
