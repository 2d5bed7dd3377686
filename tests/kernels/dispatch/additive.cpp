// The runtime-dispatch library's additive kernels (posenc/kernels/dispatch.hpp,
// additive_kernels): add_sinusoidal, add_learned (out of place and in place), add_alibi_bias,
// add_t5_bias and apply_query_scale (out of place and in place), for float, bf16 and f16, on
// every compiled ISA that this CPU supports, bit for bit against the scalar references
// add_sinusoidal_reference / add_learned_reference / add_alibi_bias_reference /
// add_t5_bias_reference / apply_query_scale_reference (the definitions,
// kernels/{sinusoidal,learned,alibi,t5,temperature}_reference.hpp). These kernels never fuse a
// multiply with an add, so every ISA must give the reference's bits.
//
// Seeded random cases (xorshift32, fixed seeds, so a failure reproduces): widths from 1 to 80
// (mostly not multiples of 16, so every vector tail runs), dense, padded and head-major views
// (input and output laid out independently), positions from 0, from an offset up to the table's
// last row, and explicit ids; in place, and out of place with the same view for input and output;
// ALiBi causal and symmetric with query/key offsets (prefill, decode, keys after the queries, and
// up to the 2^24 limit) on dense, padded and query-major score blocks. Whole buffers are compared,
// so padding between the view's elements must stay as it was. Every error gives the reference's
// code and writes nothing (sentinel-filled buffers compared bitwise).
//
// Prints one line per compiled ISA, "ran <name>: sinusoidal, learned, alibi, t5, query_scale" or
// "skipped <name>: not supported by this CPU", which meson keeps in its test log.
//
// One file (over 500 lines): the three kernels share the random views, the error cases and the
// sentinel comparisons, and one program per group of the ISA entry (RoPE: dispatch.cpp) is what
// tests/cross builds for aarch64.
#include <catch2/catch.hpp>

#include <posenc/kernels/alibi_reference.hpp>
#include <posenc/kernels/dispatch.hpp>
#include <posenc/kernels/learned_reference.hpp>
#include <posenc/kernels/sinusoidal_reference.hpp>
#include <posenc/kernels/t5_reference.hpp>
#include <posenc/kernels/temperature_reference.hpp>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace k = posenc::kernels;
namespace d = posenc::kernels::dispatch;
using posenc::alibi_variant;
using posenc::bf16;
using posenc::f16;

namespace {

struct rng {
  std::uint32_t s;
  explicit rng(std::uint32_t seed) : s(seed == 0 ? 1u : seed) {}
  std::uint32_t u32() {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
  }
  // Uniform in [0, n).
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(u32() % n); }
  // Uniform in [-4, 4).
  float value() { return static_cast<float>(u32() >> 8) * 0x1p-21f - 4.0f; }
};

// Mostly values in [-4, 4); one in 16 a special value: signed zeros, infinities (inf - inf is
// NaN), a quiet NaN, subnormals, the largest float (sums overflow). One NaN encoding only: when
// both operands of an addition are NaNs, which one propagates is unspecified (IEEE 754) and
// depends on the operand order the compiler picks, so NaNs of different signs or payloads would
// make the result's bits differ between builds, not only between kernels.
template <posenc::storage_type T>
std::vector<T> random_buffer(std::size_t n, rng& g) {
  constexpr std::array<std::uint32_t, 8> special{0x00000000u, 0x80000000u, 0x7f800000u,
                                                 0xff800000u, 0x7fc00000u, 0x00000001u,
                                                 0x807fffffu, 0x7f7fffffu};
  std::vector<T> v(n);
  for (T& x : v) {
    const float f =
        g.below(16) == 0 ? std::bit_cast<float>(special[g.below(special.size())]) : g.value();
    x = posenc::store_as<T>(f);
  }
  return v;
}

template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// "element i: want 0x..., got 0x..." for the first element that differs (for failure messages).
template <class T>
std::string first_difference(const std::vector<T>& want, const std::vector<T>& got) {
  if (want.size() != got.size()) return "sizes differ";
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::memcmp(&want[i], &got[i], sizeof(T)) == 0) continue;
    std::uint32_t w = 0, o = 0;
    std::memcpy(&w, &want[i], sizeof(T));
    std::memcpy(&o, &got[i], sizeof(T));
    std::ostringstream m;
    m << "element " << i << ": want 0x" << std::hex << w << ", got 0x" << o;
    return m.str();
  }
  return "none";
}

// CHECK(same_bytes(want, got)) with the first difference in the message; true if equal.
#define CHECK_SAME(want, got)                                    \
  [&] {                                                          \
    const bool same_ = same_bytes(want, got);                    \
    INFO((same_ ? std::string() : first_difference(want, got))); \
    CHECK(same_);                                                \
    return same_;                                                \
  }()

// A width from 1 to 80: two in three from a list of odd and ragged sizes, the rest uniform (which
// sometimes gives a multiple of 16).
std::size_t random_width(rng& g) {
  constexpr std::array<std::size_t, 14> ragged{1, 3, 5, 7, 9, 15, 17, 23, 31, 33, 47, 63, 65, 79};
  if (g.below(3) != 0) return ragged[g.below(ragged.size())];
  return 1 + g.below(80);
}

// The strides of a [tokens, heads, head_dim] view: dense, padded, or head-major.
struct layout {
  std::size_t tokens, heads, head_dim, token_stride, head_stride;
  int kind;

  std::size_t extent() const {
    return (tokens - 1) * token_stride + (heads - 1) * head_stride + head_dim;
  }
  template <class T>
  k::tensor_view<T> over(T* p) const {
    return {p, tokens, heads, head_dim, token_stride, head_stride};
  }
};

layout random_layout(rng& g, std::size_t tokens, std::size_t heads, std::size_t hd) {
  layout l{tokens, heads, hd, heads * hd, hd, static_cast<int>(g.below(3))};
  if (l.kind == 1) {
    l.head_stride = hd + g.below(4);
    l.token_stride = heads * l.head_stride + g.below(6);
  } else if (l.kind == 2) {
    l.token_stride = hd + g.below(3);
    l.head_stride = tokens * l.token_stride + g.below(3);
  }
  return l;
}

// Positions for `tokens` tokens in a table of `rows` rows (rows >= tokens): from 0, from an offset
// (sometimes the last one that fits), or explicit ids (kept in *ids).
k::token_positions random_positions(rng& g, std::size_t tokens, std::size_t rows,
                                    std::vector<std::int64_t>* ids, int* kind) {
  *kind = static_cast<int>(g.below(4));
  switch (*kind) {
    case 0:
      return k::token_positions::from(0);
    case 1:
      return k::token_positions::from(g.below(rows - tokens + 1));
    case 2:
      return k::token_positions::from(rows - tokens);
    default:
      ids->resize(tokens);
      for (std::int64_t& id : *ids) id = static_cast<std::int64_t>(g.below(rows));
      return k::token_positions::of(*ids);
  }
}

int mismatches = 0;

// An additive kernel family (sinusoidal or learned) as the test sees it: the table view type,
// building a random table, and the reference.
template <posenc::storage_type T>
struct sinusoidal_family {
  using table_type = posenc::sinusoidal_table_view<float>;
  static constexpr const char* name = "sinusoidal";
  std::vector<float> storage;
  table_type make(rng& g, std::size_t rows, std::size_t dim) {
    storage = random_buffer<float>(rows * dim, g);
    return {storage.data(), rows, dim};
  }
  static k::kernel_error reference(const table_type& t, k::tensor_view<const T> in,
                                   k::tensor_view<T> out, k::token_positions pos) {
    return k::add_sinusoidal_reference<T>(t, in, out, pos);
  }
  static k::kernel_error reference(const table_type& t, k::tensor_view<T> x,
                                   k::token_positions pos) {
    return k::add_sinusoidal_reference<T>(t, x, pos);
  }
  static d::add_sinusoidal_fn<T> kernel(const d::additive_kernels<T>& e) {
    return e.add_sinusoidal;
  }
  static d::add_sinusoidal_in_place_fn<T> kernel_in_place(const d::additive_kernels<T>& e) {
    return e.add_sinusoidal_in_place;
  }
};

template <posenc::storage_type T>
struct learned_family {
  using table_type = posenc::learned_table_view<T>;
  static constexpr const char* name = "learned";
  std::vector<T> storage;
  // `rows` usable positions, after 0 to 2 leading rows (the offset).
  table_type make(rng& g, std::size_t rows, std::size_t dim) {
    const std::size_t offset = g.below(3);
    storage = random_buffer<T>((rows + offset) * dim, g);
    return {storage.data(), rows + offset, dim, offset};
  }
  static k::kernel_error reference(const table_type& t, k::tensor_view<const T> in,
                                   k::tensor_view<T> out, k::token_positions pos) {
    return k::add_learned_reference<T>(t, in, out, pos);
  }
  static k::kernel_error reference(const table_type& t, k::tensor_view<T> x,
                                   k::token_positions pos) {
    return k::add_learned_reference<T>(t, x, pos);
  }
  static d::add_learned_fn<T> kernel(const d::additive_kernels<T>& e) { return e.add_learned; }
  static d::add_learned_in_place_fn<T> kernel_in_place(const d::additive_kernels<T>& e) {
    return e.add_learned_in_place;
  }
};

// The query scale of an attention temperature: the "table" is one float per position.
template <posenc::storage_type T>
struct query_scale_family {
  using table_type = std::span<const float>;
  static constexpr const char* name = "query_scale";
  std::vector<float> storage;
  table_type make(rng& g, std::size_t rows, std::size_t) {
    storage = random_buffer<float>(rows, g);
    return storage;
  }
  static k::kernel_error reference(const table_type& t, k::tensor_view<const T> in,
                                   k::tensor_view<T> out, k::token_positions pos) {
    return k::apply_query_scale_reference<T>(t, in, out, pos);
  }
  static k::kernel_error reference(const table_type& t, k::tensor_view<T> x,
                                   k::token_positions pos) {
    return k::apply_query_scale_reference<T>(t, x, pos);
  }
  static d::apply_query_scale_fn<T> kernel(const d::additive_kernels<T>& e) {
    return e.apply_query_scale;
  }
  static d::apply_query_scale_in_place_fn<T> kernel_in_place(const d::additive_kernels<T>& e) {
    return e.apply_query_scale_in_place;
  }
};

constexpr int cases_per_kernel = 400;

// Random valid cases: out of place, in place, and the out-of-place entry with one view for both.
template <class Family, posenc::storage_type T>
void check_additive(const d::isa_kernels& isa, std::uint32_t seed) {
  const d::additive_kernels<T>& kern = isa.additive<T>();
  const auto apply = Family::kernel(kern);
  const auto apply_in_place = Family::kernel_in_place(kern);
  REQUIRE(apply != nullptr);
  REQUIRE(apply_in_place != nullptr);
  rng g(seed);
  Family fam;
  for (int c = 0; c < cases_per_kernel; ++c) {
    const std::size_t tokens = 1 + g.below(6), heads = 1 + g.below(4), hd = random_width(g);
    const std::size_t rows = tokens + g.below(20);
    const typename Family::table_type table = fam.make(g, rows, heads * hd);
    std::vector<std::int64_t> ids;
    int pos_kind = 0;
    const k::token_positions pos = random_positions(g, tokens, rows, &ids, &pos_kind);
    const layout li = random_layout(g, tokens, heads, hd);
    const layout lo = random_layout(g, tokens, heads, hd);
    INFO(isa.name << " " << Family::name << " " << posenc::storage_name<T>() << " case " << c
                  << ": tokens " << tokens << " heads " << heads << " head_dim " << hd << " rows "
                  << rows << " positions " << pos_kind << " in layout " << li.kind << " out layout "
                  << lo.kind);

    const std::vector<T> in = random_buffer<T>(li.extent(), g);
    const std::vector<T> out0 = random_buffer<T>(lo.extent(), g);  // sentinels around the view
    const k::tensor_view<const T> iv = li.over(in.data());

    std::vector<T> want = out0, got = out0;
    REQUIRE(Family::reference(table, iv, lo.over(want.data()), pos) == k::kernel_error::ok);
    CHECK(apply(table, iv, lo.over(got.data()), pos) == k::kernel_error::ok);
    mismatches += !CHECK_SAME(want, got);

    std::vector<T> want_ip = in, got_ip = in, got_alias = in;
    REQUIRE(Family::reference(table, li.over(want_ip.data()), pos) == k::kernel_error::ok);
    CHECK(apply_in_place(table, li.over(got_ip.data()), pos) == k::kernel_error::ok);
    mismatches += !CHECK_SAME(want_ip, got_ip);
    const k::tensor_view<T> alias = li.over(got_alias.data());
    CHECK(apply(table, alias, alias, pos) == k::kernel_error::ok);
    mismatches += !CHECK_SAME(want_ip, got_alias);
  }
}

// Every error of an additive kernel: the reference's code, and nothing written.
template <class Family, posenc::storage_type T>
void check_additive_errors(const d::isa_kernels& isa) {
  const d::additive_kernels<T>& kern = isa.additive<T>();
  const auto apply = Family::kernel(kern);
  const auto apply_in_place = Family::kernel_in_place(kern);
  rng g(0x5eed0001u);
  Family fam;
  constexpr std::size_t tokens = 3, heads = 2, hd = 13, n = tokens * heads * hd, rows = 8;
  const typename Family::table_type good = fam.make(g, rows, heads * hd);
  std::vector<T> buf = random_buffer<T>(3 * n, g);  // in at [0, n), out at [n, 2n), spare
  const std::vector<T> before = buf;
  T* const base = buf.data();
  const auto in = k::dense<const T>(base, tokens, heads, hd);
  const auto out = k::dense<T>(base + n, tokens, heads, hd);
  const std::array<std::int64_t, 3> past{0, static_cast<std::int64_t>(rows), 1};
  const std::array<std::int64_t, 3> negative{0, -1, 2};
  const std::array<std::int64_t, 2> too_few{0, 1};

  constexpr bool scales = std::is_same_v<typename Family::table_type, std::span<const float>>;
  typename Family::table_type no_data = good;
  if constexpr (scales) {
    no_data = {};
  } else {
    no_data.data = nullptr;
  }
  k::tensor_view<T> squeezed = out;
  squeezed.head_stride = hd - 1;
  k::tensor_view<T> huge = out;
  huge.token_stride = std::numeric_limits<std::size_t>::max() / 2;

  struct error_case {
    const char* what;
    typename Family::table_type table;
    k::tensor_view<const T> in;
    k::tensor_view<T> out;
    k::token_positions pos;
  };
  std::vector<error_case> cases{
      {"position past the table", good, in, out, k::token_positions::from(rows - tokens + 1)},
      {"id past the table", good, in, out, k::token_positions::of(past)},
      {"negative id", good, in, out, k::token_positions::of(negative)},
      {"too few ids", good, in, out, k::token_positions::of(too_few)},
      {"offset overflow", good, in, out, k::token_positions::from(~std::uint64_t{0})},
      {"shape mismatch", good, in, k::dense<T>(base + n, tokens - 1, heads, hd),
       k::token_positions::from(0)},
      {"table without data", no_data, in, out, k::token_positions::from(0)},
      {"null output", good, in, k::tensor_view<T>{nullptr, tokens, heads, hd, heads * hd, hd},
       k::token_positions::from(0)},
      {"overlapping head stride", good, in, squeezed, k::token_positions::from(0)},
      {"extent overflow", good, in, huge, k::token_positions::from(0)},
      {"partial overlap", good, in, k::dense<T>(base + 5, tokens, heads, hd),
       k::token_positions::from(0)},
  };
  if constexpr (!scales) {
    typename Family::table_type narrow = good;
    narrow.dim = heads * hd - 1;
    cases.push_back(
        {"table width != heads * head_dim", narrow, in, out, k::token_positions::from(0)});
    cases.push_back({"more heads than the table", good,
                     k::dense<const T>(base, tokens, heads + 1, hd),
                     k::dense<T>(base + tokens * (heads + 1) * hd, tokens, heads + 1, hd),
                     k::token_positions::from(0)});
  }
  if constexpr (std::is_same_v<typename Family::table_type, posenc::learned_table_view<T>>) {
    typename Family::table_type all_offset = good;
    all_offset.offset = all_offset.rows;  // no usable position
    cases.push_back({"offset past the rows", all_offset, in, out, k::token_positions::from(0)});
  }
  for (const error_case& c : cases) {
    INFO(isa.name << " " << Family::name << " " << posenc::storage_name<T>() << ": " << c.what);
    const k::kernel_error want = Family::reference(c.table, c.in, c.out, c.pos);
    CHECK(want != k::kernel_error::ok);
    REQUIRE(same_bytes(buf, before));
    const k::kernel_error got = apply(c.table, c.in, c.out, c.pos);
    CHECK(got == want);
    CHECK_SAME(before, buf);
    mismatches += got != want || !same_bytes(buf, before);
    // In place on the output view, where that is an error too (the reference first runs on a
    // copy).
    std::vector<T> scratch = buf;
    k::tensor_view<T> scratch_out = c.out;
    if (c.out.data != nullptr) scratch_out.data = scratch.data() + (c.out.data - base);
    if (Family::reference(c.table, scratch_out, c.pos) == k::kernel_error::ok) continue;
    const k::kernel_error want_ip = Family::reference(c.table, c.out, c.pos);
    const k::kernel_error got_ip = apply_in_place(c.table, c.out, c.pos);
    CHECK(got_ip == want_ip);
    CHECK_SAME(before, buf);
    mismatches += got_ip != want_ip || !same_bytes(buf, before);
  }
  // Nothing to do: an empty view is fine even without a table, and writes nothing.
  const auto empty_out = k::dense<T>(base + n, 0, heads, hd);
  const auto empty_in = k::dense<const T>(base, 0, heads, hd);
  CHECK(Family::reference(no_data, empty_in, empty_out, k::token_positions::from(0)) ==
        k::kernel_error::ok);
  CHECK(apply(no_data, empty_in, empty_out, k::token_positions::from(0)) == k::kernel_error::ok);
  CHECK_SAME(before, buf);
}

// A [heads, q_len, k_len] score block: dense, padded, or query-major ([q_len, heads, k_len]).
struct score_layout {
  std::size_t heads, q_len, k_len, head_stride, q_stride;
  int kind;

  std::size_t extent() const { return (heads - 1) * head_stride + (q_len - 1) * q_stride + k_len; }
  template <class T>
  k::score_view<T> over(T* p) const {
    return {p, heads, q_len, k_len, head_stride, q_stride};
  }
};

score_layout random_score_layout(rng& g, std::size_t heads, std::size_t q_len, std::size_t k_len) {
  score_layout l{heads, q_len, k_len, q_len * k_len, k_len, static_cast<int>(g.below(3))};
  if (l.kind == 1) {
    l.q_stride = k_len + g.below(5);
    l.head_stride = q_len * l.q_stride + g.below(7);
  } else if (l.kind == 2) {
    l.head_stride = k_len + g.below(3);
    l.q_stride = heads * l.head_stride + g.below(3);
  }
  return l;
}

template <posenc::storage_type T>
void check_alibi(const d::isa_kernels& isa, std::uint32_t seed) {
  const auto apply = isa.additive<T>().add_alibi_bias;
  REQUIRE(apply != nullptr);
  rng g(seed);
  constexpr std::uint64_t limit = k::alibi_position_limit;
  for (int c = 0; c < 2 * cases_per_kernel; ++c) {
    const std::size_t heads = 1 + g.below(4), q_len = 1 + g.below(9), k_len = random_width(g);
    const alibi_variant variant =
        g.below(2) == 0 ? alibi_variant::causal : alibi_variant::symmetric;
    // Offsets: prefill, decode after a cache, anything (keys may follow every query), and at the
    // 2^24 limit.
    std::uint64_t q_offset = 0, k_offset = 0;
    const int off_kind = static_cast<int>(g.below(4));
    if (off_kind == 1) q_offset = k_len > q_len ? k_len - q_len : 0;
    if (off_kind == 2) {
      q_offset = g.below(100);
      k_offset = g.below(100);
    }
    if (off_kind == 3) {
      q_offset = limit - q_len - g.below(3);
      k_offset = limit - k_len - g.below(100);
    }
    std::vector<float> slopes(heads);
    for (float& m : slopes) m = g.value() * 0.25f;
    const score_layout l = random_score_layout(g, heads, q_len, k_len);
    INFO(isa.name << " alibi " << posenc::storage_name<T>() << " case " << c << ": heads " << heads
                  << " q_len " << q_len << " k_len " << k_len << " variant "
                  << (variant == alibi_variant::causal ? "causal" : "symmetric") << " q_offset "
                  << q_offset << " k_offset " << k_offset << " layout " << l.kind);
    const std::vector<T> scores = random_buffer<T>(l.extent(), g);
    std::vector<T> want = scores, got = scores;
    REQUIRE(k::add_alibi_bias_reference<T>(slopes, l.over(want.data()), variant, q_offset,
                                           k_offset) == k::kernel_error::ok);
    CHECK(apply(slopes, l.over(got.data()), variant, q_offset, k_offset) == k::kernel_error::ok);
    mismatches += !CHECK_SAME(want, got);
  }
}

template <posenc::storage_type T>
void check_alibi_errors(const d::isa_kernels& isa) {
  const auto apply = isa.additive<T>().add_alibi_bias;
  rng g(0x5eed0002u);
  constexpr std::size_t heads = 3, q_len = 4, k_len = 21, n = heads * q_len * k_len;
  constexpr std::uint64_t limit = k::alibi_position_limit;
  std::vector<T> buf = random_buffer<T>(n + 8, g);
  const std::vector<T> before = buf;
  const std::vector<float> slopes{0.5f, 0.25f, 0.125f};
  const std::span<const float> all(slopes), two(slopes.data(), 2);
  const auto good = k::dense_scores(buf.data(), heads, q_len, k_len);
  k::score_view<T> squeezed = good;
  squeezed.q_stride = k_len - 1;
  k::score_view<T> heads_overlap = good;
  heads_overlap.head_stride = q_len * k_len - 1;
  k::score_view<T> huge = good;
  huge.head_stride = std::numeric_limits<std::size_t>::max() / 2;
  k::score_view<T> no_data = good;
  no_data.data = nullptr;

  struct error_case {
    const char* what;
    std::span<const float> slopes;
    k::score_view<T> scores;
    alibi_variant variant;
    std::uint64_t q_offset, k_offset;
  };
  const std::vector<error_case> cases{
      {"too few slopes", two, good, alibi_variant::causal, 0, 0},
      {"invalid variant", all, good, static_cast<alibi_variant>(7), 0, 0},
      {"null scores", all, no_data, alibi_variant::symmetric, 0, 0},
      {"overlapping query stride", all, squeezed, alibi_variant::causal, 0, 0},
      {"overlapping head stride", all, heads_overlap, alibi_variant::symmetric, 0, 0},
      {"extent overflow", all, huge, alibi_variant::causal, 0, 0},
      {"queries past 2^24", all, good, alibi_variant::causal, limit - q_len + 1, 0},
      {"keys past 2^24", all, good, alibi_variant::symmetric, 0, limit - k_len + 1},
      {"query offset overflow", all, good, alibi_variant::causal, ~std::uint64_t{0}, 0},
      {"key offset overflow", all, good, alibi_variant::symmetric, 0, ~std::uint64_t{0}},
  };
  for (const error_case& c : cases) {
    INFO(isa.name << " alibi " << posenc::storage_name<T>() << ": " << c.what);
    const k::kernel_error want =
        k::add_alibi_bias_reference<T>(c.slopes, c.scores, c.variant, c.q_offset, c.k_offset);
    CHECK(want != k::kernel_error::ok);
    REQUIRE(same_bytes(buf, before));
    const k::kernel_error got = apply(c.slopes, c.scores, c.variant, c.q_offset, c.k_offset);
    CHECK(got == want);
    CHECK_SAME(before, buf);
    mismatches += got != want || !same_bytes(buf, before);
  }
  // An empty block is fine without data or slopes, and writes nothing.
  const k::score_view<T> empty{nullptr, 0, q_len, k_len, q_len * k_len, k_len};
  CHECK(k::add_alibi_bias_reference<T>({}, empty, alibi_variant::causal, 0, 0) ==
        k::kernel_error::ok);
  CHECK(apply({}, empty, alibi_variant::causal, 0, 0) == k::kernel_error::ok);
  CHECK_SAME(before, buf);
}

// A random T5 bias view: heads rows of 2 max_distance + 1 floats.
struct t5_bias {
  std::vector<float> data;
  k::t5_bias_view view;
  t5_bias(rng& g, std::size_t heads, std::uint32_t max_distance)
      : data(random_buffer<float>(heads * (2 * std::size_t{max_distance} + 1), g)),
        view{data.data(), heads, max_distance} {}
};

template <posenc::storage_type T>
void check_t5(const d::isa_kernels& isa, std::uint32_t seed) {
  const auto apply = isa.additive<T>().add_t5_bias;
  REQUIRE(apply != nullptr);
  rng g(seed);
  constexpr std::uint64_t limit = k::t5_position_limit;
  for (int c = 0; c < 2 * cases_per_kernel; ++c) {
    const std::size_t heads = 1 + g.below(4), q_len = 1 + g.below(9), k_len = random_width(g);
    // Windows narrower and wider than the row, so that rows have a left tail, a window and a
    // right tail in every combination.
    const auto max_distance = static_cast<std::uint32_t>(1 + g.below(40));
    std::uint64_t q_offset = 0, k_offset = 0;
    const int off_kind = static_cast<int>(g.below(4));
    if (off_kind == 1) q_offset = k_len > q_len ? k_len - q_len : 0;
    if (off_kind == 2) {
      q_offset = g.below(100);
      k_offset = g.below(100);
    }
    if (off_kind == 3) {
      q_offset = limit - q_len - g.below(3);
      k_offset = limit - k_len - g.below(100);
    }
    const t5_bias bias(g, heads, max_distance);
    const score_layout l = random_score_layout(g, heads, q_len, k_len);
    INFO(isa.name << " t5 " << posenc::storage_name<T>() << " case " << c << ": heads " << heads
                  << " q_len " << q_len << " k_len " << k_len << " max_distance " << max_distance
                  << " q_offset " << q_offset << " k_offset " << k_offset << " layout " << l.kind);
    const std::vector<T> scores = random_buffer<T>(l.extent(), g);
    std::vector<T> want = scores, got = scores;
    REQUIRE(k::add_t5_bias_reference<T>(bias.view, l.over(want.data()), q_offset, k_offset) ==
            k::kernel_error::ok);
    CHECK(apply(bias.view, l.over(got.data()), q_offset, k_offset) == k::kernel_error::ok);
    mismatches += !CHECK_SAME(want, got);
  }
}

template <posenc::storage_type T>
void check_t5_errors(const d::isa_kernels& isa) {
  const auto apply = isa.additive<T>().add_t5_bias;
  rng g(0x5eed0004u);
  constexpr std::size_t heads = 3, q_len = 4, k_len = 21, n = heads * q_len * k_len;
  constexpr std::uint64_t limit = k::t5_position_limit;
  std::vector<T> buf = random_buffer<T>(n + 8, g);
  const std::vector<T> before = buf;
  const t5_bias bias(g, heads, 8);
  k::t5_bias_view two_heads = bias.view;
  two_heads.heads = 2;
  k::t5_bias_view no_bias = bias.view;
  no_bias.data = nullptr;
  k::t5_bias_view zero_distance = bias.view;
  zero_distance.max_distance = 0;
  k::t5_bias_view far = bias.view;
  far.max_distance = posenc::t5_max_distance_limit + 1;
  const auto good = k::dense_scores(buf.data(), heads, q_len, k_len);
  k::score_view<T> squeezed = good;
  squeezed.q_stride = k_len - 1;
  k::score_view<T> no_data = good;
  no_data.data = nullptr;

  struct error_case {
    const char* what;
    k::t5_bias_view bias;
    k::score_view<T> scores;
    std::uint64_t q_offset, k_offset;
  };
  const std::vector<error_case> cases{
      {"fewer bias heads", two_heads, good, 0, 0},
      {"bias without data", no_bias, good, 0, 0},
      {"max_distance 0", zero_distance, good, 0, 0},
      {"max_distance past 2^24", far, good, 0, 0},
      {"null scores", bias.view, no_data, 0, 0},
      {"overlapping query stride", bias.view, squeezed, 0, 0},
      {"queries past 2^62", bias.view, good, limit - q_len + 1, 0},
      {"keys past 2^62", bias.view, good, 0, limit - k_len + 1},
      {"query offset overflow", bias.view, good, ~std::uint64_t{0}, 0},
  };
  for (const error_case& c : cases) {
    INFO(isa.name << " t5 " << posenc::storage_name<T>() << ": " << c.what);
    const k::kernel_error want =
        k::add_t5_bias_reference<T>(c.bias, c.scores, c.q_offset, c.k_offset);
    CHECK(want != k::kernel_error::ok);
    REQUIRE(same_bytes(buf, before));
    const k::kernel_error got = apply(c.bias, c.scores, c.q_offset, c.k_offset);
    CHECK(got == want);
    CHECK_SAME(before, buf);
    mismatches += got != want || !same_bytes(buf, before);
  }
}

template <posenc::storage_type T>
void check_isa(const d::isa_kernels& isa, std::uint32_t seed) {
  check_additive<sinusoidal_family<T>, T>(isa, seed + 1);
  check_additive_errors<sinusoidal_family<T>, T>(isa);
  check_additive<learned_family<T>, T>(isa, seed + 2);
  check_additive_errors<learned_family<T>, T>(isa);
  check_alibi<T>(isa, seed + 3);
  check_alibi_errors<T>(isa);
  check_t5<T>(isa, seed + 4);
  check_t5_errors<T>(isa);
  check_additive<query_scale_family<T>, T>(isa, seed + 5);
  check_additive_errors<query_scale_family<T>, T>(isa);
}

// The dispatching entry points against the active entry's kernels, and the reference, on one
// case of each kernel (with a vector tail), out of place, in place and with an error.
template <posenc::storage_type T>
void check_wrappers() {
  const d::isa_kernels& isa = d::active();
  const d::additive_kernels<T>& kern = isa.additive<T>();
  INFO("active " << isa.name << " " << posenc::storage_name<T>());
  rng g(0x5eed0003u);
  constexpr std::size_t tokens = 3, heads = 2, hd = 37, n = tokens * heads * hd, rows = 10;
  const k::token_positions pos = k::token_positions::from(rows - tokens);
  const k::token_positions past = k::token_positions::from(rows - tokens + 1);
  const std::vector<T> in = random_buffer<T>(n, g);
  const auto iv = k::dense<const T>(in.data(), tokens, heads, hd);
  const auto view = [&](std::vector<T>& v) { return k::dense(v.data(), tokens, heads, hd); };
  const std::vector<T> out0 = random_buffer<T>(n, g);

  auto additive = [&](const auto& table, auto wrapped, auto wrapped_in_place, auto entry,
                      auto entry_in_place, auto reference, auto reference_in_place) {
    std::vector<T> want = out0, by_entry = out0, got = out0;
    REQUIRE(reference(table, iv, view(want), pos) == k::kernel_error::ok);
    REQUIRE(entry(table, iv, view(by_entry), pos) == k::kernel_error::ok);
    CHECK(wrapped(table, iv, view(got), pos) == k::kernel_error::ok);
    CHECK_SAME(want, got);
    CHECK_SAME(by_entry, got);
    std::vector<T> want_ip = in, by_entry_ip = in, got_ip = in;
    REQUIRE(reference_in_place(table, view(want_ip), pos) == k::kernel_error::ok);
    REQUIRE(entry_in_place(table, view(by_entry_ip), pos) == k::kernel_error::ok);
    CHECK(wrapped_in_place(table, view(got_ip), pos) == k::kernel_error::ok);
    CHECK_SAME(want_ip, got_ip);
    CHECK_SAME(by_entry_ip, got_ip);
    // An error through the dispatcher: the same code, nothing written.
    std::vector<T> untouched = out0;
    CHECK(wrapped(table, iv, view(untouched), past) == k::kernel_error::position_out_of_range);
    CHECK(wrapped_in_place(table, view(untouched), past) == k::kernel_error::position_out_of_range);
    CHECK_SAME(untouched, out0);
  };

  const std::vector<float> sin_rows = random_buffer<float>(rows * heads * hd, g);
  const posenc::sinusoidal_table_view<float> sin_table{sin_rows.data(), rows, heads * hd};
  additive(
      sin_table,
      [](const auto& t, k::tensor_view<const T> a, k::tensor_view<T> b, k::token_positions p) {
        return d::add_sinusoidal(t, a, b, p);
      },
      [](const auto& t, k::tensor_view<T> x, k::token_positions p) {
        return d::add_sinusoidal(t, x, p);
      },
      kern.add_sinusoidal, kern.add_sinusoidal_in_place,
      [](const auto& t, k::tensor_view<const T> a, k::tensor_view<T> b, k::token_positions p) {
        return k::add_sinusoidal_reference<T>(t, a, b, p);
      },
      [](const auto& t, k::tensor_view<T> x, k::token_positions p) {
        return k::add_sinusoidal_reference<T>(t, x, p);
      });

  const std::vector<T> learned_rows = random_buffer<T>((rows + 1) * heads * hd, g);
  const posenc::learned_table_view<T> learned_table{learned_rows.data(), rows + 1, heads * hd, 1};
  additive(
      learned_table,
      [](const auto& t, k::tensor_view<const T> a, k::tensor_view<T> b, k::token_positions p) {
        return d::add_learned(t, a, b, p);
      },
      [](const auto& t, k::tensor_view<T> x, k::token_positions p) {
        return d::add_learned(t, x, p);
      },
      kern.add_learned, kern.add_learned_in_place,
      [](const auto& t, k::tensor_view<const T> a, k::tensor_view<T> b, k::token_positions p) {
        return k::add_learned_reference<T>(t, a, b, p);
      },
      [](const auto& t, k::tensor_view<T> x, k::token_positions p) {
        return k::add_learned_reference<T>(t, x, p);
      });

  constexpr std::size_t q_len = 5, k_len = 41;
  const std::vector<float> slopes{0.5f, 0.0625f};
  const std::vector<T> scores = random_buffer<T>(heads * q_len * k_len, g);
  for (const alibi_variant v : {alibi_variant::causal, alibi_variant::symmetric}) {
    std::vector<T> want = scores, by_entry = scores, got = scores;
    REQUIRE(k::add_alibi_bias_reference<T>(slopes,
                                           k::dense_scores(want.data(), heads, q_len, k_len), v, 36,
                                           0) == k::kernel_error::ok);
    REQUIRE(kern.add_alibi_bias(slopes, k::dense_scores(by_entry.data(), heads, q_len, k_len), v,
                                36, 0) == k::kernel_error::ok);
    CHECK(d::add_alibi_bias(slopes, k::dense_scores(got.data(), heads, q_len, k_len), v, 36, 0) ==
          k::kernel_error::ok);
    CHECK_SAME(want, got);
    CHECK_SAME(by_entry, got);
    // The default offsets (0, 0), as in the header-only entry.
    std::vector<T> want0 = scores, got0 = scores;
    REQUIRE(k::add_alibi_bias_reference<T>(slopes,
                                           k::dense_scores(want0.data(), heads, q_len, k_len),
                                           v) == k::kernel_error::ok);
    CHECK(d::add_alibi_bias(slopes, k::dense_scores(got0.data(), heads, q_len, k_len), v) ==
          k::kernel_error::ok);
    CHECK_SAME(want0, got0);
    // An error: nothing written.
    std::vector<T> untouched = scores;
    CHECK(d::add_alibi_bias(std::span(slopes.data(), 1),
                            k::dense_scores(untouched.data(), heads, q_len, k_len),
                            v) == k::kernel_error::shape_mismatch);
    CHECK_SAME(untouched, scores);
  }

  const t5_bias bias(g, heads, 7);
  {
    std::vector<T> want = scores, by_entry = scores, got = scores, want0 = scores, got0 = scores;
    REQUIRE(k::add_t5_bias_reference<T>(bias.view,
                                        k::dense_scores(want.data(), heads, q_len, k_len), 36,
                                        3) == k::kernel_error::ok);
    REQUIRE(kern.add_t5_bias(bias.view, k::dense_scores(by_entry.data(), heads, q_len, k_len), 36,
                             3) == k::kernel_error::ok);
    CHECK(d::add_t5_bias(bias.view, k::dense_scores(got.data(), heads, q_len, k_len), 36, 3) ==
          k::kernel_error::ok);
    CHECK_SAME(want, got);
    CHECK_SAME(by_entry, got);
    REQUIRE(k::add_t5_bias_reference<T>(bias.view, k::dense_scores(want0.data(), heads, q_len,
                                                                   k_len)) == k::kernel_error::ok);
    CHECK(d::add_t5_bias(bias.view, k::dense_scores(got0.data(), heads, q_len, k_len)) ==
          k::kernel_error::ok);
    CHECK_SAME(want0, got0);
    std::vector<T> untouched = scores;
    k::t5_bias_view one_head = bias.view;
    one_head.heads = 1;
    CHECK(d::add_t5_bias(one_head, k::dense_scores(untouched.data(), heads, q_len, k_len)) ==
          k::kernel_error::shape_mismatch);
    CHECK_SAME(untouched, scores);
  }

  const std::vector<float> scales = random_buffer<float>(rows, g);
  additive(
      std::span<const float>(scales),
      [](const auto& t, k::tensor_view<const T> a, k::tensor_view<T> b, k::token_positions p) {
        return d::apply_query_scale(t, a, b, p);
      },
      [](const auto& t, k::tensor_view<T> x, k::token_positions p) {
        return d::apply_query_scale(t, x, p);
      },
      kern.apply_query_scale, kern.apply_query_scale_in_place,
      [](const auto& t, k::tensor_view<const T> a, k::tensor_view<T> b, k::token_positions p) {
        return k::apply_query_scale_reference<T>(t, a, b, p);
      },
      [](const auto& t, k::tensor_view<T> x, k::token_positions p) {
        return k::apply_query_scale_reference<T>(t, x, p);
      });
}

}  // namespace

TEST_CASE("kernels/dispatch_additive: every entry has every additive kernel", "[dispatch]") {
  for (const d::isa_kernels& isa : d::compiled_isas()) {
    INFO(isa.name);
    auto all_set = [](const auto& e) {
      return e.add_sinusoidal != nullptr && e.add_sinusoidal_in_place != nullptr &&
             e.add_learned != nullptr && e.add_learned_in_place != nullptr &&
             e.add_alibi_bias != nullptr && e.add_t5_bias != nullptr &&
             e.apply_query_scale != nullptr && e.apply_query_scale_in_place != nullptr;
    };
    CHECK(all_set(isa.additive<float>()));
    CHECK(all_set(isa.additive<bf16>()));
    CHECK(all_set(isa.additive<f16>()));
    CHECK(&isa.additive<float>() == &isa.additive_f32);
    CHECK(&isa.additive<bf16>() == &isa.additive_bf16);
    CHECK(&isa.additive<f16>() == &isa.additive_f16);
    // The earlier name of additive<T>() (deprecated) is the same group.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
    CHECK(&isa.encodings<float>() == &isa.additive_f32);
    CHECK(&isa.encodings<bf16>() == &isa.additive_bf16);
    CHECK(&isa.encodings<f16>() == &isa.additive_f16);
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
  }
}

TEST_CASE("kernels/dispatch_additive: every kernel on every supported ISA == the reference",
          "[dispatch]") {
  std::uint32_t seed = 0x9e3779b9u;
  for (const d::isa_kernels& isa : d::compiled_isas()) {
    if (!isa.supported) {
      std::cout << "skipped " << isa.name << ": not supported by this CPU" << std::endl;
      continue;
    }
    mismatches = 0;
    // The same inputs on every ISA (the seed depends only on the storage type).
    check_isa<float>(isa, seed);
    check_isa<bf16>(isa, seed + 16);
    check_isa<f16>(isa, seed + 32);
    std::cout << "ran " << isa.name << ": sinusoidal, learned, alibi, t5, query_scale"
              << (mismatches == 0 ? "" : " -- MISMATCHES") << std::endl;
  }
}

TEST_CASE("kernels/dispatch_additive: the dispatched entry points use active()",
          "[dispatch][wrappers]") {
  check_wrappers<float>();
  check_wrappers<bf16>();
  check_wrappers<f16>();
  std::cout << "wrappers: active " << d::active_isa() << std::endl;
}

// Run by meson with POSENC_ISA=scalar (hidden otherwise): the wrappers then run the scalar entry.
TEST_CASE("kernels/dispatch_additive: POSENC_ISA=scalar", "[.env]") {
  const char* env = std::getenv("POSENC_ISA");
  REQUIRE(env != nullptr);
  CHECK(std::string_view(env) == "scalar");
  CHECK(std::string_view(d::active_isa()) == "scalar");
  CHECK(&d::active() == &d::compiled_isas().back());
  check_wrappers<float>();
  check_wrappers<bf16>();
  check_wrappers<f16>();
  std::cout << "wrappers: active " << d::active_isa() << std::endl;
}
