// `posenc accuracy` (tools/cli/accuracy): the three methods' errors against an independent MPFR
// evaluation (tests/support/mpfr_ref.hpp, 256 bits) of the same three methods, at the default
// positions 1000, 65536 and 10^6 (and a few more), for head_dim 128 base 1e4, Llama-3.1's llama3
// scaling (base 5e5, factor 8), linear x4 with partial rotary (interleaved), and YaRN x4 (HF's
// attention factor path; ggml is not emulated for it).
//
// The reference, from exact values:
//   theta_i   MPFR: base^(-2i/R) (set_pow_ratio), divided by the factor for linear, and for
//             llama3 HF's band rule (modeling_rope_utils.py _compute_llama3_parameters) on the
//             exact wavelength; YaRN: the library's inv_freq_dd (its blend is not re-derived here)
//   C, S      af cos(p theta_i), af sin(p theta_i) in MPFR; af = 1, or 0.1 ln 4 + 1 for YaRN
//   posenc    C and S rounded once to float (MPFR's round_float)
//   HF        a = fl32(p) * inv32_i in float (IEEE, correctly rounded), then cos/sin of a
//             rounded to float by MPFR, times fl32(af) in float; inv32_i = the tool's
//             hf_inv_freq32, which the golden test below pins to HF's own float32 bits
//   ggml      ts = fl32(base32^(-2.0f/R)) by MPFR; theta = fl32(p); per pair fl32(cos(fs *
//             (theta / ff))) times fl32(af), theta *= ts in float; fs = 1.0f/factor (linear), ff
//             = fl32(default theta_i / llama3 theta_i) (llama3)
//   error     max over pairs of |value - C|, |value - S| (MPFR difference, rounded to double)
//
// Tolerance (error analysis): the tool's exact values are double-double, within 2^-90 relative
// (math/angle.hpp) and its theta_i within ~2^-100 relative, so they differ from MPFR's by at most
// p theta 2^-100 + 2 * 2^-90 < 2^-78 for p <= 10^6 (|C|, |S| <= af < 2). The float values each
// method produces are the same in both evaluations (each is one correctly rounded operation on
// the same floats) unless an exact value lies within 2^-78 of a float rounding midpoint, which
// none of the values here does (the comparison would show it). The tool forms the error in
// double with two roundings (relative 2^-52). Hence |tool - reference| <= 2^-51 ref + 2^-78.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <posenc/frequencies/rope.hpp>
#include <posenc/spec/rope.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/accuracy.hpp"
#include "cli/run.hpp"
#include "golden/golden.hpp"
#include "support.hpp"
#include "support/mpfr_ref.hpp"

using posenc_test::Mpfr;
using posenc_test::round_float;

namespace {

using posenc_test::run_cli;
using result = posenc_test::cli_result;

enum class kind { none, llama3, linear, yarn };

struct acc_case {
  const char* name;
  std::vector<std::string> flags;
  kind k;
  double base;
  std::uint32_t rotary_dim;
  double factor;
};

using posenc_test::config_of;

// theta_i of the case, exactly (MPFR) or from the library (YaRN).
void theta_of(const acc_case& ac, const posenc::rope_config& c, std::uint32_t i, Mpfr& theta,
              Mpfr& theta_default) {
  posenc_test::set_pow_ratio(theta_default, ac.base, -2 * static_cast<std::int64_t>(i),
                             static_cast<std::int64_t>(ac.rotary_dim));
  mpfr_set(theta, theta_default, MPFR_RNDN);
  if (ac.k == kind::linear) mpfr_div_d(theta, theta, ac.factor, MPFR_RNDN);
  if (ac.k == kind::llama3) {
    // HF _compute_llama3_parameters with low_freq_factor 1, high_freq_factor 4, L = 8192:
    // wavelen = 2 pi / theta; > L/1: theta/factor; < L/4: theta; else (1-s) theta/factor + s
    // theta with s = (L/wavelen - 1)/(4 - 1).
    const double L = 8192.0, lo = 1.0, hi = 4.0;
    Mpfr wl, t, s;
    mpfr_const_pi(wl, MPFR_RNDN);
    mpfr_mul_ui(wl, wl, 2, MPFR_RNDN);
    mpfr_div(wl, wl, theta_default, MPFR_RNDN);
    if (mpfr_cmp_d(wl, L / lo) > 0) {
      mpfr_div_d(theta, theta_default, ac.factor, MPFR_RNDN);
    } else if (mpfr_cmp_d(wl, L / hi) >= 0) {
      mpfr_d_div(s, L, wl, MPFR_RNDN);
      mpfr_sub_d(s, s, lo, MPFR_RNDN);
      mpfr_div_d(s, s, hi - lo, MPFR_RNDN);
      mpfr_div_d(t, theta_default, ac.factor, MPFR_RNDN);  // theta/factor
      // theta = (1 - s) t + s theta_default = t + s (theta_default - t)
      mpfr_sub(theta, theta_default, t, MPFR_RNDN);
      mpfr_mul(theta, theta, s, MPFR_RNDN);
      mpfr_add(theta, theta, t, MPFR_RNDN);
    }
  }
  if (ac.k == kind::yarn) {
    const posenc::math::dd d = posenc::inv_freq_dd(c, i);
    posenc_test::set_dd(theta, d.hi, d.lo);
  }
}

double abs_diff(float v, mpfr_srcptr exact) {
  Mpfr d;
  mpfr_sub_d(d, exact, static_cast<double>(v), MPFR_RNDN);
  return std::fabs(mpfr_get_d(d, MPFR_RNDN));
}

// cos and sin of a float, each correctly rounded to float.
void cos_sin_float(float a, float& c, float& s) {
  Mpfr x, sv, cv;
  mpfr_set_flt(x, a, MPFR_RNDN);
  mpfr_sin_cos(sv, cv, x, MPFR_RNDN);
  c = round_float(cv);
  s = round_float(sv);
}

posenc::cli::accuracy_point reference(const acc_case& ac, const posenc::rope_config& c,
                                      std::uint64_t p) {
  posenc::cli::accuracy_point r;
  r.position = p;
  const std::uint32_t pairs = ac.rotary_dim / 2;
  Mpfr af;
  if (ac.k == kind::yarn) {
    mpfr_set_d(af, 4.0, MPFR_RNDN);
    mpfr_log(af, af, MPFR_RNDN);
    mpfr_mul_d(af, af, 0.1, MPFR_RNDN);
    mpfr_add_ui(af, af, 1, MPFR_RNDN);
  } else {
    mpfr_set_ui(af, 1, MPFR_RNDN);
  }
  const float af32 = round_float(af);
  const float p32 = static_cast<float>(p);
  // ggml's theta_scale.
  Mpfr ts_exact, b;
  mpfr_set_flt(b, static_cast<float>(ac.base), MPFR_RNDN);
  const float expo = -2.0f / static_cast<float>(ac.rotary_dim);
  Mpfr e;
  mpfr_set_flt(e, expo, MPFR_RNDN);
  mpfr_pow(ts_exact, b, e, MPFR_RNDN);
  const float ts = round_float(ts_exact);
  const float fs = ac.k == kind::linear ? 1.0f / static_cast<float>(ac.factor) : 1.0f;
  float g_theta = p32;
  double e_ggml = 0.0;

  Mpfr theta, theta_default, angle(posenc_test::kPrec + 64), C, S, ratio;
  for (std::uint32_t i = 0; i < pairs; ++i) {
    theta_of(ac, c, i, theta, theta_default);
    mpfr_mul_ui(angle, theta, static_cast<unsigned long>(p), MPFR_RNDN);
    mpfr_sin_cos(S, C, angle, MPFR_RNDN);
    mpfr_mul(C, C, af, MPFR_RNDN);
    mpfr_mul(S, S, af, MPFR_RNDN);
    r.posenc = std::max({r.posenc, abs_diff(round_float(C), C), abs_diff(round_float(S), S)});

    const float a = p32 * posenc::cli::hf_inv_freq32(c, i, 0);
    float hc = 0.0f, hs = 0.0f;
    cos_sin_float(a, hc, hs);
    if (af32 != 1.0f) {
      hc *= af32;
      hs *= af32;
    }
    r.hf = std::max({r.hf, abs_diff(hc, C), abs_diff(hs, S)});

    if (ac.k != kind::yarn) {
      float ff = 1.0f;
      if (ac.k == kind::llama3) {
        mpfr_div(ratio, theta_default, theta, MPFR_RNDN);
        ff = round_float(ratio);
      }
      const float th = fs * (g_theta / ff);
      float gc = 0.0f, gs = 0.0f;
      cos_sin_float(th, gc, gs);
      gc *= af32;
      gs *= af32;
      e_ggml = std::max({e_ggml, abs_diff(gc, C), abs_diff(gs, S)});
      g_theta *= ts;
    }
  }
  if (ac.k != kind::yarn) r.ggml = e_ggml;
  return r;
}

bool close(double tool, double ref) {
  return std::fabs(tool - ref) <= 0x1p-51 * ref + 0x1p-78;
}

std::vector<acc_case> cases() {
  return {
      {"hd128 base1e4", {"--head-dim", "128"}, kind::none, 10000.0, 128, 1.0},
      {"llama3 x8 base5e5",
       {"--head-dim", "128", "--base", "500000", "--scaling", "llama3", "--factor", "8",
        "--original-max", "8192"},
       kind::llama3,
       500000.0,
       128,
       8.0},
      {"linear x4 R32 of 64 interleaved",
       {"--head-dim", "64", "--rotary-dim", "32", "--scaling", "linear", "--factor", "4",
        "--layout", "interleaved"},
       kind::linear,
       10000.0,
       32,
       4.0},
      {"yarn x4 hd64",
       {"--head-dim", "64", "--scaling", "yarn", "--factor", "4", "--original-max", "4096"},
       kind::yarn,
       10000.0,
       64,
       4.0},
  };
}

}  // namespace

TEST_CASE("tools/accuracy: the three methods vs an independent MPFR evaluation", "[accuracy]") {
  const std::vector<std::uint64_t> positions{1000, 65536, 1000000, 1, 4097, 131071};
  for (const acc_case& ac : cases()) {
    INFO("case " << ac.name);
    const posenc::cli::resolved_config rc = config_of(ac.flags);
    const posenc::rope_config c = rc.config();
    const posenc::cli::accuracy_result got = posenc::cli::compute_accuracy(c, positions, 0);
    REQUIRE(got.points.size() == positions.size());
    CHECK(got.rotary_dim == ac.rotary_dim);
    CHECK(got.ggml == (ac.k != kind::yarn));
    const double af = posenc::attention_factor(c);
    // Rounded once: half an ulp of the largest value (af), 2^-25 below 1 and 2^-24 in [1, 2).
    const double half_ulp = af < 1.0 ? 0x1p-25 : 0x1p-24;
    for (std::size_t k = 0; k < positions.size(); ++k) {
      const posenc::cli::accuracy_point& g = got.points[k];
      const posenc::cli::accuracy_point want = reference(ac, c, positions[k]);
      INFO("p = " << positions[k] << ": tool " << g.posenc << " " << g.hf << " "
                  << g.ggml.value_or(-1) << ", MPFR " << want.posenc << " " << want.hf << " "
                  << want.ggml.value_or(-1));
      CHECK(g.position == positions[k]);
      CHECK(close(g.posenc, want.posenc));
      CHECK(close(g.hf, want.hf));
      REQUIRE(g.ggml.has_value() == want.ggml.has_value());
      if (g.ggml) CHECK(close(*g.ggml, *want.ggml));
      CHECK(g.posenc <= half_ulp);
      // At 65536 and beyond the float32 angle is off by far more than a float ulp (the reason
      // for this tool): the comparison above is not a comparison of zeros.
      if (positions[k] >= 65536) {
        CHECK(g.hf > 100 * half_ulp);
        if (g.ggml) CHECK(*g.ggml > 100 * half_ulp);
      }
    }
  }
}

TEST_CASE("tools/accuracy: command output", "[accuracy]") {
  // Default positions, JSON: the same numbers as compute_accuracy, digit for digit.
  const result r = run_cli({"accuracy", "--head-dim", "128"});
  REQUIRE(r.status == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const posenc::cli::resolved_config rc = config_of({"--head-dim", "128"});
  const std::vector<std::uint64_t> dflt{1000, 65536, 1000000};
  const auto direct = posenc::cli::compute_accuracy(rc.config(), dflt, 0);
  REQUIRE(j.at("positions").size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    const nlohmann::json& e = j.at("positions")[k];
    CHECK(e.at("position").get<std::uint64_t>() == dflt[k]);
    CHECK(e.at("posenc").get<double>() == direct.points[k].posenc);
    CHECK(e.at("hf_float32_angle").get<double>() == direct.points[k].hf);
    CHECK(e.at("ggml_running_product").get<double>() == *direct.points[k].ggml);
  }
  // A single position (7:8) and a list; csv; yarn has no ggml column values.
  const result one =
      run_cli({"accuracy", "--head-dim", "64", "--positions", "7:8", "--format", "csv", "--scaling",
               "yarn", "--factor", "4", "--original-max", "4096"});
  REQUIRE(one.status == 0);
  CHECK(posenc_test::without_echo(one.out).starts_with(
      "position,posenc,hf_float32_angle,ggml_running_product\n7,"));
  CHECK(one.out.ends_with(",\n"));
  const result list =
      run_cli({"accuracy", "--head-dim", "8", "--positions", "1,2,3", "--format", "text"});
  REQUIRE(list.status == 0);
  const std::string list_text = posenc_test::without_echo(list.out);
  CHECK(std::count(list_text.begin(), list_text.end(), '\n') == 5);
  // Errors.
  const result range = run_cli({"accuracy", "--head-dim", "8", "--positions", "0:5:0"});
  CHECK(range.status == 2);
  const result many = run_cli({"accuracy", "--head-dim", "8", "--positions", "0:4097"});
  CHECK(many.status == 2);
  CHECK(many.err == "posenc: --positions covers 4097 positions; at most 4096 for accuracy\n");
  const result big = run_cli({"accuracy", "--head-dim", "8", "--positions", "1,4294967296"});
  CHECK(big.status == 2);
  const result svg_elsewhere = run_cli({"freqs", "--head-dim", "8", "--svg", "x.svg"});
  CHECK(svg_elsewhere.status == 2);
  CHECK(svg_elsewhere.err == "posenc: --svg is not a flag of freqs (see posenc help freqs)\n");
  const result list_elsewhere = run_cli({"table", "--head-dim", "8", "--positions", "1,3"});
  CHECK(list_elsewhere.status == 2);
}

TEST_CASE("tools/accuracy: --svg writes the sweep", "[accuracy]") {
  const auto path = std::filesystem::temp_directory_path() / "posenc_accuracy_test.svg";
  const result r = run_cli({"accuracy", "--head-dim", "32", "--svg", path.string()});
  REQUIRE(r.status == 0);
  std::ifstream f(path);
  const std::string svg((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  CHECK(svg.find("<svg") != std::string::npos);
  std::size_t series = 0;
  for (std::size_t at = svg.find("class=\"series\""); at != std::string::npos;
       at = svg.find("class=\"series\"", at + 1))
    ++series;
  CHECK(series == 3);
  const auto sweep = posenc::cli::accuracy_sweep_positions();
  CHECK(sweep.front() == 1);
  CHECK(sweep.back() == 10000000);
  CHECK(std::is_sorted(sweep.begin(), sweep.end()));
}

TEST_CASE("tools/accuracy: the ggml column against ggml's own cos/sin (golden)",
          "[accuracy][golden]") {
  // tests/golden/ggml_rope_norm_b1e4_d128_angles.json holds the float32 cos and sin that
  // ggml_rope_ext (NORM, base 1e4, 128 dims, CPU) used at 16 positions up to 10^6. Their max
  // error against exact (MPFR) is the quantity the tool's ggml column emulates with correctly
  // rounded powf/cosf/sinf; glibc's cosf and sinf are within 1 ulp (<= 2^-24 for |v| <= 1) of
  // those, so the two maxima differ by at most 2^-24, given the same float angles.
  const nlohmann::json g = posenc_test::golden::load("ggml_rope_norm_b1e4_d128_angles.json");
  const std::vector<std::uint64_t> positions = g.at("positions").get<std::vector<std::uint64_t>>();
  const posenc::cli::resolved_config rc =
      config_of({"--head-dim", "128", "--layout", "interleaved"});
  const auto got = posenc::cli::compute_accuracy(rc.config(), positions, 0);
  Mpfr theta, angle(posenc_test::kPrec + 64), C, S;
  std::size_t compared = 0;
  for (std::size_t k = 0; k < positions.size(); ++k) {
    double worst = 0.0;
    for (std::uint32_t i = 0; i < 64; ++i) {
      posenc_test::set_pow_ratio(theta, 10000.0, -2 * static_cast<std::int64_t>(i), 128);
      mpfr_mul_ui(angle, theta, static_cast<unsigned long>(positions[k]), MPFR_RNDN);
      mpfr_sin_cos(S, C, angle, MPFR_RNDN);
      const auto c = g.at("cos_eff")[k][i].get<double>(), s = g.at("sin_eff")[k][i].get<double>();
      REQUIRE(static_cast<double>(static_cast<float>(c)) == c);  // float32 values
      worst =
          std::max({worst, abs_diff(static_cast<float>(c), C), abs_diff(static_cast<float>(s), S)});
    }
    INFO("p = " << positions[k] << ": ggml " << worst << ", tool " << *got.points[k].ggml);
    REQUIRE(got.points[k].ggml.has_value());
    CHECK(std::fabs(*got.points[k].ggml - worst) <= 0x1p-24);
    ++compared;
  }
  CHECK(compared == 16);
}

TEST_CASE("tools/accuracy: HF's float32 inv_freq bit for bit (golden)", "[accuracy][golden]") {
  // tests/golden/hf_rope_params.json: inv_freq as HF transformers computes it (torch 1.13,
  // CPU), for the scalings whose float32 arithmetic hf_inv_freq32 reproduces.
  const nlohmann::json g = posenc_test::golden::load("hf_rope_params.json");
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"default_hd128_base10000", {"--head-dim", "128"}},
      {"default_hd64_base500000", {"--head-dim", "64", "--base", "500000"}},
      {"linear_f4_hd128_base10000", {"--head-dim", "128", "--scaling", "linear", "--factor", "4"}},
      {"llama3_f8_lo1_hi4_orig8192_base500000_hd128",
       {"--head-dim", "128", "--base", "500000", "--scaling", "llama3", "--factor", "8",
        "--original-max", "8192"}},
  };
  std::size_t found = 0;
  for (const auto& [id, flags] : cases) {
    for (const nlohmann::json& gc : g.at("cases")) {
      if (gc.at("id") != id) continue;
      ++found;
      INFO("case " << id);
      const posenc::cli::resolved_config rc = config_of(flags);
      const posenc::rope_config c = rc.config();
      const auto& values = gc.at("inv_freq").at("values");
      REQUIRE(values.size() == c.rotary_dim / 2);
      std::size_t diff = 0, diff_rounded = 0;
      for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i) {
        const auto hf = static_cast<float>(values[i].get<double>());
        diff += posenc::cli::hf_inv_freq32(c, i, 0) != hf ? 1 : 0;
        diff_rounded += posenc::inv_freq<float>(c, i) != hf ? 1 : 0;
      }
      CHECK(diff == 0);
      // HF's float32 values are not the correctly rounded ones (hence the emulation).
      CHECK(diff_rounded > 0);
    }
  }
  CHECK(found == cases.size());
}
