// run_facts (machine.hpp). The build's facts come from meson (bench_build_info.h, written by
// benchmarks/kernels/meson.build); the CPU's are read at run time.
#include "machine.hpp"

#include <posenc/kernels/dispatch.hpp>
#include <posenc/version.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string_view>
#include <thread>

#include "bench_build_info.h"
#include "convert_copy.hpp"
#include "rotation_floor.hpp"
#include "stream_copy.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define POSENC_BENCH_CPUID 1
#else
#define POSENC_BENCH_CPUID 0
#endif

namespace posenc_bench {

namespace {

std::string trimmed(std::string_view s) {
  const std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  const std::size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

// The 48-byte processor brand string of CPUID leaves 0x80000002..4 (Intel SDM vol. 2A, CPUID,
// "Processor Brand String"; AMD APM vol. 3, the same leaves).
std::string cpuid_brand() {
#if POSENC_BENCH_CPUID
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0x80000000u, &a, &b, &c, &d) == 0 || a < 0x80000004u) return {};
  char brand[49] = {};
  for (unsigned i = 0; i < 3; ++i) {
    if (__get_cpuid(0x80000002u + i, &a, &b, &c, &d) == 0) return {};
    const unsigned regs[4] = {a, b, c, d};
    std::memcpy(brand + 16 * i, regs, 16);
  }
  return trimmed(brand);
#else
  return {};
#endif
}

// /proc/cpuinfo's first "model name" (x86, some ARM kernels), else "CPU implementer" and
// "CPU part" (aarch64: the MIDR fields, e.g. 0x41 / 0xd0c).
std::string proc_cpuinfo_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, implementer, part;
  while (std::getline(in, line)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trimmed(std::string_view(line).substr(0, colon));
    const std::string value = trimmed(std::string_view(line).substr(colon + 1));
    if (key == "model name" && !value.empty()) return value;
    if (key == "CPU implementer" && implementer.empty()) implementer = value;
    if (key == "CPU part" && part.empty()) part = value;
  }
  if (part.empty()) return {};
  return "CPU implementer " + (implementer.empty() ? std::string("unknown") : implementer) +
         ", CPU part " + part;
}

std::string cpu_model() {
  std::string m = cpuid_brand();
  if (m.empty()) m = proc_cpuinfo_model();
  return m.empty() ? "unknown" : m;
}

// /proc/loadavg's 1, 5 and 15-minute averages: how busy the machine was when the run started.
std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(in >> one >> five >> fifteen)) return "unknown";
  return one + " " + five + " " + fifteen;
}

std::string isa() {
  namespace d = posenc::kernels::dispatch;
  std::string s = d::active_isa();
  const char* env = std::getenv("POSENC_ISA");
  switch (d::isa_override()) {
    case d::isa_request::none:
      break;
    case d::isa_request::honoured:
      s += std::string(" (POSENC_ISA=") + env + ")";
      break;
    case d::isa_request::unknown:
      s += std::string(" (POSENC_ISA=") + (env ? env : "") + " ignored: no such ISA)";
      break;
    case d::isa_request::unsupported:
      s += std::string(" (POSENC_ISA=") + (env ? env : "") + " ignored: not supported here)";
      break;
  }
  return s;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> run_facts() {
  const unsigned cpus = std::thread::hardware_concurrency();
  const std::string dispatch = posenc::kernels::dispatch::active_isa();
  return {
      {"cpu", cpu_model()},
      {"logical_cpus", cpus == 0 ? std::string("unknown") : std::to_string(cpus)},
      {"load_average", load_average()},
      {"isa", isa()},
      {"isa_per_strategy",
       "constexpr_table, runtime_table, runtime_table_expanded, "
       "runtime_table_2threads, runtime_table_one_head, on_the_fly: " +
           dispatch +
           "; scalar_table: scalar (rope_reference); memcpy: "
           "the C library's; stream_copy, stream_copy_nt, stream_copy_nt_2threads: " +
           stream_copy_isa() + "; convert_copy: " + convert_copy_isa() +
           "; rotation_floor: " + rotation_floor_isa()},
      {"compiler", POSENC_BENCH_COMPILER},
      {"bench_flags", POSENC_BENCH_FLAGS},
      {"kernels_flags", POSENC_BENCH_KERNELS_FLAGS},
      {"google_benchmark", POSENC_BENCH_GOOGLE_BENCHMARK},
      {"posenc", POSENC_VERSION_STRING},
  };
}

}  // namespace posenc_bench
