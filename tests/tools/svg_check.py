#!/usr/bin/env python3
"""The --svg plots of `posenc decay|dials|ramp|entropy` read back with a real XML parser.

For each command the same configuration is run twice, once with --svg and once for its CSV. Every
point of every plotted series is mapped back from pixels to data coordinates with the data range
and pixel box that the plot group carries (tools/cli/svg.hpp), and must land on a CSV row within
the pixel resolution: coordinates are written with 3 decimals, so a drawn point is within 0.0005 px
of the exact mapping of its data point (plus ~1e-9 px of double rounding). Where a series is
thinned (more than 4 points per pixel column), the lowest and highest CSV value of every pixel
column must still be drawn. The plot must have both axes with ticks, tick labels and titles, and a
legend naming each series. A negative control shifts one point by 0.01 px and expects the matcher
to reject it.

usage: svg_check.py POSENC_EXECUTABLE WORK_DIR
"""

import csv
import io
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
TOL_PX = 0.0005 + 1e-6
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def run(exe, args):
    p = subprocess.run([exe] + args, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise SystemExit("posenc %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


class Mapping:
    """Data <-> pixel mapping of one plot group (the formula of tools/cli/svg.hpp)."""

    def __init__(self, g):
        a = g.attrib
        self.xlog = a["data-x-scale"] == "log"
        self.ylog = a["data-y-scale"] == "log"
        self.xmin, self.xmax = float(a["data-x-min"]), float(a["data-x-max"])
        self.ymin, self.ymax = float(a["data-y-min"]), float(a["data-y-max"])
        self.left, self.right = float(a["data-left"]), float(a["data-right"])
        self.top, self.bottom = float(a["data-top"]), float(a["data-bottom"])

    @staticmethod
    def _t(v, log):
        return math.log10(v) if log else v

    def px(self, x):
        t0, t1 = self._t(self.xmin, self.xlog), self._t(self.xmax, self.xlog)
        return self.left + (self._t(x, self.xlog) - t0) / (t1 - t0) * (self.right - self.left)

    def py(self, y):
        t0, t1 = self._t(self.ymin, self.ylog), self._t(self.ymax, self.ylog)
        return self.bottom - (self._t(y, self.ylog) - t0) / (t1 - t0) * (self.bottom - self.top)

    def x_of(self, px):
        t0, t1 = self._t(self.xmin, self.xlog), self._t(self.xmax, self.xlog)
        t = t0 + (px - self.left) / (self.right - self.left) * (t1 - t0)
        return 10.0 ** t if self.xlog else t


def series_points(g):
    """All (px, py) of a series group: polyline vertices, else circle centres."""
    pts = []
    for pl in g.iter(NS + "polyline"):
        for pair in pl.attrib["points"].split():
            x, y = pair.split(",")
            pts.append((float(x), float(y)))
    if not pts:
        for c in g.iter(NS + "circle"):
            pts.append((float(c.attrib["cx"]), float(c.attrib["cy"])))
    return pts


def matches(m, pt, data, integer_x):
    """Whether pixel point pt is the mapping of some (x, y) in data (a dict x -> y)."""
    px, py = pt
    if integer_x:
        lo = m.x_of(px - 2 * TOL_PX)
        hi = m.x_of(px + 2 * TOL_PX)
        candidates = range(int(math.floor(min(lo, hi))), int(math.ceil(max(lo, hi))) + 1)
    else:
        candidates = data.keys()
    for x in candidates:
        if x not in data or (m.xlog and x <= 0) or (m.ylog and data[x] <= 0):
            continue
        if abs(m.px(x) - px) <= TOL_PX and abs(m.py(data[x]) - py) <= TOL_PX:
            return True
    return False


def check_plot(name, svg_text, expected, integer_x=True):
    """expected: series name -> {x: y} (the CSV values). Checks structure and every point."""
    root = ET.fromstring(svg_text)
    plots = [g for g in root.iter(NS + "g") if g.attrib.get("class") == "plot"]
    if len(plots) != 1:
        fail("%s: %d plot groups" % (name, len(plots)))
        return
    g = plots[0]
    m = Mapping(g)
    # Axes: lines, >= 2 ticks with labels, titles.
    for axis in ("axis x", "axis y"):
        ax = [a for a in g.iter(NS + "g") if a.attrib.get("class") == axis]
        if len(ax) != 1:
            fail("%s: no <g class='%s'>" % (name, axis))
            continue
        ticks = [t for t in ax[0].iter(NS + "g") if t.attrib.get("class") == "tick"]
        labels = [t.find(NS + "text") for t in ticks]
        if len(ticks) < 2 or any(lb is None or not (lb.text or "").strip() for lb in labels):
            fail("%s: %s has %d ticks or an empty label" % (name, axis, len(ticks)))
        for t in ticks:  # each tick line sits where its value maps
            v = float(t.attrib["data-value"])
            ln = t.find(NS + "line")
            if axis == "axis x":
                got, want = float(ln.attrib["x1"]), m.px(v)
            else:
                got, want = float(ln.attrib["y1"]), m.py(v)
            if abs(got - want) > TOL_PX:
                fail("%s: %s tick %r at %r, expected %r" % (name, axis, v, got, want))
        titles = [t for t in ax[0].iter(NS + "text") if t.attrib.get("class") == "axis-title"]
        if len(titles) != 1 or not (titles[0].text or "").strip():
            fail("%s: %s has no title" % (name, axis))
    legend = [e.attrib.get("data-name") for e in g.iter(NS + "g")
              if e.attrib.get("class") == "legend-entry"]
    series = {s.attrib["data-name"]: s for s in g.iter(NS + "g")
              if s.attrib.get("class") == "series"}
    if sorted(series) != sorted(expected):
        fail("%s: series %s, expected %s" % (name, sorted(series), sorted(expected)))
    if sorted(legend) != sorted(expected):
        fail("%s: legend %s, expected %s" % (name, sorted(legend), sorted(expected)))
    for sname, data in expected.items():
        if sname not in series:
            continue
        pts = series_points(series[sname])
        drawable = {x: y for x, y in data.items()
                    if m.xmin <= x <= m.xmax and m.ymin <= y <= m.ymax
                    and (not m.xlog or x > 0) and (not m.ylog or y > 0)}
        bad = [p for p in pts if not matches(m, p, data, integer_x)]
        if bad:
            fail("%s/%s: %d of %d points are not on the data, e.g. %r"
                 % (name, sname, len(bad), len(pts), bad[0]))
        # Coverage: every drawable point, or per pixel column its lowest and highest value.
        columns = {}
        for x, y in drawable.items():
            c = int(math.floor(m.px(x) - m.left))
            lo, hi = columns.get(c, (y, y))
            columns[c] = (min(lo, y), max(hi, y))
        thinned = len(drawable) > 4 * (int(m.right - m.left) + 1)
        if not thinned and len(pts) != len(drawable):
            fail("%s/%s: %d points drawn, %d expected" % (name, sname, len(pts), len(drawable)))
        if thinned:
            drawn_cols = {}
            for px, py in pts:
                c = int(math.floor(px - m.left))
                drawn_cols.setdefault(c, []).append(py)
            missing = 0
            for c, (lo, hi) in columns.items():
                ys = drawn_cols.get(c, []) + drawn_cols.get(c - 1, []) + drawn_cols.get(c + 1, [])
                for v in (lo, hi):
                    if not any(abs(m.py(v) - y) <= TOL_PX for y in ys):
                        missing += 1
            if missing:
                fail("%s/%s: %d column extremes not drawn" % (name, sname, missing))
        print("ok   %s/%s: %d points checked%s" % (name, sname, len(pts),
                                                   " (thinned)" if thinned else ""))
    # Negative control: a point moved by 0.01 px must not match.
    for sname, data in expected.items():
        if sname in series:
            pts = series_points(series[sname])
            if pts:
                moved = (pts[0][0], pts[0][1] + 0.01)
                if matches(m, moved, data, integer_x):
                    fail("%s/%s: a point moved by 0.01 px still matches" % (name, sname))
            break


def read_csv(text):
    # The "# " lines before the column names echo the configuration (docs/cli.md).
    return list(csv.DictReader(line for line in io.StringIO(text) if not line.startswith("#")))


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    exe, work = sys.argv[1], sys.argv[2]
    if not os.path.exists(exe):
        print("skip: no executable " + exe)
        return 77
    os.makedirs(work, exist_ok=True)

    # decay: d = 128, base 10^4; 500 distances (not thinned) and 65536 (thinned on log-x).
    for n in (500, 65536):
        cfg = ["--head-dim", "128", "--base", "10000", "--max-distance", str(n)]
        path = os.path.join(work, "svg_check_decay_%d.svg" % n)
        run(exe, ["decay"] + cfg + ["--svg", path])
        rows = read_csv(run(exe, ["decay"] + cfg + ["--csv"]))
        if len(rows) != n + 1:
            fail("decay csv: %d rows, expected %d" % (len(rows), n + 1))
        bound = {int(r["distance"]): float(r["bound"]) for r in rows}
        means = {int(r["distance"]): float(r["window_mean"]) for r in rows}
        with open(path, encoding="utf-8") as f:
            check_plot("decay %d" % n, f.read(), {"f(r)": bound, "dyadic-window mean": means})

    llama3 = ["--head-dim", "128", "--base", "500000", "--scaling", "llama3", "--factor", "8",
              "--original-max", "8192", "--low-freq-factor", "1", "--high-freq-factor", "4"]
    yarn = ["--head-dim", "128", "--base", "10000", "--scaling", "yarn", "--factor", "4",
            "--original-max", "4096"]

    # dials: scaled and default wavelengths per pair, and the context line.
    for name, cfg, label in (("llama3", llama3, "scaled (llama3)"), ("yarn", yarn, "scaled (yarn)"),
                             ("none", ["--head-dim", "64", "--base", "10000"], "wavelength")):
        path = os.path.join(work, "svg_check_dials_%s.svg" % name)
        run(exe, ["dials"] + cfg + ["--positions", "131072", "--svg", path])
        rows = read_csv(run(exe, ["dials"] + cfg + ["--positions", "131072", "--format", "csv"]))
        expected = {label: {int(r["pair"]): float(r["wavelength"]) for r in rows},
                    "context": {0: 131072.0, len(rows) - 1: 131072.0}}
        if name != "none":
            expected["default (unscaled)"] = {int(r["pair"]): float(r["default_wavelength"])
                                              for r in rows}
        with open(path, encoding="utf-8") as f:
            check_plot("dials " + name, f.read(), expected)

    # ramp: the interpolation weight (and llama3's smooth_factor).
    for name, cfg in (("llama3", llama3), ("yarn", yarn)):
        path = os.path.join(work, "svg_check_ramp_%s.svg" % name)
        run(exe, ["ramp"] + cfg + ["--svg", path])
        rows = read_csv(run(exe, ["ramp"] + cfg + ["--format", "csv"]))
        expected = {"interpolation weight": {int(r["pair"]): float(r["interpolation_weight"])
                                             for r in rows}}
        if name == "llama3":
            expected["HF smooth_factor"] = {int(r["pair"]): float(r["smooth_factor"])
                                            for r in rows}
        with open(path, encoding="utf-8") as f:
            check_plot("ramp " + name, f.read(), expected)

    # entropy: the scaled, unscaled and tempered curves and log L at each length of the CSV.
    cfg = ["--head-dim", "64", "--base", "10000", "--scaling", "linear", "--factor", "4",
           "--lengths", "16:4096", "--samples", "4", "--temperature", "llama4",
           "--floor-scale", "64"]
    path = os.path.join(work, "svg_check_entropy.svg")
    run(exe, ["entropy"] + cfg + ["--svg", path])
    rows = read_csv(run(exe, ["entropy"] + cfg + ["--format", "csv"]))
    if len(rows) != 9:
        fail("entropy csv: %d rows, expected 9" % len(rows))
    expected = {name: {int(r["length"]): float(r[column]) for r in rows}
                for name, column in (("scaled", "scaled"), ("unscaled", "unscaled"),
                                     ("tempered (llama4)", "tempered"),
                                     ("log L (uniform attention)", "log_length"))}
    with open(path, encoding="utf-8") as f:
        check_plot("entropy", f.read(), expected)

    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("all SVG checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
