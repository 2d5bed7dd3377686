// The laws of analysis/laws.hpp run on one configuration at run time (or in constant evaluation
// for small samples), each reduced to its worst case over a deterministic sample, next to the
// limit it must stay within. No heap: sample vectors are computed entry by entry from a counter
// hash (SplitMix64, Steele, Lea and Flood 2014, "Fast splittable pseudorandom number generators";
// the constants of java.util.SplittableRandom), so q, k and x of any head_dim cost nothing to
// hold.
//
//   law                         worst over the sample                           pass when
//   orthogonality               max |R_m^T R_m - I|                             worst <= limit
//   norm_preservation           | ||R_m x|| - ||x|| |                           worst <= limit
//   relative_dependence         |<R_m q, R_n k> - <R_{m+s} q, R_{n+s} k>|        worst <= limit
//   relative_dependence_blocks  max |R_m^T R_n - R_{n-m}|                       worst <= limit
//   decay_below_origin          max_{1 <= r <= decay_distance} f(r) - f(0)      worst < limit
//   dyadic_means_decreasing     max_{k < dyadic_windows} M_{k+1} - M_k          worst < limit
//
// The limits are the error bounds of laws.hpp for entries in double (rope_rotation<double>):
// orthogonality_tolerance, norm_tolerance, relative_tolerance, relative_blocks_tolerance, and
// -decay_tolerance(n) for the decay laws (which say "negative beyond the evaluation error"). The
// norm-dependent limits differ per sample; the sample reported is the one with the largest
// worst / limit, i.e. the one that decides pass or fail.
//
// What is true of the decay bound f (docs/formulas.md §8): f(r) < f(0) for all r >= 1 when
// the pairs have at least two distinct frequencies (false for n = 1 and equal frequencies); the
// dyadic means M_k = mean of f over [2^k, 2^(k+1)) decrease only up to a configuration-dependent
// distance (for d = 128, base 10^4: up to r < 2^14, then they level off near 4.7), so the distance
// checked is an input: dyadic_windows = K checks M_0 > M_1 > ... > M_K, i.e. r < 2^(K+1).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <posenc/analysis/decay.hpp>
#include <posenc/analysis/laws.hpp>
#include <posenc/math/detail/fp_bits.hpp>
#include <posenc/spec/rope.hpp>

namespace posenc::analysis {

enum class law : std::uint8_t {
  orthogonality,
  norm_preservation,
  relative_dependence,
  relative_dependence_blocks,
  decay_below_origin,
  dyadic_means_decreasing,
};
inline constexpr std::size_t law_count = 6;

constexpr std::string_view law_name(law l) {
  switch (l) {
    case law::orthogonality:
      return "orthogonality";
    case law::norm_preservation:
      return "norm_preservation";
    case law::relative_dependence:
      return "relative_dependence";
    case law::relative_dependence_blocks:
      return "relative_dependence_blocks";
    case law::decay_below_origin:
      return "decay_below_origin";
    case law::dyadic_means_decreasing:
      return "dyadic_means_decreasing";
  }
  return "unknown";
}

struct law_result {
  law which = law::orthogonality;
  double worst = 0.0;  // the deviation of the deciding sample (see the table above)
  double limit = 0.0;  // what it must stay within
  bool pass = false;
  std::uint64_t samples = 0;  // positions or (m, n, s) triples tried; distances for decay
};

struct check_options {
  std::uint64_t seq_len = 0;   // as inv_freq_dd's (dynamic, longrope)
  std::uint32_t samples = 64;  // sample positions (or triples) per rotation law
  std::uint64_t seed = 0x706f73656e63ull;
  // Positions m, n and shifts s are drawn below 2^31, so m + s, n + s < 2^32 (laws.hpp's range).
  std::uint64_t decay_distance = 65536;  // decay_below_origin: 1 <= r <= this
  unsigned dyadic_windows = 11;          // dyadic_means_decreasing: k = 0..this (r < 2^(K+1))
};

struct check_report {
  std::array<law_result, law_count> laws{};
  constexpr bool all_pass() const {
    return std::all_of(laws.begin(), laws.end(), [](const law_result& r) { return r.pass; });
  }
};

namespace detail {

// SplitMix64's output function of a counter.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A vector of `n` entries uniform in [-1, 1), entry j a function of (seed, j) only: the top 53
// bits of a hash scaled exactly into [0, 2) then shifted by 1 (exact).
struct sample_vector {
  std::uint64_t seed = 0;
  std::size_t n = 0;
  constexpr std::size_t size() const { return n; }
  constexpr double operator[](std::size_t j) const {
    const std::uint64_t h = splitmix64(seed ^ splitmix64(j));
    return static_cast<double>(h >> 11) * 0x1p-52 - 1.0;
  }
};

// (m, n, s) of sample t: the first few at the edges of the range, the rest drawn below 2^31.
struct position_triple {
  std::uint64_t m = 0;
  std::uint64_t n = 0;
  std::uint64_t s = 0;
};
constexpr position_triple sample_positions(std::uint64_t seed, std::uint64_t t) {
  constexpr std::uint64_t top = (std::uint64_t{1} << 31) - 1;
  constexpr std::array<position_triple, 4> edges{{
      {0, 0, 0},
      {0, 1, 1},
      {top, 0, top},
      {std::uint64_t{1} << 24, (std::uint64_t{1} << 24) + 1, top},
  }};
  if (t < edges.size()) return edges[static_cast<std::size_t>(t)];  // size_t: 32 bits on arm
  const std::uint64_t h = splitmix64(seed + 3 * t);
  return {h & top, splitmix64(seed + 3 * t + 1) & top, splitmix64(seed + 3 * t + 2) & top};
}

// Keeps the sample with the largest worst / limit (ties: the first).
struct worst_tracker {
  double worst = 0.0;
  double limit = 0.0;
  bool any = false;
  bool pass = true;
  constexpr void add(double dev, double lim) {
    // dev / lim > worst / limit without dividing (limits are positive); a NaN wins and stays.
    using math::detail::is_nan;
    const bool nan_kept = any && is_nan(worst);
    if (!nan_kept && (!any || is_nan(dev) || dev * limit > worst * lim)) {
      worst = dev;
      limit = lim;
    }
    any = true;
    if (!(dev <= lim)) pass = false;
  }
};

}  // namespace detail

// Runs every law on c (validate(c) == ok). Cost: about 6 * samples * R/2 sin/cos of products for
// the rotation laws, and (decay_distance + 2^(dyadic_windows + 1)) * R/2 complex steps for decay.
constexpr check_report check_laws(const rope_config& c, const check_options& o = {}) {
  const rope_thetas thetas{c, o.seq_len};
  const rope_rotation<double> rot{c, thetas};
  const std::size_t d = c.head_dim;
  check_report rep;

  detail::worst_tracker orth;
  detail::worst_tracker norm;
  detail::worst_tracker rel;
  detail::worst_tracker blocks;
  for (std::uint64_t t = 0; t < o.samples; ++t) {
    const detail::position_triple p = detail::sample_positions(o.seed, t);
    const detail::sample_vector x{detail::splitmix64(o.seed ^ (4 * t + 1)), d};
    const detail::sample_vector q{detail::splitmix64(o.seed ^ (4 * t + 2)), d};
    const detail::sample_vector k{detail::splitmix64(o.seed ^ (4 * t + 3)), d};
    orth.add(orthogonality(rot, p.m), orthogonality_tolerance<double>());
    norm.add(norm_preservation(rot, p.m, x), norm_tolerance<double>(d, vector_norm(x)));
    rel.add(relative_dependence(rot, p.m, p.n, p.s, q, k),
            relative_tolerance<double>(d, vector_norm(q), vector_norm(k)));
    blocks.add(relative_dependence_blocks(rot, p.m, p.n), relative_blocks_tolerance<double>());
  }
  const auto put = [&](law l, const detail::worst_tracker& w) {
    rep.laws[static_cast<std::size_t>(l)] = {l, w.worst, w.limit, w.pass && w.any, o.samples};
  };
  put(law::orthogonality, orth);
  put(law::norm_preservation, norm);
  put(law::relative_dependence, rel);
  put(law::relative_dependence_blocks, blocks);

  const std::size_t n = thetas.size();
  const double decay_limit = -decay_tolerance(n);
  const double below = decay_below_origin(thetas, o.decay_distance);
  rep.laws[static_cast<std::size_t>(law::decay_below_origin)] = {
      law::decay_below_origin, below, decay_limit, below < decay_limit, o.decay_distance};
  const double means = dyadic_means_decreasing(thetas, o.dyadic_windows);
  rep.laws[static_cast<std::size_t>(law::dyadic_means_decreasing)] = {
      law::dyadic_means_decreasing, means, decay_limit, means < decay_limit,
      (std::uint64_t{2} << o.dyadic_windows) - 1};
  return rep;
}

}  // namespace posenc::analysis
