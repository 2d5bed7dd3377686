#include "support/rotation_oracle.hpp"

#include <algorithm>
#include <cmath>

#include "support/exact.hpp"

namespace posenc_test {

namespace {

constexpr mpfr_prec_t kWork = kPrec + 64;
// Rows: af cos and af sin to 128 bits (then double-double, 106), from the exact angle.
constexpr mpfr_prec_t kRowPrec = 128;

// HF get_mscale(s, m) = 1 for s <= 1, else 0.1 m ln(s) + 1, with 0.1 m the double product that HF
// (Python) forms; the rest exact.
void exact_mscale(Mpfr& out, double s, double m) {
  if (s <= 1.0) {
    mpfr_set_ui(out, 1, MPFR_RNDN);
    return;
  }
  mpfr_set_d(out, s, MPFR_RNDN);
  mpfr_log(out, out, MPFR_RNDN);
  mpfr_mul_d(out, out, 0.1 * m, MPFR_RNDN);
  mpfr_add_ui(out, out, 1, MPFR_RNDN);
}

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

void exact_rope_inv_freq(Mpfr& out, const posenc::rope_config& c, std::uint32_t i,
                         std::uint64_t seq_len, bool& near_discrete) {
  using posenc::scaling_type;
  const posenc::rope_scaling& s = c.scaling;
  const auto ii = static_cast<std::int64_t>(i);
  const auto R = static_cast<std::int64_t>(c.rotary_dim);
  Mpfr theta(kWork), t(kWork), u(kWork);
  set_theta(theta, c.base, i, c.rotary_dim);
  switch (s.type) {
    case scaling_type::none:
      mpfr_set(out, theta, MPFR_RNDN);
      return;
    case scaling_type::linear:
      mpfr_div_d(out, theta, s.factor, MPFR_RNDN);
      return;
    case scaling_type::ntk:  // base factor^(R/(R-2)): theta_i factor^(-2i/(R-2))
      set_pow_ratio(t, s.factor, -2 * ii, R - 2);
      mpfr_mul(out, theta, t, MPFR_RNDN);
      return;
    case scaling_type::dynamic: {
      // base (factor seq / max_pos - (factor - 1))^(R/(R-2)), seq = max(seq_len, max_pos)
      const std::uint64_t seq =
          seq_len > s.max_position_embeddings ? seq_len : s.max_position_embeddings;
      mpfr_set_d(t, s.factor, MPFR_RNDN);
      mpfr_mul_ui(t, t, static_cast<unsigned long>(seq), MPFR_RNDN);
      mpfr_div_ui(t, t, s.max_position_embeddings, MPFR_RNDN);
      mpfr_sub_d(t, t, s.factor, MPFR_RNDN);
      mpfr_add_ui(t, t, 1, MPFR_RNDN);
      mpfr_log(t, t, MPFR_RNDN);
      mpfr_mul_si(t, t, -2 * ii, MPFR_RNDN);
      mpfr_div_si(t, t, R - 2, MPFR_RNDN);
      mpfr_exp(t, t, MPFR_RNDN);
      mpfr_mul(out, theta, t, MPFR_RNDN);
      return;
    }
    case scaling_type::yarn: {
      // theta (1 - ramp) + (theta / factor) ramp
      set_yarn_ramp(u, c, i, near_discrete);
      mpfr_div_d(t, theta, s.factor, MPFR_RNDN);
      mpfr_mul(t, t, u, MPFR_RNDN);
      mpfr_ui_sub(u, 1, u, MPFR_RNDN);
      mpfr_mul(u, theta, u, MPFR_RNDN);
      mpfr_add(out, t, u, MPFR_RNDN);
      return;
    }
    case scaling_type::llama3: {
      const double L = s.original_max_position_embeddings;
      Mpfr wavelen(kWork), edge(kWork);
      set_two_pi(wavelen);
      mpfr_div(wavelen, wavelen, theta, MPFR_RNDN);
      mpfr_set_d(edge, L, MPFR_RNDN);
      mpfr_div_d(edge, edge, s.low_freq_factor, MPFR_RNDN);
      if (mpfr_cmp(wavelen, edge) > 0) {
        mpfr_div_d(out, theta, s.factor, MPFR_RNDN);
        return;
      }
      mpfr_set_d(edge, L, MPFR_RNDN);
      mpfr_div_d(edge, edge, s.high_freq_factor, MPFR_RNDN);
      if (mpfr_cmp(wavelen, edge) < 0) {
        mpfr_set(out, theta, MPFR_RNDN);
        return;
      }
      // smooth = (L / wavelen - low) / (high - low); (1 - smooth) theta / factor + smooth theta
      mpfr_d_div(u, L, wavelen, MPFR_RNDN);
      mpfr_sub_d(u, u, s.low_freq_factor, MPFR_RNDN);
      mpfr_set_d(t, s.high_freq_factor, MPFR_RNDN);
      mpfr_sub_d(t, t, s.low_freq_factor, MPFR_RNDN);
      mpfr_div(u, u, t, MPFR_RNDN);
      mpfr_ui_sub(t, 1, u, MPFR_RNDN);
      mpfr_mul(t, t, theta, MPFR_RNDN);
      mpfr_div_d(t, t, s.factor, MPFR_RNDN);
      mpfr_mul(u, u, theta, MPFR_RNDN);
      mpfr_add(out, t, u, MPFR_RNDN);
      return;
    }
    case scaling_type::longrope: {
      const bool use_long = seq_len > s.original_max_position_embeddings;
      mpfr_div_d(out, theta, use_long ? s.long_factor[i] : s.short_factor[i], MPFR_RNDN);
      return;
    }
  }
}

void exact_rope_attention_factor(Mpfr& out, const posenc::rope_config& c) {
  using posenc::scaling_type;
  const posenc::rope_scaling& s = c.scaling;
  if (s.type == scaling_type::yarn) {
    if (s.attention_factor > 0.0) {
      mpfr_set_d(out, s.attention_factor, MPFR_RNDN);
    } else if (s.mscale > 0.0 && s.mscale_all_dim > 0.0) {
      Mpfr den(kWork);
      exact_mscale(out, s.factor, s.mscale);
      exact_mscale(den, s.factor, s.mscale_all_dim);
      mpfr_div(out, out, den, MPFR_RNDN);
    } else {
      exact_mscale(out, s.factor, 1.0);
    }
  } else if (s.type == scaling_type::longrope) {
    if (s.attention_factor > 0.0) {
      mpfr_set_d(out, s.attention_factor, MPFR_RNDN);
    } else if (s.factor <= 1.0) {
      mpfr_set_ui(out, 1, MPFR_RNDN);
    } else {
      Mpfr l(kWork);
      mpfr_set_d(out, s.factor, MPFR_RNDN);
      mpfr_log(out, out, MPFR_RNDN);
      mpfr_set_ui(l, s.original_max_position_embeddings, MPFR_RNDN);
      mpfr_log(l, l, MPFR_RNDN);
      mpfr_div(out, out, l, MPFR_RNDN);
      mpfr_add_ui(out, out, 1, MPFR_RNDN);
      mpfr_sqrt(out, out, MPFR_RNDN);
    }
  } else {
    mpfr_set_ui(out, 1, MPFR_RNDN);
  }
}

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
