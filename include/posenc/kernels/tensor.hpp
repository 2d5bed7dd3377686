// What the kernels read and write: strided views of [tokens, heads, head_dim] tensors, and the
// positions of their tokens. Views never own memory; kernels never allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include <posenc/kernels/error.hpp>

namespace posenc::kernels {

// A [tokens, heads, head_dim] tensor whose head vectors are contiguous (channel stride 1), with
// explicit token and head strides in elements. A q or k slice of a fused qkv buffer
// [tokens, 3 * heads * head_dim] is {base + 0 or heads * head_dim, tokens, heads, head_dim,
// 3 * heads * head_dim, head_dim}; a head-major [heads, tokens, head_dim] tensor has
// head_stride = tokens * head_dim and token_stride = head_dim.
template <class T>
struct tensor_view {
  T* data = nullptr;
  std::size_t tokens = 0;
  std::size_t heads = 0;
  std::size_t head_dim = 0;
  std::size_t token_stride = 0;
  std::size_t head_stride = 0;

  // Element (t, h, c); unchecked.
  constexpr T* at(std::size_t t, std::size_t h) const {
    return data + t * token_stride + h * head_stride;
  }
  constexpr bool empty() const { return tokens == 0 || heads == 0 || head_dim == 0; }
  // The read-only view of the same elements.
  constexpr operator tensor_view<const T>() const requires(!std::is_const_v<T>) {
    return {data, tokens, heads, head_dim, token_stride, head_stride};
  }
};

// A densely packed [tokens, heads, head_dim] tensor.
template <class T>
constexpr tensor_view<T> dense(T* data, std::size_t tokens, std::size_t heads,
                               std::size_t head_dim) {
  return {data, tokens, heads, head_dim, heads * head_dim, head_dim};
}

// The position of each token: offset + t (prefill or decode after `offset` cached tokens), or
// ids[t] from a position-id array (HF position_ids; one id per token, each >= 0).
struct token_positions {
  std::uint64_t offset = 0;
  std::span<const std::int64_t> ids{};

  static constexpr token_positions from(std::uint64_t first) { return {first, {}}; }
  static constexpr token_positions of(std::span<const std::int64_t> position_ids) {
    return {0, position_ids};
  }
  constexpr bool explicit_ids() const { return ids.data() != nullptr || !ids.empty(); }
  // Position of token t; unchecked (see check_positions).
  constexpr std::uint64_t at(std::size_t t) const {
    return explicit_ids() ? static_cast<std::uint64_t>(ids[t]) : offset + t;
  }
};

// Checks that a view is usable as an output: no null data when non-empty, strides that do not
// make two of its elements share an address, and an extent that fits in std::size_t. Input views
// are checked with the same rules (overlapping input elements would be harmless, but such strides
// are always a caller's mistake).
template <class T>
constexpr kernel_error check_view(const tensor_view<T>& v) {
  if (v.empty()) return kernel_error::ok;
  if (v.data == nullptr) return kernel_error::null_data;
  // Sort the two outer dimensions by stride; each must step over everything inside it.
  std::size_t inner_n = v.heads, inner_s = v.head_stride, outer_n = v.tokens,
              outer_s = v.token_stride;
  if (outer_n > 1 && (inner_n == 1 || outer_s < inner_s)) {
    std::size_t tn = inner_n, ts = inner_s;
    inner_n = outer_n;
    inner_s = outer_s;
    outer_n = tn;
    outer_s = ts;
  }
  constexpr std::size_t max = static_cast<std::size_t>(-1);
  if (inner_n > 1 && inner_s < v.head_dim) return kernel_error::bad_strides;
  // Extent of one inner block: (inner_n - 1) * inner_s + head_dim, without overflow.
  if (inner_n > 1 && inner_s > (max - v.head_dim) / (inner_n - 1)) return kernel_error::bad_strides;
  const std::size_t block = (inner_n - 1) * inner_s + v.head_dim;
  if (outer_n > 1 && outer_s < block) return kernel_error::bad_strides;
  if (outer_n > 1 && outer_s > (max - block) / (outer_n - 1)) return kernel_error::bad_strides;
  // The whole extent must also be addressable as T objects.
  const std::size_t extent = (outer_n - 1) * outer_s + block;
  if (extent > max / sizeof(T)) return kernel_error::bad_strides;
  return kernel_error::ok;
}

// Number of elements from data to one past the last element (0 for an empty view). Assumes
// check_view(v) == ok.
template <class T>
constexpr std::size_t extent(const tensor_view<T>& v) {
  if (v.empty()) return 0;
  return (v.tokens - 1) * v.token_stride + (v.heads - 1) * v.head_stride + v.head_dim;
}

// True if the address ranges of a and b intersect (a conservative test for overlap).
template <class A, class B>
bool ranges_intersect(const tensor_view<A>& a, const tensor_view<B>& b) {
  if (a.empty() || b.empty()) return false;
  const auto a0 = reinterpret_cast<std::uintptr_t>(a.data);
  const auto b0 = reinterpret_cast<std::uintptr_t>(b.data);
  const std::uintptr_t a1 = a0 + extent(a) * sizeof(A);
  const std::uintptr_t b1 = b0 + extent(b) * sizeof(B);
  return a0 < b1 && b0 < a1;
}

// Same shape (tokens, heads, head_dim).
template <class A, class B>
constexpr bool same_shape(const tensor_view<A>& a, const tensor_view<B>& b) {
  return a.tokens == b.tokens && a.heads == b.heads && a.head_dim == b.head_dim;
}

// ids: one per token and none negative. Returns ok, shape_mismatch or negative_position; the
// largest position is written to *max_position (0 when there are no tokens).
constexpr kernel_error check_positions(const token_positions& pos, std::size_t tokens,
                                       std::uint64_t* max_position) {
  std::uint64_t m = 0;
  if (pos.explicit_ids()) {
    if (pos.ids.size() != tokens) return kernel_error::shape_mismatch;
    for (const std::int64_t id : pos.ids) {
      if (id < 0) return kernel_error::negative_position;
      if (static_cast<std::uint64_t>(id) > m) m = static_cast<std::uint64_t>(id);
    }
  } else if (tokens > 0) {
    if (pos.offset > static_cast<std::uint64_t>(-1) - (tokens - 1))
      return kernel_error::position_out_of_range;
    m = pos.offset + (tokens - 1);
  }
  *max_position = m;
  return kernel_error::ok;
}

}  // namespace posenc::kernels
