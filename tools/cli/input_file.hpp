// Reading an input file (config.json, apply's tensor file) whole, with a size limit, so that a
// wrong path or a huge file gives one clear line instead of an exhausted machine.
#pragma once

#include <cstddef>
#include <fstream>
#include <string>

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

}  // namespace posenc::cli
