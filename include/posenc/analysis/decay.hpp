// The RoPE paper's long-term decay bound (Su et al. 2021, "RoFormer: Enhanced Transformer with
// Rotary Position Embedding", §3.4.3). With h_i = q_[2i:2i+1] k*_[2i:2i+1] and r = m - n, Abel
// summation gives |sum_i h_i e^{i r theta_i}| <= (max_i |h_{i+1} - h_i|) sum_{j=1}^{n} |S_j|, and
// the paper plots
//
//   f(r) = (1/n) sum_{j=1}^{n} |S_j|,   S_j = sum_{k=0}^{j-1} e^{i r theta_k},   n = R/2 pairs
//
// (n = d/2 in the paper, whose theta_k = 10000^(-2k/d)). f(0) = (n + 1)/2 exactly. What is and is
// not true about f is in docs/formulas.md §8 and docs/laws.md; in short: f(r) < f(0) for every
// r >= 1 when n >= 2, but f is NOT monotone, its windowed maxima do not decay, and it does not tend
// to 0. The statements themselves are laws in analysis/laws.hpp.
//
// Two evaluations, both constexpr and free of <cmath>:
// - decay_bound_dd / decay_bound: one r at a time, every e^{i r theta_k} from the double-double
//   angle path (math::sincos_of_product_dd), sums in double-double: error below
//   decay_bound_dd_error(n, max angle) (about 2e-27 for n = 64 and small r), the reference.
// - for_each_decay_bound: consecutive r in double by angle addition (256 at a time, each block
//   restarted from the double-double path), far cheaper: error below decay_error(n)
//   (1.6e-11 for n = 64). The laws use this one.
//
// thetas is any sequence of double-double frequencies (size() and operator[] giving math::dd, e.g.
// std::array<math::dd, N>), or a rope_config through rope_thetas. Distances r < 2^32, r theta_k <
// 2^40.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>

#include <posenc/frequencies/rope.hpp>
#include <posenc/math/angle.hpp>
#include <posenc/math/detail/sqrt.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/math/trig.hpp>
#include <posenc/spec/rope.hpp>

namespace posenc::analysis {

// A sequence of frequencies theta_k as double-doubles.
template <class Thetas>
concept theta_sequence = requires(const Thetas& t, std::size_t i) {
  { t.size() } -> std::convertible_to<std::size_t>;
  { t[i] } -> std::convertible_to<math::dd>;
};

// The R/2 frequencies of a RoPE configuration (scaling included), computed on demand with
// inv_freq_dd. config must satisfy validate(config) == rope_error::ok.
struct rope_thetas {
  rope_config config;
  std::uint64_t seq_len = 0;  // for dynamic and longrope scaling (see frequencies/rope.hpp)
  constexpr std::size_t size() const { return config.rotary_dim / 2; }
  constexpr math::dd operator[](std::size_t i) const {
    return inv_freq_dd(config, static_cast<std::uint32_t>(i), seq_len);
  }
};

// f(r) in double-double. Error below decay_bound_dd_error(thetas.size(), r max_k theta_k).
template <theta_sequence Thetas>
constexpr math::dd decay_bound_dd(const Thetas& thetas, std::uint64_t r) {
  const std::size_t n = thetas.size();
  math::dd re{0.0, 0.0};
  math::dd im{0.0, 0.0};
  math::dd acc{0.0, 0.0};
  for (std::size_t k = 0; k < n; ++k) {
    const math::sincos_result<math::dd> v = math::sincos_of_product_dd(r, thetas[k]);
    re = re + v.cos;
    im = im + v.sin;
    acc = acc + math::detail::sqrt(re * re + im * im);
  }
  return acc / static_cast<double>(n);
}

// f(r) rounded to double.
template <theta_sequence Thetas>
constexpr double decay_bound(const Thetas& thetas, std::uint64_t r) {
  return math::to_double(decay_bound_dd(thetas, r));
}
constexpr double decay_bound(const rope_config& c, std::uint64_t r) {
  return decay_bound(rope_thetas{c}, r);
}

// |decay_bound_dd - f| <= decay_bound_dd_error(n, a), a = max_k r theta_k (the largest angle).
// Each e^{i r theta_k} is within 2^-95 + a 2^-103 of exact: the angle r theta_k is formed as
// two_prod(r, theta.hi) + r theta.lo, off by at most ~a 2^-105 (the rounding of r theta.lo and of
// the sum), and sincos(dd) is within ~2^-96 absolute even for huge arguments (docs/math.md). So S_j
// is within j (2^-95 + a 2^-103) plus j^2 2^-104 of summation error, |S_j| adds 2^-103 relative,
// and the mean of n values <= (n + 1)/2 adds (n + 1) 2^-104:
// |error| < (n + 1) (2^-95 + a 2^-103) + (n + 1)^2 2^-103 (about 2e-27 for n = 64, small r).
constexpr double decay_bound_dd_error(std::size_t n, double max_angle) {
  const double m = static_cast<double>(n) + 1.0;
  return m * (0x1p-95 + max_angle * 0x1p-103) + m * m * 0x1p-103;
}

// Calls visit(r, f(r)) for r = r_first, ..., r_first + count - 1 in order, f(r) in double.
//
// Method: for each block of 256 consecutive r and each k, e^{i r theta_k} starts from the
// double-double path at the block's first r (rounded to doubles) and advances by complex
// multiplication with e^{i theta_k} (rounded likewise). Each product adds at most 2 sqrt(2) u
// (u = 2^-53) plus the error carried, and each rounded start adds sqrt(2) u, so after at most 255
// steps every term is within 256 * 4.25 u < 2^-42.9 of exact. Error bound: decay_error(n).
template <theta_sequence Thetas, class Visit>
constexpr void for_each_decay_bound(const Thetas& thetas, std::uint64_t r_first,
                                    std::uint64_t count, Visit&& visit) {
  constexpr std::size_t B = 256;
  using math::detail::dot2;
  using math::detail::product;
  const std::size_t n = thetas.size();
  const double nd = static_cast<double>(n);
  for (std::uint64_t r0 = r_first; r0 - r_first < count; r0 += B) {
    const std::uint64_t left = count - (r0 - r_first);
    const std::size_t m = left < B ? static_cast<std::size_t>(left) : B;
    double re[B]{};
    double im[B]{};
    double acc[B]{};
    for (std::size_t k = 0; k < n; ++k) {
      const math::dd theta = thetas[k];
      const math::sincos_result<math::dd> step = math::sincos_of_product_dd(1, theta);
      const math::sincos_result<math::dd> start =
          r0 == 1 ? step : math::sincos_of_product_dd(r0, theta);
      double c = start.cos.hi;
      double s = start.sin.hi;
      const double sc = step.cos.hi;
      const double ss = step.sin.hi;
      for (std::size_t t = 0; t < m; ++t) {
        re[t] += c;
        im[t] += s;
        acc[t] += math::detail::sqrt(dot2(re[t], im[t], re[t], im[t]));
        const double c_next = product(c, sc) - product(s, ss);
        s = product(s, sc) + product(c, ss);
        c = c_next;
      }
    }
    for (std::size_t t = 0; t < m; ++t) visit(r0 + t, acc[t] / nd);
  }
}

// |for_each_decay_bound's f(r) - f(r)| <= decay_error(n). Each term is within 2^-42.9 (above), so
// S_j within j 2^-42.9 plus the summation error sqrt(2) j^2 u; |S_j| adds 2.5 u |S_j| <= 2.5 j u;
// the sum of the n values |S_j| <= j adds (n - 1) u sum_j j; the division by n adds u f. Dividing
// by n: (n+1)/2 2^-42.9 + (sqrt(2)/6 (n+1)(2n+1) + 1.25 (n+1) + (n^2 - 1)/2 + (n+1)/2) u
// < (n + 1) 2^-42 + (n + 1)^2 2^-52.
constexpr double decay_error(std::size_t n) {
  const double m = static_cast<double>(n) + 1.0;
  return m * 0x1p-42 + m * m * 0x1p-52;
}

// f(r) for r in [0, N) computed once (for_each_decay_bound), e.g. as a constexpr variable, so that
// several decay laws can ask about the same values without recomputing them (constant evaluation
// pays for every call). pairs is n.
template <std::size_t N>
struct decay_samples {
  std::size_t pairs = 0;
  std::array<double, N> f{};
};

template <std::size_t N, theta_sequence Thetas>
constexpr decay_samples<N> sample_decay(const Thetas& thetas) {
  decay_samples<N> out{thetas.size(), {}};
  for_each_decay_bound(thetas, 0, N, [&](std::uint64_t r, double f) { out.f[r] = f; });
  return out;
}

namespace detail {
template <class T>
inline constexpr bool is_decay_samples = false;
template <std::size_t N>
inline constexpr bool is_decay_samples<decay_samples<N>> = true;
}  // namespace detail

// What the decay laws accept: frequencies (f is computed on the way) or samples of f.
template <class S>
concept decay_source = theta_sequence<S> || detail::is_decay_samples<S>;

// n of a decay source.
template <decay_source S>
constexpr std::size_t pairs_of(const S& s) {
  if constexpr (theta_sequence<S>) {
    return s.size();
  } else {
    return s.pairs;
  }
}

// visit(r, f(r)) for r in [r_first, r_first + count): computed, or read from the samples (NaN past
// their end, so that a law asked about it fails).
template <decay_source S, class Visit>
constexpr void visit_decay(const S& s, std::uint64_t r_first, std::uint64_t count, Visit&& visit) {
  if constexpr (theta_sequence<S>) {
    for_each_decay_bound(s, r_first, count, visit);
  } else {
    for (std::uint64_t r = r_first; r - r_first < count; ++r)
      visit(r, r < s.f.size() ? s.f[r] : std::numeric_limits<double>::quiet_NaN());
  }
}

// f(0) = (n + 1)/2 exactly (every term is 1, so |S_j| = j).
constexpr double decay_at_origin(std::size_t n) {
  return (static_cast<double>(n) + 1.0) / 2.0;
}

}  // namespace posenc::analysis
