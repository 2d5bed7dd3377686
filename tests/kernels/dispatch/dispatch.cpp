// The runtime-dispatch library (posenc/kernels/dispatch.hpp, src/kernels): every kernel of every
// compiled ISA that this CPU supports, for every storage type, bit for bit against the scalar
// reference rope_reference(..., isa.fma) (the definition, kernels/rope_reference.hpp); identical
// errors with nothing written; the dispatcher's choice; POSENC_ISA.
//
// Prints one line per compiled ISA, "ran <name> (fma: yes|no)" or "skipped <name>: not supported
// by this CPU", which meson keeps in its test log.
#include <catch2/catch.hpp>

#include <posenc/kernels/dispatch.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/tables/runtime_rope_cache.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace k = posenc::kernels;
namespace d = posenc::kernels::dispatch;
using posenc::bf16;
using posenc::f16;
using posenc::rope_config;
using posenc::rope_layout;

namespace {

// Deterministic inputs (xorshift32), values in [-2, 2).
struct rng {
  std::uint32_t s = 0x9e3779b9u;
  float next() {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return static_cast<float>(s >> 8) * 0x1p-22f - 2.0f;
  }
};

template <posenc::storage_type T>
std::vector<T> random_buffer(std::size_t n, rng& g) {
  std::vector<T> v(n);
  for (T& x : v) x = posenc::store_as<T>(g.next());
  return v;
}

template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// A config's cache (rows [0, 64)) in both formats, with and without on-the-fly rows past it.
constexpr std::size_t cached_rows = 64;
struct tables {
  rope_config c;
  posenc::runtime_rope_cache<float> cache;
  std::vector<float> ecos, esin;

  tables(std::uint32_t head_dim, std::uint32_t rotary_dim, rope_layout layout)
      : c{head_dim, rotary_dim, 10000.0, layout, {}},
        cache(posenc::runtime_rope_cache<float>::make(c, cached_rows)),
        ecos(cached_rows * rotary_dim),
        esin(cached_rows * rotary_dim) {
    k::expand_rope_cache(cache.view(), layout, ecos.data(), esin.data());
  }
  k::rope_table get(k::rope_table_format f, bool on_the_fly) const {
    k::rope_table t = k::make_rope_table(cache.view(), c.layout);
    if (f == k::rope_table_format::expanded) {
      t.cos = ecos.data();
      t.sin = esin.data();
      t.format = f;
    }
    if (on_the_fly) t.on_the_fly = &c;
    return t;
  }
};

enum class strides { dense, padded, head_major };

template <class T>
k::tensor_view<T> make_view(T* data, std::size_t tokens, std::size_t heads, std::size_t hd,
                            strides s) {
  switch (s) {
    case strides::dense:
      return k::dense(data, tokens, heads, hd);
    case strides::padded:
      return {data, tokens, heads, hd, heads * (hd + 3) + 5, hd + 3};
    case strides::head_major:
      return {data, tokens, heads, hd, hd, tokens * hd};
  }
  return {};
}

std::size_t elements(std::size_t tokens, std::size_t heads, std::size_t hd, strides s) {
  if (s == strides::padded) return tokens * (heads * (hd + 3) + 5);
  return tokens * heads * hd;
}

struct shape {
  std::uint32_t head_dim, rotary_dim;
  std::size_t heads, tokens;
};
// Full and partial rotary; head_dim a multiple of 16, not one, and odd.
constexpr std::array shapes{shape{128, 128, 2, 3}, shape{64, 32, 3, 5}, shape{34, 34, 1, 4},
                            shape{37, 22, 2, 5}, shape{6, 6, 3, 1}};

// Positions: from 0, from an offset, explicit ids inside the cache, and (with on-the-fly rows
// only) ids past it, up to 70000.
constexpr std::array<std::int64_t, 5> ids_cached{5, 0, 63, 12, 7};
constexpr std::array<std::int64_t, 5> ids_far{3, 64, 1000, 70000, 63};

int failures_of_isa = 0;

template <posenc::storage_type T>
void check_isa(const d::isa_kernels& isa) {
  const d::rope_kernels<T>& kern = isa.rope<T>();
  REQUIRE(kern.apply != nullptr);
  REQUIRE(kern.apply_in_place != nullptr);
  REQUIRE(kern.apply_qk != nullptr);
  rng g;
  for (const rope_layout layout : {rope_layout::half, rope_layout::interleaved}) {
    for (const shape& sh : shapes) {
      const tables tab(sh.head_dim, sh.rotary_dim, layout);
      for (const auto fmt : {k::rope_table_format::compact, k::rope_table_format::expanded}) {
        for (int pk = 0; pk < 4; ++pk) {
          const bool otf = pk == 3;
          const k::rope_table table = tab.get(fmt, otf);
          k::token_positions pos = k::token_positions::from(0);
          if (pk == 1) pos = k::token_positions::from(37);
          if (pk == 2) pos = k::token_positions::of(std::span(ids_cached.data(), sh.tokens));
          if (pk == 3) pos = k::token_positions::of(std::span(ids_far.data(), sh.tokens));
          for (const strides st : {strides::dense, strides::padded, strides::head_major}) {
            INFO(isa.name << " " << posenc::storage_name<T>() << " layout "
                          << (layout == rope_layout::half ? "half" : "interleaved") << " format "
                          << (fmt == k::rope_table_format::compact ? "compact" : "expanded")
                          << " head_dim " << sh.head_dim << " rotary " << sh.rotary_dim << " heads "
                          << sh.heads << " tokens " << sh.tokens << " positions " << pk
                          << " strides " << static_cast<int>(st));
            const std::size_t n = elements(sh.tokens, sh.heads, sh.head_dim, st);
            const std::vector<T> in = random_buffer<T>(n, g);
            const std::vector<T> out0 = random_buffer<T>(n, g);
            const auto in_view =
                make_view<const T>(in.data(), sh.tokens, sh.heads, sh.head_dim, st);

            // Out of place.
            std::vector<T> want = out0, got = out0;
            REQUIRE(
                k::rope_reference<T>(table, in_view,
                                     make_view(want.data(), sh.tokens, sh.heads, sh.head_dim, st),
                                     pos, isa.fma) == k::kernel_error::ok);
            CHECK(kern.apply(table, in_view,
                             make_view(got.data(), sh.tokens, sh.heads, sh.head_dim, st),
                             pos) == k::kernel_error::ok);
            CHECK(same_bytes(want, got));
            failures_of_isa += !same_bytes(want, got);

            // In place.
            std::vector<T> want_ip = in, got_ip = in;
            REQUIRE(k::rope_reference<T>(
                        table, make_view(want_ip.data(), sh.tokens, sh.heads, sh.head_dim, st), pos,
                        isa.fma) == k::kernel_error::ok);
            CHECK(kern.apply_in_place(
                      table, make_view(got_ip.data(), sh.tokens, sh.heads, sh.head_dim, st), pos) ==
                  k::kernel_error::ok);
            CHECK(same_bytes(want_ip, got_ip));
            failures_of_isa += !same_bytes(want_ip, got_ip);

            // q and k (k with one head, as in grouped-query attention), dense outputs.
            const std::vector<T> kin = random_buffer<T>(sh.tokens * sh.head_dim, g);
            const auto k_view =
                k::dense(kin.data(), sh.tokens, std::size_t{1}, std::size_t{sh.head_dim});
            std::vector<T> qw = out0, qg = out0;
            std::vector<T> kw(kin.size()), kg(kin.size());
            REQUIRE(k::rope_reference_qk<T>(
                        table, in_view, make_view(qw.data(), sh.tokens, sh.heads, sh.head_dim, st),
                        k_view,
                        k::dense(kw.data(), sh.tokens, std::size_t{1}, std::size_t{sh.head_dim}),
                        pos, isa.fma) == k::kernel_error::ok);
            CHECK(kern.apply_qk(
                      table, in_view, make_view(qg.data(), sh.tokens, sh.heads, sh.head_dim, st),
                      k_view,
                      k::dense(kg.data(), sh.tokens, std::size_t{1}, std::size_t{sh.head_dim}),
                      pos) == k::kernel_error::ok);
            CHECK(same_bytes(qw, qg));
            CHECK(same_bytes(kw, kg));
            failures_of_isa += !same_bytes(qw, qg) + !same_bytes(kw, kg);
          }
        }
      }
    }
  }
}

// Every error, from every ISA: the reference's error (the definition), and nothing written.
template <posenc::storage_type T>
void check_errors(const d::isa_kernels& isa) {
  const d::rope_kernels<T>& kern = isa.rope<T>();
  const tables tab(16, 12, rope_layout::interleaved);
  const k::rope_table good = tab.get(k::rope_table_format::compact, false);
  rng g;
  constexpr std::size_t tokens = 3, heads = 2, hd = 16, n = tokens * heads * hd;
  std::vector<T> buf = random_buffer<T>(3 * n, g);  // in at [0, n), out at [n, 2n), spare
  const std::vector<T> before = buf;
  T* const base = buf.data();
  const auto in = k::dense<const T>(base, tokens, heads, hd);
  const auto out = k::dense<T>(base + n, tokens, heads, hd);
  const std::array<std::int64_t, 3> neg{0, -1, 2};
  const std::array<std::int64_t, 2> short_ids{0, 1};

  struct error_case {
    const char* what;
    k::rope_table table;
    k::tensor_view<const T> in;
    k::tensor_view<T> out;
    k::token_positions pos;
  };
  k::rope_table odd = good;
  odd.rotary_dim = 11;
  k::rope_table no_data = good;
  no_data.cos = nullptr;
  k::rope_table wide = good;
  wide.rotary_dim = 18;
  wide.on_the_fly = nullptr;
  k::tensor_view<T> squeezed = out;
  squeezed.head_stride = hd - 1;
  const std::vector<error_case> cases{
      {"odd rotary_dim", odd, in, out, k::token_positions::from(0)},
      {"table without data", no_data, in, out, k::token_positions::from(0)},
      {"rotary_dim > head_dim", wide, in, out, k::token_positions::from(0)},
      {"shape mismatch", good, in, k::dense<T>(base + n, tokens - 1, heads, hd),
       k::token_positions::from(0)},
      {"null output", good, in, k::tensor_view<T>{nullptr, tokens, heads, hd, heads * hd, hd},
       k::token_positions::from(0)},
      {"overlapping head stride", good, in, squeezed, k::token_positions::from(0)},
      {"partial overlap", good, in, k::dense<T>(base + 5, tokens, heads, hd),
       k::token_positions::from(0)},
      {"position past the table", good, in, out, k::token_positions::from(cached_rows - 2)},
      {"negative id", good, in, out, k::token_positions::of(neg)},
      {"too few ids", good, in, out, k::token_positions::of(short_ids)},
      {"offset overflow", good, in, out, k::token_positions::from(~std::uint64_t{0})},
  };
  for (const error_case& c : cases) {
    INFO(isa.name << " " << posenc::storage_name<T>() << ": " << c.what);
    const k::kernel_error want = k::rope_reference<T>(c.table, c.in, c.out, c.pos, isa.fma);
    CHECK(want != k::kernel_error::ok);
    CHECK(same_bytes(buf, before));
    CHECK(kern.apply(c.table, c.in, c.out, c.pos) == want);
    CHECK(same_bytes(buf, before));
    // In place on the output view, where that is an error too (the reference runs on a copy).
    std::vector<T> scratch = buf;
    k::tensor_view<T> scratch_out = c.out;
    if (c.out.data != nullptr) scratch_out.data = scratch.data() + (c.out.data - base);
    if (k::rope_reference<T>(c.table, scratch_out, c.pos, isa.fma) == k::kernel_error::ok) continue;
    const k::kernel_error want_ip = k::rope_reference<T>(c.table, c.out, c.pos, isa.fma);
    CHECK(kern.apply_in_place(c.table, c.out, c.pos) == want_ip);
    CHECK(same_bytes(buf, before));
  }
  // q and k: an error in k leaves q unwritten too.
  const auto k_bad = k::dense<T>(base + 2 * n, tokens - 1, heads, hd);
  const auto k_in = k::dense<const T>(base + 2 * n, tokens - 1, heads, hd);
  const k::kernel_error want =
      k::rope_reference_qk<T>(good, in, out, k_in, k_bad, k::token_positions::from(0), isa.fma);
  CHECK(want == k::kernel_error::shape_mismatch);
  CHECK(kern.apply_qk(good, in, out, k_in, k_bad, k::token_positions::from(0)) == want);
  CHECK(same_bytes(buf, before));
}

#if defined(__x86_64__)
// The CPU's feature flags as Linux reports them (features the kernel does not enable, e.g.
// AVX-512 without XSAVE support for its registers, are absent): an oracle independent of xsimd's
// cpuid code and of the compiler's. Empty when /proc/cpuinfo is not readable.
// Under user-mode emulation (qemu-x86_64 -cpu MODEL, tests/emulated) /proc/cpuinfo is the host's,
// so the test there names the model's flags in POSENC_TEST_CPU_FLAGS (space-separated, the same
// names), which then replace it.
std::set<std::string> cpuinfo_flags() {
  std::set<std::string> flags;
  if (const char* given = std::getenv("POSENC_TEST_CPU_FLAGS"); given != nullptr) {
    std::istringstream words(given);
    std::string w;
    while (words >> w) flags.insert(w);
    return flags;
  }
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::string w;
    while (words >> w) flags.insert(w);
    break;
  }
  return flags;
}
#endif

}  // namespace

TEST_CASE("kernels/dispatch: the registry", "[dispatch]") {
  const auto isas = d::compiled_isas();
  REQUIRE(!isas.empty());
  CHECK(std::string_view(isas.back().name) == "scalar");
  CHECK(isas.back().supported);
  CHECK(isas.back().fma == k::fma_mode::unfused);
  // Best first, each name once, from the documented list.
  const std::vector<std::string_view> order{"avx512bf16", "avx512bw", "avx2", "sse4.2",
                                            "sse2",       "neon64",   "neon", "scalar"};
  std::size_t last = 0;
  for (const d::isa_kernels& isa : isas) {
    std::size_t i = 0;
    while (i < order.size() && order[i] != isa.name) ++i;
    INFO(isa.name);
    REQUIRE(i < order.size());
    CHECK(i >= last);
    last = i + 1;
    // FMA exactly where the ISA has it.
    const std::string_view name = isa.name;
    if (name == "avx512bf16" || name == "avx512bw" || name == "avx2" || name == "neon64")
      CHECK(isa.fma == k::fma_mode::fused);
    if (name == "sse4.2" || name == "sse2" || name == "scalar")
      CHECK(isa.fma == k::fma_mode::unfused);
  }
#if defined(__x86_64__)
  // x86-64: the per-ISA TUs and the baseline are compiled when xsimd was found.
  const std::set<std::string> flags = cpuinfo_flags();
  for (const d::isa_kernels& isa : isas) {
    const std::string_view name = isa.name;
    bool want = true;
    if (name == "avx512bw" || name == "avx512bf16")
      want = flags.count("avx512f") && flags.count("avx512cd") && flags.count("avx512dq") &&
             flags.count("avx512bw") && flags.count("fma");
    if (name == "avx512bf16") want = want && flags.count("avx512_bf16");
    if (name == "avx2") want = flags.count("avx2") && flags.count("fma") && flags.count("f16c");
    if (name == "sse4.2") want = flags.count("sse4_2");
    INFO(name << " vs /proc/cpuinfo or POSENC_TEST_CPU_FLAGS");
    if (!flags.empty()) CHECK(isa.supported == want);
  }
#endif
}

TEST_CASE("kernels/dispatch: every entry has every kernel of the list", "[dispatch]") {
  // Every entry of posenc/kernels/detail/kernel_list.hpp, for each storage type with kernels of
  // its own; the count changes only with the list.
  for (const d::isa_kernels& isa : d::compiled_isas()) {
    INFO(isa.name);
    std::size_t kernels = 0;
#define POSENC_TEST_KERNEL_SET(T, group, member, function, reference, params, args) \
  CHECK(isa.group<T>().member != nullptr);                                          \
  ++kernels;
    POSENC_DISPATCHED_KERNELS(POSENC_TEST_KERNEL_SET, float, POSENC_NO_DEFAULT_ARGUMENT)
    POSENC_DISPATCHED_KERNELS(POSENC_TEST_KERNEL_SET, bf16, POSENC_NO_DEFAULT_ARGUMENT)
    POSENC_DISPATCHED_KERNELS(POSENC_TEST_KERNEL_SET, f16, POSENC_NO_DEFAULT_ARGUMENT)
#undef POSENC_TEST_KERNEL_SET
    // apply, apply_in_place, apply_qk, their multi-axis forms with a span of sources and with a
    // multi_axis_map; add_sinusoidal and add_learned out of and in place, add_alibi_bias,
    // add_t5_bias, apply_query_scale out of and in place: for float, bf16 and f16.
    CHECK(kernels == 3 * (9 + 8));
  }
}

TEST_CASE("kernels/dispatch: the dispatcher picks the best supported ISA", "[dispatch]") {
  const auto isas = d::compiled_isas();
  const d::isa_kernels* best = nullptr;
  for (const d::isa_kernels& isa : isas) {
    if (isa.supported) {
      best = &isa;
      break;
    }
  }
  REQUIRE(best != nullptr);
  CHECK(std::string_view(d::automatic_isa()) == best->name);
  if (d::isa_override() != d::isa_request::honoured) {
    CHECK(std::string_view(d::active_isa()) == best->name);
    CHECK(&d::active() == best);
  }
  std::cout << "dispatcher: " << d::active_isa() << " (automatic: " << d::automatic_isa() << ")\n";
}

TEST_CASE("kernels/dispatch: every kernel on every supported ISA == rope_reference", "[dispatch]") {
  for (const d::isa_kernels& isa : d::compiled_isas()) {
    if (!isa.supported) {
      std::cout << "skipped " << isa.name << ": not supported by this CPU" << std::endl;
      continue;
    }
    failures_of_isa = 0;
    check_isa<float>(isa);
    check_isa<bf16>(isa);
    check_isa<f16>(isa);
    check_errors<float>(isa);
    check_errors<bf16>(isa);
    check_errors<f16>(isa);
    std::cout << "ran " << isa.name << " (fma: " << (isa.fma == k::fma_mode::fused ? "yes" : "no")
              << ")" << (failures_of_isa == 0 ? "" : " -- MISMATCHES") << std::endl;
  }
}

// A copy of table's rows whose data starts `shift` floats past a 64-byte boundary (storage holds
// it): 0 gives rows aligned for every vector width, 1 rows aligned for none.
k::rope_table table_at(const k::rope_table& table, std::size_t shift, std::vector<float>& storage) {
  const std::size_t n = table.positions * table.row_size();
  storage.assign(2 * n + 32, 0.0f);
  float* p = storage.data();
  while (reinterpret_cast<std::uintptr_t>(p) % 64 != 0) ++p;
  p += shift;
  std::copy(table.cos, table.cos + n, p);
  std::copy(table.sin, table.sin + n, p + n + 16);
  k::rope_table moved = table;
  moved.cos = p;
  moved.sin = p + n + 16;
  return moved;
}

// A 64-byte aligned copy of a buffer (room to align in v; contents() gives the buffer back).
template <class T>
struct aligned_copy {
  std::vector<T> v;
  T* p = nullptr;
  std::size_t n = 0;
  explicit aligned_copy(const std::vector<T>& from) : v(from.size() + 64), n(from.size()) {
    p = v.data();
    while (reinterpret_cast<std::uintptr_t>(p) % 64 != 0) ++p;
    std::copy(from.begin(), from.end(), p);
  }
  std::vector<T> contents() const { return std::vector<T>(p, p + n); }
};

// Calls whose output is over 512 KiB (simd::detail::blocks_outer_max_bytes) but under the
// streaming threshold take the large-call loop orders (with AVX-512 the register path reading
// each head of the f32 half layout in address order, elsewhere heads outside and the row's
// blocks inside, rows not aligned to the vector size first copied to aligned ones): bit for bit
// the reference all the same, out of place and in place, dense (the table's rows aligned) and
// padded (its rows a float off), with a whole row and with rotary_dim 100 (and 84 for f32: rows
// that end in a partial vector); dense, also with streaming stores asked for into aligned
// outputs.
template <posenc::storage_type T>
void check_large_call(const d::isa_kernels& isa, std::uint32_t rotary_dim) {
  const d::rope_kernels<T>& kern = isa.rope<T>();
  constexpr std::size_t tokens = 40, hd = 128;
  constexpr std::size_t heads = sizeof(T) == 4 ? 32 : 64;  // 640 KiB of output either way
  static_assert(tokens <= cached_rows && tokens * heads * hd * sizeof(T) > (512u << 10));
  rng g;
  for (const rope_layout layout : {rope_layout::half, rope_layout::interleaved}) {
    const tables tab(hd, rotary_dim, layout);
    for (const auto fmt : {k::rope_table_format::compact, k::rope_table_format::expanded}) {
      for (const strides st : {strides::dense, strides::padded}) {
        std::vector<float> rows;
        const k::rope_table table =
            table_at(tab.get(fmt, false), st == strides::dense ? 0 : 1, rows);
        // One cosine of position 4's row a NaN whose low 16 bits round up (0x7fffffff): every
        // head's output at that channel a NaN that bf16 narrowing must keep (rounded like a
        // number it would carry into the sign: -0).
        rows[static_cast<std::size_t>(table.cos - rows.data()) + 4 * table.row_size() + 5] =
            std::bit_cast<float>(0x7fffffffu);
        INFO(isa.name << " " << posenc::storage_name<T>() << " rotary_dim " << rotary_dim
                      << " layout " << (layout == rope_layout::half ? "half" : "interleaved")
                      << " format "
                      << (fmt == k::rope_table_format::compact ? "compact" : "expanded")
                      << " strides " << static_cast<int>(st));
        const std::size_t n = elements(tokens, heads, hd, st);
        const std::vector<T> in = random_buffer<T>(n, g);
        const auto in_view = make_view<const T>(in.data(), tokens, heads, hd, st);
        const k::token_positions pos = k::token_positions::from(3);
        std::vector<T> want = random_buffer<T>(n, g), got = want;
        REQUIRE(k::rope_reference<T>(table, in_view, make_view(want.data(), tokens, heads, hd, st),
                                     pos, isa.fma) == k::kernel_error::ok);
        CHECK(kern.apply(table, in_view, make_view(got.data(), tokens, heads, hd, st), pos) ==
              k::kernel_error::ok);
        CHECK(same_bytes(want, got));
        std::vector<T> got_ip = in;
        CHECK(kern.apply_in_place(table, make_view(got_ip.data(), tokens, heads, hd, st), pos) ==
              k::kernel_error::ok);
        std::vector<T> want_ip = in;
        REQUIRE(k::rope_reference<T>(table, make_view(want_ip.data(), tokens, heads, hd, st), pos,
                                     isa.fma) == k::kernel_error::ok);
        CHECK(same_bytes(want_ip, got_ip));
        if (st != strides::dense) continue;
        // Streaming stores asked for, 64-byte aligned outputs: with AVX2 the one-pass loops
        // stream f32 a line at a time (two stores back to back) and the bf16 bodies two blocks a
        // step (the same), with AVX-512 the streamed bodies.
        k::rope_table streamed = table;
        streamed.stores = k::output_stores::streaming;
        aligned_copy<T> got_s(random_buffer<T>(n, g)), got_s_ip(in);
        CHECK(kern.apply(streamed, in_view, make_view(got_s.p, tokens, heads, hd, st), pos) ==
              k::kernel_error::ok);
        CHECK(same_bytes(want, got_s.contents()));
        CHECK(kern.apply_in_place(streamed, make_view(got_s_ip.p, tokens, heads, hd, st), pos) ==
              k::kernel_error::ok);
        CHECK(same_bytes(want_ip, got_s_ip.contents()));
      }
    }
  }
}

TEST_CASE("kernels/dispatch: calls over 512 KiB on every supported ISA == rope_reference",
          "[dispatch]") {
  for (const d::isa_kernels& isa : d::compiled_isas()) {
    if (!isa.supported) continue;
    for (const std::uint32_t rotary_dim : {128u, 100u}) {
      check_large_call<float>(isa, rotary_dim);
      check_large_call<bf16>(isa, rotary_dim);
      check_large_call<f16>(isa, rotary_dim);
    }
    // 42 pairs: an odd number of whole 8-float blocks (AVX2: five, and a partial one).
    check_large_call<float>(isa, 84);
  }
}

// Streaming stores asked for by the table (output_stores::streaming, what the parts of a threaded
// call get) on calls of any size: on AVX-512 the streamed bodies (a 64-byte aligned output; f32
// one vector to a line, 16-bit two), elsewhere ordinary stores (AVX2 streams only in calls over
// 512 KiB: check_large_call). Bit for bit the reference either
// way, for apply, apply_in_place and apply_qk, with rows that are a whole number of lines (128)
// and rows that end in a partial vector (rotary_dim 100 of 128, the rest copied).
template <posenc::storage_type T>
void check_streamed_call(const d::isa_kernels& isa) {
  const d::rope_kernels<T>& kern = isa.rope<T>();
  constexpr std::size_t tokens = 5, heads = 4, hd = 128, n = tokens * heads * hd;
  rng g;
  using aligned = aligned_copy<T>;
  for (const std::uint32_t rotary : {128u, 100u}) {
    for (const rope_layout layout : {rope_layout::half, rope_layout::interleaved}) {
      const tables tab(hd, rotary, layout);
      for (const auto fmt : {k::rope_table_format::compact, k::rope_table_format::expanded}) {
        k::rope_table table = tab.get(fmt, false);
        table.stores = k::output_stores::streaming;
        INFO(isa.name << " " << posenc::storage_name<T>() << " rotary_dim " << rotary << " layout "
                      << (layout == rope_layout::half ? "half" : "interleaved") << " format "
                      << (fmt == k::rope_table_format::compact ? "compact" : "expanded"));
        const std::vector<T> q = random_buffer<T>(n, g), kk = random_buffer<T>(n, g);
        const k::token_positions pos = k::token_positions::from(9);
        std::vector<T> want_q = random_buffer<T>(n, g), want_k = want_q;
        aligned q_in(q), k_in(kk), q_out(want_q);
        const auto qv = k::dense<const T>(q_in.p, tokens, heads, hd);
        const auto kv = k::dense<const T>(k_in.p, tokens, heads, hd);
        REQUIRE(k::rope_reference<T>(table, k::dense<const T>(q.data(), tokens, heads, hd),
                                     k::dense(want_q.data(), tokens, heads, hd), pos,
                                     isa.fma) == k::kernel_error::ok);
        REQUIRE(k::rope_reference<T>(table, k::dense<const T>(kk.data(), tokens, heads, hd),
                                     k::dense(want_k.data(), tokens, heads, hd), pos,
                                     isa.fma) == k::kernel_error::ok);
        CHECK(kern.apply(table, qv, k::dense(q_out.p, tokens, heads, hd), pos) ==
              k::kernel_error::ok);
        CHECK(same_bytes(want_q, q_out.contents()));
        aligned in_place(q);
        CHECK(kern.apply_in_place(table, k::dense(in_place.p, tokens, heads, hd), pos) ==
              k::kernel_error::ok);
        CHECK(same_bytes(want_q, in_place.contents()));
        aligned q2(random_buffer<T>(n, g)), k2(random_buffer<T>(n, g));
        CHECK(kern.apply_qk(table, qv, k::dense(q2.p, tokens, heads, hd), kv,
                            k::dense(k2.p, tokens, heads, hd), pos) == k::kernel_error::ok);
        CHECK(same_bytes(want_q, q2.contents()));
        CHECK(same_bytes(want_k, k2.contents()));
      }
    }
  }
}

TEST_CASE("kernels/dispatch: streaming stores at any size on every supported ISA == rope_reference",
          "[dispatch]") {
  for (const d::isa_kernels& isa : d::compiled_isas()) {
    if (!isa.supported) continue;
    check_streamed_call<float>(isa);
    check_streamed_call<bf16>(isa);
    check_streamed_call<f16>(isa);
  }
}

TEST_CASE("kernels/dispatch: the dispatched entry points use active()", "[dispatch]") {
  const d::isa_kernels& isa = d::active();
  const tables tab(64, 64, rope_layout::half);
  const k::rope_table table = tab.get(k::rope_table_format::compact, true);
  rng g;
  constexpr std::size_t tokens = 3, heads = 2, hd = 64, n = tokens * heads * hd;
  const k::token_positions pos = k::token_positions::from(62);  // rows 62, 63 cached, 64 not
  auto run = [&]<class T>(T) {
    const std::vector<T> in = random_buffer<T>(n, g);
    const auto iv = k::dense<const T>(in.data(), tokens, heads, hd);
    std::vector<T> want(n), got(n);
    REQUIRE(k::rope_reference<T>(table, iv, k::dense(want.data(), tokens, heads, hd), pos,
                                 isa.fma) == k::kernel_error::ok);
    CHECK(d::apply_rope(table, iv, k::dense(got.data(), tokens, heads, hd), pos) ==
          k::kernel_error::ok);
    CHECK(same_bytes(want, got));
    got = in;
    CHECK(d::apply_rope(table, k::dense(got.data(), tokens, heads, hd), pos) ==
          k::kernel_error::ok);
    CHECK(same_bytes(want, got));
    std::vector<T> q(n), kk(n);
    CHECK(d::apply_rope_qk(table, iv, k::dense(q.data(), tokens, heads, hd), iv,
                           k::dense(kk.data(), tokens, heads, hd), pos) == k::kernel_error::ok);
    CHECK(same_bytes(want, q));
    CHECK(same_bytes(want, kk));
    // An error through the dispatcher: nothing written.
    got = in;
    const auto before = got;
    CHECK(d::apply_rope(table, k::dense(got.data(), tokens, heads, hd),
                        k::token_positions::from(~std::uint64_t{0})) ==
          k::kernel_error::position_out_of_range);
    CHECK(same_bytes(before, got));
  };
  run(0.0f);
  run(bf16{});
  run(f16{});
}

// Run by meson with POSENC_ISA set and POSENC_TEST_EXPECT = "active,request" (hidden otherwise).
TEST_CASE("kernels/dispatch: POSENC_ISA", "[.env]") {
  const char* expect = std::getenv("POSENC_TEST_EXPECT");
  REQUIRE(expect != nullptr);
  const std::string e = expect;
  const std::string want_active = e.substr(0, e.find(','));
  const std::string want_request = e.substr(e.find(',') + 1);
  const std::string active = d::active_isa();
  const char* names[] = {"none", "honoured", "unknown", "unsupported"};
  const std::string request = names[static_cast<int>(d::isa_override())];
  CHECK(request == want_request);
  if (want_active == "automatic") {
    CHECK(active == d::automatic_isa());
  } else {
    CHECK(active == want_active);
  }
  std::cout << "POSENC_ISA=" << std::getenv("POSENC_ISA") << ": active " << active << ", request "
            << request << "\n";
}
