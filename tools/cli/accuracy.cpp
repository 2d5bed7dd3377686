#include "cli/accuracy.hpp"

#include <nlohmann/json.hpp>

#include <posenc/frequencies/rope.hpp>
#include <posenc/math/angle.hpp>
#include <posenc/math/pow.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/math/trig.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "cli/error.hpp"
#include "cli/output.hpp"
#include "cli/run.hpp"

namespace posenc::cli {

namespace {

// |f - (hi + lo)| (see emit.cpp: f - hi is exact or rounded once; lo is below 2^-53 |hi|).
double distance(float f, math::dd v) {
  return std::fabs((static_cast<double>(f) - v.hi) - v.lo);
}

// What every method needs per pair, computed once.
struct pair_data {
  math::dd theta;        // inv_freq_dd
  float inv_freq32 = 0;  // HF: inv_freq as float32
  float ggml_ff = 1.0f;  // ggml: freq_factors[i] (1 without a rope_freqs tensor)
};

struct method_data {
  std::vector<pair_data> pairs;
  math::dd af;
  float af32 = 1.0f;
  bool ggml = false;
  float ggml_theta_scale = 1.0f;
  float ggml_freq_scale = 1.0f;
};

method_data prepare(const rope_config& c, std::uint64_t seq_len) {
  method_data m;
  m.af = attention_factor_dd(c);
  m.af32 = math::round_to<float>(m.af);
  const std::uint32_t R = c.rotary_dim;
  const scaling_type t = c.scaling.type;
  m.ggml = t == scaling_type::none || t == scaling_type::linear || t == scaling_type::llama3;
  rope_config plain = c;
  plain.scaling = scaling::none();
  for (std::uint32_t i = 0; i < R / 2; ++i) {
    pair_data d;
    d.theta = inv_freq_dd(c, i, seq_len);
    d.inv_freq32 = hf_inv_freq32(c, i, seq_len);
    if (!std::isfinite(d.theta.hi) || !(d.theta.hi >= 0.0) || !std::isfinite(d.inv_freq32) ||
        d.inv_freq32 == 0.0f)
      invalid("posenc: inv_freq of pair " + std::to_string(i) +
              " is not a positive finite float32");
    // llama3: the converter's per-pair factor, default inv_freq / llama3 inv_freq.
    if (t == scaling_type::llama3)
      d.ggml_ff = math::round_to<float>(inv_freq_dd(plain, i) / d.theta);
    m.pairs.push_back(d);
  }
  if (m.ggml) {
    // ggml_compute_forward_rope_flt: theta_scale = powf(freq_base, -2.0f/n_dims).
    const float base32 = static_cast<float>(c.base);
    const float expo = -2.0f / static_cast<float>(R);
    m.ggml_theta_scale = math::pow(base32, expo);
    // llama.cpp: rope_freq_scale_train = 1.0f/ropescale (linear); 1 otherwise.
    if (t == scaling_type::linear) m.ggml_freq_scale = 1.0f / static_cast<float>(c.scaling.factor);
  }
  return m;
}

accuracy_point at_position(const method_data& m, std::uint64_t p) {
  accuracy_point r;
  r.position = p;
  const float p32 = static_cast<float>(p);  // torch's position_ids.float(), ggml's (float)pos
  float theta = p32;                        // ggml's running angle
  double e_ggml = 0.0;
  for (const pair_data& d : m.pairs) {
    const math::sincos_result<math::dd> v = math::sincos_of_product_dd(p, d.theta);
    const math::dd C = v.cos * m.af, S = v.sin * m.af;
    // posenc: rounded once.
    r.posenc = std::max(
        {r.posenc, distance(math::round_to<float>(C), C), distance(math::round_to<float>(S), S)});
    // HF: float32 angle, float32 cos/sin, float32 attention scaling.
    const float a = p32 * d.inv_freq32;
    math::sincos_result<float> h = math::sincos(a);
    if (m.af32 != 1.0f) {
      h.cos = h.cos * m.af32;
      h.sin = h.sin * m.af32;
    }
    r.hf = std::max({r.hf, distance(h.cos, C), distance(h.sin, S)});
    // ggml: rope_yarn(theta / ff, freq_scale, ...) with ext_factor 0, then theta *= theta_scale.
    if (m.ggml) {
      const float th = m.ggml_freq_scale * (theta / d.ggml_ff);
      const math::sincos_result<float> g = math::sincos(th);
      const float gc = g.cos * m.af32, gs = g.sin * m.af32;
      e_ggml = std::max({e_ggml, distance(gc, C), distance(gs, S)});
      theta *= m.ggml_theta_scale;
    }
  }
  if (m.ggml) r.ggml = e_ggml;
  return r;
}

std::string g17(double x) {
  return format_double(x);
}

std::string g4(double x) {
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific, 3);
  return std::string(buf, static_cast<std::size_t>(r.ptr - buf));
}

}  // namespace

bool hf_inv_freq_emulated(scaling_type t) {
  return t == scaling_type::none || t == scaling_type::linear || t == scaling_type::llama3;
}

float hf_inv_freq32(const rope_config& c, std::uint32_t i, std::uint64_t seq_len) {
  const scaling_type t = c.scaling.type;
  if (!hf_inv_freq_emulated(t)) return math::round_to<float>(inv_freq_dd(c, i, seq_len));
  // _compute_default_rope_parameters: 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)),
  // all float32 (the Python base and 1.0 taken as float32 scalars).
  const float expo = static_cast<float>(2 * i) / static_cast<float>(c.rotary_dim);
  const float inv = 1.0f / math::pow(static_cast<float>(c.base), expo);
  const auto factor = static_cast<float>(c.scaling.factor);
  if (t == scaling_type::linear) return inv / factor;  // inv_freq /= factor
  if (t == scaling_type::none) return inv;
  // _compute_llama3_parameters, in float32 tensor arithmetic on inv (Python floats as float32
  // scalars): wavelen = 2 pi / inv_freq; low band / factor; medium band the smoothed blend
  // (1 - smooth) * inv_freq / factor + smooth * inv_freq with smooth = (L / wavelen - low) /
  // (high - low); the comparisons are strict as in HF, so the band edges belong to the medium
  // band.
  // Python computes L / low_freq_factor, L / high_freq_factor and high - low in double; torch
  // takes them as float32 scalars.
  const double Ld = c.scaling.original_max_position_embeddings;
  const double lo = c.scaling.low_freq_factor, hi = c.scaling.high_freq_factor;
  const auto L = static_cast<float>(Ld);
  const auto low = static_cast<float>(lo);
  const auto low_wavelen = static_cast<float>(Ld / lo), high_wavelen = static_cast<float>(Ld / hi);
  const float wavelen = static_cast<float>(2.0 * 3.141592653589793) / inv;
  const float scaled = wavelen > low_wavelen ? inv / factor : inv;
  if (wavelen < high_wavelen || wavelen > low_wavelen) return scaled;
  const float smooth = (L / wavelen - low) / static_cast<float>(hi - lo);
  // One rounding per operation (this file is built with -ffp-contract=off).
  const float left = (1.0f - smooth) * scaled / factor;
  const float right = smooth * scaled;
  return left + right;
}

std::vector<std::uint64_t> accuracy_sweep_positions() {
  std::vector<std::uint64_t> p;
  for (int k = 0; k <= 7 * 16; ++k) {
    const auto v = static_cast<std::uint64_t>(std::llround(std::pow(10.0, k / 16.0)));
    if (p.empty() || v != p.back()) p.push_back(v);
  }
  return p;
}

accuracy_result compute_accuracy(const rope_config& c, std::span<const std::uint64_t> positions,
                                 std::uint64_t seq_len) {
  const method_data m = prepare(c, seq_len);
  accuracy_result r;
  r.rotary_dim = c.rotary_dim;
  r.attention_factor = math::to_double(m.af);
  r.ggml = m.ggml;
  for (const std::uint64_t p : positions) r.points.push_back(at_position(m, p));
  return r;
}

void write_accuracy(std::ostream& out, const accuracy_result& r, output_format f,
                    const config_echo& echo) {
  out << echo_prefix(echo, f);
  if (f == output_format::json) {
    nlohmann::ordered_json j;
    j["rotary_dim"] = r.rotary_dim;
    j["attention_factor"] = r.attention_factor;
    j["exact"] = "double-double (error < 1e-25)";
    j["positions"] = nlohmann::ordered_json::array();
    for (const accuracy_point& a : r.points) {
      nlohmann::ordered_json e;
      e["position"] = a.position;
      e["posenc"] = a.posenc;
      e["hf_float32_angle"] = a.hf;
      e["ggml_running_product"] =
          a.ggml ? nlohmann::ordered_json(*a.ggml) : nlohmann::ordered_json(nullptr);
      j["positions"].push_back(e);
    }
    // The echo as every command writes it, on the first line; then the object's other members.
    out << "{\"config\": " << echo_json(echo) << "," << j.dump(2).substr(1) << '\n';
    return;
  }
  if (f == output_format::csv) {
    out << "position,posenc,hf_float32_angle,ggml_running_product\n";
    for (const accuracy_point& a : r.points)
      out << a.position << ',' << g17(a.posenc) << ',' << g17(a.hf) << ','
          << (a.ggml ? g17(*a.ggml) : std::string()) << '\n';
    return;
  }
  out << "max abs error of float32 cos/sin vs exact (double-double), over " << r.rotary_dim / 2
      << " pairs\n";
  out << "  position      posenc  HF fp32 angle  ggml running product\n";
  for (const accuracy_point& a : r.points) {
    std::string pos = std::to_string(a.position);
    out << std::string(pos.size() < 10 ? 10 - pos.size() : 0, ' ') << pos << "  " << g4(a.posenc)
        << "      " << g4(a.hf) << "             " << (a.ggml ? g4(*a.ggml) : std::string("n/a"))
        << '\n';
  }
}

svg::plot accuracy_plot(const accuracy_result& r, const std::string& title) {
  svg::plot p;
  p.title = title;
  p.x.title = "position p";
  p.x.log = true;
  p.y.title = "max abs error of float32 cos/sin";
  p.y.log = true;
  svg::series ours;
  ours.name = "posenc float32 table (rounded once)";
  svg::series hf;
  hf.name = "HF transformers: float32 angle";
  svg::series gg;
  gg.name = "ggml CPU: float32 running product";
  for (const accuracy_point& a : r.points) {
    const auto x = static_cast<double>(a.position);
    ours.x.push_back(x);
    ours.y.push_back(a.posenc);
    hf.x.push_back(x);
    hf.y.push_back(a.hf);
    if (a.ggml) {
      gg.x.push_back(x);
      gg.y.push_back(*a.ggml);
    }
  }
  p.lines.push_back(ours);
  p.lines.push_back(hf);
  if (r.ggml) p.lines.push_back(gg);
  return p;
}

int run_accuracy(const invocation& inv, std::ostream& out) {
  const resolved_config rc = configure(inv);
  const rope_config c = rc.config();
  std::vector<std::uint64_t> pos = inv.accuracy.positions;
  if (pos.empty())
    pos.assign(std::begin(accuracy_default_positions), std::end(accuracy_default_positions));
  const std::vector<std::uint64_t> sweep =
      inv.svg ? accuracy_sweep_positions() : std::vector<std::uint64_t>{};
  const std::uint64_t pairs = c.rotary_dim / 2;
  const std::uint64_t evaluations = (pos.size() + sweep.size()) * pairs;
  const std::uint64_t limit = inv.work_limit.value_or(accuracy_work_limit);
  if (evaluations > limit)
    invalid("posenc: accuracy would evaluate " + std::to_string(pos.size() + sweep.size()) +
            " positions x " + std::to_string(pairs) + " pairs = " + std::to_string(evaluations) +
            ", beyond the work budget of " + std::to_string(limit) +
            "; give fewer --positions or a smaller --head-dim / --rotary-dim" +
            (inv.svg ? " (--svg adds " + std::to_string(sweep.size()) + " positions)" : "") +
            ", or raise the budget with --work-limit N");
  const accuracy_result r = compute_accuracy(c, pos, inv.seq_len);
  if (inv.svg) {
    const accuracy_result s = compute_accuracy(c, sweep, inv.seq_len);
    const std::string title = "RoPE float32 cos/sin error vs exact: head_dim " +
                              std::to_string(c.head_dim) + ", rotary_dim " +
                              std::to_string(c.rotary_dim) + ", base " + format_double(c.base);
    svg::write_file(*inv.svg, accuracy_plot(s, title));
  }
  write_accuracy(out, r, inv.format, rc.echo);
  return exit_ok;
}

}  // namespace posenc::cli
