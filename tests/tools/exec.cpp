// The built `posenc` binary (path in POSENC_CLI), run as a user runs it: exit statuses, one line
// on stderr for every kind of bad input with nothing on stdout, JSON that parses and equals the
// library, and --hf-config on the files in tests/tools/data.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <posenc/frequencies/rope.hpp>
#include <posenc/math/angle.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "support.hpp"

extern char** environ;

using json = nlohmann::json;
using posenc::rope_config;
using posenc::rope_layout;
using posenc_test::bits;
using posenc_test::count_lines;
using posenc_test::process_result;
using posenc_test::tools_data;

namespace {
process_result posenc_cli(const std::vector<std::string>& args) {
  return posenc_test::run_process(posenc_test::posenc_cli_path(), args);
}

// The binary with `out_fd` as its stdout and stderr into a file: exit status (-1 when a signal
// ended it) and stderr.
process_result posenc_cli_to(int out_fd, const std::vector<std::string>& args) {
  char err_name[] = "/tmp/posenc_exec_err_XXXXXX";
  const int err_fd = mkstemp(err_name);
  REQUIRE(err_fd >= 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  std::vector<std::string> storage{posenc_test::posenc_cli_path()};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  // SIGPIPE at its default action in the child, whatever the test runner set.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t def;
  sigemptyset(&def);
  sigaddset(&def, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &def);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, storage[0].c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  REQUIRE(rc == 0);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0) {
  }
  process_result r;
  r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  std::ifstream in(err_name);
  r.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  close(err_fd);
  unlink(err_name);
  return r;
}

// Runs the tool with stdout on out_fd and stderr on a new pseudo-terminal (so that it shows its
// progress there); out: nothing, err: what it wrote to the terminal.
process_result posenc_cli_tty_err(int out_fd, const std::vector<std::string>& args) {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  REQUIRE(master >= 0);
  REQUIRE(grantpt(master) == 0);
  REQUIRE(unlockpt(master) == 0);
  const char* name = ptsname(master);
  REQUIRE(name != nullptr);
  const int terminal = open(name, O_RDWR | O_NOCTTY);
  REQUIRE(terminal >= 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, terminal, 2);
  posix_spawn_file_actions_addclose(&actions, terminal);
  posix_spawn_file_actions_addclose(&actions, master);
  std::vector<std::string> storage{posenc_test::posenc_cli_path()};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, storage[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(terminal);
  REQUIRE(rc == 0);
  // Read while it runs (a terminal holds a few KiB); EIO once the child has closed it.
  process_result r;
  char buf[4096];
  while (true) {
    const ssize_t n = read(master, buf, sizeof buf);
    if (n > 0) {
      r.err.append(buf, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  close(master);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0) {
  }
  r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  return r;
}

void check_freqs(const std::vector<std::string>& args, const rope_config& c,
                 std::uint64_t seq_len = 0) {
  const process_result r = posenc_cli(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  const json j = json::parse(r.out);
  CHECK(j.at("rotary_dim").get<std::uint32_t>() == c.rotary_dim);
  REQUIRE(j.at("inv_freq").size() == c.rotary_dim / 2);
  for (std::uint32_t i = 0; i < c.rotary_dim / 2; ++i) {
    CHECK(bits(static_cast<float>(j.at("inv_freq")[i].get<double>())) ==
          bits(posenc::inv_freq<float>(c, i, seq_len)));
    CHECK(bits(j.at("inv_freq_f64")[i].get<double>()) ==
          bits(posenc::inv_freq<double>(c, i, seq_len)));
  }
  CHECK(bits(j.at("attention_factor").get<double>()) == bits(posenc::attention_factor(c)));
}
}  // namespace

TEST_CASE("posenc freqs: JSON equals the library", "[exec]") {
  check_freqs({"freqs", "--head-dim", "128", "--base", "10000", "--format", "json"},
              rope_config{128, 128, 10000.0, rope_layout::half, {}});
  check_freqs({"freqs", "--head-dim=80", "--partial-rotary-factor=0.4", "--layout=interleaved"},
              rope_config{80, 32, 10000.0, rope_layout::interleaved, {}});
}

TEST_CASE("posenc table: JSON equals sincos_of_product", "[exec]") {
  const process_result r = posenc_cli({"table", "--head-dim", "16", "--positions", "4094:4098"});
  REQUIRE(r.status == 0);
  const json j = json::parse(r.out);
  const rope_config c{16, 16, 10000.0, rope_layout::half, {}};
  REQUIRE(j.at("positions").size() == 4u);
  for (std::uint32_t k = 0; k < 4; ++k) {
    CHECK(j.at("positions")[k].get<std::uint64_t>() == 4094u + k);
    for (std::uint32_t i = 0; i < 8; ++i) {
      const auto v = posenc::math::sincos_of_product<float>(4094 + k, posenc::inv_freq_dd(c, i));
      CHECK(bits(static_cast<float>(j.at("cos")[k][i].get<double>())) == bits(v.cos));
      CHECK(bits(static_cast<float>(j.at("sin")[k][i].get<double>())) == bits(v.sin));
    }
  }
  const process_result csv =
      posenc_cli({"table", "--head-dim", "16", "--positions", "0:100", "--format", "csv"});
  REQUIRE(csv.status == 0);
  CHECK(count_lines(posenc_test::without_echo(csv.out)) == 1u + 100u * 8u);
}

TEST_CASE("posenc --hf-config on the data files", "[exec]") {
  check_freqs({"freqs", "--hf-config", tools_data("llama3.json")},
              rope_config{128, 128, 500000.0, rope_layout::half,
                          posenc::scaling::llama3(8.0, 1.0, 4.0, 8192)});
  check_freqs({"freqs", "--hf-config", tools_data("neox.json")},
              rope_config{96, 24, 10000.0, rope_layout::half, {}});
  check_freqs({"freqs", "--hf-config", tools_data("gptj.json")},
              rope_config{256, 64, 10000.0, rope_layout::interleaved, {}});
  check_freqs({"freqs", "--hf-config", tools_data("yarn_v5.json")},
              rope_config{64, 64, 150000.0, rope_layout::half,
                          posenc::scaling::yarn(32.0, 4096, 32.0, 1.0, false)});
  check_freqs({"freqs", "--hf-config", tools_data("deepseek_v2.json")},
              rope_config{64, 64, 10000.0, rope_layout::interleaved,
                          posenc::scaling::yarn(40.0, 4096, 32.0, 1.0, true, 0.707, 0.707)});
  // flags after --hf-config override its fields
  check_freqs({"freqs", "--hf-config", tools_data("yarn_v5.json"), "--truncate", "--base", "1e6"},
              rope_config{64, 64, 1e6, rope_layout::half,
                          posenc::scaling::yarn(32.0, 4096, 32.0, 1.0, true)});

  // Phi-3: short factors up to the original context, long ones past it (--seq-len)
  std::ifstream in(tools_data("phi3_longrope.json"));
  const json phi3 = json::parse(in);
  const auto short_f = phi3.at("rope_scaling").at("short_factor").get<std::vector<double>>();
  const auto long_f = phi3.at("rope_scaling").at("long_factor").get<std::vector<double>>();
  const rope_config phi3_config{96, 96, 10000.0, rope_layout::half,
                                posenc::scaling::longrope(short_f, long_f, 4096, 131072)};
  check_freqs({"freqs", "--hf-config", tools_data("phi3_longrope.json")}, phi3_config);
  check_freqs({"freqs", "--hf-config", tools_data("phi3_longrope.json"), "--seq-len", "4097"},
              phi3_config, 4097);
}

TEST_CASE("bad input: non-zero exit, one line on stderr, nothing on stdout", "[exec]") {
  struct bad_case {
    std::vector<std::string> args;
    int status;
    std::string err;  // the whole line, or "" to check only its form
  };
  const std::vector<bad_case> cases = {
      {{},
       2,
       "posenc: missing command (freqs, table, apply, alibi, sinusoidal, decay, dials, ramp, "
       "check, emit, accuracy, layers, entropy or t5-bias); see posenc --help"},
      {{"frobnicate"},
       2,
       "posenc: unknown command 'frobnicate' (freqs, table, apply, alibi, sinusoidal, decay, "
       "dials, ramp, check, emit, accuracy, layers, entropy or t5-bias)"},
      {{"freqs", "--foo"}, 2, "posenc: unknown flag --foo"},
      {{"freqs", "--head-dim", "12abc"}, 2, "posenc: --head-dim needs a positive integer"},
      {{"freqs", "--head-dim"}, 2, "posenc: --head-dim needs a value"},
      {{"freqs", "--head-dim", "128", "--base", "nan"}, 2, "posenc: --base needs a finite number"},
      {{"freqs", "--head-dim", "128", "--base", "inf"}, 2, "posenc: --base needs a finite number"},
      {{"freqs", "--head-dim", "128", "--format", "xml"},
       2,
       "posenc: --format needs json, csv or text"},
      {{"freqs"}, 2, "posenc: no head dimension: give --head-dim, --preset or --hf-config"},
      {{"freqs", "--head-dim", "128", "--base", "0.5"},
       1,
       posenc::message(posenc::rope_error::base)},
      {{"freqs", "--head-dim", "7"}, 1, posenc::message(posenc::rope_error::rotary_dim)},
      {{"freqs", "--head-dim", "128", "--scaling", "yarn", "--factor", "4", "--original-max",
        "4096", "--beta-fast", "0.5"},
       1,
       posenc::message(posenc::rope_error::yarn_beta)},
      {{"freqs", "--head-dim", "128", "--scaling", "llama3", "--factor", "8", "--original-max",
        "8192", "--low-freq-factor", "4", "--high-freq-factor", "1"},
       1,
       posenc::message(posenc::rope_error::llama3_freq_factors)},
      {{"freqs", "--head-dim", "4", "--scaling", "longrope", "--original-max", "10",
        "--max-position-embeddings", "20", "--short-factor", "1", "--long-factor", "1"},
       1,
       posenc::message(posenc::rope_error::longrope_factor_length)},
      {{"table", "--head-dim", "128"}, 2, "posenc: table needs --positions SET (e.g. 0:4096)"},
      {{"table", "--head-dim", "128", "--positions", "0:2000000"},
       2,
       "posenc: --positions covers 2000000 positions; at most 1048576 per call"},
      {{"table", "--head-dim", "128", "--positions", "4294967295:4294967297"}, 2, ""},
      {{"table", "--head-dim", "128", "--positions", "7:7"}, 2, ""},
      {{"table", "--head-dim", "1024", "--positions", "0:1000000"}, 1, ""},
      {{"freqs", "--hf-config", tools_data("no-such-file.json")},
       1,
       "posenc: cannot open " + tools_data("no-such-file.json")},
      {{"freqs", "--hf-config", tools_data("truncated.json")}, 1, ""},
      {{"freqs", "--hf-config", tools_data("bad_factor.json")},
       1,
       "posenc: " + tools_data("bad_factor.json") + ": rope_scaling.factor must be a number"},
      {{"freqs", "--hf-config", POSENC_TOOLS_DATA}, 1, ""},
      {{"freqs", "--preset", "no-such-model"}, 2, ""},
      {{"freqs", "--hf-config", tools_data("llama3.json"), "--preset", "llama-3.1-8b"},
       2,
       "posenc: --hf-config and --preset conflict (give one configuration source)"},
  };
  for (const bad_case& c : cases) {
    const process_result r = posenc_cli(c.args);
    INFO("stderr: " << r.err);
    CHECK(r.status == c.status);
    CHECK(r.out.empty());
    CHECK(count_lines(r.err) == 1u);
    CHECK(r.err.starts_with("posenc: "));
    if (!c.err.empty()) CHECK(r.err == c.err + "\n");
  }
}

TEST_CASE("an old spelling: the result, and one warning on stderr", "[exec]") {
  const process_result old = posenc_cli({"alibi", "--heads", "1", "--length", "2", "--length=2"});
  CHECK(old.status == 0);
  CHECK(old.err == "posenc: warning: --length is now --positions; the old spelling will go\n");
  const process_result now = posenc_cli({"alibi", "--heads", "1", "--positions", "2"});
  CHECK(now.status == 0);
  CHECK(now.err.empty());
  CHECK(old.out == now.out);
  // A usage error after an old spelling: the one line of the error only.
  const process_result bad = posenc_cli({"alibi", "--heads", "1", "--length", "1:2"});
  CHECK(bad.status == 2);
  CHECK(bad.err == "posenc: alibi --positions needs 0:N or N (a length: the positions 0 to N-1)\n");
}

TEST_CASE("posenc --help", "[exec]") {
  for (const char* flag : {"--help", "-h"}) {
    const process_result r = posenc_cli({flag});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.starts_with("usage: posenc freqs"));
    CHECK(r.out.find("--hf-config FILE") != std::string::npos);
    // After a command: that command's help.
    const process_result t = posenc_cli({"table", flag});
    CHECK(t.status == 0);
    CHECK(t.err.empty());
    CHECK(t.out.starts_with("usage: posenc table --positions SET "));
    CHECK(t.out.find("\n  --positions SET ") != std::string::npos);
    CHECK(t.out.find("--svg") == std::string::npos);
  }
}

TEST_CASE("stdout on a full disk or a closed pipe: one line, exit 1, at once", "[exec]") {
  const int full = open("/dev/full", O_WRONLY);
  REQUIRE(full >= 0);  // Linux: /dev/full fails every write with ENOSPC
  process_result r = posenc_cli_to(full, {"freqs", "--head-dim", "8"});
  CHECK(r.status == 1);
  CHECK(r.err == "posenc: cannot write to standard output (No space left on device)\n");
  // The command ends at the first failed write, not after formatting the rest of its output into
  // a stream gone bad (alibi --positions 4096 did so for 8 to 12 s). Counted, not timed: decay
  // --csv over 4M distances with stderr on a terminal shows how far its writing pass is ("decay
  // (writing) N%"); the first piece handed to /dev/full (64 KiB, about 1500 of the 4M rows) fails,
  // so the pass stops at 0%, where formatting on would count up to 99%.
  r = posenc_cli_tty_err(full, {"decay", "--head-dim", "4", "--max-distance", "4194304", "--csv"});
  close(full);
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(r.err.find("posenc: decay (writing)   0%") != std::string::npos);
  CHECK(r.err.find("posenc: decay (writing)   1%") == std::string::npos);
  CHECK(r.err.find("posenc: cannot write to standard output (No space left on device)") !=
        std::string::npos);
  // A pipe whose reader is gone: EPIPE reported, not a silent death by SIGPIPE.
  int p[2];
  REQUIRE(pipe(p) == 0);
  close(p[0]);
  r = posenc_cli_to(p[1], {"table", "--head-dim", "128", "--positions", "0:1024"});
  close(p[1]);
  CHECK(r.status == 1);
  CHECK(r.err == "posenc: cannot write to standard output (Broken pipe)\n");
}

TEST_CASE("POSENC_ISA that names no ISA: an error naming the valid ones", "[exec]") {
  char name[] = "/tmp/posenc_exec_apply_XXXXXX";
  const int fd = mkstemp(name);
  REQUIRE(fd >= 0);
  const std::string input = R"({"x": [1, 0, 0, 1], "shape": [1, 1, 4]})";
  REQUIRE(write(fd, input.data(), input.size()) == static_cast<ssize_t>(input.size()));
  close(fd);
  REQUIRE(setenv("POSENC_ISA", "avx9000", 1) == 0);
  const process_result bad = posenc_cli({"apply", "--input", name});
  REQUIRE(setenv("POSENC_ISA", "scalar", 1) == 0);
  const process_result good = posenc_cli({"apply", "--input", name});
  unsetenv("POSENC_ISA");
  unlink(name);
  CHECK(bad.status == 1);
  CHECK(bad.out.empty());
  CHECK(bad.err.starts_with("posenc: POSENC_ISA=avx9000 names no ISA (on this machine: "));
  CHECK(bad.err.find("scalar)") != std::string::npos);
  CHECK(good.status == 0);
}
