// NumPy .npy files: `posenc apply`'s tensors and position ids, read and written.
//
// The format, as numpy/lib/format.py (numpy's own description of it) defines it: the magic
// "\x93NUMPY", a major and a minor version byte, the header length (little-endian uint16 in
// version 1.0, uint32 in 2.0), the header (an ASCII Python dict literal with exactly the keys
// 'descr', 'fortran_order' and 'shape', padded with spaces and ended by '\n'), then the data.
// Read here: versions 1.0 and 2.0, C order, little-endian float32 ('<f4') and float16 ('<f2')
// tensors, int32 ('<i4') and int64 ('<i8') position ids; anything else is one line naming the
// file and what was found (exit 1). Reads are bounded: a header of at most max_npy_header_bytes,
// at most max_elements elements (their count checked before any data is read, the product of
// the dimensions without overflow), and the data exactly: a truncated file or bytes after the
// data are errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include <posenc/kernels/storage.hpp>

namespace posenc::cli {

// numpy's reader refuses headers over 10000 bytes by default (`max_header_size`,
// numpy/lib/format.py); so does this one. The tool writes about 128.
inline constexpr std::size_t max_npy_header_bytes = 10000;

enum class npy_dtype : std::uint8_t { f32, f16, i32, i64 };

// '<f4', '<f2', '<i4', '<i8'.
std::string_view npy_descr(npy_dtype t);
// "float32", "float16", "int32", "int64".
std::string_view npy_dtype_name(npy_dtype t);

struct npy_array {
  npy_dtype dtype = npy_dtype::f32;
  std::vector<std::uint64_t> shape;  // () for a scalar
  std::vector<float> f32_data;       // dtype f32
  std::vector<f16> f16_data;         // dtype f16
  std::vector<std::int64_t> ids;     // dtype i32 or i64, widened
  std::uint64_t elements = 1;        // the product of shape
};

// Whether `head` (at least 6 bytes of a file's start) is the .npy magic.
bool is_npy_magic(std::string_view head);

// Reads one .npy array from `in`, which must hold it and nothing more. `source` names the file in
// messages (already printable). `accepted` are the dtypes the caller takes; max_elements bounds
// the element count. Throws cli_error (exit 1) with a one-line message on the first problem.
npy_array read_npy(std::streambuf& in, const std::string& source,
                   std::span<const npy_dtype> accepted, std::uint64_t max_elements);

// The bytes of a .npy file (version 1.0, C order, little-endian) holding `data` (the elements of
// `t`'s size, little-endian, shape's product of them). The header is padded so that the data
// starts at a multiple of 64 bytes, as numpy writes it.
std::string npy_file_bytes(npy_dtype t, std::span<const std::uint64_t> shape, const void* data);

}  // namespace posenc::cli
