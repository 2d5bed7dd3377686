#include "cli/output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string_view>

#include "cli/error.hpp"

namespace posenc::cli {

namespace {
template <class T>
std::string_view to_text(char (&buf)[40], T x, int digits) {
  const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::general, digits);
  return {buf, static_cast<std::size_t>(res.ptr - buf)};
}

// Appends to a string and hands it to the stream in large pieces.
class writer {
 public:
  explicit writer(std::ostream& out) : out_(out) { buf_.reserve(limit + 256); }
  // A write that fails here has set the stream's state, which run() reports; a destructor must
  // not throw.
  ~writer() {
    try {
      flush();
    } catch (...) {
    }
  }
  writer(const writer&) = delete;
  writer& operator=(const writer&) = delete;

  writer& operator<<(std::string_view s) {
    buf_.append(s);
    if (buf_.size() >= limit) flush();
    return *this;
  }
  writer& operator<<(char c) {
    buf_.push_back(c);
    return *this;
  }
  writer& operator<<(std::uint64_t v) {
    char b[24];
    const auto res = std::to_chars(b, b + sizeof b, v);
    return *this << std::string_view(b, static_cast<std::size_t>(res.ptr - b));
  }
  writer& f32(float x) {
    char b[40];
    return *this << to_text(b, x, 9);
  }
  writer& f64(double x) {
    char b[40];
    return *this << to_text(b, x, 17);
  }
  // `s` right-aligned in `width` columns.
  writer& right(std::string_view s, std::size_t width) {
    if (s.size() < width) buf_.append(width - s.size(), ' ');
    return *this << s;
  }
  writer& right(std::uint64_t v, std::size_t width) { return right(std::to_string(v), width); }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  static constexpr std::size_t limit = std::size_t{1} << 16;
  std::ostream& out_;
  std::string buf_;
};

// The files of the staged_files object that lives now (run() holds one), innermost first.
thread_local staged_files* current_staged = nullptr;

// "DIR/.NAME.posenc-XXXXXXXX": hidden, next to the target, so that rename() stays on one file
// system and replaces the target in one step.
std::string temp_name_for(const std::string& path, std::uint32_t salt) {
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%08x", salt);
  return dir + "." + base + ".posenc-" + suffix;
}

std::size_t digits(std::uint64_t v) {
  return std::to_string(v).size();
}

// A matrix row by row as nested JSON arrays.
void json_rows(writer& w, const std::vector<float>& m, std::size_t rows, std::size_t cols) {
  w << '[';
  for (std::size_t p = 0; p < rows; ++p) {
    w << (p == 0 ? "\n  [" : ",\n  [");
    for (std::size_t i = 0; i < cols; ++i) {
      if (i > 0) w << ", ";
      w.f32(m[p * cols + i]);
    }
    w << ']';
  }
  w << "\n]";
}
}  // namespace

std::string format_float(float x) {
  char b[40];
  return std::string(to_text(b, x, 9));
}
std::string format_double(double x) {
  char b[40];
  return std::string(to_text(b, x, 17));
}
std::string short_double(double x) {
  char b[40];
  return std::string(to_text(b, x, 9));
}

staged_files::staged_files() : outer_(current_staged) {
  current_staged = this;
}

staged_files::~staged_files() {
  for (const entry& e : files_) std::remove(e.temp.c_str());
  current_staged = outer_;
}

void staged_files::commit() {
  while (!files_.empty()) {
    const entry e = files_.front();
    files_.erase(files_.begin());
    if (std::rename(e.temp.c_str(), e.target.c_str()) != 0) {
      const int error = errno;
      std::remove(e.temp.c_str());
      invalid("posenc: cannot write " + printable(e.target) + " (" + std::strerror(error) + ")");
    }
  }
}

void write_output_file(const std::string& path, std::string_view text) {
  const std::string shown = printable(path);
  std::random_device seed;
  std::string temp;
  int fd = -1;
  // O_EXCL: never an existing file; mode 0666 less the umask, as the target would have had.
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    temp = temp_name_for(path, static_cast<std::uint32_t>(seed()));
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) invalid("posenc: cannot write " + shown + " (" + std::strerror(errno) + ")");
  const char* p = text.data();
  std::size_t left = text.size();
  int error = 0;
  while (left > 0 && error == 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno != EINTR) error = errno;
      continue;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    invalid("posenc: cannot write " + shown + " (" + std::strerror(error) + ")");
  }
  if (current_staged != nullptr) {
    current_staged->files_.push_back({temp, path});
    return;
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    error = errno;
    ::unlink(temp.c_str());
    invalid("posenc: cannot write " + shown + " (" + std::strerror(error) + ")");
  }
}

const char* json_bool(bool b) {
  return b ? "true" : "false";
}

std::string config_title(const rope_config& c) {
  std::string t = "R = " + std::to_string(c.rotary_dim) + ", base " + short_double(c.base);
  if (c.scaling.type != scaling_type::none)
    t += ", " + std::string(scaling_name(c.scaling.type)) + " x" + short_double(c.scaling.factor);
  return t;
}

std::string pad_left(std::string s, std::size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}
std::string pad_right(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

namespace {
std::string json_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += json_quote(items[i]);
  }
  return out + "]";
}
std::string key_line(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& k : keys) out += ' ' + printable(k);
  return out.empty() ? " (none)" : out;
}
}  // namespace

std::string echo_json(const config_echo& e) {
  std::string out = "{";
  for (const echo_entry& x : e.entries) {
    if (out.size() > 1) out += ", ";
    out += json_quote(x.name) + ": {\"value\": " + x.json +
           ", \"source\": " + json_quote(x.source) + "}";
  }
  if (!e.file.empty()) {
    if (out.size() > 1) out += ", ";
    out += "\"keys\": {\"source\": " + json_quote(e.file) +
           ", \"used\": " + json_list(e.keys_used) +
           ", \"not_used\": " + json_list(e.keys_not_used) + "}";
  }
  return out + "}";
}

std::string echo_header(const config_echo& e) {
  std::string out;
  for (const echo_entry& x : e.entries)
    out += "# " + x.name + " = " + x.text + " (" + x.source + ")\n";
  if (!e.file.empty()) {
    out += "# keys used (" + e.file + "):" + key_line(e.keys_used) + '\n';
    out += "# keys not used (" + e.file + "):" + key_line(e.keys_not_used) + '\n';
  }
  return out;
}

std::string echo_prefix(const config_echo& e, output_format f) {
  switch (f) {
    case output_format::csv:
      return echo_header(e);
    case output_format::text:
      return echo_header(e) + '\n';
    default:
      return {};
  }
}

void write_freqs(std::ostream& out, const freqs_result& r, output_format f,
                 const config_echo& echo) {
  writer w(out);
  w << echo_prefix(echo, f);
  const std::size_t n = r.inv_freq.size();
  switch (f) {
    case output_format::json:
      w << "{\"config\": " << echo_json(echo)
        << ",\n\"rotary_dim\": " << std::uint64_t{r.rotary_dim} << ", \"inv_freq\": [";
      for (std::size_t i = 0; i < n; ++i) {
        if (i > 0) w << ", ";
        w.f32(r.inv_freq[i]);
      }
      w << "], \"inv_freq_f64\": [";
      for (std::size_t i = 0; i < n; ++i) {
        if (i > 0) w << ", ";
        w.f64(r.inv_freq_f64[i]);
      }
      w << "], \"attention_factor\": ";
      w.f64(r.attention_factor) << "}\n";
      break;
    case output_format::csv:
      w << "i,inv_freq,inv_freq_f64\n";
      for (std::size_t i = 0; i < n; ++i) {
        w << std::uint64_t{i} << ',';
        w.f32(r.inv_freq[i]) << ',';
        w.f64(r.inv_freq_f64[i]) << '\n';
      }
      break;
    case output_format::text: {
      w << "rotary_dim        " << std::uint64_t{r.rotary_dim} << '\n';
      w << "attention_factor  ";
      w.f64(r.attention_factor) << "\n\n";
      const std::size_t wi = std::max<std::size_t>(4, digits(n == 0 ? 0 : n - 1));
      w.right("pair", wi) << "  ";
      w.right("inv_freq (float32)", 18) << "  ";
      w.right("inv_freq (float64)", 24) << '\n';
      for (std::size_t i = 0; i < n; ++i) {
        w.right(std::uint64_t{i}, wi) << "  ";
        w.right(format_float(r.inv_freq[i]), 18) << "  ";
        w.right(format_double(r.inv_freq_f64[i]), 24) << '\n';
      }
      break;
    }
  }
}

void write_table(std::ostream& out, const table_result& r, output_format f,
                 const config_echo& echo) {
  writer w(out);
  w << echo_prefix(echo, f);
  const std::uint64_t first = r.positions.first;
  const auto rows = static_cast<std::size_t>(r.positions.last - first);
  const std::size_t cols = r.pairs;
  switch (f) {
    case output_format::json:
      w << "{\"config\": " << echo_json(echo) << ",\n\"positions\": [";
      for (std::size_t p = 0; p < rows; ++p) {
        if (p > 0) w << ", ";
        w << first + p;
      }
      w << "],\n\"cos\": ";
      json_rows(w, r.cos, rows, cols);
      w << ",\n\"sin\": ";
      json_rows(w, r.sin, rows, cols);
      w << "}\n";
      break;
    case output_format::csv:
      w << "position,pair,cos,sin\n";
      for (std::size_t p = 0; p < rows; ++p) {
        for (std::size_t i = 0; i < cols; ++i) {
          w << first + p << ',' << std::uint64_t{i} << ',';
          w.f32(r.cos[p * cols + i]) << ',';
          w.f32(r.sin[p * cols + i]) << '\n';
        }
      }
      break;
    case output_format::text: {
      const std::size_t wp = std::max<std::size_t>(8, digits(r.positions.last - 1));
      const std::size_t wi = std::max<std::size_t>(4, digits(cols == 0 ? 0 : cols - 1));
      w.right("position", wp) << "  ";
      w.right("pair", wi) << "  ";
      w.right("cos", 16) << "  ";
      w.right("sin", 16) << '\n';
      for (std::size_t p = 0; p < rows; ++p) {
        for (std::size_t i = 0; i < cols; ++i) {
          w.right(first + p, wp) << "  ";
          w.right(std::uint64_t{i}, wi) << "  ";
          w.right(format_float(r.cos[p * cols + i]), 16) << "  ";
          w.right(format_float(r.sin[p * cols + i]), 16) << '\n';
        }
      }
      break;
    }
  }
}

}  // namespace posenc::cli
