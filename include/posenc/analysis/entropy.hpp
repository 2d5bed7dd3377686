// Softmax entropy of attention as a function of the context length L (docs/analysis.md,
// "Attention entropy"). The entropy of the attention weights p_j = softmax(z)_j over keys j < L,
//
//   H(z) = -sum_j p_j log p_j = log sum_j e^{z_j} - sum_j p_j z_j,
//
// is log L for equal logits and falls as they spread; a softmax whose entropy keeps rising with L
// has lost focus (the length-generalisation failure that log-n scaling, YaRN's mscale and
// Llama-4's temperature are meant to counter).
//
// Estimator (expected_entropy). The query sits at the last position p = L - 1 and attends to keys
// at positions 0..L-1. Each sample draws q and k in R^head_dim with i.i.d. N(0, qk_std^2)
// components (splitmix64 + Box-Muller from seed, sample index: reproducible on every platform that
// has a correctly rounded-ish libm) and places the same k at every key position, so the logits
//
//   z_j = s(p) a^2 (R_p q) . (R_j k) / sqrt(head_dim),   a = the attention factor (YaRN mscale),
//         s(p) = the query temperature (spec/attention_temperature.hpp)
//
// differ only through the rotation: they measure what the encoding itself does to the spread of
// attention, with the content held fixed. (With an independent k_j per position the rotation does
// not change the distribution of the logits at all: R_j k_j is again N(0, qk_std^2 I).) The
// estimate is the mean of H over `samples` draws (the same draws at every L) with its standard
// error s/sqrt(samples), s the sample standard deviation. One sample costs O(L * rotary_dim/2): the
// logits at every distance come from one complex rotation per pair and distance in double,
// restarted every 256 distances from e^{i r0 theta} kept in double-double (advanced by
// double-double products with e^{i 256 theta}, error ~2^-100 per block), so each cos and sin is
// within 256 * 4.25 u < 2^-42.9 of exact (decay.hpp's argument), and L = 128k takes tens of
// milliseconds; no key is skipped or sampled. The logits of a shorter L are a prefix of the
// longest one's, computed once per draw (dynamic and longrope, whose frequencies depend on L, once
// per L).
//
// attention_entropy is the same quantity for given q and keys at given positions, each rotated
// through math::sincos_of_product_dd (no recurrence): the reference the estimator is tested
// against. softmax_entropy is H of given logits, computed with the maximum subtracted; its
// rounding error is below softmax_entropy_error.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <posenc/frequencies/rope.hpp>
#include <posenc/math/angle.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/spec/attention_temperature.hpp>
#include <posenc/spec/rope.hpp>

namespace posenc::analysis {

// ---- softmax entropy of given logits ---------------------------------------------------------

// H(scale * z) in double. z must be non-empty and finite.
inline double softmax_entropy(std::span<const double> z, double scale = 1.0) {
  double m = scale * z[0];
  for (double v : z) m = std::fmax(m, scale * v);
  double sum = 0.0;
  double weighted = 0.0;  // sum_j w_j (z_j - m), every term <= 0
  for (double v : z) {
    const double d = scale * v - m;
    const double w = std::exp(d);
    sum += w;
    weighted += w * d;
  }
  return std::log(sum) - weighted / sum;
}

// A bound on |softmax_entropy(z, scale) - H(scale z)| for n logits whose scaled range
// (max - min) is `range`, u = 2^-53: each shifted logit d_j is within u |d_j| + u |m|, each
// e^{d_j} within 2u relative (libm's exp within 1 ulp) and the sums of n positive terms within
// n u relative, so log(sum) is within (n + 3) u and the mean of the d_j (|d_j| <= range) within
// (n + 4) u range; the final subtraction adds u (log n + range). The bound doubles the total.
constexpr double softmax_entropy_error(std::size_t n, double range, double max_abs) {
  const double u = 0x1p-53;
  const double nd = static_cast<double>(n);
  return 2.0 * u * ((nd + 4.0) * (1.0 + range + max_abs) + nd);
}

// ---- rules -----------------------------------------------------------------------------------

// Longest context evaluated: the logits of one sample are held in memory (8 bytes per key).
inline constexpr std::uint64_t max_entropy_length = std::uint64_t{1} << 22;
inline constexpr std::uint32_t max_entropy_samples = 1u << 16;

struct entropy_options {
  std::uint32_t samples = 32;  // draws of (q, k)
  std::uint64_t seed = 1;
  double qk_std = 1.0;  // standard deviation of each component of q and k
};

enum class entropy_error : std::uint8_t {
  ok,
  rope,
  temperature,
  samples,
  qk_std,
  length,
  shape,
};

constexpr const char* message(entropy_error e) {
  switch (e) {
    case entropy_error::ok:
      return "ok";
    case entropy_error::rope:
      return "posenc: the rope config breaks a rule (validate(config) names it)";
    case entropy_error::temperature:
      return "posenc: the attention temperature breaks a rule (validate(temperature) names it)";
    case entropy_error::samples:
      return "posenc: entropy samples must be between 1 and 65536";
    case entropy_error::qk_std:
      return "posenc: qk_std must be finite and > 0";
    case entropy_error::length:
      return "posenc: context lengths must be between 1 and 2^22";
    case entropy_error::shape:
      return "posenc: q must have head_dim values, keys head_dim per position, one position per "
             "key, positions below 2^32";
  }
  return "posenc: unknown entropy error";
}

// One point of the curve.
struct entropy_point {
  std::uint64_t length = 0;
  double mean = 0.0;       // the estimate of E[H]
  double std_error = 0.0;  // its standard error (0 for one sample)
  double log_length = 0.0;
  double query_scale = 1.0;  // s(L - 1)
};

// ---- the logits ------------------------------------------------------------------------------

namespace entropy_detail {

constexpr std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// 2n i.i.d. N(0, sd^2) values from (seed, sample) by Box-Muller.
inline void gaussians(std::uint64_t seed, std::uint64_t sample, double sd, std::span<double> out) {
  std::uint64_t s = seed ^ (0xd1b54a32d192ed03ULL * (sample + 1));
  const double two_pi = 6.283185307179586;
  for (std::size_t i = 0; i < out.size(); i += 2) {
    const double u1 = (static_cast<double>(splitmix64(s) >> 11) + 1.0) * 0x1p-53;  // (0, 1]
    const double u2 = static_cast<double>(splitmix64(s) >> 11) * 0x1p-53;
    const double r = sd * std::sqrt(-2.0 * std::log(u1));
    out[i] = r * std::cos(two_pi * u2);
    if (i + 1 < out.size()) out[i + 1] = r * std::sin(two_pi * u2);
  }
}

inline bool positions_ok(std::uint64_t p) {
  return p < (std::uint64_t{1} << 32);
}

}  // namespace entropy_detail

// The shared-key logits before the temperature: z[r] = a^2 q . R(-r theta) k / sqrt(head_dim) for
// distances r = 0..z.size()-1 (query at p, key at p - r), theta at sequence length seq_len. c must
// be valid, q and k head_dim values each.
inline void shared_key_logits(const rope_config& c, std::span<const double> q,
                              std::span<const double> k, std::uint64_t seq_len,
                              std::span<double> z) {
  const std::uint32_t half = c.rotary_dim / 2;
  const double af = attention_factor(c);
  const double norm = af * af / std::sqrt(static_cast<double>(c.head_dim));
  double pass = 0.0;  // channels past rotary_dim are not rotated
  for (std::uint32_t ch = c.rotary_dim; ch < c.head_dim; ++ch) pass += q[ch] * k[ch];
  // Per pair: a_i cos + b_i sin, where q . R(-alpha) k = (q1 k1 + q2 k2) cos alpha +
  // (q1 k2 - q2 k1) sin alpha; the step e^{i theta_i} and the current e^{i r theta_i}.
  std::vector<double> a(half), b(half), sc(half), ss(half), cr(half), sr(half);
  constexpr std::size_t B = 256;
  // e^{i r0 theta_i} at each block start r0 and e^{i B theta_i}, in double-double.
  std::vector<math::dd> bc(half), bs(half), stc(half), sts(half);
  for (std::uint32_t i = 0; i < half; ++i) {
    const posenc::channel_pair ch = pair_channels(c, i);
    a[i] = q[ch.first] * k[ch.first] + q[ch.second] * k[ch.second];
    b[i] = q[ch.first] * k[ch.second] - q[ch.second] * k[ch.first];
    const math::dd theta = inv_freq_dd(c, i, seq_len);
    const math::sincos_result<math::dd> st = math::sincos_of_product_dd(1, theta);
    sc[i] = st.cos.hi;
    ss[i] = st.sin.hi;
    const math::sincos_result<math::dd> sb = math::sincos_of_product_dd(B, theta);
    stc[i] = sb.cos;
    sts[i] = sb.sin;
    bc[i] = math::dd{1.0};
    bs[i] = math::dd{0.0};
  }
  for (std::size_t r0 = 0; r0 < z.size(); r0 += B) {
    for (std::uint32_t i = 0; i < half; ++i) {
      cr[i] = math::to_double(bc[i]);
      sr[i] = math::to_double(bs[i]);
      const math::dd cn = bc[i] * stc[i] - bs[i] * sts[i];
      bs[i] = bs[i] * stc[i] + bc[i] * sts[i];
      bc[i] = cn;
    }
    const std::size_t end = z.size() - r0 < B ? z.size() : r0 + B;
    for (std::size_t r = r0; r < end; ++r) {
      double acc0 = 0.0;
      double acc1 = 0.0;
      for (std::uint32_t i = 0; i < half; ++i) {
        acc0 += a[i] * cr[i];
        acc1 += b[i] * sr[i];
        const double cn = cr[i] * sc[i] - sr[i] * ss[i];
        sr[i] = sr[i] * sc[i] + cr[i] * ss[i];
        cr[i] = cn;
      }
      z[r] = (pass + acc0 + acc1) * norm;
    }
  }
}

namespace entropy_detail {
// dynamic and longrope frequencies depend on the sequence length (frequencies/rope.hpp).
constexpr bool depends_on_length(const rope_config& c) {
  return c.scaling.type == scaling_type::dynamic || c.scaling.type == scaling_type::longrope;
}
}  // namespace entropy_detail

// ---- entropy for given q and keys ------------------------------------------------------------

// H of the attention of query q at position q_pos over keys[j * head_dim ...] at key_pos[j], each
// rotated exactly (math::sincos_of_product_dd), logits scaled by a^2 s(q_pos) / sqrt(head_dim).
// Writes the entropy to h, or returns the broken rule and leaves h alone.
inline entropy_error attention_entropy(const rope_config& c, const attention_temperature& t,
                                       std::span<const double> q, std::uint64_t q_pos,
                                       std::span<const double> keys,
                                       std::span<const std::uint64_t> key_pos, double& h) {
  if (validate(c) != rope_error::ok) return entropy_error::rope;
  if (validate(t) != temperature_error::ok) return entropy_error::temperature;
  const std::size_t d = c.head_dim;
  if (q.size() != d || key_pos.empty() || keys.size() != key_pos.size() * d ||
      !entropy_detail::positions_ok(q_pos))
    return entropy_error::shape;
  for (std::uint64_t p : key_pos)
    if (!entropy_detail::positions_ok(p)) return entropy_error::shape;
  if (key_pos.size() > max_entropy_length) return entropy_error::length;
  const std::uint32_t half = c.rotary_dim / 2;
  std::vector<math::dd> theta(half);
  for (std::uint32_t i = 0; i < half; ++i) theta[i] = inv_freq_dd(c, i, q_pos + 1);
  auto rotate = [&](std::span<const double> x, std::uint64_t p, std::vector<double>& out) {
    out.assign(x.begin(), x.end());
    for (std::uint32_t i = 0; i < half; ++i) {
      const posenc::channel_pair ch = pair_channels(c, i);
      const math::sincos_result<math::dd> v = math::sincos_of_product_dd(p, theta[i]);
      const double co = math::to_double(v.cos);
      const double si = math::to_double(v.sin);
      out[ch.first] = x[ch.first] * co - x[ch.second] * si;
      out[ch.second] = x[ch.first] * si + x[ch.second] * co;
    }
  };
  std::vector<double> rq;
  std::vector<double> rk;
  rotate(q, q_pos, rq);
  const double af = attention_factor(c);
  const double norm = af * af / std::sqrt(static_cast<double>(d));
  std::vector<double> z(key_pos.size());
  for (std::size_t j = 0; j < key_pos.size(); ++j) {
    rotate(keys.subspan(j * d, d), key_pos[j], rk);
    double dot = 0.0;
    for (std::size_t ch = 0; ch < d; ++ch) dot += rq[ch] * rk[ch];
    z[j] = dot * norm;
  }
  h = softmax_entropy(z, query_scale<double>(t, q_pos));
  return entropy_error::ok;
}

// ---- the estimate over context lengths -------------------------------------------------------

// For each L in lengths: the estimate of E[H] described above, written to out (out.size() ==
// lengths.size()); nothing is written when a rule is broken.
inline entropy_error expected_entropy(const rope_config& c, const attention_temperature& t,
                                      std::span<const std::uint64_t> lengths,
                                      const entropy_options& o, std::span<entropy_point> out) {
  if (validate(c) != rope_error::ok) return entropy_error::rope;
  if (validate(t) != temperature_error::ok) return entropy_error::temperature;
  if (o.samples == 0 || o.samples > max_entropy_samples) return entropy_error::samples;
  if (!(o.qk_std > 0.0 && o.qk_std <= 1e150)) return entropy_error::qk_std;
  if (out.size() != lengths.size() || lengths.empty()) return entropy_error::shape;
  std::uint64_t longest = 0;
  for (std::uint64_t L : lengths) {
    if (L == 0 || L > max_entropy_length) return entropy_error::length;
    if (L > longest) longest = L;
  }
  const std::size_t d = c.head_dim;
  std::vector<double> qk(2 * d + 1);
  std::vector<double> z(longest);
  // Per sample, the logits at every distance up to the longest length once (the logits of a
  // shorter L are a prefix), unless the frequencies depend on L.
  const bool per_length = entropy_detail::depends_on_length(c);
  std::vector<double> sum(lengths.size(), 0.0);
  std::vector<double> sum_sq(lengths.size(), 0.0);
  std::vector<double> scale(lengths.size());
  for (std::size_t n = 0; n < lengths.size(); ++n)
    scale[n] = query_scale<double>(t, lengths[n] - 1);
  std::vector<double> first(lengths.size());  // the first sample's H: shifts the sums (stability)
  for (std::uint32_t k = 0; k < o.samples; ++k) {
    entropy_detail::gaussians(o.seed, k, o.qk_std, qk);
    const std::span<const double> qv(qk.data(), d);
    const std::span<const double> kv(qk.data() + d, d);
    if (!per_length) shared_key_logits(c, qv, kv, longest, z);
    for (std::size_t n = 0; n < lengths.size(); ++n) {
      const std::span<double> zl(z.data(), lengths[n]);
      if (per_length) shared_key_logits(c, qv, kv, lengths[n], zl);
      const double h = softmax_entropy(zl, scale[n]);
      if (k == 0) first[n] = h;
      sum[n] += h - first[n];
      sum_sq[n] += (h - first[n]) * (h - first[n]);
    }
  }
  const double ns = static_cast<double>(o.samples);
  for (std::size_t n = 0; n < lengths.size(); ++n) {
    const double m = sum[n] / ns;
    const double var = o.samples > 1 ? std::fmax(0.0, (sum_sq[n] - ns * m * m) / (ns - 1.0)) : 0.0;
    out[n] = entropy_point{lengths[n], first[n] + m, std::sqrt(var / ns),
                           std::log(static_cast<double>(lengths[n])), scale[n]};
  }
  return entropy_error::ok;
}

}  // namespace posenc::analysis
