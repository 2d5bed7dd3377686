// Fuzz harness: the .npy reader of `posenc apply` (tools/cli/npy.hpp), on every dtype it knows,
// then the writer on what it read and the reader again. Expected outcomes: an array, or cli_error.
// A finding: any other exception, a sanitizer report, an array whose element count is not the
// product of its shape or whose data is not that many elements of its dtype (and nothing of the
// others), or a write-then-read that does not give back the same dtype, shape and bits.
#include <cstring>
#include <sstream>
#include <string>

#include "cli/error.hpp"
#include "cli/npy.hpp"
#include "fuzz.hpp"

namespace {
// Keeps one input's memory and work small: the element limit the reader checks before reading.
constexpr std::uint64_t max_elements = 4096;
constexpr posenc::cli::npy_dtype all_dtypes[] = {
    posenc::cli::npy_dtype::f32, posenc::cli::npy_dtype::f16, posenc::cli::npy_dtype::i32,
    posenc::cli::npy_dtype::i64};

posenc::cli::npy_array read(const std::string& bytes) {
  std::stringbuf in(bytes, std::ios::in);
  return posenc::cli::read_npy(in, "input.npy", all_dtypes, max_elements);
}

std::size_t data_size(const posenc::cli::npy_array& a) {
  return a.f32_data.size() + a.f16_data.size() + a.ids.size();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace posenc::cli;
  npy_array a;
  try {
    a = read(std::string(posenc_fuzz::as_text(data, size)));
  } catch (const cli_error&) {
    return 0;  // the expected rejection of invalid input
  }
  // The product of the shape, exactly: 0 with a zero dimension, else over the limit or not.
  bool zero = false, over = false;
  for (const std::uint64_t d : a.shape) zero = zero || d == 0;
  std::uint64_t product = 1;
  for (const std::uint64_t d : a.shape) {
    if (zero || over) break;
    if (product > max_elements / d) over = true;
    product *= d;
  }
  if (zero) product = 0;
  if (over) posenc_fuzz::finding("a shape over the element limit was accepted");
  if (product != a.elements)
    posenc_fuzz::finding("the element count is not the product of the shape");
  const std::size_t n = a.dtype == npy_dtype::f32   ? a.f32_data.size()
                        : a.dtype == npy_dtype::f16 ? a.f16_data.size()
                                                    : a.ids.size();
  if (n != a.elements || data_size(a) != n)
    posenc_fuzz::finding("the data is not elements values of the dtype");
  // The writer takes float32, float16 and int64 data; int32 ids are held widened.
  if (a.dtype == npy_dtype::i32) return 0;
  const void* p = a.dtype == npy_dtype::f32   ? static_cast<const void*>(a.f32_data.data())
                  : a.dtype == npy_dtype::f16 ? static_cast<const void*>(a.f16_data.data())
                                              : static_cast<const void*>(a.ids.data());
  npy_array b;
  try {
    b = read(npy_file_bytes(a.dtype, a.shape, p));
  } catch (const cli_error&) {
    posenc_fuzz::finding("the writer's file was refused by the reader");
  }
  // memcmp only on non-empty data (an empty vector's data() may be null).
  const auto same = [](const auto& x, const auto& y) {
    return x.size() == y.size() &&
           (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof x[0]) == 0);
  };
  const bool same_bits =
      same(a.f32_data, b.f32_data) && same(a.f16_data, b.f16_data) && same(a.ids, b.ids);
  if (b.dtype != a.dtype || b.shape != a.shape || data_size(b) != data_size(a) || !same_bits)
    posenc_fuzz::finding("write then read changed the array");
  return 0;
}
