// What the kernels read and write: strided views of [tokens, heads, head_dim] tensors and of
// [heads, q_len, k_len] blocks of attention scores, and the positions of tokens. Views never own
// memory; kernels never allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ranges>
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

// A [heads, q_len, k_len] block of attention scores (the ALiBi kernels' operand); element
// (h, i, j) at data[h * head_stride + i * q_stride + j].
template <class T>
struct score_view {
  T* data = nullptr;
  std::size_t heads = 0;
  std::size_t q_len = 0;
  std::size_t k_len = 0;
  std::size_t head_stride = 0;
  std::size_t q_stride = 0;

  constexpr T* row(std::size_t h, std::size_t i) const {
    return data + h * head_stride + i * q_stride;
  }
  constexpr bool empty() const { return heads == 0 || q_len == 0 || k_len == 0; }
};

// A densely packed block.
template <class T>
constexpr score_view<T> dense_scores(T* data, std::size_t heads, std::size_t q_len,
                                     std::size_t k_len) {
  return {data, heads, q_len, k_len, q_len * k_len, k_len};
}

namespace detail {
// What token_positions::of accepts: a range convertible to a span of one of the two id types.
template <class Ids>
concept position_id_list = std::is_convertible_v<Ids&&, std::span<const std::int64_t>> ||
    std::is_convertible_v<Ids&&, std::span<const std::int32_t>>;
template <class Ids>
concept not_position_id_list = !position_id_list<Ids>;
// An rvalue container that owns its ids (std::vector, std::array), not a view (std::span).
template <class Ids>
concept temporary_position_id_list =
    position_id_list<Ids> && !std::is_lvalue_reference_v<Ids> && !std::ranges::borrowed_range<Ids>;
}  // namespace detail

// What explicit position ids are stored as.
enum class position_id_type : std::uint8_t { none, int32, int64 };

// The position of each token: first + t (prefill or decode after `first` cached tokens), or ids[t]
// from a position-id array (HF position_ids, llama.cpp's int32 positions; one id per token, each
// >= 0). A view: the ids are read by each kernel call, so they must outlive the calls that use
// this object. The ids are std::int32_t or std::int64_t, told apart by a tag that the kernels
// test once per token (one code path for both widths, no second copy of every kernel).
class token_positions {
 public:
  // Token t at position t.
  constexpr token_positions() = default;

  static constexpr token_positions from(std::uint64_t first) {
    token_positions p;
    p.offset_ = first;
    return p;
  }
  static constexpr token_positions of(std::span<const std::int64_t> position_ids) {
    token_positions p;
    p.ids64_ = position_ids.data();
    p.count_ = position_ids.size();
    p.type_ = position_id_type::int64;
    return p;
  }
  static constexpr token_positions of(std::span<const std::int32_t> position_ids) {
    token_positions p;
    p.ids32_ = position_ids.data();
    p.count_ = position_ids.size();
    p.type_ = position_id_type::int32;
    return p;
  }

  // Rejected at compile time (deleted, so the compiler's error shows the comment on the line that
  // names the function):
  // - ids of any other type: unsigned ids would wrap instead of being reported as negative, and
  //   16-bit or floating-point ids are not what any engine passes on purpose;
  template <detail::not_position_id_list Ids>
  static token_positions of(  // posenc: position ids must be std::int32_t or std::int64_t
      Ids&&) = delete;
  // - a temporary container (a std::vector returned by a function, ...): this object would keep
  //   pointing into it after it is destroyed. Name the container; a std::span is fine.
  template <detail::temporary_position_id_list Ids>
  static token_positions of(  // posenc: token_positions would point into a temporary container
      Ids&&) = delete;

  // Whether the positions come from ids (of), even an empty list.
  constexpr bool explicit_ids() const { return type_ != position_id_type::none; }
  constexpr position_id_type id_type() const { return type_; }
  // The first position of from(first) (0 for explicit ids).
  constexpr std::uint64_t first() const { return offset_; }
  // The ids (an empty span when they are of the other type or there are none).
  constexpr std::span<const std::int64_t> ids64() const {
    return type_ == position_id_type::int64 ? std::span<const std::int64_t>(ids64_, count_)
                                            : std::span<const std::int64_t>();
  }
  constexpr std::span<const std::int32_t> ids32() const {
    return type_ == position_id_type::int32 ? std::span<const std::int32_t>(ids32_, count_)
                                            : std::span<const std::int32_t>();
  }
  // Number of ids (0 for from(first)).
  constexpr std::size_t size() const { return count_; }

  // Position of token t; unchecked (see check_positions: every id is then >= 0).
  constexpr std::uint64_t at(std::size_t t) const {
    switch (type_) {
      case position_id_type::int64:
        return static_cast<std::uint64_t>(ids64_[t]);
      case position_id_type::int32:
        return static_cast<std::uint64_t>(static_cast<std::int64_t>(ids32_[t]));
      case position_id_type::none:
        break;
    }
    return offset_ + t;
  }

 private:
  std::uint64_t offset_ = 0;
  // One pointer per id type, the unused one null; type_ says which one at() reads.
  const std::int64_t* ids64_ = nullptr;
  const std::int32_t* ids32_ = nullptr;
  std::size_t count_ = 0;
  position_id_type type_ = position_id_type::none;
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

namespace detail {
// The largest id, or -1 when one is negative (0 for none).
template <class I>
constexpr std::int64_t max_id(std::span<const I> ids) {
  std::int64_t m = 0;
  for (const I id : ids) {
    if (id < 0) return -1;
    if (id > m) m = id;
  }
  return m;
}
}  // namespace detail

// ids: one per token and none negative (for either width). Returns ok, shape_mismatch or
// negative_position; the largest position is written to *max_position (0 when there are no
// tokens).
constexpr kernel_error check_positions(const token_positions& pos, std::size_t tokens,
                                       std::uint64_t* max_position) {
  std::uint64_t m = 0;
  if (pos.explicit_ids()) {
    if (pos.size() != tokens) return kernel_error::shape_mismatch;
    const std::int64_t largest = pos.id_type() == position_id_type::int32
                                     ? detail::max_id(pos.ids32())
                                     : detail::max_id(pos.ids64());
    if (largest < 0) return kernel_error::negative_position;
    m = static_cast<std::uint64_t>(largest);
  } else if (tokens > 0) {
    if (pos.first() > static_cast<std::uint64_t>(-1) - (tokens - 1))
      return kernel_error::position_out_of_range;
    m = pos.first() + (tokens - 1);
  }
  *max_position = m;
  return kernel_error::ok;
}

}  // namespace posenc::kernels
