// The tool's input files (config.json, apply's tensor file): read with a size limit, so that a
// wrong path or a huge file gives one clear line instead of an exhausted machine; and parsed as a
// JSON object, every problem one line naming the file.
#pragma once

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <istream>
#include <streambuf>
#include <string>
#include <string_view>
#include <utility>

#include "cli/error.hpp"

namespace posenc::cli {

// A JSON input file, read through a byte limit: a regular file larger than max_bytes is refused
// by its size before any reading; anything else (a pipe, a device) is refused once it has
// delivered more than max_bytes. The parser reads from it as the bytes arrive, so text that is not
// JSON (/dev/zero, /dev/urandom) fails at its first bad byte, and the file is never held whole in
// memory next to its parsed form. invalid() (exit 1) when it cannot be opened; `limit_text` names
// the limit in messages, e.g. "16 MiB".
class input_file : public std::streambuf {
 public:
  input_file(const std::string& path, std::size_t max_bytes, std::string limit_text)
      : shown_(printable(path)), max_(max_bytes), limit_text_(std::move(limit_text)) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        static_cast<std::uint64_t>(st.st_size) > max_)
      too_large();
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      invalid("posenc: cannot read " + shown_ + " (a directory)");
    in_.open(path, std::ios::binary);
    if (!in_) invalid("posenc: cannot open " + shown_);
  }
  const std::string& shown() const { return shown_; }
  // After a parse error: the error that ended the input, if any (over the limit, a read error).
  void check_input() const {
    if (over_) too_large();
    if (in_.bad()) invalid("posenc: cannot read " + shown_);
  }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (over_) return traits_type::eof();
    in_.read(buf_, sizeof buf_);
    const auto n = static_cast<std::size_t>(in_.gcount());
    if (n == 0) return traits_type::eof();
    total_ += n;
    if (total_ > max_) {
      over_ = true;
      return traits_type::eof();
    }
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  [[noreturn]] void too_large() const {
    invalid("posenc: " + shown_ + " is larger than " + limit_text_);
  }
  std::string shown_;
  std::size_t max_;
  std::string limit_text_;
  std::ifstream in_;
  std::size_t total_ = 0;
  bool over_ = false;
  char buf_[65536];
};

// The JSON object of `input` (text, or an input_file's stream); `source` names the file in
// messages (already printable). `check` sees every parse event (nlohmann's parser callback) and
// may reject the input with invalid(). Throws cli_error (exit 1) for text that is not JSON, a
// number out of range, a top level that is not an object, and an input_file's own errors.
template <class Input>
nlohmann::json parse_json_object(Input&& input, const std::string& source,
                                 const nlohmann::json::parser_callback_t& check,
                                 const input_file* file = nullptr) {
  using json = nlohmann::json;
  json root;
  try {
    root = json::parse(std::forward<Input>(input), check);
  } catch (const json::parse_error& e) {
    if (file != nullptr) file->check_input();
    invalid("posenc: " + source + ": not valid JSON (at byte " + std::to_string(e.byte) + ")");
  } catch (const json::out_of_range&) {
    invalid("posenc: " + source + ": a number is out of range");
  }
  if (file != nullptr) file->check_input();
  if (!root.is_object()) invalid("posenc: " + source + ": the top level is not a JSON object");
  return root;
}

// parse_json_object over the file `path` (input_file's limit).
inline nlohmann::json parse_json_file(const std::string& path, std::size_t max_bytes,
                                      const std::string& limit_text,
                                      const nlohmann::json::parser_callback_t& check) {
  input_file file(path, max_bytes, limit_text);
  std::istream in(&file);
  return parse_json_object(in, file.shown(), check, &file);
}

}  // namespace posenc::cli
