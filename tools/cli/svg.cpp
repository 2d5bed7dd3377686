#include "cli/svg.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

#include "cli/error.hpp"
#include "cli/output.hpp"

namespace posenc::cli::svg {

namespace {

// matplotlib's "tab10" palette.
constexpr const char* palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string fixed3(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 3);
  std::string s(buf, r.ptr);
  if (s == "-0.000") s = "0.000";
  return s;
}

std::string full(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 17);
  return {buf, r.ptr};
}

std::string label(double v) {
  if (std::fabs(v) < 1e-300) return "0";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 6);
  return {buf, r.ptr};
}

// A scale maps data values to [0, 1] along an axis.
struct scale {
  bool log = false;
  double min = 0.0;
  double max = 1.0;
  double t(double v) const { return log ? std::log10(v) : v; }
  double unit(double v) const { return (t(v) - t(min)) / (t(max) - t(min)); }
  bool drawable(double v) const {
    if (!std::isfinite(v)) return false;
    if (log && !(v > 0.0)) return false;
    return v >= min && v <= max;
  }
};

// 1, 2 or 5 times a power of ten, at least x (x > 0).
double nice_step(double x) {
  const double p = std::pow(10.0, std::floor(std::log10(x)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= x * (1.0 - 1e-12)) return m * p;
  return 10.0 * p;
}

void check_range(const axis& a, const char* name) {
  const auto bad = [&](const char* why) {
    invalid(std::string("posenc: svg ") + name + " axis range " + why);
  };
  if (a.min && !std::isfinite(*a.min)) bad("is not finite");
  if (a.max && !std::isfinite(*a.max)) bad("is not finite");
  if (a.min && a.max && !(*a.min < *a.max)) bad("has min >= max");
  if (a.log && a.min && !(*a.min > 0.0)) bad("must be positive on a log axis");
  if (a.log && a.max && !(*a.max > 0.0)) bad("must be positive on a log axis");
}

// The shown range of an axis from the values that can be drawn on it.
scale make_scale(const axis& a, const std::vector<const std::vector<double>*>& values,
                 const char* name) {
  check_range(a, name);
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (const std::vector<double>* v : values)
    for (double x : *v)
      if (std::isfinite(x) && (!a.log || x > 0.0)) {
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
  if (a.min) lo = *a.min;
  if (a.max) hi = *a.max;
  if (!(lo <= hi)) {
    if (a.min || a.max) {  // one end given, no data: a unit span beside it
      lo = a.min ? *a.min : (a.log ? *a.max / 10.0 : *a.max - 1.0);
      hi = a.max ? *a.max : (a.log ? *a.min * 10.0 : *a.min + 1.0);
    } else {
      invalid(std::string("posenc: svg: no point can be drawn on the ") + name + " axis");
    }
  }
  scale s{a.log, lo, hi};
  if (a.log) {
    if (!a.min) s.min = std::pow(10.0, std::floor(std::log10(lo)));
    if (!a.max) s.max = std::pow(10.0, std::ceil(std::log10(hi)));
    if (!(s.min < s.max)) {
      if (!a.min) s.min /= 10.0;
      if (!a.max) s.max *= 10.0;
    }
  } else {
    if (!(s.min < s.max)) {
      if (!a.min) s.min -= 1.0;
      if (!a.max) s.max += 1.0;
    }
    const double step = nice_step((s.max - s.min) / 5.0);
    if (!a.min) s.min = std::floor(s.min / step) * step;
    if (!a.max) s.max = std::ceil(s.max / step) * step;
  }
  if (!(s.min < s.max) || !std::isfinite(s.min) || !std::isfinite(s.max))
    invalid(std::string("posenc: svg: cannot scale the ") + name + " axis");
  return s;
}

std::vector<double> ticks_of(const scale& s) {
  std::vector<double> out;
  if (s.log) {
    const double k0 = std::ceil(std::log10(s.min) - 1e-9);
    const double k1 = std::floor(std::log10(s.max) + 1e-9);
    const double decades = k1 - k0 + 1.0;
    const double every = decades > 10.0 ? std::ceil(decades / 10.0) : 1.0;
    for (double k = k0; k <= k1; k += every) out.push_back(std::pow(10.0, k));
    if (decades < 2.0) {  // add 2x and 5x marks so that at least a few ticks show
      for (double k = k0 - 1.0; k <= k1; k += 1.0)
        for (double m : {2.0, 5.0}) {
          const double v = m * std::pow(10.0, k);
          if (v >= s.min && v <= s.max) out.push_back(v);
        }
      std::sort(out.begin(), out.end());
    }
  } else {
    const double step = nice_step((s.max - s.min) / 5.0);
    const double first = std::ceil(s.min / step - 1e-9);
    for (double k = first; k * step <= s.max + step * 1e-9; k += 1.0) {
      const double v = k * step;
      out.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
      if (out.size() > 50) break;
    }
  }
  return out;
}

struct box {
  double left, right, top, bottom;
  double px(const scale& s, double v) const { return left + s.unit(v) * (right - left); }
  double py(const scale& s, double v) const { return bottom - s.unit(v) * (bottom - top); }
};

struct legend_size {
  std::size_t named = 0;  // series with a name
  double width = 0.0;
};
legend_size legend_of(const plot& p) {
  legend_size l;
  std::size_t longest = 0;
  for (const series& s : p.lines)
    if (!s.name.empty()) {
      ++l.named;
      longest = std::max(longest, s.name.size());
    }
  l.width = l.named > 0 ? 40.0 + 6.5 * static_cast<double>(longest) : 0.0;
  return l;
}

// The plot area: the legend sits right of it, so that it never hides data.
box plot_box(const plot& p) {
  const int width = std::max(p.width, 200);
  const int height = std::max(p.height, 150);
  const legend_size l = legend_of(p);
  const double right =
      std::max(static_cast<double>(width) - 20.0 - (l.named > 0 ? l.width + 10.0 : 0.0), 120.0);
  return {80.0, right, p.title.empty() ? 20.0 : 40.0, static_cast<double>(height) - 55.0};
}

// The pixel column of x (render's select_points): 0 .. columns.
std::size_t column_of(const scale& sx, const box& b, double x, std::size_t columns) {
  return static_cast<std::size_t>(
      std::clamp(std::floor(b.px(sx, x) - b.left), 0.0, static_cast<double>(columns)));
}

std::size_t columns_of(const box& b) {
  return static_cast<std::size_t>(b.right - b.left) + 1;
}

// Indices of the points of one series to draw, in input order, and where a line breaks.
struct drawn_points {
  std::vector<std::size_t> index;
  std::vector<bool> starts_run;  // index[j] starts a new polyline
};

drawn_points select_points(const series& s, const scale& sx, const scale& sy, const box& b) {
  const std::size_t n = s.x.size();
  std::vector<bool> ok(n);
  std::vector<std::size_t> gaps_before(n + 1, 0);  // non-drawable points among [0, i)
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ok[i] = sx.drawable(s.x[i]) && sy.drawable(s.y[i]);
    count += ok[i] ? 1 : 0;
    gaps_before[i + 1] = gaps_before[i] + (ok[i] ? 0 : 1);
  }
  std::vector<std::size_t> keep;
  const std::size_t columns = columns_of(b);
  if (count > 4 * columns) {
    // Per pixel column: first, lowest, highest and last point.
    struct col {
      std::size_t first = SIZE_MAX, last = 0, lo = 0, hi = 0;
    };
    std::vector<col> cols(columns + 1);
    for (std::size_t i = 0; i < n; ++i) {
      if (!ok[i]) continue;
      col& k = cols[column_of(sx, b, s.x[i], columns)];
      if (k.first == SIZE_MAX) {
        k = {i, i, i, i};
      } else {
        k.last = i;
        if (s.y[i] < s.y[k.lo]) k.lo = i;
        if (s.y[i] > s.y[k.hi]) k.hi = i;
      }
    }
    for (const col& k : cols)
      if (k.first != SIZE_MAX) keep.insert(keep.end(), {k.first, k.lo, k.hi, k.last});
    std::sort(keep.begin(), keep.end());
    keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  } else {
    for (std::size_t i = 0; i < n; ++i)
      if (ok[i]) keep.push_back(i);
  }
  drawn_points d;
  d.index = keep;
  d.starts_run.resize(keep.size());
  for (std::size_t j = 0; j < keep.size(); ++j)
    d.starts_run[j] = j == 0 || gaps_before[keep[j]] != gaps_before[keep[j - 1] + 1];
  return d;
}

struct point {
  double x, y;
};
struct segment {
  point from, to;
};

// <line class x1 y1 x2 y2 stroke/> (no class attribute when `cls` is empty).
void line(std::ostream& o, std::string_view cls, segment l, std::string_view stroke) {
  o << "<line";
  if (!cls.empty()) o << " class=\"" << cls << '"';
  o << " x1=\"" << fixed3(l.from.x) << "\" y1=\"" << fixed3(l.from.y) << "\" x2=\""
    << fixed3(l.to.x) << "\" y2=\"" << fixed3(l.to.y) << "\" stroke=\"" << stroke << "\"/>";
}

// The group of an axis ("x" or "y") and its line; the caller adds ticks and title, then "</g>".
void open_axis(std::ostream& o, std::string_view name, segment axis_line) {
  o << "<g class=\"axis " << name << "\">\n";
  line(o, "axis-line", axis_line, "black");
  o << '\n';
}

// One tick of an axis at value v: its mark, its grid line across the plot, its label at `at`.
void tick(std::ostream& o, double v, segment mark, segment grid, point at,
          std::string_view label_attributes) {
  o << "<g class=\"tick\" data-value=\"" << full(v) << "\">";
  line(o, "", mark, "black");
  line(o, "grid", grid, "#eeeeee");
  o << "<text x=\"" << fixed3(at.x) << "\" y=\"" << fixed3(at.y) << "\" " << label_attributes << '>'
    << escape(label(v)) << "</text></g>\n";
}

}  // namespace

range auto_range(const axis& a, double lo, double hi) {
  const std::vector<double> data{lo, hi};
  const scale s = make_scale(a, {&data}, "x");
  return {s.min, s.max};
}

thinned_series::thinned_series(const plot& p)
    : log_x_(p.x.log), log_y_(p.y.log), y_min_(p.y.min), y_max_(p.y.max) {
  if (!p.x.min || !p.x.max) invalid("posenc: svg: a thinned series needs the x range given");
  check_range(p.x, "x");
  check_range(p.y, "y");
  x_min_ = *p.x.min;
  x_max_ = *p.x.max;
  const box b = plot_box(p);
  left_ = b.left;
  right_ = b.right;
  columns_ = columns_of(b);
}

void thinned_series::add(double x, double y) {
  const scale sx{log_x_, x_min_, x_max_};
  const bool y_ok = std::isfinite(y) && (!log_y_ || y > 0.0) && (!y_min_ || y >= *y_min_) &&
                    (!y_max_ || y <= *y_max_);
  if (!sx.drawable(x) || !y_ok) invalid("posenc: svg: a point of a thinned series cannot be drawn");
  const point q{count_++, x, y};
  if (by_column_.empty()) {
    points_.push_back(q);
    if (points_.size() > 4 * columns_) to_columns();
    return;
  }
  add_to_column(q);
}

void thinned_series::to_columns() {
  by_column_.assign(columns_ + 1, column{});
  for (const point& q : points_) add_to_column(q);
  points_.clear();
  points_.shrink_to_fit();
}

// select_points' rule: per column the first point, the first lowest, the first highest, the last.
void thinned_series::add_to_column(const point& q) {
  const scale sx{log_x_, x_min_, x_max_};
  const box b{left_, right_, 0.0, 0.0};
  column& k = by_column_[column_of(sx, b, q.x, columns_)];
  if (!k.used) {
    k = {q, q, q, q, true};
    return;
  }
  k.last = q;
  if (q.y < k.lo.y) k.lo = q;
  if (q.y > k.hi.y) k.hi = q;
}

void thinned_series::move_into(series& s) {
  std::vector<point> keep;
  if (by_column_.empty()) {
    keep = std::move(points_);
  } else {
    for (const column& k : by_column_)
      if (k.used) keep.insert(keep.end(), {k.first, k.lo, k.hi, k.last});
    std::sort(keep.begin(), keep.end(),
              [](const point& a, const point& b) { return a.index < b.index; });
    keep.erase(std::unique(keep.begin(), keep.end(),
                           [](const point& a, const point& b) { return a.index == b.index; }),
               keep.end());
  }
  s.x.clear();
  s.y.clear();
  for (const point& q : keep) {
    s.x.push_back(q.x);
    s.y.push_back(q.y);
  }
}

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default: {
        const auto u = static_cast<unsigned char>(c);
        out += (u < 0x20 && c != '\t' && c != '\n') || u == 0x7f ? '?' : c;
      }
    }
  }
  return out;
}

std::string render(const plot& p) {
  std::vector<const std::vector<double>*> xs;
  std::vector<const std::vector<double>*> ys;
  for (const series& s : p.lines) {
    if (s.x.size() != s.y.size())
      invalid("posenc: svg: series '" + printable(s.name) + "' has x and y of different sizes");
    xs.push_back(&s.x);
    ys.push_back(&s.y);
  }
  const scale sx = make_scale(p.x, xs, "x");
  const scale sy = make_scale(p.y, ys, "y");
  const int width = std::max(p.width, 200);
  const int height = std::max(p.height, 150);
  const legend_size legend = legend_of(p);
  const std::size_t named = legend.named;
  const double legend_w = legend.width;
  const box b = plot_box(p);

  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"posenc-plot\" width=\"" << width
    << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << ' ' << height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<title>" << escape(p.title) << "</title>\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (!p.title.empty())
    o << "<text class=\"title\" x=\"" << fixed3(width / 2.0)
      << "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" << escape(p.title) << "</text>\n";
  o << "<g class=\"plot\" data-x-min=\"" << full(sx.min) << "\" data-x-max=\"" << full(sx.max)
    << "\" data-y-min=\"" << full(sy.min) << "\" data-y-max=\"" << full(sy.max)
    << "\" data-x-scale=\"" << (sx.log ? "log" : "linear") << "\" data-y-scale=\""
    << (sy.log ? "log" : "linear") << "\" data-left=\"" << fixed3(b.left) << "\" data-right=\""
    << fixed3(b.right) << "\" data-top=\"" << fixed3(b.top) << "\" data-bottom=\""
    << fixed3(b.bottom) << "\">\n";
  o << "<rect class=\"frame\" x=\"" << fixed3(b.left) << "\" y=\"" << fixed3(b.top) << "\" width=\""
    << fixed3(b.right - b.left) << "\" height=\"" << fixed3(b.bottom - b.top)
    << "\" fill=\"none\" stroke=\"#bbbbbb\"/>\n";

  // x axis: tick marks below the frame, labels centred under them.
  open_axis(o, "x", {{b.left, b.bottom}, {b.right, b.bottom}});
  for (double v : ticks_of(sx)) {
    const double x = b.px(sx, v);
    tick(o, v, {{x, b.bottom}, {x, b.bottom + 5.0}}, {{x, b.top}, {x, b.bottom}},
         {x, b.bottom + 18.0}, "text-anchor=\"middle\"");
  }
  o << "<text class=\"axis-title\" x=\"" << fixed3((b.left + b.right) / 2.0) << "\" y=\""
    << fixed3(b.bottom + 40.0) << "\" text-anchor=\"middle\">" << escape(p.x.title)
    << "</text>\n</g>\n";

  // y axis: tick marks left of the frame, labels right-aligned before them.
  open_axis(o, "y", {{b.left, b.top}, {b.left, b.bottom}});
  for (double v : ticks_of(sy)) {
    const double y = b.py(sy, v);
    tick(o, v, {{b.left - 5.0, y}, {b.left, y}}, {{b.left, y}, {b.right, y}}, {b.left - 8.0, y},
         "text-anchor=\"end\" dominant-baseline=\"middle\"");
  }
  const std::string ty = fixed3((b.top + b.bottom) / 2.0);
  o << "<text class=\"axis-title\" x=\"18\" y=\"" << ty << "\" text-anchor=\"middle\""
    << " transform=\"rotate(-90 18 " << ty << ")\">" << escape(p.y.title) << "</text>\n</g>\n";

  // series
  for (std::size_t k = 0; k < p.lines.size(); ++k) {
    const series& s = p.lines[k];
    const std::string color = s.color.empty() ? palette[k % std::size(palette)] : escape(s.color);
    const drawn_points d = select_points(s, sx, sy, b);
    o << "<g class=\"series\" data-name=\"" << escape(s.name) << "\" data-index=\"" << k << "\">\n";
    if (s.line) {
      for (std::size_t j = 0; j < d.index.size(); ++j) {
        if (d.starts_run[j]) {
          if (j > 0) o << "\"/>\n";
          o << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.5\""
            << (s.dashed ? " stroke-dasharray=\"6 3\"" : "") << " points=\"";
        } else {
          o << ' ';
        }
        const std::size_t i = d.index[j];
        o << fixed3(b.px(sx, s.x[i])) << ',' << fixed3(b.py(sy, s.y[i]));
      }
      if (!d.index.empty()) o << "\"/>\n";
    }
    if (s.markers)
      for (std::size_t i : d.index)
        o << "<circle cx=\"" << fixed3(b.px(sx, s.x[i])) << "\" cy=\"" << fixed3(b.py(sy, s.y[i]))
          << "\" r=\"2.5\" fill=\"" << color << "\"/>\n";
    o << "</g>\n";
  }

  // legend
  if (named > 0) {
    const double w = legend_w;
    const double x0 = b.right + 10.0;
    const double y0 = b.top;
    o << "<g class=\"legend\">\n<rect x=\"" << fixed3(x0) << "\" y=\"" << fixed3(y0)
      << "\" width=\"" << fixed3(w) << "\" height=\""
      << fixed3(18.0 * static_cast<double>(named) + 8.0)
      << "\" fill=\"white\" fill-opacity=\"0.85\" stroke=\"#bbbbbb\"/>\n";
    std::size_t row = 0;
    for (std::size_t k = 0; k < p.lines.size(); ++k) {
      const series& s = p.lines[k];
      if (s.name.empty()) continue;
      const std::string color = s.color.empty() ? palette[k % std::size(palette)] : escape(s.color);
      const double y = y0 + 14.0 + 18.0 * static_cast<double>(row++);
      o << "<g class=\"legend-entry\" data-name=\"" << escape(s.name) << "\"><line x1=\""
        << fixed3(x0 + 6.0) << "\" y1=\"" << fixed3(y) << "\" x2=\"" << fixed3(x0 + 30.0)
        << "\" y2=\"" << fixed3(y) << "\" stroke=\"" << color << "\" stroke-width=\"2\""
        << (s.dashed ? " stroke-dasharray=\"6 3\"" : "") << "/><text x=\"" << fixed3(x0 + 35.0)
        << "\" y=\"" << fixed3(y) << "\" dominant-baseline=\"middle\">" << escape(s.name)
        << "</text></g>\n";
    }
    o << "</g>\n";
  }
  o << "</g>\n</svg>\n";
  return o.str();
}

void write(std::ostream& out, const plot& p) {
  out << render(p);
}

void write_file(const std::string& path, const plot& p) {
  write_output_file(path, render(p));
}

}  // namespace posenc::cli::svg
