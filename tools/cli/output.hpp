// Writing the results as JSON, CSV or aligned text. Floats are printed with 9 significant digits
// and doubles with 17, which read back to the same bits (std::to_chars, so the C locale does not
// matter).
//   freqs  json  {"rotary_dim": R, "inv_freq": [...], "inv_freq_f64": [...], "attention_factor": x}
//          csv   i,inv_freq,inv_freq_f64
//   table  json  {"positions": [...], "cos": [[per pair] per position], "sin": [[...]]}
//          csv   position,pair,cos,sin
//   text   aligned columns with a header line.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "cli/compute.hpp"
#include "cli/options.hpp"

namespace posenc::cli {

// "%.9g" and "%.17g" without locale.
std::string format_float(float x);
std::string format_double(double x);
// "%.9g" for text summaries.
std::string short_double(double x);

const char* json_bool(bool b);

// A configuration in a few words, for plot titles: "R = 64, base 10000, yarn x4".
std::string config_title(const rope_config& c);

// `s` right- or left-aligned in `width` columns.
std::string pad_left(std::string s, std::size_t width);
std::string pad_right(std::string s, std::size_t width);

void write_freqs(std::ostream& out, const freqs_result& r, output_format f);
void write_table(std::ostream& out, const table_result& r, output_format f);

}  // namespace posenc::cli
