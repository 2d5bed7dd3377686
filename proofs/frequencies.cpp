// Compile-time proofs for posenc/frequencies over the presets: building this translation unit is
// the proof. Each law is a constexpr function of a preset type, asserted for the types of
// presets::all with boost::hana::for_each (a failing preset is named in the instantiation context
// of the error). The factor-1 law is in proofs/spec.cpp.
//
// Tolerances come from the double-double error figures of docs/math.md (measured against MPFR):
// dd + - * / within 2^-104.2 relative, exp/log(dd) within 2^-104.7 / 2^-103.9, pow_ratio within
// 2^-100.5. Where two evaluations share theta_i (the same pow_ratio result) only the operations
// after it count. A dd error bound e means the rounding to double (or float) is the correctly
// rounded one unless the exact value lies within e of a rounding midpoint; where a proof asserts
// equal doubles on top of a dd bound, that outcome is observed (and so proven) for these presets,
// while the dd bound is the law for any configuration.
//
// Compile-time budget (Clang evaluates every log/exp afresh, ~3 ms each): the unscaled tables are
// computed once per distinct (rotary_dim, base), and laws on scaled variants of the presets are
// checked once per distinct shape at the pairs where the law could fail (ends of ramps and bands)
// plus a spread of pairs; the published presets' own tables are checked at every pair.
#include <array>
#include <cstdint>

#include <boost/hana/fold_left.hpp>

#include <posenc/frequencies/rope.hpp>
#include <posenc/math/detail/fp_bits.hpp>
#include <posenc/math/detail/series.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/spec/presets.hpp>
#include <posenc/spec/rope.hpp>

#include "support.hpp"

using namespace posenc_proofs;  // proofs/support.hpp

namespace {

// ---- helpers ------------------------------------------------------------------------------------
constexpr double mag(double x) {
  return pm::detail::fabs(x);
}
constexpr dd mag(dd x) {
  return x.hi < 0.0 ? -x : x;
}
// ulp of a normal, non-zero double.
constexpr double ulp(double x) {
  return pm::detail::pow2(pm::detail::ilogb(x) - 52);
}
template <class P>
constexpr std::uint32_t pairs = P::config.rotary_dim / 2;

// theta_i = base^(-2i/R) for i < R/2, as double-double, once per (R, base).
template <std::uint32_t R, std::uint64_t Base>
inline constexpr auto theta_table = [] {
  std::array<dd, R / 2> out{};
  const rope_config c{R, R, static_cast<double>(Base), posenc::rope_layout::half,
                      posenc::scaling::none()};
  for (std::uint32_t i = 0; i < R / 2; ++i) out[i] = posenc::inv_freq_dd(c, i);
  return out;
}();
// Every preset's base is an integer (so it can key theta_table).
static_assert(hana::fold_left(presets::all, true, [](bool ok, auto t) {
  using P = typename decltype(t)::type;
  return ok && static_cast<double>(static_cast<std::uint64_t>(P::config.base)) == P::config.base;
}));
template <class P>
inline constexpr const auto& default_dd =
    theta_table<P::config.rotary_dim, static_cast<std::uint64_t>(P::config.base)>;

// The preset's own inv_freq (with its published scaling), as double-double.
template <class P>
inline constexpr auto preset_dd = [] {
  std::array<dd, pairs<P>> out{};
  for (std::uint32_t i = 0; i < pairs<P>; ++i) out[i] = posenc::inv_freq_dd(P::config, i);
  return out;
}();
template <class P>
constexpr const auto& preset_or_default_dd() {
  if constexpr (P::config.scaling.type == posenc::scaling_type::none) {
    return default_dd<P>;
  } else {
    return preset_dd<P>;
  }
}

// Pairs 0, s, 2s, ... and the last, s = max(1, n/8): about ten per preset.
constexpr bool sampled(std::uint32_t i, std::uint32_t n) {
  const std::uint32_t s = n / 8 > 0 ? n / 8 : 1;
  return i % s == 0 || i + 1 == n;
}

// ---- every preset: frequencies in (0, 1], strictly decreasing ----------------------------------
// Unscaled: theta_0 = base^0 = 1 exactly (pow_ratio returns 1 for exponent 0), and base > 1 makes
// theta_i strictly decreasing; neighbours differ by the factor base^(-2/R) <= 10000^(-2/128) <
// 0.87, far from 1, so the roundings to double and to float are strictly decreasing too.
template <class P>
constexpr bool default_in_unit_interval_decreasing() {
  const auto& t = default_dd<P>;
  if (!(pm::to_double(t[0]) == 1.0 && pm::to_float(t[0]) == 1.0f)) return false;
  for (std::uint32_t i = 1; i < pairs<P>; ++i) {
    const double a = pm::to_double(t[i - 1]), b = pm::to_double(t[i]);
    const float af = pm::to_float(t[i - 1]), bf = pm::to_float(t[i]);
    if (!(0.0 < b && b < a && 0.0f < bf && bf < af)) return false;
  }
  return true;
}
static_assert(for_every_preset([](auto t) {
                return default_in_unit_interval_decreasing<typename decltype(t)::type>();
              }),
              "unscaled: theta_0 == 1 exactly and 0 < theta_{i+1} < theta_i (double and float)");

// With the published scaling too: llama3 and yarn weigh theta/factor against theta with a weight
// of theta/factor that grows with i, Phi-3 divides by short factors that never decrease; the
// result stays in (0, 1] and strictly decreasing, in dd and rounded to double.
template <class P>
constexpr bool preset_decreasing() {
  const auto& v = preset_or_default_dd<P>();
  if (!(0.0 < pm::to_double(v[0]) && pm::to_double(v[0]) <= 1.0)) return false;
  for (std::uint32_t i = 1; i < pairs<P>; ++i)
    if (!(v[i] < v[i - 1] && pm::to_double(v[i]) < pm::to_double(v[i - 1]) &&
          0.0 < pm::to_double(v[i])))
      return false;
  return true;
}
static_assert(for_every_preset([](auto t) {
                return preset_decreasing<typename decltype(t)::type>();
              }),
              "every preset's inv_freq is strictly decreasing within (0, 1]");

// ---- NTK moves the lowest frequency by exactly 1/factor ----------------------------------------
// theta_{R/2-1} f^(-2(R/2-1)/(R-2)) = theta_{R/2-1} / f exactly in math: the exponent
// -(R-2)/(R-2) comes out exactly -1 (a dd quotient of two equal integers), so the sides differ by
// exp(-ln f) against 1/f: ln f within 2^-103.9 relative (|ln f| <= ln 40 < 4: 2^-101.9 absolute,
// which exp turns into relative), exp within 2^-104.7, the dd product and quotient 2^-104.2 each:
// |ntk - theta/f| < 2^-100 relative. Asserted within 2^-100 in dd and the same double and float;
// theta_0 stays 1; and in between theta_i/f < ntk_i < theta_i (f^(-2i/(R-2)) in (1/f, 1) for
// 0 < i < R/2-1), at the sampled pairs.
template <class P>
constexpr bool ntk_lowest_is_default_over_factor(double f, bool interior) {
  const rope_config ntk = with_scaling(P::config, posenc::scaling::ntk(f));
  const std::uint32_t last = pairs<P> - 1;
  const dd a = posenc::inv_freq_dd(ntk, last);
  const dd b = default_dd<P>[last] / f;  // linear scaling's value, bitwise (scaling::linear(f))
  if (!same(posenc::inv_freq_dd(with_scaling(P::config, posenc::scaling::linear(f)), last), b))
    return false;
  if (!(close_rel(a, b, 0x1p-100) && same_rounding(a, b))) return false;
  if (posenc::inv_freq<double>(ntk, 0) != 1.0) return false;
  if (interior) {
    for (std::uint32_t i = 1; i < last; ++i) {
      if (!sampled(i, pairs<P>)) continue;
      const dd v = posenc::inv_freq_dd(ntk, i);
      if (!(default_dd<P>[i] / f < v && v < default_dd<P>[i])) return false;
    }
  }
  return true;
}
static_assert(for_every_preset([](auto t) {
                using P = typename decltype(t)::type;
                if constexpr (first_of_its_shape<P>()) {
                  return ntk_lowest_is_default_over_factor<P>(2.0, false) &&
                         ntk_lowest_is_default_over_factor<P>(8.0, true) &&
                         ntk_lowest_is_default_over_factor<P>(40.0, false);
                } else {
                  return true;
                }
              }),
              "ntk: theta_{R/2-1} == theta_{R/2-1} / factor within 2^-100 (same double and "
              "float), theta_0 == 1, theta_i / factor < ntk_i < theta_i in between");

// ---- llama3 is continuous at its band edges ----------------------------------------------------
// HF's llama3 splits the pairs by wavelength w_i = 2 pi / theta_i: theta/factor above
// L / low_freq_factor, theta below L / high_freq_factor, and in between the medium band
// (1 - s) theta/factor + s theta with s = (L / w - low) / (high - low). No pair's wavelength is
// exactly a band edge (w is irrational), so the edge is moved onto a pair instead: the low edge
// lies exactly on w_i when low_freq_factor = L / w_i. With low = that value rounded to double and
// scaled by (1 + eps), and high = 4 low (for the high edge: high on w_i, low = high / 4), the
// library's result must equal the neighbouring branch up to the medium band's slope times the
// distance to the edge:
//   |inv - branch| <= (theta - theta/factor) |L/w - low| / (high - low) + 2^-100 theta,
//   |L/w - low| <= 1.01 |eps| low + ulp(low).
// At eps = 0 that is ~2^-52 relative: the medium band meets the neighbouring branch. eps = 2^-30
// puts the pair in the outer band (where the branch value itself must come out, bitwise in dd),
// eps = -2^-30 in the medium band (strictly between theta/factor and theta).
struct edge_sample {
  double eps;
  int side;  // +1: outer band (low edge: theta/factor, high edge: theta); -1: medium; 0: either
};
inline constexpr edge_sample kEdgeSamples[] = {{0.0, 0}, {0x1p-30, +1}, {-0x1p-30, -1}};

template <class P>
constexpr bool llama3_continuous_at_edges(std::uint32_t i) {
  constexpr double factor = 8.0;
  constexpr std::uint32_t L = 8192;
  const dd theta = default_dd<P>[i];
  const dd low_branch = theta / factor;
  const dd w = pm::detail::two_pi / theta;
  const dd edge = dd{static_cast<double>(L), 0.0} / w;  // the freq factor that puts an edge on w
  const double width = pm::to_double(theta - low_branch);
  // The bands [low, high] with the edge `at` moved next to w_i: within tol of the branch on the
  // outer side of that edge, equal to it on that side, strictly between the branches inside.
  const auto holds = [&](const edge_sample& e, double low, double high, double at, dd outer) {
    const dd v = posenc::inv_freq_dd(
        with_scaling(P::config, posenc::scaling::llama3(factor, low, high, L)), i);
    const double tol =
        width * (1.01 * mag(e.eps) * at + ulp(at)) / (high - low) + 0x1p-100 * theta.hi;
    if (!(pm::to_double(mag(v - outer)) <= tol)) return false;
    if (e.side > 0 && !same(v, outer)) return false;
    if (e.side < 0 && !(low_branch < v && v < theta)) return false;
    return true;
  };
  for (const edge_sample& e : kEdgeSamples) {
    // low edge on w_i; outer side (low > L/w): theta / factor
    const double low = pm::to_double(edge * (1.0 + e.eps));
    if (!holds(e, low, 4.0 * low, low, low_branch)) return false;
    // high edge on w_i; outer side (high < L/w): theta
    const double high = pm::to_double(edge * (1.0 - e.eps));
    if (!holds(e, high / 4.0, high, high, theta)) return false;
  }
  return true;
}
template <class P>
constexpr bool llama3_continuous(std::uint32_t first, std::uint32_t last) {
  for (std::uint32_t i = first; i <= last; ++i)
    if (!llama3_continuous_at_edges<P>(i)) return false;
  return true;
}
static_assert(llama3_continuous<presets::llama_3_1_8b>(26, 37),
              "llama3 (Llama-3.1-8B shape: base 5e5, R 128, L 8192, factor 8): with either band "
              "edge moved onto pairs 26-37, the medium band meets the neighbouring branch");
static_assert(llama3_continuous<presets::gpt_neox_20b>(0, 11),
              "llama3 continuity with partial rotary (GPT-NeoX-20B shape, R 24), every pair");

// Llama-3.1-8B as published (low 1, high 4, L 8192): the medium band 2048 <= w_i <= 8192 is pairs
// 29-34 (w_28 = 1956.5, w_29 = 2401.7, w_34 = 6695.1, w_35 = 8218.7: 2 pi 500000^(i/64), evaluated
// with Python's decimal module to 50 digits). Pairs below keep theta, pairs above get theta/8,
// both bitwise in dd; the medium band lies strictly between.
constexpr bool llama_3_1_bands() {
  using P = presets::llama_3_1_8b;
  for (std::uint32_t i = 0; i < pairs<P>; ++i) {
    const dd theta = default_dd<P>[i];
    const dd v = preset_dd<P>[i];
    if (i <= 28 && !same(v, theta)) return false;
    if (i >= 35 && !same(v, theta / 8.0)) return false;
    if (i >= 29 && i <= 34 && !(theta / 8.0 < v && v < theta)) return false;
  }
  return true;
}
static_assert(llama_3_1_bands(), "Llama-3.1-8B: pairs 0-28 unscaled, 29-34 medium, 35-63 / 8");

// ---- YaRN: untouched below the correction range, divided by the factor above it ---------------
// HF's ramp is clamp((i - low) / (high - low), 0, 1) over the truncated correction range
// [floor(dim(beta_fast)), ceil(dim(beta_slow))]. Ramp 0 (i <= low) gives theta/f * 0 + theta * 1:
// theta bitwise (dd, hence double and float). Ramp 1 (i >= high) gives theta/f * 1 + theta * 0:
// theta/f bitwise (dd), i.e. the linear scaling's value, hence within 1 ulp of the double
// quotient double(theta) / f (each of the two roundings is within half an ulp). Pairs strictly
// inside the range lie strictly between theta/f and theta.
// `every_pair` false: only the pairs next to the range ends, 0 and the last.
template <class P>
constexpr bool yarn_ramp_ends(const rope_config& c, std::uint32_t low, std::uint32_t high,
                              bool every_pair) {
  const posenc::spec_detail::yarn_range r = posenc::spec_detail::yarn_correction_range(c);
  if (!(r.low == dd{static_cast<double>(low), 0.0} && r.high == dd{static_cast<double>(high), 0.0}))
    return false;
  const bool is_preset =
      same(c.scaling.factor, P::config.scaling.factor) && c.scaling.type == P::config.scaling.type;
  const double f = c.scaling.factor;
  for (std::uint32_t i = 0; i < pairs<P>; ++i) {
    const bool edge =
        i == 0 || i == low || i == low + 1 || i + 1 == high || i == high || i + 1 == pairs<P>;
    if (!every_pair && !edge) continue;
    const dd theta = default_dd<P>[i];
    const dd v = is_preset ? preset_or_default_dd<P>()[i] : posenc::inv_freq_dd(c, i);
    if (i <= low) {
      if (!same(v, theta)) return false;
    } else if (i >= high) {
      const double q = pm::to_double(theta) / f;
      if (!(same(v, theta / f) && mag(pm::to_double(v) - q) <= ulp(q))) return false;
    } else if (!(theta / f < v && v < theta)) {
      return false;
    }
  }
  return true;
}

// The correction ranges, evaluated independently (Python decimal, 60 digits) from
// dim(r) = R ln(L / (2 pi r)) / (2 ln base):
//   DeepSeek-V2-Lite (R 64, base 1e4, L 4096, beta 32/1): [10.472, 22.513] -> [10, 23];
//   Llama-2-7B with yarn(4, L 4096) (R 128, base 1e4): [20.944, 45.027] -> [20, 46];
//   Qwen2-7B with yarn(4, L 32768), the long-context setting Qwen documents for Qwen2
//   (R 128, base 1e6): [23.596, 39.651] -> [23, 40].
static_assert(yarn_ramp_ends<presets::deepseek_v2_lite>(presets::deepseek_v2_lite::config, 10, 23,
                                                        true),
              "DeepSeek-V2-Lite yarn: pairs 0-10 untouched, 11-22 blended, 23-31 divided by 40");
static_assert(yarn_ramp_ends<presets::llama_2_7b>(with_scaling(presets::llama_2_7b::config,
                                                               posenc::scaling::yarn(4.0, 4096)),
                                                  20, 46, false),
              "yarn(4, 4096) on Llama-2-7B: pairs 0-20 untouched, 46-63 divided by 4");
static_assert(yarn_ramp_ends<presets::qwen2_7b>(with_scaling(presets::qwen2_7b::config,
                                                             posenc::scaling::yarn(4.0, 32768)),
                                                23, 40, false),
              "yarn(4, 32768) on Qwen2-7B: pairs 0-23 untouched, 40-63 divided by 4");

// And yarn(4, 4096) on every shape, with the range the library computes (pinned to independent
// values above for three shapes).
static_assert(for_every_preset([](auto t) {
                using P = typename decltype(t)::type;
                if constexpr (first_of_its_shape<P>()) {
                  const rope_config c = with_scaling(P::config, posenc::scaling::yarn(4.0, 4096));
                  const posenc::spec_detail::yarn_range r =
                      posenc::spec_detail::yarn_correction_range(c);
                  return yarn_ramp_ends<P>(c, static_cast<std::uint32_t>(r.low.hi),
                                           static_cast<std::uint32_t>(r.high.hi), false);
                } else {
                  return true;
                }
              }),
              "yarn(4, 4096): below the correction range theta bitwise, above it theta / 4");

// ---- attention factors --------------------------------------------------------------------------
// Exact values (Python decimal, 60 digits), correctly rounded to double:
//   1 + 0.1 ln 4 = 1.13862943611198906188344642429...           -> 0x1.237d37fe5d298p+0
//   sqrt(1 + ln 32 / ln 4096) = sqrt(1 + 5/12) = sqrt(17/12)
//                             = 1.19023807142380833299989996856...  -> 0x1.30b3713738289p+0
// Contract: within 1e-15 relative of the exact value. The dd evaluation is good to ~2^-100, so the
// result is in fact the correctly rounded double; equality is asserted as well.
constexpr bool close_to(double a, double exact) {
  return mag(a - exact) <= 1e-15 * exact;
}

constexpr double kYarn4 = 0x1.237d37fe5d298p+0;
constexpr double kPhi3 = 0x1.30b3713738289p+0;
constexpr double kYarn4Factor = posenc::attention_factor(
    with_scaling(presets::llama_2_7b::config, posenc::scaling::yarn(4.0, 4096)));
static_assert(close_to(kYarn4Factor, kYarn4) && kYarn4Factor == kYarn4,
              "yarn factor 4: attention factor 1 + 0.1 ln 4");
// DeepSeek: mscale == mscale_all_dim (0.707), so the ratio get_mscale(40, 0.707) /
// get_mscale(40, 0.707) is 1 exactly (dd x / x: first quotient digit 1, remainder 0).
static_assert(posenc::attention_factor(presets::deepseek_v2_lite::config) == 1.0,
              "DeepSeek-V2-Lite: mscale ratio == 1 exactly");
constexpr double kPhi3Factor = posenc::attention_factor(presets::phi_3_mini_128k_instruct::config);
static_assert(close_to(kPhi3Factor, kPhi3) && kPhi3Factor == kPhi3,
              "Phi-3-mini-128k longrope: sqrt(1 + ln 32 / ln 4096) = sqrt(17/12)");
static_assert(for_every_preset([](auto t) {
                using P = typename decltype(t)::type;
                constexpr posenc::scaling_type s = P::config.scaling.type;
                return s == posenc::scaling_type::yarn || s == posenc::scaling_type::longrope ||
                       posenc::attention_factor(P::config) == 1.0;
              }),
              "presets without yarn or longrope scale cos/sin by exactly 1");

// ---- longrope: short factors up to the original context, long factors past it ------------------
// Phi-3 (HF switches per sequence length): theta_i / short_i for seq_len <= 4096 (the table above,
// seq_len 0, and pair 47 at exactly 4096), theta_i / long_i from 4097 on; one dd division each.
constexpr bool phi3_factors_applied() {
  using P = presets::phi_3_mini_128k_instruct;
  const auto& short_f = presets::data::phi_3_mini_128k_short_factor;
  const auto& long_f = presets::data::phi_3_mini_128k_long_factor;
  for (std::uint32_t i = 0; i < pairs<P>; ++i) {
    const dd theta = default_dd<P>[i];
    if (!same(preset_dd<P>[i], theta / short_f[i])) return false;
    if (!same(posenc::inv_freq_dd(P::config, i, 4097), theta / long_f[i])) return false;
  }
  return same(posenc::inv_freq_dd(P::config, 47, 4096), default_dd<P>[47] / short_f[47]);
}
static_assert(
    phi3_factors_applied(),
    "Phi-3 longrope: theta / short_factor up to 4096 positions, theta / long_factor past");

}  // namespace
