// What the owning run-time tables share (runtime_rope_cache, runtime_sinusoidal_table,
// make_alibi_slopes): their size in entries, and `make`, which is try_make throwing the broken
// rule's message. Internal to the tables layer.
#pragma once

#include <cstddef>
#include <limits>
#if defined(__cpp_exceptions)
#include <stdexcept>
#endif

namespace posenc::tables_detail {

// rows * width entries (width > 0), or the largest std::size_t when that overflows: std::vector
// rejects such a size with std::length_error rather than allocating a truncated one.
constexpr std::size_t entry_count(std::size_t rows, std::size_t width) {
  return rows > std::numeric_limits<std::size_t>::max() / width
             ? std::numeric_limits<std::size_t>::max()
             : rows * width;
}

#if defined(__cpp_exceptions)
// Throws std::invalid_argument(message(e)) unless e is the encoding's `ok`.
template <class Error>
void throw_if_broken(Error e) {
  if (e != Error::ok) throw std::invalid_argument(message(e));
}
#endif

}  // namespace posenc::tables_detail
