#include "support/exact_rope.hpp"

#include <mpfr.h>

#include "support/exact.hpp"

namespace posenc_test {

namespace {

constexpr mpfr_prec_t kWork = kPrec + 64;

// HF get_mscale(s, m) = 1 for s <= 1, else 0.1 m ln(s) + 1, with 0.1 m the double product that HF
// (Python) and the library form; the rest exact.
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

}  // namespace posenc_test
