// What the fuzz harnesses share. Each harness defines LLVMFuzzerTestOneInput; it is linked either
// with libFuzzer (scripts/fuzz: clang, -fsanitize=fuzzer) or with driver.cpp, which feeds it the
// files of the seed corpus and of regressions/ (the 'fuzz' suite of every build).
//
// A harness returns normally for every input, valid or not; what it treats as a finding it reports
// with finding(), which aborts (libFuzzer then saves the input as crash-*).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace posenc_fuzz {

[[noreturn]] inline void finding(const char* what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what);
  std::abort();
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Reads fixed-size values from the front of the input; zeros once it runs out, so that every
// input, however short, decodes to something.
class byte_reader {
 public:
  byte_reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  template <class T>
  T take() {
    T v{};
    const std::size_t n = size_ < sizeof v ? size_ : sizeof v;
    if (n > 0) std::memcpy(&v, data_, n);
    data_ += n;
    size_ -= n;
    return v;
  }
  std::size_t left() const { return size_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
};

}  // namespace posenc_fuzz
