// Compile-time proofs of the laws of posenc/analysis/laws.hpp: building this translation unit is
// the proof. Each law returns its worst deviation and is compared with the error bound derived
// beside it (docs/laws.md); the same functions run on random configurations in tests/laws.
//
// Rotation laws (orthogonality, norm preservation, relative-only dependence in both forms) on
// compile-time float tables of fixed configurations (head_dim 8..96, both layouts, partial rotary,
// the scalings) and of every preset of spec/presets.hpp (head_dim 64..256); at large positions with
// float and double entries. Decay statements of docs/formulas.md §8 for d = 128, base 10^4
// (the RoFormer figure). Each law next to a counter-example on which the same check fails.
//
// Cost: Clang's constant evaluator caches no calls and is ~2.5x slower than GCC's, so the tables
// are small (32 positions, 8 for the presets) and the decay curve is computed once (65 samples).
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <boost/hana/for_each.hpp>

#include <posenc/analysis.hpp>
#include <posenc/spec/presets.hpp>
#include <posenc/spec/rope.hpp>

namespace pa = posenc::analysis;
namespace pm = posenc::math;
using posenc::rope_config;
using posenc::rope_layout;
namespace scaling = posenc::scaling;

namespace {

// ---- configurations --------------------------------------------------------------------------
struct interleaved_8 {
  static constexpr rope_config config{8, 8, 10000.0, rope_layout::interleaved};
};
struct half_16_linear {
  static constexpr rope_config config{16, 16, 500000.0, rope_layout::half, scaling::linear(4.0)};
};
struct half_64_partial_ntk {  // rotary_dim 32 of 64
  static constexpr rope_config config{64, 32, 10000.0, rope_layout::half, scaling::ntk(2.0)};
};
struct interleaved_96_partial_dynamic {  // rotary_dim 24 of 96, as GPT-NeoX-20B
  static constexpr rope_config config{96, 24, 10000.0, rope_layout::interleaved,
                                      scaling::dynamic(2.0, 2048)};
};
struct interleaved_64_yarn {
  static constexpr rope_config config{64, 64, 10000.0, rope_layout::interleaved,
                                      scaling::yarn(4.0, 4096)};
};

// ---- inputs ----------------------------------------------------------------------------------
// D values in [-1, 1) from a SplitMix64 sequence (Steele, Lea, Flood 2014).
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

// ---- the laws on a compile-time float table ---------------------------------------------------
// Each spec's cos/sin table of positions [0, P) in float, built as the tables are
// (math::make_sincos_grid, equal to math::sincos_of_product<float> entry for entry); the laws read
// R_m from it.
template <class S, std::size_t P>
struct float_table {
  static constexpr rope_config c = posenc::checked_rope<S>;
  static constexpr std::size_t F = c.rotary_dim / 2;
  static constexpr std::array<pm::dd, F> thetas = pa::thetas_of<F>(c);
  static constexpr pm::sincos_grid<float, P, F> grid = pm::make_sincos_grid<float, P, F>(thetas);
  static constexpr pa::grid_rotation<float, P, F> rotation{&grid, c};
};

// orthogonality at every position of the table, norm_preservation at every fourth,
// relative_dependence for queries and keys at (m, n) and shifted by s (both orders, across the
// whole table), and the matrix form for every (m, n) of three positions.
template <class S, std::size_t P>
constexpr bool laws_on_float_table() {
  using Tab = float_table<S, P>;
  constexpr std::uint32_t D = Tab::c.head_dim;
  constexpr auto q = vector_in_unit_box<D>(1);
  constexpr auto k = vector_in_unit_box<D>(2);
  const auto& rot = Tab::rotation;
  const double norm_tol = pa::norm_tolerance<float>(D, pa::vector_norm(q));
  const double rel_tol = pa::relative_tolerance<float>(D, pa::vector_norm(q), pa::vector_norm(k));
  for (std::uint64_t m = 0; m < P; ++m) {
    if (!(pa::orthogonality(rot, m) <= pa::orthogonality_tolerance<float>())) return false;
    if (m % 4 == 3 && !(pa::norm_preservation(rot, m, q) <= norm_tol)) return false;
  }
  constexpr std::uint64_t last = P - 1;
  const std::uint64_t mns[][3] = {{0, 1, last - 1}, {last - 1, 0, 1}, {3, 3, P / 2}, {5, 2, 2}};
  for (const auto& t : mns)
    if (!(pa::relative_dependence(rot, t[0], t[1], t[2], q, k) <= rel_tol)) return false;
  const std::uint64_t ps[] = {1, 6, last};
  for (std::uint64_t m : ps)
    for (std::uint64_t n : ps)
      if (!(pa::relative_dependence_blocks(rot, m, n) <= pa::relative_blocks_tolerance<float>()))
        return false;
  return true;
}

// ---- the laws at large positions, entries computed directly ---------------------------------
// Positions past the float-exact limit and near 2^32 (the angle m theta_i is exact to ~2^-104
// relative there too, so the tolerances are those of position 0).
template <class S, class T>
constexpr bool laws_at_large_positions() {
  constexpr rope_config c = posenc::checked_rope<S>;
  constexpr std::size_t F = c.rotary_dim / 2;
  constexpr auto q = vector_in_unit_box<c.head_dim>(3);
  const pa::rope_rotation<T, std::array<pm::dd, F>> rot{c, pa::thetas_of<F>(c)};
  constexpr std::uint64_t m = 16777215;  // 2^24 - 1
  constexpr std::uint64_t n = 4000000007;
  return pa::orthogonality(rot, n) <= pa::orthogonality_tolerance<T>() &&
         pa::norm_preservation(rot, n, q) <=
             pa::norm_tolerance<T>(c.head_dim, pa::vector_norm(q)) &&
         pa::relative_dependence_blocks(rot, m, n) <= pa::relative_blocks_tolerance<T>();
}

static_assert(laws_on_float_table<interleaved_8, 32>(),
              "orthogonality (2 eps + eps^2 + 4u), norm_preservation ((eps + (D + 8) u) ||x||), "
              "relative_dependence ((4 eps + 2 eps^2 + 2 (D + 7) u) ||q|| ||k||) and "
              "R_m^T R_n = R_{n-m} (3 eps + eps^2 + 3u): head_dim 8, interleaved, float table");
static_assert(laws_on_float_table<half_16_linear, 32>(),
              "rotation laws: head_dim 16, half, linear");
static_assert(laws_on_float_table<half_64_partial_ntk, 32>(),
              "rotation laws: head_dim 64, rotary_dim 32, half, ntk");
static_assert(laws_on_float_table<interleaved_96_partial_dynamic, 32>(),
              "rotation laws: head_dim 96, rotary_dim 24, interleaved, dynamic");
static_assert(laws_on_float_table<interleaved_64_yarn, 32>(),
              "rotation laws: head_dim 64, interleaved, yarn");

static_assert(laws_at_large_positions<interleaved_8, float>() &&
                  laws_at_large_positions<half_16_linear, double>(),
              "rotation laws at positions 2^24 - 1 and 4000000007, float and double entries");

// Every preset of spec/presets.hpp, on an 8-position float table (once per distinct config).
constexpr bool same_config(const rope_config& a, const rope_config& b) {
  const posenc::rope_scaling& x = a.scaling;
  const posenc::rope_scaling& y = b.scaling;
  return a.head_dim == b.head_dim && a.rotary_dim == b.rotary_dim && a.base == b.base &&
         a.layout == b.layout && x.type == y.type && x.factor == y.factor &&
         x.original_max_position_embeddings == y.original_max_position_embeddings &&
         x.max_position_embeddings == y.max_position_embeddings && x.beta_fast == y.beta_fast &&
         x.beta_slow == y.beta_slow && x.truncate == y.truncate && x.mscale == y.mscale &&
         x.mscale_all_dim == y.mscale_all_dim && x.attention_factor == y.attention_factor &&
         x.low_freq_factor == y.low_freq_factor && x.high_freq_factor == y.high_freq_factor &&
         x.short_factor.data() == y.short_factor.data() &&
         x.short_factor.size() == y.short_factor.size() &&
         x.long_factor.data() == y.long_factor.data() &&
         x.long_factor.size() == y.long_factor.size();
}
template <class P>
constexpr bool config_seen_before() {
  bool self = false;
  bool before = false;
  boost::hana::for_each(posenc::presets::all, [&](auto t) {
    using Q = typename decltype(t)::type;
    if (std::is_same_v<Q, P>) self = true;
    if (!self && same_config(Q::config, P::config)) before = true;
  });
  return before;
}
[[maybe_unused]] constexpr bool presets_checked = [] {
  boost::hana::for_each(posenc::presets::all, [](auto t) {
    using P = typename decltype(t)::type;
    if constexpr (!config_seen_before<P>())
      static_assert(laws_on_float_table<P, 8>(), "rotation laws hold for every preset");
  });
  return true;
}();

// ---- counter-examples: the same checks fail on broken rotations --------------------------------
// A block that is not orthogonal: the rotation scaled by 1 + 2^-20.
struct scaled_pair {
  pa::rope_pair<double> p;
  constexpr pa::block2 at(std::uint64_t m) const {
    const pa::block2 b = p.at(m);
    constexpr double g = 1.0 + 0x1p-20;
    return {b.a * g, b.b * g, b.c * g, b.d * g};
  }
};
struct scaled_rotation {
  pa::rope_rotation<double> r;
  constexpr std::uint32_t head_dim() const { return r.head_dim(); }
  constexpr std::uint32_t pairs() const { return r.pairs(); }
  constexpr posenc::channel_pair channels(std::uint32_t i) const { return r.channels(i); }
  constexpr scaled_pair pair(std::uint32_t i) const { return {r.pair(i)}; }
};
// A rotation whose angle depends on the absolute position: m theta_i + (m mod 3) / 4.
struct absolute_pair {
  pm::dd theta;
  constexpr pa::block2 at(std::uint64_t m) const {
    const pm::dd angle = pm::angle_of(m, theta) + 0.25 * static_cast<double>(m % 3);
    const pm::sincos_result<pm::dd> v = pm::sincos(angle);
    return {v.cos.hi, -v.sin.hi, v.sin.hi, v.cos.hi};
  }
};
struct absolute_rotation {
  rope_config c;
  constexpr std::uint32_t head_dim() const { return c.head_dim; }
  constexpr std::uint32_t pairs() const { return c.rotary_dim / 2; }
  constexpr posenc::channel_pair channels(std::uint32_t i) const {
    return posenc::pair_channels(c.layout, c.rotary_dim, i);
  }
  constexpr absolute_pair pair(std::uint32_t i) const { return {posenc::inv_freq_dd(c, i)}; }
};

constexpr rope_config c16 = half_16_linear::config;
constexpr auto x16 = vector_in_unit_box<16>(16);
static_assert(pa::orthogonality(scaled_rotation{{c16}}, 5) > pa::orthogonality_tolerance<double>(),
              "counter-example: orthogonality detects a rotation scaled by 1 + 2^-20");
static_assert(pa::norm_preservation(scaled_rotation{{c16}}, 5, x16) >
                  pa::norm_tolerance<double>(16, pa::vector_norm(x16)),
              "counter-example: norm_preservation detects a rotation scaled by 1 + 2^-20");
// The absolute-position rotation is orthogonal and keeps norms, but is not relative.
static_assert(pa::orthogonality(absolute_rotation{c16}, 5) <=
                      pa::orthogonality_tolerance<double>() &&
                  pa::norm_preservation(absolute_rotation{c16}, 5, x16) <=
                      pa::norm_tolerance<double>(16, pa::vector_norm(x16)),
              "counter-example: an absolute-position rotation is still a rotation");
static_assert(pa::relative_dependence(absolute_rotation{c16}, 7, 3, 2, x16, x16) >
                      pa::relative_tolerance<double>(16, pa::vector_norm(x16),
                                                     pa::vector_norm(x16)) &&
                  pa::relative_dependence_blocks(absolute_rotation{c16}, 7, 2) >
                      pa::relative_blocks_tolerance<double>(),
              "counter-example: relative_dependence detects an absolute-position rotation");
// Float entries do not meet the double tolerance: the bounds are not vacuous.
static_assert(pa::orthogonality(pa::rope_rotation<float>{c16}, 16777215) >
                  pa::orthogonality_tolerance<double>(),
              "counter-example: float entries exceed the double orthogonality tolerance");

// ---- decay (docs/formulas.md §8): d = 128, base 10^4 ------------------------------------
// f(r) for r in [0, 64], computed once; every statement below reads it.
constexpr rope_config d128{128, 128, 10000.0, rope_layout::half};
constexpr auto f = pa::sample_decay<65>(pa::thetas_of<64>(d128));
constexpr double tol = pa::decay_tolerance(64);

static_assert(f.f[0] == 32.5 && pa::decay_at_origin(64) == 32.5, "f(0) = (d/2 + 1)/2 = 32.5");
static_assert(f.f[1] > 31.5381 && f.f[1] < 31.5382 && f.f[18] > 15.3487 && f.f[18] < 15.3488 &&
                  f.f[19] > 15.3907 && f.f[19] < 15.3909,
              "f(1) = 31.5382, f(18) = 15.3487, f(19) = 15.3908 (formulas.md §8)");
static_assert(pa::decay_below_origin(f, 64) < -tol,
              "decay_below_origin: f(r) < f(0) for 1 <= r <= 64");
static_assert(pa::decay_decreasing(f, 0, 18) < -tol,
              "decay_decreasing: f strictly decreasing on [0, 18]");
static_assert(pa::decay_decreasing(f, 0, 19) > tol && pa::decay_below(f, 18, 64) > tol,
              "f is not monotone and 18 is no record: f(19) > f(18) (the checks fail there)");
static_assert(pa::decay_below(f, 21, 64) < -tol, "decay_below: f(r) < f(21) for 22 <= r <= 64");
static_assert(pa::dyadic_means_decreasing(f, 5) < -tol,
              "dyadic_means_decreasing: the means over [2^k, 2^(k+1)) decrease for k = 0..5");

// Equal frequencies: S_j = j e^{i r theta}, so f(r) = f(0) for every r and the checks fail.
struct equal_thetas {
  constexpr std::size_t size() const { return 8; }
  constexpr pm::dd operator[](std::size_t) const { return {0.25, 0.0}; }
};
constexpr auto f_equal = pa::sample_decay<32>(equal_thetas{});
static_assert(pa::decay_below_origin(f_equal, 31) > -pa::decay_tolerance(8) &&
                  pa::decay_decreasing(f_equal, 0, 31) > -pa::decay_tolerance(8) &&
                  pa::dyadic_means_decreasing(f_equal, 3) > -pa::decay_tolerance(8),
              "counter-example: with equal frequencies f(r) = f(0) and the decay checks fail");

}  // namespace
