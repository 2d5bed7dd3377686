// For the compile-time == run-time checks: deterministic argument lists for compile-time
// evaluation (a constexpr pseudo-random sequence mapped into a range, so that ~50 arguments spread
// over a domain without being typed in one by one), and rt(), the run-time side of a comparison.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace posenc_test {

// Reads x through a volatile object: the value is unknown to the optimizer, so what is computed
// from it is computed at run time.
template <class T>
requires std::is_arithmetic_v<T> T rt(T x) {
  volatile T v = x;
  return v;
}

// SplitMix64 step (Steele, Lea, Flood 2014).
constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// N values uniform in [a, b] (53-bit grid), from `seed`; the first `fixed.size()` values are taken
// from `fixed` instead (edge cases).
template <std::size_t N, std::size_t F>
constexpr std::array<double, N> ct_uniform(double a, double b, std::uint64_t seed,
                                           const std::array<double, F>& fixed) {
  static_assert(F <= N);
  std::array<double, N> out{};
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < N; ++i) {
    if (i < F) {
      out[i] = fixed[i];
      continue;
    }
    const double u = static_cast<double>(splitmix64(state) >> 11) * 0x1p-53;
    out[i] = a + (b - a) * u;
  }
  return out;
}

// N values |x| = m 2^e, e uniform in [emin, emax] (>= -1022), m a uniform 53-bit significand;
// sign: 0 positive, 1 negative, else random. The first values come from `fixed`.
template <std::size_t N, std::size_t F>
constexpr std::array<double, N> ct_log_uniform(int emin, int emax, int sign, std::uint64_t seed,
                                               const std::array<double, F>& fixed) {
  static_assert(F <= N);
  std::array<double, N> out{};
  std::uint64_t state = seed;
  const auto span = static_cast<std::uint64_t>(emax - emin + 1);
  for (std::size_t i = 0; i < N; ++i) {
    if (i < F) {
      out[i] = fixed[i];
      continue;
    }
    const std::uint64_t r = splitmix64(state);
    const int e = emin + static_cast<int>(r % span);
    const std::uint64_t m = splitmix64(state) >> 12;
    std::uint64_t bits = (static_cast<std::uint64_t>(e + 1023) << 52) | m;
    const bool neg = sign == 1 || (sign != 0 && (r >> 63) != 0);
    if (neg) bits |= std::uint64_t{1} << 63;
    out[i] = std::bit_cast<double>(bits);
  }
  return out;
}

// Applies f to every element, in a constant expression or at run time alike.
template <class T, std::size_t N, class F>
constexpr auto ct_map(const std::array<T, N>& args, F f) {
  std::array<decltype(f(args[0])), N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = f(args[i]);
  return out;
}

}  // namespace posenc_test
