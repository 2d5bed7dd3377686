// The golden data file `name` of POSENC_GOLDEN_DIR (tests/golden), parsed; a missing variable,
// file or malformed JSON fails the test (never skips). For the tests/tools programs that read it.
#pragma once

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

namespace posenc_test {

inline nlohmann::json golden_json(const std::string& name) {
  const char* dir = std::getenv("POSENC_GOLDEN_DIR");
  REQUIRE(dir != nullptr);
  const std::string path = std::string(dir) + "/" + name;
  std::ifstream in(path);
  INFO("golden file: " << path);
  REQUIRE(in.good());
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    FAIL("golden file " << path << " is not JSON: " << e.what());
  }
  return {};
}

}  // namespace posenc_test
