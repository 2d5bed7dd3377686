// The shared vocabulary of the posenc tool (docs/cli.md, "Vocabulary"), table by table: the same
// flag with the same value means the same thing in every command that takes it (--positions in
// its four forms, --layout and its aliases, --csv and --format csv, the old spellings); a flag a
// command does not take, two flags that conflict and a malformed set of positions are usage errors
// naming them; `posenc help CMD` and `posenc CMD --help` describe every flag the command takes.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "cli/error.hpp"
#include "cli/flags.hpp"
#include "cli/options.hpp"
#include "support.hpp"

using namespace posenc::cli;
using posenc_test::run_cli;
using args = std::vector<std::string>;

namespace {

args operator+(args a, const args& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// The usage error (exit 2) of parsing `a`, "" when it parses.
std::string usage_message(const args& a) {
  const std::vector<std::string_view> views(a.begin(), a.end());
  return posenc_test::cli_error_message(exit_usage, [&] { parse_args(views); });
}

// Runs `a` in process; it must succeed without a word on stderr.
std::string output_of(const args& a) {
  const posenc_test::cli_result r = run_cli(a);
  INFO("posenc " << a.front() << ": " << r.err);
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK_FALSE(r.out.empty());
  return r.out;
}

// apply's input: 3 tokens, 1 head, head_dim 4; removed at scope exit.
class apply_input {
 public:
  apply_input() {
    path_ = (std::filesystem::temp_directory_path() /
             ("posenc_vocabulary_" + std::to_string(::getpid()) + ".json"))
                .string();
    std::ofstream(path_) << R"({"x": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], "shape": [3, 1, 4]})";
  }
  ~apply_input() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  apply_input(const apply_input&) = delete;
  apply_input& operator=(const apply_input&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The least each command needs to parse, without --positions where that is optional.
struct command_case {
  std::string_view name;
  args base;
};
std::vector<command_case> minimal_commands(const std::string& apply_file) {
  return {
      {"freqs", {"freqs", "--head-dim", "8"}},
      {"table", {"table", "--head-dim", "8", "--positions", "2"}},
      {"apply", {"apply", "--input", apply_file}},
      {"alibi", {"alibi", "--heads", "2"}},
      {"sinusoidal", {"sinusoidal", "--head-dim", "4", "--positions", "2"}},
      {"decay", {"decay", "--head-dim", "8", "--max-distance", "4"}},
      {"dials", {"dials", "--head-dim", "8", "--positions", "4"}},
      {"ramp",
       {"ramp", "--head-dim", "8", "--scaling", "yarn", "--factor", "4", "--original-max", "64"}},
      {"check", {"check", "--head-dim", "32"}},
      {"emit", {"emit", "--lang", "c", "--head-dim", "8", "--positions", "2"}},
      {"accuracy", {"accuracy", "--head-dim", "8", "--positions", "7"}},
      {"layers", {"layers", "--preset", "gemma-3-4b"}},
  };
}

}  // namespace

TEST_CASE("--positions N, 0:N, 0:N:1 and 0,1,...,N-1 are one set in every command", "[vocab]") {
  // Each command that takes --positions, without it.
  const std::vector<args> commands = {
      {"table", "--head-dim", "8"},
      {"alibi", "--heads", "2"},
      {"sinusoidal", "--head-dim", "6"},
      {"dials", "--head-dim", "8"},
      {"emit", "--lang", "c", "--head-dim", "8"},
      {"accuracy", "--head-dim", "8"},
  };
  for (const args& c : commands) {
    INFO(c.front());
    const std::string n = output_of(c + args{"--positions", "4"});
    CHECK(output_of(c + args{"--positions", "0:4"}) == n);
    CHECK(output_of(c + args{"--positions", "0:4:1"}) == n);
    CHECK(output_of(c + args{"--positions", "0,1,2,3"}) == n);
    CHECK(output_of(c + args{"--positions=4"}) == n);
    // A different set gives a different output: the flag is read, not ignored.
    CHECK(output_of(c + args{"--positions", "3"}) != n);
  }
}

TEST_CASE("--positions A:B and its list are the same positions; the values themselves", "[vocab]") {
  const args table = {"table", "--head-dim", "4", "--format", "csv"};
  const std::string range = output_of(table + args{"--positions", "2:4"});
  CHECK(output_of(table + args{"--positions", "2,3"}) == range);
  CHECK(output_of(table + args{"--positions", "2:4:1"}) == range);
  // cos and sin of p * inv_freq_i, inv_freq = (1, 10000^-1/2 = 0.01), rounded once to float32
  // (numpy.float32(numpy.cos(2.0)) etc.).
  CHECK(posenc_test::without_echo(range) ==
        "position,pair,cos,sin\n"
        "2,0,-0.416146845,0.909297407\n"
        "2,1,0.999800026,0.0199986659\n"
        "3,0,-0.989992499,0.141120002\n"
        "3,1,0.999550045,0.029995501\n");
  // accuracy takes any set: A:B:S is the list of its positions.
  const args accuracy = {"accuracy", "--head-dim", "8", "--format", "csv"};
  CHECK(output_of(accuracy + args{"--positions", "1:11:3"}) ==
        output_of(accuracy + args{"--positions", "1,4,7,10"}));
  CHECK(posenc_test::without_echo(output_of(accuracy + args{"--positions", "1:11:3"}))
            .starts_with("position,posenc,hf_float32_angle,ggml_running_product\n1,"));
}

TEST_CASE("--layout gptj = norm = interleaved and neox = rotate_half = half everywhere",
          "[vocab]") {
  const apply_input in;
  const std::vector<args> commands = {
      {"freqs", "--head-dim", "8"},
      {"table", "--head-dim", "8", "--positions", "3"},
      {"apply", "--input", in.path(), "--head-dim", "4"},
      {"decay", "--head-dim", "8", "--max-distance", "16"},
      {"dials", "--head-dim", "8", "--positions", "64"},
      {"ramp", "--head-dim", "8", "--scaling", "yarn", "--factor", "4", "--original-max", "64"},
      {"check", "--head-dim", "32"},
      {"emit", "--lang", "c", "--head-dim", "8", "--positions", "2"},
      {"accuracy", "--head-dim", "8", "--positions", "5"},
  };
  for (const args& c : commands) {
    INFO(c.front());
    const std::string interleaved = output_of(c + args{"--layout", "interleaved"});
    CHECK(output_of(c + args{"--layout", "gptj"}) == interleaved);
    CHECK(output_of(c + args{"--layout", "norm"}) == interleaved);
    const std::string half = output_of(c + args{"--layout", "half"});
    CHECK(output_of(c + args{"--layout", "neox"}) == half);
    CHECK(output_of(c + args{"--layout", "rotate_half"}) == half);
  }
  // Where the layout changes the numbers, the two differ (the flag is read).
  for (const args& c : {commands[2], commands[7]})
    CHECK(output_of(c + args{"--layout", "gptj"}) != output_of(c + args{"--layout", "neox"}));
  const invocation inv = parse_args(std::vector<std::string_view>{"freqs", "--layout", "neox"});
  CHECK(inv.flags.layout == posenc::rope_layout::half);
}

TEST_CASE("--csv is --format csv in every command that takes --format", "[vocab]") {
  const apply_input in;
  for (const command_case& c : minimal_commands(in.path())) {
    if (!takes_flag(*find_named(commands(), c.name), "--format")) continue;
    INFO(c.name);
    CHECK(output_of(c.base + args{"--csv"}) == output_of(c.base + args{"--format", "csv"}));
  }
}

TEST_CASE("old spellings: the same meaning, one warning each", "[vocab]") {
  struct old_case {
    args old_args;
    args new_args;
    std::string warning;
  };
  const std::vector<old_case> cases = {
      {{"emit", "--lang", "c", "--head-dim", "8", "--max-pos", "4", "--max-pos", "4"},
       {"emit", "--lang", "c", "--head-dim", "8", "--positions", "4"},
       "posenc: warning: --max-pos is now --positions; the old spelling will go\n"},
      {{"dials", "--head-dim", "8", "--context", "100"},
       {"dials", "--head-dim", "8", "--positions", "100"},
       "posenc: warning: --context is now --positions; the old spelling will go\n"},
      {{"alibi", "--heads", "2", "--length=3"},
       {"alibi", "--heads", "2", "--positions", "3"},
       "posenc: warning: --length is now --positions; the old spelling will go\n"},
      {{"sinusoidal", "--dim", "6", "--positions", "3", "--dim", "6"},
       {"sinusoidal", "--head-dim", "6", "--positions", "3"},
       "posenc: warning: --dim is now --head-dim; the old spelling will go\n"},
  };
  for (const old_case& c : cases) {
    INFO(c.warning);
    const posenc_test::cli_result r = run_cli(c.old_args);
    CHECK(r.status == 0);
    CHECK(r.err == c.warning);  // once, even when given twice
    CHECK(r.out == output_of(c.new_args));
  }
  // Two old spellings: one line each, in the order given.
  const posenc_test::cli_result two =
      run_cli({"sinusoidal", "--dim", "4", "--length", "2"});  // --length is --positions now
  CHECK(two.status == 0);
  CHECK(two.err ==
        "posenc: warning: --dim is now --head-dim; the old spelling will go\n"
        "posenc: warning: --length is now --positions; the old spelling will go\n");
  // An old spelling is checked as the flag it now is.
  CHECK(usage_message({"freqs", "--head-dim", "8", "--max-pos", "4"}) ==
        "posenc: --positions is not a flag of freqs (see posenc help freqs)");
}

TEST_CASE("a flag the command does not take is an error naming both", "[vocab]") {
  // Spelled out for a few, then every (command, flag) pair of the tables.
  const std::vector<std::pair<args, std::string>> literal = {
      {{"table", "--head-dim", "8", "--positions", "2", "--svg", "x.svg"},
       "posenc: --svg is not a flag of table (see posenc help table)"},
      {{"emit", "--lang", "c", "--head-dim", "8", "--positions", "2", "--format", "json"},
       "posenc: --format is not a flag of emit (see posenc help emit)"},
      {{"layers", "--preset", "gemma-3-4b", "--seq-len", "10"},
       "posenc: --seq-len is not a flag of layers (see posenc help layers)"},
      {{"sinusoidal", "--head-dim", "4", "--positions", "2", "--scaling", "yarn"},
       "posenc: --scaling is not a flag of sinusoidal (see posenc help sinusoidal)"},
      {{"alibi", "--heads", "2", "--base", "10"},
       "posenc: --base is not a flag of alibi (see posenc help alibi)"},
      {{"check", "--head-dim", "8", "--svg", "x.svg"},
       "posenc: --svg is not a flag of check (see posenc help check)"},
      {{"freqs", "--head-dim", "8", "--positions", "4"},
       "posenc: --positions is not a flag of freqs (see posenc help freqs)"},
      {{"ramp", "--head-dim", "8", "--work-limit", "9"},
       "posenc: --work-limit is not a flag of ramp (see posenc help ramp)"},
  };
  for (const auto& [a, message] : literal) CHECK(usage_message(a) == message);

  const apply_input in;
  std::size_t refused = 0;
  for (const command_case& c : minimal_commands(in.path())) {
    REQUIRE(usage_message(c.base).empty());
    const command_info& info = *find_named(commands(), c.name);
    for (const flag& f : flags()) {
      if (f.name == "--version" || takes_flag(info, f.name)) continue;
      // layers has --preset: --gguf conflicts with it before it is found not to be a flag.
      if (c.name == "layers" && f.name == "--gguf") continue;
      args a = c.base;
      const std::string example(f.example);
      const std::size_t space = example.find(' ');
      a.push_back(example.substr(0, space));
      if (space != std::string::npos) a.push_back(example.substr(space + 1));
      INFO(example);
      CHECK(usage_message(a) == "posenc: " + std::string(f.name) + " is not a flag of " +
                                    std::string(c.name) + " (see posenc help " +
                                    std::string(c.name) + ")");
      ++refused;
    }
  }
  CHECK(refused > 150);
}

TEST_CASE("conflicting flags are errors naming both, in the order given", "[vocab]") {
  const std::vector<std::pair<args, std::string>> cases = {
      {{"freqs", "--preset", "llama-3.1-8b", "--hf-config", "c.json"},
       "posenc: --preset and --hf-config conflict (give one configuration source)"},
      {{"freqs", "--gguf", "m.gguf", "--preset", "llama-3.1-8b"},
       "posenc: --gguf and --preset conflict (give one configuration source)"},
      {{"freqs", "--hf-config", "c.json", "--gguf", "m.gguf"},
       "posenc: --hf-config and --gguf conflict (give one configuration source)"},
      {{"freqs", "--head-dim", "8", "--csv", "--format", "json"},
       "posenc: --csv and --format conflict (--csv is --format csv)"},
      {{"freqs", "--head-dim", "8", "--format", "csv", "--csv"},
       "posenc: --format and --csv conflict (--csv is --format csv)"},
      {{"apply", "--input", "q.npy", "--output", "y.npy", "--csv"},
       "posenc: --output and --csv conflict (--output writes .npy)"},
      {{"apply", "--input", "q.npy", "--format", "text", "--output", "y.npy"},
       "posenc: --format and --output conflict (--output writes .npy)"},
      {{"freqs", "--head-dim", "8", "--partial-rotary-factor", "0.5", "--rotary-dim", "4"},
       "posenc: --partial-rotary-factor and --rotary-dim conflict (both set the rotary width)"},
      {{"freqs", "--head-dim", "8", "--no-truncate", "--truncate"},
       "posenc: --no-truncate and --truncate conflict"},
      {{"apply", "--input", "q.npy", "--no-scale-cos-sin", "--scale-cos-sin"},
       "posenc: --no-scale-cos-sin and --scale-cos-sin conflict"},
  };
  for (const auto& [a, message] : cases) CHECK(usage_message(a) == message);
  // A flag laid over a preset or a file overrides its field: not a conflict.
  CHECK(usage_message({"freqs", "--preset", "llama-3.1-8b", "--base", "1e6"}).empty());
  CHECK(usage_message({"freqs", "--hf-config", "c.json", "--head-dim", "64"}).empty());
  // Every group's members are flags.
  for (const conflict_group& g : conflict_groups())
    for (const std::string_view name : g.names)
      if (!name.empty()) CHECK(find_named(flags(), name) != nullptr);
}

TEST_CASE("malformed or unfit --positions: one line naming the need", "[vocab]") {
  const std::vector<std::pair<args, std::string>> cases = {
      {{"alibi", "--heads", "2", "--positions", "1:4"},
       "posenc: alibi --positions needs 0:N or N (a length: the positions 0 to N-1)"},
      {{"emit", "--lang", "c", "--head-dim", "8", "--positions", "5:9"},
       "posenc: emit --positions needs 0:N or N (a length: the positions 0 to N-1)"},
      {{"emit", "--lang", "c", "--head-dim", "8", "--positions", "0:8:2"},
       "posenc: emit --positions needs 0:N or N (a length: the positions 0 to N-1)"},
      {{"sinusoidal", "--head-dim", "4", "--positions", "1,0"},
       "posenc: sinusoidal --positions needs 0:N or N (a length: the positions 0 to N-1)"},
      {{"dials", "--head-dim", "8", "--positions", "3,4"},
       "posenc: dials --positions needs 0:N or N (a length: the positions 0 to N-1)"},
      {{"table", "--head-dim", "8", "--positions", "0:10:3"},
       "posenc: table --positions needs consecutive positions (N, A:B, or a list such as "
       "4,5,6)"},
      {{"accuracy", "--head-dim", "8", "--positions", "0:4294967296:1048576"},
       ""},  // 4096 positions: the most accuracy takes
      {{"accuracy", "--head-dim", "8", "--positions", "0:4294967296:1048575"},
       "posenc: --positions covers 4097 positions; at most 4096 for accuracy"},
      {{"alibi", "--heads", "2", "--positions", "1048577"},
       "posenc: --positions covers 1048577 positions; at most 1048576 for alibi"},
      {{"table", "--head-dim", "8", "--positions", "x"},
       "posenc: --positions needs N, A:B, A:B:S or a,b,c: integers with 0 <= A < B <= "
       "4294967296, 1 <= S <= 4294967296, each position below 4294967296 (at most 1048576 listed)"},
  };
  for (const auto& [a, message] : cases) CHECK(usage_message(a) == message);
  // The forms, as parse_positions reads them.
  const position_set stepped = parse_positions("3:12:4");
  CHECK(stepped.values() == std::vector<std::uint64_t>{3, 7, 11});
  CHECK(stepped.count() == 3u);
  const position_set n = parse_positions("4294967296");
  CHECK(n.first == 0u);
  CHECK(n.last == 4294967296u);
  CHECK(n.from_zero());
  const position_set list = parse_positions("9,2,5");
  CHECK(list.values() == std::vector<std::uint64_t>{9, 2, 5});
  CHECK(list.first == 2u);
  CHECK(list.last == 10u);
  CHECK_FALSE(list.consecutive());
  CHECK(parse_positions("4,5,6").consecutive());
  // The largest step: one position, however far the range (no overflow past 2^64).
  const position_set far = parse_positions("4294967295:4294967296:4294967296");
  CHECK(far.count() == 1u);
  CHECK(far.values() == std::vector<std::uint64_t>{4294967295});
  CHECK(far.consecutive());
  CHECK_FALSE(parse_positions("1:2").from_zero());
}

TEST_CASE("posenc help CMD and posenc CMD --help: every flag, its default and an example",
          "[vocab]") {
  for (const command_info& c : commands()) {
    const std::string name(c.name);
    INFO(name);
    const std::string help = output_of({"help", name});
    CHECK(output_of({name, "--help"}) == help);
    CHECK(output_of({name, "--head-dim", "8", "-h"}) == help);
    CHECK(help.starts_with("usage: posenc " + name + ' '));
    std::size_t listed = 0;
    for (const flag& f : flags()) {
      const std::string line = "\n  " + std::string(f.name);
      const std::size_t at = help.find(line + ' ') != std::string::npos ? help.find(line + ' ')
                                                                        : help.find(line + '\n');
      if (!takes_flag(c, f.name)) {
        CHECK(at == std::string::npos);
        continue;
      }
      INFO(f.name);
      REQUIRE(at != std::string::npos);
      ++listed;
      // Its default and example follow, before the next flag.
      const std::size_t next = help.find("\n  --", at + 1);
      const std::string entry = help.substr(at, next - at);
      CHECK(entry.find("default: ") != std::string::npos);
      CHECK(entry.find("; e.g. " + std::string(f.name)) != std::string::npos);
    }
    CHECK(listed >= 3u);
  }
  const std::string table = output_of({"help", "table"});
  CHECK(table.find("\n  --positions SET ") != std::string::npos);
  CHECK(table.find("default: required; e.g. --positions 0:4096\n") != std::string::npos);
  CHECK(output_of({"help", "accuracy"})
            .find("default: 1000,65536,1000000; e.g. --positions 1000,65536,1000000\n") !=
        std::string::npos);
  CHECK(output_of({"help"}) == output_of({"--help"}));
  const posenc_test::cli_result unknown = run_cli({"help", "frobnicate"});
  CHECK(unknown.status == 2);
  CHECK(unknown.out.empty());
  CHECK(unknown.err.starts_with("posenc: unknown command 'frobnicate' (freqs, table,"));
}

TEST_CASE("the command table names real flags, once each", "[vocab]") {
  for (const command_info& c : commands()) {
    INFO(c.name);
    std::vector<std::string_view> seen;
    for (const command_flag& f : c.own_flags) {
      CHECK(find_named(flags(), f.name) != nullptr);
      CHECK(std::ranges::count(seen, f.name) == 0);
      seen.push_back(f.name);
    }
  }
  for (const renamed_flag& r : renamed_flags()) {
    CHECK(find_named(flags(), r.name) == nullptr);
    CHECK(find_named(flags(), r.renamed) != nullptr);
  }
}
