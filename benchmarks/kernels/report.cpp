// The summary CSV read back and its Markdown tables (report.hpp).
#include "report.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <span>
#include <tuple>

#include <sys/stat.h>

namespace posenc_bench::report {

std::optional<double> ratio_target(std::string_view strategy, std::string_view dtype,
                                   std::size_t tokens) {
  if (strategy != "constexpr_table" && strategy != "runtime_table" &&
      strategy != "runtime_table_expanded")
    return std::nullopt;
  if (dtype == "f32") {
    if (tokens == 512 || tokens == 4096) return 1.15;
    if (tokens == 1) return 2.0;
  } else if (dtype == "bf16" || dtype == "f16") {
    if (tokens == 4096) return 1.5;
    if (tokens == 1) return 3.0;
  }
  return std::nullopt;
}

namespace {

// A summary of 2 layouts x 4 T x 3 dtypes x ~10 strategies is ~10 KiB; anything near this limit
// is not one (and /dev/zero must not be read forever).
constexpr std::size_t kMaxBytes = std::size_t{16} << 20;
constexpr std::string_view kLegacyHeader =
    "layout,strategy,dtype,tokens,ns_per_call,ratio_to_memcpy";

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t p = s.find(sep, start);
    out.push_back(
        s.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start));
    if (p == std::string_view::npos) return out;
    start = p + 1;
  }
}

bool parse_count(std::string_view s, std::size_t& v) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc{} && p == s.data() + s.size();
}

bool parse_time(std::string_view s, double& v) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc{} && p == s.data() + s.size() && std::isfinite(v) &&
         v >= 0.0;
}

// A field quoted in a message: printable ASCII, at most 40 characters.
std::string shown(std::string_view field) {
  std::string out;
  for (const char c : field.substr(0, 40)) out += c >= ' ' && c <= '~' ? c : '?';
  return field.size() > 40 ? out + "..." : out;
}

std::string read_text(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw input_error(path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) throw input_error("cannot read " + path + ": " + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxBytes) throw input_error(path + ": larger than 16 MiB, not a summary");
  }
  if (in.bad()) throw input_error("cannot read " + path);
  return text;
}

using row_id = std::tuple<std::string, std::string, std::string, std::size_t>;

row_id id_of(const row& r) {
  return {r.layout, r.strategy, r.dtype, r.tokens};
}

}  // namespace

run read_summary(const std::string& path) {
  const std::string text = read_text(path);
  run r;
  std::set<row_id> seen;
  bool legacy = false, have_header = false;
  std::size_t line_no = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string where = path + ":" + std::to_string(line_no) + ": ";
    if (line.empty()) continue;
    if (line.front() == '#') {
      line.remove_prefix(1);
      if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      const std::size_t colon = line.find(": ");
      if (colon == std::string_view::npos)
        r.facts.emplace_back(std::string(line), std::string());
      else
        r.facts.emplace_back(std::string(line.substr(0, colon)),
                             std::string(line.substr(colon + 2)));
      continue;
    }
    if (!have_header) {
      if (line != kHeader && line != kLegacyHeader)
        throw input_error(where + "expected the header " + std::string(kHeader));
      legacy = line == kLegacyHeader;
      have_header = true;
      continue;
    }
    const std::vector<std::string_view> f = split(line, ',');
    const std::size_t fields = legacy ? 6 : 7;
    if (f.size() != fields)
      throw input_error(where + std::to_string(f.size()) + " fields, expected " +
                        std::to_string(fields));
    row x;
    x.layout = f[0];
    x.strategy = f[1];
    x.dtype = f[2];
    if (x.layout.empty() || x.strategy.empty() || x.dtype.empty())
      throw input_error(where + "empty layout, strategy or dtype");
    if (!parse_count(f[3], x.tokens))
      throw input_error(where + "tokens '" + shown(f[3]) + "' is not a count");
    const std::size_t ns_field = legacy ? 4 : 5;
    if (!legacy && (!parse_count(f[4], x.threads) || x.threads == 0))
      throw input_error(where + "threads '" + shown(f[4]) + "' is not a positive count");
    if (!parse_time(f[ns_field], x.ns))
      throw input_error(where + "ns_per_call '" + shown(f[ns_field]) +
                        "' is not a non-negative number");
    // Empty (this program) or "nan" (its versions before the empty field): no memcpy row to
    // divide by.
    const std::string_view ratio = f[ns_field + 1];
    if (!ratio.empty() && ratio != "nan") {
      double v = 0.0;
      if (!parse_time(ratio, v))
        throw input_error(where + "ratio_to_memcpy '" + shown(ratio) +
                          "' is not a non-negative number");
      x.ratio = v;
    }
    if (!seen.insert(id_of(x)).second)
      throw input_error(where + "a second row for " + shown(x.layout) + "/" + shown(x.strategy) +
                        "/" + shown(x.dtype) + "/T:" + std::to_string(x.tokens));
    r.rows.push_back(std::move(x));
  }
  if (!have_header) throw input_error(path + ": no header line " + std::string(kHeader));
  if (r.rows.empty()) throw input_error(path + ": no rows");
  return r;
}

namespace {

// Columns in the order of the benchmark's strategies; others (a newer or older binary's) after,
// in the order they appear.
constexpr std::string_view kStrategyOrder[] = {"memcpy",
                                               "stream_copy",
                                               "stream_copy_nt",
                                               "stream_copy_nt_2threads",
                                               "convert_copy",
                                               "rotation_floor",
                                               "constexpr_table",
                                               "runtime_table",
                                               "runtime_table_expanded",
                                               "runtime_table_2threads",
                                               "runtime_table_one_head",
                                               "scalar_table",
                                               "on_the_fly",
                                               "mrope_table",
                                               "mrope_interleaved_table",
                                               "axial_table"};

std::size_t rank_of(std::string_view s, std::span<const std::string_view> order) {
  return static_cast<std::size_t>(std::find(order.begin(), order.end(), s) - order.begin());
}

std::size_t dtype_rank(std::string_view d) {
  constexpr std::string_view order[] = {"f32", "bf16", "f16"};
  return rank_of(d, order);
}

// A Markdown table cell: '|' would end it.
std::string cell(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

// Room for any finite double in %.0f / %.2f (DBL_MAX has 309 digits).
constexpr std::size_t kNumberChars = 320;

std::string fixed2(double v) {
  char buf[kNumberChars];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// ns per call rounded to an integer, thousands separated: 11,490,837.
std::string grouped(double ns) {
  char buf[kNumberChars];
  std::snprintf(buf, sizeof buf, "%.0f", ns);
  const std::string digits = buf;
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

struct value {
  std::optional<std::string> text;
  bool miss = false;
};

std::string bold(const std::string& s) {
  return "**" + s + "**";
}

// One run: the value. Two: `before → after` (a missed target in bold: both missed, the whole
// cell), or `before / after` for times; a side without a value is "—".
std::string join(const std::vector<value>& v, std::string_view sep) {
  if (v.size() == 1) return !v[0].text ? "—" : v[0].miss ? bold(*v[0].text) : *v[0].text;
  if (!v[0].text && !v[1].text) return "—";
  const std::string a = v[0].text.value_or("—"), b = v[1].text.value_or("—");
  if (v[0].miss && v[1].miss) return bold(a + std::string(sep) + b);
  return (v[0].miss ? bold(a) : a) + std::string(sep) + (v[1].miss ? bold(b) : b);
}

struct indexed {
  std::map<row_id, const row*> rows;
  const row* find(const std::string& layout, std::string_view strategy, const std::string& dtype,
                  std::size_t tokens) const {
    const auto it = rows.find({layout, std::string(strategy), dtype, tokens});
    return it == rows.end() ? nullptr : it->second;
  }
};

using strategy_pair = std::pair<std::string_view, std::string_view>;
// Strategies on one thread and their rows on 2 threads.
constexpr strategy_pair kThreadPairs[] = {{kOneThreadStrategy, kThreadsStrategy},
                                          {"stream_copy_nt", "stream_copy_nt_2threads"}};

// The one-thread row's ns over the 2-thread row's ns, when the run has both.
std::optional<double> speedup(const indexed& x, const std::string& layout, const std::string& dtype,
                              std::size_t tokens, strategy_pair pair = kThreadPairs[0]) {
  const row* one = x.find(layout, pair.first, dtype, tokens);
  const row* two = x.find(layout, pair.second, dtype, tokens);
  if (one == nullptr || two == nullptr || two->ns <= 0.0) return std::nullopt;
  return one->ns / two->ns;
}

// A multi-axis row's ns over the 1-D row's (runtime_table), when the run has both.
std::optional<double> multi_axis_ratio(const indexed& x, const std::string& layout,
                                       std::string_view strategy, const std::string& dtype,
                                       std::size_t tokens) {
  const row* multi = x.find(layout, strategy, dtype, tokens);
  const row* one_d = x.find(layout, kOneThreadStrategy, dtype, tokens);
  if (multi == nullptr || one_d == nullptr || one_d->ns <= 0.0) return std::nullopt;
  return multi->ns / one_d->ns;
}

bool misses_threads_target(const indexed& x, const std::string& layout, const std::string& dtype,
                           std::size_t tokens) {
  const std::optional<double> s = speedup(x, layout, dtype, tokens);
  return tokens == kThreadsTargetTokens && s && *s < kThreadsSpeedupTarget;
}

std::string tables(const std::vector<const run*>& runs) {
  const bool two = runs.size() == 2;
  std::vector<indexed> ix(runs.size());
  std::vector<std::string> layouts, strategies;
  std::set<std::pair<std::string, std::string>> strategy_of_layout;
  for (std::size_t k = 0; k < runs.size(); ++k)
    for (const row& r : runs[k]->rows) {
      ix[k].rows[id_of(r)] = &r;
      if (std::find(layouts.begin(), layouts.end(), r.layout) == layouts.end())
        layouts.push_back(r.layout);
      if (std::find(strategies.begin(), strategies.end(), r.strategy) == strategies.end())
        strategies.push_back(r.strategy);
      strategy_of_layout.insert({r.layout, r.strategy});
    }
  constexpr std::string_view layout_order[] = {"half", "interleaved"};
  std::stable_sort(layouts.begin(), layouts.end(), [&](const std::string& a, const std::string& b) {
    return rank_of(a, layout_order) < rank_of(b, layout_order);
  });
  std::stable_sort(strategies.begin(), strategies.end(),
                   [](const std::string& a, const std::string& b) {
                     return rank_of(a, kStrategyOrder) < rank_of(b, kStrategyOrder);
                   });

  std::string out;
  // The facts of the comment lines, keys in the order of the first run that has them.
  std::vector<std::string> keys;
  for (const run* r : runs)
    for (const auto& [k, v] : r->facts)
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  if (!keys.empty()) {
    out += two ? "| fact | before | after |\n|---|---|---|\n" : "| fact | value |\n|---|---|\n";
    for (const std::string& k : keys) {
      out += "| " + cell(k);
      for (const run* r : runs) {
        const auto it = std::find_if(r->facts.begin(), r->facts.end(),
                                     [&](const auto& f) { return f.first == k; });
        out += " | " + (it == r->facts.end() ? std::string("—") : cell(it->second));
      }
      out += " |\n";
    }
    out += "\n";
  }

  for (const std::string& layout : layouts) {
    std::vector<std::string> cols;
    for (const std::string& s : strategies)
      if (s != "memcpy" && strategy_of_layout.count({layout, s})) cols.push_back(s);
    std::vector<std::pair<std::size_t, std::string>> tds;
    for (const indexed& x : ix)
      for (const auto& [id, r] : x.rows) {
        const std::pair<std::size_t, std::string> td{r->tokens, r->dtype};
        if (r->layout == layout && std::find(tds.begin(), tds.end(), td) == tds.end())
          tds.push_back(td);
      }
    std::sort(tds.begin(), tds.end(), [](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      if (dtype_rank(a.second) != dtype_rank(b.second))
        return dtype_rank(a.second) < dtype_rank(b.second);
      return a.second < b.second;
    });
    out += bold(cell(layout)) +
           (two ? " (ratio to memcpy of the same bytes, before → after; memcpy: ns per call, "
                  "before / after)\n\n"
                : " (ratio to memcpy of the same bytes; memcpy: ns per call)\n\n");
    out += "| T | dtype | memcpy |";
    for (const std::string& c : cols) out += " `" + cell(c) + "` |";
    out += "\n|---:|---|---:|";
    for (std::size_t i = 0; i < cols.size(); ++i) out += "---:|";
    out += "\n";
    for (const auto& [tokens, dtype] : tds) {
      out += "| " + std::to_string(tokens) + " | " + cell(dtype) + " | ";
      std::vector<value> ns(ix.size());
      for (std::size_t k = 0; k < ix.size(); ++k)
        if (const row* m = ix[k].find(layout, "memcpy", dtype, tokens)) ns[k].text = grouped(m->ns);
      out += join(ns, " / ") + " |";
      for (const std::string& c : cols) {
        std::vector<value> v(ix.size());
        for (std::size_t k = 0; k < ix.size(); ++k) {
          const row* r = ix[k].find(layout, c, dtype, tokens);
          if (r == nullptr || !r->ratio) continue;
          v[k].text = fixed2(*r->ratio);
          const std::optional<double> limit = ratio_target(c, dtype, tokens);
          v[k].miss =
              (limit && *r->ratio > *limit) ||
              (c == kThreadsStrategy && misses_threads_target(ix[k], layout, dtype, tokens));
        }
        out += " " + join(v, " → ") + " |";
      }
      out += "\n";
    }
    out += "\n";
  }

  // 2 threads against one, a column per pair that some run has.
  std::vector<strategy_pair> pairs;
  for (const strategy_pair& pair : kThreadPairs)
    for (const indexed& x : ix)
      for (const auto& [id, r] : x.rows)
        if (std::find(pairs.begin(), pairs.end(), pair) == pairs.end() &&
            speedup(x, r->layout, r->dtype, r->tokens, pair))
          pairs.push_back(pair);
  if (!pairs.empty()) {
    out += bold("2 threads") + " (throughput against one thread: the strategy's ns over its " +
           "2-thread row's" + (two ? ", before → after" : "") + ")\n\n| layout | T | dtype |";
    for (const strategy_pair& pair : pairs) out += " `" + std::string(pair.first) + "` |";
    out += "\n|---|---:|---|";
    for (std::size_t i = 0; i < pairs.size(); ++i) out += "---:|";
    out += "\n";
    for (const std::string& layout : layouts) {
      std::set<std::pair<std::size_t, std::string>> tds;
      for (const indexed& x : ix)
        for (const auto& [id, r] : x.rows)
          for (const strategy_pair& pair : pairs)
            if (r->layout == layout && speedup(x, layout, r->dtype, r->tokens, pair))
              tds.insert({r->tokens, r->dtype});
      std::vector<std::pair<std::size_t, std::string>> sorted(tds.begin(), tds.end());
      std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first < b.first;
        return dtype_rank(a.second) < dtype_rank(b.second);
      });
      for (const auto& [tokens, dtype] : sorted) {
        out += "| " + cell(layout) + " | " + std::to_string(tokens) + " | " + cell(dtype) + " |";
        for (const strategy_pair& pair : pairs) {
          std::vector<value> v(ix.size());
          for (std::size_t k = 0; k < ix.size(); ++k)
            if (const std::optional<double> s = speedup(ix[k], layout, dtype, tokens, pair)) {
              v[k].text = fixed2(*s);
              v[k].miss =
                  pair == kThreadPairs[0] && misses_threads_target(ix[k], layout, dtype, tokens);
            }
          out += " " + join(v, " → ") + " |";
        }
        out += "\n";
      }
    }
    out += "\n";
  }
  // The multi-axis kernels against the 1-D one, a column per multi-axis strategy some run has.
  std::vector<std::string_view> multi;
  for (const std::string_view m : kMultiAxisStrategies)
    for (const indexed& x : ix)
      for (const auto& [id, r] : x.rows)
        if (std::find(multi.begin(), multi.end(), m) == multi.end() &&
            multi_axis_ratio(x, r->layout, m, r->dtype, r->tokens))
          multi.push_back(m);
  if (!multi.empty()) {
    out += bold("multi-axis against 1-D") + " (the strategy's ns over `" +
           std::string(kOneThreadStrategy) + "`'s on the same layout, T and dtype" +
           (two ? ", before → after" : "") + ")\n\n| layout | T | dtype |";
    for (const std::string_view m : multi) out += " `" + std::string(m) + "` |";
    out += "\n|---|---:|---|";
    for (std::size_t i = 0; i < multi.size(); ++i) out += "---:|";
    out += "\n";
    for (const std::string& layout : layouts) {
      std::set<std::pair<std::size_t, std::string>> tds;
      for (const indexed& x : ix)
        for (const auto& [id, r] : x.rows)
          for (const std::string_view m : multi)
            if (r->layout == layout && multi_axis_ratio(x, layout, m, r->dtype, r->tokens))
              tds.insert({r->tokens, r->dtype});
      std::vector<std::pair<std::size_t, std::string>> sorted(tds.begin(), tds.end());
      std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first < b.first;
        return dtype_rank(a.second) < dtype_rank(b.second);
      });
      for (const auto& [tokens, dtype] : sorted) {
        out += "| " + cell(layout) + " | " + std::to_string(tokens) + " | " + cell(dtype) + " |";
        for (const std::string_view m : multi) {
          std::vector<value> v(ix.size());
          for (std::size_t k = 0; k < ix.size(); ++k)
            if (const std::optional<double> q = multi_axis_ratio(ix[k], layout, m, dtype, tokens)) {
              v[k].text = fixed2(*q);
              v[k].miss = *q > kMultiAxisTarget;
            }
          out += " " + join(v, " → ") + " |";
        }
        out += "\n";
      }
    }
    out += "\n";
  }
  out +=
      "Bold: misses its target (`constexpr_table`, `runtime_table`, `runtime_table_expanded`: "
      "f32 ≤ 1.15× memcpy at T = 512 and 4096, ≤ 2× at T = 1; bf16 and f16 ≤ 1.5× at T = 4096, "
      "≤ 3× at T = 1; `runtime_table_2threads`: ≥ 1.6× the throughput of `runtime_table` at "
      "T = 4096; `mrope_table`, `mrope_interleaved_table`, `axial_table`: ≤ 1.2× the time of "
      "`runtime_table` on the same layout, T and dtype).\n";
  return out;
}

}  // namespace

std::string markdown(const run& r) {
  return tables({&r});
}

std::string markdown_compare(const run& before, const run& after) {
  return tables({&before, &after});
}

}  // namespace posenc_bench::report
