// Compile-time proofs for the math layer: building this translation unit is the proof.
// Expected constants are MPFR's correctly rounded values (300-bit evaluation, round to nearest),
// quoted in hexadecimal so that no decimal conversion is involved.
#include <array>
#include <cstddef>
#include <cstdint>

#include <posenc/math.hpp>

namespace pm = posenc::math;

namespace {

// |a - b| in units of ulp(b) is at most n (b normal, non-zero).
constexpr bool within_ulps(double a, double b, double n) {
  const double ulp = pm::detail::pow2(pm::detail::ilogb(b) - 52);
  const double d = a > b ? a - b : b - a;
  return d <= n * ulp;
}

// ---- exact values of the elementary functions -------------------------------------------------
static_assert(pm::cos(0.0) == 1.0, "cos 0 = 1");
static_assert(pm::sin(0.0) == 0.0, "sin 0 = 0");
static_assert(pm::exp(0.0) == 1.0, "exp 0 = 1");
static_assert(pm::log(1.0) == 0.0, "log 1 = 0");
static_assert(pm::pow(2.0, 10.0) == 1024.0, "pow(2, 10) = 1024");
static_assert(pm::pow(10.0, 4.0) == 10000.0, "pow(10, 4) = 10000");
static_assert(pm::pow(7.5, 0.0) == 1.0 && pm::pow(7.5, 1.0) == 7.5, "pow(x, 0) = 1, pow(x, 1) = x");
static_assert(pm::pow(-2.0, 3.0) == -8.0, "odd integer powers keep the sign");
static_assert(pm::log(pm::detail::ldexp(1.0, -1074)) == -0x1.74385446d71c3p+9, "log of the least subnormal");
static_assert(pm::cos(0.0f) == 1.0f && pm::sin(0.0f) == 0.0f && pm::exp(0.0f) == 1.0f,
              "float overloads: exact values");

// ---- correctly rounded values (MPFR) ------------------------------------------------------------
static_assert(pm::exp(1.0) == 0x1.5bf0a8b145769p+1, "exp 1 = e, correctly rounded");
static_assert(pm::log(10.0) == 0x1.26bb1bbb55516p+1, "log 10, correctly rounded");
static_assert(pm::sin(1.0) == 0x1.aed548f090ceep-1, "sin 1, correctly rounded");
static_assert(pm::cos(1.0) == 0x1.14a280fb5068cp-1, "cos 1, correctly rounded");
static_assert(pm::sin(1e22) == -0x1.b453ab76bf397p-1, "sin 1e22: Payne-Hanek reduction");
static_assert(pm::cos(0x1.921fb54442d18p+0) == 0x1.1a62633145c07p-54,
              "cos of the double nearest pi/2: the reduction keeps every bit of the tiny result");
static_assert(pm::pow(3.0, 0.5) == 0x1.bb67ae8584caap+0, "pow(3, 1/2) = sqrt 3, correctly rounded");
static_assert(pm::exp(1.0f) == 0x1.5bf0a8p+1f && pm::log(10.0f) == 0x1.26bb1cp+1f,
              "float exp and log, correctly rounded");

// ---- the RoPE angle path ----------------------------------------------------------------------
// theta_1 for head_dim 128, base 10000: 10000^(-2/128).
constexpr pm::dd theta_1 = pm::pow_ratio(10000.0, -2, 128);
static_assert(pm::to_double(theta_1) == 0x1.bb5fad00ab22cp-1, "theta_1 correctly rounded");
static_assert(pm::sincos_of_product<float>(4095, theta_1).cos == -0x1.7c176p-1f &&
                  pm::sincos_of_product<float>(4095, theta_1).sin == 0x1.57098ep-1f,
              "cos/sin(4095 theta_1) correctly rounded to float");
// The slowest pair at the largest float-exact position: angle ~ 2^24 * 10000^(-63/64).
constexpr pm::dd theta_63 = pm::pow_ratio(10000.0, -63, 64);
static_assert(pm::sincos_of_product<float>(16777215, theta_63).cos == -0x1.259946p-1f &&
                  pm::sincos_of_product<float>(16777215, theta_63).sin == 0x1.a374ep-1f,
              "cos/sin(16777215 theta_63) correctly rounded to float");
static_assert(pm::sincos_of_product<float>(0, theta_1).cos == 1.0f &&
                  pm::sincos_of_product<float>(0, theta_1).sin == 0.0f,
              "position 0 is the identity rotation");

// ---- identities -------------------------------------------------------------------------------
// sin^2 + cos^2 = 1: in double-double within 2^-100 (the dd functions are accurate to ~2^-104), and
// for the rounded doubles within 2^-50 (two results each within 1 ulp <= 2^-52 relative, squared
// and added with three roundings: |err| <= 2(2^-52)(s^2 + c^2) + 3 * 2^-53 < 2^-50).
constexpr std::array<double, 8> points = {0.1, 1.0, 2.5, 100.0, 12345.678, 1e6, 0x1.8p30, 1e300};
constexpr bool pythagoras_dd() {
  for (double x : points) {
    const auto v = pm::sincos(pm::dd{x, 0.0});
    const pm::dd one = v.sin * v.sin + v.cos * v.cos - 1.0;
    if (pm::detail::fabs(one.hi) > 0x1p-100) return false;
  }
  return true;
}
static_assert(pythagoras_dd(), "sin^2 + cos^2 = 1 in double-double, within 2^-100");
constexpr bool pythagoras_double() {
  for (double x : points) {
    const auto v = pm::sincos(x);
    if (pm::detail::fabs(v.sin * v.sin + v.cos * v.cos - 1.0) > 0x1p-50) return false;
  }
  return true;
}
static_assert(pythagoras_double(), "sin^2 + cos^2 = 1 for the rounded doubles, within 2^-50");

// exp(log x) = x: log x is within 1 ulp and exp's condition number is |log x|, so the round trip
// is within 1 + |log x| 2^-52 / ulp... at most 2 ulp for |log x| < 710 in double-double terms;
// on the double-double level it is within 2^-96 relative.
constexpr bool exp_log_roundtrip() {
  constexpr std::array<double, 6> xs = {0.001, 0.5, 1.5, 10000.0, 1e100, 1e-100};
  for (double x : xs) {
    const pm::dd y = pm::exp(pm::log(pm::dd{x, 0.0}));
    const pm::dd rel = (y - x) / x;
    if (pm::detail::fabs(rel.hi) > 0x1p-96) return false;
  }
  return true;
}
static_assert(exp_log_roundtrip(), "exp(log x) = x within 2^-96 relative in double-double");

// sin(-x) = -sin x, cos(-x) = cos x: the reduction is symmetric.
static_assert(pm::sin(-2.0) == -pm::sin(2.0) && pm::cos(-2.0) == pm::cos(2.0), "parity");

// Rounding a double-double to float resolves the double-rounding case: hi exactly halfway
// between 1 and 1 + 2^-23, lo decides.
static_assert(pm::to_float(pm::dd{1.0 + 0x1p-24, 0x1p-80}) == 1.0f + 0x1p-23f, "midpoint, lo > 0");
static_assert(pm::to_float(pm::dd{1.0 + 0x1p-24, -0x1p-80}) == 1.0f, "midpoint, lo < 0");
static_assert(pm::to_float(pm::dd{1.0 + 0x1p-24, 0.0}) == 1.0f, "exact tie: to even");

// The grid builder equals the per-element path bit for bit (64 positions x 4 frequencies here; the
// tests compare larger grids at run time).
constexpr std::array<pm::dd, 4> grid_theta = {pm::pow_ratio(10000.0, 0, 8),
                                              pm::pow_ratio(10000.0, -2, 8),
                                              pm::pow_ratio(10000.0, -4, 8),
                                              pm::pow_ratio(10000.0, -6, 8)};
constexpr auto small_grid = pm::make_sincos_grid<float, 130, 4>(grid_theta);
constexpr bool grid_matches_elements() {
  for (std::size_t p = 0; p < 130; ++p) {
    for (std::size_t i = 0; i < 4; ++i) {
      const auto v = pm::sincos_of_product<float>(p, grid_theta[i]);
      if (v.cos != small_grid.cos[p * 4 + i] || v.sin != small_grid.sin[p * 4 + i]) return false;
    }
  }
  return true;
}
static_assert(grid_matches_elements(), "make_sincos_grid equals sincos_of_product entry by entry");

static_assert(within_ulps(pm::exp(-1.0), 0x1.78b56362cef38p-2, 0.5), "exp(-1) correctly rounded");

}  // namespace

// Keeps the object file non-empty.
void posenc_proofs_math() {}
