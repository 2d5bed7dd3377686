// `posenc emit` (tools/cli/emit): the emitted C header compiled by the C compiler as C99
// (-std=c99 -Wall -Wextra -Werror -pedantic) and the emitted C++ header compiled as C++20, each
// with driver.c, rotate random inputs bit for bit as posenc::kernels::rope_reference with
// fma_mode::unfused, and as every runtime-dispatch ISA kernel without FMA (an ISA with FMA must
// equal rope_reference with fma_mode::fused instead: the emitted code never fuses). Cases: both
// layouts, partial rotary, YaRN (attention factor != 1) and llama3 scalings, compact and simd
// tables, the whole-tensor and the per-head function. A position >= max_pos and null pointers
// give the error codes with x unchanged. The header's accuracy statement is checked against the
// rounding bound (<= 0.5 ulp), and the tool's errors (too many entries, bad --name, missing
// flags) against their messages.
//
// Environment (meson): POSENC_EMIT_CC, POSENC_EMIT_CXX (compilers), POSENC_EMIT_DRIVER
// (driver.c), POSENC_EMIT_SCRATCH (a directory for the headers and programs).
#include <catch2/catch.hpp>

#include <posenc/kernels/dispatch.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/tables/runtime_rope_cache.hpp>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/run.hpp"
#include "support.hpp"

namespace k = posenc::kernels;
namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

using posenc_test::run_cli;
using result = posenc_test::cli_result;

// xorshift32 (Marsaglia 2003): exact floats (x >> 8) 2^-23 - 1 in [-1, 1).
struct xorshift32 {
  std::uint32_t s;
  float unit() {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return static_cast<float>(s >> 8) * 0x1p-23f - 1.0f;
  }
};

struct emit_case {
  std::string name;
  std::vector<std::string> config;  // config flags
  bool cpp = false;
  bool simd = false;
};

constexpr std::uint64_t kMaxPos = 37;
constexpr std::size_t kTokens = 9, kHeads = 3;

struct driver_output {
  std::uint64_t max_pos = 0, head_dim = 0, rotary_dim = 0;
  int null_apply = -1, null_head = -1, rc = -1;
  std::vector<std::uint32_t> bits;
};

driver_output parse_driver(const std::string& text) {
  std::istringstream in(text);
  driver_output d;
  std::string word;
  in >> word >> d.max_pos >> d.head_dim >> d.rotary_dim;
  REQUIRE(word == "meta");
  in >> word >> d.null_apply >> d.null_head;
  REQUIRE(word == "null");
  in >> word >> d.rc;
  REQUIRE(word == "rc");
  in >> std::hex;
  std::uint32_t b = 0;
  while (in >> b) d.bits.push_back(b);
  return d;
}

// Runs the driver (mode 0: whole tensor, 1: per head) on x and positions.
driver_output run_driver(const std::string& exe, const fs::path& dir, int mode,
                         const std::vector<std::uint64_t>& pos, const std::vector<float>& x) {
  const fs::path input = dir / ("input" + std::to_string(mode) + ".txt");
  {
    std::ofstream f(input);
    f << mode << ' ' << pos.size() << ' ' << kHeads << '\n';
    for (const std::uint64_t p : pos) f << p << ' ';
    f << '\n' << std::hex;
    for (const float v : x) f << std::bit_cast<std::uint32_t>(v) << '\n';
  }
  const posenc_test::process_result r = posenc_test::run_process(exe, {input.string()});
  INFO("driver stderr: " << r.err);
  REQUIRE(r.status == 0);
  return parse_driver(r.out);
}

std::vector<std::uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<std::uint32_t> b;
  for (const float f : v) b.push_back(std::bit_cast<std::uint32_t>(f));
  return b;
}

std::size_t differences(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b) {
  if (a.size() != b.size()) return a.size() + b.size();
  std::size_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += a[i] != b[i] ? 1 : 0;
  return n;
}

using posenc_test::config_of;

void check_case(const emit_case& ec) {
  INFO("case " << ec.name);
  const std::string cc = env("POSENC_EMIT_CC"), cxx = env("POSENC_EMIT_CXX");
  const std::string driver = env("POSENC_EMIT_DRIVER"), scratch = env("POSENC_EMIT_SCRATCH");
  REQUIRE(!driver.empty());
  REQUIRE(!scratch.empty());
  REQUIRE(!(ec.cpp ? cxx : cc).empty());

  std::vector<std::string> args{"emit",
                                "--lang",
                                ec.cpp ? "cpp" : "c",
                                "--positions",
                                std::to_string(kMaxPos),
                                "--name",
                                "emt",
                                "--table",
                                ec.simd ? "simd" : "compact"};
  args.insert(args.end(), ec.config.begin(), ec.config.end());
  const result r = run_cli(args);
  INFO("emit stderr: " << r.err);
  REQUIRE(r.status == 0);

  // The stated accuracy: the header prints its measured max ulp error with 3 digits; an entry
  // rounded once is at most 0.5 ulp from the exact value (the double-double residue, 2^-100
  // relative, cannot move the printed value past 0.5).
  const std::size_t at = r.out.find("max error ");
  REQUIRE(at != std::string::npos);
  const double ulps = std::stod(r.out.substr(at + 10));
  CHECK(ulps <= 0.5);
  CHECK(ulps > 0.0);

  const fs::path dir = fs::path(scratch) / ec.name;
  fs::create_directories(dir);
  std::ofstream(dir / "emitted.h") << r.out;
  const std::string exe = (dir / "driver").string();
  std::vector<std::string> compile;
  if (ec.cpp) {
    compile = {"-std=c++20", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-x", "c++"};
  } else {
    compile = {"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"};
  }
  compile.insert(compile.end(), {"-I", dir.string(), driver, "-o", exe});
  const posenc_test::process_result built = posenc_test::run_process(ec.cpp ? cxx : cc, compile);
  INFO("compiler output: " << built.out << built.err);
  REQUIRE(built.status == 0);

  // The library's table in the same form.
  const posenc::cli::resolved_config rc = config_of(ec.config);
  const posenc::rope_config c = rc.config();
  const auto cache = posenc::runtime_rope_cache<float>::make(c, kMaxPos);
  std::vector<float> ecos(kMaxPos * c.rotary_dim), esin(ecos.size());
  k::rope_table table = k::make_rope_table(cache.view(), c.layout);
  if (ec.simd) {
    k::expand_rope_cache(cache.view(), c.layout, ecos.data(), esin.data());
    table.cos = ecos.data();
    table.sin = esin.data();
    table.format = k::rope_table_format::expanded;
  }

  // Inputs: positions 0, max_pos - 1 and pseudo-random ones below max_pos.
  xorshift32 rng{0x2545f491u + c.rotary_dim};
  std::vector<std::uint64_t> pos{0, kMaxPos - 1};
  while (pos.size() < kTokens)
    pos.push_back(static_cast<std::uint64_t>(rng.unit() * 18.0f + 18.0f));
  std::vector<std::int64_t> ids(pos.begin(), pos.end());
  std::vector<float> x(kTokens * kHeads * c.head_dim);
  for (float& v : x) v = rng.unit();

  std::vector<float> ref = x, fused = x;
  REQUIRE(k::rope_reference<float>(table, k::dense(ref.data(), kTokens, kHeads, c.head_dim),
                                   k::token_positions::of(ids),
                                   k::fma_mode::unfused) == k::kernel_error::ok);
  REQUIRE(k::rope_reference<float>(table, k::dense(fused.data(), kTokens, kHeads, c.head_dim),
                                   k::token_positions::of(ids),
                                   k::fma_mode::fused) == k::kernel_error::ok);
  const std::vector<std::uint32_t> want = bits_of(ref);
  // The inputs must exercise the rotation: most rotated channels change (all but position 0's).
  CHECK(differences(want, bits_of(x)) > kTokens * kHeads * c.rotary_dim / 2);

  for (int mode = 0; mode < 2; ++mode) {
    INFO("mode " << mode);
    const driver_output d = run_driver(exe, dir, mode, pos, x);
    CHECK(d.max_pos == kMaxPos);
    CHECK(d.head_dim == c.head_dim);
    CHECK(d.rotary_dim == c.rotary_dim);
    CHECK(d.null_apply == 2);
    CHECK(d.null_head == 2);
    CHECK(d.rc == 0);
    CHECK(differences(d.bits, want) == 0);

    // Every runtime-dispatch ISA this CPU runs: unfused ones give the header's bits.
    std::size_t unfused_isas = 0;
    for (const k::dispatch::isa_kernels& isa : k::dispatch::compiled_isas()) {
      if (!isa.supported) continue;
      INFO("isa " << isa.name);
      std::vector<float> out(x.size());
      REQUIRE(isa.rope<float>().apply(table,
                                      k::dense<const float>(x.data(), kTokens, kHeads, c.head_dim),
                                      k::dense(out.data(), kTokens, kHeads, c.head_dim),
                                      k::token_positions::of(ids)) == k::kernel_error::ok);
      if (isa.fma == k::fma_mode::unfused) {
        ++unfused_isas;
        CHECK(differences(bits_of(out), d.bits) == 0);
      } else {
        CHECK(differences(bits_of(out), bits_of(fused)) == 0);
      }
    }
    CHECK(unfused_isas >= 1);  // "scalar" at least
  }

  // With FMA available and contraction on by default (GNU C mode, -O3): still the same bits.
  const std::string fma = env("POSENC_EMIT_FMA_FLAGS");
  if (!ec.cpp && !fma.empty()) {
    const std::string exe_fma = (dir / "driver_fma").string();
    const posenc_test::process_result b = posenc_test::run_process(
        cc, {"-std=gnu99", "-O3", fma, "-I", dir.string(), driver, "-o", exe_fma});
    INFO("compiler output: " << b.out << b.err);
    REQUIRE(b.status == 0);
    CHECK(differences(run_driver(exe_fma, dir, 0, pos, x).bits, want) == 0);
  }

  // Out of range: max_pos, and a position past 2^63; nothing is written.
  for (const std::uint64_t bad : {kMaxPos, kMaxPos + 1, std::uint64_t{1} << 63}) {
    INFO("position " << bad);
    std::vector<std::uint64_t> p = pos;
    p[kTokens / 2] = bad;
    const driver_output d0 = run_driver(exe, dir, 0, p, x);
    CHECK(d0.rc == 1);
    CHECK(differences(d0.bits, bits_of(x)) == 0);
    // Per head: the heads of that token are unchanged and report the error; the others rotate.
    const driver_output d1 = run_driver(exe, dir, 1, p, x);
    CHECK(d1.rc == 1);
    const std::size_t row = kHeads * c.head_dim;
    std::size_t changed_bad = 0, wrong_good = 0;
    for (std::size_t t = 0; t < kTokens; ++t) {
      for (std::size_t e = t * row; e < (t + 1) * row; ++e) {
        if (t == kTokens / 2) {
          changed_bad += d1.bits[e] != std::bit_cast<std::uint32_t>(x[e]) ? 1 : 0;
        } else {
          wrong_good += d1.bits[e] != want[e] ? 1 : 0;
        }
      }
    }
    CHECK(changed_bad == 0);
    CHECK(wrong_good == 0);
  }
}

}  // namespace

TEST_CASE("tools/emit: C99 header == rope_reference bit for bit", "[emit]") {
  const std::vector<emit_case> cases = {
      {"c_half_compact", {"--head-dim", "64"}, false, false},
      {"c_interleaved_compact", {"--head-dim", "64", "--layout", "interleaved"}, false, false},
      {"c_half_partial_simd", {"--head-dim", "64", "--rotary-dim", "24"}, false, true},
      {"c_interleaved_partial_simd",
       {"--head-dim", "40", "--partial-rotary-factor", "0.5", "--layout", "interleaved"},
       false,
       true},
      {"c_yarn_partial_compact",
       {"--head-dim", "48", "--rotary-dim", "32", "--base", "1000000", "--scaling", "yarn",
        "--factor", "4", "--original-max", "4096"},
       false,
       false},
      {"c_llama3_interleaved_simd",
       {"--head-dim", "128", "--base", "500000", "--layout", "interleaved", "--scaling", "llama3",
        "--factor", "8", "--original-max", "8192"},
       false,
       true},
  };
  for (const emit_case& ec : cases) check_case(ec);
}

TEST_CASE("tools/emit: C++20 header == rope_reference bit for bit", "[emit]") {
  const std::vector<emit_case> cases = {
      {"cpp_yarn_half_partial_compact",
       {"--head-dim", "48", "--rotary-dim", "32", "--scaling", "yarn", "--factor", "4",
        "--original-max", "4096"},
       true,
       false},
      {"cpp_interleaved_simd", {"--head-dim", "64", "--layout", "interleaved"}, true, true},
  };
  for (const emit_case& ec : cases) check_case(ec);
}

TEST_CASE("tools/emit: negative control, contraction changes the bits", "[emit]") {
  // The same header without its GCC guard against contraction, built as GNU C with FMA: GCC
  // fuses the products into the sums and the bits differ from rope_reference's unfused order, so
  // the FMA build in the cases above would catch a header that lost its guard. GCC only (clang
  // honours the header's pragma and does not fuse across statements by default).
  const std::string cc = env("POSENC_EMIT_CC"), fma = env("POSENC_EMIT_FMA_FLAGS");
  const std::string driver = env("POSENC_EMIT_DRIVER"), scratch = env("POSENC_EMIT_SCRATCH");
  REQUIRE(!cc.empty());
  const posenc_test::process_result version = posenc_test::run_process(cc, {"--version"});
  if (fma.empty() || version.out.find("Free Software Foundation") == std::string::npos ||
      version.out.find("clang") != std::string::npos) {
    WARN("not GCC with FMA: negative control skipped");
    return;
  }
  const result r = run_cli({"emit", "--lang", "c", "--positions", std::to_string(kMaxPos), "--name",
                            "emt", "--head-dim", "64"});
  REQUIRE(r.status == 0);
  std::string h = r.out;
  const std::string guard = "__attribute__((optimize(\"fp-contract=off\")))";
  const std::size_t at = h.find(guard);
  REQUIRE(at != std::string::npos);
  h.erase(at, guard.size());
  const fs::path dir = fs::path(scratch) / "negative_control";
  fs::create_directories(dir);
  std::ofstream(dir / "emitted.h") << h;
  const std::string exe = (dir / "driver").string();
  const posenc_test::process_result b = posenc_test::run_process(
      cc, {"-std=gnu99", "-O3", fma, "-I", dir.string(), driver, "-o", exe});
  REQUIRE(b.status == 0);

  const posenc::cli::resolved_config rc = config_of({"--head-dim", "64"});
  const posenc::rope_config c = rc.config();
  const auto cache = posenc::runtime_rope_cache<float>::make(c, kMaxPos);
  const k::rope_table table = k::make_rope_table(cache.view(), c.layout);
  xorshift32 rng{7u};
  std::vector<std::uint64_t> pos;
  for (std::size_t t = 0; t < kTokens; ++t) pos.push_back(1 + 4 * t);
  std::vector<std::int64_t> ids(pos.begin(), pos.end());
  std::vector<float> x(kTokens * kHeads * c.head_dim);
  for (float& v : x) v = rng.unit();
  std::vector<float> ref = x;
  REQUIRE(k::rope_reference<float>(table, k::dense(ref.data(), kTokens, kHeads, c.head_dim),
                                   k::token_positions::of(ids),
                                   k::fma_mode::unfused) == k::kernel_error::ok);
  CHECK(differences(run_driver(exe, dir, 0, pos, x).bits, bits_of(ref)) > 0);
}

TEST_CASE("tools/emit: errors", "[emit]") {
  // max_pos x rotary_dim above 2^21.
  const result big = run_cli({"emit", "--lang", "c", "--head-dim", "128", "--positions", "16385"});
  CHECK(big.status == 1);
  CHECK(big.out.empty());
  CHECK(big.err ==
        "posenc: emit holds at most 2097152 entries (max_pos x rotary_dim) per table; 16385 x 128 "
        "is more\n");
  // The largest allowed size is accepted by the check (not emitted here: only the limit).
  for (const char* name : {"9lives", "a-b", "__x", "_Up", ""}) {
    INFO("name '" << name << "'");
    const result r =
        run_cli({"emit", "--lang", "c", "--head-dim", "8", "--positions", "2", "--name", name});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.starts_with("posenc: --name needs a C identifier"));
  }
  const result kw =
      run_cli({"emit", "--lang", "cpp", "--head-dim", "8", "--positions", "2", "--name", "class"});
  CHECK(kw.status == 2);
  const result kw_c =
      run_cli({"emit", "--lang", "c", "--head-dim", "8", "--positions", "2", "--name", "class"});
  CHECK(kw_c.status == 0);  // a C prefix "class_" is fine
  const result no_lang = run_cli({"emit", "--head-dim", "8", "--positions", "2"});
  CHECK(no_lang.status == 2);
  CHECK(no_lang.err == "posenc: emit needs --lang c|cpp\n");
  const result no_max = run_cli({"emit", "--lang", "c", "--head-dim", "8"});
  CHECK(no_max.status == 2);
  CHECK(no_max.err == "posenc: emit needs --positions N (the table: positions 0 to N-1)\n");
  const result zero = run_cli({"emit", "--lang", "c", "--head-dim", "8", "--positions", "0"});
  CHECK(zero.status == 2);
  const result lang_elsewhere = run_cli({"freqs", "--lang", "c", "--head-dim", "8"});
  CHECK(lang_elsewhere.status == 2);
  CHECK(lang_elsewhere.err == "posenc: --lang is not a flag of freqs (see posenc help freqs)\n");
}
