// MPFR oracle of the RoPE rotation, for tests of the kernels' outputs (tests/kernels/sweep): the
// exact theta_i of every scaling (docs/formulas.md §2, HF modeling_rope_utils.py), the exact
// attention factor, af cos(p theta_i) and af sin(p theta_i) at any position, and the rotated pair
//   y_a = x_a (af cos) - x_b (af sin),   y_b = x_b (af cos) + x_a (af sin)   (RoFormer eq. 34)
// from exact inputs, with the error bound a float kernel must meet (rotation_bound below).
//
// Nothing here calls posenc code: the configuration is read field by field (theta_i and the
// attention factor from support/exact_rope.hpp, as in tests/frequencies/exact.cpp), channels are
// paired here, and the rows are MPFR values rounded to double-double (hi + lo, 2^-106 relative)
// and cached per position, so that a sweep over ISAs, storage types, tables and strides evaluates
// each (config, position) once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include <posenc/spec/rope.hpp>

#include "support/mpfr_ref.hpp"

namespace posenc_test {

// A double-double value hi + lo, |lo| <= ulp(hi) / 2.
struct dd_value {
  double hi = 0.0, lo = 0.0;
};

// af cos(p theta_i) and af sin(p theta_i) for every pair i < R/2 at one position, each the exact
// value rounded to double-double (relative error <= 2^-105).
struct RotationRow {
  std::vector<dd_value> cos, sin;
};

// Which channels pair i rotates: interleaved (2i, 2i + 1), half (i, i + R/2).
struct PairChannels {
  std::uint32_t a, b;
};
PairChannels pair_of(posenc::rope_layout layout, std::uint32_t rotary_dim, std::uint32_t i);

// The exact rotation of config c at sequence length seq_len. Copies the config; a longrope
// config's factor spans must outlive the oracle.
class RotationOracle {
 public:
  RotationOracle(const posenc::rope_config& c, std::uint64_t seq_len);
  RotationOracle(const RotationOracle&) = delete;
  RotationOracle& operator=(const RotationOracle&) = delete;

  const posenc::rope_config& config() const { return c_; }
  std::uint64_t seq_len() const { return seq_len_; }
  std::uint32_t pairs() const { return c_.rotary_dim / 2; }
  // Some YaRN correction dim is within 2^-70 of an integer: the oracle cannot tell which way the
  // library truncates it. Tests choose configs where this is false.
  bool near_discrete() const { return near_discrete_; }
  double attention_factor() const { return af_; }            // rounded to double
  double theta(std::uint32_t i) const { return theta_[i]; }  // rounded to double

  // The row at position p (computed once, then cached). References stay valid while the oracle
  // lives.
  const RotationRow& row(std::uint64_t p);
  std::size_t rows_computed() const { return rows_.size(); }

 private:
  posenc::rope_config c_;
  std::uint64_t seq_len_;
  bool near_discrete_ = false;
  double af_ = 1.0;
  std::vector<double> theta_;
  std::vector<std::unique_ptr<Mpfr>> theta_exact_;
  std::unique_ptr<Mpfr> af_exact_;
  std::map<std::uint64_t, RotationRow> rows_;
};

// The exact rotated pair (y_a, y_b) from exact inputs x_a, x_b and the row entry (C, S) = (af cos,
// af sin), in double-double: each product is exact (fma) up to the lo parts' own products, so the
// result is within 2^-100 (|x_a C| + |x_b S|) of the exact value.
struct RotatedPair {
  dd_value a, b;
};
RotatedPair rotate_exact(double xa, double xb, const dd_value& C, const dd_value& S);

// Storage formats of a kernel output, by precision p (significand bits) and minimum normal
// exponent: float 24/-126, bfloat16 8/-126, binary16 11/-14.
struct StorageFormat {
  int precision;
  int min_exp;
};
inline constexpr StorageFormat kFloat32{24, -126};
inline constexpr StorageFormat kBfloat16{8, -126};
inline constexpr StorageFormat kBinary16{11, -14};

// ulp of format f at magnitude v >= 0: 2^(e - p + 1) for v in [2^e, 2^(e+1)), the subnormal
// spacing 2^(min_exp - p + 1) below 2^min_exp. Nondecreasing in v.
double ulp_of(StorageFormat f, double v);

// The largest |y_stored - y_exact| a correct kernel may produce for one output channel
// y = x_1 C - x_2 S' (S' = +-S), storing in format f. With c = af cos(p theta_i), s = af sin(p
// theta_i) exact, M = |x_1| |c| + |x_2| |s|, X = |x_1| + |x_2|, u = 2^-24 (float's unit
// roundoff) and eta = 2^-150 (half the float subnormal spacing):
//  1. Table. Each entry is the library's af' cos(p theta') rounded to nearest float once
//     (docs/accuracy.md: math::sincos_of_product, "rounded once"; docs/tables.md), where theta'
//     and af' are the double-double values of docs/math.md, relative error <= 2^-90 (YaRN's ramp:
//     2^-70, tests/frequencies/exact.cpp); take delta = 2^-64. The angle error is p theta delta,
//     the factor's af delta, and cos, sin are 1-Lipschitz, so with e_t = af delta (p theta + 1):
//       |C - c| <= u |c| + (1 + u) e_t + eta      (and the same for S, s).
//  2. Float arithmetic. Unfused, y_f = fl(fl(x_1 C) + fl(-x_2 S)): two product roundings
//     (u |product| + eta each) and one sum rounding (u |sum|; a sum of floats that is subnormal is
//     exact). With A = |x_1 C| + |x_2 S| <= (1 + u) M + X ((1 + u) e_t + eta):
//       |y_f - (x_1 C - x_2 S)| <= u A + 2 eta + u (1 + u) A + 2 u eta <= (2u + u^2) A + 3 eta.
//     Fused, y_f = fl(x_1 C + fl(-x_2 S)), has one product rounding fewer: within the same bound.
//     Expanded tables hold -S exactly (a negation), so the bound is the same for both formats.
//  3. 1 + 2: |y_f - y| <= u M + (2u + u^2)(1 + u) M + X (3 e_t + 3 eta) + 3 eta
//                     <= 3u (1 + 2^-20) M + 3 X (e_t + eta) + 3 eta  =: E.
//  4. Storage. y_stored = round-to-nearest-even of y_f in f (nothing for float): at most half an
//  ulp
//     of |y_f| <= |y| + E, and ulp_of is nondecreasing: |y_stored - y_f| <= ulp_of(f, |y| + E) / 2.
//  5. The oracle's own error (rotate_exact, 2^-100 M) and the double arithmetic of the comparison
//     are covered by adding 2^-90 M and taking the bound times (1 + 2^-40).
// Total: ulp_of(f, |y| + E) / 2 + E + 2^-90 M, times (1 + 2^-40).
// How tight: for float storage E is 3 float roundings of M; a result from the wrong position
// (angle off by theta_i), the wrong pair, a swapped sign (2 |x_2 s|) or a dropped attention factor
// is off by far more whenever the inputs are of ordinary size. For bfloat16 and binary16 E is
// below 2^-20 of an ulp of the output, so a result rounded by truncation instead of to nearest is
// outside the bound as soon as the discarded part exceeds half an ulp by that little.
double rotation_bound(StorageFormat f, double y_exact, double x1, double x2, double abs_c,
                      double abs_s, double af, double theta, std::uint64_t p);

}  // namespace posenc_test
