// posenc-firmware-attention: runs the firmware attention layer (attention.cpp: compile-time RoPE
// tables, float arithmetic, no libm) on a deterministic input, recomputes the layer in double
// precision with <cmath>, and checks every output against an error bound derived below. Prints the
// configuration, a few output rows next to the reference, the largest error and the bound.
// Exit status 0 when every output is within its bound (and the negative control is not), else 1.
//
// Error analysis (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., 2002:
// §3.1 gamma_n = n u / (1 - n u), eq. (3.5) for inner products; first order in u = 2^-24).
// Inputs and weights are floats on grids that make q, k and v exact (attention.hpp), so the
// reference multiplies the same numbers and E(q) = E(k) = E(v) = 0. E(.) bounds the absolute
// error of a float value; |.| are magnitudes of the exact values.
//  1. RoPE, pair (a, b) with c = cos(t theta_i), s = sin(t theta_i): y_a = q_a c - q_b s. The
//     table entries are correctly rounded (|c~ - c| <= u |c|), the two products and the sum round
//     (gamma_2; an FMA rounds less):
//       E(y_a) = (u + gamma_2)(|q_a c| + |q_b s|);  y_b alike.
//     This stage is checked on its own (posenc_fw_rotated_query), every position and channel.
//  2. s_j = (q . k_j) / 8 (64 terms; 1/8 is exact):
//       E(s_j) = (sum_i |q_i| E(k_ji) + |k_ji| E(q_i) + gamma_64 |q_i k_ji|) / 8.
//  3. p_j = exp(s_j - m) / sum_k exp(s_k - m), m = max_k s_k. m cancels exactly, so only the
//     scores' errors and the roundings count. d log p_j = ds_j - sum_k p_k ds_k gives
//     E(s_j) + sum_k p_k E(s_k); the subtraction s_j - m rounds (u |s_j - m| in the exponent),
//     exp is correctly rounded (u), the sum of t + 1 positive terms (gamma_t), the division (u):
//       rel(p_j) = E(s_j) + sum_k p_k E(s_k) + a_j + sum_k p_k a_k + gamma_t + u,
//       a_j = u (1 + |s_j - m|).
//  4. y_i = sum_j p_j v_ji (t + 1 terms):
//       E(y_i) = sum_j p_j rel(p_j) |v_ji| + gamma_{t+1} sum_j p_j |v_ji|.
// Second-order terms: every neglected term is a first-order term times a sum of relative errors,
// which the program checks to be below 2^-10 (max_relative below); the double reference's own
// error is the same analysis with u = 2^-53 (libm within 1 ulp: 2^-52), about 2^-28 of the bound.
// So the bound used is (1 + 2^-9) times the first-order one, evaluated with the reference's
// magnitudes. Stage 1 is tight (one rounded table entry and two roundings per output); stages 2-4
// are worst cases over 64- and 256-term sums whose rounding errors do not all point the same way,
// so the end-to-end errors stay far below their bounds (the program prints the ratio).
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numbers>
#include <vector>

#include <posenc/frequencies/rope.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/tables/rope_cache.hpp>

#include "attention.hpp"

namespace {

using fw::context;
using fw::d_model;
using fw::head_dim;
using fw::heads;
constexpr std::uint32_t pairs = head_dim / 2;
constexpr double u = 0x1p-24;
constexpr double gamma(double n) {
  return n * u / (1.0 - n * u);
}

// The input: x[t][c] = k / 128 with k an integer in [-128, 127], exact in float.
std::vector<float> make_input() {
  std::vector<float> x(static_cast<std::size_t>(context) * d_model);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto v =
        static_cast<std::int32_t>(fw::hash32(0x51ED0000u + static_cast<std::uint32_t>(i)) >> 24) -
        128;
    x[i] = static_cast<float>(v) / 128.0f;
  }
  return x;
}

struct weights {
  std::array<std::vector<double>, 3> w;  // [matrix][row * d_model + col]
  weights() {
    for (std::uint32_t m = 0; m < 3; ++m) {
      w[m].resize(static_cast<std::size_t>(d_model) * d_model);
      for (std::uint32_t r = 0; r < d_model; ++r)
        for (std::uint32_t c = 0; c < d_model; ++c)
          w[m][r * d_model + c] = static_cast<double>(fw::weight(static_cast<fw::matrix>(m), r, c));
    }
  }
};

// A value and the bound on the error of its float counterpart.
struct vb {
  double v = 0.0;
  double e = 0.0;
};

// out = x W: exact in float and in double (attention.hpp), so no error bound.
void project(const std::vector<double>& w, const float* x, vb* out) {
  for (std::uint32_t c = 0; c < d_model; ++c) {
    double s = 0.0;
    for (std::uint32_t r = 0; r < d_model; ++r) s += static_cast<double>(x[r]) * w[r * d_model + c];
    out[c] = {s, 0.0};
  }
}

// The channels of pair i in a layout (docs/formulas.md §1).
struct pair_channels {
  std::uint32_t a, b;
};
pair_channels channels(bool half, std::uint32_t i) {
  return half ? pair_channels{i, i + pairs} : pair_channels{2 * i, 2 * i + 1};
}

// RoPE of one head vector at position t (step 1); theta_i = base^(-2i/R) (RoFormer eq. 15).
void rope(vb* x, std::uint32_t t, bool half) {
  for (std::uint32_t i = 0; i < pairs; ++i) {
    const double theta = std::pow(fw::model::config.base, -2.0 * i / head_dim);
    const double c = std::cos(t * theta), s = std::sin(t * theta);
    const auto [a, b] = channels(half, i);
    const vb xa = x[a], xb = x[b];
    const double mag = std::fabs(xa.v * c) + std::fabs(xb.v * s);
    const double mag_b = std::fabs(xb.v * c) + std::fabs(xa.v * s);
    x[a] = {xa.v * c - xb.v * s, (u + gamma(2)) * mag};
    x[b] = {xb.v * c + xa.v * s, (u + gamma(2)) * mag_b};
  }
}

struct reference {
  std::vector<vb> q;          // [t][c], rotated queries
  std::vector<vb> y;          // [t][c]
  double max_relative = 0.0;  // largest relative bound met (validity of first order)
};

// The layer in double, with the first-order bound of every output (steps 1-4).
reference run_reference(const std::vector<float>& x, const weights& W, bool half) {
  reference ref;
  ref.y.resize(x.size());
  ref.q.resize(x.size());
  std::vector<vb> kc(x.size()), vc(x.size());
  std::vector<double> s(context), es(context), p(context), rel(context);
  for (std::uint32_t t = 0; t < context; ++t) {
    const float* xt = &x[t * d_model];
    vb* q = &ref.q[t * d_model];
    project(W.w[0], xt, q);
    project(W.w[1], xt, &kc[t * d_model]);
    project(W.w[2], xt, &vc[t * d_model]);
    for (std::uint32_t h = 0; h < heads; ++h) {
      rope(&q[h * head_dim], t, half);
      rope(&kc[t * d_model + h * head_dim], t, half);
    }
    for (std::uint32_t h = 0; h < heads; ++h) {
      const std::uint32_t c0 = h * head_dim;
      double m = -HUGE_VAL;
      for (std::uint32_t j = 0; j <= t; ++j) {
        double dot = 0.0, e = 0.0, mag = 0.0;
        for (std::uint32_t i = 0; i < head_dim; ++i) {
          const vb qi = q[c0 + i], ki = kc[j * d_model + c0 + i];
          dot += qi.v * ki.v;
          e += std::fabs(qi.v) * ki.e + std::fabs(ki.v) * qi.e;
          mag += std::fabs(qi.v * ki.v);
        }
        s[j] = dot * fw::score_scale;
        es[j] = (e + gamma(head_dim) * mag) * fw::score_scale;
        m = std::fmax(m, s[j]);
      }
      double z = 0.0;
      for (std::uint32_t j = 0; j <= t; ++j) z += std::exp(s[j] - m);
      double mean_es = 0.0, mean_a = 0.0;
      for (std::uint32_t j = 0; j <= t; ++j) {
        p[j] = std::exp(s[j] - m) / z;
        mean_es += p[j] * es[j];
        mean_a += p[j] * u * (1.0 + std::fabs(s[j] - m));
      }
      for (std::uint32_t j = 0; j <= t; ++j) {
        rel[j] = es[j] + mean_es + u * (1.0 + std::fabs(s[j] - m)) + mean_a + gamma(t) + u;
        ref.max_relative = std::fmax(ref.max_relative, rel[j]);
      }
      for (std::uint32_t i = 0; i < head_dim; ++i) {
        double acc = 0.0, e = 0.0, mag = 0.0;
        for (std::uint32_t j = 0; j <= t; ++j) {
          const vb v = vc[j * d_model + c0 + i];
          acc += p[j] * v.v;
          e += p[j] * rel[j] * std::fabs(v.v);
          mag += p[j] * std::fabs(v.v);
        }
        ref.y[t * d_model + c0 + i] = {acc, e + gamma(t + 1) * mag};
      }
    }
  }
  return ref;
}

struct comparison {
  double max_error = 0.0;
  double max_bound = 0.0;
  double worst_ratio = 0.0;  // max error / bound over all outputs
  std::size_t outside = 0;   // outputs outside their bound
};

constexpr double second_order = 1.0 + 0x1p-9;

comparison compare(const std::vector<float>& y, const std::vector<vb>& ref) {
  comparison c;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double err = std::fabs(static_cast<double>(y[i]) - ref[i].v);
    const double bound = second_order * ref[i].e;
    c.max_error = std::fmax(c.max_error, err);
    c.max_bound = std::fmax(c.max_bound, bound);
    c.worst_ratio = std::fmax(c.worst_ratio, err / bound);
    if (!(err <= bound)) ++c.outside;
  }
  return c;
}

}  // namespace

int main() {
  constexpr posenc::rope_config cfg = posenc::checked_rope<fw::model>;
  const auto& inv_freq = posenc::inv_freq_v<fw::model, float>;
  std::printf("posenc firmware attention: 1 layer, %u heads, head_dim %u, d_model %u, context %u\n",
              heads, head_dim, d_model, context);
  std::printf("RoPE: base %.0f, rotary_dim %u, layout half (pairs (i, i + %u), HF rotate_half)\n",
              cfg.base, cfg.rotary_dim, pairs);
  std::printf("  pair   inv_freq (float)   wavelength (positions)   turns in context\n");
  for (const std::uint32_t i : {0u, 1u, 8u, 16u, 24u, 31u}) {
    const double wl = 2.0 * std::numbers::pi / static_cast<double>(inv_freq[i]);
    std::printf("  %4u   %.9e   %22.3f   %16.4f\n", i, static_cast<double>(inv_freq[i]), wl,
                context / wl);
  }
  const std::size_t bytes = posenc_fw_rope_table_bytes();
  std::printf(
      "cos/sin table (compact, .rodata): %zu bytes = 2 * %u pairs * %u positions * 4; "
      "the expanded format would take %zu\n",
      bytes, pairs, context, 2 * bytes);
  if (bytes != std::size_t{2} * pairs * context * sizeof(float)) {
    std::printf("FAIL: table bytes differ from 2 * (R/2) * P * 4\n");
    return 1;
  }

  const std::vector<float> x = make_input();
  std::vector<float> y(x.size());
  if (const int st = posenc_fw_attention_forward(x.data(), context, y.data()); st != posenc_fw_ok) {
    std::printf("FAIL: posenc_fw_attention_forward returned %d\n", st);
    return 1;
  }
  // Bad input is refused, not read past.
  if (posenc_fw_attention_forward(x.data(), context + 1, y.data()) != posenc_fw_too_many_tokens ||
      posenc_fw_attention_forward(nullptr, 1, y.data()) != posenc_fw_null_pointer) {
    std::printf("FAIL: invalid calls were not refused\n");
    return 1;
  }
  if (posenc_fw_attention_forward(x.data(), context, y.data()) != posenc_fw_ok) return 1;

  const weights W;
  const reference ref = run_reference(x, W, true);
  const reference wrong_ref = run_reference(x, W, false);

  // Stage 1 alone: the rotated queries of every position (compile-time tables, RoPE kernel).
  std::vector<float> q(x.size());
  for (std::uint32_t t = 0; t < context; ++t) {
    if (posenc_fw_rotated_query(&x[t * d_model], t, &q[t * d_model]) != posenc_fw_ok) {
      std::printf("FAIL: posenc_fw_rotated_query refused position %u\n", t);
      return 1;
    }
  }
  if (posenc_fw_rotated_query(x.data(), context, q.data()) != posenc_fw_too_many_tokens) {
    std::printf("FAIL: a position past the table was not refused\n");
    return 1;
  }
  const comparison cq = compare(q, ref.q);
  const comparison wq = compare(q, wrong_ref.q);
  std::printf(
      "\nrotated queries (all %u positions x %u channels): max abs error %.3e, largest "
      "bound %.3e, worst error/bound %.3f, outside their bound: %zu\n",
      context, d_model, cq.max_error, cq.max_bound, cq.worst_ratio, cq.outside);

  const comparison c = compare(y, ref.y);
  std::printf("\noutput y[t][c]: firmware (float) | reference (double) | error | bound\n");
  for (const std::uint32_t t : {0u, 1u, 17u, 128u, 255u}) {
    for (const std::uint32_t ch : {0u, 33u, 200u}) {
      const std::size_t i = static_cast<std::size_t>(t) * d_model + ch;
      std::printf("  t=%3u c=%3u  %+.8f | %+.12f | %.2e | %.2e\n", t, ch, static_cast<double>(y[i]),
                  ref.y[i].v, std::fabs(static_cast<double>(y[i]) - ref.y[i].v),
                  second_order * ref.y[i].e);
    }
  }
  std::printf(
      "attention output (all %zu values): max abs error %.3e, largest bound %.3e, worst "
      "error/bound %.4f, outside their bound: %zu\n",
      y.size(), c.max_error, c.max_bound, c.worst_ratio, c.outside);
  std::printf("largest relative bound in the softmax: %.3e (first order valid below 2^-10)\n",
              ref.max_relative);

  // Negative control: the same layer with interleaved pairs is a different model; the checks must
  // tell them apart, or they prove nothing about the tables.
  const comparison wy = compare(y, wrong_ref.y);
  std::printf(
      "negative control (reference with interleaved pairs): queries outside %zu, "
      "outputs outside %zu (max abs error %.3e)\n",
      wq.outside, wy.outside, wy.max_error);

  const bool ok = cq.outside == 0 && c.outside == 0 && ref.max_relative < 0x1p-10 &&
                  wq.outside > 0 && wy.outside > 0;
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
