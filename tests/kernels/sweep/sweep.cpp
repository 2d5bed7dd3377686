// The RoPE kernels on every path and shape against an MPFR oracle that shares no code with them
// (support/rotation_oracle.hpp: exact theta_i of every scaling, exact attention factor, exact
// rotation of the exact inputs, and the error bound derived there). Every output element of every
// call is checked: rotated channels within rotation_bound, pass-through channels bit for bit, and
// every other byte of the output buffer (guards, the v part and the gaps of a fused qkv buffer)
// untouched, the input untouched when out of place.
//
// Runners: every ISA of the dispatch library that this CPU supports (isa.rope<T>(), named by
// isa.name; the others print "skipped"), plus the header-only entry points
// (posenc/kernels/rope.hpp, the build-time architecture of this TU), and for _Float16 (where
// POSENC_HAS_FLOAT16) the header-only kernels and the dispatched _Float16 overloads (active ISA). W
// = the ISA's floats per vector (16 avx512bw, 8 avx2, 4 sse, 1 scalar).
//
// Covering set (each dimension varied against a base, pairwise where the code branches on both):
//   base: runtime compact table, scaling none, dense view, out of place, positions from(5).
//   G1 shapes x tails: runner x storage x head_dim {2, 4, 6, 32, 64, 80, 96, 128, 192, 256} x
//      tokens {1, 2, 3, W - 1, W, W + 1, 1000} x layout {half, interleaved} x rotary {full,
//      partial}; compact and expanded alternate with tokens, in place and out of place with
//      head_dim. CI size: of layout x rotary, one pair per (head_dim, tokens), cycling, so every
//      (runner, storage, head_dim) still meets all four.
//   G2 table kinds: runner x storage x {compile-time (rope_cache_v, expanded_rope_cache_v),
//   runtime,
//      runtime + on-the-fly rows past its end, on-the-fly only} x {compact, expanded} for two
//      configs (80/80 half unscaled; 96/64 interleaved YaRN x40 with DeepSeek's mscale pair).
//   G3 scalings: runner x storage x 13 configs (none, linear, ntk, dynamic at seq_len 0 / below /
//      above max_position_embeddings, yarn default / DeepSeek mscale / untruncated with an
//      explicit attention factor, llama3, longrope short / long / explicit factor, full and partial
//      rotary, both layouts) x {runtime cache built at seq_len, cache + on-the-fly, on-the-fly
//      only}, positions from 0 to past 2^20. CI size: storage cycles with the config.
//   G4 views x calls x positions: runner x storage (+ _Float16) x {dense, q/k slices of a fused
//      qkv buffer, head-major} x {out of place, in place, q+k out of place, q+k in place} x
//      {from(offset), int64 ids, int32 ids} (ids unsorted, repeated). Same in CI.
//   G5 seq_len matters: dynamic below vs above max_position_embeddings and longrope short vs long
//      give different outputs (each within the oracle's bound for its own seq_len), through
//      runtime caches and on-the-fly rows.
// Size: POSENC_SWEEP=full|ci; unset, CI=true picks ci, anything else full (tests/kernels/sweep/
// meson.build, docs/testing.md "Kernel sweep"). Oracle rows are cached per (config, seq_len,
// position) and shared by all runners, storage types, tables and views.
// POSENC_SWEEP_ISA=<name> restricts the runners to one dispatch entry (tests/emulated).
#include <catch2/catch.hpp>

#include <posenc/kernels/dispatch.hpp>
#include <posenc/kernels/rope.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/tables/rope_cache.hpp>
#include <posenc/tables/runtime_rope_cache.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/random_rope.hpp"
#include "support/rotation_oracle.hpp"

namespace pk = posenc::kernels;
namespace pd = posenc::kernels::dispatch;
using posenc::bf16;
using posenc::f16;
using posenc::rope_config;
using posenc::rope_layout;
using namespace posenc_test;

namespace {

// ---- size -------------------------------------------------------------------------------------

bool full_size() {
  const char* s = std::getenv("POSENC_SWEEP");
  if (s != nullptr && std::string_view(s) == "full") return true;
  if (s != nullptr && std::string_view(s) == "ci") return false;
  const char* ci = std::getenv("CI");
  return !(ci != nullptr && std::string_view(ci) == "true");
}

// ---- storage: this test's own encoding and decoding (not posenc's conversions) --------------

// Inputs are exact in their storage type: "narrow" values m 2^(e-7), m in [128, 255], e in [-6, 2]
// (8 significant bits, normal in binary16), for the 16-bit types; full 24-bit significands for
// float.
double random_input(std::mt19937_64& g, bool narrow) {
  const int bits = narrow ? 8 : 24;
  const std::uint64_t r = g();
  const double m = static_cast<double>((r & ((1ull << (bits - 1)) - 1)) | (1ull << (bits - 1)));
  const int e = static_cast<int>((r >> 32) % 9) - 6;
  const double v = std::ldexp(m, e - (bits - 1));
  return (r >> 63) != 0 ? -v : v;
}

double f16_bits_to_double(std::uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  double v = 0.0;
  if (exp == 0x1f) {
    v = mant == 0 ? INFINITY : NAN;
  } else if (exp == 0) {
    v = std::ldexp(mant, -24);
  } else {
    v = std::ldexp(mant + 1024, exp - 25);
  }
  return (h & 0x8000) != 0 ? -v : v;
}

// An exact binary16 encoding of a normal narrow value (asserted by the round trip).
std::uint16_t f16_bits_of(double v) {
  int e = 0;
  const double fr = std::frexp(std::fabs(v), &e);  // |v| = fr 2^e, fr in [0.5, 1)
  const auto mant = static_cast<std::uint16_t>(std::ldexp(fr, 11) - 1024.0);
  const auto bits = static_cast<std::uint16_t>((v < 0 ? 0x8000 : 0) | ((e - 1 + 15) << 10) | mant);
  if (f16_bits_to_double(bits) != v) std::abort();
  return bits;
}

template <class T>
struct codec;
template <>
struct codec<float> {
  static constexpr StorageFormat format = kFloat32;
  static constexpr bool narrow = false;
  static constexpr const char* name = "f32";
  static float encode(double v) { return static_cast<float>(v); }
  static double decode(float x) { return x; }
};
template <>
struct codec<bf16> {
  static constexpr StorageFormat format = kBfloat16;
  static constexpr bool narrow = true;
  static constexpr const char* name = "bf16";
  static bf16 encode(double v) {
    const auto u = std::bit_cast<std::uint32_t>(static_cast<float>(v));
    if ((u & 0xffffu) != 0) std::abort();
    return {static_cast<std::uint16_t>(u >> 16)};
  }
  static double decode(bf16 x) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(x.bits) << 16);
  }
};
template <>
struct codec<f16> {
  static constexpr StorageFormat format = kBinary16;
  static constexpr bool narrow = true;
  static constexpr const char* name = "f16";
  static f16 encode(double v) { return {f16_bits_of(v)}; }
  static double decode(f16 x) { return f16_bits_to_double(x.bits); }
};
#if POSENC_HAS_FLOAT16
template <>
struct codec<_Float16> {
  static constexpr StorageFormat format = kBinary16;
  static constexpr bool narrow = true;
  static constexpr const char* name = "_Float16";
  static _Float16 encode(double v) { return std::bit_cast<_Float16>(f16_bits_of(v)); }
  static double decode(_Float16 x) { return f16_bits_to_double(std::bit_cast<std::uint16_t>(x)); }
};
#endif

// ---- runners ----------------------------------------------------------------------------------

// The signatures of the dispatch library's kernels (posenc/kernels/detail/kernel_list.hpp).
template <class T>
struct Runner {
  using apply_t = pk::kernel_error (*)(const pk::rope_table&, const pk::tensor_view<const T>&,
                                       const pk::tensor_view<T>&, const pk::token_positions&);
  using in_place_t = pk::kernel_error (*)(const pk::rope_table&, const pk::tensor_view<T>&,
                                          const pk::token_positions&);
  using qk_t = pk::kernel_error (*)(const pk::rope_table&, const pk::tensor_view<const T>&,
                                    const pk::tensor_view<T>&, const pk::tensor_view<const T>&,
                                    const pk::tensor_view<T>&, const pk::token_positions&);
  std::string name;
  std::size_t width;
  apply_t apply;
  in_place_t in_place;
  qk_t qk;
};

std::size_t width_of(std::string_view isa) {
  if (isa.find("avx512") != std::string_view::npos) return 16;
  if (isa.find("avx") != std::string_view::npos) return 8;
  if (isa == "scalar") return 1;
  return 4;  // sse2, sse4.2, neon
}

template <class T>
Runner<T> header_runner() {
  // The header-only entry points take their views by value: called through lambdas of the
  // runner's signatures.
  return {std::string("header-only ") + pk::build_arch_name, width_of(pk::build_arch_name),
          [](const pk::rope_table& table, const pk::tensor_view<const T>& in,
             const pk::tensor_view<T>& out,
             const pk::token_positions& pos) { return pk::apply_rope<T>(table, in, out, pos); },
          [](const pk::rope_table& table, const pk::tensor_view<T>& x,
             const pk::token_positions& pos) { return pk::apply_rope<T>(table, x, pos); },
          [](const pk::rope_table& table, const pk::tensor_view<const T>& q_in,
             const pk::tensor_view<T>& q_out, const pk::tensor_view<const T>& k_in,
             const pk::tensor_view<T>& k_out, const pk::token_positions& pos) {
            return pk::apply_rope_qk<T>(table, q_in, q_out, k_in, k_out, pos);
          }};
}

// POSENC_SWEEP_ISA=<name> (tests/emulated): only the dispatch entry of that name, which must be
// compiled and supported (else the sweep fails); the header-only entry points, the other entries
// and the _Float16 overloads then run only where the variable is not set (natively).
const char* only_isa() {
  const char* s = std::getenv("POSENC_SWEEP_ISA");
  return s != nullptr && *s != '\0' ? s : nullptr;
}

template <class T>
std::vector<Runner<T>> runners() {
  std::vector<Runner<T>> out;
  if (const char* only = only_isa(); only != nullptr) {
    if constexpr (pd::entry_storage_type<T>) {
      for (const pd::isa_kernels& isa : pd::compiled_isas()) {
        if (!isa.supported || std::string_view(isa.name) != only) continue;
        const pd::rope_kernels<T>& k = isa.rope<T>();
        out.push_back({std::string("dispatch ") + isa.name, width_of(isa.name), k.apply,
                       k.apply_in_place, k.apply_qk});
      }
      INFO("POSENC_SWEEP_ISA=" << only);
      REQUIRE(out.size() == 1);
    }
    return out;
  }
  out.push_back(header_runner<T>());
#if POSENC_HAS_FLOAT16
  if constexpr (std::is_same_v<T, _Float16>) {
    const std::string name = std::string("dispatch ") + pd::active_isa() + " (_Float16 overloads)";
    out.push_back({name, width_of(pd::active_isa()),
                   static_cast<typename Runner<T>::apply_t>(&pd::apply_rope),
                   static_cast<typename Runner<T>::in_place_t>(&pd::apply_rope),
                   static_cast<typename Runner<T>::qk_t>(&pd::apply_rope_qk)});
    return out;
  }
#endif
  if constexpr (pd::entry_storage_type<T>) {
    for (const pd::isa_kernels& isa : pd::compiled_isas()) {
      if (!isa.supported) continue;
      const pd::rope_kernels<T>& k = isa.rope<T>();
      out.push_back({std::string("dispatch ") + isa.name, width_of(isa.name), k.apply,
                     k.apply_in_place, k.apply_qk});
    }
  }
  return out;
}

void print_isas() {
  static bool done = false;
  if (done) return;
  done = true;
  if (const char* only = only_isa(); only != nullptr) {
    std::cout << "ran " << only << " only (POSENC_SWEEP_ISA)\n";
    return;
  }
  for (const pd::isa_kernels& isa : pd::compiled_isas())
    std::cout << (isa.supported ? "ran " : "skipped ") << isa.name
              << (isa.supported ? "" : ": not supported by this CPU") << "\n";
  std::cout << "ran header-only " << pk::build_arch_name << "\n";
}

// ---- oracles and tables -----------------------------------------------------------------------

std::string key_of(const rope_config& c, std::uint64_t seq_len) {
  return describe(c, seq_len) + " factors@" +
         std::to_string(reinterpret_cast<std::uintptr_t>(c.scaling.short_factor.data())) + "/" +
         std::to_string(reinterpret_cast<std::uintptr_t>(c.scaling.long_factor.data()));
}

// One oracle per (rotary_dim, base, scaling, seq_len): head_dim and layout do not change a row.
RotationOracle& oracle_of(const rope_config& c, std::uint64_t seq_len) {
  static std::map<std::string, std::unique_ptr<RotationOracle>> oracles;
  rope_config n = c;
  n.head_dim = n.rotary_dim;
  n.layout = rope_layout::half;
  std::unique_ptr<RotationOracle>& o = oracles[key_of(n, seq_len)];
  if (!o) {
    o = std::make_unique<RotationOracle>(n, seq_len);
    if (o->near_discrete()) {
      std::cerr << "sweep: config too close to a YaRN truncation: " << describe(n) << "\n";
      std::abort();
    }
  }
  return *o;
}

enum class kind { runtime, straddle, on_the_fly, compile_time };
const char* kind_name(kind k) {
  switch (k) {
    case kind::runtime:
      return "runtime";
    case kind::straddle:
      return "runtime+on-the-fly";
    case kind::on_the_fly:
      return "on-the-fly";
    case kind::compile_time:
      return "compile-time";
  }
  return "?";
}

// A config's runtime cache of P rows at seq_len, compact and expanded, as kernel tables. Holds
// the config the on-the-fly tables point at.
struct Tables {
  rope_config cfg;
  std::uint64_t seq_len;
  std::size_t P;
  posenc::runtime_rope_cache<float> cache;
  std::vector<float> ecos, esin;

  Tables(const rope_config& c, std::uint64_t s, std::size_t rows)
      : cfg(c),
        seq_len(s),
        P(rows),
        cache(posenc::runtime_rope_cache<float>::make(c, rows, s)),
        ecos(rows * c.rotary_dim + 1),
        esin(rows * c.rotary_dim + 1) {
    pk::expand_rope_cache(cache.view(), c.layout, ecos.data(), esin.data());
  }
  pk::rope_table get(kind k, pk::rope_table_format f) const {
    if (k == kind::on_the_fly) return pk::on_the_fly_table(cfg, seq_len);
    pk::rope_table t = k == kind::straddle ? pk::make_rope_table(cache.view(), cfg, seq_len)
                                           : pk::make_rope_table(cache.view(), cfg.layout);
    if (f == pk::rope_table_format::expanded) {
      t.cos = ecos.data();
      t.sin = esin.data();
      t.format = f;
    }
    return t;
  }
};

const Tables& tables_of(const rope_config& c, std::uint64_t seq_len, std::size_t rows) {
  static std::map<std::string, std::unique_ptr<Tables>> all;
  std::unique_ptr<Tables>& t = all[key_of(c, seq_len) + " rows=" + std::to_string(rows)];
  if (!t) t = std::make_unique<Tables>(c, seq_len, rows);
  return *t;
}

// ---- failures ---------------------------------------------------------------------------------

struct Failures {
  std::size_t count = 0;
  std::size_t calls = 0;
  std::size_t elements = 0;
  double worst32 = 0.0, worst16 = 0.0;  // largest error / bound: float, 16-bit storage
  std::string first;
  void add(const std::string& what) {
    if (count < 12) first += what + "\n";
    ++count;
  }
};
Failures failures;

// ---- one call -------------------------------------------------------------------------------

enum class view { dense, fused_qkv, head_major };
enum class call { out_of_place, in_place, qk_out_of_place, qk_in_place };
enum class positions { offset, ids64, ids32 };
const char* view_name(view v) {
  return v == view::dense ? "dense" : v == view::fused_qkv ? "fused qkv" : "head-major";
}
const char* call_name(call c) {
  switch (c) {
    case call::out_of_place:
      return "out of place";
    case call::in_place:
      return "in place";
    case call::qk_out_of_place:
      return "q+k out of place";
    case call::qk_in_place:
      return "q+k in place";
  }
  return "?";
}

struct Geometry {
  std::size_t offset, tokens, heads, head_dim, token_stride, head_stride;
  std::size_t at(std::size_t t, std::size_t h, std::size_t ch) const {
    return offset + t * token_stride + h * head_stride + ch;
  }
};

// The q and k geometries of one buffer: guards of kGuard elements before and after; dense and
// head-major q then k with a gap; fused [tokens, (Hq + 2 Hk) D], q at 0, k at Hq D, v after.
constexpr std::size_t kGuard = 19;
struct Layout {
  Geometry q, k;
  std::size_t size;
};
Layout layout_of(view v, std::size_t tokens, std::size_t hq, std::size_t hk, std::size_t D) {
  Layout l{};
  switch (v) {
    case view::dense:
      l.q = {kGuard, tokens, hq, D, hq * D, D};
      l.k = {kGuard + tokens * hq * D + 7, tokens, hk, D, hk * D, D};
      l.size = l.k.offset + tokens * hk * D + kGuard;
      break;
    case view::head_major:
      l.q = {kGuard, tokens, hq, D, D, tokens * D};
      l.k = {kGuard + tokens * hq * D + 7, tokens, hk, D, D, tokens * D};
      l.size = l.k.offset + tokens * hk * D + kGuard;
      break;
    case view::fused_qkv: {
      const std::size_t row = (hq + 2 * hk) * D;
      l.q = {kGuard, tokens, hq, D, row, D};
      l.k = {kGuard + hq * D, tokens, hk, D, row, D};
      l.size = kGuard + tokens * row + kGuard;
      break;
    }
  }
  return l;
}

template <class T>
pk::tensor_view<T> view_of(T* base, const Geometry& g) {
  return {base + g.offset, g.tokens, g.heads, g.head_dim, g.token_stride, g.head_stride};
}

struct Problem {
  const rope_config* cfg;  // head_dim, rotary_dim, layout of the tensors
  RotationOracle* oracle;
  pk::rope_table table;
  std::string table_desc;
};

// Runs one kernel call and checks every element of the output buffer(s).
template <class T>
void run_call(const Runner<T>& run, const Problem& pr, std::size_t tokens, std::size_t hq, view v,
              call c, positions pk_kind, std::uint64_t offset,
              const std::vector<std::int64_t>& id_pool, std::mt19937_64& g) {
  using C = codec<T>;
  const rope_config& cfg = *pr.cfg;
  const std::size_t D = cfg.head_dim, R = cfg.rotary_dim;
  const std::size_t hk = hq > 1 ? hq / 2 : 1;
  const bool qk = c == call::qk_out_of_place || c == call::qk_in_place;
  const bool in_place = c == call::in_place || c == call::qk_in_place;
  const Layout lay = layout_of(v, tokens, hq, hk, D);

  std::vector<T> in(lay.size), out(lay.size);
  for (T& x : in) x = C::encode(random_input(g, C::narrow));
  for (T& x : out) x = C::encode(random_input(g, C::narrow));
  const std::vector<T> in0 = in, out0 = out;
  std::vector<double> xin(lay.size);
  for (std::size_t j = 0; j < lay.size; ++j) xin[j] = C::decode(in[j]);

  std::vector<std::uint64_t> pos(tokens);
  std::vector<std::int64_t> ids64(tokens);
  std::vector<std::int32_t> ids32(tokens);
  for (std::size_t t = 0; t < tokens; ++t) {
    ids64[t] = id_pool[(t * 7 + 3) % id_pool.size()];
    ids32[t] = static_cast<std::int32_t>(ids64[t]);
    pos[t] = pk_kind == positions::offset ? offset + t : static_cast<std::uint64_t>(ids64[t]);
  }
  pk::token_positions tp = pk::token_positions::from(offset);
  if (pk_kind == positions::ids64)
    tp = pk::token_positions::of(std::span<const std::int64_t>(ids64));
  if (pk_kind == positions::ids32)
    tp = pk::token_positions::of(std::span<const std::int32_t>(ids32));

  T* const dst = in_place ? in.data() : out.data();
  const pk::tensor_view<const T> q_in = view_of<const T>(in.data(), lay.q);
  const pk::tensor_view<const T> k_in = view_of<const T>(in.data(), lay.k);
  pk::kernel_error e = pk::kernel_error::ok;
  if (c == call::out_of_place) e = run.apply(pr.table, q_in, view_of(dst, lay.q), tp);
  if (c == call::in_place) e = run.in_place(pr.table, view_of(dst, lay.q), tp);
  if (qk) e = run.qk(pr.table, q_in, view_of(dst, lay.q), k_in, view_of(dst, lay.k), tp);

  const auto desc = [&] {
    return run.name + " " + C::name + " " + pr.table_desc + " | " + describe(cfg) + " | " +
           view_name(v) + ", " + call_name(c) + ", tokens " + std::to_string(tokens) + ", heads " +
           std::to_string(hq) + (qk ? "+" + std::to_string(hk) : "") +
           (pk_kind == positions::offset  ? ", from " + std::to_string(offset)
            : pk_kind == positions::ids64 ? ", int64 ids"
                                          : ", int32 ids");
  };
  ++failures.calls;
  if (e != pk::kernel_error::ok) {
    failures.add(desc() + ": returned " + pk::message(e));
    return;
  }

  const std::vector<T>& res = in_place ? in : out;
  const std::vector<T>& before = in_place ? in0 : out0;
  std::vector<char> written(lay.size, 0);
  RotationOracle& o = *pr.oracle;
  const double af = o.attention_factor();
  std::size_t bad = 0;
  const auto check_view = [&](const Geometry& gm) {
    for (std::size_t t = 0; t < tokens; ++t) {
      const RotationRow& row = o.row(pos[t]);
      for (std::size_t h = 0; h < gm.heads; ++h) {
        for (std::uint32_t i = 0; i < R / 2; ++i) {
          const PairChannels ch = pair_of(cfg.layout, static_cast<std::uint32_t>(R), i);
          const std::size_t ja = gm.at(t, h, ch.a), jb = gm.at(t, h, ch.b);
          const double xa = xin[ja], xb = xin[jb];
          const RotatedPair y = rotate_exact(xa, xb, row.cos[i], row.sin[i]);
          const double ac = std::fabs(row.cos[i].hi), as = std::fabs(row.sin[i].hi);
          const double ga = C::decode(res[ja]), gb = C::decode(res[jb]);
          const double ea = std::fabs((ga - y.a.hi) - y.a.lo);
          const double eb = std::fabs((gb - y.b.hi) - y.b.lo);
          const double ba =
              rotation_bound(C::format, y.a.hi, xa, xb, ac, as, af, o.theta(i), pos[t]);
          const double bb =
              rotation_bound(C::format, y.b.hi, xb, xa, ac, as, af, o.theta(i), pos[t]);
          double& worst = C::format.precision == 24 ? failures.worst32 : failures.worst16;
          worst = std::max({worst, ea / ba, eb / bb});
          if (!(ea <= ba) || !(eb <= bb)) {
            if (bad++ < 2)
              failures.add(desc() + ": token " + std::to_string(t) + " (position " +
                           std::to_string(pos[t]) + ") head " + std::to_string(h) + " pair " +
                           std::to_string(i) + ": got (" + hex(ga) + ", " + hex(gb) + ") exact (" +
                           hex(y.a.hi) + ", " + hex(y.b.hi) + "), error (" + hex(ea) + ", " +
                           hex(eb) + ") bound (" + hex(ba) + ", " + hex(bb) + ")");
          }
          written[ja] = written[jb] = 1;
        }
        for (std::size_t ch = R; ch < D; ++ch) {
          const std::size_t j = gm.at(t, h, ch);
          if (std::memcmp(&res[j], &in0[j], sizeof(T)) != 0 && bad++ < 2)
            failures.add(desc() + ": pass-through channel " + std::to_string(ch) + " of token " +
                         std::to_string(t) + " head " + std::to_string(h) + " changed");
          written[j] = 1;
        }
      }
    }
    failures.elements += tokens * gm.heads * D;
  };
  check_view(lay.q);
  if (qk) check_view(lay.k);
  for (std::size_t j = 0; j < lay.size; ++j) {
    if (written[j] == 0 && std::memcmp(&res[j], &before[j], sizeof(T)) != 0) {
      if (bad++ < 2)
        failures.add(desc() + ": element " + std::to_string(j) + " outside the views written");
    }
  }
  if (!in_place && std::memcmp(in.data(), in0.data(), in.size() * sizeof(T)) != 0 && bad++ < 2)
    failures.add(desc() + ": input modified by an out-of-place call");
  if (bad > 2) failures.count += bad - 2;  // add() counted the first two
}

void report(const char* group) {
  std::cout << group << ": " << failures.calls << " calls, " << failures.elements
            << " elements checked, " << failures.count
            << " outside the bound or wrong; largest error / bound: f32 " << failures.worst32
            << ", bf16/f16 " << failures.worst16 << "\n";
  INFO(failures.first);
  CHECK(failures.count == 0);
  failures = Failures{};
}

// The storage types every group runs (with _Float16 where the compiler has it).
template <class F>
void for_each_storage(F&& f) {
  f(float{});
  f(bf16{});
  f(f16{});
#if POSENC_HAS_FLOAT16
  f(_Float16{});
#endif
}

// ---- G1: ISA x head_dim x rotary x layout x tokens --------------------------------------------

struct HeadDim {
  std::uint32_t head_dim, partial;  // partial rotary width (0: none below head_dim)
};
constexpr std::array<HeadDim, 10> kHeadDims{{{2, 0},
                                             {4, 2},
                                             {6, 4},
                                             {32, 24},
                                             {64, 32},
                                             {80, 20},
                                             {96, 24},
                                             {128, 64},
                                             {192, 64},
                                             {256, 64}}};

std::vector<std::size_t> token_counts(std::size_t w) {
  std::vector<std::size_t> t{1, 2, 3};
  for (std::size_t x : {w - 1, w, w + 1})
    if (x > 0 && std::find(t.begin(), t.end(), x) == t.end()) t.push_back(x);
  t.push_back(1000);
  return t;
}

template <class T>
void sweep_shapes(bool full) {
  std::mt19937_64 g(0x5eed0001);
  for (const Runner<T>& run : runners<T>()) {
    const std::vector<std::size_t> toks = token_counts(run.width);
    for (std::size_t hi = 0; hi < kHeadDims.size(); ++hi) {
      const HeadDim hd = kHeadDims[hi];
      for (std::size_t ti = 0; ti < toks.size(); ++ti) {
        for (int combo = 0; combo < 4; ++combo) {
          if (!full && static_cast<std::size_t>(combo) != (hi + ti) % 4) continue;
          const bool partial = combo / 2 == 1;
          if (partial && hd.partial == 0) continue;
          const rope_layout layout = combo % 2 == 0 ? rope_layout::half : rope_layout::interleaved;
          const rope_config c{
              hd.head_dim, partial ? hd.partial : hd.head_dim, partial ? 1e6 : 10000.0, layout, {}};
          const auto fmt =
              ti % 2 == 0 ? pk::rope_table_format::compact : pk::rope_table_format::expanded;
          const Tables& tab = tables_of(c, 0, 1024);
          const Problem pr{&c, &oracle_of(c, 0), tab.get(kind::runtime, fmt),
                           std::string("runtime ") +
                               (fmt == pk::rope_table_format::compact ? "compact" : "expanded")};
          run_call<T>(run, pr, toks[ti], 2, view::dense,
                      hi % 2 == 0 ? call::out_of_place : call::in_place, positions::offset, 5, {0},
                      g);
        }
      }
    }
  }
}

// ---- G2: table kinds ------------------------------------------------------------------------

struct spec_plain {
  static constexpr rope_config config{80, 80, 10000.0, rope_layout::half};
};
struct spec_deepseek {
  static constexpr rope_config config{96, 64, 10000.0, rope_layout::interleaved,
                                      posenc::scaling::yarn(40.0, 4096, 32.0, 1.0, true, 1.0, 0.8)};
};
constexpr std::size_t kCompileTimeRows = 40;

template <class S>
pk::rope_table compile_time_table(pk::rope_table_format f) {
  if (f == pk::rope_table_format::compact)
    return pk::make_rope_table(posenc::rope_cache_v<S, float, kCompileTimeRows>.view(),
                               S::config.layout);
  return pk::expanded_rope_cache_v<S, kCompileTimeRows>.table();
}

template <class T, class S>
void sweep_kinds_of(const Runner<T>& run, std::mt19937_64& g) {
  static const rope_config c = S::config;
  const std::vector<std::int64_t> near{0, 39, 1, 17, 38, 5, 20, 2, 33, 11, 9, 30, 25};
  const std::vector<std::int64_t> far{3, 40, 39, 41, 1000, 70001, 1048579, 0, 65536, 7, 4095, 12};
  const std::size_t tokens = run.width + 1;
  for (const kind k : {kind::compile_time, kind::runtime, kind::straddle, kind::on_the_fly}) {
    for (const auto f : {pk::rope_table_format::compact, pk::rope_table_format::expanded}) {
      if (k == kind::on_the_fly && f == pk::rope_table_format::expanded) continue;
      pk::rope_table t;
      if (k == kind::compile_time) {
        t = compile_time_table<S>(f);
      } else {
        t = tables_of(c, 0, kCompileTimeRows).get(k, f);
      }
      const Problem pr{&c, &oracle_of(c, 0), t,
                       std::string(kind_name(k)) +
                           (f == pk::rope_table_format::compact ? " compact" : " expanded")};
      const bool past = k == kind::straddle || k == kind::on_the_fly;
      run_call<T>(run, pr, tokens, 3, view::dense, call::out_of_place, positions::ids64, 0,
                  past ? far : near, g);
    }
  }
}

template <class T>
void sweep_kinds() {
  std::mt19937_64 g(0x5eed0002);
  for (const Runner<T>& run : runners<T>()) {
    sweep_kinds_of<T, spec_plain>(run, g);
    sweep_kinds_of<T, spec_deepseek>(run, g);
  }
}

// ---- G3: scalings ---------------------------------------------------------------------------

// LongRoPE factors (R/2 each; 48 for R = 96, 32 for R = 64), in (1, 13).
std::vector<double> longrope_factors(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<double> v(n);
  for (double& x : v) x = 1.0 + static_cast<double>(g() % 12000) / 1000.0;
  return v;
}
const std::vector<double>& short96() {
  static const std::vector<double> v = longrope_factors(48, 11);
  return v;
}
const std::vector<double>& long96() {
  static const std::vector<double> v = longrope_factors(48, 12);
  return v;
}
const std::vector<double>& short64() {
  static const std::vector<double> v = longrope_factors(32, 13);
  return v;
}
const std::vector<double>& long64() {
  static const std::vector<double> v = longrope_factors(32, 14);
  return v;
}

struct Scaled {
  const char* name;
  rope_config cfg;
  std::uint64_t seq_len;
};

const std::vector<Scaled>& scaled_configs() {
  namespace sc = posenc::scaling;
  static const std::vector<Scaled> v{
      {"none", {64, 64, 10000.0, rope_layout::half, sc::none()}, 0},
      {"linear x4", {128, 128, 10000.0, rope_layout::interleaved, sc::linear(4.0)}, 0},
      {"ntk x4", {96, 96, 10000.0, rope_layout::half, sc::ntk(4.0)}, 0},
      {"dynamic x2 seq_len 0", {128, 128, 10000.0, rope_layout::half, sc::dynamic(2.0, 256)}, 0},
      {"dynamic x2 seq_len below",
       {128, 128, 10000.0, rope_layout::half, sc::dynamic(2.0, 256)},
       100},
      {"dynamic x2 seq_len above",
       {128, 64, 10000.0, rope_layout::interleaved, sc::dynamic(2.0, 256)},
       1000},
      {"yarn x4", {128, 128, 10000.0, rope_layout::half, sc::yarn(4.0, 2048)}, 0},
      {"yarn x40 DeepSeek mscale",
       {192, 64, 10000.0, rope_layout::interleaved,
        sc::yarn(40.0, 4096, 32.0, 1.0, true, 1.0, 0.707)},
       0},
      {"yarn x8 untruncated, attention_factor",
       {80, 80, 500000.0, rope_layout::half, sc::yarn(8.0, 4096, 16.0, 2.0, false, 0, 0, 1.25)},
       0},
      {"llama3 x8", {128, 128, 500000.0, rope_layout::half, sc::llama3(8.0, 1.0, 4.0, 8192)}, 0},
      {"longrope short",
       {96, 96, 10000.0, rope_layout::half, sc::longrope(short96(), long96(), 512, 4096)},
       100},
      {"longrope long",
       {96, 96, 10000.0, rope_layout::half, sc::longrope(short96(), long96(), 512, 4096)},
       5000},
      {"longrope long, attention_factor, partial",
       {128, 64, 10000.0, rope_layout::interleaved,
        sc::longrope(short64(), long64(), 1024, 32768, 1.5)},
       2048},
  };
  return v;
}

template <class T>
void sweep_scalings(bool full, std::size_t storage_index) {
  std::mt19937_64 g(0x5eed0003 + storage_index);
  constexpr std::size_t kRows = 64;
  const std::vector<std::int64_t> near{0, 63, 1, 62, 17, 5, 33, 2, 48, 11, 9, 30, 25, 40, 57, 8, 3};
  const std::vector<std::int64_t> far{0,    63,   64,    65,     100,   511,     512,
                                      513,  2047, 4096,  65537,  12345, 1000003, 7,
                                      8191, 8192, 32767, 131072, 2,     1048577};
  const std::vector<Scaled>& cs = scaled_configs();
  for (const Runner<T>& run : runners<T>()) {
    for (std::size_t ci = 0; ci < cs.size(); ++ci) {
      if (!full && (ci + storage_index) % 3 != 0) continue;
      const Scaled& s = cs[ci];
      const Tables& tab = tables_of(s.cfg, s.seq_len, kRows);
      for (const kind k : {kind::runtime, kind::straddle, kind::on_the_fly}) {
        const auto f = (ci + static_cast<std::size_t>(k)) % 2 == 0
                           ? pk::rope_table_format::compact
                           : pk::rope_table_format::expanded;
        const Problem pr{&tab.cfg, &oracle_of(s.cfg, s.seq_len), tab.get(k, f),
                         std::string(s.name) + ", " + kind_name(k) +
                             (f == pk::rope_table_format::compact ? " compact" : " expanded")};
        run_call<T>(run, pr, std::max<std::size_t>(run.width + 1, 5), 2, view::dense,
                    call::out_of_place, positions::ids64, 0, k == kind::runtime ? near : far, g);
      }
    }
  }
}

// ---- G4: views x calls x positions ------------------------------------------------------------

template <class T>
void sweep_views() {
  std::mt19937_64 g(0x5eed0004);
  static const rope_config a{64, 48, 10000.0, rope_layout::interleaved, {}};
  static const rope_config b{80, 80, 10000.0, rope_layout::half, {}};
  const std::vector<std::int64_t> ids{17, 3, 3, 900, 0, 64, 1023, 5, 77, 77, 512, 1, 300, 2, 999};
  for (const Runner<T>& run : runners<T>()) {
    int n = 0;
    for (const view v : {view::dense, view::fused_qkv, view::head_major}) {
      for (const call c :
           {call::out_of_place, call::in_place, call::qk_out_of_place, call::qk_in_place}) {
        for (const positions p : {positions::offset, positions::ids64, positions::ids32}) {
          const rope_config& cfg = n % 2 == 0 ? a : b;
          const auto f =
              (n / 2) % 2 == 0 ? pk::rope_table_format::compact : pk::rope_table_format::expanded;
          ++n;
          const Tables& tab = tables_of(cfg, 0, 1024);
          const Problem pr{&cfg, &oracle_of(cfg, 0), tab.get(kind::runtime, f),
                           std::string("runtime ") +
                               (f == pk::rope_table_format::compact ? "compact" : "expanded")};
          run_call<T>(run, pr, run.width + 1, 3, v, c, p, 11, ids, g);
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("kernels/sweep: shapes and tails (ISA x head_dim x rotary x layout x tokens)",
          "[sweep]") {
  print_isas();
  const bool full = full_size();
  std::cout << "size: " << (full ? "full" : "ci") << "\n";
  for_each_storage([&](auto x) { sweep_shapes<decltype(x)>(full); });
  report("shapes");
}

TEST_CASE("kernels/sweep: table kinds (compile time, runtime, on the fly; compact, expanded)",
          "[sweep]") {
  for_each_storage([&](auto x) { sweep_kinds<decltype(x)>(); });
  report("table kinds");
}

TEST_CASE("kernels/sweep: every scaling, seq_len below and above the original context", "[sweep]") {
  const bool full = full_size();
  std::size_t i = 0;
  for_each_storage([&](auto x) { sweep_scalings<decltype(x)>(full, i++); });
  report("scalings");
}

TEST_CASE("kernels/sweep: views, calls and position types", "[sweep]") {
  for_each_storage([&](auto x) { sweep_views<decltype(x)>(); });
  report("views");
}

TEST_CASE("kernels/sweep: seq_len changes the output (dynamic, longrope)", "[sweep]") {
  // The same inputs at two seq_len: the oracle's rows differ, each output is within its own
  // oracle's bound (the groups above), and the outputs differ, through a runtime cache built at
  // seq_len and through on-the-fly rows.
  namespace sc = posenc::scaling;
  static const rope_config dyn{128, 128, 10000.0, rope_layout::half, sc::dynamic(2.0, 256)};
  static const rope_config lr{96, 96, 10000.0, rope_layout::half,
                              sc::longrope(short96(), long96(), 512, 4096)};
  struct Pair {
    const rope_config* c;
    std::uint64_t lo, hi;
  };
  for (const Pair& p : {Pair{&dyn, 100, 1000}, Pair{&lr, 100, 5000}}) {
    const rope_config& c = *p.c;
    INFO(describe(c) << " seq_len " << p.lo << " vs " << p.hi);
    CHECK(oracle_of(c, p.lo).row(300).cos[5].hi != oracle_of(c, p.hi).row(300).cos[5].hi);
    const std::size_t tokens = 4, n = tokens * c.head_dim;
    std::mt19937_64 g(0x5eed0005);
    std::vector<float> in(n);
    for (float& x : in) x = static_cast<float>(random_input(g, false));
    const std::array<std::int64_t, tokens> ids{300, 2, 4000, 70000};
    for (const kind k : {kind::runtime, kind::on_the_fly}) {
      INFO(kind_name(k));
      std::vector<float> lo(n), hi(n);
      const pk::token_positions tp = k == kind::runtime
                                         ? pk::token_positions::of(std::span(ids.data(), 2))
                                         : pk::token_positions::of(ids);
      const std::size_t tt = k == kind::runtime ? 2 : tokens;
      const auto in_v = pk::dense<const float>(in.data(), tt, 1, c.head_dim);
      REQUIRE(pk::apply_rope<float>(tables_of(c, p.lo, 512).get(k, pk::rope_table_format::compact),
                                    in_v, pk::dense(lo.data(), tt, 1, c.head_dim),
                                    tp) == pk::kernel_error::ok);
      REQUIRE(pk::apply_rope<float>(tables_of(c, p.hi, 512).get(k, pk::rope_table_format::compact),
                                    in_v, pk::dense(hi.data(), tt, 1, c.head_dim),
                                    tp) == pk::kernel_error::ok);
      std::size_t differ = 0;
      for (std::size_t j = 0; j < tt * c.head_dim; ++j) differ += lo[j] != hi[j];
      // dynamic: pair 0 (theta = 1) is unscaled, every other pair's angle changes; longrope: all.
      CHECK(differ > tt * c.head_dim / 2);
    }
  }
}
