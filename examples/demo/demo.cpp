// posenc demo: values computed by the compiler (constexpr) next to MPFR's exact values, with the
// error of each in ulps. Every number in the "posenc" column was fixed at compile time.
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <posenc/math.hpp>

namespace pm = posenc::math;

namespace {

// A function evaluated by the compiler, and the same function as MPFR computes it.
struct row {
  const char* name;
  double arg;
  double posenc;  // constexpr result
  int (*mpfr_fn)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
};

constexpr double kExp = pm::exp(1.0);
constexpr double kExpNeg = pm::exp(-700.0);
constexpr double kLog = pm::log(10000.0);
constexpr double kLogTiny = pm::log(1e-300);
constexpr double kSin = pm::sin(1.0);
constexpr double kSinBig = pm::sin(1e22);
constexpr double kCos = pm::cos(0x1.921fb54442d18p+0);  // the double nearest pi/2
constexpr double kCosPos = pm::cos(4096.0);

// ulp distance of a double from the exact value x (high precision).
double ulp_error(double got, mpfr_srcptr x) {
  mpfr_t d, u;
  mpfr_inits2(256, d, u, static_cast<mpfr_ptr>(nullptr));
  mpfr_sub_d(d, x, got, MPFR_RNDN);
  mpfr_abs(d, d, MPFR_RNDN);
  const double rounded = mpfr_get_d(x, MPFR_RNDN);
  const int e = std::ilogb(rounded);
  mpfr_set_ui_2exp(u, 1, e - 52, MPFR_RNDN);
  mpfr_div(d, d, u, MPFR_RNDN);
  const double r = mpfr_get_d(d, MPFR_RNDN);
  mpfr_clears(d, u, static_cast<mpfr_ptr>(nullptr));
  return r;
}

// ulp distance of a float from the exact value x.
double ulp_error_f(float got, mpfr_srcptr x) {
  mpfr_t d, u;
  mpfr_inits2(256, d, u, static_cast<mpfr_ptr>(nullptr));
  mpfr_sub_d(d, x, static_cast<double>(got), MPFR_RNDN);
  mpfr_abs(d, d, MPFR_RNDN);
  const float rounded = mpfr_get_flt(x, MPFR_RNDN);
  const int e = std::ilogb(rounded);
  mpfr_set_ui_2exp(u, 1, e - 23, MPFR_RNDN);
  mpfr_div(d, d, u, MPFR_RNDN);
  const double r = mpfr_get_d(d, MPFR_RNDN);
  mpfr_clears(d, u, static_cast<mpfr_ptr>(nullptr));
  return r;
}

// The RoPE table entries of head_dim 128, base 10000, for a few (pair, position) cells.
constexpr int kHeadDim = 128;
constexpr double kBase = 10000.0;
struct cell {
  int pair;
  std::uint32_t pos;
};
constexpr cell kCells[] = {{0, 1}, {1, 4095}, {16, 100000}, {32, 1000000}, {63, 16777215}};
constexpr auto angle_row(int pair, std::uint32_t pos) {
  return pm::sincos_of_product<float>(pos, pm::pow_ratio(kBase, -2 * pair, kHeadDim));
}
constexpr pm::sincos_result<float> kTable[] = {
    angle_row(kCells[0].pair, kCells[0].pos), angle_row(kCells[1].pair, kCells[1].pos),
    angle_row(kCells[2].pair, kCells[2].pos), angle_row(kCells[3].pair, kCells[3].pos),
    angle_row(kCells[4].pair, kCells[4].pos)};

}  // namespace

int main() {
  std::printf("posenc demo: constexpr results vs MPFR (256-bit), error in ulps of the result type\n\n");
  const row rows[] = {
      {"exp", 1.0, kExp, mpfr_exp},     {"exp", -700.0, kExpNeg, mpfr_exp},
      {"log", 10000.0, kLog, mpfr_log}, {"log", 1e-300, kLogTiny, mpfr_log},
      {"sin", 1.0, kSin, mpfr_sin},     {"sin", 1e22, kSinBig, mpfr_sin},
      {"cos", 0x1.921fb54442d18p+0, kCos, mpfr_cos}, {"cos", 4096.0, kCosPos, mpfr_cos},
  };
  std::printf("%-5s %-24s %-24s %-24s %s\n", "fn", "x", "posenc (constexpr)", "MPFR", "ulps");
  double worst = 0.0;
  mpfr_t x, y;
  mpfr_inits2(256, x, y, static_cast<mpfr_ptr>(nullptr));
  for (const row& r : rows) {
    mpfr_set_d(x, r.arg, MPFR_RNDN);
    r.mpfr_fn(y, x, MPFR_RNDN);
    const double err = ulp_error(r.posenc, y);
    worst = err > worst ? err : worst;
    std::printf("%-5s %-24.17g %-24.17g %-24.17g %.3f\n", r.name, r.arg, r.posenc,
                mpfr_get_d(y, MPFR_RNDN), err);
  }

  std::printf("\nRoPE angle path, head_dim %d, base %.0f: cos/sin(p * theta_i), float, rounded once\n",
              kHeadDim, kBase);
  std::printf("%-5s %-9s %-16s %-16s %-8s %-16s %-16s %s\n", "pair", "p", "cos (constexpr)", "cos (MPFR)",
              "ulps", "sin (constexpr)", "sin (MPFR)", "ulps");
  double worst_f = 0.0;
  mpfr_t t, c, s;
  mpfr_inits2(256, t, c, s, static_cast<mpfr_ptr>(nullptr));
  for (std::size_t k = 0; k < std::size(kCells); ++k) {
    // theta_i = base^(-2i/d) exactly enough: the exponent is a rational, evaluated at 256 bits.
    mpfr_set_si(t, -2 * kCells[k].pair, MPFR_RNDN);
    mpfr_div_si(t, t, kHeadDim, MPFR_RNDN);
    mpfr_set_d(x, kBase, MPFR_RNDN);
    mpfr_pow(t, x, t, MPFR_RNDN);
    mpfr_mul_ui(t, t, kCells[k].pos, MPFR_RNDN);
    mpfr_cos(c, t, MPFR_RNDN);
    mpfr_sin(s, t, MPFR_RNDN);
    const double ec = ulp_error_f(kTable[k].cos, c);
    const double es = ulp_error_f(kTable[k].sin, s);
    worst_f = ec > worst_f ? ec : worst_f;
    worst_f = es > worst_f ? es : worst_f;
    std::printf("%-5d %-9u %-16.9g %-16.9g %-8.3f %-16.9g %-16.9g %.3f\n", kCells[k].pair,
                kCells[k].pos, static_cast<double>(kTable[k].cos), mpfr_get_d(c, MPFR_RNDN), ec,
                static_cast<double>(kTable[k].sin), mpfr_get_d(s, MPFR_RNDN), es);
  }
  mpfr_clears(x, y, t, c, s, static_cast<mpfr_ptr>(nullptr));
  mpfr_free_cache();

  std::printf("\nworst: %.3f ulp (double functions, bound 1), %.3f ulp (float angle path, correctly "
              "rounded means <= 0.5)\n",
              worst, worst_f);
  return (worst <= 1.0 && worst_f <= 0.5) ? EXIT_SUCCESS : EXIT_FAILURE;
}
