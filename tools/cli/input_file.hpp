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
    invalid("posenc: " + shown_ + " is larger than " + limit_text_ +
            "; raise the limit with --max-input-bytes N");
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

// A byte limit in messages: "16 MiB" for `default_bytes` (its text), else "N bytes".
inline std::string byte_limit_text(std::uint64_t bytes, std::uint64_t default_bytes,
                                   std::string_view default_text) {
  return bytes == default_bytes ? std::string(default_text) : std::to_string(bytes) + " bytes";
}

// nlohmann's SAX parser over `input` (text, or an input_file's stream) with `handler`, which
// builds only what it keeps and may reject the input with invalid() at any event; nothing else
// of the document is held in memory. Throws cli_error (exit 1) for text that is not JSON, a
// number out of range (nlohmann reports both through Handler::parse_error, which this wraps),
// and an input_file's own errors. `source` names the file (already printable).
template <class Input, class Handler>
void sax_parse_json(Input&& input, const std::string& source, Handler& handler,
                    const input_file* file = nullptr) {
  // Forwards the events to `handler` and records nlohmann's parse error (its byte, and whether
  // it is a number out of range), so that the message is the one parse_json_object gives.
  struct recorder {
    Handler& h;
    std::size_t byte = 0;
    bool out_of_range = false;
    bool failed = false;
    using number_integer_t = nlohmann::json::number_integer_t;
    using number_unsigned_t = nlohmann::json::number_unsigned_t;
    using number_float_t = nlohmann::json::number_float_t;
    using string_t = nlohmann::json::string_t;
    using binary_t = nlohmann::json::binary_t;
    bool null() { return h.null(); }
    bool boolean(bool v) { return h.boolean(v); }
    bool number_integer(number_integer_t v) { return h.number_integer(v); }
    bool number_unsigned(number_unsigned_t v) { return h.number_unsigned(v); }
    bool number_float(number_float_t v, const string_t& s) { return h.number_float(v, s); }
    bool string(string_t& v) { return h.string(v); }
    bool binary(binary_t&) { return false; }  // binary formats only, never JSON text
    bool start_object(std::size_t n) { return h.start_object(n); }
    bool key(string_t& k) { return h.key(k); }
    bool end_object() { return h.end_object(); }
    bool start_array(std::size_t n) { return h.start_array(n); }
    bool end_array() { return h.end_array(); }
    bool parse_error(std::size_t position, const std::string&,
                     const nlohmann::detail::exception& e) {
      failed = true;
      byte = position;
      out_of_range = dynamic_cast<const nlohmann::json::out_of_range*>(&e) != nullptr;
      return false;
    }
  };
  recorder r{handler};
  nlohmann::json::sax_parse(std::forward<Input>(input), &r);
  if (file != nullptr) file->check_input();
  if (r.out_of_range) invalid("posenc: " + source + ": a number is out of range");
  if (r.failed)
    invalid("posenc: " + source + ": not valid JSON (at byte " + std::to_string(r.byte) + ")");
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
