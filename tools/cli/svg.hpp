// A small self-contained SVG line-plot writer for the tool's --svg outputs: one plot area with
// axes, tick marks and labels, axis titles, a title, a legend and any number of series, each on a
// linear or log10 axis. Host-only (strings, streams).
//
// The file is meant to be read back by programs as well as by eyes: the plot group carries the
// data range and the pixel box, so that every plotted point maps back to data coordinates:
//
//   <svg class="posenc-plot" width=W height=H viewBox="0 0 W H">
//     <title>TITLE</title>
//     <g class="plot" data-x-min=.. data-x-max=.. data-y-min=.. data-y-max=..
//        data-x-scale="linear|log" data-y-scale="linear|log"
//        data-left=.. data-right=.. data-top=.. data-bottom=..>
//       <rect class="frame" .../>
//       <g class="axis x">
//         <line class="axis-line"/>
//         <g class="tick" data-value=V><line/><text>LABEL</text></g> ...
//         <text class="axis-title">X TITLE</text>
//       </g>
//       <g class="axis y"> ... </g>
//       <g class="series" data-name="NAME" data-index="k">
//         <polyline points="px,py px,py ..."/> ...   (line)
//         <circle cx cy r/> ...                      (markers)
//       </g>
//       <g class="legend">
//         <g class="legend-entry" data-name="NAME"><line/><text>NAME</text></g> ...
//       </g>
//     </g>
//   </svg>
//
// Mapping: with t(v) = v (linear) or log10(v) (log),
//   px = left + (t(x) - t(x_min)) / (t(x_max) - t(x_min)) * (right - left)
//   py = bottom - (t(y) - t(y_min)) / (t(y_max) - t(y_min)) * (bottom - top)
// Pixel coordinates are written with 3 decimals (a resolution of 0.0005 px after rounding); the
// data-* numbers with 17 significant digits. Points outside [min, max] are dropped, like
// non-finite points and points <= 0 on a log axis; a dropped point breaks the line (a series is
// one polyline per unbroken run).
//
// A series with more points than 4 per pixel column is thinned before drawing: per pixel column
// of x the first, the lowest, the highest and the last point (in input order) are kept, so the
// drawn envelope is that of the data and every drawn point is a data point.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace posenc::cli::svg {

struct axis {
  std::string title;
  bool log = false;  // log10 scale (only points > 0 are drawn)
  // The range shown; unset: the range of the drawn data, widened to whole decades on a log axis
  // and to "nice" tick values on a linear one. A degenerate range is widened by +-1 (linear) or
  // one decade each way (log).
  std::optional<double> min;
  std::optional<double> max;
};

struct series {
  std::string name;  // legend text (empty: not in the legend)
  std::vector<double> x;
  std::vector<double> y;  // same size as x
  bool line = true;       // draw a polyline through the points
  bool markers = false;   // draw a small circle at each point
  bool dashed = false;
  std::string color;  // a CSS colour such as "#1f77b4"; empty: the palette's k-th colour
};

struct plot {
  std::string title;
  axis x;
  axis y;
  std::vector<series> lines;
  int width = 900;   // pixels, at least 200 (the legend takes the right margin)
  int height = 500;  // pixels, at least 150
};

// The range an axis shows for data spanning [lo, hi] when its ends are not given (as render
// chooses it): a plot whose series are thinned while they arrive (thinned_series) needs its x
// range before the data.
struct range {
  double min = 0.0;
  double max = 1.0;
};
range auto_range(const axis& a, double lo, double hi);

// A series too long to hold (decay's 16M distances), thinned while its points arrive: once there
// are more than 4 per pixel column, only the first, lowest, highest and last point of each column
// are kept, as render keeps them from the whole series, so the plot is the same and memory is
// O(width). The plot `p` must be final but for its series' points: x range given (both ends),
// width, and the series' names (the legend sets the plot box). Every point must be drawable (x
// within the range, y finite, and within the y range where given; > 0 on log axes): a gap in a
// line would need the positions of the dropped points. Throws cli_error (exit 1) otherwise.
class thinned_series {
 public:
  explicit thinned_series(const plot& p);
  void add(double x, double y);
  // The points kept, in the order they came, into s.x and s.y.
  void move_into(series& s);

 private:
  struct point {
    std::size_t index;
    double x;
    double y;
  };
  struct column {
    point first, lo, hi, last;
    bool used = false;
  };
  void to_columns();
  void add_to_column(const point& q);
  bool log_x_, log_y_;
  double x_min_, x_max_, left_, right_;
  std::optional<double> y_min_, y_max_;
  std::size_t columns_ = 0;
  std::size_t count_ = 0;
  std::vector<point> points_;      // every point, while there are at most 4 per column
  std::vector<column> by_column_;  // afterwards
};

// Text made safe inside an XML element or a double-quoted attribute (& < > " ' escaped; control
// characters other than tab and newline, which XML 1.0 cannot carry, become '?').
std::string escape(std::string_view text);

// The SVG document. Throws cli_error (exit 1) when a series' x and y differ in size, when an axis
// range given is not finite or has min >= max (or min <= 0 on a log axis), or when no point at
// all can be drawn and no range was given.
std::string render(const plot& p);
void write(std::ostream& out, const plot& p);

// render(p) written to `path` (replacing it) by write_output_file (output.hpp): under run(), the
// file appears only when the whole command succeeds. Throws cli_error (exit 1) when the file
// cannot be written; nothing is written when render throws.
void write_file(const std::string& path, const plot& p);

}  // namespace posenc::cli::svg
