// What a benchmark run was measured on: printed at the start of the run and written as the
// summary CSV's `# key: value` comment lines (report.hpp reads them back).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace posenc_bench {

// In order: cpu (x86: the CPUID brand string; elsewhere /proc/cpuinfo's "model name", else its
// "CPU implementer"/"CPU part"; "unknown" when none), logical_cpus, load_average (/proc/loadavg
// at the start), isa (dispatch::active_isa(),
// and POSENC_ISA with what became of it when set), isa_per_strategy, compiler, bench_flags (the
// benchmark's timed translation units), kernels_flags (the dispatch library's translation units),
// google_benchmark, posenc.
std::vector<std::pair<std::string, std::string>> run_facts();

}  // namespace posenc_bench
