// The rotation laws of posenc/analysis/laws.hpp (orthogonality, norm preservation, relative-only
// dependence) on random configurations and inputs, under the names of the laws themselves;
// proofs/laws.cpp states the same laws at compile time. Every tolerance is the error bound written
// beside the law in laws.hpp (summarised here where it is used), and every law has a negative
// control: a broken rotation on which the same check fails.
//
// Random inputs (support/random_rope.hpp): even R in [2, 512], head_dim in [R, R + 64], base in
// [2, 10^7], both layouts, every scaling with random valid parameters; positions m, n, shifts
// s < 2^31 (so m + s < 2^32); vectors q, k, x uniform in [-1, 1)^head_dim; cos/sin entries rounded
// to float and to double. Cases per law: POSENC_LAW_CASES (default 200).
#include <posenc/analysis.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if __has_include(<posenc/tables/rotation.hpp>)
#include <posenc/tables/rotation.hpp>
#define POSENC_TEST_HAVE_TABLES_ROTATION 1
#endif

#include "laws/common.hpp"
#include "support/check.hpp"
#include "support/gen.hpp"
#include "support/mpfr_ref.hpp"
#include "support/random_rope.hpp"
#include "support/rope.hpp"

namespace pa = posenc::analysis;
namespace pm = posenc::math;
using posenc::rope_config;
using namespace posenc_test;
using namespace posenc_test::laws;

namespace {

// A law checked on many inputs: counts them, keeps the largest deviation / tolerance and where
// it occurred, and prints one line at the end:
//   [law] orthogonality<float>: 20000 cases, max deviation 0.70 of the tolerance (...), 0 above
class LawReport final : public Report {
 public:
  explicit LawReport(std::string name) : Report(std::move(name)) {}
  ~LawReport() override { print(); }

  template <class Describe>
  bool check(double deviation, double tolerance, Describe&& describe) {
    ++count_;
    const double ratio = deviation / tolerance;
    if (!(ratio <= max_ratio_)) {
      max_ratio_ = ratio;
      worst_ = describe();
    }
    if (!(deviation <= tolerance)) {
      add_violation(describe() + ": deviation " + sci(deviation) + " > tolerance " +
                    sci(tolerance));
      return false;
    }
    return true;
  }
  double max_ratio() const { return max_ratio_; }
  void print() const override {
    if (count_ == 0) return;
    std::ostringstream os;
    os << "[law] " << name_ << ": " << count_ << " cases, max deviation " << max_ratio_
       << " of the tolerance (" << worst_ << "), " << violations_ << " above\n";
    std::cout << os.str() << std::flush;
  }

 private:
  double max_ratio_ = 0.0;
  std::string worst_;
};

template <class T>
using vector_rotation = pa::rope_rotation<T, std::vector<pm::dd>>;

// One random input of the rotation laws.
struct LawCase {
  RandomRope rope;
  std::uint64_t m = 0;
  std::uint64_t n = 0;
  std::uint64_t s = 0;
  std::vector<double> q;
  std::vector<double> k;
};

std::vector<double> unit_box_vector(std::size_t d) {
  std::vector<double> v(d);
  for (double& x : v) x = *uniform(-1.0, 1.0);
  return v;
}

rc::Gen<LawCase> law_case() {
  return rc::gen::exec([] {
    LawCase c;
    c.rope = *random_rope();
    c.m = *position(31);
    c.n = *rc::gen::weightedOneOf<std::uint64_t>(
        {{3, position(31)}, {1, rc::gen::just(c.m)}, {1, uint_in(c.m, c.m + 64)}});
    c.n &= (std::uint64_t{1} << 31) - 1;
    c.s = *position(31);
    c.q = unit_box_vector(c.rope.config.head_dim);
    c.k = unit_box_vector(c.rope.config.head_dim);
    return c;
  });
}

std::string describe(const LawCase& c) {
  return describe(c.rope) + " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
         " s=" + std::to_string(c.s);
}

rc::Gen<Batch<LawCase>> law_batch_gen() {
  return rc::gen::noShrink(
      rc::gen::map(rc::gen::container<std::vector<LawCase>>(
                       law_batch(), rc::gen::resize(rc::kNominalSize, law_case())),
                   [](std::vector<LawCase> v) { return Batch<LawCase>{std::move(v)}; }));
}

// ---- broken rotations (negative controls) ----------------------------------------------------
// The RoPE rotation scaled by g: not orthogonal, does not keep norms.
struct scaled_rotation {
  vector_rotation<double> r;
  double g;
  struct pair_t {
    pa::rope_pair<double> p;
    double g;
    pa::block2 at(std::uint64_t m) const {
      const pa::block2 b = p.at(m);
      return {b.a * g, b.b * g, b.c * g, b.d * g};
    }
  };
  std::uint32_t head_dim() const { return r.head_dim(); }
  std::uint32_t pairs() const { return r.pairs(); }
  posenc::channel_pair channels(std::uint32_t i) const { return r.channels(i); }
  pair_t pair(std::uint32_t i) const { return {r.pair(i), g}; }
};

// A shear [[1, t], [0, 1]] in every pair: not orthogonal.
struct shear_rotation {
  rope_config c;
  double t;
  struct pair_t {
    double t;
    pa::block2 at(std::uint64_t) const { return {1.0, t, 0.0, 1.0}; }
  };
  std::uint32_t head_dim() const { return c.head_dim; }
  std::uint32_t pairs() const { return c.rotary_dim / 2; }
  posenc::channel_pair channels(std::uint32_t i) const {
    return posenc::pair_channels(c.layout, c.rotary_dim, i);
  }
  pair_t pair(std::uint32_t) const { return {t}; }
};

// Angle m theta_i + (m mod 3)/4: a rotation for every m (orthogonal, keeps norms), but the angle
// depends on the absolute position.
struct absolute_rotation {
  const std::vector<pm::dd>* thetas;
  rope_config c;
  struct pair_t {
    pm::dd theta;
    pa::block2 at(std::uint64_t m) const {
      const pm::dd angle = pm::angle_of(m, theta) + 0.25 * static_cast<double>(m % 3);
      const pm::sincos_result<pm::dd> v = pm::sincos(angle);
      return {v.cos.hi, -v.sin.hi, v.sin.hi, v.cos.hi};
    }
  };
  std::uint32_t head_dim() const { return c.head_dim; }
  std::uint32_t pairs() const { return c.rotary_dim / 2; }
  posenc::channel_pair channels(std::uint32_t i) const {
    return posenc::pair_channels(c.layout, c.rotary_dim, i);
  }
  pair_t pair(std::uint32_t i) const { return {(*thetas)[i]}; }
};

// An engine-style table (HF LlamaRotaryEmbedding, docs/formulas.md §2): the angle is one
// float32 product fl32(fl32(m) * inv_freq_f32), then cos/sin of that float angle (here exactly,
// rounded to float). The angle's rounding error grows with m.
struct float_angle_rotation {
  rope_config c;
  struct pair_t {
    float inv_freq;
    pa::block2 at(std::uint64_t m) const {
      const float angle = static_cast<float>(m) * inv_freq;
      const pm::sincos_result<float> v = pm::sincos(angle);
      const auto cs = static_cast<double>(v.cos);
      const auto sn = static_cast<double>(v.sin);
      return {cs, -sn, sn, cs};
    }
  };
  std::uint32_t head_dim() const { return c.head_dim; }
  std::uint32_t pairs() const { return c.rotary_dim / 2; }
  posenc::channel_pair channels(std::uint32_t i) const {
    return posenc::pair_channels(c.layout, c.rotary_dim, i);
  }
  pair_t pair(std::uint32_t i) const { return {posenc::inv_freq<float>(c, i)}; }
};

// Checks a law on every case of each batch, with float and with double entries:
// law(std::type_identity<T>{}, rotation with T entries, case, check) calls check(deviation,
// tolerance) for each of its checks.
template <class Law>
void check_law(const std::string& name, Law&& law) {
  LawReport rf(name + "<float>");
  LawReport rd(name + "<double>");
  rc::prop(name, [&] {
    const auto b = *law_batch_gen();
    for (const LawCase& c : b.args) {
      const std::vector<pm::dd> t = thetas_of(c.rope);
      const auto desc = [&] { return describe(c); };
      law(std::type_identity<float>{}, vector_rotation<float>{c.rope.config, t}, c,
          [&](double deviation, double tolerance) { rf.check(deviation, tolerance, desc); });
      law(std::type_identity<double>{}, vector_rotation<double>{c.rope.config, t}, c,
          [&](double deviation, double tolerance) { rd.check(deviation, tolerance, desc); });
    }
    assert_batch(rf, rd);
  });
}

}  // namespace

// ---- the rotation laws on random configurations ------------------------------------------------

// orthogonality: R_m^T R_m = I. Tolerance 2 eps + eps^2 + 4u (laws.hpp): the diagonal of B^T B is
// c^2 + s^2 = 1 + 2 (cos dc + sin ds) + dc^2 + ds^2 with |dc| <= eps |cos|, |ds| <= eps |sin|
// (eps = 2^-24 for float entries, 2^-52 for double), plus the rounding of two squares and a sum;
// the off-diagonal c (-s) + s c is exactly 0.
TEST_CASE("orthogonality", "[laws][rotation]") {
  check_law("orthogonality", [](auto tag, const auto& rot, const LawCase& c, auto&& check) {
    using T = typename decltype(tag)::type;
    for (std::uint64_t m : {c.m, c.n, c.m + c.s})
      check(pa::orthogonality(rot, m), pa::orthogonality_tolerance<T>());
  });
}

// norm_preservation: ||R_m x|| = ||x||. Tolerance (eps + (D + 8) u) ||x||: the rounded rotation
// moves ||x|| by at most eps ||x|| (each block is B + E with ||E|| <= eps), applying it in double
// adds 2 sqrt(2) u ||x||, and each of the two norms of D squares adds (D/2 + 1.5) u relative.
TEST_CASE("norm_preservation", "[laws][rotation]") {
  check_law("norm_preservation", [](auto tag, const auto& rot, const LawCase& c, auto&& check) {
    using T = typename decltype(tag)::type;
    const double nq = pa::vector_norm(c.q);
    for (std::uint64_t m : {c.m, c.n + c.s})
      check(pa::norm_preservation(rot, m, c.q), pa::norm_tolerance<T>(c.rope.config.head_dim, nq));
  });
}

// relative_dependence: <R_m q, R_n k> = <R_{m+s} q, R_{n+s} k>. Tolerance
// (4 eps + 2 eps^2 + 2 (D + 7) u) ||q|| ||k||: per pair, B~_m^T B~_n is within 2 eps + eps^2 of
// B_{n-m} for both (m, n) and (m + s, n + s); each inner product in double adds (D + 5.7) u.
// Position does not enter: every entry is rounded once from an angle exact to ~2^-104 relative
// (the test below shows the largest deviation per position octave, flat, next to a float32-angle
// table whose deviation grows with the position).
TEST_CASE("relative_dependence", "[laws][rotation]") {
  check_law("relative_dependence", [](auto tag, const auto& rot, const LawCase& c, auto&& check) {
    using T = typename decltype(tag)::type;
    check(pa::relative_dependence(rot, c.m, c.n, c.s, c.q, c.k),
          pa::relative_tolerance<T>(c.rope.config.head_dim, pa::vector_norm(c.q),
                                    pa::vector_norm(c.k)));
  });
}

// relative_dependence_blocks: R_m^T R_n = R_{n-m}. Tolerance 3 eps + eps^2 + 3u: the product of
// the rounded blocks is within 2 eps + eps^2 of B_{n-m}, the rounded B~_{n-m} within eps, and each
// entry of the 2x2 product rounds two products and a sum.
TEST_CASE("relative_dependence_blocks", "[laws][rotation]") {
  check_law(
      "relative_dependence_blocks", [](auto tag, const auto& rot, const LawCase& c, auto&& check) {
        using T = typename decltype(tag)::type;
        check(pa::relative_dependence_blocks(rot, c.m, c.n), pa::relative_blocks_tolerance<T>());
      });
}

TEST_CASE("relative_dependence: the deviation does not grow with position (float32 angles do)",
          "[laws][rotation]") {
  // d = 128, base 10^4, float entries; q and k fixed, s = 3 m / 7 + 1. For each octave
  // [2^j, 2^(j+1)) the largest deviation over 32 positions, as a fraction of the tolerance.
  rope_config c = kLlama;
  const std::vector<double> q = [] {
    std::vector<double> v(128);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.7 * static_cast<double>(i) + 1);
    return v;
  }();
  const std::vector<double> k = [] {
    std::vector<double> v(128);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::cos(1.3 * static_cast<double>(i));
    return v;
  }();
  const double tol = pa::relative_tolerance<float>(128, pa::vector_norm(q), pa::vector_norm(k));
  const pa::rope_rotation<float> ours{c};
  const float_angle_rotation engine{c};
  std::ostringstream table;
  table << "[law] relative_dependence by position octave (d=128, float entries), max deviation / "
           "tolerance: ours | float32 angle\n";
  double ours_max = 0.0;
  double engine_at_2_21 = 0.0;
  for (int j = 0; j < 31; j += 3) {
    double o = 0.0;
    double e = 0.0;
    for (std::uint64_t t = 0; t < 32; ++t) {
      const std::uint64_t m = (std::uint64_t{1} << j) + t * (std::uint64_t{1} << j) / 32;
      const std::uint64_t n = m / 2 + 5;
      const std::uint64_t s = 3 * m / 7 + 1;
      o = std::max(o, pa::relative_dependence(ours, m, n, s, q, k) / tol);
      e = std::max(e, pa::relative_dependence(engine, m, n, s, q, k) / tol);
    }
    table << "  2^" << j << ": " << o << " | " << e << "\n";
    ours_max = std::max(ours_max, o);
    if (j == 21) engine_at_2_21 = e;
  }
  std::cout << table.str() << std::flush;
  CHECK(ours_max <= 1.0);
  // The float32 angle is off by up to |angle| 2^-24: far beyond the tolerance at 2^21.
  CHECK(engine_at_2_21 > 100.0);
}

// ---- negative controls of the rotation laws --------------------------------------------------

TEST_CASE("negative control: a rotation scaled by 1 + 2^-20 breaks orthogonality and norms",
          "[laws][negative]") {
  rc::prop("scaled rotations fail orthogonality and norm_preservation", [] {
    const LawCase c = *law_case();
    const std::vector<pm::dd> t = thetas_of(c.rope);
    const scaled_rotation rot{{c.rope.config, t}, 1.0 + 0x1p-20};
    // B^T B = (1 + 2^-20)^2 I: beyond even the float tolerance. The norm grows by about
    // 2^-20 ||x_rotated||^2 / ||x||, which partial rotary can make small: the double tolerance.
    RC_ASSERT(pa::orthogonality(rot, c.m) > pa::orthogonality_tolerance<float>());
    RC_ASSERT(pa::norm_preservation(rot, c.m, c.q) >
              pa::norm_tolerance<double>(c.rope.config.head_dim, pa::vector_norm(c.q)));
  });
  const rope_config c = kLlama;
  CHECK(pa::orthogonality(shear_rotation{c, 1e-9}, 0) > pa::orthogonality_tolerance<double>());
  // Float entries do not meet the double tolerance: the bounds are not vacuous.
  CHECK(pa::orthogonality(pa::rope_rotation<float>{c}, 16777215) >
        pa::orthogonality_tolerance<double>());
}

TEST_CASE("negative control: an absolute-position rotation breaks only relative_dependence",
          "[laws][negative]") {
  rc::prop("absolute-position rotations fail relative_dependence", [&] {
    const LawCase c = *law_case();
    const std::vector<pm::dd> t = thetas_of(c.rope);
    const absolute_rotation rot{&t, c.rope.config};
    const std::uint32_t d = c.rope.config.head_dim;
    // Still a rotation.
    RC_ASSERT(pa::orthogonality(rot, c.m) <= pa::orthogonality_tolerance<double>());
    RC_ASSERT(pa::norm_preservation(rot, c.m, c.q) <=
              pa::norm_tolerance<double>(d, pa::vector_norm(c.q)));
    // (m mod 3) - (n mod 3) changes from 7, 3 to 9, 5, and from 7, 2 to the pair 5 apart.
    RC_ASSERT(pa::relative_dependence(rot, 7, 3, 2, c.q, c.k) >
              pa::relative_tolerance<double>(d, pa::vector_norm(c.q), pa::vector_norm(c.k)));
    RC_ASSERT(pa::relative_dependence_blocks(rot, 7, 2) > pa::relative_blocks_tolerance<double>());
  });
}

#ifdef POSENC_TEST_HAVE_TABLES_ROTATION
TEST_CASE("the laws hold for the tables' rotation: its pairs are the entries checked here",
          "[laws][tables]") {
  rc::prop("rotation_pairs<T> equals rope_rotation<T> entry for entry", [] {
    const LawCase c = *law_case();
    const rope_config& cfg = c.rope.config;
    const std::vector<pm::dd> t = thetas_of(c.rope);
    std::vector<posenc::pair_rotation<float>> pf(cfg.rotary_dim / 2);
    std::vector<posenc::pair_rotation<double>> pd(cfg.rotary_dim / 2);
    RC_ASSERT(posenc::rotation_pairs<float>(cfg, c.m, pf.data(), c.rope.seq_len) ==
              posenc::rope_error::ok);
    RC_ASSERT(posenc::rotation_pairs<double>(cfg, c.m, pd.data(), c.rope.seq_len) ==
              posenc::rope_error::ok);
    const vector_rotation<float> rf{cfg, t};
    const vector_rotation<double> rd{cfg, t};
    for (std::uint32_t i = 0; i < cfg.rotary_dim / 2; ++i) {
      const pa::block2 bf = rf.pair(i).at(c.m);
      const pa::block2 bd = rd.pair(i).at(c.m);
      RC_ASSERT(same_bits(static_cast<double>(pf[i].cos), bf.a));
      RC_ASSERT(same_bits(static_cast<double>(pf[i].sin), bf.c));
      RC_ASSERT(same_bits(pd[i].cos, bd.a));
      RC_ASSERT(same_bits(pd[i].sin, bd.c));
      RC_ASSERT(pf[i].first == rf.channels(i).first);
      RC_ASSERT(pf[i].second == rf.channels(i).second);
    }
  });
}
#endif
