#include "cli/numbers.hpp"

#include <charconv>
#include <cmath>
#include <system_error>

namespace posenc::cli {

std::optional<std::uint64_t> parse_uint(std::string_view text, std::uint64_t min,
                                        std::uint64_t max) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  std::uint64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v, 10);
  if (ec != std::errc{} || ptr != end || v < min || v > max) return std::nullopt;
  return v;
}

std::optional<double> parse_double(std::string_view text) {
  // from_chars takes no leading '+' or whitespace; it does take "inf" and "nan", rejected below.
  if (text.empty()) return std::nullopt;
  double v = 0.0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v, std::chars_format::general);
  if (ec != std::errc{} || ptr != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::vector<double>> parse_double_list(std::string_view text) {
  std::vector<double> out;
  while (true) {
    const std::size_t comma = text.find(',');
    const auto v = parse_double(text.substr(0, comma));
    if (!v) return std::nullopt;
    out.push_back(*v);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace posenc::cli
