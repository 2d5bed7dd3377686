// Double-double arithmetic: a value is the unevaluated sum hi + lo of two doubles with
// |lo| <= ulp(hi)/2, giving about 106 significant bits. Algorithms: Dekker (1971) "A floating-point
// technique for extending the available precision" (two_prod with Veltkamp splitting), Knuth TAOCP
// vol. 2 §4.2.2 (two_sum), and Hida, Li, Bailey (2001) "Algorithms for quad-double precision
// floating point arithmetic" (the dd add/mul/div compositions).
//
// Everything is constexpr, and run time gives the same bits as compile time:
// - two_prod uses the hardware FMA at run time when the target has one; the error term
//   a*b - fl(a*b) is the same exact number either way.
// - Every other product that feeds an addition goes through product(), which at run time passes
//   the product through an empty asm statement so that the compiler cannot fuse it into an FMA
//   (GCC contracts a*b + c by default whenever FMA instructions are enabled, also under
//   -std=c++20; constant evaluation never does).
#pragma once

#include <cstdint>
#include <type_traits>

#if defined(__FP_FAST_FMA) || (defined(__FMA__) && (defined(__x86_64__) || defined(__i386__))) || \
    (defined(__aarch64__) && defined(__ARM_FEATURE_FMA))
#define POSENC_DETAIL_HW_FMA 1
#else
#define POSENC_DETAIL_HW_FMA 0
#endif

// POSENC_DETAIL_OPAQUE(v); after `double v = a * b;` keeps the compiler from fusing that product
// with a later addition, at run time only (an empty asm statement that claims to modify v).
#if defined(__x86_64__) || defined(__i386__)
#define POSENC_DETAIL_ASM_FP_REG "+x"
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_FP) && (__ARM_FP & 8))
#define POSENC_DETAIL_ASM_FP_REG "+w"
#else
#define POSENC_DETAIL_ASM_FP_REG "+m"
#endif
#define POSENC_DETAIL_OPAQUE(v)                                                   \
  do {                                                                            \
    if (!std::is_constant_evaluated()) __asm__("" : POSENC_DETAIL_ASM_FP_REG(v)); \
  } while (false)

namespace posenc::math {

struct dd {
  double hi = 0.0;
  double lo = 0.0;
  friend constexpr bool operator==(const dd&, const dd&) = default;
};

// s + e == a + b exactly, s = fl(a + b).
constexpr dd two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  const double ea = a - (s - bb);
  const double eb = b - bb;
  return {s, ea + eb};
}

// As two_sum, valid when |a| >= |b| (or a == 0).
constexpr dd fast_two_sum(double a, double b) {
  const double s = a + b;
  const double t = s - a;
  return {s, b - t};
}

namespace detail {
// a * b rounded once to T (double, or float in the tables' rotations), never fused with a
// neighbouring addition (see the header comment).
template <class T>
constexpr T product(T a, T b) {
  T p = a * b;
  POSENC_DETAIL_OPAQUE(p);
  return p;
}

// a0 b0 + a1 b1 with both products rounded separately.
constexpr double dot2(double a0, double a1, double b0, double b1) {
  return product(a0, b0) + product(a1, b1);
}

// Veltkamp split: a == hi + lo, each with at most 26 significant bits (|a| < 2^996).
constexpr dd split(double a) {
  constexpr double c = 134217729.0;  // 2^27 + 1
  double t = c * a;
  POSENC_DETAIL_OPAQUE(t);
  const double u = t - a;
  const double hi = t - u;
  return {hi, a - hi};
}
}  // namespace detail

// p + e == a * b exactly, p = fl(a * b) (no overflow/underflow).
constexpr dd two_prod(double a, double b) {
  const double p = a * b;
#if POSENC_DETAIL_HW_FMA
  if (!std::is_constant_evaluated()) return {p, __builtin_fma(a, b, -p)};
#endif
  const dd as = detail::split(a);
  const dd bs = detail::split(b);
  // Every partial product below is exact, so contraction into an FMA cannot change the result.
  double e = as.hi * bs.hi - p;
  e = e + as.hi * bs.lo;
  e = e + as.lo * bs.hi;
  e = e + as.lo * bs.lo;
  return {p, e};
}

constexpr dd operator-(dd a) {
  return {-a.hi, -a.lo};
}

constexpr dd operator+(dd a, dd b) {
  const dd s = two_sum(a.hi, b.hi);
  const dd t = two_sum(a.lo, b.lo);
  const dd u = fast_two_sum(s.hi, s.lo + t.hi);
  return fast_two_sum(u.hi, u.lo + t.lo);
}
constexpr dd operator+(dd a, double b) {
  const dd s = two_sum(a.hi, b);
  return fast_two_sum(s.hi, s.lo + a.lo);
}
constexpr dd operator+(double a, dd b) {
  return b + a;
}
constexpr dd operator-(dd a, dd b) {
  return a + (-b);
}
constexpr dd operator-(dd a, double b) {
  return a + (-b);
}
constexpr dd operator-(double a, dd b) {
  return (-b) + a;
}

constexpr dd operator*(dd a, dd b) {
  const dd p = two_prod(a.hi, b.hi);
  const double c = detail::product(a.hi, b.lo) + detail::product(a.lo, b.hi);
  return fast_two_sum(p.hi, p.lo + c);
}
constexpr dd operator*(dd a, double b) {
  const dd p = two_prod(a.hi, b);
  return fast_two_sum(p.hi, p.lo + detail::product(a.lo, b));
}
constexpr dd operator*(double a, dd b) {
  return b * a;
}

constexpr dd operator/(dd a, dd b) {
  // Long division with three quotient digits (Hida-Li-Bailey, accurate dd division).
  const double q1 = a.hi / b.hi;
  dd r = a - b * q1;
  const double q2 = r.hi / b.hi;
  r = r - b * q2;
  const double q3 = r.hi / b.hi;
  const dd q = fast_two_sum(q1, q2);
  return q + q3;
}
constexpr dd operator/(dd a, double b) {
  return a / dd{b, 0.0};
}
constexpr dd operator/(double a, dd b) {
  return dd{a, 0.0} / b;
}

constexpr bool operator<(dd a, dd b) {
  return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

// Exact product of an integer below 2^53 and a double-double, to double-double accuracy.
constexpr dd mul(std::uint64_t n, dd x) {
  return x * static_cast<double>(n);
}

}  // namespace posenc::math
