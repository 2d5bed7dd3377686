#include "cli/emit.hpp"

#include <posenc/frequencies/rope.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/math/angle.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/tables/runtime_rope_cache.hpp>
#include <posenc/version.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string_view>

#include "cli/error.hpp"
#include "cli/output.hpp"
#include "cli/run.hpp"

namespace posenc::cli {

namespace {

std::string list_text(std::span<const double> v) {
  std::string s;
  // Appended piece by piece: `const char* + std::string&&` makes GCC 12 at -O3 report a
  // -Wrestrict false positive inside basic_string::insert (GCC PR 105329).
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (k != 0) s += ',';
    s += format_double(v[k]);
  }
  return s;
}

// "0x1.921fb6p+1f": the float's exact value as a C99 / C++17 hex literal.
std::string hex_literal(float x) {
  char buf[48];
  const auto r = std::to_chars(buf, buf + sizeof buf, std::fabs(x), std::chars_format::hex);
  return std::string(std::signbit(x) ? "-0x" : "0x") +
         std::string(buf, static_cast<std::size_t>(r.ptr - buf)) + "f";
}

// The spacing of floats at the float nearest to v (subnormal spacing near 0).
double float_ulp(double v) {
  const float f = static_cast<float>(std::fabs(v));
  if (f < 0x1p-126f) return 0x1p-149;
  int e = 0;
  static_cast<void>(std::frexp(f, &e));  // f in [2^(e-1), 2^e)
  return std::ldexp(1.0, e - 24);
}

// |f - (hi + lo)|: f - hi is exact when they are within a factor 2 (Sterbenz), otherwise rounded
// once, a relative error of 2^-53 on a difference that is then far larger than lo.
double dd_distance(float f, math::dd v) {
  return std::fabs((static_cast<double>(f) - v.hi) - v.lo);
}

bool valid_identifier(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  const auto alpha = [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
  };
  if (!alpha(s[0])) return false;
  for (char ch : s)
    if (!alpha(ch) && !(ch >= '0' && ch <= '9')) return false;
  // Reserved in C and C++: a leading "__" or "_" and an upper-case letter.
  if (s[0] == '_' && s.size() > 1 && (s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z'))) return false;
  return true;
}

bool cpp_keyword(std::string_view s) {
  static constexpr std::array<std::string_view, 97> words = {
      "alignas",       "alignof",     "and",
      "and_eq",        "asm",         "auto",
      "bitand",        "bitor",       "bool",
      "break",         "case",        "catch",
      "char",          "char8_t",     "char16_t",
      "char32_t",      "class",       "compl",
      "concept",       "const",       "consteval",
      "constexpr",     "constinit",   "const_cast",
      "continue",      "co_await",    "co_return",
      "co_yield",      "decltype",    "default",
      "delete",        "do",          "double",
      "dynamic_cast",  "else",        "enum",
      "explicit",      "export",      "extern",
      "false",         "float",       "for",
      "friend",        "goto",        "if",
      "inline",        "int",         "long",
      "mutable",       "namespace",   "new",
      "noexcept",      "not",         "not_eq",
      "nullptr",       "operator",    "or",
      "or_eq",         "private",     "protected",
      "public",        "register",    "reinterpret_cast",
      "requires",      "return",      "short",
      "signed",        "sizeof",      "static",
      "static_assert", "static_cast", "struct",
      "switch",        "template",    "this",
      "thread_local",  "throw",       "true",
      "try",           "typedef",     "typeid",
      "typename",      "union",       "unsigned",
      "using",         "virtual",     "void",
      "volatile",      "wchar_t",     "while",
      "xor",           "xor_eq",      "std",
      "posix",         "final",       "override",
      "import"};
  return std::find(words.begin(), words.end(), s) != words.end();
}

std::string upper(std::string s) {
  for (char& ch : s)
    if (ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
  return s;
}

// Every entry of the cache against its double-double value.
table_accuracy measure(const rope_config& c, const runtime_rope_cache<float>& cache,
                       std::uint64_t seq_len) {
  table_accuracy a;
  const math::dd af = attention_factor_dd(c);
  for (std::uint32_t i = 0; i < cache.pairs(); ++i) {
    const math::dd theta = inv_freq_dd(c, i, seq_len);
    for (std::size_t p = 0; p < cache.positions(); ++p) {
      const math::sincos_result<math::dd> v = math::sincos_of_product_dd(p, theta);
      const math::dd exact[2] = {v.cos * af, v.sin * af};
      const float got[2] = {cache.cos_at(p, i), cache.sin_at(p, i)};
      for (int k = 0; k < 2; ++k) {
        const double e = dd_distance(got[k], exact[k]);
        a.max_ulp_error = std::max(a.max_ulp_error, e / float_ulp(exact[k].hi));
        if (e > a.max_abs_error) {
          a.max_abs_error = e;
          a.worst_position = p;
          a.worst_pair = i;
          a.worst_is_sin = k == 1;
        }
      }
    }
  }
  return a;
}

// Six literals a line, comma-separated.
void append_array(std::string& out, const std::vector<float>& v) {
  for (std::size_t k = 0; k < v.size(); ++k) {
    out += k % 6 == 0 ? "\n    " : " ";
    out += hex_literal(v[k]);
    if (k + 1 < v.size()) out += ',';
  }
  out += "\n};\n";
}

// A double literal that reads back to x ("1.0", not "1").
std::string double_literal(double x) {
  std::string s = format_double(x);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string num(double x) {
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::general, 3);
  return std::string(buf, static_cast<std::size_t>(r.ptr - buf));
}

}  // namespace

std::vector<std::string> describe_config(const rope_config& c, std::uint64_t seq_len) {
  std::vector<std::string> l;
  const rope_scaling& s = c.scaling;
  l.push_back("head_dim " + std::to_string(c.head_dim));
  l.push_back("rotary_dim " + std::to_string(c.rotary_dim));
  l.push_back("base (rope_theta) " + format_double(c.base));
  l.push_back(std::string("layout ") + layout_name(c.layout));
  l.push_back(std::string("scaling ") + scaling_name(s.type));
  switch (s.type) {
    case scaling_type::none:
      break;
    case scaling_type::linear:
    case scaling_type::ntk:
      l.push_back("factor " + format_double(s.factor));
      break;
    case scaling_type::dynamic:
      l.push_back("factor " + format_double(s.factor));
      l.push_back("max_position_embeddings " + std::to_string(s.max_position_embeddings));
      break;
    case scaling_type::yarn:
      l.push_back("factor " + format_double(s.factor));
      l.push_back("original_max_position_embeddings " +
                  std::to_string(s.original_max_position_embeddings));
      l.push_back("beta_fast " + format_double(s.beta_fast));
      l.push_back("beta_slow " + format_double(s.beta_slow));
      l.push_back(std::string("truncate ") + (s.truncate ? "true" : "false"));
      l.push_back("mscale " + format_double(s.mscale));
      l.push_back("mscale_all_dim " + format_double(s.mscale_all_dim));
      l.push_back("attention_factor (given) " + format_double(s.attention_factor));
      break;
    case scaling_type::llama3:
      l.push_back("factor " + format_double(s.factor));
      l.push_back("low_freq_factor " + format_double(s.low_freq_factor));
      l.push_back("high_freq_factor " + format_double(s.high_freq_factor));
      l.push_back("original_max_position_embeddings " +
                  std::to_string(s.original_max_position_embeddings));
      break;
    case scaling_type::longrope:
      l.push_back("factor " + format_double(s.factor));
      l.push_back("original_max_position_embeddings " +
                  std::to_string(s.original_max_position_embeddings));
      l.push_back("max_position_embeddings " + std::to_string(s.max_position_embeddings));
      l.push_back("attention_factor (given) " + format_double(s.attention_factor));
      l.push_back("short_factor " + list_text(s.short_factor));
      l.push_back("long_factor " + list_text(s.long_factor));
      break;
  }
  l.push_back("attention_factor " + format_double(attention_factor(c)));
  l.push_back("seq_len " + std::to_string(seq_len));
  return l;
}

std::string emit_header(const rope_config& c, const emit_flags& f, std::uint64_t seq_len,
                        const config_echo* echo) {
  const bool cpp = f.lang == emit_lang::cpp;
  const std::string name = f.name.value_or("posenc_rope");
  if (!valid_identifier(name) || (cpp && cpp_keyword(name)))
    usage_error("posenc: --name needs a C identifier of at most 64 characters, not reserved" +
                std::string(cpp ? " and not a C++ keyword" : "") + " (got '" + printable(name) +
                "')");
  const std::uint64_t max_pos = f.max_pos.value_or(1);
  const std::uint64_t R = c.rotary_dim;
  if (max_pos > max_emit_entries / R)
    invalid("posenc: emit holds at most " + std::to_string(max_emit_entries) +
            " entries (max_pos x rotary_dim) per table; " + std::to_string(max_pos) + " x " +
            std::to_string(R) + " is more");
  const double af = attention_factor(c);
  if (!(af >= 0.0 && af <= 1e38))
    invalid("posenc: the attention factor is too large for float32 tables");
  for (std::uint32_t i = 0; i < R / 2; ++i) {
    const math::dd t = inv_freq_dd(c, i, seq_len);
    if (!std::isfinite(t.hi) || !(t.hi >= 0.0) || !std::isfinite(math::round_to<float>(t)))
      invalid("posenc: inv_freq of pair " + std::to_string(i) + " is not a finite float32");
  }

  const auto n = static_cast<std::size_t>(max_pos);
  const runtime_rope_cache<float> cache = runtime_rope_cache<float>::make(c, n, seq_len);
  const table_accuracy acc = measure(c, cache, seq_len);
  const bool simd = f.table == emit_table::simd;
  const std::size_t row = simd ? R : R / 2;
  std::vector<float> cos_v(n * row), sin_v(n * row);
  if (simd) {
    kernels::expand_rope_cache(cache.view(), c.layout, cos_v.data(), sin_v.data());
  } else {
    std::copy_n(cache.view().cos, n * row, cos_v.begin());
    std::copy_n(cache.view().sin, n * row, sin_v.begin());
  }

  const std::string M = upper(name);  // macro prefix (C)
  const bool il = c.layout == rope_layout::interleaved;
  std::string h;
  h.reserve(n * row * 2 * 18 + 8192);

  // Leading comment: what the file is, the configuration, the table and its measured accuracy.
  h += "/* " + name + (cpp ? ".hpp" : ".h") + ": RoPE cos/sin table and rotation, generated by ";
  h += "posenc emit (posenc " POSENC_VERSION_STRING ").\n *\n * Configuration:\n";
  for (const std::string& line : describe_config(c, seq_len)) h += " *   " + line + "\n";
  if (echo != nullptr) {
    h += " *\n * Values and their sources:\n";
    std::string lines = echo_header(*echo);
    // A file name could end the comment early.
    for (std::size_t at = lines.find("*/"); at != std::string::npos; at = lines.find("*/", at))
      lines.replace(at, 2, "* /");
    std::size_t start = 0;
    for (std::size_t nl = lines.find('\n'); nl != std::string::npos; nl = lines.find('\n', start)) {
      h += " *   " + lines.substr(start + 2, nl - start - 2) + "\n";
      start = nl + 1;
    }
  }
  h += " *\n * Table: positions 0 to " + std::to_string(max_pos - 1) + ", ";
  if (simd) {
    h += "expanded (\"simd\") form, rotary_dim entries per position\n";
    h += " *   by channel: for pair i on channels (a, b), cos[a] = cos[b] = C_i, sin[a] = -S_i,\n";
    h += " *   sin[b] = S_i (posenc/kernels/rope_table.hpp, rope_table_format::expanded).\n";
  } else {
    h += "compact form, rotary_dim/2 entries per position:\n";
    h += " *   cos[p * ROW_SIZE + i] = C_i(p), sin[p * ROW_SIZE + i] = S_i(p) for pair i.\n";
  }
  h += " *   C_i(p) = attention_factor * cos(p * inv_freq_i), S_i(p) = attention_factor *\n";
  h +=
      " *   sin(p * inv_freq_i) (RoFormer eq. 34; HF modeling_rope_utils for the scalings), each\n";
  h += " *   rounded once to float from posenc's double-double evaluation.\n";
  h += " *   Pairs: " + std::string(il ? "interleaved (2i, 2i+1)" : "half (i, i + rotary_dim/2)");
  h += "; channels >= rotary_dim pass through.\n *\n";
  h += " * Accuracy (measured while emitting, every entry against the double-double value,\n";
  h += " * whose own error is below 1e-25):\n";
  h += " *   max abs error " + num(acc.max_abs_error) + " (" + (acc.worst_is_sin ? "sin" : "cos") +
       " at position " + std::to_string(acc.worst_position) + ", pair " +
       std::to_string(acc.worst_pair) + ")\n";
  h += " *   max error " + num(acc.max_ulp_error) +
       " ulp: each entry is the exact value correctly rounded to float\n";
  h += " *   (<= 0.5 ulp, up to the double-double residue of ~2^-100 relative).\n *\n";
  h +=
      " * Rotation: y_a = x_a * c + x_b * (-s), y_b = x_b * c + x_a * s, each product rounded to\n";
  h += " * float, then the sum: the operation order of posenc::kernels::rope_reference with\n";
  h += " * fma_mode::unfused, hence the same bits. Contraction into fused multiply-adds is turned "
       "off\n";
  h += " * for the rotation on GCC and clang; other compilers need their option for it.\n */\n";

  const std::string guard = M + (cpp ? "_HPP" : "_H");
  h += "#ifndef " + guard + "\n#define " + guard + "\n\n";

  const std::string rot = std::to_string(R);
  std::string K_HEAD, K_ROT, K_MAX, K_ROW, K_OK, K_EPOS, K_ENULL, T_COS, T_SIN, SIZE_T, U64, NUL,
      NOINL;
  if (cpp) {
    h += "#include <cstddef>\n#include <cstdint>\n\nnamespace " + name + " {\n\n";
    h += "inline constexpr std::size_t head_dim = " + std::to_string(c.head_dim) + ";\n";
    h += "inline constexpr std::size_t rotary_dim = " + rot + ";\n";
    h += "inline constexpr std::size_t max_pos = " + std::to_string(max_pos) + ";\n";
    h += "inline constexpr std::size_t row_size = " + std::to_string(row) +
         ";  // table entries per position\n";
    h += "inline constexpr bool interleaved = " + std::string(il ? "true" : "false") + ";\n";
    h += "inline constexpr double attention_factor = " + double_literal(af) + ";\n";
    h += "inline constexpr int ok = 0;\n";
    h += "inline constexpr int error_position = 1;  // a position >= max_pos\n";
    h += "inline constexpr int error_null = 2;      // a null pointer\n\n";
    K_HEAD = "head_dim", K_ROT = "rotary_dim", K_MAX = "max_pos", K_ROW = "row_size", K_OK = "ok";
    K_EPOS = "error_position", K_ENULL = "error_null", T_COS = "cos_table", T_SIN = "sin_table";
    SIZE_T = "std::size_t", U64 = "std::uint64_t", NUL = "nullptr";
    h += "inline constexpr float cos_table[max_pos * row_size] = {";
    append_array(h, cos_v);
    h += "inline constexpr float sin_table[max_pos * row_size] = {";
    append_array(h, sin_v);
  } else {
    h += "#include <stddef.h>\n#include <stdint.h>\n\n";
    h += "#define " + M + "_HEAD_DIM " + std::to_string(c.head_dim) + "u\n";
    h += "#define " + M + "_ROTARY_DIM " + rot + "u\n";
    h += "#define " + M + "_MAX_POS " + std::to_string(max_pos) + "u\n";
    h += "#define " + M + "_ROW_SIZE " + std::to_string(row) +
         "u /* table entries per position */\n";
    h += "#define " + M + "_INTERLEAVED " + std::string(il ? "1" : "0") + "\n";
    h += "#define " + M + "_ATTENTION_FACTOR " + double_literal(af) + "\n";
    h += "#define " + M + "_OK 0\n";
    h += "#define " + M + "_ERROR_POSITION 1 /* a position >= " + M + "_MAX_POS */\n";
    h += "#define " + M + "_ERROR_NULL 2     /* a null pointer */\n\n";
    K_HEAD = M + "_HEAD_DIM", K_ROT = M + "_ROTARY_DIM", K_MAX = M + "_MAX_POS";
    K_ROW = M + "_ROW_SIZE", K_OK = M + "_OK", K_EPOS = M + "_ERROR_POSITION";
    K_ENULL = M + "_ERROR_NULL", T_COS = name + "_cos", T_SIN = name + "_sin";
    SIZE_T = "size_t", U64 = "uint64_t", NUL = "NULL";
    h += "static const float " + T_COS + "[" + K_MAX + " * " + K_ROW + "] = {";
    append_array(h, cos_v);
    h += "static const float " + T_SIN + "[" + K_MAX + " * " + K_ROW + "] = {";
    append_array(h, sin_v);
  }

  // The rotation of one head vector: rope_reference_pairs with fma_mode::unfused.
  const std::string fn_head = cpp ? "apply_head" : name + "_apply_head";
  const std::string fn_all = cpp ? "apply" : name + "_apply";
  const std::string spec = cpp ? "inline" : "static inline";
  const std::string nx = cpp ? " noexcept" : "";
  h += "\n/* Rotates the head vector x[0 .. " + K_HEAD + ") in place for position pos. Returns " +
       K_OK + ",\n   or " + K_EPOS + " / " + K_ENULL + " with x unchanged. */\n";
  h += "#if defined(__GNUC__) && "
       "!defined(__clang__)\n__attribute__((optimize(\"fp-contract=off\")))\n#endif\n";
  h += spec + " int " + fn_head + "(float *x, " + U64 + " pos)" + nx + "\n{\n";
  h += "#if defined(__clang__)\n#pragma STDC FP_CONTRACT OFF\n#endif\n";
  h += "  " + SIZE_T + " i;\n  const float *c;\n  const float *s;\n";
  h += "  if (x == " + NUL + ") return " + K_ENULL + ";\n";
  h += "  if (pos >= " + K_MAX + ") return " + K_EPOS + ";\n";
  const std::string row_of_pos =
      (cpp ? "static_cast<std::size_t>(pos)" : "(size_t)pos") + std::string(" * ") + K_ROW;
  h += "  c = " + T_COS + " + " + row_of_pos + ";\n";
  h += "  s = " + T_SIN + " + " + row_of_pos + ";\n";
  h += "  for (i = 0; i < " + K_ROT + " / 2; ++i) {\n";
  if (il) {
    h += "    const " + SIZE_T + " a = 2 * i, b = 2 * i + 1;\n";
  } else {
    h += "    const " + SIZE_T + " a = i, b = i + " + K_ROT + " / 2;\n";
  }
  if (simd) {
    h += "    const float ca = c[a], cb = c[b], sa = s[a], sb = s[b];\n";
  } else {
    h += "    const float ca = c[i], cb = c[i], sb = s[i], sa = -sb;\n";
  }
  h += "    const float xa = x[a], xb = x[b];\n";
  h += "    const float pa = xa * ca, qa = xb * sa;\n";
  h += "    const float pb = xb * cb, qb = xa * sb;\n";
  h += "    x[a] = pa + qa;\n    x[b] = pb + qb;\n  }\n  return " + K_OK + ";\n}\n";

  h += "\n/* Rotates tokens x heads head vectors of " + K_HEAD +
       " floats, x[token][head][channel] contiguous,\n   token t at position positions[t]. "
       "Every position is checked before anything is written. */\n";
  h += spec + " int " + fn_all + "(float *x, " + SIZE_T + " tokens, " + SIZE_T + " heads, const " +
       U64 + " *positions)" + nx + "\n{\n";
  h += "  " + SIZE_T + " t, hd;\n";
  h += "  if (tokens == 0 || heads == 0) return " + K_OK + ";\n";
  h += "  if (x == " + NUL + " || positions == " + NUL + ") return " + K_ENULL + ";\n";
  h += "  for (t = 0; t < tokens; ++t)\n    if (positions[t] >= " + K_MAX + ") return " + K_EPOS +
       ";\n";
  h += "  for (t = 0; t < tokens; ++t)\n    for (hd = 0; hd < heads; ++hd)\n";
  h += std::string("      ") + (cpp ? "static_cast<void>(" : "(void)(") + fn_head +
       "(x + (t * heads + hd) * " + K_HEAD + ", positions[t]));\n";
  h += "  return " + K_OK + ";\n}\n";
  if (cpp) h += "\n}  // namespace " + name + "\n";
  h += "\n#endif /* " + guard + " */\n";
  return h;
}

int run_emit(const invocation& inv, std::ostream& out) {
  const resolved_config rc = configure(inv);
  const std::string h = emit_header(rc.config(), inv.emit, inv.seq_len, &rc.echo);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  return exit_ok;
}

}  // namespace posenc::cli
