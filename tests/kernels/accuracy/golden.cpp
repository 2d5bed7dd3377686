// Interop of the RoPE kernels with the reference numbers in tests/golden (README.md there):
//
// [hf]   HF transformers' Llama RoPE (hf_apply_rotary.json: LlamaRotaryEmbedding.forward,
//        rotate_half, apply_rotary_pos_emb; q, k [batch 1, heads 2, seq 8, dim 128], half layout,
//        base 1e4, positions 0 1 2 3 100 4095 4096 65535):
//        - our kernels on HF's own cos/sin reproduce HF's q_embed and k_embed: bit for bit with the
//          unfused order (HF computes q*cos + rotate_half(q)*sin with each product rounded, the
//          same operations), and the kernel equals the scalar reference of its FMA mode;
//        - with our tables (exact angles; positions 4096 and 65535 on the fly) every element is
//          within B_ours + B_hf of HF's, B_ours the a-priori bound of common.hpp and B_hf HF's:
//          its angle fl32(fl32(p) inv_freq_f32) is off the exact p theta_i by delta (computed in
//          MPFR per pair), torch's cosf/sinf are within 1 ulp of the correctly rounded value (the
//          golden file's own note: max 1 ulp), so |c_hf - C| <= delta + 1.5 ulp(c_hf), and the
//          float rotation adds u (2 + u) (|x_a c_hf| + |x_b s_hf|). HF's outputs are checked
//          against B_hf too (the model of HF's error is itself tested);
//        - ours within B_ours of exact and within 5e-7; where HF's angle error is measurable
//          (delta_max > 2^-20, i.e. p >= 4096), our max error is below HF's.
//        HF's [batch, heads, seq, dim] tensors are read in place with strides (token stride 128,
//        head stride 8 * 128) and also transposed to our dense [tokens, heads, dim]: same bits.
// [ggml] ggml_rope_ext NORM (interleaved), base 1e4, d 128, 4 heads, 16 positions 0..10^6
//        (ggml_rope_norm_b1e4_d128.json and _angles): |ours - ggml| <= 2e-7 (1 + p) per element
//        (the README's tolerance: ggml's running float32 product theta *= theta_scale), and ours
//        against the exact angles of the _angles file (long double p base^(-2i/d), parsed as long
//        double; checked against MPFR's own angle first) within B_ours and within 5e-7; ggml's
//        error is printed, and ours is below it where ggml's exceeds our bound.
// The directory comes from POSENC_GOLDEN_DIR; a missing or unreadable file fails the test, naming
// the file. meson registers these tests only when nlohmann_json is found.
#include <posenc/frequencies/rope.hpp>
#include <posenc/kernels/rope.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/tables/runtime_rope_cache.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#if POSENC_TEST_HAVE_JSON
#include <nlohmann/json.hpp>

#include "golden/golden.hpp"
#endif

#include "common.hpp"
#include "support/check.hpp"
#include "support/mpfr_ref.hpp"

using namespace posenc_test;
using namespace posenc_test::kacc;
using posenc::rope_config;
using posenc::rope_layout;

#if !POSENC_TEST_HAVE_JSON

TEST_CASE("kernels/golden: needs nlohmann_json", "[golden][hf][ggml]") {
  FAIL("built without nlohmann_json: the golden data cannot be read");
}

#else

namespace {

constexpr std::size_t kCached = 4096;

// ulp of a float: the spacing above |v| (2^-149 for 0 and subnormals).
double ulp32(float v) {
  const float a = std::fabs(v);
  if (a < 0x1p-126f) return 0x1p-149;
  return std::ldexp(1.0, std::ilogb(a) - 23);
}

using json = nlohmann::json;
// Numbers parsed as long double (the _angles file prints long double angles with 21 digits).
using json_ld = nlohmann::basic_json<std::map, std::vector, std::string, bool, std::int64_t,
                                     std::uint64_t, long double>;

float hex_float(const json& h) {
  return std::bit_cast<float>(
      static_cast<std::uint32_t>(std::stoul(h.get<std::string>(), nullptr, 16)));
}

std::vector<float> hex_array(const json& a) {
  std::vector<float> v;
  for (const json& h : a.at("hex")) v.push_back(hex_float(h));
  return v;
}

// The golden file's parameters are the ones these tests are written for.
void require_parameters(const json& par,
                        std::initializer_list<std::pair<const char*, double>> expected) {
  for (const auto& [key, value] : expected) {
    INFO("parameter " << key);
    REQUIRE(par.at(key).get<double>() == value);
  }
}

}  // namespace

TEST_CASE("kernels/golden: HF transformers apply_rotary_pos_emb", "[golden][hf]") {
  const json g = posenc_test::golden::load("hf_apply_rotary.json");
  const json& par = g.at("parameters");
  require_parameters(par, {{"head_dim", 128.0},
                           {"num_heads", 2.0},
                           {"seq_len", 8.0},
                           {"rope_theta", 10000.0},
                           {"attention_scaling", 1.0}});
  constexpr std::size_t T = 8, NH = 2, D = 128, H = 64;
  const std::vector<std::int64_t> ids = par.at("positions").get<std::vector<std::int64_t>>();
  REQUIRE(ids.size() == T);
  const std::vector<float> q = hex_array(g.at("q")), k = hex_array(g.at("k"));
  const std::vector<float> q_hf = hex_array(g.at("q_embed")), k_hf = hex_array(g.at("k_embed"));
  const std::vector<float> cos_hf = hex_array(g.at("cos")), sin_hf = hex_array(g.at("sin"));
  const std::vector<float> inv_hf = hex_array(g.at("inv_freq"));
  REQUIRE(q.size() == T * NH * D);
  REQUIRE(k.size() == T * NH * D);
  REQUIRE(q_hf.size() == T * NH * D);
  REQUIRE(k_hf.size() == T * NH * D);
  REQUIRE(cos_hf.size() == T * D);
  REQUIRE(inv_hf.size() == H);

  // HF's layout [1, heads, seq, dim] as our [tokens, heads, dim] view: strides 128 and 8 * 128.
  auto hf_view = [&](auto* data) {
    return pk::tensor_view<std::remove_pointer_t<decltype(data)>>{data, T, NH, D, D, T * D};
  };
  const pk::token_positions pos = pk::token_positions::of(ids);

  // 1. Our kernels on HF's own cos/sin (compact rows from the first half; HF repeats them).
  std::vector<float> cc(T * H), ss(T * H);
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t i = 0; i < H; ++i) {
      REQUIRE(same_bits(cos_hf[t * D + i], cos_hf[t * D + i + H]));
      REQUIRE(same_bits(sin_hf[t * D + i], sin_hf[t * D + i + H]));
      cc[t * H + i] = cos_hf[t * D + i];
      ss[t * H + i] = sin_hf[t * D + i];
    }
  }
  // Row t holds the values of token t: index the table by token (positions 0..7).
  pk::rope_table hf_table;
  hf_table.cos = cc.data();
  hf_table.sin = ss.data();
  hf_table.positions = T;
  hf_table.rotary_dim = static_cast<std::uint32_t>(D);
  hf_table.layout = rope_layout::half;
  {
    std::vector<float> yq(q.size()), yk(k.size()), fq(q.size()), fk(k.size());
    REQUIRE(pk::rope_reference_qk<float>(hf_table, hf_view(q.data()), hf_view(yq.data()),
                                         hf_view(k.data()), hf_view(yk.data()),
                                         pk::token_positions::from(0),
                                         pk::fma_mode::unfused) == pk::kernel_error::ok);
    REQUIRE(pk::rope_reference_qk<float>(hf_table, hf_view(q.data()), hf_view(fq.data()),
                                         hf_view(k.data()), hf_view(fk.data()),
                                         pk::token_positions::from(0),
                                         pk::fma_mode::fused) == pk::kernel_error::ok);
    std::size_t diff = 0;
    for (std::size_t e = 0; e < q.size(); ++e)
      diff += (same_bits(yq[e], q_hf[e]) ? 0 : 1) + (same_bits(yk[e], k_hf[e]) ? 0 : 1);
    INFO("unfused reference on HF's cos/sin vs HF's outputs: elements that differ");
    CHECK(diff == 0);
    for (const Kernel& kn : kernels_under_test()) {
      INFO("kernel " << kn.name);
      std::vector<float> oq(q.size()), ok(k.size());
      REQUIRE(kn.fn(hf_table, hf_view(q.data()), hf_view(oq.data()),
                    pk::token_positions::from(0)) == pk::kernel_error::ok);
      REQUIRE(kn.fn(hf_table, hf_view(k.data()), hf_view(ok.data()),
                    pk::token_positions::from(0)) == pk::kernel_error::ok);
      bool eq_unfused = true, eq_fused = true;
      for (std::size_t e = 0; e < q.size(); ++e) {
        eq_unfused = eq_unfused && same_bits(oq[e], yq[e]) && same_bits(ok[e], yk[e]);
        eq_fused = eq_fused && same_bits(oq[e], fq[e]) && same_bits(ok[e], fk[e]);
      }
      CHECK((eq_unfused || eq_fused));
      std::printf("HF golden, %s on HF's cos/sin: equal to HF bit for bit: %s\n", kn.name.c_str(),
                  eq_unfused ? "yes (unfused order)" : "no (fused order, == fused reference)");
    }
  }

  // 2. Our tables: exact angles, correctly rounded cos/sin (4096 and 65535 on the fly).
  const rope_config cfg{128, 128, 10000.0, rope_layout::half, posenc::scaling::none()};
  const auto cache = posenc::runtime_rope_cache<float>::make(cfg, kCached);
  const pk::rope_table table = pk::make_rope_table(cache.view(), cfg);

  // Exact C, S per (token, pair) and HF's angle error delta.
  std::vector<Mpfr> C(T * H), S(T * H);
  std::vector<double> delta(T * H);
  {
    Mpfr theta, angle(kPrec + 64), af, d;
    mpfr_set_ui(af, 1, MPFR_RNDN);
    for (std::size_t i = 0; i < H; ++i) {
      set_pow_ratio(theta, 10000.0, -2 * static_cast<std::int64_t>(i), 128);
      for (std::size_t t = 0; t < T; ++t) {
        const auto p = static_cast<std::uint64_t>(ids[t]);
        mpfr_mul_ui(angle, theta, static_cast<unsigned long>(p), MPFR_RNDN);
        exact_cos_sin(angle, af, C[t * H + i], S[t * H + i]);
        const float a_hf = static_cast<float>(p) * inv_hf[i];  // HF's one float32 product
        mpfr_sub_d(d, angle, static_cast<double>(a_hf), MPFR_RNDN);
        delta[t * H + i] = std::fabs(mpfr_get_d(d, MPFR_RNDU));
      }
    }
  }

  for (const Kernel& kn : kernels_under_test()) {
    INFO("kernel " << kn.name);
    std::vector<float> oq(q.size()), ok(k.size());
    REQUIRE(kn.fn(table, hf_view(q.data()), hf_view(oq.data()), pos) == pk::kernel_error::ok);
    REQUIRE(kn.fn(table, hf_view(k.data()), hf_view(ok.data()), pos) == pk::kernel_error::ok);
    // The same through a dense transposed copy.
    {
      std::vector<float> dq(q.size()), dy(q.size());
      for (std::size_t h = 0; h < NH; ++h)
        for (std::size_t t = 0; t < T; ++t)
          for (std::size_t c = 0; c < D; ++c) dq[(t * NH + h) * D + c] = q[(h * T + t) * D + c];
      REQUIRE(kn.fn(table, pk::dense<const float>(dq.data(), T, NH, D),
                    pk::dense(dy.data(), T, NH, D), pos) == pk::kernel_error::ok);
      std::size_t diff = 0;
      for (std::size_t h = 0; h < NH; ++h)
        for (std::size_t t = 0; t < T; ++t)
          for (std::size_t c = 0; c < D; ++c)
            diff += same_bits(dy[(t * NH + h) * D + c], oq[(h * T + t) * D + c]) ? 0 : 1;
      CHECK(diff == 0);
    }
    // Table values the kernel used, read back with probes (x_a = 1, x_b = 0).
    std::vector<float> pc;
    REQUIRE(read_table(kn, table, pos, T, D, pc) == pk::kernel_error::ok);

    std::size_t ours_bad = 0, hf_bad = 0, diff_bad = 0, table_bad = 0;
    double max_diff = 0.0, max_diff_ratio = 0.0;
    std::printf("HF golden, %s with our tables:\n", kn.name.c_str());
    std::printf("  %8s %12s %12s %14s %12s\n", "p", "ours-exact", "HF-exact", "|ours-HF|",
                "HF delta max");
    ExactPair ex;
    std::size_t measurable = 0;
    for (std::size_t t = 0; t < T; ++t) {
      double e_ours = 0.0, e_hf = 0.0, d_max = 0.0, dd_max = 0.0;
      for (const std::vector<float>* xv : {&q, &k}) {
        const std::vector<float>& y = xv == &q ? oq : ok;
        const std::vector<float>& yh = xv == &q ? q_hf : k_hf;
        for (std::size_t h = 0; h < NH; ++h) {
          const std::size_t row = (h * T + t) * D;
          for (std::size_t i = 0; i < H; ++i) {
            const float c = pc[t * D + i], s = pc[t * D + i + H];
            const double Cd = mpfr_get_d(C[t * H + i], MPFR_RNDN);
            const double Sd = mpfr_get_d(S[t * H + i], MPFR_RNDN);
            if (abs_err(c, C[t * H + i]) > kTableRel * std::fabs(Cd) + kEta) ++table_bad;
            if (abs_err(s, S[t * H + i]) > kTableRel * std::fabs(Sd) + kEta) ++table_bad;
            const float ch = cos_hf[t * D + i], sh = sin_hf[t * D + i];
            const double dl = delta[t * H + i];
            d_max = std::max(d_max, dl);
            const auto [a, b] = expected_channels(rope_layout::half, D, i);
            const double xa = (*xv)[row + a], xb = (*xv)[row + b];
            ex.set((*xv)[row + a], (*xv)[row + b], C[t * H + i], S[t * H + i]);
            for (int side = 0; side < 2; ++side) {
              const std::size_t ch_i = side == 0 ? a : b;
              const double xs = side == 0 ? xa : xb, xp = side == 0 ? xb : xa;
              mpfr_srcptr Y = side == 0 ? ex.ya.get() : ex.yb.get();
              const double b_ours = element_bound(xs, xp, Cd, Sd, c, s);
              const double b_hf =
                  std::fabs(xs) * (dl + 1.5 * ulp32(ch)) + std::fabs(xp) * (dl + 1.5 * ulp32(sh)) +
                  kU * (2.0 + kU) * (std::fabs(xs * ch) + std::fabs(xp * sh)) + kEta;
              const double eo = abs_err(y[row + ch_i], Y), eh = abs_err(yh[row + ch_i], Y);
              const double d = std::fabs(static_cast<double>(y[row + ch_i]) - yh[row + ch_i]);
              e_ours = std::max(e_ours, eo);
              e_hf = std::max(e_hf, eh);
              dd_max = std::max(dd_max, d);
              max_diff_ratio = std::max(max_diff_ratio, d / (b_ours + b_hf));
              if (eo > b_ours || eo > kIssueLimit) ++ours_bad;
              if (eh > b_hf) ++hf_bad;
              if (d > b_ours + b_hf) ++diff_bad;
            }
          }
        }
      }
      max_diff = std::max(max_diff, dd_max);
      std::printf("  %8lld %12.3e %12.3e %14.3e %12.3e\n", static_cast<long long>(ids[t]), e_ours,
                  e_hf, dd_max, d_max);
      if (d_max > 0x1p-20) {
        ++measurable;
        INFO("p = " << ids[t] << ": ours " << e_ours << ", HF " << e_hf);
        CHECK(e_ours < e_hf);
      }
    }
    std::printf("  max |ours - HF| %.3e; max |ours - HF| / (B_ours + B_hf) %.3f\n", max_diff,
                max_diff_ratio);
    std::fflush(stdout);
    CHECK(measurable >= 2);  // 4096 and 65535
    CHECK(table_bad == 0);
    CHECK(ours_bad == 0);
    CHECK(hf_bad == 0);
    CHECK(diff_bad == 0);
  }
}

TEST_CASE("kernels/golden: ggml ggml_rope_ext NORM (interleaved)", "[golden][ggml]") {
  const json g = posenc_test::golden::load("ggml_rope_norm_b1e4_d128.json");
  const json_ld ga = posenc_test::golden::load<json_ld>("ggml_rope_norm_b1e4_d128_angles.json");
  const json& par = g.at("params");
  require_parameters(par, {{"mode", 0.0},
                           {"head_dim", 128.0},
                           {"n_dims", 128.0},
                           {"freq_base", 10000.0},
                           {"freq_scale", 1.0},
                           {"ext_factor", 0.0},
                           {"attn_factor", 1.0}});
  const std::size_t NH = par.at("n_heads").get<std::size_t>();
  const std::size_t T = par.at("n_tokens").get<std::size_t>();
  constexpr std::size_t D = 128, H = 64;
  const std::vector<std::int64_t> ids = g.at("positions").get<std::vector<std::int64_t>>();
  REQUIRE(ids.size() == T);
  REQUIRE(ga.at("positions").get<std::vector<std::int64_t>>() == ids);
  // Every value is a float printed with 17 digits: the double parsed is that float exactly.
  auto floats = [](const json& a) {
    std::vector<float> v;
    for (const json& e : a) {
      const double d = e.get<double>();
      v.push_back(static_cast<float>(d));
      REQUIRE(static_cast<double>(v.back()) == d);
    }
    return v;
  };
  const std::vector<float> x = floats(g.at("input")), y_ggml = floats(g.at("output"));
  REQUIRE(x.size() == T * NH * D);
  REQUIRE(y_ggml.size() == T * NH * D);
  const json_ld& th = ga.at("theta_exact");
  REQUIRE(th.size() == T);

  // Exact angles: the file's long double ones, checked against MPFR's p * 10000^(-2i/128). A long
  // double pow and product are within a few ulp (2^-63 relative each): allow 2^-59 relative.
  std::vector<Mpfr> C(T * H), S(T * H);
  double worst_angle_rel = 0.0;
  {
    Mpfr theta, angle(kPrec + 64), file_angle, af, d;
    mpfr_set_ui(af, 1, MPFR_RNDN);
    for (std::size_t t = 0; t < T; ++t) {
      for (std::size_t i = 0; i < H; ++i) {
        const long double a_file = th.at(t).at(i).get<long double>();
        set_pow_ratio(theta, 10000.0, -2 * static_cast<std::int64_t>(i), 128);
        mpfr_mul_ui(angle, theta, static_cast<unsigned long>(ids[t]), MPFR_RNDN);
        mpfr_set_ld(file_angle, a_file, MPFR_RNDN);
        mpfr_sub(d, file_angle, angle, MPFR_RNDN);
        const double rel = ids[t] == 0
                               ? std::fabs(mpfr_get_d(d, MPFR_RNDN))
                               : std::fabs(mpfr_get_d(d, MPFR_RNDN) / mpfr_get_d(angle, MPFR_RNDN));
        worst_angle_rel = std::max(worst_angle_rel, rel);
        exact_cos_sin(file_angle, af, C[t * H + i], S[t * H + i]);
      }
    }
  }
  std::printf("ggml golden: _angles theta_exact vs MPFR: max relative difference %s\n",
              log2_str(worst_angle_rel).c_str());
  CHECK(worst_angle_rel <= 0x1p-59);

  const rope_config cfg{128, 128, 10000.0, rope_layout::interleaved, posenc::scaling::none()};
  const auto cache = posenc::runtime_rope_cache<float>::make(cfg, kCached);
  const pk::rope_table table = pk::make_rope_table(cache.view(), cfg);
  const pk::token_positions pos = pk::token_positions::of(ids);
  for (const Kernel& kn : kernels_under_test()) {
    INFO("kernel " << kn.name);
    std::vector<float> y(x.size());
    REQUIRE(kn.fn(table, pk::dense<const float>(x.data(), T, NH, D), pk::dense(y.data(), T, NH, D),
                  pos) == pk::kernel_error::ok);
    // Table values the kernel used, read back with probes (x_a = 1, x_b = 0).
    std::vector<float> pc;
    REQUIRE(read_table(kn, table, pos, T, D, pc) == pk::kernel_error::ok);
    std::printf("ggml golden, %s:\n", kn.name.c_str());
    std::printf("  %8s %12s %12s %14s %14s\n", "p", "ours-exact", "ggml-exact", "|ours-ggml|",
                "2e-7(1+p)");
    std::size_t readme_bad = 0, ours_bad = 0;
    // The exact angle is known to 2^-59 relative: the exact outputs to |x| (|a| 2^-59) more.
    ExactPair ex;
    for (std::size_t t = 0; t < T; ++t) {
      const double p = static_cast<double>(ids[t]);
      const double tol = 2e-7 * (1.0 + p);
      double e_ours = 0.0, e_ggml = 0.0, d_max = 0.0;
      for (std::size_t h = 0; h < NH; ++h) {
        const std::size_t row = (t * NH + h) * D;
        for (std::size_t i = 0; i < H; ++i) {
          const auto [a, b] = expected_channels(rope_layout::interleaved, D, i);
          const float c = pc[t * D + a], s = pc[t * D + b];
          const double Cd = mpfr_get_d(C[t * H + i], MPFR_RNDN);
          const double Sd = mpfr_get_d(S[t * H + i], MPFR_RNDN);
          const double ang_unc = 2.0 * p * 0x1p-59;  // |angle| <= p (theta_i <= 1), |xa|+|xb| <= 2
          ex.set(x[row + a], x[row + b], C[t * H + i], S[t * H + i]);
          for (int side = 0; side < 2; ++side) {
            const std::size_t ch = side == 0 ? a : b, other = side == 0 ? b : a;
            mpfr_srcptr Y = side == 0 ? ex.ya.get() : ex.yb.get();
            const double bound = element_bound(x[row + ch], x[row + other], Cd, Sd, c, s) + ang_unc;
            const double eo = abs_err(y[row + ch], Y), eg = abs_err(y_ggml[row + ch], Y);
            const double d = std::fabs(static_cast<double>(y[row + ch]) - y_ggml[row + ch]);
            e_ours = std::max(e_ours, eo);
            e_ggml = std::max(e_ggml, eg);
            d_max = std::max(d_max, d);
            if (d > tol) ++readme_bad;
            if (eo > bound || eo > kIssueLimit) ++ours_bad;
          }
        }
      }
      std::printf("  %8lld %12.3e %12.3e %14.3e %14.3e\n", static_cast<long long>(ids[t]), e_ours,
                  e_ggml, d_max, tol);
      if (e_ggml > element_bound_max(1.0)) {
        INFO("p = " << ids[t]);
        CHECK(e_ours < e_ggml);
      }
    }
    std::fflush(stdout);
    CHECK(readme_bad == 0);
    CHECK(ours_bad == 0);
  }
}

#endif
