// The multi-axis RoPE kernels (M-RoPE and 2-D axial) of the runtime-dispatch library and the
// header-only entry points (posenc/kernels/mrope.hpp): on every compiled ISA this CPU supports,
// for float, bf16 and f16, both pair layouts, compact and expanded tables, cached and on-the-fly
// rows, offsets and id streams, small (blocks outside) and large (head by head) calls, out of
// place, in place and q/k, with the pair map as a span of sources and as a multi_axis_map:
// - bit for bit multi_axis_rope_reference(..., isa.fma) (kernels/mrope_reference.hpp, itself
//   checked against HF Qwen2-VL and MPFR in tests/multimodal);
// - a law that does not go through the reference: with M-RoPE every pair k keeps its own
//   frequency, so the channels of a pair fed by stream s equal those of the 1-D kernel run with
//   stream s's positions (same ISA, same bits);
// - every error: the reference's code, nothing written; a bad map refused by
//   multi_axis_map::try_make, a map that does not fit the call refused by the kernels.
// Prints "ran <isa>" / "skipped <isa>: not supported by this CPU" per compiled ISA.
#include <catch2/catch.hpp>

#include <posenc/kernels/dispatch.hpp>
#include <posenc/kernels/mrope.hpp>
#include <posenc/kernels/mrope_reference.hpp>
#include <posenc/tables/mrope.hpp>
#include <posenc/tables/runtime_rope_cache.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <span>
#include <string>
#include <vector>

namespace k = posenc::kernels;
namespace d = posenc::kernels::dispatch;
using posenc::bf16;
using posenc::f16;
using posenc::pair_source;
using posenc::rope_config;
using posenc::rope_layout;

namespace {

// Deterministic inputs (xorshift32), values in [-2, 2).
struct rng {
  std::uint32_t s = 0x2545f491u;
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

// One multi-axis configuration: its rope part, pair map and stream count.
struct multi_axis {
  std::string name;
  rope_config rope;
  std::vector<pair_source> sources;
  std::size_t streams;
  bool own_frequencies;  // k == i for every pair (M-RoPE): the law against the 1-D kernel holds
};

multi_axis mrope(const char* name, rope_config rope, std::array<std::uint32_t, 3> section,
                 posenc::mrope_layout l) {
  const posenc::mrope_config c{rope, section, l};
  std::vector<pair_source> src(rope.rotary_dim / 2);
  REQUIRE(posenc::build_mrope_pair_sources(c, src.data()) == posenc::mrope_error::ok);
  return {name, rope, src, 3, true};
}
multi_axis axial(const char* name, rope_config rope, posenc::axial_frequencies f) {
  const posenc::axial_rope_config c{rope, f};
  std::vector<pair_source> src(rope.rotary_dim / 2);
  REQUIRE(posenc::build_axial_pair_sources(c, src.data()) == posenc::axial_rope_error::ok);
  return {name, rope, src, 2, false};
}

std::vector<multi_axis> configs() {
  using posenc::axial_frequencies;
  using posenc::mrope_layout;
  return {
      // Qwen2-VL (contiguous [16, 24, 24]) and Qwen3-VL (interleaved [24, 20, 20]), head_dim 128.
      mrope("qwen2-vl", {128, 128, 1000000.0, rope_layout::half, {}}, {16, 24, 24},
            mrope_layout::contiguous),
      mrope("qwen3-vl", {128, 128, 5000000.0, rope_layout::half, {}}, {24, 20, 20},
            mrope_layout::interleaved),
      // Interleaved pairs, partial rotary, a row not a multiple of any vector width.
      mrope("mrope-interleaved-partial", {84, 76, 10000.0, rope_layout::interleaved, {}},
            {10, 14, 14}, mrope_layout::contiguous),
      axial("axial-alternating", {64, 64, 10000.0, rope_layout::half, {}},
            axial_frequencies::alternating),
      axial("axial-shared-partial", {72, 40, 10000.0, rope_layout::interleaved, {}},
            axial_frequencies::shared),
  };
}

constexpr std::size_t cached_rows = 64;
struct tables {
  posenc::runtime_rope_cache<float> cache;
  std::vector<float> ecos, esin;
  const rope_config* c;
  explicit tables(const rope_config& rope)
      : cache(posenc::runtime_rope_cache<float>::make(rope, cached_rows)),
        ecos(cached_rows * rope.rotary_dim),
        esin(cached_rows * rope.rotary_dim),
        c(&rope) {
    k::expand_rope_cache(cache.view(), rope.layout, ecos.data(), esin.data());
  }
  k::rope_table get(k::rope_table_format f, bool on_the_fly) const {
    k::rope_table t = k::make_rope_table(cache.view(), c->layout);
    if (f == k::rope_table_format::expanded) {
      t.cos = ecos.data();
      t.sin = esin.data();
      t.format = f;
    }
    if (on_the_fly) t.on_the_fly = c;
    return t;
  }
};

// The position streams of one case (up to 3), as ids of both widths or offsets.
struct stream_set {
  std::vector<std::vector<std::int64_t>> ids64;
  std::vector<std::vector<std::int32_t>> ids32;
  std::vector<k::token_positions> pos;
};

// kind 0: offsets 0, 5, 9; 1: int64 ids in the cache; 2: int32 ids in the cache; 3: int64 ids past
// the cache in every stream (on-the-fly rows); 4: only the last stream past it; 5: int64 ids in the
// cache, every stream the same at even tokens (text tokens: the kernels use the 1-D row there) and
// not at odd ones; 6: offsets 7, 7, 7 (every token's streams equal).
stream_set make_streams(int kind, std::size_t n_streams, std::size_t tokens, rng& g) {
  stream_set s;
  s.ids64.resize(n_streams);
  s.ids32.resize(n_streams);
  for (std::size_t j = 0; j < n_streams; ++j) {
    for (std::size_t t = 0; t < tokens; ++t) {
      const auto r = static_cast<std::int64_t>((g.next() + 2.0f) * 15.0f);  // [0, 60)
      std::int64_t id = r;
      if (kind == 3 || (kind == 4 && j + 1 == n_streams)) id = r % 2 == 0 ? 64 + r * 997 : 63 + r;
      if (kind == 5 && j > 0 && t % 2 == 0) id = s.ids64[0][t];
      s.ids64[j].push_back(id);
      s.ids32[j].push_back(static_cast<std::int32_t>(id));
    }
  }
  for (std::size_t j = 0; j < n_streams; ++j) {
    if (kind == 0) {
      s.pos.push_back(k::token_positions::from(std::array<std::uint64_t, 3>{0, 5, 9}[j]));
    } else if (kind == 6) {
      s.pos.push_back(k::token_positions::from(7));
    } else if (kind == 2) {
      s.pos.push_back(k::token_positions::of(std::span<const std::int32_t>(s.ids32[j])));
    } else {
      s.pos.push_back(k::token_positions::of(std::span<const std::int64_t>(s.ids64[j])));
    }
  }
  return s;
}

template <posenc::storage_type T>
void check_isa(const d::isa_kernels& isa) {
  const d::rope_kernels<T>& kern = isa.rope<T>();
  REQUIRE(kern.apply_multi_axis != nullptr);
  REQUIRE(kern.apply_multi_axis_in_place != nullptr);
  REQUIRE(kern.apply_multi_axis_qk != nullptr);
  REQUIRE(kern.apply_multi_axis_map != nullptr);
  REQUIRE(kern.apply_multi_axis_map_in_place != nullptr);
  REQUIRE(kern.apply_multi_axis_map_qk != nullptr);
  rng g;
  for (const multi_axis& m : configs()) {
    const tables tab(m.rope);
    k::multi_axis_map map;
    REQUIRE(k::multi_axis_map::try_make(m.sources, m.rope.rotary_dim, m.streams, map) ==
            k::kernel_error::ok);
    CHECK(map.own_frequency() == m.own_frequencies);
    CHECK(map.streams() == m.streams);
    CHECK(map.rotary_dim() == m.rope.rotary_dim);
    CHECK(map.sources().data() == m.sources.data());
    CHECK(map.sources().size() == m.sources.size());
    const std::size_t hd = m.rope.head_dim, h = m.rope.rotary_dim / 2;
    for (const auto fmt : {k::rope_table_format::compact, k::rope_table_format::expanded}) {
      for (int kind = 0; kind < 7; ++kind) {
        // Small calls (blocks outside, heads inside) and a large one (head by head; bf16 through
        // its own bodies) for the compact cached case.
        for (const std::size_t tokens : {std::size_t{5}, std::size_t{90}}) {
          if (tokens == 90 && (kind != 1 || fmt != k::rope_table_format::compact)) continue;
          const std::size_t heads = tokens == 90 ? 16 : 3;
          const k::rope_table table = tab.get(fmt, kind == 3 || kind == 4);
          const stream_set ss = make_streams(kind, m.streams, tokens, g);
          const std::span<const k::token_positions> streams(ss.pos);
          INFO(isa.name << " " << posenc::storage_name<T>() << " " << m.name << " format "
                        << (fmt == k::rope_table_format::compact ? "compact" : "expanded")
                        << " streams kind " << kind << " tokens " << tokens);
          const std::size_t n = tokens * heads * hd;
          const std::vector<T> x = random_buffer<T>(n, g), x2 = random_buffer<T>(n, g);
          const auto in = k::dense(x.data(), tokens, heads, hd);
          const auto in2 = k::dense(x2.data(), tokens, heads, hd);
          std::vector<T> want(n), want2(n), got(n), got2(n);
          REQUIRE(k::multi_axis_rope_reference<T>(table, m.sources, in,
                                                  k::dense(want.data(), tokens, heads, hd), streams,
                                                  isa.fma) == k::kernel_error::ok);
          REQUIRE(k::multi_axis_rope_reference<T>(table, m.sources, in2,
                                                  k::dense(want2.data(), tokens, heads, hd),
                                                  streams, isa.fma) == k::kernel_error::ok);
          REQUIRE(kern.apply_multi_axis(table, m.sources, in,
                                        k::dense(got.data(), tokens, heads, hd),
                                        streams) == k::kernel_error::ok);
          CHECK(same_bytes(got, want));
          std::vector<T> inplace = x;
          REQUIRE(kern.apply_multi_axis_in_place(table, m.sources,
                                                 k::dense(inplace.data(), tokens, heads, hd),
                                                 streams) == k::kernel_error::ok);
          CHECK(same_bytes(inplace, want));
          std::fill(got.begin(), got.end(), T{});
          REQUIRE(kern.apply_multi_axis_qk(
                      table, m.sources, in, k::dense(got.data(), tokens, heads, hd), in2,
                      k::dense(got2.data(), tokens, heads, hd), streams) == k::kernel_error::ok);
          CHECK(same_bytes(got, want));
          CHECK(same_bytes(got2, want2));
          // The same with the checked map.
          std::fill(got.begin(), got.end(), T{});
          REQUIRE(kern.apply_multi_axis_map(table, map, in, k::dense(got.data(), tokens, heads, hd),
                                            streams) == k::kernel_error::ok);
          CHECK(same_bytes(got, want));
          inplace = x;
          REQUIRE(kern.apply_multi_axis_map_in_place(table, map,
                                                     k::dense(inplace.data(), tokens, heads, hd),
                                                     streams) == k::kernel_error::ok);
          CHECK(same_bytes(inplace, want));
          std::fill(got.begin(), got.end(), T{});
          std::fill(got2.begin(), got2.end(), T{});
          REQUIRE(kern.apply_multi_axis_map_qk(
                      table, map, in, k::dense(got.data(), tokens, heads, hd), in2,
                      k::dense(got2.data(), tokens, heads, hd), streams) == k::kernel_error::ok);
          CHECK(same_bytes(got, want));
          CHECK(same_bytes(got2, want2));
          if (!m.own_frequencies) continue;
          // The law: pair i fed by stream s == the 1-D kernel at stream s's positions.
          for (std::size_t s = 0; s < m.streams; ++s) {
            std::vector<T> one(n);
            REQUIRE(kern.apply(table, in, k::dense(one.data(), tokens, heads, hd), ss.pos[s]) ==
                    k::kernel_error::ok);
            std::size_t mismatches = 0, compared = 0;
            for (std::size_t i = 0; i < h; ++i) {
              if (m.sources[i].stream != s) continue;
              const posenc::channel_pair ch = posenc::pair_channels(
                  m.rope.layout, m.rope.rotary_dim, static_cast<std::uint32_t>(i));
              for (std::size_t e = 0; e < tokens * heads; ++e)
                for (const std::size_t c : {std::size_t{ch.first}, std::size_t{ch.second}}) {
                  ++compared;
                  if (std::memcmp(&one[e * hd + c], &want[e * hd + c], sizeof(T)) != 0 ||
                      std::memcmp(&one[e * hd + c], &got[e * hd + c], sizeof(T)) != 0)
                    ++mismatches;
                }
            }
            CHECK(compared > 0);
            CHECK(mismatches == 0);
          }
        }
      }
    }
  }
}

// Every error: the reference's code, and the output untouched.
template <posenc::storage_type T>
void check_errors(const d::isa_kernels& isa) {
  const d::rope_kernels<T>& kern = isa.rope<T>();
  const multi_axis m = configs()[0];
  const tables tab(m.rope);
  const k::rope_table table = tab.get(k::rope_table_format::compact, false);
  const std::size_t tokens = 4, heads = 2, hd = m.rope.head_dim, n = tokens * heads * hd;
  rng g;
  const std::vector<T> x = random_buffer<T>(n, g);
  const std::vector<T> sentinel = random_buffer<T>(n, g);
  const auto in = k::dense(x.data(), tokens, heads, hd);
  const std::vector<std::int64_t> ok_ids{1, 2, 3, 4}, short_ids{1, 2, 3}, far_ids{1, 2, 64, 4},
      negative_ids{1, -2, 3, 4};
  const auto ids = [](const std::vector<std::int64_t>& v) {
    return k::token_positions::of(std::span<const std::int64_t>(v));
  };
  const k::token_positions ok = ids(ok_ids);
  std::vector<pair_source> bad_stream = m.sources, bad_freq = m.sources;
  bad_stream[7].stream = 3;
  bad_freq[7].inv_freq_index = static_cast<std::uint32_t>(m.sources.size());
  const std::span<const pair_source> short_map(m.sources.data(), m.sources.size() - 1);
  struct error_case {
    const char* what;
    std::span<const pair_source> sources;
    std::vector<k::token_positions> streams;
    k::kernel_error expected;
  };
  const std::vector<error_case> cases{
      {"a stream shorter than the tokens",
       m.sources,
       {ok, ids(short_ids), ok},
       k::kernel_error::shape_mismatch},
      {"a position past the table",
       m.sources,
       {ok, ok, ids(far_ids)},
       k::kernel_error::position_out_of_range},
      {"a negative id", m.sources, {ids(negative_ids), ok, ok}, k::kernel_error::negative_position},
      {"no stream", m.sources, {}, k::kernel_error::invalid_argument},
      {"5 streams", m.sources, {ok, ok, ok, ok, ok}, k::kernel_error::invalid_argument},
      {"a pair naming stream 3 of 3", bad_stream, {ok, ok, ok}, k::kernel_error::invalid_argument},
      {"a frequency past rotary_dim/2", bad_freq, {ok, ok, ok}, k::kernel_error::invalid_argument},
      {"a map one pair short", short_map, {ok, ok, ok}, k::kernel_error::invalid_argument},
  };
  for (const error_case& c : cases) {
    INFO(isa.name << " " << posenc::storage_name<T>() << ": " << c.what);
    // The map form: a map that try_make accepts for these streams gives the same code; one it
    // refuses is refused there with the map's code (invalid_argument), the map left as it was.
    {
      k::multi_axis_map map, before;
      REQUIRE(k::multi_axis_map::try_make(m.sources, m.rope.rotary_dim, 3, before) ==
              k::kernel_error::ok);
      map = before;
      const k::kernel_error made =
          k::multi_axis_map::try_make(c.sources, m.rope.rotary_dim, c.streams.size(), map);
      if (made == k::kernel_error::ok) {
        std::vector<T> out = sentinel, inplace = x, q = sentinel, kk = sentinel;
        CHECK(kern.apply_multi_axis_map(table, map, in, k::dense(out.data(), tokens, heads, hd),
                                        c.streams) == c.expected);
        CHECK(kern.apply_multi_axis_map_in_place(table, map,
                                                 k::dense(inplace.data(), tokens, heads, hd),
                                                 c.streams) == c.expected);
        CHECK(kern.apply_multi_axis_map_qk(table, map, in, k::dense(q.data(), tokens, heads, hd),
                                           in, k::dense(kk.data(), tokens, heads, hd),
                                           c.streams) == c.expected);
        CHECK(same_bytes(out, sentinel));
        CHECK(same_bytes(inplace, x));
        CHECK(same_bytes(q, sentinel));
        CHECK(same_bytes(kk, sentinel));
      } else {
        CHECK(made == k::kernel_error::invalid_argument);
        CHECK(c.expected == k::kernel_error::invalid_argument);
        CHECK(map.sources().data() == before.sources().data());
        CHECK(map.rotary_dim() == before.rotary_dim());
        CHECK(map.streams() == before.streams());
      }
    }
    std::vector<T> ref = sentinel, out = sentinel, inplace = x, q = sentinel, kk = sentinel;
    const k::kernel_error want = k::multi_axis_rope_reference<T>(
        table, c.sources, in, k::dense(ref.data(), tokens, heads, hd), c.streams, isa.fma);
    CHECK(want == c.expected);
    CHECK(kern.apply_multi_axis(table, c.sources, in, k::dense(out.data(), tokens, heads, hd),
                                c.streams) == c.expected);
    CHECK(kern.apply_multi_axis_in_place(table, c.sources,
                                         k::dense(inplace.data(), tokens, heads, hd),
                                         c.streams) == c.expected);
    CHECK(kern.apply_multi_axis_qk(table, c.sources, in, k::dense(q.data(), tokens, heads, hd), in,
                                   k::dense(kk.data(), tokens, heads, hd),
                                   c.streams) == c.expected);
    CHECK(same_bytes(ref, sentinel));
    CHECK(same_bytes(out, sentinel));
    CHECK(same_bytes(inplace, x));
    CHECK(same_bytes(q, sentinel));
    CHECK(same_bytes(kk, sentinel));
  }
  // Maps that do not fit the call: invalid_argument from every map form, nothing written.
  {
    const std::vector<k::token_positions> three{ok, ok, ok}, two{ok, ok};
    k::multi_axis_map for_three, other_dim;
    REQUIRE(k::multi_axis_map::try_make(m.sources, m.rope.rotary_dim, 3, for_three) ==
            k::kernel_error::ok);
    // The first 30 sources form a map for rotary_dim 60 (every stream and frequency of the first
    // 30 pairs of Qwen2-VL's [16, 24, 24] is below 30 and 3).
    REQUIRE(k::multi_axis_map::try_make(std::span<const pair_source>(m.sources.data(), 30), 60, 3,
                                        other_dim) == k::kernel_error::ok);
    struct misfit {
      const char* what;
      k::multi_axis_map map;
      std::vector<k::token_positions> streams;
    };
    const std::vector<misfit> misfits{
        {"no map (default-constructed)", k::multi_axis_map{}, three},
        {"no map and no stream", k::multi_axis_map{}, {}},
        {"a map of 3 streams given 2", for_three, two},
        {"a map for rotary_dim 60 on a table of 128", other_dim, three},
    };
    for (const misfit& c : misfits) {
      INFO(isa.name << " " << posenc::storage_name<T>() << ": " << c.what);
      std::vector<T> ref = sentinel, out = sentinel, inplace = x, q = sentinel, kk = sentinel;
      CHECK(k::multi_axis_rope_reference<T>(table, c.map, in,
                                            k::dense(ref.data(), tokens, heads, hd), c.streams,
                                            isa.fma) == k::kernel_error::invalid_argument);
      CHECK(kern.apply_multi_axis_map(table, c.map, in, k::dense(out.data(), tokens, heads, hd),
                                      c.streams) == k::kernel_error::invalid_argument);
      CHECK(kern.apply_multi_axis_map_in_place(table, c.map,
                                               k::dense(inplace.data(), tokens, heads, hd),
                                               c.streams) == k::kernel_error::invalid_argument);
      CHECK(kern.apply_multi_axis_map_qk(table, c.map, in, k::dense(q.data(), tokens, heads, hd),
                                         in, k::dense(kk.data(), tokens, heads, hd),
                                         c.streams) == k::kernel_error::invalid_argument);
      CHECK(same_bytes(ref, sentinel));
      CHECK(same_bytes(out, sentinel));
      CHECK(same_bytes(inplace, x));
      CHECK(same_bytes(q, sentinel));
      CHECK(same_bytes(kk, sentinel));
    }
  }
  // q and k of different token counts: neither written.
  std::vector<T> q = sentinel, kk = sentinel;
  const std::vector<k::token_positions> three{ok, ok, ok};
  CHECK(kern.apply_multi_axis_qk(table, m.sources, in, k::dense(q.data(), tokens, heads, hd),
                                 k::dense(x.data(), tokens - 1, heads, hd),
                                 k::dense(kk.data(), tokens - 1, heads, hd),
                                 three) == k::kernel_error::shape_mismatch);
  CHECK(same_bytes(q, sentinel));
  CHECK(same_bytes(kk, sentinel));
}

}  // namespace

TEST_CASE("kernels/mrope: every compiled ISA == the reference, the 1-D law, errors",
          "[mrope][dispatch]") {
  int ran = 0;
  for (const d::isa_kernels& isa : d::compiled_isas()) {
    if (!isa.supported) {
      std::cout << "skipped " << isa.name << ": not supported by this CPU\n";
      continue;
    }
    check_isa<float>(isa);
    check_isa<bf16>(isa);
    check_isa<f16>(isa);
    check_errors<float>(isa);
    check_errors<bf16>(isa);
    check_errors<f16>(isa);
    std::cout << "ran " << isa.name << "\n";
    ++ran;
  }
  CHECK(ran >= 2);  // scalar and at least the baseline SIMD entry
}

TEST_CASE("kernels/mrope: multi_axis_map::try_make refuses every bad map, leaving its output",
          "[mrope][map]") {
  // Qwen2-VL's [16, 24, 24] for rotary_dim 128 (64 pairs) and 3 streams, written out.
  std::vector<pair_source> good;
  for (std::uint32_t i = 0; i < 64; ++i) good.push_back({i < 16 ? 0u : i < 40 ? 1u : 2u, i});
  k::multi_axis_map map;
  REQUIRE(k::multi_axis_map::try_make(good, 128, 3, map) == k::kernel_error::ok);
  CHECK(map.own_frequency());
  CHECK(map.rotary_dim() == 128);
  CHECK(map.streams() == 3);
  // Two pairs that trade frequencies: no longer every pair's own.
  std::vector<pair_source> moved = good;
  std::swap(moved[3].inv_freq_index, moved[4].inv_freq_index);
  k::multi_axis_map not_own;
  REQUIRE(k::multi_axis_map::try_make(moved, 128, 3, not_own) == k::kernel_error::ok);
  CHECK_FALSE(not_own.own_frequency());
  // The largest valid stream and frequency are accepted.
  std::vector<pair_source> edge = good;
  edge[0] = {3, 63};
  k::multi_axis_map edge_map;
  CHECK(k::multi_axis_map::try_make(edge, 128, 4, edge_map) == k::kernel_error::ok);
  CHECK_FALSE(edge_map.own_frequency());

  std::vector<pair_source> bad_stream = good, bad_freq = good, huge = good;
  bad_stream[63].stream = 3;
  bad_freq[0].inv_freq_index = 64;
  huge[10] = {0xffffffffu, 0xffffffffu};
  struct bad_case {
    const char* what;
    std::span<const pair_source> sources;
    std::uint32_t rotary_dim;
    std::size_t streams;
  };
  const std::vector<bad_case> cases{
      {"no stream", good, 128, 0},
      {"5 streams", good, 128, 5},
      {"rotary_dim 0", std::span<const pair_source>(), 0, 3},
      {"an odd rotary_dim", std::span<const pair_source>(good.data(), 63), 127, 3},
      {"one source short", std::span<const pair_source>(good.data(), 63), 128, 3},
      {"one source too many", std::span<const pair_source>(good.data(), 64), 126, 3},
      {"stream 3 of 3", bad_stream, 128, 3},
      {"frequency 64 of 64", bad_freq, 128, 3},
      {"stream and frequency 2^32 - 1", huge, 128, 4},
  };
  for (const bad_case& c : cases) {
    INFO(c.what);
    k::multi_axis_map out = map;
    CHECK(k::multi_axis_map::try_make(c.sources, c.rotary_dim, c.streams, out) ==
          k::kernel_error::invalid_argument);
    CHECK(out.sources().data() == good.data());
    CHECK(out.rotary_dim() == 128);
    CHECK(out.streams() == 3);
    CHECK(out.own_frequency());
  }
  // The runs: none for a map at its own frequencies ([16, 24, 24] would be three runs of stride 1).
  const auto runs_are = [](const k::multi_axis_map& mm,
                           std::vector<std::array<std::uint32_t, 5>> want) {
    std::vector<std::array<std::uint32_t, 5>> got;
    for (const k::pair_run& r : mm.runs())
      got.push_back({r.start, r.len, r.k0, std::uint32_t{r.stream}, std::uint32_t{r.stride}});
    return got == want;
  };
  CHECK(map.runs().empty());
  // The same sections with frequencies 0 and 1 traded: no longer own. Pair 0 (frequency 1) is a
  // run alone; pairs 1 and 2 (frequencies 0 and 2) a run of stride 2; then pairs 3 to 15, and the
  // other two sections.
  {
    std::vector<pair_source> traded = good;
    std::swap(traded[0].inv_freq_index, traded[1].inv_freq_index);
    k::multi_axis_map tm;
    REQUIRE(k::multi_axis_map::try_make(traded, 128, 3, tm) == k::kernel_error::ok);
    CHECK(runs_are(tm, {{0, 1, 1, 0, 1},
                        {1, 2, 0, 0, 2},
                        {3, 13, 3, 0, 1},
                        {16, 24, 16, 1, 1},
                        {40, 24, 40, 2, 1}}));
  }
  // 2-D axial, alternating (Pixtral) for rotary_dim 64: height at the even frequencies, width at
  // the odd ones, 16 pairs each; shared for rotary_dim 40: both at the even ones, 10 pairs each.
  for (const auto& [c, want] :
       std::vector<std::pair<multi_axis, std::vector<std::array<std::uint32_t, 5>>>>{
           {configs()[3], {{0, 16, 0, 0, 2}, {16, 16, 1, 1, 2}}},
           {configs()[4], {{0, 10, 0, 0, 2}, {10, 10, 0, 1, 2}}}}) {
    INFO(c.name);
    k::multi_axis_map am;
    REQUIRE(k::multi_axis_map::try_make(c.sources, c.rope.rotary_dim, 2, am) ==
            k::kernel_error::ok);
    CHECK(runs_are(am, want));
  }
  // Qwen3-VL's interleaved sections: own frequencies, no runs.
  {
    const multi_axis q3 = configs()[1];
    k::multi_axis_map qm;
    REQUIRE(k::multi_axis_map::try_make(q3.sources, 128, 3, qm) == k::kernel_error::ok);
    CHECK(qm.own_frequency());
    CHECK(qm.runs().empty());
  }
  // A stride-2 run whose block would pass the row: frequencies 0 and 2 of a 3-pair row need
  // entries 0 to 3. No runs.
  {
    const std::vector<pair_source> odd_row{{0, 0}, {0, 2}, {1, 1}};
    k::multi_axis_map om;
    REQUIRE(k::multi_axis_map::try_make(odd_row, 6, 2, om) == k::kernel_error::ok);
    CHECK(om.runs().empty());
    const std::vector<pair_source> fits{{0, 0}, {0, 2}, {1, 1}, {1, 3}};
    REQUIRE(k::multi_axis_map::try_make(fits, 8, 2, om) == k::kernel_error::ok);
    CHECK(runs_are(om, {{0, 2, 0, 0, 2}, {2, 2, 1, 1, 2}}));
  }
  // A default map refers to nothing.
  const k::multi_axis_map none;
  CHECK(none.sources().empty());
  CHECK(none.rotary_dim() == 0);
  CHECK(none.streams() == 0);
  CHECK(none.runs().empty());
}

TEST_CASE("kernels/mrope: the dispatched and header-only entry points == the reference",
          "[mrope][entry]") {
  const multi_axis m = configs()[1];
  const tables tab(m.rope);
  const k::rope_table table = tab.get(k::rope_table_format::compact, true);
  rng g;
  const std::size_t tokens = 7, heads = 2, hd = m.rope.head_dim, n = tokens * heads * hd;
  const stream_set ss = make_streams(4, 3, tokens, g);
  const std::vector<float> x = random_buffer<float>(n, g);
  const auto in = k::dense(x.data(), tokens, heads, hd);
  std::vector<float> want(n), got(n), header(n), header_qk(n), header_k(n);
  REQUIRE(k::multi_axis_rope_reference<float>(table, m.sources, in,
                                              k::dense(want.data(), tokens, heads, hd), ss.pos,
                                              d::active().fma) == k::kernel_error::ok);
  REQUIRE(d::apply_multi_axis_rope(table, m.sources, in, k::dense(got.data(), tokens, heads, hd),
                                   ss.pos) == k::kernel_error::ok);
  CHECK(same_bytes(got, want));
  REQUIRE(k::multi_axis_rope_reference<float>(table, m.sources, in,
                                              k::dense(want.data(), tokens, heads, hd), ss.pos,
                                              k::build_fma_mode) == k::kernel_error::ok);
  REQUIRE(k::apply_multi_axis_rope<float>(table, m.sources, in,
                                          k::dense(header.data(), tokens, heads, hd),
                                          ss.pos) == k::kernel_error::ok);
  CHECK(same_bytes(header, want));
  REQUIRE(k::apply_multi_axis_rope_qk<float>(
              table, m.sources, in, k::dense(header_qk.data(), tokens, heads, hd), in,
              k::dense(header_k.data(), tokens, heads, hd), ss.pos) == k::kernel_error::ok);
  CHECK(same_bytes(header_qk, want));
  CHECK(same_bytes(header_k, want));
  std::vector<float> y = x;
  REQUIRE(k::apply_multi_axis_rope<float>(table, m.sources, k::dense(y.data(), tokens, heads, hd),
                                          ss.pos) == k::kernel_error::ok);
  CHECK(same_bytes(y, want));
  // The map forms.
  k::multi_axis_map map;
  REQUIRE(k::multi_axis_map::try_make(m.sources, m.rope.rotary_dim, 3, map) == k::kernel_error::ok);
  std::fill(header.begin(), header.end(), 0.0f);
  REQUIRE(k::apply_multi_axis_rope<float>(table, map, in,
                                          k::dense(header.data(), tokens, heads, hd),
                                          ss.pos) == k::kernel_error::ok);
  CHECK(same_bytes(header, want));
  std::fill(header_qk.begin(), header_qk.end(), 0.0f);
  std::fill(header_k.begin(), header_k.end(), 0.0f);
  REQUIRE(k::apply_multi_axis_rope_qk<float>(
              table, map, in, k::dense(header_qk.data(), tokens, heads, hd), in,
              k::dense(header_k.data(), tokens, heads, hd), ss.pos) == k::kernel_error::ok);
  CHECK(same_bytes(header_qk, want));
  CHECK(same_bytes(header_k, want));
  y = x;
  REQUIRE(k::apply_multi_axis_rope<float>(table, map, k::dense(y.data(), tokens, heads, hd),
                                          ss.pos) == k::kernel_error::ok);
  CHECK(same_bytes(y, want));
  REQUIRE(k::multi_axis_rope_reference<float>(table, m.sources, in,
                                              k::dense(want.data(), tokens, heads, hd), ss.pos,
                                              d::active().fma) == k::kernel_error::ok);
  std::fill(got.begin(), got.end(), 0.0f);
  REQUIRE(d::apply_multi_axis_rope(table, map, in, k::dense(got.data(), tokens, heads, hd),
                                   ss.pos) == k::kernel_error::ok);
  CHECK(same_bytes(got, want));
}
