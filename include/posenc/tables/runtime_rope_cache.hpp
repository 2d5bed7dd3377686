// An owning RoPE cos/sin cache built at run time (std::vector storage), with the same entries as
// the compile-time rope_cache_v and build_rope_cache (tables/rope_cache.hpp), bit for bit.
//
// This is the convenience API for hosted code: `make` throws std::invalid_argument naming the
// broken rule for an invalid config (it exists only when exceptions are enabled); `try_make`
// returns the rule instead. Kernels and freestanding code use build_rope_cache into their own
// storage, or rope_cache_v.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include <posenc/frequencies/rope.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/tables/detail/owning.hpp>
#include <posenc/tables/rope_cache.hpp>

namespace posenc {

template <class T>
class runtime_rope_cache {
  static_assert(math::detail::is_float_or_double<T>, "posenc: tables are float or double");

 public:
  // An empty cache (0 positions, 0 pairs).
  runtime_rope_cache() = default;

  // Builds the cache of c for positions [0, positions) at sequence length seq_len (dynamic and
  // longrope depend on it; 0 means none, as for rope_cache_v). If c is invalid, returns the broken
  // rule and leaves `out` unchanged. Allocation failure throws as std::vector does (a size that
  // overflows std::size_t is reported as std::length_error, never truncated).
  static rope_error try_make(const rope_config& c, std::size_t positions, runtime_rope_cache& out,
                             std::uint64_t seq_len = 0) {
    const rope_error e = validate(c);
    if (e != rope_error::ok) return e;
    const std::size_t pairs = c.rotary_dim / 2;
    const std::size_t n = tables_detail::entry_count(positions, pairs);
    runtime_rope_cache r;
    r.cos_.resize(n);
    r.sin_.resize(n);
    static_cast<void>(build_rope_cache<T>(c, positions, r.cos_.data(), r.sin_.data(), seq_len));
    r.positions_ = positions;
    r.pairs_ = pairs;
    r.attention_factor_ = posenc::attention_factor(c);
    out = std::move(r);
    return rope_error::ok;
  }

#if defined(__cpp_exceptions)
  // As try_make, returning the cache; throws std::invalid_argument with message(e) if c is
  // invalid.
  static runtime_rope_cache make(const rope_config& c, std::size_t positions,
                                 std::uint64_t seq_len = 0) {
    runtime_rope_cache r;
    tables_detail::throw_if_broken(try_make(c, positions, r, seq_len));
    return r;
  }
#endif

  std::size_t positions() const {
    return positions_;
  }
  std::size_t pairs() const {
    return pairs_;
  }
  std::size_t size() const {
    return cos_.size();
  }
  double attention_factor() const {
    return attention_factor_;
  }

  // Entry (p, i); p < positions() and i < pairs() (unchecked, like operator[]).
  T cos_at(std::size_t p, std::size_t i) const {
    return cos_[p * pairs_ + i];
  }
  T sin_at(std::size_t p, std::size_t i) const {
    return sin_[p * pairs_ + i];
  }

  // All entries, row-major [p][i].
  std::span<const T> cos() const {
    return cos_;
  }
  std::span<const T> sin() const {
    return sin_;
  }

  // Valid until this cache is modified or destroyed.
  rope_cache_view<T> view() const& {
    return {cos_.data(), sin_.data(), positions_, pairs_, attention_factor_};
  }
  // A temporary's view would dangle: name the cache first.
  void view() const&& = delete;  // posenc: a view refers to this cache's storage

 private:
  std::vector<T> cos_;
  std::vector<T> sin_;
  std::size_t positions_ = 0;
  std::size_t pairs_ = 0;
  double attention_factor_ = 1.0;
};

}  // namespace posenc
