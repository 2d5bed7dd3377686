// posenc/kernels/threads.hpp: splitting one call over threads. Expected values: the laws of a
// partition (split_tokens), the element addresses and positions of the unsliced arguments
// (token_slice, query_slice), and rope_reference on the whole call (the threaded entry points,
// bit for bit in the kernel's FMA mode); on error, the output's bytes unchanged.
#include <rapidcheck.h>
#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <posenc/kernels/threads.hpp>
#include <posenc/tables/runtime_rope_cache.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace k = posenc::kernels;
namespace d = posenc::kernels::dispatch;
using posenc::bf16;
using posenc::f16;

namespace {

struct rng {
  std::uint32_t s = 0x2545f491u;
  float next() {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return static_cast<float>(s >> 8) * 0x1p-22f - 2.0f;
  }
};

template <class T>
std::vector<T> random_buffer(std::size_t n, rng& g) {
  std::vector<T> v(n);
  for (T& x : v) x = posenc::store_as<T>(g.next());
  return v;
}

template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

constexpr std::size_t heads = 3;
constexpr std::uint32_t head_dim = 64;
constexpr std::size_t table_rows = 1100;

const posenc::rope_config& config() {
  static const posenc::rope_config c{head_dim, 48, 10000.0, posenc::rope_layout::half, {}};
  return c;
}
const posenc::runtime_rope_cache<float>& cache() {
  static const auto c = posenc::runtime_rope_cache<float>::make(config(), table_rows);
  return c;
}
k::rope_table table() {
  return k::make_rope_table(cache().view(), config().layout);
}

enum class layout { dense, head_major };

template <class T>
k::tensor_view<T> view(T* data, std::size_t tokens, layout l) {
  if (l == layout::dense) return k::dense(data, tokens, heads, head_dim);
  return {data, tokens, heads, head_dim, head_dim, tokens * head_dim};
}

enum class entry { header_only, dispatched };

k::fma_mode mode_of(entry e) {
  return e == entry::header_only ? k::build_fma_mode : d::active().fma;
}

template <class T>
k::kernel_error threaded(entry e, std::size_t threads, const k::rope_table& t,
                         k::tensor_view<const T> in, k::tensor_view<T> out, k::token_positions p) {
  if (e == entry::header_only) return k::apply_rope_threaded<T>(threads, t, in, out, p);
  return d::apply_rope_threaded<T>(threads, t, in, out, p);
}

template <class T>
k::kernel_error threaded_qk(entry e, std::size_t threads, const k::rope_table& t,
                            k::tensor_view<const T> qi, k::tensor_view<T> qo,
                            k::tensor_view<const T> ki, k::tensor_view<T> ko,
                            k::token_positions p) {
  if (e == entry::header_only) return k::apply_rope_qk_threaded<T>(threads, t, qi, qo, ki, ko, p);
  return d::apply_rope_qk_threaded<T>(threads, t, qi, qo, ki, ko, p);
}

// Positions of `tokens` tokens of one kind: from(7), int64 ids, int32 ids (descending, so a
// slice that reads the wrong ids gives other rows).
struct positions {
  std::vector<std::int64_t> ids64;
  std::vector<std::int32_t> ids32;
  positions(std::size_t tokens) {
    for (std::size_t t = 0; t < tokens; ++t) {
      ids64.push_back(static_cast<std::int64_t>(table_rows - 1 - t));
      ids32.push_back(static_cast<std::int32_t>((t * 37) % table_rows));
    }
  }
  k::token_positions get(int kind) const {
    if (kind == 1) return k::token_positions::of(std::span<const std::int64_t>(ids64));
    if (kind == 2) return k::token_positions::of(std::span<const std::int32_t>(ids32));
    return k::token_positions::from(7);
  }
};

template <class T>
void check_equal_to_reference(entry e) {
  const k::rope_table t = table();
  rng g;
  for (std::size_t tokens : {0u, 1u, 2u, 3u, 7u, 64u, 1000u})
    for (std::size_t threads : {0u, 1u, 2u, 3u, 4u, 8u, 13u})
      for (layout l : {layout::dense, layout::head_major})
        for (int kind : {0, 1, 2}) {
          INFO("tokens " << tokens << " threads " << threads << " head_major "
                         << (l == layout::head_major) << " positions " << kind);
          const positions ps(tokens);
          const k::token_positions p = ps.get(kind);
          const std::size_t n = tokens * heads * head_dim;
          const std::vector<T> q = random_buffer<T>(n, g);
          const std::vector<T> kk = random_buffer<T>(n, g);
          std::vector<T> want_q(n), want_k(n), got_q(n), got_k(n);
          REQUIRE(k::rope_reference<T>(t, view(q.data(), tokens, l), view(want_q.data(), tokens, l),
                                       p, mode_of(e)) == k::kernel_error::ok);
          REQUIRE(k::rope_reference<T>(t, view(kk.data(), tokens, l),
                                       view(want_k.data(), tokens, l), p,
                                       mode_of(e)) == k::kernel_error::ok);
          // Out of place.
          CHECK(threaded<T>(e, threads, t, view(q.data(), tokens, l), view(got_q.data(), tokens, l),
                            p) == k::kernel_error::ok);
          CHECK(same_bytes(got_q, want_q));
          // In place.
          std::vector<T> x = q;
          CHECK(threaded<T>(e, threads, t, view<const T>(x.data(), tokens, l),
                            view(x.data(), tokens, l), p) == k::kernel_error::ok);
          CHECK(same_bytes(x, want_q));
          // q and k.
          std::fill(got_q.begin(), got_q.end(), T{});
          CHECK(threaded_qk<T>(e, threads, t, view(q.data(), tokens, l),
                               view(got_q.data(), tokens, l), view(kk.data(), tokens, l),
                               view(got_k.data(), tokens, l), p) == k::kernel_error::ok);
          CHECK(same_bytes(got_q, want_q));
          CHECK(same_bytes(got_k, want_k));
        }
}

template <class T>
void check_errors_write_nothing(entry e) {
  const k::rope_table t = table();
  rng g;
  constexpr std::size_t tokens = 100;
  const std::size_t n = tokens * heads * head_dim;
  const std::vector<T> q = random_buffer<T>(n, g);
  std::vector<T> out = random_buffer<T>(n, g);
  const std::vector<T> before = out;
  // The last token's id is past the table: it is in the last part, after every other part's
  // tokens, so a call that checked only part by part would have written those.
  std::vector<std::int64_t> ids(tokens, 3);
  ids.back() = static_cast<std::int64_t>(table_rows);
  const auto p = k::token_positions::of(std::span<const std::int64_t>(ids));
  CHECK(threaded<T>(e, 4, t, view(q.data(), tokens, layout::dense),
                    view(out.data(), tokens, layout::dense),
                    p) == k::kernel_error::position_out_of_range);
  CHECK(same_bytes(out, before));
  ids.back() = -1;
  std::vector<T> k_out = out;
  CHECK(threaded_qk<T>(
            e, 4, t, view(q.data(), tokens, layout::dense), view(out.data(), tokens, layout::dense),
            view(q.data(), tokens, layout::dense), view(k_out.data(), tokens, layout::dense),
            p) == k::kernel_error::negative_position);
  CHECK(same_bytes(out, before));
  CHECK(same_bytes(k_out, before));
  // One id too few.
  ids.pop_back();
  const auto short_p = k::token_positions::of(std::span<const std::int64_t>(ids));
  CHECK(threaded<T>(e, 3, t, view(q.data(), tokens, layout::dense),
                    view(out.data(), tokens, layout::dense),
                    short_p) == k::kernel_error::shape_mismatch);
  CHECK(same_bytes(out, before));
}

}  // namespace

TEST_CASE("kernels/threads: split_tokens partitions [0, tokens) in order, near-equal parts",
          "[threads]") {
  rc::prop("split_tokens", [] {
    const auto tokens = *rc::gen::inRange<std::size_t>(0, 1u << 20);
    const auto parts = *rc::gen::inRange<std::size_t>(1, 300);
    std::size_t next = 0, smallest = tokens, largest = 0;
    for (std::size_t i = 0; i < parts; ++i) {
      const k::token_range r = k::split_tokens(tokens, parts, i);
      RC_ASSERT(r.begin == next);
      RC_ASSERT(r.end >= r.begin);
      next = r.end;
      smallest = std::min(smallest, r.size());
      largest = std::max(largest, r.size());
      // Larger parts first.
      if (i > 0) RC_ASSERT(k::split_tokens(tokens, parts, i - 1).size() >= r.size());
    }
    RC_ASSERT(next == tokens);
    RC_ASSERT(largest - smallest <= 1);
    RC_ASSERT(k::split_tokens(tokens, parts, parts).empty());
  });
  CHECK(k::split_tokens(10, 0, 0).empty());
  CHECK(k::split_tokens(10, 3, 0) == k::token_range{0, 4});
  CHECK(k::split_tokens(10, 3, 1) == k::token_range{4, 7});
  CHECK(k::split_tokens(10, 3, 2) == k::token_range{7, 10});
  CHECK(k::thread_parts(8, 3) == 3);
  CHECK(k::thread_parts(2, 0) == 1);
  CHECK(k::thread_parts(0, 1000) >= 1);
}

TEST_CASE("kernels/threads: slices address the same elements and positions", "[threads]") {
  std::vector<float> buf(10 * heads * head_dim);
  for (layout l : {layout::dense, layout::head_major}) {
    const k::tensor_view<float> v = view(buf.data(), 10, l);
    const k::token_range r{3, 8};
    const k::tensor_view<float> s = k::token_slice(v, r);
    CHECK(s.tokens == 5);
    CHECK(s.heads == v.heads);
    CHECK(s.head_dim == v.head_dim);
    for (std::size_t t = 0; t < s.tokens; ++t)
      for (std::size_t h = 0; h < heads; ++h) CHECK(s.at(t, h) == v.at(t + 3, h));
    CHECK(k::token_slice(v, k::token_range{10, 10}).empty());
  }
  const positions ps(10);
  for (int kind : {0, 1, 2}) {
    const k::token_positions p = ps.get(kind);
    const k::token_positions s = k::token_slice(p, k::token_range{3, 8});
    CHECK(s.id_type() == p.id_type());
    if (p.explicit_ids()) CHECK(s.size() == 5);
    for (std::size_t t = 0; t < 5; ++t) CHECK(s.at(t) == p.at(t + 3));
  }
  std::vector<float> scores(2 * 6 * 9);
  const k::score_view<float> sv = k::dense_scores(scores.data(), 2, 6, 9);
  const k::score_view<float> rows = k::query_slice(sv, k::token_range{2, 5});
  CHECK(rows.q_len == 3);
  CHECK(rows.k_len == 9);
  for (std::size_t h = 0; h < 2; ++h)
    for (std::size_t i = 0; i < 3; ++i) CHECK(rows.row(h, i) == sv.row(h, i + 2));
}

TEST_CASE("kernels/threads: for_each_token_range runs every part once, errors in part order",
          "[threads]") {
  std::vector<int> seen(1000, 0);
  CHECK(k::for_each_token_range(7, seen.size(), [&](k::token_range r) {
          for (std::size_t t = r.begin; t < r.end; ++t) ++seen[t];
          return k::kernel_error::ok;
        }) == k::kernel_error::ok);
  CHECK(std::count(seen.begin(), seen.end(), 1) == 1000);
  const k::kernel_error e = k::for_each_token_range(4, 100, [](k::token_range r) {
    if (r.begin == 0) return k::kernel_error::ok;
    return r.begin < 50 ? k::kernel_error::overlap : k::kernel_error::null_data;
  });
  CHECK(e == k::kernel_error::overlap);
}

TEST_CASE("kernels/threads: each part stores the way its whole call would", "[threads]") {
  const k::rope_table t = table();
  REQUIRE(t.stores == k::output_stores::automatic);
  CHECK(k::stream_threshold_bytes == std::size_t{32} << 20);
  // automatic streams from the threshold on; a part of such a call is told to stream.
  CHECK(k::table_for_part(t, k::stream_threshold_bytes - 1).stores == k::output_stores::automatic);
  CHECK(k::table_for_part(t, k::stream_threshold_bytes).stores == k::output_stores::streaming);
  // An explicit mode is the caller's choice at every size.
  for (const k::output_stores s : {k::output_stores::streaming, k::output_stores::cached}) {
    k::rope_table u = t;
    u.stores = s;
    CHECK(k::table_for_part(u, 0).stores == s);
    CHECK(k::table_for_part(u, std::size_t{1} << 40).stores == s);
  }
  // Nothing else changes.
  const k::rope_table p = k::table_for_part(t, std::size_t{1} << 40);
  CHECK(p.cos == t.cos);
  CHECK(p.sin == t.sin);
  CHECK(p.positions == t.positions);
  CHECK(p.rotary_dim == t.rotary_dim);
  CHECK(p.layout == t.layout);
  CHECK(p.format == t.format);
  CHECK(p.on_the_fly == t.on_the_fly);
  CHECK(p.seq_len == t.seq_len);

  // The threaded entry points hand every part that table: a call that writes exactly the
  // threshold (2 tokens of one 4 Mi-float head, out of place) and one that writes a token less.
  const std::size_t big_dim = k::stream_threshold_bytes / sizeof(float) / 2;
  std::vector<float> in(2 * big_dim), out(2 * big_dim);
  for (const std::size_t tokens : {std::size_t{2}, std::size_t{1}}) {
    const k::tensor_view<const float> iv{in.data(), tokens, 1, big_dim, big_dim, big_dim};
    const k::tensor_view<float> ov{out.data(), tokens, 1, big_dim, big_dim, big_dim};
    std::vector<k::output_stores> seen(tokens, static_cast<k::output_stores>(9));
    const auto record = [&](const k::rope_table& part, k::tensor_view<const float> i,
                            k::tensor_view<float>, k::token_positions) {
      seen[static_cast<std::size_t>(i.data - in.data()) / big_dim] = part.stores;
      return k::kernel_error::ok;
    };
    REQUIRE(k::detail::rope_threaded<float>(2, t, iv, ov, k::token_positions::from(0), record) ==
            k::kernel_error::ok);
    const k::output_stores want =
        tokens == 2 ? k::output_stores::streaming : k::output_stores::automatic;
    for (const k::output_stores s : seen) CHECK(s == want);
    // q and k together: each half of the threshold.
    std::vector<k::output_stores> seen_qk(2 * tokens, static_cast<k::output_stores>(9));
    const k::tensor_view<const float> half_in{in.data(), tokens, 1, big_dim / 2, big_dim, big_dim};
    const k::tensor_view<float> q_out{out.data(), tokens, 1, big_dim / 2, big_dim, big_dim};
    const k::tensor_view<float> k_out{
        out.data() + big_dim / 2, tokens, 1, big_dim / 2, big_dim, big_dim};
    const auto record_qk = [&](const k::rope_table& part, k::tensor_view<const float> qi,
                               k::tensor_view<float>, k::tensor_view<const float>,
                               k::tensor_view<float>, k::token_positions) {
      seen_qk[static_cast<std::size_t>(qi.data - in.data()) / big_dim] = part.stores;
      return k::kernel_error::ok;
    };
    REQUIRE(k::detail::rope_qk_threaded<float>(2, t, half_in, q_out, half_in, k_out,
                                               k::token_positions::from(0),
                                               record_qk) == k::kernel_error::ok);
    for (std::size_t i = 0; i < tokens; ++i) CHECK(seen_qk[i] == want);
  }
}

TEMPLATE_TEST_CASE("kernels/threads: threaded RoPE == rope_reference on the whole call",
                   "[threads]", float, bf16, f16) {
  SECTION("header-only kernels") {
    check_equal_to_reference<TestType>(entry::header_only);
  }
  SECTION("dispatch library") {
    check_equal_to_reference<TestType>(entry::dispatched);
  }
}

TEMPLATE_TEST_CASE("kernels/threads: a failing call writes nothing", "[threads]", float, bf16,
                   f16) {
  SECTION("header-only kernels") {
    check_errors_write_nothing<TestType>(entry::header_only);
  }
  SECTION("dispatch library") {
    check_errors_write_nothing<TestType>(entry::dispatched);
  }
}
