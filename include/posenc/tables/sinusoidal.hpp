// Sinusoidal position tables: row p holds PE[p, 0..d) for p in [0, Positions), row-major, each
// entry sin or cos of p * w_k rounded once to T (float or double) from the double-double value
// (math::sincos_of_product<T>(p, sinusoidal_frequency_dd(c, k))); the padding row and the odd-d
// zero column of the split layout are +0. Formulas and layouts: spec/sinusoidal.hpp.
//
// Three ways to the same bits:
// - sinusoidal_table_v<S, T, Positions>: a constexpr variable template (lands in .rodata);
// - build_sinusoidal_table(c, positions, out): fills caller storage, validating c first;
// - runtime_sinusoidal_table<T>::make: owning, std::vector storage (hosted code).
// Compile time builds the grid with math::make_sincos_grid, run time with math::sincos_of_products;
// both equal sincos_of_product<T> entry by entry (math/angle_grid.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include <posenc/math/angle.hpp>
#include <posenc/math/angle_grid.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/math/trig.hpp>
#include <posenc/spec/sinusoidal.hpp>
#include <posenc/tables/detail/owning.hpp>

namespace posenc {

// Non-owning view of a sinusoidal table (or of any [positions, dim] row-major table).
template <class T>
struct sinusoidal_table_view {
  const T* data = nullptr;
  std::size_t positions = 0;
  std::size_t dim = 0;

  constexpr T at(std::size_t p, std::size_t c) const { return data[p * dim + c]; }
  constexpr const T* row(std::size_t p) const { return data + p * dim; }
  constexpr std::size_t size() const { return positions * dim; }
};

// A table of fixed size, a literal type.
template <class T, std::size_t Positions, std::size_t Dim>
struct sinusoidal_table {
  T data[Positions * Dim];

  static constexpr std::size_t positions() { return Positions; }
  static constexpr std::size_t dim() { return Dim; }
  static constexpr std::size_t size() { return Positions * Dim; }
  constexpr T at(std::size_t p, std::size_t c) const { return data[p * Dim + c]; }
  constexpr const T* row(std::size_t p) const { return data + p * Dim; }
  constexpr sinusoidal_table_view<T> view() const& { return {data, Positions, Dim}; }
  // A temporary's view would dangle: name the table first.
  void view() const&& = delete;  // posenc: a view refers to this table's storage
};

// Entry (p, col) of the table of a valid config, computed alone (the definition every builder is
// checked against; slow: one double-double sin/cos per call).
template <class T>
constexpr T sinusoidal_entry(const sinusoidal_config& c, std::uint64_t p, std::uint32_t col) {
  static_assert(math::detail::is_float_or_double<T>, "posenc: tables are float or double");
  if (c.padding_idx >= 0 && p == static_cast<std::uint64_t>(c.padding_idx)) return T(0);
  std::uint32_t k = 0;
  bool is_sin = true;
  if (c.layout == sinusoidal_layout::paper) {
    k = col / 2;
    is_sin = col % 2 == 0;
  } else {
    const std::uint32_t half = c.dim / 2;
    if (col >= 2 * half) return T(0);  // odd d: the zero column
    k = col < half ? col : col - half;
    is_sin = col < half;
  }
  const math::sincos_result<T> v = math::sincos_of_product<T>(p, sinusoidal_frequency_dd(c, k));
  return is_sin ? v.sin : v.cos;
}

namespace tables_detail {
template <std::size_t F>
constexpr std::array<math::dd, F> sinusoidal_thetas(const sinusoidal_config& c) {
  std::array<math::dd, F> th{};
  for (std::size_t k = 0; k < F; ++k)
    th[k] = sinusoidal_frequency_dd(c, static_cast<std::uint32_t>(k));
  return th;
}

// The compile-time builder behind sinusoidal_table_v (constant evaluation; at run time use
// build_sinusoidal_table into your own storage).
template <class T, std::size_t P, std::size_t D, std::size_t F>
constexpr sinusoidal_table<T, P, D> make_sinusoidal_table(const sinusoidal_config& c) {
  const auto g = math::make_sincos_grid<T, P, F>(sinusoidal_thetas<F>(c));
  sinusoidal_table<T, P, D> t{};
  for (std::size_t p = 0; p < P; ++p) {
    if (c.padding_idx >= 0 && p == static_cast<std::size_t>(c.padding_idx)) continue;  // zeros
    for (std::size_t k = 0; k < F; ++k) {
      const sinusoidal_columns cols = sinusoidal_columns_of(c, static_cast<std::uint32_t>(k));
      t.data[p * D + cols.sin_column] = g.sin[p * F + k];
      if (cols.cos_column < D) t.data[p * D + cols.cos_column] = g.cos[p * F + k];
    }
  }
  return t;
}
}  // namespace tables_detail

// The table of compile-time spec S for positions [0, Positions), T float or double. S::config is
// validated first (an invalid one stops compilation with the rule's message). Cost: as
// rope_cache_v, ~10-25 µs of constant evaluation per float entry; double entries take the
// per-entry double-double path (milliseconds each), so build large double tables at run time.
// (Positions < 2^32 tested in 64 bits: std::size_t is 32 bits wide on 32-bit targets.)
template <sinusoidal_spec S, class T, std::size_t Positions>
requires(Positions > 0 && std::uint64_t{Positions} >> 32 == 0) inline constexpr sinusoidal_table<
    T, Positions, checked_sinusoidal<S>.dim> sinusoidal_table_v =
    tables_detail::make_sinusoidal_table<T, Positions, checked_sinusoidal<S>.dim,
                                         sinusoidal_frequencies(checked_sinusoidal<S>)>(
        checked_sinusoidal<S>);

// Fills out[0 .. positions * c.dim) (row-major [p][col]) with the table of c for positions
// [0, positions), bit-identical to sinusoidal_table_v and to sinusoidal_entry. Validates c first
// (and positions <= 2^32); on error returns the rule and writes nothing. No allocation.
template <class T>
constexpr sinusoidal_error build_sinusoidal_table(const sinusoidal_config& c, std::size_t positions,
                                                  T* out) {
  static_assert(math::detail::is_float_or_double<T>, "posenc: tables are float or double");
  const sinusoidal_error e = validate(c);
  if (e != sinusoidal_error::ok) return e;
  if (static_cast<std::uint64_t>(positions) > (std::uint64_t{1} << 32))
    return sinusoidal_error::positions;
  if (positions == 0) return sinusoidal_error::ok;  // out may be null: no pointer arithmetic on it
  const std::size_t d = c.dim;
  const std::uint32_t f = sinusoidal_frequencies(c);
  for (std::uint32_t k = 0; k < f; ++k) {
    const math::dd theta = sinusoidal_frequency_dd(c, k);
    const sinusoidal_columns cols = sinusoidal_columns_of(c, k);
    if (cols.cos_column < d) {
      math::sincos_of_products<T>(theta, positions, out + cols.cos_column, out + cols.sin_column,
                                  d);
    } else {
      // The last frequency of an odd-d paper table has no cos column: per entry (same bits).
      for (std::size_t p = 0; p < positions; ++p)
        out[p * d + cols.sin_column] = math::sincos_of_product<T>(p, theta).sin;
    }
  }
  if (c.layout == sinusoidal_layout::split && d % 2 == 1)
    for (std::size_t p = 0; p < positions; ++p) out[p * d + d - 1] = T(0);
  if (c.padding_idx >= 0 && static_cast<std::uint64_t>(c.padding_idx) < positions)
    for (std::size_t i = 0; i < d; ++i) out[static_cast<std::size_t>(c.padding_idx) * d + i] = T(0);
  return sinusoidal_error::ok;
}

// An owning sinusoidal table built at run time; the same entries as build_sinusoidal_table.
template <class T>
class runtime_sinusoidal_table {
  static_assert(math::detail::is_float_or_double<T>, "posenc: tables are float or double");

 public:
  runtime_sinusoidal_table() = default;

  // If c is invalid (or positions > 2^32), returns the rule and leaves `out` unchanged. Allocation
  // failure throws as std::vector does.
  static sinusoidal_error try_make(const sinusoidal_config& c, std::size_t positions,
                                   runtime_sinusoidal_table& out) {
    sinusoidal_error e = validate(c);
    if (e == sinusoidal_error::ok &&
        static_cast<std::uint64_t>(positions) > (std::uint64_t{1} << 32))
      e = sinusoidal_error::positions;
    if (e != sinusoidal_error::ok) return e;
    runtime_sinusoidal_table r;
    r.data_.resize(tables_detail::entry_count(positions, c.dim));
    static_cast<void>(build_sinusoidal_table<T>(c, positions, r.data_.data()));
    r.positions_ = positions;
    r.dim_ = c.dim;
    out = std::move(r);
    return sinusoidal_error::ok;
  }

#if defined(__cpp_exceptions)
  // As try_make; throws std::invalid_argument with message(e) on an invalid config.
  static runtime_sinusoidal_table make(const sinusoidal_config& c, std::size_t positions) {
    runtime_sinusoidal_table r;
    tables_detail::throw_if_broken(try_make(c, positions, r));
    return r;
  }
#endif

  std::size_t positions() const {
    return positions_;
  }
  std::size_t dim() const {
    return dim_;
  }
  T at(std::size_t p, std::size_t c) const {
    return data_[p * dim_ + c];
  }
  std::span<const T> data() const {
    return data_;
  }
  // Valid until this table is modified or destroyed.
  sinusoidal_table_view<T> view() const& {
    return {data_.data(), positions_, dim_};
  }
  // A temporary's view would dangle: name the table first.
  void view() const&& = delete;  // posenc: a view refers to this table's storage

 private:
  std::vector<T> data_;
  std::size_t positions_ = 0;
  std::size_t dim_ = 0;
};

}  // namespace posenc
