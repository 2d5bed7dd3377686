// tools/cli/numbers, options, flags and commands: strict numbers, every flag's form, usage errors
// as one line with exit status 2, the rows of the command and flag tables, the words of the enums.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <posenc/spec/rope.hpp>

#include "cli/commands.hpp"
#include "cli/error.hpp"
#include "cli/flags.hpp"
#include "cli/names.hpp"
#include "cli/numbers.hpp"
#include "cli/options.hpp"
#include "support.hpp"

using namespace posenc::cli;

namespace {
invocation parse(std::vector<std::string_view> args) {
  return parse_args(args);
}

// The message of the usage error (exit 2) that parsing `args` throws ("" if none).
std::string usage_message(std::vector<std::string_view> args) {
  return posenc_test::cli_error_message(exit_usage, [&] { parse_args(args); });
}
}  // namespace

TEST_CASE("parse_uint is strict", "[numbers]") {
  CHECK(parse_uint("0", 0, 10) == 0u);
  CHECK(parse_uint("10", 0, 10) == 10u);
  CHECK(parse_uint("18446744073709551615", 0, UINT64_MAX) == UINT64_MAX);
  for (const char* bad :
       {"", "11", "-1", "+1", " 1", "1 ", "12abc", "0x10", "1e3", "1.0", "18446744073709551616"})
    CHECK_FALSE(parse_uint(bad, 0, 10));
  CHECK_FALSE(parse_uint("0", 1, 10));
}

TEST_CASE("parse_double is strict and finite", "[numbers]") {
  CHECK(parse_double("10000") == 10000.0);
  CHECK(parse_double("-2.5e-3") == -2.5e-3);
  CHECK(parse_double("1e308") == 1e308);
  for (const char* bad : {"", "nan", "NaN", "inf", "-inf", "infinity", "1e999", "12abc", "+1", " 1",
                          "1 ", "0x1p3", "1,5", "--1"})
    CHECK_FALSE(parse_double(bad));
  CHECK(parse_double_list("1,1.5,2") == std::vector<double>{1.0, 1.5, 2.0});
  CHECK(parse_double_list("3") == std::vector<double>{3.0});
  for (const char* bad : {"", ",", "1,", ",1", "1,,2", "1;2", "1,nan"})
    CHECK_FALSE(parse_double_list(bad));
}

TEST_CASE("config flags fill the draft", "[options]") {
  const invocation inv = parse({"freqs",
                                "--head-dim",
                                "128",
                                "--rotary-dim=64",
                                "--base",
                                "500000",
                                "--layout",
                                "interleaved",
                                "--scaling",
                                "yarn",
                                "--factor",
                                "4",
                                "--original-max",
                                "4096",
                                "--max-position-embeddings=16384",
                                "--seq-len",
                                "9000",
                                "--beta-fast",
                                "16",
                                "--beta-slow",
                                "2",
                                "--no-truncate",
                                "--mscale",
                                "0.707",
                                "--mscale-all-dim",
                                "0.707",
                                "--attention-factor",
                                "1.5",
                                "--low-freq-factor",
                                "1",
                                "--high-freq-factor",
                                "4",
                                "--short-factor",
                                "1,2",
                                "--long-factor",
                                "3,4",
                                "--format",
                                "csv"});
  const config_draft& d = inv.flags;
  CHECK(inv.cmd == command::freqs);
  CHECK(inv.format == output_format::csv);
  CHECK(inv.seq_len == 9000u);
  CHECK(d.head_dim == 128u);
  REQUIRE(d.rotary);
  CHECK(d.rotary->dim == 64u);
  CHECK(d.rotary->factor == 0.0);
  CHECK(d.base == 500000.0);
  CHECK(d.layout == posenc::rope_layout::interleaved);
  CHECK(d.scaling == posenc::scaling_type::yarn);
  CHECK(d.factor == 4.0);
  CHECK(d.original_max_position_embeddings == 4096u);
  CHECK(d.max_position_embeddings == 16384u);
  CHECK(d.beta_fast == 16.0);
  CHECK(d.beta_slow == 2.0);
  CHECK(d.truncate == false);
  CHECK(d.mscale == 0.707);
  CHECK(d.mscale_all_dim == 0.707);
  CHECK(d.attention_factor == 1.5);
  CHECK(d.low_freq_factor == 1.0);
  CHECK(d.high_freq_factor == 4.0);
  CHECK(d.short_factor == std::vector<double>{1.0, 2.0});
  CHECK(d.long_factor == std::vector<double>{3.0, 4.0});
  CHECK_FALSE(inv.preset);
  CHECK_FALSE(inv.hf_config);
}

TEST_CASE("--rotary-dim and --partial-rotary-factor: either, not both", "[options]") {
  invocation inv = parse({"freqs", "--partial-rotary-factor", "0.25"});
  REQUIRE(inv.flags.rotary);
  CHECK(inv.flags.rotary->factor == 0.25);
  inv = parse({"freqs", "--rotary-dim", "64"});
  REQUIRE(inv.flags.rotary);
  CHECK(inv.flags.rotary->factor == 0.0);
  CHECK(inv.flags.rotary->dim == 64u);
  CHECK(usage_message({"freqs", "--rotary-dim", "64", "--partial-rotary-factor", "0.25"}) ==
        "posenc: --rotary-dim and --partial-rotary-factor conflict (both set the rotary width)");
}

TEST_CASE("table positions", "[options]") {
  invocation inv = parse({"table", "--positions", "0:4096"});
  REQUIRE(inv.positions);
  CHECK(inv.positions->first == 0u);
  CHECK(inv.positions->last == 4096u);
  inv = parse({"--positions=4294967295:4294967296", "table"});
  CHECK(inv.cmd == command::table);
  CHECK(inv.positions->first == 4294967295u);
  CHECK(inv.positions->last == 4294967296u);
  inv = parse({"table", "--positions", "5:1048581"});
  CHECK(inv.positions->last - inv.positions->first == max_positions);

  const std::string range_msg =
      "posenc: --positions needs N, A:B, A:B:S or a,b,c: integers with 0 <= A < B <= 4294967296, "
      "1 <= S <= 4294967296, each position below 4294967296 (at most 1048576 listed)";
  for (std::string_view bad : {"0",
                               "5:5",
                               "6:5",
                               "-1:5",
                               "0:4294967297",
                               "4294967297",
                               "a:b",
                               "0:",
                               ":5",
                               "0:5:0",
                               "0:5:",
                               "0:5:1:1",
                               "0x0:5",
                               " 0:5",
                               "1,",
                               ",1",
                               "1,,2",
                               "1,4294967296",
                               "1,a",
                               "1:3,4",
                               "",
                               "5:10:4294967297",
                               "0:1:18446744073709551615"})
    CHECK(usage_message({"table", "--positions", bad}) == range_msg);
  CHECK(usage_message({"table", "--positions", "0:1048577"}) ==
        "posenc: --positions covers 1048577 positions; at most 1048576 per call");
  CHECK(usage_message({"table"}) == "posenc: table needs --positions SET (e.g. 0:4096)");
  CHECK(usage_message({"freqs", "--positions", "0:1"}) ==
        "posenc: --positions is not a flag of freqs (see posenc help freqs)");
  for (std::string_view gap : {"0:4:2", "1,3", "2,1", "1,1"})
    CHECK(usage_message({"table", "--positions", gap}) ==
          "posenc: table --positions needs consecutive positions (N, A:B, or a list such as "
          "4,5,6)");
}

TEST_CASE("help, version, sources", "[options]") {
  CHECK(parse({"--help"}).help);
  CHECK(parse({"freqs", "--foo", "-h"}).help);
  CHECK(parse({"--version"}).version);
  invocation inv = parse({"freqs", "--preset", "llama-3.1-8b", "--base", "1e6"});
  CHECK(inv.preset == "llama-3.1-8b");
  CHECK(inv.flags.base == 1e6);
  inv = parse({"table", "--positions", "0:1", "--hf-config=config.json"});
  CHECK(inv.hf_config == "config.json");
  CHECK(usage_message({"freqs", "--preset", "a", "--hf-config", "b"}) ==
        "posenc: --preset and --hf-config conflict (give one configuration source)");
  CHECK(usage_message({"freqs", "--preset", "a", "--preset", "b"}) ==
        "posenc: --preset given twice");
}

TEST_CASE("a flag's value is never another flag", "[options]") {
  // -h or --help in the place of a value is that flag's error, not a request for help.
  CHECK(usage_message({"freqs", "--head-dim", "-h"}) ==
        "posenc: --head-dim needs a value, not the flag -h (write --head-dim=VALUE for a value "
        "that starts with --)");
  CHECK(usage_message({"freqs", "--hf-config", "--help"})
            .starts_with("posenc: --hf-config needs a value, not the flag --help"));
  CHECK(usage_message({"decay", "--max-distance", "4", "--svg", "--csv"})
            .starts_with("posenc: --svg needs a value, not the flag --csv"));
  CHECK(usage_message({"emit", "--lang", "c", "--positions", "4", "--name", "--head-dim", "8"})
            .starts_with("posenc: --name needs a value, not the flag --head-dim"));
  // Help where a flag stands still wins; negative numbers and --flag=--text stay values.
  CHECK(parse({"freqs", "--head-dim", "8", "-h"}).help);
  CHECK(parse({"freqs", "--hf-config", "x.json", "--help"}).help);
  CHECK(parse({"freqs", "--mscale", "-0.5"}).flags.mscale == -0.5);
  CHECK(parse({"decay", "--max-distance", "4", "--svg=--csv"}).svg == "--csv");
}

TEST_CASE("sinusoidal: the padding row is one of the rows", "[options]") {
  CHECK(
      usage_message({"sinusoidal", "--head-dim", "4", "--positions", "3", "--padding-idx", "5"}) ==
      "posenc: --padding-idx 5 is not one of the rows 0 to 2 that --positions 3 gives");
  CHECK(
      usage_message({"sinusoidal", "--head-dim", "4", "--positions", "3", "--padding-idx", "3"}) ==
      "posenc: --padding-idx 3 is not one of the rows 0 to 2 that --positions 3 gives");
  CHECK(parse({"sinusoidal", "--head-dim", "4", "--positions", "3", "--padding-idx", "2"})
            .additive.padding_idx == 2u);
}

TEST_CASE("usage errors name the problem in one line", "[options]") {
  struct bad_case {
    std::vector<std::string_view> args;
    std::string message;
  };
  const std::vector<bad_case> cases = {
      {{},
       "posenc: missing command (freqs, table, apply, alibi, sinusoidal, decay, dials, ramp, "
       "check, emit, accuracy, layers, entropy or t5-bias); see posenc --help"},
      {{"--head-dim", "128"},
       "posenc: missing command (freqs, table, apply, alibi, sinusoidal, decay, dials, ramp, "
       "check, emit, accuracy, layers, entropy or t5-bias); see posenc --help"},
      {{"frobnicate"},
       "posenc: unknown command 'frobnicate' (freqs, table, apply, alibi, sinusoidal, decay, "
       "dials, ramp, check, emit, accuracy, layers, entropy or t5-bias)"},
      {{"freqs", "table"}, "posenc: unexpected argument 'table'"},
      {{"freqs", "--foo"}, "posenc: unknown flag --foo"},
      {{"freqs", "--foo=1"}, "posenc: unknown flag --foo"},
      {{"freqs", "-x"}, "posenc: unknown flag -x"},
      {{"freqs", "--head-dim", "12abc"}, "posenc: --head-dim needs a positive integer"},
      {{"freqs", "--head-dim", "0"}, "posenc: --head-dim needs a positive integer"},
      {{"freqs", "--head-dim", "-128"}, "posenc: --head-dim needs a positive integer"},
      {{"freqs", "--head-dim=", "128"}, "posenc: --head-dim needs a positive integer"},
      {{"freqs", "--head-dim", "65537"}, "posenc: --head-dim must be at most 65536"},
      {{"freqs", "--head-dim"}, "posenc: --head-dim needs a value"},
      {{"freqs", "--rotary-dim", "1.5"}, "posenc: --rotary-dim needs a positive integer"},
      {{"freqs", "--partial-rotary-factor", "0"},
       "posenc: --partial-rotary-factor needs a number in (0, 1]"},
      {{"freqs", "--partial-rotary-factor", "1.01"},
       "posenc: --partial-rotary-factor needs a number in (0, 1]"},
      {{"freqs", "--base", "nan"}, "posenc: --base needs a finite number"},
      {{"freqs", "--base", "inf"}, "posenc: --base needs a finite number"},
      {{"freqs", "--base", "1e999"}, "posenc: --base needs a finite number"},
      {{"freqs", "--factor", "2x"}, "posenc: --factor needs a finite number"},
      {{"freqs", "--layout", "rotary"},
       "posenc: --layout needs interleaved (gptj, norm) or half (neox, rotate_half); sinusoidal: "
       "paper or split"},
      {{"freqs", "--scaling", "rope"},
       "posenc: --scaling needs one of none, linear, ntk, dynamic, yarn, llama3, longrope"},
      {{"freqs", "--original-max", "4294967296"},
       "posenc: --original-max needs a positive integer below 2^32"},
      {{"freqs", "--max-position-embeddings", "0"},
       "posenc: --max-position-embeddings needs a positive integer below 2^32"},
      {{"freqs", "--seq-len", "-1"},
       "posenc: --seq-len needs a non-negative integer (at most 2^53)"},
      {{"freqs", "--no-truncate=yes"}, "posenc: --no-truncate takes no value"},
      {{"freqs", "--short-factor", "1,,2"},
       "posenc: --short-factor needs comma-separated finite numbers"},
      {{"freqs", "--long-factor", "1,inf"},
       "posenc: --long-factor needs comma-separated finite numbers"},
      {{"freqs", "--format", "xml"}, "posenc: --format needs json, csv or text"},
      {{"freqs", "--preset", ""}, "posenc: --preset needs a preset name"},
      {{"freqs", "--hf-config="}, "posenc: --hf-config needs a file name"},
      {{"freqs", "--bad\nflag"}, "posenc: unknown flag --bad?flag"},
  };
  for (const bad_case& c : cases) {
    INFO("args: " << c.args.size());
    const std::string m = usage_message(c.args);
    CHECK(m == c.message);
    CHECK(m.find('\n') == std::string::npos);
  }
}

TEST_CASE("the spec's layout_name and scaling_name are the words --layout and --scaling take",
          "[options]") {
  for (const posenc::rope_layout l :
       {posenc::rope_layout::interleaved, posenc::rope_layout::half}) {
    const invocation inv = parse({"freqs", "--layout", posenc::layout_name(l)});
    REQUIRE(inv.flags.layout);
    CHECK(*inv.flags.layout == l);
  }
  using posenc::scaling_type;
  for (const scaling_type t :
       {scaling_type::none, scaling_type::linear, scaling_type::ntk, scaling_type::dynamic,
        scaling_type::yarn, scaling_type::llama3, scaling_type::longrope}) {
    const invocation inv = parse({"freqs", "--scaling", posenc::scaling_name(t)});
    REQUIRE(inv.flags.scaling);
    CHECK(*inv.flags.scaling == t);
  }
  CHECK(std::string_view(posenc::scaling_name(static_cast<scaling_type>(200))) == "?");
}

TEST_CASE("one row per command and per flag", "[options]") {
  std::vector<std::string_view> names;
  for (const command_info& c : commands()) names.push_back(c.name);
  CHECK(names == std::vector<std::string_view>{"freqs", "table", "apply", "alibi", "sinusoidal",
                                               "decay", "dials", "ramp", "check", "emit",
                                               "accuracy", "layers", "entropy", "t5-bias"});
  for (const command_info& c : commands()) CHECK(&command_of(c.id) == &c);
  std::vector<std::string_view> flag_names;
  for (const flag& f : flags()) {
    INFO(f.name);
    CHECK(f.name.starts_with("--"));
    CHECK(f.set != nullptr);
    CHECK(std::ranges::count(flag_names, f.name) == 0);
    flag_names.push_back(f.name);
  }
  CHECK(flag_names.size() == 69u);  // and --help, -h (help_flags)
}

TEST_CASE("the words of the enums", "[options]") {
  CHECK(scaling_names(posenc::scaling_type::none) == "none");
  CHECK(scaling_names(posenc::scaling_type::longrope) == "longrope");
  CHECK(scaling_names.find("ntk") == posenc::scaling_type::ntk);
  CHECK_FALSE(scaling_names.find("default"));
  CHECK(rope_layout_names.find("half") == posenc::rope_layout::half);
  CHECK(sinusoidal_layout_names(posenc::sinusoidal_layout::split) == "split");
  CHECK(alibi_variant_names.find("symmetric") == posenc::alibi_variant::symmetric);
  CHECK(alibi_slope_names(posenc::alibi_slope_kind::bloom) == "bloom");
  const invocation inv =
      parse({"sinusoidal", "--head-dim", "4", "--positions", "2", "--layout", "split"});
  CHECK(inv.additive.layout == posenc::sinusoidal_layout::split);
  CHECK_FALSE(inv.flags.layout);
  CHECK(parse({"emit", "--lang", "cpp", "--positions", "4", "--table", "simd"}).emit.table ==
        emit_table::simd);
}
