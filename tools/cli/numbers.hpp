// Strict number parsing for flags and list values: the whole text must be the number (no
// whitespace, no sign on unsigned values, no trailing characters), in range, and finite.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace posenc::cli {

// A decimal unsigned integer in [min, max]; nullopt otherwise.
std::optional<std::uint64_t> parse_uint(std::string_view text, std::uint64_t min,
                                        std::uint64_t max);

// A finite decimal floating-point number (as std::from_chars reads it: optional '-', digits, '.',
// exponent); nullopt for anything else, including nan, inf and values out of double's range.
std::optional<double> parse_double(std::string_view text);

// Comma-separated finite numbers ("1,1.5,2"), at least one; nullopt if any element is not one.
std::optional<std::vector<double>> parse_double_list(std::string_view text);

}  // namespace posenc::cli
