// Reading the reference files of tests/golden (README.md there lists them). The interop tests
// depend on these numbers, so a file that is missing, unreadable or not JSON is an error that
// names the file: a comparison is never dropped or reported as skipped for want of its data.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace posenc_test::golden {

// The golden directory, from the environment variable POSENC_GOLDEN_DIR (meson sets it to the
// source tree's tests/golden; tests/golden/meson.build points it at a damaged copy to check that
// the readers fail).
inline std::filesystem::path dir() {
  const char* d = std::getenv("POSENC_GOLDEN_DIR");
  if (d == nullptr || *d == '\0')
    throw std::runtime_error(
        "POSENC_GOLDEN_DIR is not set: it must name the golden data directory (tests/golden)");
  return std::filesystem::path(d);
}

// POSENC_GOLDEN_DIR/name.
inline std::filesystem::path path(std::string_view name) {
  return dir() / name;
}

// The file parsed as JSON. Json is nlohmann::json or another basic_json (the ggml angles are
// parsed with long double numbers). Throws std::runtime_error naming the file when it cannot be
// opened or does not parse.
template <class Json = nlohmann::json>
Json parse_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("golden file " + file.string() + " is missing or unreadable");
  try {
    return Json::parse(in);
  } catch (const std::exception& e) {
    throw std::runtime_error("golden file " + file.string() +
                             " could not be read as JSON: " + e.what());
  }
}

// parse_file(path(name)).
template <class Json = nlohmann::json>
Json load(std::string_view name) {
  return parse_file<Json>(path(name));
}

// The failures of a golden reader: fail() prints "FAIL what" and counts it; failures() is the
// count, from which the reader's exit status follows.
inline int& failures() {
  static int count = 0;
  return count;
}
inline void fail(const std::string& what) {
  std::printf("FAIL %s\n", what.c_str());
  ++failures();
}

}  // namespace posenc_test::golden
