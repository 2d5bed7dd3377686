// Compile-time results == run-time results, bit for bit, for every function of posenc/math.
// For each function a constexpr std::array holds its results at ~50 fixed arguments (computed by
// the constant evaluator); the same calls are made at run time with the arguments read through
// `volatile`, so the optimizer cannot fold them, and the two are compared with std::bit_cast.
// Built twice where possible: plainly, and with -mfma (POSENC_TEST_FMA), where two_prod takes the
// hardware FMA at run time.
#include <posenc/math.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "support/check.hpp"
#include "support/ct_args.hpp"

namespace pm = posenc::math;
using namespace posenc_test;

namespace {

constexpr std::size_t N = 50;

// rt() (support/ct_args.hpp), and for the argument types of this file.
using posenc_test::rt;
pm::dd rt(pm::dd x) {
  return {rt(x.hi), rt(x.lo)};
}

struct Pair {
  double a;
  double b;
};
Pair rt(Pair x) {
  return {rt(x.a), rt(x.b)};
}

struct PairF {
  float a;
  float b;
};
PairF rt(PairF x) {
  return {rt(x.a), rt(x.b)};
}

struct Rope {
  std::uint64_t p;
  double base;
  std::int64_t num;
  std::int64_t den;
};
Rope rt(Rope x) {
  return {rt(x.p), rt(x.base), rt(x.num), rt(x.den)};
}

struct ProductArg {
  std::uint64_t p;
  pm::dd theta;
};
ProductArg rt(ProductArg x) {
  return {rt(x.p), rt(x.theta)};
}

std::string describe(double x) {
  return hex(x);
}
std::string describe(float x) {
  return hex(x);
}
std::string describe(pm::dd x) {
  return hex_dd(x.hi, x.lo);
}
std::string describe(Pair x) {
  return "(" + hex(x.a) + ", " + hex(x.b) + ")";
}
std::string describe(PairF x) {
  return "(" + hex(x.a) + ", " + hex(x.b) + ")";
}
std::string describe(Rope x) {
  return "(p=" + std::to_string(x.p) + ", base=" + hex(x.base) + ", " + std::to_string(x.num) +
         "/" + std::to_string(x.den) + ")";
}
std::string describe(ProductArg x) {
  return "(p=" + std::to_string(x.p) + ", theta=" + describe(x.theta) + ")";
}
template <class T>
std::string describe(const pm::sincos_result<T>& x) {
  return "{sin " + describe(x.sin) + ", cos " + describe(x.cos) + "}";
}
template <class T, std::size_t K>
std::string describe(const std::array<T, K>& x) {
  std::string out = "[";
  for (std::size_t i = 0; i < K; ++i) out += (i ? ", " : "") + describe(x[i]);
  return out + "]";
}

// Whether Fn(Args[I]) is a constant expression: a call that is not (say an overflow or a NaN
// produced inside the constant evaluator) makes the template argument invalid, and the
// requirement false, instead of failing the build; the test then reports it.
template <auto Fn, const auto& Args, std::size_t I>
concept constant_evaluable = requires {
  typename std::integral_constant<int, (static_cast<void>(Fn(Args[I])), 0)>;
};

// Fn at every element of Args, evaluated by the compiler; `ok[i]` says whether element i was a
// constant expression (value[i] is zero-initialised where it was not).
template <auto Fn, const auto& Args>
struct AtCompileTime {
  static constexpr std::size_t n = std::tuple_size_v<std::remove_cvref_t<decltype(Args)>>;
  using R = decltype(Fn(Args[0]));

  template <std::size_t I>
  static constexpr R value() {
    if constexpr (constant_evaluable<Fn, Args, I>) {
      constexpr R v = Fn(Args[I]);
      return v;
    } else {
      return R{};
    }
  }
  template <std::size_t... I>
  static constexpr std::array<R, n> values(std::index_sequence<I...>) {
    return {value<I>()...};
  }
  template <std::size_t... I>
  static constexpr std::array<bool, n> oks(std::index_sequence<I...>) {
    return {constant_evaluable<Fn, Args, I>...};
  }
  static constexpr std::array<R, n> value_at = values(std::make_index_sequence<n>{});
  static constexpr std::array<bool, n> ok = oks(std::make_index_sequence<n>{});
};

// Fn at every argument at run time (arguments read through volatile), compared bitwise with the
// compile-time results; an argument at which Fn is not a constant expression fails too.
template <auto Fn, const auto& Args>
void compare(const char* name) {
  using CT = AtCompileTime<Fn, Args>;
  std::size_t differ = 0;
  std::size_t not_constant = 0;
  for (std::size_t i = 0; i < CT::n; ++i) {
    if (!CT::ok[i]) {
      ++not_constant;
      std::cout << "  " << name << ": not a constant expression at argument #" << i << " = "
                << describe(Args[i]) << "\n";
      continue;
    }
    const auto got = Fn(rt(Args[i]));
    if (!same_bits(got, CT::value_at[i])) {
      ++differ;
      std::cout << "  " << name << ": compile time and run time differ at argument #" << i << " = "
                << describe(Args[i]) << ": compile time " << describe(CT::value_at[i])
                << ", run time " << describe(got) << "\n";
    }
  }
  std::cout << "[constexpr] " << name << ": " << CT::n << " args, " << differ
            << " differ between compile time and run time, " << not_constant
            << " not constant expressions\n";
  CHECK(not_constant == 0);
  CHECK(differ == 0);
}

// --- argument lists: regular arguments (finite results) -------------------------------------

constexpr auto kExpArgs = ct_uniform<N>(
    -745.0, 709.78, 1,
    std::array{0.0, -0.0, 1.0, -1.0, 0x1p-30, -0x1p-1074, 709.78, -745.0, -708.5, -745.2, 1e-300});
constexpr auto kExpArgsF = [] {
  std::array<float, N> a{};
  constexpr std::array fixed{0.0f, -0.0f, 1.0f, -1.0f, 88.7f, -87.5f, -103.0f, -104.0f, 0x1p-30f};
  const auto u = ct_uniform<N>(-104.0, 88.7, 2, std::array<double, 0>{});
  for (std::size_t i = 0; i < N; ++i) a[i] = i < fixed.size() ? fixed[i] : static_cast<float>(u[i]);
  return a;
}();
constexpr auto kLogArgs = ct_log_uniform<N>(
    -1022, 1023, 0, 3,
    std::array{1.0, 2.0, 0.5, 1.0 + 0x1p-52, 1.0 - 0x1p-53, 1.4142135623730951, 1.4142135623730954,
               0x1p-1074, 0x1.fffffffffffffp-1023, 1.7976931348623157e308, 10000.0});
constexpr auto kLogArgsF = [] {
  std::array<float, N> a{};
  constexpr std::array fixed{1.0f,      2.0f,         0.5f, 1.0f + 0x1p-23f, 1.0f - 0x1p-24f,
                             0x1p-149f, 3.4028235e38f};
  const auto u = ct_log_uniform<N>(-126, 127, 0, 4, std::array<double, 0>{});
  for (std::size_t i = 0; i < N; ++i) a[i] = i < fixed.size() ? fixed[i] : static_cast<float>(u[i]);
  return a;
}();
constexpr auto kTrigArgs = ct_log_uniform<N>(
    -30, 1023, 2, 5,
    std::array{0.0, -0.0, 1.0, -1.0, 0x1.921fb54442d18p+0, 0x1.921fb54442d18p+1, 1e22, 1e300,
               -1e300, 6381956970095103.0 * 0x1p797, 0x1p-1074, 0x1p-600, 1.7976931348623157e308,
               16777216.0, 131072.5, 0.785398163397448, 0.7853981633974484, 3.0e9});
constexpr auto kTrigArgsF = [] {
  std::array<float, N> a{};
  constexpr std::array fixed{0.0f,  -0.0f,         1.0f,      1.5707964f,  3.1415927f,
                             1e30f, 3.4028235e38f, 0x1p-149f, 16777216.0f, 0.78539819f};
  const auto u = ct_log_uniform<N>(-30, 127, 2, 6, std::array<double, 0>{});
  for (std::size_t i = 0; i < N; ++i) a[i] = i < fixed.size() ? fixed[i] : static_cast<float>(u[i]);
  return a;
}();

// Double-double arguments: hi from a list, lo = hi * 2^-60 * (odd fraction).
constexpr std::array<pm::dd, N> dd_args(const std::array<double, N>& hi) {
  std::array<pm::dd, N> a{};
  for (std::size_t i = 0; i < N; ++i) {
    const double f = static_cast<double>(2 * (i % 7) + 1) / 16.0 - 0.5;
    a[i] = pm::fast_two_sum(hi[i], hi[i] * 0x1p-60 * f);
  }
  return a;
}
constexpr auto kExpDdArgs = dd_args(ct_uniform<N>(-670.0, 709.0, 7, std::array{0.0, 1.0, -1.0}));
constexpr auto kLogDdArgs = dd_args(ct_log_uniform<N>(-1000, 1000, 0, 8, std::array{1.0, 2.0}));
constexpr auto kTrigDdArgs = dd_args(ct_uniform<N>(
    -0x1p24, 0x1p24, 9, std::array{0.0, 1.0, 0x1.921fb54442d18p+0, 1e6, -123456.789}));

constexpr auto kPowArgs = [] {
  std::array<Pair, N> a{};
  const auto b = ct_log_uniform<N>(-20, 20, 0, 10, std::array{2.0, 10.0, 1e4, 0.5, 1.0});
  const auto x = ct_uniform<N>(-30.0, 30.0, 11, std::array{10.0, 3.0, -0.03125, 1.0, 1e300});
  for (std::size_t i = 0; i < N; ++i) a[i] = {b[i], x[i]};
  a[N - 1] = {-2.0, 3.0};
  a[N - 2] = {-2.0, 2.0};
  return a;
}();
constexpr auto kPowArgsF = [] {
  std::array<PairF, N> a{};
  for (std::size_t i = 0; i < N; ++i) {
    a[i] = {static_cast<float>(kPowArgs[i].a), static_cast<float>(kPowArgs[i].b * 0.1)};
  }
  return a;
}();
constexpr auto kRopeArgs = [] {
  std::array<Rope, N> a{};
  constexpr std::array<double, 6> bases{10000.0, 500000.0, 1e6, 1e7, 2.0, 12345.678};
  std::uint64_t state = 12;
  for (std::size_t i = 0; i < N; ++i) {
    const std::int64_t R = 2 * static_cast<std::int64_t>(1 + splitmix64(state) % 256);
    const auto idx =
        static_cast<std::int64_t>(splitmix64(state) % static_cast<std::uint64_t>(R / 2));
    const std::uint64_t p = splitmix64(state) >> (40 + i % 24);  // p < 2^24, many magnitudes
    a[i] = {p, bases[i % bases.size()], -2 * idx, R};
  }
  a[0] = {0, 10000.0, 0, 128};
  a[1] = {(std::uint64_t{1} << 24) - 1, 10000.0, -2, 128};
  a[2] = {131072, 500000.0, -126, 128};
  return a;
}();
constexpr auto kProductArgs = [] {
  std::array<ProductArg, N> a{};
  for (std::size_t i = 0; i < N; ++i) {
    a[i] = {kRopeArgs[i].p * (1 + i % 200),
            pm::pow_ratio(kRopeArgs[i].base, kRopeArgs[i].num, kRopeArgs[i].den)};
  }
  return a;
}();
constexpr auto kPairs = [] {
  std::array<Pair, N> a{};
  const auto x = ct_log_uniform<N>(-200, 200, 2, 13, std::array{1.0, 0x1p-1000});
  const auto y = ct_log_uniform<N>(-200, 200, 2, 14, std::array{3.0, 0x1p+900});
  for (std::size_t i = 0; i < N; ++i) a[i] = {x[i], y[i]};
  return a;
}();

// --- argument lists: special values (overflow, underflow, infinities, NaN, poles) -------------

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr float kNaNF = std::numeric_limits<float>::quiet_NaN();

constexpr std::array kExpSpecial{709.7828, 709.79, 710.0, 1e300, kInf, -kInf, kNaN, -746.0, -1e300};
constexpr std::array kExpSpecialF{88.73f, 89.0f, 1e30f, kInfF, -kInfF, kNaNF, -104.0f, -1e30f};
constexpr std::array kLogSpecial{0.0, -0.0, -1.0, -0x1p-1074, kInf, -kInf, kNaN};
constexpr std::array kLogSpecialF{0.0f, -0.0f, -1.0f, kInfF, -kInfF, kNaNF};
constexpr std::array kPowSpecial{Pair{0.0, -1.0},   Pair{-0.0, -1.0},      Pair{0.0, 2.0},
                                 Pair{kInf, -1.0},  Pair{kInf, 2.0},       Pair{2.0, kInf},
                                 Pair{0.5, kInf},   Pair{10.0, 400.0},     Pair{10.0, -400.0},
                                 Pair{2.0, 1024.0}, Pair{-8.0, 1.0 / 3.0}, Pair{kNaN, 1.0},
                                 Pair{1.0, kNaN},   Pair{kNaN, 0.0}};
constexpr std::array kPowSpecialF{PairF{10.0f, 50.0f}, PairF{10.0f, -50.0f}, PairF{0.0f, -1.0f},
                                  PairF{2.0f, 128.0f}, PairF{-8.0f, 0.5f}};
constexpr std::array kTrigSpecial{kInf, -kInf, kNaN};
constexpr std::array kTrigSpecialF{kInfF, -kInfF, kNaNF};
constexpr std::array kToFloatSpecial{pm::dd{1e300, 0.0}, pm::dd{0x1.ffffffp+127, -0x1p+60},
                                     pm::dd{0x1.ffffffp+127, 0x1p+60}, pm::dd{4.4e38, 1e22},
                                     pm::dd{kInf, 0.0}};

// --- the functions ------------------------------------------------------------------------------

constexpr auto f_exp = [](double x) { return pm::exp(x); };
constexpr auto f_expf = [](float x) { return pm::exp(x); };
constexpr auto f_expd = [](pm::dd x) { return pm::exp(x); };
constexpr auto f_log = [](double x) { return pm::log(x); };
constexpr auto f_logf = [](float x) { return pm::log(x); };
constexpr auto f_logd = [](pm::dd x) { return pm::log(x); };
constexpr auto f_pow = [](Pair a) { return pm::pow(a.a, a.b); };
constexpr auto f_powf = [](PairF a) { return pm::pow(a.a, a.b); };
constexpr auto f_pow_ratio = [](Rope a) { return pm::pow_ratio(a.base, a.num, a.den); };
constexpr auto f_sin = [](double x) { return pm::sin(x); };
constexpr auto f_cos = [](double x) { return pm::cos(x); };
constexpr auto f_sincos = [](double x) { return pm::sincos(x); };
constexpr auto f_sinf = [](float x) { return pm::sin(x); };
constexpr auto f_cosf = [](float x) { return pm::cos(x); };
constexpr auto f_sincosf = [](float x) { return pm::sincos(x); };
constexpr auto f_sincosd = [](pm::dd x) { return pm::sincos(x); };
constexpr auto f_product_f = [](ProductArg a) {
  return pm::sincos_of_product<float>(a.p, a.theta);
};
constexpr auto f_product_d = [](ProductArg a) {
  return pm::sincos_of_product<double>(a.p, a.theta);
};
constexpr auto f_two_prod = [](Pair a) { return pm::two_prod(a.a, a.b); };
constexpr auto f_two_sum = [](Pair a) { return pm::two_sum(a.a, a.b); };
constexpr auto f_dd_ops = [](Pair a) {
  const pm::dd x = pm::two_prod(a.a, 1.0 / 3.0);
  const pm::dd y = pm::two_sum(a.b, a.a * 0x1p-70);
  return std::array<pm::dd, 4>{x + y, x - y, x * y, x / y};
};
constexpr auto f_to_float = [](pm::dd x) { return pm::to_float(x); };
// Scaled into [2^-280, 2^120]: within the float range (and below it), where a float result exists.
constexpr auto f_to_float_pair = [](Pair a) {
  return pm::to_float(pm::two_prod(a.a * 0x1p-80, 1.0 + 0x1p-30));
};
constexpr auto f_to_double_pair = [](Pair a) {
  return pm::to_double(pm::two_prod(a.a, 1.0 + 0x1p-30));
};

// Negative control of the machinery: a call that is not a constant expression is detected as
// such (not a build failure), and one that is, is not.
constexpr std::array kZeroAndOne{0.0, 1.0};
constexpr auto f_reciprocal = [](double x) { return 1.0 / x; };  // 1/0: not a constant expression
static_assert(!constant_evaluable<f_reciprocal, kZeroAndOne, 0>);
static_assert(constant_evaluable<f_reciprocal, kZeroAndOne, 1>);
static_assert(!AtCompileTime<f_reciprocal, kZeroAndOne>::ok[0]);
static_assert(AtCompileTime<f_reciprocal, kZeroAndOne>::ok[1]);
static_assert(AtCompileTime<f_reciprocal, kZeroAndOne>::value_at[1] == 1.0);

}  // namespace

TEST_CASE("negative control: a run-time result that differs from the compile-time one is flagged",
          "[constexpr][negative]") {
  // The run-time side computes through rt(); here the "compile-time" table is deliberately
  // perturbed by one ulp in one entry, which same_bits must see.
  constexpr auto& ct = AtCompileTime<f_exp, kExpArgs>::value_at;
  std::size_t differ = 0;
  for (std::size_t i = 0; i < N; ++i) {
    const double expected = i == 2 ? std::nextafter(ct[i], 0.0) : ct[i];  // exp(1)
    differ += same_bits(f_exp(rt(kExpArgs[i])), expected) ? 0 : 1;
  }
  CHECK(differ == 1);
}

TEST_CASE("constexpr: exp", "[constexpr][exp]") {
  compare<f_exp, kExpArgs>("exp(double)");
  compare<f_expf, kExpArgsF>("exp(float)");
  compare<f_expd, kExpDdArgs>("exp(dd)");
}

TEST_CASE("constexpr: log", "[constexpr][log]") {
  compare<f_log, kLogArgs>("log(double)");
  compare<f_logf, kLogArgsF>("log(float)");
  compare<f_logd, kLogDdArgs>("log(dd)");
}

TEST_CASE("constexpr: pow and pow_ratio", "[constexpr][pow]") {
  compare<f_pow, kPowArgs>("pow(double)");
  compare<f_powf, kPowArgsF>("pow(float)");
  compare<f_pow_ratio, kRopeArgs>("pow_ratio");
}

TEST_CASE("constexpr: sin, cos, sincos", "[constexpr][trig]") {
  compare<f_sin, kTrigArgs>("sin(double)");
  compare<f_cos, kTrigArgs>("cos(double)");
  compare<f_sincos, kTrigArgs>("sincos(double)");
  compare<f_sinf, kTrigArgsF>("sin(float)");
  compare<f_cosf, kTrigArgsF>("cos(float)");
  compare<f_sincosf, kTrigArgsF>("sincos(float)");
  compare<f_sincosd, kTrigDdArgs>("sincos(dd)");
}

TEST_CASE("constexpr: sincos_of_product and the table builder", "[constexpr][angle]") {
  compare<f_product_f, kProductArgs>("sincos_of_product<float>");
  compare<f_product_d, kProductArgs>("sincos_of_product<double>");

  // A 300-position float table for one frequency, built by the constant evaluator and at run time.
  constexpr std::size_t count = 300;
  constexpr auto table = [](pm::dd theta) {
    std::array<float, 2 * count> t{};
    pm::sincos_of_products<float>(theta, count, t.data(), t.data() + count, 1);
    return t;
  };
  constexpr pm::dd theta = pm::pow_ratio(10000.0, -6, 64);
  constexpr auto ct = table(theta);
  const auto run = table(rt(theta));
  std::size_t differ = 0;
  for (std::size_t i = 0; i < ct.size(); ++i) differ += same_bits(ct[i], run[i]) ? 0 : 1;
  std::cout << "[constexpr] sincos_of_products<float> table: " << ct.size() << " entries, "
            << differ << " differ between compile time and run time\n";
  CHECK(differ == 0);
}

TEST_CASE("constexpr: double-double arithmetic and rounding", "[constexpr][double_double]") {
  compare<f_two_prod, kPairs>("two_prod");
  compare<f_two_sum, kPairs>("two_sum");
  compare<f_dd_ops, kPairs>("dd + - * /");
  compare<f_to_float_pair, kPairs>("to_float");
  compare<f_to_double_pair, kPairs>("to_double");
#if defined(POSENC_TEST_FMA)
  std::cout << "[constexpr] built with -mfma: run-time two_prod uses the hardware FMA: "
            << (POSENC_DETAIL_HW_FMA ? "yes" : "no") << "\n";
  CHECK(POSENC_DETAIL_HW_FMA == 1);
#endif
}

TEST_CASE("constexpr: special values (overflow, infinities, NaN, poles)", "[constexpr][special]") {
  compare<f_exp, kExpSpecial>("exp(double), special values");
  compare<f_expf, kExpSpecialF>("exp(float), special values");
  compare<f_log, kLogSpecial>("log(double), special values");
  compare<f_logf, kLogSpecialF>("log(float), special values");
  compare<f_pow, kPowSpecial>("pow(double), special values");
  compare<f_powf, kPowSpecialF>("pow(float), special values");
  compare<f_sin, kTrigSpecial>("sin(double), special values");
  compare<f_cos, kTrigSpecial>("cos(double), special values");
  compare<f_sinf, kTrigSpecialF>("sin(float), special values");
  compare<f_cosf, kTrigSpecialF>("cos(float), special values");
  compare<f_to_float, kToFloatSpecial>("to_float, beyond FLT_MAX");
}
