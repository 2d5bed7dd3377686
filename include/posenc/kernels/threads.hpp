// Splitting one kernel call over threads. Every kernel is a pure function of its arguments (no
// state, no allocation; the dispatch library chooses its ISA once, thread-safely), so calls on
// disjoint token ranges of the same tensors may run concurrently: an engine with its own thread
// pool gives each worker split_tokens(tokens, workers, worker) and calls the kernel on
// token_slice(view, range) and token_slice(positions, range) (query_slice for ALiBi's score rows).
// The results are those of one call on all tokens, bit for bit: each token's output depends only
// on that token's input and position, and the table (seq_len included) is the same in every part.
// For RoPE, each part takes table_for_part(table, bytes the whole call writes) (rope_table.hpp),
// so that the parts of a call large enough to stream its stores stream them too (each part alone
// would be under the threshold).
//
// apply_rope_threaded / apply_rope_qk_threaded do this with std::thread for the RoPE entry points:
// the whole call is checked first (check_rope_call, check_rope_qk_call), so on error nothing is
// written, then the parts run on threads - 1 new threads and the calling thread, with the table
// of table_for_part.
// kernels::apply_rope_threaded uses the header-only kernels (posenc/kernels/rope.hpp, the build's
// architecture); kernels::dispatch::apply_rope_threaded the dispatch library's entry points (link
// posenc_kernels).
#pragma once

#include <cstddef>
#include <cstdint>
#include <system_error>
#include <thread>
#include <vector>

#include <posenc/kernels/dispatch.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/rope.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>

namespace posenc::kernels {

// Tokens [begin, end) of a call.
struct token_range {
  std::size_t begin = 0;
  std::size_t end = 0;
  constexpr std::size_t size() const { return end - begin; }
  constexpr bool empty() const { return end == begin; }
  friend constexpr bool operator==(const token_range&, const token_range&) = default;
};

// Part `part` of `parts` near-equal ranges covering [0, tokens) in order: the first tokens % parts
// parts have one token more. parts == 0 or part >= parts gives an empty range.
constexpr token_range split_tokens(std::size_t tokens, std::size_t parts, std::size_t part) {
  if (parts == 0 || part >= parts) return {tokens, tokens};
  const std::size_t q = tokens / parts;
  const std::size_t r = tokens % parts;
  const std::size_t begin = part * q + (part < r ? part : r);
  return {begin, begin + q + (part < r ? 1 : 0)};
}

// Tokens r of a view (r within [0, v.tokens]; unchecked, like tensor_view::at).
template <class T>
constexpr tensor_view<T> token_slice(const tensor_view<T>& v, token_range r) {
  tensor_view<T> s = v;
  s.tokens = r.size();
  if (r.empty())
    s.data = v.data;  // no arithmetic on a pointer that may be null
  else
    s.data = v.data + r.begin * v.token_stride;
  return s;
}

// The positions of tokens r: from(first + r.begin), or ids [r.begin, r.end) of the list.
constexpr token_positions token_slice(const token_positions& p, token_range r) {
  switch (p.id_type()) {
    case position_id_type::int64:
      return token_positions::of(p.ids64().subspan(r.begin, r.size()));
    case position_id_type::int32:
      return token_positions::of(p.ids32().subspan(r.begin, r.size()));
    case position_id_type::none:
      break;
  }
  return token_positions::from(p.first() + r.begin);
}

// Query rows r of a score block; the caller adds r.begin to its q_offset (add_alibi_bias).
template <class T>
constexpr score_view<T> query_slice(const score_view<T>& s, token_range r) {
  score_view<T> out = s;
  out.q_len = r.size();
  if (!r.empty()) out.data = s.data + r.begin * s.q_stride;
  return out;
}

// The number of parts a call over `tokens` is split into with `threads` threads: threads, or
// std::thread::hardware_concurrency() when threads is 0 (1 if unknown), never more than tokens,
// at least 1.
inline std::size_t thread_parts(std::size_t threads, std::size_t tokens) {
  if (threads == 0) threads = std::thread::hardware_concurrency();
  if (threads > tokens) threads = tokens;
  return threads == 0 ? 1 : threads;
}

// Runs part(range) for the thread_parts(threads, tokens) ranges of split_tokens: parts 1.. on new
// threads, part 0 on the calling thread, and waits for all. part must not throw. Returns the first
// error in part order (ok if none). A thread that cannot be started (std::system_error) leaves its
// part to the calling thread.
template <class Part>
kernel_error for_each_token_range(std::size_t threads, std::size_t tokens, Part&& part) {
  const std::size_t parts = thread_parts(threads, tokens);
  std::vector<kernel_error> errors(parts, kernel_error::ok);
  std::vector<std::thread> workers;
  std::vector<std::size_t> left;  // parts whose thread did not start
  workers.reserve(parts - 1);
  for (std::size_t i = 1; i < parts; ++i) {
    try {
      workers.emplace_back(
          [&part, &errors, tokens, parts, i] { errors[i] = part(split_tokens(tokens, parts, i)); });
    } catch (const std::system_error&) {
      left.push_back(i);
    }
  }
  errors[0] = part(split_tokens(tokens, parts, 0));
  for (std::size_t i : left) errors[i] = part(split_tokens(tokens, parts, i));
  for (std::thread& w : workers) w.join();
  for (kernel_error e : errors)
    if (e != kernel_error::ok) return e;
  return kernel_error::ok;
}

namespace detail {

// Bytes of the elements of a view that passed check_view (their count fits in std::size_t as T
// objects, so this cannot overflow).
template <class T>
constexpr std::size_t output_bytes(const tensor_view<T>& v) {
  return v.tokens * v.heads * v.head_dim * sizeof(T);
}

template <storage_type T, class Apply>
kernel_error rope_threaded(std::size_t threads, const rope_table& table, tensor_view<const T> in,
                           tensor_view<T> out, token_positions pos, Apply apply) {
  if (const kernel_error e = check_rope_call<T>(table, in, out, pos); e != kernel_error::ok)
    return e;
  // Every part stores the way the whole call would (checked: the size cannot overflow).
  const rope_table part = table_for_part(table, output_bytes(out));
  return for_each_token_range(threads, in.tokens, [&](token_range r) {
    return apply(part, token_slice(in, r), token_slice(out, r), token_slice(pos, r));
  });
}

template <storage_type T, class ApplyQk>
kernel_error rope_qk_threaded(std::size_t threads, const rope_table& table,
                              tensor_view<const T> q_in, tensor_view<T> q_out,
                              tensor_view<const T> k_in, tensor_view<T> k_out, token_positions pos,
                              ApplyQk apply_qk) {
  if (const kernel_error e = check_rope_qk_call<T>(table, q_in, q_out, k_in, k_out, pos);
      e != kernel_error::ok)
    return e;
  const std::size_t q_bytes = output_bytes(q_out), k_bytes = output_bytes(k_out);
  const std::size_t bytes = q_bytes > static_cast<std::size_t>(-1) - k_bytes
                                ? static_cast<std::size_t>(-1)
                                : q_bytes + k_bytes;
  const rope_table part = table_for_part(table, bytes);
  return for_each_token_range(threads, q_in.tokens, [&](token_range r) {
    return apply_qk(part, token_slice(q_in, r), token_slice(q_out, r), token_slice(k_in, r),
                    token_slice(k_out, r), token_slice(pos, r));
  });
}

}  // namespace detail

// apply_rope (posenc/kernels/rope.hpp) split over `threads` threads (0: the hardware's count).
template <storage_type T>
kernel_error apply_rope_threaded(std::size_t threads, const rope_table& table,
                                 tensor_view<const T> in, tensor_view<T> out, token_positions pos) {
  return detail::rope_threaded<T>(threads, table, in, out, pos,
                                  [](const rope_table& t, tensor_view<const T> i, tensor_view<T> o,
                                     token_positions p) { return apply_rope<T>(t, i, o, p); });
}

// In place.
template <storage_type T>
kernel_error apply_rope_threaded(std::size_t threads, const rope_table& table, tensor_view<T> x,
                                 token_positions pos) {
  return apply_rope_threaded<T>(threads, table, tensor_view<const T>(x), x, pos);
}

// apply_rope_qk split over `threads` threads.
template <storage_type T>
kernel_error apply_rope_qk_threaded(std::size_t threads, const rope_table& table,
                                    tensor_view<const T> q_in, tensor_view<T> q_out,
                                    tensor_view<const T> k_in, tensor_view<T> k_out,
                                    token_positions pos) {
  return detail::rope_qk_threaded<T>(
      threads, table, q_in, q_out, k_in, k_out, pos,
      [](const rope_table& t, tensor_view<const T> qi, tensor_view<T> qo, tensor_view<const T> ki,
         tensor_view<T> ko, token_positions p) { return apply_rope_qk<T>(t, qi, qo, ki, ko, p); });
}

namespace dispatch {

// dispatch::apply_rope (the runtime-dispatch library) split over `threads` threads.
template <entry_storage_type T>
kernel_error apply_rope_threaded(std::size_t threads, const rope_table& table,
                                 tensor_view<const T> in, tensor_view<T> out, token_positions pos) {
  return kernels::detail::rope_threaded<T>(
      threads, table, in, out, pos,
      [](const rope_table& t, tensor_view<const T> i, tensor_view<T> o, token_positions p) {
        return dispatch::apply_rope(t, i, o, p);
      });
}

// In place.
template <entry_storage_type T>
kernel_error apply_rope_threaded(std::size_t threads, const rope_table& table, tensor_view<T> x,
                                 token_positions pos) {
  return apply_rope_threaded<T>(threads, table, tensor_view<const T>(x), x, pos);
}

// dispatch::apply_rope_qk split over `threads` threads.
template <entry_storage_type T>
kernel_error apply_rope_qk_threaded(std::size_t threads, const rope_table& table,
                                    tensor_view<const T> q_in, tensor_view<T> q_out,
                                    tensor_view<const T> k_in, tensor_view<T> k_out,
                                    token_positions pos) {
  return kernels::detail::rope_qk_threaded<T>(
      threads, table, q_in, q_out, k_in, k_out, pos,
      [](const rope_table& t, tensor_view<const T> qi, tensor_view<T> qo, tensor_view<const T> ki,
         tensor_view<T> ko,
         token_positions p) { return dispatch::apply_rope_qk(t, qi, qo, ki, ko, p); });
}

}  // namespace dispatch

}  // namespace posenc::kernels
