// `posenc apply` with .npy files, in process (tools/cli/apply, tools/cli/npy). The files are
// built here byte by byte from the format's description (numpy/lib/format.py), not by the tool's
// writer. Checked:
// - every malformed .npy (Fortran order, other dtypes, big-endian, object arrays, truncated data
//   or header, bytes after the data, shapes whose product overflows or exceeds --max-elements, a
//   header over 10000 bytes, bad magic, version, header syntax, non-finite values) and bad
//   position ids: exit 1, one line naming the file, nothing on stdout, no --output file, and an
//   existing one unchanged;
// - the flags that go together or not (exit 2);
// - laws between calls: the same tensor as .npy and as JSON gives the same bits; BHTD and BTHD
//   (the transposed tensor) give transposed bits, and each batch row the bits of a THD call with
//   its positions; k in the same call == k alone; without --seq-len, seq_len is max position + 1
//   (the bits of --seq-len max+1, not those of --seq-len 0, for longrope past the original
//   context); --no-scale-cos-sin divides out exactly the attention factor of a power-of-two;
// - --output writes numpy's own header bytes (those np.save writes for the same array).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include "support.hpp"

namespace {
using posenc_test::run_cli;
using result = posenc_test::cli_result;

using posenc_test::scratch_file;
using posenc_test::scratch_path;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A .npy file: magic, version, little-endian header length, `dict` padded with spaces and '\n' to
// a multiple of 64 bytes, then `data`.
std::string npy(const std::string& dict, const std::string& data, int major = 1) {
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  const std::size_t unpadded = 8 + len_bytes + dict.size() + 1;
  const std::size_t total = (unpadded + 63) / 64 * 64;
  const std::string header = dict + std::string(total - unpadded, ' ') + "\n";
  std::string s = "\x93NUMPY";
  s += static_cast<char>(major);
  s += '\0';
  for (std::size_t k = 0; k < len_bytes; ++k)
    s += static_cast<char>((header.size() >> (8 * k)) & 0xff);
  return s + header + data;
}

std::string dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

// Little-endian bytes of float32 values / of int64 values.
std::string f32_bytes(const std::vector<float>& v) {
  std::string s;
  for (const float x : v) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    for (int k = 0; k < 4; ++k) s += static_cast<char>((u >> (8 * k)) & 0xff);
  }
  return s;
}
std::string i64_bytes(const std::vector<std::int64_t>& v) {
  std::string s;
  for (const std::int64_t x : v)
    for (int k = 0; k < 8; ++k)
      s += static_cast<char>((static_cast<std::uint64_t>(x) >> (8 * k)) & 0xff);
  return s;
}

std::vector<float> inputs(std::size_t n, std::uint32_t seed) {
  std::vector<float> x(n);
  for (float& v : x) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<float>(seed >> 8) * 0x1p-22f - 2.0f;
  }
  return x;
}

std::string json_numbers(const std::vector<float>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + posenc_test::f32_text(v[i]);
  return s + "]";
}

// The numbers of {"y": [...]} (and the key's array given).
std::vector<std::string> numbers_of(const std::string& out, const std::string& key = "y") {
  const std::size_t start = out.find("\"" + key + "\": [");
  REQUIRE(start != std::string::npos);
  const std::size_t open = out.find('[', start), close = out.find(']', open);
  std::vector<std::string> v;
  for (const std::string& n : posenc_test::split(out.substr(open + 1, close - open - 1), ','))
    v.push_back(n.substr(n.find_first_not_of(' ')));
  return v;
}

result apply(const std::vector<std::string>& flags) {
  std::vector<std::string> args{"apply"};
  args.insert(args.end(), flags.begin(), flags.end());
  return run_cli(args);
}

const std::string ok_data = f32_bytes(inputs(8, 1));  // shape (1, 2, 4)

}  // namespace

TEST_CASE("apply: malformed .npy files exit 1 with one line, no output, no file", "[apply_npy]") {
  struct error_case {
    std::string bytes;
    std::vector<std::string> flags;
    std::string message;  // the line after "posenc: FILE: "
  };
  const std::string d124 = dict("<f4", "(1, 2, 4)");
  const std::string huge_header = npy(std::string(10001, ' '), "", 2);
  const std::vector<error_case> cases{
      {npy(dict("<f4", "(1, 2, 4)", true), ok_data),
       {},
       "Fortran-order arrays are not supported; save np.ascontiguousarray(x)"},
      {npy(dict("<f8", "(1, 2, 4)"), ok_data + ok_data),
       {},
       "dtype '<f8' is not supported (float32 '<f4', float16 '<f2')"},
      {npy(dict("<i4", "(1, 2, 4)"), ok_data),
       {},
       "dtype '<i4' is not supported (float32 '<f4', float16 '<f2')"},
      {npy(dict(">f4", "(1, 2, 4)"), ok_data),
       {},
       "big-endian data ('>f4') is not supported; save it little-endian (float32 '<f4', float16 "
       "'<f2')"},
      {npy(dict("|O", "(2,)"), std::string(16, '\0')),
       {},
       "object arrays ('|O') are not supported (float32 '<f4', float16 '<f2')"},
      {npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", ok_data),
       {},
       "bad .npy header: structured arrays (a list descr) are not supported"},
      {npy(d124, ok_data.substr(0, 31)), {}, "truncated: 31 of the 32 data bytes its shape needs"},
      {npy(d124, ""), {}, "truncated: 0 of the 32 data bytes its shape needs"},
      {npy(d124, ok_data + "x"), {}, "bytes after the data its shape needs"},
      {npy(d124, ok_data).substr(0, 40), {}, "truncated .npy header"},
      {std::string("\x93NUMPY\x01", 7), {}, "not a .npy file (no \\x93NUMPY magic)"},
      {std::string("\x93NUMPX\x01\x00\x10\x00", 10) + std::string(16, ' '),
       {},
       "not a .npy file (no \\x93NUMPY magic)"},
      {std::string("\x93NUMPY\x03\x00", 8) + std::string(8, ' '),
       {},
       ".npy format version 3.0 is not supported (1.0, 2.0)"},
      {std::string("\x93NUMPY\x01\x01", 8) + std::string(8, ' '),
       {},
       ".npy format version 1.1 is not supported (1.0, 2.0)"},
      {huge_header, {}, "the .npy header has 10036 bytes; at most 10000"},
      // The product overflows 64 bits; without a check it wraps to 0 or a small count.
      {npy(dict("<f4", "(4294967296, 4294967296, 4)"), ok_data),
       {},
       "more than 16777216 elements; raise the limit with --max-elements N"},
      {npy(dict("<f4", "(9223372036854775807, 2, 4)"), ok_data),
       {},
       "more than 16777216 elements; raise the limit with --max-elements N"},
      {npy(dict("<f4", "(92233720368547758070, 2, 4)"), ok_data),
       {},
       "bad .npy header: a dimension of 2^63 or more"},
      {npy(d124, ok_data), {"--max-elements", "7"}, "more than 7 elements; raise the limit"},
      {npy(dict("<f4", "(1, 2, 4)").substr(1), ok_data), {}, "bad .npy header: expected '{'"},
      {npy("{'descr': '<f4', 'shape': (1, 2, 4), }", ok_data),
       {},
       "bad .npy header: missing 'descr', 'fortran_order' or 'shape'"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 4), 'x': 1, }", ok_data),
       {},
       "bad .npy header: unknown key 'x' (descr, fortran_order, shape)"},
      {npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (8,), }", ok_data),
       {},
       "bad .npy header: the key 'descr' appears twice"},
      {npy(dict("<f4", "(8)"), ok_data),
       {},
       "bad .npy header: 'shape' must be a tuple ((n,) for one dimension)"},
      {npy(dict("<f4", "(1, -2, 4)"), ok_data),
       {},
       "bad .npy header: 'shape' must be a tuple of non-negative integers"},
      {npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (1, 2, 4), }", ok_data),
       {},
       "bad .npy header: 'fortran_order' must be True or False"},
      {npy(dict("<f4", "(1, 0, 4)"), ""), {}, "\"shape\" must be [tokens, heads, head_dim]"},
      {npy(dict("<f4", "(8,)"), ok_data), {}, "\"shape\" must be [tokens, heads, head_dim]"},
      {npy(dict("<f4", "(1, 1, 2, 4)"), ok_data),
       {},
       "a 4-dimensional tensor needs --shape-order BHTD or BTHD"},
      {npy(d124, ok_data), {"--shape-order", "BHTD"}, "--shape-order BHTD needs 4 dimensions"},
      {npy(d124, f32_bytes({1, 2, 3, 4, 5, 6, 7, INFINITY})), {}, "x[7] is not a finite float32"},
      {npy(dict("<f2", "(1, 2, 4)"), std::string(14, '\0') + std::string("\x00\x7e", 2)),
       {},
       "x[7] is not a finite float16"},
  };
  for (const error_case& c : cases) {
    const scratch_file f(c.bytes, "t.npy");
    const std::string out = scratch_path("out.npy");
    std::vector<std::string> flags{"--input", f.path(), "--output", out};
    flags.insert(flags.end(), c.flags.begin(), c.flags.end());
    const result r = apply(flags);
    INFO(c.message << " -> " << r.err);
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("posenc: " + f.path() + ": " + c.message, 0) == 0);
    CHECK(r.err.find('\n') == r.err.size() - 1);
    CHECK(!std::filesystem::exists(out));
  }
}

TEST_CASE("apply: bad position ids and k exit 1; an existing --output stays", "[apply_npy]") {
  const scratch_file q(npy(dict("<f4", "(2, 1, 2, 4)"), f32_bytes(inputs(16, 2))), "t.npy");
  const scratch_file existing("keep", "existing.npy");
  struct error_case {
    std::string bytes;
    std::string message;
  };
  const std::vector<error_case> cases{
      {npy(dict("<i8", "(3,)"), i64_bytes({0, 1, 2})),
       "position ids must have shape [2] or [2, 2] ([tokens] or [batch, tokens] of the input)"},
      {npy(dict("<i8", "(2, 2)"), i64_bytes({0, 1, -1, 2})),
       "position_ids[2] must be an integer with 0 <= p < 4294967296"},
      {npy(dict("<i8", "(2,)"), i64_bytes({0, std::int64_t{1} << 32})),
       "position_ids[1] must be an integer with 0 <= p < 4294967296"},
      {npy(dict("<f4", "(2,)"), f32_bytes({0, 1})),
       "dtype '<f4' is not supported (int64 '<i8', int32 '<i4')"},
      {npy(dict(">i8", "(2,)"), std::string(16, '\0')), "big-endian data ('>i8')"},
      {npy(dict("<i8", "(2,)"), std::string(15, '\0')), "truncated: 15 of the 16 data bytes"},
  };
  for (const error_case& c : cases) {
    const scratch_file ids(c.bytes, "ids.npy");
    const result r = apply({"--input", q.path(), "--shape-order", "BHTD", "--position-ids",
                            ids.path(), "--output", existing.path()});
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("posenc: " + ids.path() + ": " + c.message, 0) == 0);
    CHECK(read_file(existing.path()) == "keep");
  }
  // k must have q's batch, tokens and head_dim, and no positions of its own.
  const scratch_file k_bad(npy(dict("<f4", "(2, 1, 3, 4)"), f32_bytes(inputs(24, 3))), "t.npy");
  const std::string out_k = scratch_path("k.npy");
  result r = apply({"--input", q.path(), "--input-k", k_bad.path(), "--shape-order", "BHTD",
                    "--output", existing.path(), "--output-k", out_k});
  CHECK(r.status == 1);
  CHECK(r.err == "posenc: " + k_bad.path() +
                     ": k must have q's batch, tokens and head_dim (2, 2, 4); its heads may "
                     "differ\n");
  CHECK(read_file(existing.path()) == "keep");
  CHECK(!std::filesystem::exists(out_k));
  const scratch_file qj("{\"x\": [1, 0, 0, 0], \"shape\": [1, 1, 4]}", "q.json");
  const scratch_file kj("{\"x\": [1, 0, 0, 0], \"shape\": [1, 1, 4], \"positions\": [3]}",
                        "k.json");
  r = apply({"--input", qj.path(), "--input-k", kj.path()});
  CHECK(r.status == 1);
  CHECK(r.err ==
        "posenc: " + kj.path() + ": k takes the positions of --input (or --position-ids)\n");
  const scratch_file pj("{\"x\": [1, 0, 0, 0], \"shape\": [1, 1, 4], \"positions\": [3]}",
                        "p.json");
  const scratch_file ids(npy(dict("<i8", "(1,)"), i64_bytes({0})), "ids.npy");
  r = apply({"--input", pj.path(), "--position-ids", ids.path()});
  CHECK(r.status == 1);
  CHECK(r.err ==
        "posenc: " + pj.path() + ": \"positions\" and --position-ids conflict; give one\n");
  // A float16 result past 65504 is an error, not an infinity in the file.
  const scratch_file big(npy(dict("<f2", "(1, 1, 2)"), std::string("\xff\x7b\xff\x7b", 4)),
                         "t.npy");
  const scratch_file pos1(npy(dict("<i8", "(1,)"), i64_bytes({1})), "p1.npy");
  r = apply({"--input", big.path(), "--position-ids", pos1.path(), "--base", "4", "--output",
             existing.path()});
  CHECK(r.status == 1);
  CHECK(r.err.rfind("posenc: y[1] overflows float16", 0) == 0);
  CHECK(read_file(existing.path()) == "keep");
}

TEST_CASE("apply: flags that go together (exit 2)", "[apply_npy]") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"freqs", "--head-dim", "8", "--shape-order", "BHTD"},
       "posenc: --shape-order is not a flag of freqs (see posenc help freqs)\n"},
      {{"table", "--head-dim", "8", "--positions", "0:2", "--no-scale-cos-sin"},
       "posenc: --no-scale-cos-sin is not a flag of table (see posenc help table)\n"},
      {{"apply", "--input", "q.npy", "--output-k", "k.npy"},
       "posenc: --output-k needs --input-k\n"},
      {{"apply", "--input", "q.npy", "--input-k", "k.npy", "--output", "y.npy"},
       "posenc: with --input-k, give both --output and --output-k, or neither\n"},
      {{"apply", "--input", "q.npy", "--input-k", "k.npy", "--format", "csv"},
       "posenc: --format csv and text print one tensor; with --input-k use json or "
       "--output/--output-k\n"},
      {{"apply", "--input", "q.npy", "--output", "y.npy", "--format", "json"},
       "posenc: --output and --format conflict (--output writes .npy)\n"},
      {{"apply", "--input", "q.npy", "--format", "json", "--output", "y.npy"},
       "posenc: --format and --output conflict (--output writes .npy)\n"},
      {{"apply", "--input", "q.npy", "--scale-cos-sin", "--no-scale-cos-sin"},
       "posenc: --scale-cos-sin and --no-scale-cos-sin conflict\n"},
      {{"apply", "--input", "q.npy", "--input-k", "k.npy", "--output", "y.npy", "--output-k",
        "y.npy"},
       "posenc: --output and --output-k name the same file\n"},
      {{"apply", "--input", "q.npy", "--shape-order", "bhtd"},
       "posenc: --shape-order needs THD, BHTD or BTHD\n"},
  };
  for (const auto& [args, message] : cases) {
    const result r = run_cli(args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == message);
  }
}

TEST_CASE("apply: laws between .npy, JSON, shape orders, batch rows and k", "[apply_npy]") {
  constexpr std::size_t B = 2, H = 3, T = 5, D = 8;
  const std::vector<float> x = inputs(B * H * T * D, 7);  // BHTD
  std::vector<float> xt(x.size());                        // the same tensor as BTHD
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t c = 0; c < D; ++c)
          xt[((b * T + t) * H + h) * D + c] = x[((b * H + h) * T + t) * D + c];
  const std::vector<std::int64_t> pos{0, 3, 9, 70000, 4, 1, 1, 2, 8, 5};
  const scratch_file ids(npy(dict("<i8", "(2, 5)"), i64_bytes(pos)), "ids.npy");
  const std::vector<std::string> config{"--head-dim", "8",        "--base",
                                        "100",        "--layout", "interleaved"};
  const auto run_ok = [&](std::vector<std::string> flags) {
    flags.insert(flags.end(), config.begin(), config.end());
    const result r = apply(flags);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return numbers_of(r.out);
  };
  const scratch_file bhtd(npy(dict("<f4", "(2, 3, 5, 8)"), f32_bytes(x)), "t.npy");
  const scratch_file bthd(npy(dict("<f4", "(2, 5, 3, 8)"), f32_bytes(xt)), "t.npy");
  const std::vector<std::string> yb =
      run_ok({"--input", bhtd.path(), "--shape-order", "BHTD", "--position-ids", ids.path()});
  const std::vector<std::string> yt =
      run_ok({"--input", bthd.path(), "--shape-order", "BTHD", "--position-ids", ids.path()});
  REQUIRE(yb.size() == x.size());
  REQUIRE(yt.size() == x.size());
  std::size_t transposed = 0, rows = 0;
  for (std::size_t b = 0; b < B; ++b) {
    // Batch row b alone: a THD tensor [T, H, D] with row b's positions, as JSON.
    std::vector<float> row(T * H * D);
    std::copy_n(xt.begin() + static_cast<std::ptrdiff_t>(b * T * H * D), row.size(), row.begin());
    std::string positions;
    for (std::size_t t = 0; t < T; ++t)
      positions += (t ? ", " : "") + std::to_string(pos[b * T + t]);
    const scratch_file j("{\"x\": " + json_numbers(row) + ", \"shape\": [5, 3, 8], " +
                             "\"positions\": [" + positions + "]}",
                         "row.json");
    const std::vector<std::string> yr = run_ok({"--input", j.path()});
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t c = 0; c < D; ++c) {
          const std::size_t i_t = ((b * T + t) * H + h) * D + c;
          transposed += yb[((b * H + h) * T + t) * D + c] == yt[i_t];
          rows += yr[(t * H + h) * D + c] == yt[i_t];
        }
  }
  CHECK(transposed == x.size());
  CHECK(rows == x.size());
  // The positions shared by every row ([tokens]) == the same positions given per row.
  const scratch_file shared(npy(dict("<i8", "(5,)"), i64_bytes({0, 3, 9, 70000, 4})), "s.npy");
  const scratch_file twice(
      npy(dict("<i8", "(2, 5)"), i64_bytes({0, 3, 9, 70000, 4, 0, 3, 9, 70000, 4})), "t.npy");
  CHECK(
      run_ok({"--input", bhtd.path(), "--shape-order", "BHTD", "--position-ids", shared.path()}) ==
      run_ok({"--input", bhtd.path(), "--shape-order", "BHTD", "--position-ids", twice.path()}));
  // k in the same call (GQA: other heads) == k alone with the same positions.
  const scratch_file k(npy(dict("<f4", "(2, 1, 5, 8)"), f32_bytes(inputs(B * T * D, 9))), "t.npy");
  std::vector<std::string> both_flags{"apply",     "--input",        bhtd.path(),
                                      "--input-k", k.path(),         "--shape-order",
                                      "BHTD",      "--position-ids", ids.path()};
  both_flags.insert(both_flags.end(), config.begin(), config.end());
  const result both = run_cli(both_flags);
  REQUIRE(both.status == 0);
  CHECK(numbers_of(both.out, "y") == yb);
  CHECK(numbers_of(both.out, "y_k") ==
        run_ok({"--input", k.path(), "--shape-order", "BHTD", "--position-ids", ids.path()}));
  // The same THD tensor as .npy and as JSON.
  const std::vector<float> small = inputs(3 * 2 * 8, 11);
  const scratch_file n(npy(dict("<f4", "(3, 2, 8)"), f32_bytes(small)), "t.npy");
  const scratch_file j("{\"x\": " + json_numbers(small) + ", \"shape\": [3, 2, 8]}", "x.json");
  CHECK(run_ok({"--input", n.path()}) == run_ok({"--input", j.path()}));
}

TEST_CASE("apply: seq_len is max position + 1 unless --seq-len gives it", "[apply_npy]") {
  // longrope, original context 8, long factors 4x the short ones: row 1 reaches position 8, so the
  // call's seq_len is 9 > 8 and both rows take the long factors.
  const std::vector<std::string> config{"--head-dim",
                                        "4",
                                        "--scaling",
                                        "longrope",
                                        "--original-max",
                                        "8",
                                        "--max-position-embeddings",
                                        "32",
                                        "--short-factor",
                                        "1,1",
                                        "--long-factor",
                                        "4,4"};
  const scratch_file q(npy(dict("<f4", "(2, 1, 2, 4)"), f32_bytes(inputs(16, 5))), "t.npy");
  const scratch_file ids(npy(dict("<i8", "(2, 2)"), i64_bytes({1, 2, 7, 8})), "ids.npy");
  const auto run_ok = [&](std::vector<std::string> flags) {
    flags.insert(flags.end(),
                 {"--input", q.path(), "--shape-order", "BHTD", "--position-ids", ids.path()});
    flags.insert(flags.end(), config.begin(), config.end());
    const result r = apply(flags);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return numbers_of(r.out);
  };
  const auto derived = run_ok({});
  CHECK(derived == run_ok({"--seq-len", "9"}));
  CHECK(derived != run_ok({"--seq-len", "0"}));
  CHECK(derived != run_ok({"--seq-len", "8"}));  // within the original context: short factors
}

TEST_CASE("apply: --no-scale-cos-sin leaves out exactly the attention factor", "[apply_npy]") {
  // An explicit attention factor of 2 (a power of two: scaling cos and sin by it is exact), so
  // the scaled result is exactly twice the unscaled one, element by element.
  const scratch_file q(npy(dict("<f4", "(3, 2, 4)"), f32_bytes(inputs(24, 13))), "t.npy");
  const std::vector<std::string> config{"--input",        q.path(), "--head-dim",         "4",
                                        "--scaling",      "yarn",   "--factor",           "4",
                                        "--original-max", "16",     "--attention-factor", "2"};
  std::vector<std::string> plain_flags = config, unscaled_flags = config;
  unscaled_flags.push_back("--no-scale-cos-sin");
  const result scaled = apply(plain_flags), unscaled = apply(unscaled_flags);
  REQUIRE(scaled.status == 0);
  REQUIRE(unscaled.status == 0);
  const auto a = numbers_of(scaled.out), b = numbers_of(unscaled.out);
  REQUIRE(a.size() == 24);
  REQUIRE(b.size() == 24);
  std::size_t doubled = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    doubled += std::stof(a[i]) == 2.0f * std::stof(b[i]) && std::stof(b[i]) != 0.0f;
  CHECK(doubled == 24);
  // --scale-cos-sin is the default, spelled out.
  std::vector<std::string> explicit_flags = config;
  explicit_flags.push_back("--scale-cos-sin");
  CHECK(numbers_of(apply(explicit_flags).out) == a);
}

TEST_CASE("apply: --output writes numpy's header and the bits of the JSON output", "[apply_npy]") {
  const std::vector<float> x = inputs(3 * 2 * 8, 17);
  const scratch_file q(npy(dict("<f4", "(3, 2, 8)"), f32_bytes(x)), "t.npy");
  const std::string out = scratch_path("y.npy");
  const result r = apply({"--input", q.path(), "--output", out, "--base", "50"});
  REQUIRE(r.status == 0);
  CHECK(r.out.empty());
  const std::string bytes = read_file(out);
  std::filesystem::remove(out);
  // np.save(f, np.zeros((3, 2, 8), np.float32)) writes exactly this header (numpy 1.24).
  const std::string header = std::string("\x93NUMPY\x01\x00v\x00", 10) +
                             "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2, 8), }" +
                             std::string(55, ' ') + "\n";
  REQUIRE(bytes.size() == header.size() + 4 * x.size());
  CHECK(bytes.substr(0, header.size()) == header);
  const std::vector<std::string> json =
      numbers_of(apply({"--input", q.path(), "--base", "50"}).out);
  REQUIRE(json.size() == x.size());
  std::size_t same = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::uint32_t u = 0;
    for (std::size_t k = 0; k < 4; ++k)
      u |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[header.size() + 4 * i + k]))
           << (8 * k);
    float v;
    std::memcpy(&v, &u, 4);
    same += posenc_test::f32_text(v) == json[i];
  }
  CHECK(same == x.size());
}
