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
