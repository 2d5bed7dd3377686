#include "support/gen.hpp"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>

namespace posenc_test {

std::uint64_t mpfr_scale() {
  static const std::uint64_t scale = [] {
    const char* s = std::getenv("POSENC_MPFR_SCALE");
    if (s == nullptr || *s == '\0') return std::uint64_t{1};
    const long long v = std::strtoll(s, nullptr, 10);
    return v >= 1 ? static_cast<std::uint64_t>(v) : std::uint64_t{1};
  }();
  return scale;
}

std::size_t batch_size() {
  return static_cast<std::size_t>(1000 * mpfr_scale());
}

rc::Gen<std::int64_t> int_in(std::int64_t lo, std::int64_t hi) {
  // inRange is half-open; [lo, hi] with hi == INT64_MAX is never needed here.
  return rc::gen::resize(rc::kNominalSize, rc::gen::inRange<std::int64_t>(lo, hi + 1));
}

rc::Gen<std::uint64_t> uint_in(std::uint64_t lo, std::uint64_t hi) {
  return rc::gen::resize(rc::kNominalSize, rc::gen::inRange<std::uint64_t>(lo, hi + 1));
}

rc::Gen<double> uniform(double a, double b) {
  return rc::gen::map(uint_in(0, (std::uint64_t{1} << 53)), [a, b](std::uint64_t k) {
    const double u = std::ldexp(static_cast<double>(k), -53);  // [0, 1], exact
    const double x = a + (b - a) * u;
    return x < a ? a : (x > b ? b : x);
  });
}

namespace {

// |x| = m 2^e in F's binary format (double or float), e uniform in [emin, emax], m a uniform
// significand in [1, 2) (its fraction bits uniform); exponents below the normal range give
// subnormals with the same leading-bit position. sign: 0 positive, 1 negative, else random.
template <class F>
rc::Gen<F> log_uniform_of(int emin, int emax, int sign) {
  using U = std::conditional_t<sizeof(F) == 8, std::uint64_t, std::uint32_t>;
  constexpr int fraction_bits = std::numeric_limits<F>::digits - 1;         // 52, 23
  constexpr int min_normal_exp = std::numeric_limits<F>::min_exponent - 1;  // -1022, -126
  return rc::gen::exec([=] {
    const auto e = static_cast<int>(*int_in(emin, emax));
    const auto m = static_cast<U>(*uint_in(0, (std::uint64_t{1} << fraction_bits) - 1));
    U bits;
    if (e >= min_normal_exp) {
      bits = (static_cast<U>(e + 1 - min_normal_exp) << fraction_bits) | m;
    } else {
      // Leading-bit position, 0 .. fraction_bits - 1.
      const int p = e - min_normal_exp + fraction_bits < 0 ? 0 : e - min_normal_exp + fraction_bits;
      bits = (U{1} << p) | (m & ((U{1} << p) - 1));
    }
    const bool neg = sign == 1 || (sign != 0 && *uint_in(0, 1) == 1);
    if (neg) bits |= U{1} << (8 * sizeof(F) - 1);
    return std::bit_cast<F>(bits);
  });
}

}  // namespace

rc::Gen<double> log_uniform(int emin, int emax, int sign) {
  return log_uniform_of<double>(emin, emax, sign);
}

rc::Gen<double> subnormal() {
  return rc::gen::map(uint_in(1, (std::uint64_t{1} << 52) - 1),
                      [](std::uint64_t bits) { return std::bit_cast<double>(bits); });
}

namespace {

double step_ulps(double x, std::int64_t d) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (; d > 0; --d) x = std::nextafter(x, kInf);
  for (; d < 0; ++d) x = std::nextafter(x, -kInf);
  return x;
}

float step_ulps_f(float x, std::int64_t d) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (; d > 0; --d) x = std::nextafter(x, kInf);
  for (; d < 0; ++d) x = std::nextafter(x, -kInf);
  return x;
}

// j * pi / 2 for an integer-valued double j, correctly rounded to double and to float.
void set_half_pi_multiple(Mpfr& out, double j) {
  const mpfr_prec_t prec = kPrec + (std::ilogb(j) > 0 ? std::ilogb(j) : 0) + 64;
  Mpfr pi(prec);
  mpfr_const_pi(pi, MPFR_RNDN);
  mpfr_set_prec(out, prec);
  mpfr_mul_d(out, pi, j, MPFR_RNDN);
  mpfr_div_2ui(out, out, 1, MPFR_RNDN);
}

// Integer-valued double in [2^(b-1), 2^b), b uniform in [1, max_log2_j].
rc::Gen<double> log_uniform_integer(int max_log2_j) {
  return rc::gen::exec([=] {
    const auto b = static_cast<int>(*int_in(1, max_log2_j));
    const int bits = b < 53 ? b : 53;
    const std::uint64_t top = std::uint64_t{1} << (bits - 1);
    const std::uint64_t m = *uint_in(top, 2 * top - 1);
    return std::ldexp(static_cast<double>(m), b - bits);
  });
}

}  // namespace

rc::Gen<double> near_one() {
  return rc::gen::map(log_uniform(-52, -1, 2), [](double d) { return 1.0 + d; });
}

rc::Gen<float> near_one_f() {
  return rc::gen::map(log_uniform_f(-23, -1, 2), [](float d) { return 1.0f + d; });
}

rc::Gen<double> around(double x, int k) {
  return rc::gen::map(int_in(-k, k), [x](std::int64_t d) { return step_ulps(x, d); });
}

rc::Gen<double> around(rc::Gen<double> g, int k) {
  return rc::gen::exec([=] { return step_ulps(*g, *int_in(-k, k)); });
}

// The F (double or float) nearest to j pi/2, j log-uniform in [1, 2^max_log2_j], random sign, then
// moved by up to k ulps of F.
template <class F>
rc::Gen<F> near_half_pi_multiple_of(int max_log2_j, int k) {
  return rc::gen::exec([=] {
    const double j = *log_uniform_integer(max_log2_j);
    Mpfr x;
    set_half_pi_multiple(x, j);
    F nearest;
    if constexpr (std::is_same_v<F, float>) {
      nearest = round_float(x);
    } else {
      nearest = round_double(x);
    }
    const F signed_x = *uint_in(0, 1) == 1 ? -nearest : nearest;
    if constexpr (std::is_same_v<F, float>) {
      return step_ulps_f(signed_x, *int_in(-k, k));
    } else {
      return step_ulps(signed_x, *int_in(-k, k));
    }
  });
}

rc::Gen<double> near_half_pi_multiple(int max_log2_j, int k) {
  return near_half_pi_multiple_of<double>(max_log2_j, k);
}

rc::Gen<float> uniform_f(float a, float b) {
  return rc::gen::map(uint_in(0, (std::uint64_t{1} << 24)), [a, b](std::uint64_t k) {
    const double u = std::ldexp(static_cast<double>(k), -24);
    const auto x = static_cast<float>(static_cast<double>(a) + (static_cast<double>(b) - a) * u);
    return x < a ? a : (x > b ? b : x);
  });
}

rc::Gen<float> log_uniform_f(int emin, int emax, int sign) {
  return log_uniform_of<float>(emin, emax, sign);
}

rc::Gen<float> near_half_pi_multiple_f(int max_log2_j, int k) {
  return near_half_pi_multiple_of<float>(max_log2_j, k);
}

rc::Gen<double> dd_lo(double hi) {
  constexpr std::int64_t kMax = (std::int64_t{1} << 53) - 1;
  return rc::gen::map(int_in(-kMax, kMax), [hi](std::int64_t r) {
    if (hi == 0.0 || !std::isfinite(hi)) return 0.0;
    return std::ldexp(static_cast<double>(r), std::ilogb(hi) - 106);
  });
}

rc::Gen<DdArg> dd_arg(rc::Gen<double> g) {
  return rc::gen::exec([=] {
    const double hi = *g;
    return DdArg{hi, *dd_lo(hi)};
  });
}

}  // namespace posenc_test
