// Shared pieces of the kernel accuracy and golden-interop tests: the kernels under test, exact
// outputs from MPFR, and the a-priori error bound of one rotated element.
//
// Error model (float32 storage, u = 2^-24, eta = 2^-146 covers the absolute error of underflowed
// products and sums):
//
//   Exact: Y_a = x_a C - x_b S, Y_b = x_b C + x_a S with C = af cos(p theta_i), S = af sin(p
//   theta_i) (af = attention factor; RoFormer eq. 34, docs/formulas.md §1).
//
//   Table entries: c = fl32(C), s = fl32(S) rounded once from a double-double value within 2^-90
//   relative of the exact one (tables/rope_cache.hpp, math/angle.hpp), so
//     |c - C| <= (u + 2^-89) |C| + eta,  |s - S| <= (u + 2^-89) |S| + eta.
//   The tests check this assumption on the rows they use (read back through the kernel with
//   (1, 0) probes).
//
//   Kernel (rope_reference.hpp; both operation orders):
//     unfused: y_a = fl(fl(x_a c) + fl(x_b (-s)))   fused: y_a = fl(x_a c + fl(x_b (-s)))
//   With P1 = x_a c, P2 = -x_b s, each rounding is a relative error <= u, so for the unfused order
//     |y_a - (P1 + P2)| <= u |P1| + u |P2| + u (1 + u) (|P1| + |P2|) = u (2 + u) (|P1| + |P2|)
//   and the fused order drops one of the product roundings (a smaller bound). Adding the table
//   error:
//     |y_a - Y_a| <= (u + 2^-89) (|x_a| |C| + |x_b| |S|) + u (2 + u) (|x_a c| + |x_b s|) + eta
//   (same for y_b with a and b exchanged). For |x| <= 1 and |C| + |S| <= af sqrt(2) this is at
//   most sqrt(2) af (3u + O(u^2)) = 2.53e-7 af: the global bound of element_bound_max().
#pragma once

#include <posenc/frequencies/rope.hpp>
#include <posenc/kernels/rope.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/spec/rope.hpp>

#if POSENC_TEST_HAVE_DISPATCH
#include <posenc/kernels/dispatch.hpp>
#endif

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "support/channels.hpp"
#include "support/mpfr_ref.hpp"

namespace posenc_test::kacc {

namespace pk = posenc::kernels;

inline constexpr double kU = 0x1p-24;
inline constexpr double kTableRel = 0x1p-24 + 0x1p-89;
inline constexpr double kEta = 0x1p-146;
// The issue's requirement: max abs error <= 5e-7 at every tested position up to 10^6.
inline constexpr double kIssueLimit = 5e-7;

// The a-priori bound of one output element (see the header comment). xa is the element's own
// input, xb its partner's; cx/sx the exact values the element multiplies them by (C and -S for a,
// C and +S for b: only magnitudes matter), c/s the table's floats.
inline double element_bound(double xa, double xb, double C, double S, double c, double s) {
  return kTableRel * (std::fabs(xa) * std::fabs(C) + std::fabs(xb) * std::fabs(S)) +
         kU * (2.0 + kU) * (std::fabs(xa * c) + std::fabs(xb * s)) + kEta;
}

// The same bound maximised over |x| <= 1 and C^2 + S^2 = af^2 (|C| + |S| <= sqrt(2) af; the
// table's |c| <= (1 + kTableRel) |C| + eta).
inline double element_bound_max(double af) {
  const double m = std::sqrt(2.0) * af;
  return kTableRel * m + kU * (2.0 + kU) * m * (1.0 + kTableRel) + 4.0 * kEta;
}

// A kernel under test: out-of-place f32.
struct Kernel {
  std::string name;
  pk::kernel_error (*fn)(const pk::rope_table&, pk::tensor_view<const float>,
                         pk::tensor_view<float>, pk::token_positions);
};

inline std::vector<Kernel> kernels_under_test() {
  std::vector<Kernel> k;
  k.push_back({"apply_rope", [](const pk::rope_table& t, pk::tensor_view<const float> in,
                                pk::tensor_view<float> out, pk::token_positions pos) {
                 return pk::apply_rope<float>(t, in, out, pos);
               }});
#if POSENC_TEST_HAVE_DISPATCH
  k.push_back(
      {std::string("dispatch::apply_rope[") + pk::dispatch::active_isa() + "]",
       [](const pk::rope_table& t, pk::tensor_view<const float> in, pk::tensor_view<float> out,
          pk::token_positions pos) { return pk::dispatch::apply_rope(t, in, out, pos); }});
#endif
  return k;
}

// Probes for `tokens` tokens of head_dim D: x_a = 1 and x_b = 0 in every pair, so that the
// kernel's outputs are the table's values themselves, y_a = c and y_b = s (1 * c + 0 * -s and
// 0 * c + 1 * s are exact).
inline std::vector<float> probes(std::size_t tokens, std::size_t D, posenc::rope_layout layout,
                                 std::size_t R) {
  std::vector<float> probe(tokens * D, 0.0f);
  for (std::size_t t = 0; t < tokens; ++t)
    for (std::size_t i = 0; i < R / 2; ++i)
      probe[t * D + expected_channels(layout, R, i).first] = 1.0f;
  return probe;
}

// The table values kernel k uses at the given positions, read back through it with probes into
// `out`: the value of pair i at token t is c at [t * D + a], s at [t * D + b] for its channels
// (a, b). Returns the kernel's error code.
inline pk::kernel_error read_table(const Kernel& k, const pk::rope_table& table,
                                   pk::token_positions pos, std::size_t tokens, std::size_t D,
                                   std::vector<float>& out) {
  const std::vector<float> probe = probes(tokens, D, table.layout, table.rotary_dim);
  out.assign(probe.size(), 0.0f);
  return k.fn(table, pk::dense<const float>(probe.data(), tokens, 1, D),
              pk::dense(out.data(), tokens, 1, D), pos);
}

// xorshift32 (Marsaglia 2003), the values (x >> 8) 2^-23 - 1: exact floats in [-1, 1).
struct Xorshift32 {
  std::uint32_t s;
  std::uint32_t next() {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
  }
  float unit() { return static_cast<float>(next() >> 8) * 0x1p-23f - 1.0f; }
};

// Exact outputs of one pair: ya = xa C - xb S, yb = xb C + xa S (C, S at kPrec bits).
struct ExactPair {
  Mpfr ya, yb;
  void set(float xa, float xb, mpfr_srcptr C, mpfr_srcptr S) {
    Mpfr t;
    mpfr_mul_d(ya, C, static_cast<double>(xa), MPFR_RNDN);
    mpfr_mul_d(t, S, static_cast<double>(xb), MPFR_RNDN);
    mpfr_sub(ya, ya, t, MPFR_RNDN);
    mpfr_mul_d(yb, C, static_cast<double>(xb), MPFR_RNDN);
    mpfr_mul_d(t, S, static_cast<double>(xa), MPFR_RNDN);
    mpfr_add(yb, yb, t, MPFR_RNDN);
  }
};

// |got - exact| as a double (the difference at kPrec bits, then rounded).
inline double abs_err(float got, mpfr_srcptr exact) {
  Mpfr d;
  mpfr_sub_d(d, exact, static_cast<double>(got), MPFR_RNDN);
  return std::fabs(mpfr_get_d(d, MPFR_RNDN));
}

// C = af cos(angle), S = af sin(angle) at kPrec bits.
inline void exact_cos_sin(mpfr_srcptr angle, mpfr_srcptr af, Mpfr& C, Mpfr& S) {
  mpfr_sin_cos(S, C, angle, MPFR_RNDN);
  mpfr_mul(C, C, af, MPFR_RNDN);
  mpfr_mul(S, S, af, MPFR_RNDN);
}

}  // namespace posenc_test::kacc
