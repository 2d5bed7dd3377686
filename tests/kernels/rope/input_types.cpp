// Inputs besides int64 position ids and posenc's own storage types: ids held as std::int32_t (as
// llama.cpp holds them) and tensors of the compiler's _Float16 (where POSENC_HAS_FLOAT16), through
// the header-only kernels and every ISA of the dispatch library.
//
// Expected values never come from the path under test:
// - int32 ids: the same ids as int64 through the other overload of token_positions::of, on the
//   same kernel (every ISA, every storage type); negative int32 ids are rejected as negative int64
//   ids are, before anything is written.
// - _Float16: f16 storage holding the same bits (another instantiation of the header kernels; for
//   the library, its f16 entry), and the float kernel on the input widened by the compiler
//   (static_cast<float>) and rounded by the compiler's own float -> _Float16 conversion
//   (static_cast<_Float16>: F16C or libgcc's soft-fp, not posenc's to_f16).
// - which calls compile: requires-expressions here, and the messages in tests/compile_fail.
//
// One file (over 500 lines): both input types go through the same tables of calls (rope_calls,
// add_calls: the header-only kernels, the references and every ISA's entry) and the same test
// data, which are most of it; split, they would be a header shared by two test programs.
#include <posenc/kernels.hpp>
#include <posenc/kernels/dispatch.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tables.hpp"

namespace pk = posenc::kernels;
namespace pd = posenc::kernels::dispatch;
using posenc::bf16;
using posenc::f16;
using posenc::rope_config;
using posenc::rope_layout;
using E = pk::kernel_error;
using posenc_test::krope::Tables;

namespace {

// ---- what compiles --------------------------------------------------------------------------

template <class Ids>
concept makes_positions = requires(Ids&& ids) {
  pk::token_positions::of(std::forward<Ids>(ids));
};
static_assert(makes_positions<std::vector<std::int32_t>&>);
static_assert(makes_positions<const std::vector<std::int64_t>&>);
static_assert(makes_positions<std::span<const std::int32_t>>);
static_assert(makes_positions<std::span<std::int64_t>>);  // a view: a temporary one is fine
static_assert(makes_positions<std::array<std::int32_t, 4>&>);
static_assert(!makes_positions<std::vector<std::uint32_t>&>);  // unsigned would wrap
static_assert(!makes_positions<std::vector<std::int16_t>&>);
static_assert(!makes_positions<std::vector<double>&>);
static_assert(!makes_positions<std::vector<std::int32_t>>);  // temporaries would dangle
static_assert(!makes_positions<std::array<std::int64_t, 4>>);

template <class Config>
concept makes_on_the_fly_table = requires(Config&& c) {
  pk::on_the_fly_table(std::forward<Config>(c));
};
template <class Config>
concept makes_cached_table = requires(Config&& c, posenc::rope_cache_view<float> v) {
  pk::make_rope_table(v, std::forward<Config>(c), 0);
};
static_assert(makes_on_the_fly_table<const rope_config&>);
static_assert(makes_on_the_fly_table<rope_config&>);
static_assert(!makes_on_the_fly_table<rope_config>);
static_assert(!makes_on_the_fly_table<const rope_config>);
static_assert(makes_cached_table<const rope_config&>);
static_assert(!makes_cached_table<rope_config>);

template <class Cache>
concept gives_table = requires(Cache&& c) {
  std::forward<Cache>(c).table();
};
static_assert(gives_table<const pk::expanded_rope_cache<2, 4>&>);
static_assert(!gives_table<pk::expanded_rope_cache<2, 4>>);

#if POSENC_HAS_FLOAT16
static_assert(posenc::storage_type<_Float16>);
#endif
// The compilers of this project's builds have _Float16, so its tests below run there.
#if defined(__x86_64__) && (defined(__clang__) ? __clang_major__ >= 16 : __GNUC__ >= 12)
static_assert(POSENC_HAS_FLOAT16, "posenc: _Float16 should be detected with this compiler");
#endif
static_assert(!posenc::storage_type<std::uint16_t>);
static_assert(!posenc::storage_type<double>);

// ---- token_positions ------------------------------------------------------------------------

constexpr std::array<std::int32_t, 3> ct_ids32{7, 0, 2147483647};
constexpr std::array<std::int64_t, 3> ct_ids64{7, 0, 2147483647};
static_assert(pk::token_positions::of(ct_ids32).id_type() == pk::position_id_type::int32);
static_assert(pk::token_positions::of(ct_ids64).id_type() == pk::position_id_type::int64);
static_assert(pk::token_positions::from(5).id_type() == pk::position_id_type::none);
static_assert(pk::token_positions::of(ct_ids32).at(2) == 2147483647u);
static_assert(pk::token_positions::of(ct_ids64).at(0) == 7u);
static_assert(pk::token_positions::from(5).at(3) == 8u && pk::token_positions().at(3) == 3u);

constexpr std::uint64_t ct_max(pk::token_positions p, std::size_t tokens) {
  std::uint64_t m = 0;
  return pk::check_positions(p, tokens, &m) == E::ok ? m : 0xdead;
}
static_assert(ct_max(pk::token_positions::of(ct_ids32), 3) == 2147483647u);
static_assert(ct_max(pk::token_positions::of(ct_ids64), 3) == 2147483647u);

TEST_CASE("token_positions: ids of either width, checked alike", "[rope][positions]") {
  const std::vector<std::int32_t> i32{4, 1, 9};
  const std::vector<std::int64_t> i64{4, 1, 9};
  const auto p32 = pk::token_positions::of(i32);
  const auto p64 = pk::token_positions::of(i64);
  CHECK(p32.explicit_ids());
  CHECK(p32.size() == 3);
  CHECK(p32.ids32().data() == i32.data());
  CHECK(p32.ids64().empty());
  CHECK(p64.ids64().data() == i64.data());
  CHECK(p64.ids32().empty());
  CHECK(p32.first() == 0);
  const auto off = pk::token_positions::from(40);
  CHECK(!off.explicit_ids());
  CHECK(off.first() == 40);
  CHECK(off.size() == 0);
  for (std::size_t t = 0; t < 3; ++t) CHECK(p32.at(t) == p64.at(t));

  std::uint64_t m = 0;
  CHECK(pk::check_positions(p32, 3, &m) == E::ok);
  CHECK(m == 9);
  CHECK(pk::check_positions(p32, 2, &m) == E::shape_mismatch);
  for (const std::int32_t bad : {-1, std::numeric_limits<std::int32_t>::min()}) {
    const std::vector<std::int32_t> n32{4, bad, 9};
    const std::vector<std::int64_t> n64{4, bad, 9};
    CHECK(pk::check_positions(pk::token_positions::of(n32), 3, &m) == E::negative_position);
    CHECK(pk::check_positions(pk::token_positions::of(n64), 3, &m) == E::negative_position);
  }
  // An empty id list is a list of ids: with tokens it is a count mismatch, not positions 0, 1, ...
  const std::vector<std::int32_t> none32;
  const std::vector<std::int64_t> none64;
  CHECK(pk::check_positions(pk::token_positions::of(none32), 2, &m) == E::shape_mismatch);
  CHECK(pk::check_positions(pk::token_positions::of(none64), 2, &m) == E::shape_mismatch);
  CHECK(pk::check_positions(pk::token_positions::of(none32), 0, &m) == E::ok);
}

// ---- shared data ----------------------------------------------------------------------------

template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T>& v) {
  std::vector<unsigned char> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Index of the first element whose bytes differ, or -1.
template <class T>
long first_difference(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return static_cast<long>(i);
  return -1;
}

// Random values: normal ones of magnitude 2^-8 .. 2^8, and one in 32 a zero, an infinity or a
// subnormal (of the storage type). Never NaN: with two NaNs in one operation the propagated payload
// is the compiler's choice.
template <class T>
T random_value(std::mt19937_64& rng) {
  const std::uint64_t r = rng();
  const bool special = r % 32 == 0;
  if constexpr (std::is_same_v<T, float>) {
    const auto sign = static_cast<std::uint32_t>(r >> 63) << 31;
    if (special) {
      const std::uint32_t v[] = {0u, 0x7f800000u, 0x00000001u, 0x007fffffu};
      return std::bit_cast<float>(sign | v[(r >> 8) % 4]);
    }
    const auto e = static_cast<std::uint32_t>(127 - 8 + static_cast<int>((r >> 8) % 17));
    return std::bit_cast<float>(sign | (e << 23) |
                                static_cast<std::uint32_t>((r >> 16) & 0x7fffffu));
  } else if constexpr (std::is_same_v<T, bf16> || std::is_same_v<T, f16>) {
    constexpr bool is_bf16 = std::is_same_v<T, bf16>;
    const auto sign = static_cast<std::uint16_t>((r >> 63) << 15);
    if (special) {
      const std::uint16_t v[] = {0u, is_bf16 ? std::uint16_t{0x7f80} : std::uint16_t{0x7c00}, 1u,
                                 is_bf16 ? std::uint16_t{0x007f} : std::uint16_t{0x03ff}};
      return T{static_cast<std::uint16_t>(sign | v[(r >> 8) % 4])};
    }
    const std::uint16_t bias = is_bf16 ? 127 : 15, shift = is_bf16 ? 7 : 10;
    const auto e = static_cast<std::uint16_t>(bias - 8 + static_cast<int>((r >> 8) % 17));
    const auto m = static_cast<std::uint16_t>((r >> 16) & ((1u << shift) - 1u));
    return T{static_cast<std::uint16_t>(sign | (e << shift) | m)};
  } else {  // _Float16: f16's bits
    return std::bit_cast<T>(random_value<f16>(rng).bits);
  }
}

template <class T>
std::vector<T> random_buffer(std::size_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  for (T& x : v) x = random_value<T>(rng);
  return v;
}

struct rope_shape {
  std::uint32_t head_dim, rotary_dim;
  std::size_t heads, kheads, tokens;
};
// Full and partial rotary; pair counts below, at and past the kernels' chunks (64 on the fly, 128
// per row); widths that are no multiple of a vector.
constexpr std::array<rope_shape, 5> rope_shapes{
    rope_shape{8, 8, 3, 2, 7}, rope_shape{67, 64, 2, 1, 5}, rope_shape{130, 130, 1, 2, 4},
    rope_shape{300, 300, 2, 1, 3}, rope_shape{2, 2, 4, 4, 9}};

// Ids for `tokens` tokens: unsorted with repeats, below `limit`; with large = true some near the
// int32 maximum (on-the-fly tables).
std::vector<std::int64_t> random_ids(std::size_t tokens, std::uint64_t limit, bool large,
                                     std::mt19937_64& rng) {
  std::vector<std::int64_t> ids(tokens);
  for (std::int64_t& id : ids) {
    id = static_cast<std::int64_t>(rng() % limit);
    if (large && rng() % 3 == 0)
      id = std::numeric_limits<std::int32_t>::max() - static_cast<std::int64_t>(rng() % 1000);
  }
  return ids;
}

std::vector<std::int32_t> narrowed(const std::vector<std::int64_t>& ids) {
  std::vector<std::int32_t> n(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) n[i] = static_cast<std::int32_t>(ids[i]);
  return n;
}

// f(shape, table, ids, description) for every shape, layout, table format and table kind (0: a
// cache of 48 rows, ids below 48; 1: the cache and on-the-fly rows, ids below 88; 2: on the fly
// only, some ids near the int32 maximum), with random ids from rng.
template <class F>
void for_each_rope_case(std::mt19937_64& rng, F&& f) {
  for (const rope_shape& s : rope_shapes) {
    for (const rope_layout layout : {rope_layout::half, rope_layout::interleaved}) {
      const std::size_t P = 48;
      const Tables tab(s.head_dim, s.rotary_dim, 10000.0, layout, P);
      for (const auto fmt : {pk::rope_table_format::compact, pk::rope_table_format::expanded}) {
        for (int kind = 0; kind < 3; ++kind) {
          const std::vector<std::int64_t> ids =
              random_ids(s.tokens, kind == 0 ? P : P + 40, kind == 2, rng);
          const std::string where =
              "R=" + std::to_string(s.rotary_dim) + " head_dim=" + std::to_string(s.head_dim) +
              " " + posenc::layout_name(layout) + " format " +
              std::to_string(static_cast<int>(fmt)) + " table kind " + std::to_string(kind);
          f(s, tab.table_of_kind(fmt, kind), ids, where);
        }
      }
    }
  }
}

// The RoPE calls of one kernel family (header-only, or one ISA of the library) for storage T.
template <class T>
struct rope_calls {
  std::function<E(const pk::rope_table&, pk::tensor_view<const T>, pk::tensor_view<T>,
                  pk::token_positions)>
      apply;
  std::function<E(const pk::rope_table&, pk::tensor_view<T>, pk::token_positions)> in_place;
  std::function<E(const pk::rope_table&, pk::tensor_view<const T>, pk::tensor_view<T>,
                  pk::tensor_view<const T>, pk::tensor_view<T>, pk::token_positions)>
      qk;
};

// The calls of a family from one callable for apply_rope's two overloads (out of place, in place)
// and one for apply_rope_qk.
template <class T, class Rope, class RopeQk>
rope_calls<T> rope_calls_of(Rope rope, RopeQk rope_qk) {
  return {rope, rope, rope_qk};
}

template <class T>
rope_calls<T> header_rope() {
  return rope_calls_of<T>([](const auto&... a) { return pk::apply_rope<T>(a...); },
                          [](const auto&... a) { return pk::apply_rope_qk<T>(a...); });
}

template <class T>
rope_calls<T> reference_rope(pk::fma_mode m) {
  return rope_calls_of<T>([m](const auto&... a) { return pk::rope_reference<T>(a..., m); },
                          [m](const auto&... a) { return pk::rope_reference_qk<T>(a..., m); });
}

template <class T>
rope_calls<T> dispatched_rope() {
  return rope_calls_of<T>([](const auto&... a) { return pd::apply_rope(a...); },
                          [](const auto&... a) { return pd::apply_rope_qk(a...); });
}

template <class T>
rope_calls<T> isa_rope(const pd::isa_kernels& isa) {
  const pd::rope_kernels<T>& k = isa.rope<T>();
  return {k.apply, k.apply_in_place, k.apply_qk};
}

// The buffers of one RoPE call: q in/out, k in/out (dense), from one seed.
template <class T>
struct rope_buffers {
  std::vector<T> qi, qo, ki, ko;
  rope_buffers() = default;
  rope_buffers(const rope_shape& s, std::mt19937_64& rng)
      : qi(random_buffer<T>(s.tokens * s.heads * s.head_dim, rng)),
        qo(random_buffer<T>(qi.size(), rng)),
        ki(random_buffer<T>(s.tokens * s.kheads * s.head_dim, rng)),
        ko(random_buffer<T>(ki.size(), rng)) {}
};

// Runs call 0 (out of place), 1 (in place on q) or 2 (q and k) on copies of b.
template <class T>
std::pair<E, rope_buffers<T>> run_rope(const rope_calls<T>& k, int call, const pk::rope_table& t,
                                       const rope_shape& s, rope_buffers<T> b,
                                       pk::token_positions pos) {
  const auto qi = pk::dense<const T>(b.qi.data(), s.tokens, s.heads, s.head_dim);
  const auto qo = pk::dense(b.qo.data(), s.tokens, s.heads, s.head_dim);
  const auto ki = pk::dense<const T>(b.ki.data(), s.tokens, s.kheads, s.head_dim);
  const auto ko = pk::dense(b.ko.data(), s.tokens, s.kheads, s.head_dim);
  E e = E::invalid_argument;
  if (call == 0) e = k.apply(t, qi, qo, pos);
  if (call == 1) e = k.in_place(t, pk::dense(b.qi.data(), s.tokens, s.heads, s.head_dim), pos);
  if (call == 2) e = k.qk(t, qi, qo, ki, ko, pos);
  return {e, std::move(b)};
}

template <class T>
bool same_buffers(const rope_buffers<T>& a, const rope_buffers<T>& b) {
  return first_difference(a.qi, b.qi) < 0 && first_difference(a.qo, b.qo) < 0 &&
         first_difference(a.ki, b.ki) < 0 && first_difference(a.ko, b.ko) < 0;
}

// Every shape, layout, format, table kind and call of k: int32 ids == the same int64 ids.
template <class T>
void int32_equals_int64(const rope_calls<T>& k, const char* family) {
  std::mt19937_64 rng(0x5eed0032u);
  for_each_rope_case(rng, [&](const rope_shape& s, const pk::rope_table& table,
                              const std::vector<std::int64_t>& ids64, const std::string& where) {
    const std::vector<std::int32_t> ids32 = narrowed(ids64);
    const rope_buffers<T> b(s, rng);
    for (int call = 0; call < 3; ++call) {
      INFO(family << " " << posenc::storage_name<T>() << " " << where << " call " << call);
      const auto want = run_rope(k, call, table, s, b, pk::token_positions::of(ids64));
      const auto got = run_rope(k, call, table, s, b, pk::token_positions::of(ids32));
      REQUIRE(want.first == E::ok);
      CHECK(got.first == E::ok);
      CHECK(same_buffers(want.second, got.second));
      // The call did something: positions differ between tokens, so a kernel that read the ids
      // wrongly would not match; and the output is not the untouched input.
      CHECK(!same_buffers(want.second, b));
    }
  });
}

// Negative ids as int32, each call of k: negative_position, like the same ids as int64, and no
// buffer changed.
template <class T>
void negative_int32_rejected(const rope_calls<T>& k, const char* family) {
  std::mt19937_64 rng(0x5eed0033u);
  const rope_shape s{8, 8, 2, 2, 3};
  const Tables tab(s.head_dim, s.rotary_dim, 10000.0, rope_layout::half, 16);
  const rope_buffers<T> b(s, rng);
  for (const std::int32_t bad : {-1, -2147483647 - 1, -65536}) {
    const std::vector<std::int32_t> ids32{1, bad, 2};
    const std::vector<std::int64_t> ids64{1, bad, 2};
    for (int kind = 0; kind < 3; ++kind) {
      for (int call = 0; call < 3; ++call) {
        INFO(family << " " << posenc::storage_name<T>() << " id " << bad << " table kind " << kind
                    << " call " << call);
        const pk::rope_table table = tab.table_of_kind(pk::rope_table_format::compact, kind);
        const auto r64 = run_rope(k, call, table, s, b, pk::token_positions::of(ids64));
        const auto r32 = run_rope(k, call, table, s, b, pk::token_positions::of(ids32));
        CHECK(r64.first == E::negative_position);
        CHECK(r32.first == E::negative_position);
        CHECK(same_buffers(r32.second, b));
      }
    }
  }
}

// ---- the additive kernels ---------------------------------------------------------------------

// Header-only or one ISA's add_learned / add_sinusoidal (out of place and in place) for T.
template <class T>
struct add_calls {
  std::function<E(const posenc::learned_table_view<T>&, pk::tensor_view<const T>,
                  pk::tensor_view<T>, pk::token_positions)>
      learned;
  std::function<E(const posenc::learned_table_view<T>&, pk::tensor_view<T>, pk::token_positions)>
      learned_in_place;
  std::function<E(const posenc::sinusoidal_table_view<float>&, pk::tensor_view<const T>,
                  pk::tensor_view<T>, pk::token_positions)>
      sinusoidal;
  std::function<E(const posenc::sinusoidal_table_view<float>&, pk::tensor_view<T>,
                  pk::token_positions)>
      sinusoidal_in_place;
};

// The calls of a family from one callable for each kernel's two overloads (out of place, in place).
template <class T, class Learned, class Sinusoidal>
add_calls<T> add_calls_of(Learned learned, Sinusoidal sinusoidal) {
  return {learned, learned, sinusoidal, sinusoidal};
}

template <class T>
add_calls<T> header_add() {
  return add_calls_of<T>([](const auto&... a) { return pk::add_learned<T>(a...); },
                         [](const auto&... a) { return pk::add_sinusoidal<T>(a...); });
}

template <class T>
add_calls<T> dispatched_add() {
  return add_calls_of<T>([](const auto&... a) { return pd::add_learned(a...); },
                         [](const auto&... a) { return pd::add_sinusoidal(a...); });
}

template <class T>
add_calls<T> isa_add(const pd::isa_kernels& isa) {
  const pd::additive_kernels<T>& k = isa.additive<T>();
  return {k.add_learned, k.add_learned_in_place, k.add_sinusoidal, k.add_sinusoidal_in_place};
}

template <class T>
auto dispatched_alibi() {
  return [](std::span<const float> sl, pk::score_view<T> s, posenc::alibi_variant v,
            std::uint64_t q0, std::uint64_t k0) { return pd::add_alibi_bias(sl, s, v, q0, k0); };
}
template <class T>
auto header_alibi() {
  return [](std::span<const float> sl, pk::score_view<T> s, posenc::alibi_variant v,
            std::uint64_t q0, std::uint64_t k0) { return pk::add_alibi_bias<T>(sl, s, v, q0, k0); };
}

// kind 0: learned, 1: learned in place, 2: sinusoidal, 3: sinusoidal in place. Returns the error
// and the output (the input buffer for in place).
template <class T>
std::pair<E, std::vector<T>> run_add(const add_calls<T>& k, int kind, std::vector<T> in,
                                     std::vector<T> out, const std::vector<T>& learned,
                                     const std::vector<float>& sinus, std::size_t rows,
                                     std::size_t tokens, std::size_t heads, std::size_t hd,
                                     pk::token_positions pos) {
  const posenc::learned_table_view<T> lt{learned.data(), rows + 2, heads * hd, 2};
  const posenc::sinusoidal_table_view<float> st{sinus.data(), rows, heads * hd};
  const auto i = pk::dense<const T>(in.data(), tokens, heads, hd);
  const auto o = pk::dense(out.data(), tokens, heads, hd);
  const auto x = pk::dense(in.data(), tokens, heads, hd);
  switch (kind) {
    case 0:
      return {k.learned(lt, i, o, pos), out};
    case 1:
      return {k.learned_in_place(lt, x, pos), in};
    case 2:
      return {k.sinusoidal(st, i, o, pos), out};
    default:
      return {k.sinusoidal_in_place(st, x, pos), in};
  }
}

template <class T>
void additive_int32(const add_calls<T>& k, const char* family) {
  std::mt19937_64 rng(0x5eed0034u);
  const std::size_t rows = 50, tokens = 9, heads = 3, hd = 7;
  const std::vector<T> learned = random_buffer<T>((rows + 2) * heads * hd, rng);
  const std::vector<float> sinus = random_buffer<float>(rows * heads * hd, rng);
  const std::vector<T> in = random_buffer<T>(tokens * heads * hd, rng);
  const std::vector<T> out = random_buffer<T>(in.size(), rng);
  const std::vector<std::int64_t> ids64 = random_ids(tokens, rows, false, rng);
  const std::vector<std::int32_t> ids32 = narrowed(ids64);
  std::vector<std::int32_t> neg32 = ids32;
  neg32[4] = -3;
  for (int kind = 0; kind < 4; ++kind) {
    INFO(family << " " << posenc::storage_name<T>() << " additive kind " << kind);
    const auto want = run_add(k, kind, in, out, learned, sinus, rows, tokens, heads, hd,
                              pk::token_positions::of(ids64));
    const auto got = run_add(k, kind, in, out, learned, sinus, rows, tokens, heads, hd,
                             pk::token_positions::of(ids32));
    REQUIRE(want.first == E::ok);
    CHECK(got.first == E::ok);
    CHECK(first_difference(want.second, got.second) < 0);
    const auto bad = run_add(k, kind, in, out, learned, sinus, rows, tokens, heads, hd,
                             pk::token_positions::of(neg32));
    CHECK(bad.first == E::negative_position);
    CHECK(first_difference(bad.second, kind % 2 == 0 ? out : in) < 0);
  }
}

// Calls f(isa) for every compiled ISA this CPU supports.
template <class F>
void for_each_supported_isa(F&& f) {
  int ran = 0;
  for (const pd::isa_kernels& isa : pd::compiled_isas()) {
    if (!isa.supported) continue;
    f(isa);
    ++ran;
  }
  REQUIRE(ran >= 1);  // scalar at least
}

}  // namespace

TEST_CASE("kernels/rope: int32 ids == the same int64 ids, header-only kernels", "[rope]") {
  int32_equals_int64(header_rope<float>(), "build-time");
  int32_equals_int64(header_rope<bf16>(), "build-time");
  int32_equals_int64(header_rope<f16>(), "build-time");
  int32_equals_int64(reference_rope<float>(pk::fma_mode::unfused), "reference");
  int32_equals_int64(reference_rope<bf16>(pk::fma_mode::fused), "reference");
  additive_int32(header_add<float>(), "build-time");
  additive_int32(header_add<bf16>(), "build-time");
  additive_int32(header_add<f16>(), "build-time");
#if POSENC_HAS_FLOAT16
  int32_equals_int64(header_rope<_Float16>(), "build-time");
  additive_int32(header_add<_Float16>(), "build-time");
#endif
}

TEST_CASE("kernels/rope: int32 ids == the same int64 ids, every ISA of the library", "[rope]") {
  for_each_supported_isa([](const pd::isa_kernels& isa) {
    int32_equals_int64(isa_rope<float>(isa), isa.name);
    int32_equals_int64(isa_rope<bf16>(isa), isa.name);
    int32_equals_int64(isa_rope<f16>(isa), isa.name);
    additive_int32(isa_add<float>(isa), isa.name);
    additive_int32(isa_add<bf16>(isa), isa.name);
    additive_int32(isa_add<f16>(isa), isa.name);
  });
  // And the dispatching entry points (the active ISA).
  int32_equals_int64(dispatched_rope<float>(), "dispatched");
  negative_int32_rejected(dispatched_rope<float>(), "dispatched");
}

TEST_CASE("kernels/rope: negative int32 ids are rejected, nothing written", "[rope]") {
  negative_int32_rejected(header_rope<float>(), "build-time");
  negative_int32_rejected(header_rope<bf16>(), "build-time");
  negative_int32_rejected(header_rope<f16>(), "build-time");
  negative_int32_rejected(reference_rope<float>(pk::fma_mode::unfused), "reference");
#if POSENC_HAS_FLOAT16
  negative_int32_rejected(header_rope<_Float16>(), "build-time");
#endif
  for_each_supported_isa([](const pd::isa_kernels& isa) {
    negative_int32_rejected(isa_rope<float>(isa), isa.name);
    negative_int32_rejected(isa_rope<bf16>(isa), isa.name);
    negative_int32_rejected(isa_rope<f16>(isa), isa.name);
  });
}

#if POSENC_HAS_FLOAT16

namespace {

_Float16 as_float16(f16 x) {
  return std::bit_cast<_Float16>(x.bits);
}
std::uint16_t bits_of(_Float16 x) {
  return std::bit_cast<std::uint16_t>(x);
}

// The same bits as _Float16, and as floats widened by the compiler.
std::vector<_Float16> as_float16(const std::vector<f16>& v) {
  std::vector<_Float16> r(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) r[i] = as_float16(v[i]);
  return r;
}
std::vector<float> widened(const std::vector<f16>& v) {
  std::vector<float> r(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) r[i] = static_cast<float>(as_float16(v[i]));
  return r;
}
template <class U, class T, class F>
rope_buffers<U> map(const rope_buffers<T>& b, F&& f) {
  rope_buffers<U> r;
  r.qi = f(b.qi);
  r.qo = f(b.qo);
  r.ki = f(b.ki);
  r.ko = f(b.ko);
  return r;
}

// got (a _Float16 result) against want16 (the f16 result: the same bits) and want32 (the float
// result, each element rounded here by static_cast<_Float16>: the same value, a NaN for a NaN).
// Returns the number of mismatches.
int float16_mismatches(const std::vector<_Float16>& got, const std::vector<f16>& want16,
                       const std::vector<float>& want32) {
  int bad = 0;
  REQUIRE(got.size() == want16.size());
  REQUIRE(got.size() == want32.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const _Float16 hw = static_cast<_Float16>(want32[i]);
    const bool same_as_f16 = bits_of(got[i]) == want16[i].bits;
    const bool same_as_hw = std::isnan(want32[i]) ? std::isnan(static_cast<float>(got[i]))
                                                  : bits_of(got[i]) == bits_of(hw);
    if (!same_as_f16 || !same_as_hw) {
      if (bad == 0)
        UNSCOPED_INFO("element " << i << ": got 0x" << std::hex << bits_of(got[i]) << ", f16 0x"
                                 << want16[i].bits << ", compiler 0x" << bits_of(hw) << std::dec);
      ++bad;
    }
  }
  return bad;
}

int float16_mismatches(const rope_buffers<_Float16>& got, const rope_buffers<f16>& want16,
                       const rope_buffers<float>& want32) {
  return float16_mismatches(got.qi, want16.qi, want32.qi) +
         float16_mismatches(got.qo, want16.qo, want32.qo) +
         float16_mismatches(got.ki, want16.ki, want32.ki) +
         float16_mismatches(got.ko, want16.ko, want32.ko);
}

// One family's calls for _Float16, f16 and float (the same ISA, so the same multiply-add pattern:
// the float kernel computes exactly the floats the 16-bit kernels round).
struct rope_families {
  const char* name;
  rope_calls<_Float16> float16;
  rope_calls<f16> posenc_f16;
  rope_calls<float> f32;
};

void float16_rope(const rope_families& k) {
  std::mt19937_64 rng(0x5eed0016u);
  for_each_rope_case(rng, [&](const rope_shape& s, const pk::rope_table& table,
                              const std::vector<std::int64_t>& ids, const std::string& where) {
    const std::vector<std::int32_t> ids32 = narrowed(ids);
    const rope_buffers<f16> b16(s, rng);
    const rope_buffers<_Float16> bh =
        map<_Float16>(b16, [](const auto& v) { return as_float16(v); });
    const rope_buffers<float> b32 = map<float>(b16, [](const auto& v) { return widened(v); });
    for (int call = 0; call < 3; ++call) {
      INFO(k.name << " _Float16 " << where << " call " << call);
      const auto pos = pk::token_positions::of(ids);
      const auto w16 = run_rope(k.posenc_f16, call, table, s, b16, pos);
      const auto w32 = run_rope(k.f32, call, table, s, b32, pos);
      // int32 ids for the _Float16 call: both new inputs at once.
      const auto got = run_rope(k.float16, call, table, s, bh, pk::token_positions::of(ids32));
      REQUIRE(w16.first == E::ok);
      REQUIRE(w32.first == E::ok);
      CHECK(got.first == E::ok);
      CHECK(float16_mismatches(got.second, w16.second, w32.second) == 0);
    }
  });
}

// Additive kernels and ALiBi for _Float16, f16 and float, one family.
struct add_families {
  const char* name;
  add_calls<_Float16> float16;
  add_calls<f16> posenc_f16;
  add_calls<float> f32;
  std::function<E(std::span<const float>, pk::score_view<_Float16>, posenc::alibi_variant,
                  std::uint64_t, std::uint64_t)>
      alibi_h;
  std::function<E(std::span<const float>, pk::score_view<f16>, posenc::alibi_variant, std::uint64_t,
                  std::uint64_t)>
      alibi_f16;
  std::function<E(std::span<const float>, pk::score_view<float>, posenc::alibi_variant,
                  std::uint64_t, std::uint64_t)>
      alibi_f32;
};

void float16_additive(const add_families& k) {
  std::mt19937_64 rng(0x5eed0017u);
  const std::size_t rows = 40, tokens = 6, heads = 2, hd = 19;
  const std::vector<f16> learned16 = random_buffer<f16>((rows + 2) * heads * hd, rng);
  const std::vector<float> sinus = random_buffer<float>(rows * heads * hd, rng);
  const std::vector<f16> in16 = random_buffer<f16>(tokens * heads * hd, rng);
  const std::vector<f16> out16 = random_buffer<f16>(in16.size(), rng);
  const std::vector<std::int64_t> ids = random_ids(tokens, rows, false, rng);
  const auto pos = pk::token_positions::of(ids);
  for (int kind = 0; kind < 4; ++kind) {
    INFO(k.name << " _Float16 additive kind " << kind);
    const auto w16 =
        run_add(k.posenc_f16, kind, in16, out16, learned16, sinus, rows, tokens, heads, hd, pos);
    const auto w32 = run_add(k.f32, kind, widened(in16), widened(out16), widened(learned16), sinus,
                             rows, tokens, heads, hd, pos);
    const auto got = run_add(k.float16, kind, as_float16(in16), as_float16(out16),
                             as_float16(learned16), sinus, rows, tokens, heads, hd, pos);
    REQUIRE(w16.first == E::ok);
    REQUIRE(w32.first == E::ok);
    CHECK(got.first == E::ok);
    CHECK(float16_mismatches(got.second, w16.second, w32.second) == 0);
  }

  // ALiBi on a [heads, q_len, k_len] block, causal and symmetric, with offsets.
  const std::size_t q_len = 5, k_len = 37;
  const std::vector<float> slopes{0.5f, 0.0078125f};
  const std::vector<f16> s16 = random_buffer<f16>(heads * q_len * k_len, rng);
  for (const auto v : {posenc::alibi_variant::causal, posenc::alibi_variant::symmetric}) {
    INFO(k.name << " _Float16 ALiBi variant " << static_cast<int>(v));
    std::vector<f16> w16 = s16;
    std::vector<float> w32 = widened(s16);
    std::vector<_Float16> got = as_float16(s16);
    REQUIRE(k.alibi_f16(slopes, pk::dense_scores(w16.data(), heads, q_len, k_len), v, 30, 3) ==
            E::ok);
    REQUIRE(k.alibi_f32(slopes, pk::dense_scores(w32.data(), heads, q_len, k_len), v, 30, 3) ==
            E::ok);
    CHECK(k.alibi_h(slopes, pk::dense_scores(got.data(), heads, q_len, k_len), v, 30, 3) == E::ok);
    CHECK(float16_mismatches(got, w16, w32) == 0);
  }
}

}  // namespace

TEST_CASE("storage: _Float16 loads and stores are the compiler's conversions", "[storage]") {
  // Widening: every bit pattern.
  int bad = 0;
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const auto h = std::bit_cast<_Float16>(static_cast<std::uint16_t>(b));
    const float mine = posenc::load_float(h), theirs = static_cast<float>(h);
    const bool same = std::isnan(theirs) ? std::isnan(mine)
                                         : std::bit_cast<std::uint32_t>(mine) ==
                                               std::bit_cast<std::uint32_t>(theirs);
    bad += same ? 0 : 1;
  }
  CHECK(bad == 0);

  // Narrowing: every finite binary16 value, the midpoints between neighbours (ties to even) and
  // the floats next to them, specials, and random floats of every magnitude.
  std::vector<float> xs{0.0f,         -0.0f,         INFINITY,        -INFINITY,    NAN,
                        -NAN,         65504.0f,      65519.99609375f, 65520.0f,     0x1p-24f,
                        0x1p-25f,     0x1.8p-25f,    0x1p-26f,        0x1.ffcp-15f, 0x1p-14f,
                        0x1.ffep-15f, 3.4028235e38f, 1e-45f,          -1e-45f,      0x1.002p0f};
  for (std::uint32_t b = 0; b < 0x7c00u; ++b) {
    const float v = static_cast<float>(std::bit_cast<_Float16>(static_cast<std::uint16_t>(b)));
    const float next =
        static_cast<float>(std::bit_cast<_Float16>(static_cast<std::uint16_t>(b + 1)));
    const float mid = static_cast<float>((static_cast<double>(v) + next) / 2);  // exact
    for (const float x : {v, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      xs.push_back(x);
      xs.push_back(-x);
    }
  }
  std::mt19937_64 rng(0x5eed0018u);
  for (int i = 0; i < 1 << 20; ++i)
    xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
  bad = 0;
  for (const float x : xs) {
    const _Float16 mine = posenc::store_as<_Float16>(x), theirs = static_cast<_Float16>(x);
    const bool same =
        std::isnan(x) ? std::isnan(static_cast<float>(mine)) : bits_of(mine) == bits_of(theirs);
    if (!same && bad++ == 0)
      UNSCOPED_INFO("x = " << x << ": 0x" << std::hex << bits_of(mine) << " vs 0x"
                           << bits_of(theirs));
  }
  CHECK(bad == 0);
  CHECK(xs.size() > (1u << 20));
}

TEST_CASE("kernels/rope: _Float16 storage == f16 storage == float rounded by the compiler",
          "[rope]") {
  float16_rope({"build-time", header_rope<_Float16>(), header_rope<f16>(), header_rope<float>()});
  float16_rope({"reference", reference_rope<_Float16>(pk::fma_mode::fused),
                reference_rope<f16>(pk::fma_mode::fused),
                reference_rope<float>(pk::fma_mode::fused)});
  float16_rope({"dispatched", dispatched_rope<_Float16>(), dispatched_rope<f16>(),
                dispatched_rope<float>()});
}

TEST_CASE("kernels: _Float16 storage in the additive and ALiBi kernels", "[rope]") {
  float16_additive({"build-time", header_add<_Float16>(), header_add<f16>(), header_add<float>(),
                    header_alibi<_Float16>(), header_alibi<f16>(), header_alibi<float>()});
  float16_additive({"dispatched", dispatched_add<_Float16>(), dispatched_add<f16>(),
                    dispatched_add<float>(), dispatched_alibi<_Float16>(), dispatched_alibi<f16>(),
                    dispatched_alibi<float>()});
}

TEST_CASE("kernels/rope: _Float16 with a negative id writes nothing", "[rope]") {
  negative_int32_rejected(dispatched_rope<_Float16>(), "dispatched");
}

#endif
