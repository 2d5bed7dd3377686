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
#include <string_view>
#include <vector>

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

// Output files (--svg) are all or nothing: write_output_file writes to a new temporary file in the
// target's directory, and the file gets its name only when the command has succeeded, standard
// output included. While a staged_files object lives (run() holds one per command), the renames
// wait for its commit(); its destructor removes what was not committed. Outside one, the rename
// follows the write at once.
class staged_files {
 public:
  staged_files();
  ~staged_files();
  staged_files(const staged_files&) = delete;
  staged_files& operator=(const staged_files&) = delete;
  // Renames every staged file to its target. Throws cli_error (exit 1) if a rename fails, after
  // removing the temporary files that remain.
  void commit();

 private:
  friend void write_output_file(const std::string& path, std::string_view text);
  struct entry {
    std::string temp;
    std::string target;
  };
  std::vector<entry> files_;
  staged_files* outer_;
};

// `text` as the file `path` (replacing it), through a temporary file in the same directory.
// Throws cli_error (exit 1) when the file cannot be written; no file is left behind then.
void write_output_file(const std::string& path, std::string_view text);

// The echo of what was computed (docs/cli.md, "What was computed"), one writer for every command:
//   echo_json    {"NAME": {"value": V, "source": "S"}, ..., "keys": {"source": "config FILE",
//                "used": [...], "not_used": [...]}} (keys only when a file was read); a JSON
//                output holds it as its first member, "config"
//   echo_header  "# NAME = V (S)" a line, then "# keys used (config FILE): K1 K2 ..." and
//                "# keys not used (...): ..."; CSV output starts with these lines, text output
//                with these lines and a blank line (echo_prefix)
std::string echo_json(const config_echo& e);
std::string echo_header(const config_echo& e);
// What a CSV or text output starts with ("" for JSON, whose writers put "config" in the object).
std::string echo_prefix(const config_echo& e, output_format f);

void write_freqs(std::ostream& out, const freqs_result& r, output_format f,
                 const config_echo& echo);
void write_table(std::ostream& out, const table_result& r, output_format f,
                 const config_echo& echo);

}  // namespace posenc::cli
