// RoPE cos/sin caches: for positions p in [0, Positions) and pairs i in [0, R/2), row-major:
//   cos[p * pairs + i] = attention_factor * cos(p * theta_i),
//   sin[p * pairs + i] = attention_factor * sin(p * theta_i),
// each rounded once to T (float or double) from the double-double value. theta_i is inv_freq_dd
// and attention_factor is attention_factor_dd (frequencies/rope.hpp). Both cos and sin carry the
// attention factor because that is what the reference implementations store: HF transformers
// multiplies both by `attention_scaling` in the rotary embedding's forward (modeling_llama.py;
// docs/formulas.md §2), and ggml's rope_yarn writes cosf(theta) * mscale and
// sinf(theta) * mscale, mscale being its attn_factor (ggml-cpu/ops.cpp; formulas.md §3). The
// attention logits therefore scale by attention_factor^2; for every scaling other than yarn and
// longrope the factor is 1.
//
// Three ways to get the same numbers, bit for bit:
// - rope_cache_v<S, T, Positions>: a constexpr variable template for a compile-time spec S
//   (lands in .rodata; costs nothing until instantiated);
// - build_rope_cache(cfg, positions, cos_out, sin_out, seq_len): fills caller storage (no
//   allocation), validating the runtime config first;
// - runtime_rope_cache<T>::make (tables/runtime_rope_cache.hpp): owning, std::vector storage.
// The compile-time path is math::make_sincos_grid and the run-time one math::sincos_of_products;
// both equal math::sincos_of_product<T>(p, theta_i, attention_factor) for every entry
// (math/angle_grid.hpp), which is what makes compile time and run time bit-identical.
//
// seq_len is HF's runtime sequence length (frequencies/rope.hpp); only dynamic and longrope depend
// on it. The compile-time cache is built with seq_len 0 (HF seq_len=None): dynamic NTK keeps its
// original base, longrope uses its short factors. Build a runtime cache for other sequence lengths.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include <posenc/frequencies/rope.hpp>
#include <posenc/math/angle_grid.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/spec/rules.hpp>
#include <posenc/tables/detail/thetas.hpp>

namespace posenc {

// Non-owning view of a cos/sin cache, whichever way it was built. Entry (p, i) is at p * pairs + i.
template <class T>
struct rope_cache_view {
  const T* cos = nullptr;
  const T* sin = nullptr;
  std::size_t positions = 0;
  std::size_t pairs = 0;
  // The factor every entry carries (attention_factor_dd rounded to double); 1 for most scalings.
  double attention_factor = 1.0;

  // Entry (p, i); p < positions and i < pairs (unchecked, like operator[]).
  constexpr T cos_at(std::size_t p, std::size_t i) const { return cos[p * pairs + i]; }
  constexpr T sin_at(std::size_t p, std::size_t i) const { return sin[p * pairs + i]; }
  // The pairs entries of position p.
  constexpr const T* cos_row(std::size_t p) const { return cos + p * pairs; }
  constexpr const T* sin_row(std::size_t p) const { return sin + p * pairs; }
  // Number of entries in each of cos and sin.
  constexpr std::size_t size() const { return positions * pairs; }
  constexpr bool empty() const { return size() == 0; }
};

// A cache of fixed size, a literal type: `cos` and `sin` are T[Positions * Pairs] arrays (members
// of the base math::sincos_grid, so that the compile-time grid becomes the cache without an
// element-by-element copy, which constant evaluation would pay ~10 µs per element for).
template <class T, std::size_t Positions, std::size_t Pairs>
struct rope_cache : math::sincos_grid<T, Positions, Pairs> {
  // The factor every entry carries (attention_factor_dd rounded to double).
  double attention_factor = 1.0;

  static constexpr std::size_t positions() { return Positions; }
  static constexpr std::size_t pairs() { return Pairs; }
  static constexpr std::size_t size() { return Positions * Pairs; }

  // Entry (p, i); p < Positions and i < Pairs (unchecked, like operator[]).
  constexpr T cos_at(std::size_t p, std::size_t i) const { return this->cos[p * Pairs + i]; }
  constexpr T sin_at(std::size_t p, std::size_t i) const { return this->sin[p * Pairs + i]; }

  constexpr rope_cache_view<T> view() const& {
    return {this->cos, this->sin, Positions, Pairs, attention_factor};
  }
  // A temporary's view would dangle: name the cache first.
  void view() const&& = delete;  // posenc: a view refers to this cache's storage
};

namespace tables_detail {
// The compile-time builder behind rope_cache_v: the grid of the given thetas, scaled by c's
// attention factor. Meant for constant evaluation: at run time the result is a large return value;
// use build_rope_cache into your own storage there.
template <class T, std::size_t Positions, std::size_t Pairs>
constexpr rope_cache<T, Positions, Pairs> make_rope_cache(const rope_config& c,
                                                          const std::array<math::dd, Pairs>& th) {
  const math::dd af = attention_factor_dd(c);
  return {math::make_sincos_grid<T, Positions, Pairs>(th, af), math::to_double(af)};
}
}  // namespace tables_detail

// The cos/sin cache of compile-time spec S for positions [0, Positions), T = float or double, built
// by the compiler (seq_len 0, see the header comment). S::config is validated first: an invalid one
// stops compilation with the rule's message (checked_rope, spec/rope.hpp).
//
// Compile-time cost (docs/tables.md): float entries come from angle addition with a proven error
// bound and cost ~10-25 µs of constant evaluation each (head_dim 128 x 4096 positions: ~6 s GCC 12,
// ~13 s Clang 16 on the development machine); double entries take the per-entry double-double path,
// ~1-3 ms each, so compile-time double caches are practical only up to a few thousand entries
// (build larger ones at run time). Large caches need raised constexpr limits (docs/building.md).
template <rope_spec S, class T, std::size_t Positions>
inline constexpr rope_cache<T, Positions, checked_rope<S>.rotary_dim / 2> rope_cache_v =
    tables_detail::make_rope_cache<T, Positions>(checked_rope<S>, tables_detail::spec_thetas_v<S>);

// Fills cos_out and sin_out (positions * rotary_dim/2 entries each, row-major [p][i]) with the
// cache of runtime config c for positions [0, positions), bit-identical to rope_cache_v for the
// same config (at seq_len 0). Validates c first: if it is invalid, returns the broken rule and
// writes nothing. No allocation; usable in constant expressions too (slower there than
// rope_cache_v). Positions from 2^32 on are computed but lie outside the accuracy guarantee of
// math::sincos_of_products (correctly rounded for p < 2^32).
template <class T>
constexpr rope_error build_rope_cache(const rope_config& c, std::size_t positions, T* cos_out,
                                      T* sin_out, std::uint64_t seq_len = 0) {
  static_assert(math::detail::is_float_or_double<T>, "posenc: tables are float or double");
  return spec_detail::write_if_valid(c, [&] {
    if (positions == 0) return;  // the outputs may be null: no pointer arithmetic on them
    const std::size_t pairs = c.rotary_dim / 2;
    const math::dd af = attention_factor_dd(c);
    for (std::size_t i = 0; i < pairs; ++i) {
      math::sincos_of_products<T>(inv_freq_dd(c, static_cast<std::uint32_t>(i), seq_len), positions,
                                  cos_out + i, sin_out + i, pairs, af);
    }
  });
}

}  // namespace posenc
