// The kernel benchmark's summary CSV read back, and the Markdown tables made from one run
// (--markdown RUN.csv) or two (--compare BEFORE.csv AFTER.csv) for docs/benchmarks.md; the targets
// the tables and the run's own ratio table mark.
//
// The CSV: `# key: value` comment lines (the run's machine and build facts), then the header
//   layout,strategy,dtype,tokens,threads,ns_per_call,ratio_to_memcpy
// (files written before the threads column existed are read with threads = 1), then one row per
// benchmark; ratio_to_memcpy is empty when the run had no memcpy row to divide by.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace posenc_bench::report {

// The targets (docs/benchmarks.md, "What is measured"), for the SIMD table strategies
// (constexpr_table, runtime_table, runtime_table_expanded): f32 at most 1.15x memcpy at T = 512
// and 4096 and 2x at T = 1; bf16 and f16 at most 1.5x at T = 4096 and 3x at T = 1. The largest
// ratio to memcpy a row may have, or nothing when the row has no target.
std::optional<double> ratio_target(std::string_view strategy, std::string_view dtype,
                                   std::size_t tokens);

// 2 threads (runtime_table_2threads) at least 1.6x the throughput of runtime_table on one thread,
// at T = 4096.
inline constexpr double kThreadsSpeedupTarget = 1.6;
inline constexpr std::size_t kThreadsTargetTokens = 4096;
inline constexpr std::string_view kThreadsStrategy = "runtime_table_2threads";
inline constexpr std::string_view kOneThreadStrategy = "runtime_table";

// The multi-axis kernels (M-RoPE, interleaved M-RoPE, 2-D axial) at most 1.2x the time of the
// 1-D kernel on the same table, layout, T and dtype (runtime_table).
inline constexpr double kMultiAxisTarget = 1.2;
inline constexpr std::string_view kMultiAxisStrategies[] = {
    "mrope_table", "mrope_interleaved_table", "axial_table"};

// The columns of the summary CSV, in order.
inline constexpr std::string_view kHeader =
    "layout,strategy,dtype,tokens,threads,ns_per_call,ratio_to_memcpy";

struct row {
  std::string layout, strategy, dtype;
  std::size_t tokens = 0, threads = 1;
  double ns = 0.0;
  std::optional<double> ratio;
};

struct run {
  std::vector<std::pair<std::string, std::string>> facts;  // the comment lines, in file order
  std::vector<row> rows;
};

// Bad input: the message names the file (and line) and says what is wrong.
struct input_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reads a summary CSV; throws input_error when the file cannot be read, has no header or another
// one, a row with a wrong number of fields, a count or a time that is not a number (finite, not
// negative), a row twice, or no rows.
run read_summary(const std::string& path);

// The tables of one run: its facts, then per layout a table of T x dtype rows and one column per
// strategy (memcpy in ns per call, every other strategy its ratio to memcpy), a target missed in
// bold; then 2 threads against one.
std::string markdown(const run& r);
// The same tables for two runs, each cell `before → after`.
std::string markdown_compare(const run& before, const run& after);

}  // namespace posenc_bench::report
