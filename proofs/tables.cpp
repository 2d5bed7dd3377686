// Compile-time proofs for the tables layer (posenc/tables.hpp): building this translation unit is
// the proof. For a few small specs defined here the compiler checks:
//   - the structure of the dense R_m: 2x2 blocks [[c, -s], [s, c]] on each pair's channels in the
//     spec's layout, identity on channels >= rotary_dim, zero elsewhere;
//   - orthogonality R_m^T R_m = I and norm preservation |R_m x| = |x|, within the bounds below;
//   - relative-only dependence R_m^T R_n = R_{n-m};
//   - the dense product R_m x equals the per-pair reference apply_rotation (by value);
//   - interleaved and half-split matrices are conjugate by the channel permutation;
//   - the runtime-config forms equal the spec forms, bit for bit;
//   - the compile-time cos/sin cache equals the per-element math::sincos_of_product<T>(p, theta_i,
//     attention_factor), and equals the pure rotation's cos/sin when the attention factor is 1.
// For every preset of posenc/spec/presets.hpp (when Boost.Hana is available) it checks, on the
// pair form at one position: orthogonality of every 2x2 block, norm preservation, and that the
// layout's channels are the pairs'.
//
// Error bounds (u = 2^-53, the unit roundoff of double; every matrix here is double). Each cos and
// sin entry is the correctly rounded double of a double-double value whose own error is ~2^-100,
// so |c - cos| <= u |cos| + 2^-100 (same for s), and c^2 + s^2 lies in [1 - 2u, 1 + 2u + u^2] up to
// O(2^-100).
//   - Orthogonality: once the structure is proven, each dot product of two columns of R_m has at
//     most two non-zero terms, whichever way it is summed (adding an exact zero changes nothing),
//     so it is fl(fl(a) + fl(b)) with a + b = c^2 + s^2 (diagonal), c(-s) + sc (exactly 0:
//     fl(c(-s)) = -fl(cs)), or a single 1 or 0 term. Hence
//       |(R^T R)_jk - delta_jk| <= (2u + u^2) + 2u (1 + u)(1 + 2u + u^2) < 4u + 6u^2 < kOrthoTol.
//     (A generic dense bound would be 2u + gamma_D, gamma_D = Du / (1 - Du); the sparse one is far
//     tighter and is the one asserted.)
//   - R_m^T R_n = R_{n-m}: entry = fl(fl(c_m c_n) + fl(s_m s_n)) (or its sign variants) against
//     cos((n - m) theta) = cos(m theta) cos(n theta) + sin(m theta) sin(n theta): the rounded
//     inputs contribute (2u + u^2)(|c_m c_n| + |s_m s_n|) <= 2u + u^2 (Cauchy-Schwarz), the two
//     products and the sum 2u (1 + u)(1 + 2u), the entry of R_{n-m} itself u, and the three
//     double-double angles p * theta (relative error ~2^-104 each, p theta < 2^40 here) far below
//     2^-60: in all below 5u + 8u^2 < kShiftTol.
//   - Norm: per pair, y = fl(fl(x_a c) - fl(x_b s)) etc. The exact R-hat x (rounded c, s) has norm
//     |x| sqrt(c^2 + s^2) in [1 - u - u^2, 1 + u + u^2] |x|; rounding y adds at most
//     gamma_2 (|c| + |s|) |x| <= 2 sqrt(2) u (1 + 3u) |x|. So |y|^2 / |x|^2 lies within
//     2 (1 + 2 sqrt(2)) u + O(u^2) < 7.7u of 1, and summing D squares (non-negative terms) in
//     double adds a relative gamma_D to each side: |sum y^2 - sum x^2| <= (2D + 8) u sum x^2.
//
// Compile-time cost: a double-double sin/cos costs ~1.5 ms of constant evaluation with GCC 12 and
// ~6 ms with Clang 16, a theta ~2-20 ms; every law below is sized by that count (docs/tables.md).
#include <array>
#include <cstddef>
#include <cstdint>

#include <posenc/tables.hpp>

#if __has_include(<boost/hana/for_each.hpp>)
#include <boost/hana/for_each.hpp>

#include <posenc/spec/presets.hpp>
#define POSENC_PROOFS_HAVE_PRESETS 1
#else
#define POSENC_PROOFS_HAVE_PRESETS 0
#endif

namespace {

using posenc::rope_config;
using posenc::rope_layout;
namespace pm = posenc::math;

constexpr double u = 0x1p-53;
constexpr double kOrthoTol = 4.5 * u;
constexpr double kShiftTol = 5.5 * u;
constexpr double norm_tol(std::size_t d) {
  return (2.0 * static_cast<double>(d) + 8.0) * u;
}

constexpr double absd(double x) {
  return x < 0.0 ? -x : x;
}

// ---- specs ----------------------------------------------------------------------------------
// The same 8-channel encoding in both layouts.
struct interleaved_8 {
  static constexpr rope_config config{8, 8, 10000.0, rope_layout::interleaved};
};
struct half_8 {
  static constexpr rope_config config{8, 8, 10000.0, rope_layout::half};
};
// Partial rotary (8 of 16 channels), both layouts, another base.
struct partial_16_interleaved {
  static constexpr rope_config config{16, 8, 500000.0, rope_layout::interleaved};
};
struct partial_16_half {
  static constexpr rope_config config{16, 8, 500000.0, rope_layout::half};
};
// YaRN factor 4 over an original context of 2048: attention factor 0.1 ln 4 + 1 = 1.1386...
struct yarn_64 {
  static constexpr rope_config config{64, 64, 10000.0, rope_layout::half,
                                      posenc::scaling::yarn(4.0, 2048)};
};

// ---- the channel layout, restated independently of posenc::pair_channels -----------------------
// The pair index of channel k < R and the other channel of its pair.
constexpr std::size_t pair_of(const rope_config& c, std::size_t k) {
  return c.layout == rope_layout::interleaved ? k / 2 : k % (c.rotary_dim / 2);
}
constexpr std::size_t partner_of(const rope_config& c, std::size_t k) {
  if (c.layout == rope_layout::interleaved) return k % 2 == 0 ? k + 1 : k - 1;
  const std::size_t h = c.rotary_dim / 2;
  return k < h ? k + h : k - h;
}
// Interleaved channel -> half-split channel of the same role: 2i -> i, 2i+1 -> i + R/2.
constexpr std::size_t to_half(const rope_config& c, std::size_t k) {
  if (k >= c.rotary_dim) return k;
  return k % 2 == 0 ? k / 2 : k / 2 + c.rotary_dim / 2;
}

// ---- helpers ---------------------------------------------------------------------------------
template <class S>
constexpr rope_config cfg = posenc::checked_rope<S>;
template <class S>
constexpr std::size_t dim = cfg<S>.head_dim;
template <class S>
constexpr std::size_t pairs = cfg<S>.rotary_dim / 2;

// theta_i of S, evaluated once per spec (each inv_freq_dd costs milliseconds).
template <class S>
constexpr pm::dd theta(std::size_t i) {
  return posenc::tables_detail::spec_thetas_v<S>[i];
}

template <class S>
constexpr auto matrix(std::uint64_t m) {
  return posenc::rotation_matrix<S, double>(m);
}

// Fixed test vectors: integers and halves of both signs, or 1/(k+1).
template <std::size_t D>
constexpr std::array<double, D> vector_x(int which) {
  std::array<double, D> x{};
  for (std::size_t k = 0; k < D; ++k) {
    const double kd = static_cast<double>(k);
    x[k] = which == 0 ? static_cast<double>(static_cast<int>((k * 37) % 11) - 5) + 0.5 * kd
                      : 1.0 / (kd + 1.0);
  }
  return x;
}

// The rows holding column j's non-zero entries (at most two once block_structure holds; D marks
// an unused slot).
template <std::size_t D>
constexpr std::array<std::array<std::size_t, 2>, D> column_support(
    const std::array<double, D * D>& r) {
  std::array<std::array<std::size_t, 2>, D> s{};
  for (std::size_t j = 0; j < D; ++j) {
    s[j] = {D, D};
    std::size_t n = 0;
    for (std::size_t l = 0; l < D && n < 2; ++l)
      if (r[l * D + j] != 0.0) s[j][n++] = l;
  }
  return s;
}

// (A^T B)_jk summed over the support of column j of A: the same value as the full dot product.
template <std::size_t D>
constexpr double at_b(const std::array<double, D * D>& a, const std::array<double, D * D>& b,
                      const std::array<std::size_t, 2>& support, std::size_t j, std::size_t k) {
  double acc = 0.0;
  for (std::size_t l : support)
    if (l < D) acc += a[l * D + j] * b[l * D + k];
  return acc;
}

// ---- laws on the dense matrix ----------------------------------------------------------------
// R_m is [[c, -s], [s, c]] on each pair (c, s correctly rounded, no attention factor), 1 on the
// diagonal beyond R, 0 elsewhere.
template <class S>
constexpr bool block_structure(std::uint64_t m) {
  constexpr rope_config c = cfg<S>;
  constexpr std::size_t D = dim<S>;
  const auto r = matrix<S>(m);
  std::array<pm::sincos_result<double>, pairs<S>> v{};
  for (std::size_t i = 0; i < pairs<S>; ++i) v[i] = pm::sincos_of_product<double>(m, theta<S>(i));
  for (std::size_t row = 0; row < D; ++row) {
    for (std::size_t k = 0; k < D; ++k) {
      double want = 0.0;
      if (row >= c.rotary_dim) {
        want = k == row ? 1.0 : 0.0;
      } else if (k == row) {
        want = v[pair_of(c, row)].cos;
      } else if (k == partner_of(c, row)) {
        const double s = v[pair_of(c, row)].sin;
        want = row < k ? -s : s;
      }
      if (r[row * D + k] != want) return false;
    }
  }
  return true;
}

// |R_m^T R_m - I| <= kOrthoTol entrywise.
template <class S>
constexpr bool orthogonal(std::uint64_t m) {
  constexpr std::size_t D = dim<S>;
  const auto r = matrix<S>(m);
  const auto sup = column_support<D>(r);
  for (std::size_t j = 0; j < D; ++j)
    for (std::size_t k = 0; k < D; ++k)
      if (absd(at_b<D>(r, r, sup[j], j, k) - (j == k ? 1.0 : 0.0)) > kOrthoTol) return false;
  return true;
}

// |R_m^T R_n - R_{n-m}| <= kShiftTol entrywise (n >= m).
template <class S>
constexpr bool relative_only(std::uint64_t m, std::uint64_t n) {
  constexpr std::size_t D = dim<S>;
  const auto rm = matrix<S>(m);
  const auto rn = matrix<S>(n);
  const auto rd = matrix<S>(n - m);
  const auto sup = column_support<D>(rm);
  for (std::size_t j = 0; j < D; ++j)
    for (std::size_t k = 0; k < D; ++k)
      if (absd(at_b<D>(rm, rn, sup[j], j, k) - rd[j * D + k]) > kShiftTol) return false;
  return true;
}

// y = R_m x by apply_rotation equals the dense product (summed from +0 in increasing k) by value,
// and |y|^2 = |x|^2 within norm_tol(D) relative.
template <class S>
constexpr bool norm_and_dense_agree(std::uint64_t m, int which) {
  constexpr std::size_t D = dim<S>;
  const auto r = matrix<S>(m);
  const std::array<double, D> x = vector_x<D>(which);
  std::array<double, D> y{};
  posenc::apply_rotation<S>(m, x.data(), y.data());
  double nx = 0.0;
  double ny = 0.0;
  for (std::size_t row = 0; row < D; ++row) {
    double acc = 0.0;
    for (std::size_t k = 0; k < D; ++k) acc += r[row * D + k] * x[k];
    if (acc != y[row]) return false;
    nx += x[row] * x[row];
    ny += y[row] * y[row];
  }
  return absd(ny - nx) <= norm_tol(D) * nx;
}

// R_half[pi(r)][pi(k)] == R_interleaved[r][k], pi(2i) = i, pi(2i+1) = i + R/2 (identity >= R).
template <class Interleaved, class Half>
constexpr bool permutation_conjugate(std::uint64_t m) {
  constexpr rope_config c = cfg<Interleaved>;
  constexpr std::size_t D = dim<Interleaved>;
  static_assert(dim<Half> == D && cfg<Half>.rotary_dim == c.rotary_dim);
  const auto a = matrix<Interleaved>(m);
  const auto b = matrix<Half>(m);
  for (std::size_t row = 0; row < D; ++row)
    for (std::size_t k = 0; k < D; ++k)
      if (b[to_half(c, row) * D + to_half(c, k)] != a[row * D + k]) return false;
  return true;
}

// The runtime-config forms (which compute theta on the fly) equal the spec forms (which use the
// thetas evaluated once per spec), entry by entry.
template <class S>
constexpr bool config_forms_match(std::uint64_t m) {
  constexpr rope_config c = cfg<S>;
  constexpr std::size_t D = dim<S>;
  const auto a = posenc::rotation_matrix<double, D>(c, m);
  const auto b = matrix<S>(m);
  for (std::size_t k = 0; k < D * D; ++k)
    if (a[k] != b[k]) return false;
  const auto pa = posenc::rotation_pairs<float, pairs<S>>(c, m);
  const auto pb = posenc::rotation_pairs<S, float>(m);
  for (std::size_t i = 0; i < pairs<S>; ++i)
    if (pa[i].cos != pb[i].cos || pa[i].sin != pb[i].sin || pa[i].first != pb[i].first ||
        pa[i].second != pb[i].second)
      return false;
  const std::array<double, D> x = vector_x<D>(0);
  std::array<double, D> ya{};
  std::array<double, D> yb{};
  if (posenc::apply_rotation<double>(c, m, x.data(), ya.data()) != posenc::rope_error::ok)
    return false;
  posenc::apply_rotation<S>(m, x.data(), yb.data());
  for (std::size_t k = 0; k < D; ++k)
    if (ya[k] != yb[k]) return false;
  return true;
}

// ---- laws on the caches ----------------------------------------------------------------------
// Every entry at the sampled positions equals sincos_of_product<T>(p, theta_i, attention factor);
// position 0 is (attention factor, 0) for every pair.
template <class S, class T, std::size_t P, std::size_t N>
constexpr bool cache_matches_elements(const std::array<std::size_t, N>& positions) {
  constexpr rope_config c = cfg<S>;
  constexpr auto& cache = posenc::rope_cache_v<S, T, P>;
  const pm::dd af = posenc::attention_factor_dd(c);
  const auto view = cache.view();
  if (view.positions != P || view.pairs != pairs<S> ||
      view.attention_factor != posenc::attention_factor(c))
    return false;
  for (std::size_t i = 0; i < pairs<S>; ++i)
    if (view.cos_at(0, i) != pm::round_to<T>(af) || view.sin_at(0, i) != T(0)) return false;
  for (std::size_t p : positions) {
    for (std::size_t i = 0; i < pairs<S>; ++i) {
      const auto v = pm::sincos_of_product<T>(p, theta<S>(i), af);
      if (cache.cos_at(p, i) != v.cos || cache.sin_at(p, i) != v.sin) return false;
    }
  }
  return true;
}

// With attention factor 1, cache entries are exactly the pure rotation's cos and sin.
template <class S, std::size_t P>
constexpr bool cache_is_rotation() {
  constexpr auto& cache = posenc::rope_cache_v<S, double, P>;
  for (std::size_t p = 0; p < P; ++p) {
    const auto rot = posenc::rotation_pairs<S, double>(p);
    for (std::size_t i = 0; i < pairs<S>; ++i)
      if (cache.cos_at(p, i) != rot[i].cos || cache.sin_at(p, i) != rot[i].sin) return false;
  }
  return true;
}

// ---- the specs above ---------------------------------------------------------------------------
// Positions: 0, small ones, a block boundary of the table builders (64), larger ones, and one
// beyond 2^24 (where float positions stop being exact; the angle here is exact).
static_assert(block_structure<interleaved_8>(0) && block_structure<interleaved_8>(4095) &&
                  block_structure<half_8>(4095),
              "R_m: 2x2 rotation blocks on (2i, 2i+1) (interleaved) or (i, i + R/2) (half)");
static_assert(block_structure<partial_16_interleaved>(77) && block_structure<partial_16_half>(77),
              "R_m (partial rotary): identity on channels >= rotary_dim");
static_assert(block_structure<yarn_64>(1000), "R_m (yarn): rotation blocks, no attention factor");

static_assert(orthogonal<interleaved_8>(1) && orthogonal<interleaved_8>(16777217) &&
                  orthogonal<half_8>(64) && orthogonal<partial_16_half>(12345) &&
                  orthogonal<partial_16_interleaved>(12345) && orthogonal<yarn_64>(2047),
              "R_m^T R_m = I within 4.5 * 2^-53");

static_assert(relative_only<interleaved_8>(3, 10) && relative_only<interleaved_8>(100, 4095) &&
                  relative_only<half_8>(1000, 1064) && relative_only<partial_16_half>(5, 70000) &&
                  relative_only<partial_16_interleaved>(64, 65) && relative_only<yarn_64>(63, 4000),
              "R_m^T R_n = R_{n-m} within 5.5 * 2^-53");

static_assert(norm_and_dense_agree<interleaved_8>(7, 0) &&
                  norm_and_dense_agree<interleaved_8>(4095, 1) &&
                  norm_and_dense_agree<half_8>(7, 0) &&
                  norm_and_dense_agree<partial_16_half>(99, 0) &&
                  norm_and_dense_agree<partial_16_interleaved>(99, 1) &&
                  norm_and_dense_agree<yarn_64>(3000, 0),
              "apply_rotation == dense R_m x, and |R_m x|^2 = |x|^2 within (2D + 8) * 2^-53");

static_assert(permutation_conjugate<interleaved_8, half_8>(0) &&
                  permutation_conjugate<interleaved_8, half_8>(5) &&
                  permutation_conjugate<interleaved_8, half_8>(4095) &&
                  permutation_conjugate<partial_16_interleaved, partial_16_half>(321),
              "R_half = P R_interleaved P^T (also with partial rotary)");

static_assert(config_forms_match<interleaved_8>(4095) && config_forms_match<partial_16_half>(70),
              "rotation_matrix/rotation_pairs/apply_rotation: config forms == spec forms");

// The compile-time caches, at sampled positions around the builders' 64-position blocks.
static_assert(cache_matches_elements<interleaved_8, float, 130>(std::array<std::size_t, 6>{
                  1, 2, 63, 64, 65, 129}) &&
                  cache_matches_elements<partial_16_half, float, 130>(std::array<std::size_t, 6>{
                      1, 2, 63, 64, 65, 129}),
              "rope_cache_v<float> entries == sincos_of_product<float>(p, theta_i)");
static_assert(cache_matches_elements<yarn_64, float, 130>(std::array<std::size_t, 3>{1, 64, 129}),
              "rope_cache_v<float> (yarn) entries == sincos_of_product<float>(p, theta_i, "
              "attention factor)");
static_assert(cache_matches_elements<yarn_64, double, 2>(std::array<std::size_t, 1>{1}),
              "rope_cache_v<double> (yarn) entries == sincos_of_product<double>(p, theta_i, "
              "attention factor)");
static_assert(posenc::rope_cache_v<yarn_64, float, 130>.attention_factor > 1.1386 &&
                  posenc::rope_cache_v<yarn_64, float, 130>.attention_factor < 1.1387,
              "yarn factor 4: the cache carries the attention factor 0.1 ln 4 + 1 = 1.13863");
static_assert(cache_is_rotation<half_8, 8>(),
              "attention factor 1: rope_cache_v<double> entries == the pure rotation's cos/sin");

// ---- the presets -----------------------------------------------------------------------------
#if POSENC_PROOFS_HAVE_PRESETS
// On the pair form at position m: each pair rotates the channels of the preset's layout, each 2x2
// block is orthogonal within kOrthoTol (c^2 + s^2 = 1; the off-diagonal c(-s) + sc is exactly 0),
// and apply_pair_rotation over all pairs (channels >= R copied) preserves the norm of a fixed
// vector within norm_tol(D).
template <class S>
constexpr bool preset_laws(std::uint64_t m) {
  constexpr rope_config c = cfg<S>;
  constexpr std::size_t D = dim<S>;
  const auto rot = posenc::rotation_pairs<S, double>(m);
  const std::array<double, D> x = vector_x<D>(0);
  std::array<double, D> y = x;
  for (std::size_t i = 0; i < pairs<S>; ++i) {
    const auto& r = rot[i];
    if (pair_of(c, r.first) != i || partner_of(c, r.first) != r.second || r.first >= r.second)
      return false;
    if (absd(r.cos * r.cos + r.sin * r.sin - 1.0) > kOrthoTol) return false;
    posenc::apply_pair_rotation(r, y.data(), y.data());
  }
  double nx = 0.0;
  double ny = 0.0;
  for (std::size_t k = 0; k < D; ++k) {
    nx += x[k] * x[k];
    ny += y[k] * y[k];
  }
  return absd(ny - nx) <= norm_tol(D) * nx;
}

constexpr bool all_presets() {
  bool ok = true;
  boost::hana::for_each(posenc::presets::all, [&](auto t) {
    using S = typename decltype(t)::type;
    ok = ok && preset_laws<S>(4097);
  });
  return ok;
}
static_assert(all_presets(),
              "every preset: pairs on the layout's channels, orthogonal blocks, norm preserved");
#endif

}  // namespace

// Keeps the object file non-empty.
void posenc_proofs_tables() {}
