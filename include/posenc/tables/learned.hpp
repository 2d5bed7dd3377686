// Learned absolute position tables (spec/learned.hpp): `rows` trained vectors of width `dim`,
// position p reading row p + offset. The values come from a model, not from a formula, so the
// library provides the container types and a bounds-checked lookup:
// - learned_table_view<T>: non-owning (rows, dim, offset), e.g. over a mapped checkpoint;
// - learned_table<T, Rows, Dim, Offset>: a literal type for weights known at build time
//   (constexpr, lands in .rodata);
// - runtime_learned_table<T>: owning, std::vector storage (hosted code).
// T is a kernel storage type (float, bf16, f16) or double.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ranges>
#include <span>
#include <utility>
#include <vector>
#if defined(__cpp_exceptions)
#include <stdexcept>
#endif

#include <posenc/spec/learned.hpp>

namespace posenc {

template <class T>
struct learned_table_view {
  const T* data = nullptr;
  std::size_t rows = 0;  // positions + offset
  std::size_t dim = 0;
  std::size_t offset = 0;

  // Positions 0 .. positions() - 1 have a row.
  constexpr std::size_t positions() const { return rows > offset ? rows - offset : 0; }
  constexpr bool contains(std::uint64_t p) const { return p < positions(); }
  // The row of position p, or nullptr when p has none (never out of bounds).
  constexpr const T* lookup(std::uint64_t p) const {
    return contains(p) ? data + (static_cast<std::size_t>(p) + offset) * dim : nullptr;
  }
};

// A view of `weights` (rows * dim values, row-major) as the table of c; an empty view (data
// nullptr, rows 0) if c is invalid or the sizes differ.
template <class T>
constexpr learned_table_view<T> make_learned_view(const learned_config& c,
                                                  std::span<const T> weights) {
  if (validate(c) != learned_error::ok ||
      weights.size() != std::size_t{learned_rows(c)} * std::size_t{c.dim})
    return {};
  return {weights.data(), learned_rows(c), c.dim, c.offset};
}
// A temporary container (a std::vector returned by a loader, say) would be gone before the view is
// used; views (std::span, ...) and named containers take the overload above.
template <class T, class Weights>
  requires(!std::ranges::borrowed_range<Weights>)
learned_table_view<T> make_learned_view(  // posenc: the view would outlive these weights
    const learned_config& c, Weights&& weights) = delete;

// Weights fixed at build time: `data` is T[Rows * Dim] (aggregate-initialise it, e.g. from a
// generated header), positions read row p + offset.
template <class T, std::size_t Rows, std::size_t Dim, std::size_t Offset = 0>
struct learned_table {
  static_assert(Rows > Offset, "posenc: a learned table needs more rows than its offset");
  static_assert(Dim > 0, "posenc: learned dim must be positive");
  T data[Rows * Dim];

  static constexpr std::size_t positions() { return Rows - Offset; }
  constexpr const T* lookup(std::uint64_t p) const {
    return p < positions() ? data + (static_cast<std::size_t>(p) + Offset) * Dim : nullptr;
  }
  constexpr learned_table_view<T> view() const& { return {data, Rows, Dim, Offset}; }
  // A temporary's view would dangle: name the table first.
  void view() const&& = delete;  // posenc: a view refers to this table's storage
};

// Earlier names: the compile-time table takes the bare name, as rope_cache and sinusoidal_table.
template <class T, std::size_t Rows, std::size_t Dim, std::size_t Offset = 0>
using static_learned_table [[deprecated("posenc: use posenc::learned_table")]] =
    learned_table<T, Rows, Dim, Offset>;

// An owning learned table.
template <class T>
class runtime_learned_table {
 public:
  runtime_learned_table() = default;

  // A table of c with the given weights (rows * dim values, row-major, copied). Returns the broken
  // rule (or learned_error::rows when the sizes differ) and leaves `out` unchanged on error.
  static learned_error try_make(const learned_config& c, std::span<const T> weights,
                                runtime_learned_table& out) {
    learned_error e = validate(c);
    if (e == learned_error::ok &&
        weights.size() != std::size_t{learned_rows(c)} * std::size_t{c.dim})
      e = learned_error::rows;
    if (e != learned_error::ok) return e;
    runtime_learned_table t;
    t.data_.assign(weights.begin(), weights.end());
    t.config_ = c;
    out = std::move(t);
    return learned_error::ok;
  }

  // A zero-filled table of c (weights to be loaded through data()).
  static learned_error try_make(const learned_config& c, runtime_learned_table& out) {
    const learned_error e = validate(c);
    if (e != learned_error::ok) return e;
    runtime_learned_table t;
    t.data_.assign(std::size_t{learned_rows(c)} * c.dim, T{});
    t.config_ = c;
    out = std::move(t);
    return learned_error::ok;
  }

#if defined(__cpp_exceptions)
  static runtime_learned_table make(const learned_config& c, std::span<const T> weights) {
    runtime_learned_table t;
    const learned_error e = try_make(c, weights, t);
    if (e != learned_error::ok)
      throw std::invalid_argument(e == learned_error::rows && validate(c) == learned_error::ok
                                      ? "posenc: learned weights must have rows * dim values"
                                      : message(e));
    return t;
  }
#endif

  const learned_config& config() const {
    return config_;
  }
  std::span<T> data() {
    return data_;
  }
  std::span<const T> data() const {
    return data_;
  }
  const T* lookup(std::uint64_t p) const {
    return view().lookup(p);
  }
  // Valid until this table is modified or destroyed.
  learned_table_view<T> view() const& {
    return {data_.data(), learned_rows(config_), config_.dim, config_.offset};
  }
  // A temporary's view would dangle: name the table first.
  void view() const&& = delete;  // posenc: a view refers to this table's storage

 private:
  std::vector<T> data_;
  learned_config config_{};
};

}  // namespace posenc
