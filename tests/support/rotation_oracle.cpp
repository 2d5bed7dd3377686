#include "support/rotation_oracle.hpp"

#include <algorithm>
#include <cmath>

#include "support/exact_rope.hpp"

namespace posenc_test {

namespace {

constexpr mpfr_prec_t kWork = kPrec + 64;
// Rows: af cos and af sin to 128 bits (then double-double, 106), from the exact angle.
constexpr mpfr_prec_t kRowPrec = 128;

dd_value to_dd(mpfr_srcptr v) {
  Mpfr rest(kWork);
  dd_value r;
  r.hi = mpfr_get_d(v, MPFR_RNDN);
  mpfr_sub_d(rest, v, r.hi, MPFR_RNDN);
  r.lo = mpfr_get_d(rest, MPFR_RNDN);
  return r;
}

// Error-free transformations (Knuth's two-sum, the fma product).
dd_value two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
dd_value two_prod(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}
// x (C.hi + C.lo) as a double-double (x C.lo rounded once: 2^-53 of a 2^-53-small term).
dd_value times(double x, const dd_value& C) {
  dd_value p = two_prod(x, C.hi);
  p.lo += x * C.lo;
  return two_sum(p.hi, p.lo);
}
dd_value add(const dd_value& u, const dd_value& v) {
  dd_value s = two_sum(u.hi, v.hi);
  s.lo += u.lo + v.lo;
  return two_sum(s.hi, s.lo);
}
dd_value neg(const dd_value& u) {
  return {-u.hi, -u.lo};
}

}  // namespace

PairChannels pair_of(posenc::rope_layout layout, std::uint32_t rotary_dim, std::uint32_t i) {
  if (layout == posenc::rope_layout::interleaved) return {2 * i, 2 * i + 1};
  return {i, i + rotary_dim / 2};
}

RotationOracle::RotationOracle(const posenc::rope_config& c, std::uint64_t seq_len)
    : c_(c), seq_len_(seq_len), af_exact_(std::make_unique<Mpfr>(kWork)) {
  for (std::uint32_t i = 0; i < pairs(); ++i) {
    theta_exact_.push_back(std::make_unique<Mpfr>(kWork));
    exact_rope_inv_freq(*theta_exact_.back(), c_, i, seq_len_, near_discrete_);
    theta_.push_back(mpfr_get_d(*theta_exact_.back(), MPFR_RNDN));
  }
  exact_rope_attention_factor(*af_exact_, c_);
  af_ = mpfr_get_d(*af_exact_, MPFR_RNDN);
}

const RotationRow& RotationOracle::row(std::uint64_t p) {
  const auto it = rows_.find(p);
  if (it != rows_.end()) return it->second;
  RotationRow r;
  r.cos.resize(pairs());
  r.sin.resize(pairs());
  // p theta exactly: theta has kWork bits, p at most 64.
  Mpfr angle(kWork + 64), cs(kRowPrec), sn(kRowPrec), v(kRowPrec);
  for (std::uint32_t i = 0; i < pairs(); ++i) {
    mpfr_mul_ui(angle, *theta_exact_[i], static_cast<unsigned long>(p), MPFR_RNDN);
    mpfr_sin_cos(sn, cs, angle, MPFR_RNDN);
    mpfr_mul(v, cs, *af_exact_, MPFR_RNDN);
    r.cos[i] = to_dd(v);
    mpfr_mul(v, sn, *af_exact_, MPFR_RNDN);
    r.sin[i] = to_dd(v);
  }
  return rows_.emplace(p, std::move(r)).first->second;
}

RotatedPair rotate_exact(double xa, double xb, const dd_value& C, const dd_value& S) {
  RotatedPair y;
  y.a = add(times(xa, C), neg(times(xb, S)));
  y.b = add(times(xb, C), times(xa, S));
  return y;
}

double ulp_of(StorageFormat f, double v) {
  if (v == 0.0) return std::ldexp(1.0, f.min_exp - f.precision + 1);
  int e = 0;
  std::frexp(v, &e);  // v = m 2^e, m in [0.5, 1): v in [2^(e-1), 2^e)
  const int exponent = std::max(e - 1, f.min_exp);
  return std::ldexp(1.0, exponent - f.precision + 1);
}

double rotation_bound(StorageFormat f, double y_exact, double x1, double x2, double abs_c,
                      double abs_s, double af, double theta, std::uint64_t p) {
  constexpr double u = 0x1p-24, eta = 0x1p-150, delta = 0x1p-64;
  const double M = std::fabs(x1) * abs_c + std::fabs(x2) * abs_s;
  const double X = std::fabs(x1) + std::fabs(x2);
  const double e_t = af * delta * (static_cast<double>(p) * theta + 1.0);
  const double E = 3.0 * u * (1.0 + 0x1p-20) * M + 3.0 * X * (e_t + eta) + 3.0 * eta;
  const double storage = f.precision == kFloat32.precision && f.min_exp == kFloat32.min_exp
                             ? 0.0
                             : 0.5 * ulp_of(f, std::fabs(y_exact) + E);
  return (storage + E + 0x1p-90 * M) * (1.0 + 0x1p-40);
}

}  // namespace posenc_test
