// The tool's input files (config.json, apply's tensor file): read whole, with a size limit, so
// that a wrong path or a huge file gives one clear line instead of an exhausted machine; and
// parsed as a JSON object, every problem one line naming the file.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <fstream>
#include <string>
#include <string_view>

#include "cli/error.hpp"

namespace posenc::cli {

// The contents of `path`; invalid() (exit 1) if it cannot be opened or read, or once it exceeds
// max_bytes (`limit_text` names that limit in the message, e.g. "16 MiB").
inline std::string read_input_file(const std::string& path, std::size_t max_bytes,
                                   const std::string& limit_text) {
  const std::string shown = printable(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) invalid("posenc: cannot open " + shown);
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) invalid("posenc: " + shown + " is larger than " + limit_text);
  }
  if (in.bad()) invalid("posenc: cannot read " + shown);
  return text;
}

// The JSON object `text`; `source` names the file in messages (already printable). `check` sees
// every parse event (nlohmann's parser callback) and may reject the input with invalid(). Throws
// cli_error (exit 1) for text that is not JSON, a number out of range and a top level that is
// not an object.
inline nlohmann::json parse_json_object(std::string_view text, const std::string& source,
                                        const nlohmann::json::parser_callback_t& check) {
  using json = nlohmann::json;
  json root;
  try {
    root = json::parse(text.begin(), text.end(), check);
  } catch (const json::parse_error& e) {
    invalid("posenc: " + source + ": not valid JSON (at byte " + std::to_string(e.byte) + ")");
  } catch (const json::out_of_range&) {
    invalid("posenc: " + source + ": a number is out of range");
  }
  if (!root.is_object()) invalid("posenc: " + source + ": the top level is not a JSON object");
  return root;
}

}  // namespace posenc::cli
