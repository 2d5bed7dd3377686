#include "cli/npy.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <optional>

#include "cli/error.hpp"

namespace posenc::cli {

namespace {

constexpr std::string_view magic = "\x93NUMPY";
constexpr std::size_t alignment = 64;  // numpy/lib/format.py ARRAY_ALIGN

std::size_t item_size(npy_dtype t) {
  switch (t) {
    case npy_dtype::f16:
      return 2;
    case npy_dtype::f32:
    case npy_dtype::i32:
      return 4;
    case npy_dtype::i64:
      return 8;
  }
  return 4;
}

// Exactly n bytes from `in`, or how many there were.
std::size_t read_bytes(std::streambuf& in, char* out, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    const std::streamsize chunk =
        static_cast<std::streamsize>(std::min<std::size_t>(n - got, 1 << 20));
    const std::streamsize r = in.sgetn(out + got, chunk);
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

std::uint64_t little_endian(const unsigned char* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

// The header's dict literal, as numpy writes it (repr of a dict: keys and strings in single or
// double quotes, True/False, a tuple of non-negative integers), with Python's optional spaces
// and trailing commas. Nothing else of Python's syntax is accepted.
class header_parser {
 public:
  header_parser(std::string_view text, const std::string& source) : s_(text), source_(source) {}

  struct fields {
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<std::vector<std::uint64_t>> shape;
  };

  fields parse() {
    fields f;
    expect('{');
    while (true) {
      skip_spaces();
      if (peek() == '}') break;
      const std::string key = string_literal("a key");
      expect(':');
      skip_spaces();
      if (key == "descr") {
        if (f.descr) bad("the key 'descr' appears twice");
        if (peek() == '[') bad("structured arrays (a list descr) are not supported");
        f.descr = string_literal("the descr string");
      } else if (key == "fortran_order") {
        if (f.fortran_order) bad("the key 'fortran_order' appears twice");
        f.fortran_order = boolean();
      } else if (key == "shape") {
        if (f.shape) bad("the key 'shape' appears twice");
        f.shape = tuple();
      } else {
        bad("unknown key '" + printable(key) + "' (descr, fortran_order, shape)");
      }
      skip_spaces();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() != '}') bad("expected ',' or '}' at byte " + std::to_string(i_));
    }
    ++i_;
    skip_spaces();
    // numpy ends the header with '\n' (the spaces before it are padding).
    if (i_ + 1 != s_.size() || s_[i_] != '\n') bad("the header does not end with a newline");
    if (!f.descr || !f.fortran_order || !f.shape)
      bad("missing 'descr', 'fortran_order' or 'shape'");
    return f;
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    invalid("posenc: " + source_ + ": bad .npy header: " + what);
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_spaces() {
    while (i_ < s_.size() && s_[i_] == ' ') ++i_;
  }
  void expect(char c) {
    skip_spaces();
    if (peek() != c) bad(std::string("expected '") + c + "' at byte " + std::to_string(i_));
    ++i_;
  }
  std::string string_literal(const char* what) {
    skip_spaces();
    const char q = peek();
    if (q != '\'' && q != '"')
      bad(std::string("expected ") + what + " at byte " + std::to_string(i_));
    const std::size_t end = s_.find(q, i_ + 1);
    if (end == std::string_view::npos) bad("an unterminated string");
    std::string out(s_.substr(i_ + 1, end - i_ - 1));
    if (out.find('\\') != std::string::npos) bad("escapes in strings are not supported");
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    if (s_.substr(i_, 4) == "True") {
      i_ += 4;
      return true;
    }
    if (s_.substr(i_, 5) == "False") {
      i_ += 5;
      return false;
    }
    bad("'fortran_order' must be True or False");
  }
  // (), (n,), (a, b, ...): at most 32 dimensions (numpy's NPY_MAXDIMS), each below 2^63.
  std::vector<std::uint64_t> tuple() {
    if (peek() != '(') bad("'shape' must be a tuple of integers");
    ++i_;
    std::vector<std::uint64_t> dims;
    bool comma = false;  // the last thing before ')' was a comma
    while (true) {
      skip_spaces();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') bad("'shape' must be a tuple of non-negative integers");
      std::uint64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        const auto digit = static_cast<std::uint64_t>(peek() - '0');
        if (v > ((std::uint64_t{1} << 63) - 1 - digit) / 10) bad("a dimension of 2^63 or more");
        v = v * 10 + digit;
        ++i_;
      }
      if (dims.size() == 32) bad("more than 32 dimensions");
      dims.push_back(v);
      comma = false;
      skip_spaces();
      if (peek() == ',') {
        ++i_;
        comma = true;
        continue;
      }
      if (peek() != ')') bad("'shape' must be a tuple of non-negative integers");
    }
    // Python's one-element tuple needs its comma: (3) is the integer 3.
    if (dims.size() == 1 && !comma) bad("'shape' must be a tuple ((n,) for one dimension)");
    ++i_;
    return dims;
  }

  std::string_view s_;
  const std::string& source_;
  std::size_t i_ = 0;
};

// The dtype of a descr, or the error naming it.
npy_dtype dtype_of(const std::string& descr, const std::string& source,
                   std::span<const npy_dtype> accepted) {
  std::string wanted;
  for (const npy_dtype t : accepted) {
    if (!wanted.empty()) wanted += ", ";
    wanted += std::string(npy_dtype_name(t)) + " '" + std::string(npy_descr(t)) + "'";
  }
  const std::string shown = printable(descr);
  for (const npy_dtype t : accepted)
    if (descr == npy_descr(t)) return t;
  if (!descr.empty() && descr[0] == '>')
    invalid("posenc: " + source + ": big-endian data ('" + shown +
            "') is not supported; save it little-endian (" + wanted + ")");
  if (descr.size() >= 2 && descr[1] == 'O')
    invalid("posenc: " + source + ": object arrays ('" + shown + "') are not supported (" + wanted +
            ")");
  invalid("posenc: " + source + ": dtype '" + shown + "' is not supported (" + wanted + ")");
}

}  // namespace

std::string_view npy_descr(npy_dtype t) {
  switch (t) {
    case npy_dtype::f32:
      return "<f4";
    case npy_dtype::f16:
      return "<f2";
    case npy_dtype::i32:
      return "<i4";
    case npy_dtype::i64:
      return "<i8";
  }
  return "";
}

std::string_view npy_dtype_name(npy_dtype t) {
  switch (t) {
    case npy_dtype::f32:
      return "float32";
    case npy_dtype::f16:
      return "float16";
    case npy_dtype::i32:
      return "int32";
    case npy_dtype::i64:
      return "int64";
  }
  return "";
}

bool is_npy_magic(std::string_view head) {
  return head.substr(0, magic.size()) == magic;
}

npy_array read_npy(std::streambuf& in, const std::string& source,
                   std::span<const npy_dtype> accepted, std::uint64_t max_elements) {
  // Magic, version, header length.
  std::array<unsigned char, 12> pre{};
  const std::size_t got = read_bytes(in, reinterpret_cast<char*>(pre.data()), 8);
  if (got < 8 || !is_npy_magic({reinterpret_cast<const char*>(pre.data()), got}))
    invalid("posenc: " + source + ": not a .npy file (no \\x93NUMPY magic)");
  const unsigned major = pre[6], minor = pre[7];
  if ((major != 1 && major != 2) || minor != 0)
    invalid("posenc: " + source + ": .npy format version " + std::to_string(major) + "." +
            std::to_string(minor) + " is not supported (1.0, 2.0)");
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (read_bytes(in, reinterpret_cast<char*>(pre.data() + 8), len_bytes) != len_bytes)
    invalid("posenc: " + source + ": truncated .npy header");
  const std::uint64_t header_len = little_endian(pre.data() + 8, len_bytes);
  if (header_len > max_npy_header_bytes)
    invalid("posenc: " + source + ": the .npy header has " + std::to_string(header_len) +
            " bytes; at most " + std::to_string(max_npy_header_bytes));
  std::string header(static_cast<std::size_t>(header_len), '\0');
  if (read_bytes(in, header.data(), header.size()) != header.size())
    invalid("posenc: " + source + ": truncated .npy header");
  for (const char c : header)
    if (static_cast<unsigned char>(c) >= 0x80 || (c < 0x20 && c != '\n'))
      invalid("posenc: " + source + ": bad .npy header: not printable ASCII");

  const header_parser::fields f = header_parser(header, source).parse();
  npy_array a;
  a.dtype = dtype_of(*f.descr, source, accepted);
  if (*f.fortran_order)
    invalid("posenc: " + source +
            ": Fortran-order arrays are not supported; save np.ascontiguousarray(x)");
  a.shape = *f.shape;
  a.elements = 1;
  bool over = false;
  for (const std::uint64_t d : a.shape) {
    if (d != 0 && a.elements > max_elements / d) over = true;
    a.elements = over ? 0 : a.elements * d;
  }
  // A zero dimension makes the product 0 whatever the others are; over the limit is decided
  // without it.
  if (std::find(a.shape.begin(), a.shape.end(), 0) != a.shape.end()) {
    a.elements = 0;
    over = false;
  }
  if (over || a.elements > max_elements)
    invalid("posenc: " + source + ": more than " + std::to_string(max_elements) +
            " elements; raise the limit with --max-elements N");

  // The data: exactly elements * item_size bytes, read straight into its vector.
  const std::size_t size = item_size(a.dtype);
  const auto n = static_cast<std::size_t>(a.elements);
  const std::size_t bytes = n * size;
  std::size_t read = 0;
  const auto truncated = [&] {
    invalid("posenc: " + source + ": truncated: " + std::to_string(read) + " of the " +
            std::to_string(bytes) + " data bytes its shape needs");
  };
  switch (a.dtype) {
    case npy_dtype::f32: {
      a.f32_data.resize(n);
      read = read_bytes(in, reinterpret_cast<char*>(a.f32_data.data()), bytes);
      if (read != bytes) truncated();
      for (float& v : a.f32_data) {
        unsigned char b[4];
        std::memcpy(b, &v, 4);
        const auto u = static_cast<std::uint32_t>(little_endian(b, 4));
        std::memcpy(&v, &u, 4);
      }
      break;
    }
    case npy_dtype::f16: {
      a.f16_data.resize(n);
      read = read_bytes(in, reinterpret_cast<char*>(a.f16_data.data()), bytes);
      if (read != bytes) truncated();
      for (f16& v : a.f16_data) {
        unsigned char b[2];
        std::memcpy(b, &v.bits, 2);
        v.bits = static_cast<std::uint16_t>(little_endian(b, 2));
      }
      break;
    }
    case npy_dtype::i32:
    case npy_dtype::i64: {
      a.ids.resize(n);
      std::vector<unsigned char> chunk(std::size_t{1} << 16);
      for (std::size_t i = 0; i < n;) {
        const std::size_t k = std::min(n - i, chunk.size() / size);
        const std::size_t r = read_bytes(in, reinterpret_cast<char*>(chunk.data()), k * size);
        read += r;
        if (r != k * size) truncated();
        for (std::size_t j = 0; j < k; ++j) {
          const std::uint64_t u = little_endian(chunk.data() + j * size, size);
          a.ids[i + j] = size == 4 ? static_cast<std::int64_t>(
                                         static_cast<std::int32_t>(static_cast<std::uint32_t>(u)))
                                   : static_cast<std::int64_t>(u);
        }
        i += k;
      }
      break;
    }
  }
  char extra;
  if (read_bytes(in, &extra, 1) != 0)
    invalid("posenc: " + source + ": bytes after the data its shape needs");
  return a;
}

std::string npy_file_bytes(npy_dtype t, std::span<const std::uint64_t> shape, const void* data) {
  std::string dict =
      "{'descr': '" + std::string(npy_descr(t)) + "', 'fortran_order': False, 'shape': (";
  std::uint64_t elements = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) dict += ", ";
    dict += std::to_string(shape[i]);
    elements *= shape[i];
  }
  if (shape.size() == 1) dict += ',';
  dict += "), }";
  // magic (6) + version (2) + length (2) + dict + spaces + '\n', a multiple of 64 in all.
  const std::size_t unpadded = magic.size() + 4 + dict.size() + 1;
  const std::size_t padded = (unpadded + alignment - 1) / alignment * alignment;
  dict.append(padded - unpadded, ' ');
  dict += '\n';
  std::string out;
  const std::size_t size = item_size(t);
  out.reserve(padded + static_cast<std::size_t>(elements) * size);
  out += magic;
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  out += dict;
  // Little-endian whatever the host: byte k of each element is bits 8k..8k+7 of its value.
  const auto* p = static_cast<const unsigned char*>(data);
  const std::size_t count = static_cast<std::size_t>(elements);
  if (count == 0) return out;  // `data` may be null then
  if constexpr (std::endian::native == std::endian::little) {
    out.append(reinterpret_cast<const char*>(p), count * size);
  } else {
    for (std::size_t i = 0; i < count; ++i)
      for (std::size_t k = size; k-- > 0;) out += static_cast<char>(p[i * size + k]);
  }
  return out;
}

}  // namespace posenc::cli
