"""Hand-written SVG charts: a horizontal bar chart with min–max whiskers and a line chart,
on linear or log scales. Knows nothing of benchmarks: it draws the series it is given."""

import math
from xml.sax.saxutils import escape

PALETTE = {
    "salias": "#1f5fbf",
    "aeron": "#c8372d",
    "iceoryx2": "#2b8a3e",
    "floor": "#6b6b6b",
    "spsc-floor": "#6b6b6b",
    "message-floor": "#a0813a",
    "ring-floor": "#6f8f3a",
}
EXTRA = ["#1f5fbf", "#7fa7e6", "#c8372d", "#f08f86", "#2b8a3e", "#8fd19e", "#8a5ac2", "#c9a4f0", "#d98b0b", "#f5c97a"]


def color_for(name, i=0):
    for k, c in PALETTE.items():
        if name.lower().startswith(k):
            return c
    return EXTRA[i % len(EXTRA)]


def nice_step(span, target=6):
    raw = span / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def fmt_tick(v):
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e9:
        return f"{v / 1e9:g}G"
    if a >= 1e6:
        return f"{v / 1e6:g}M"
    if a >= 1e4:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


class Scale:
    def __init__(self, lo, hi, a, b, log=False):
        self.log = log
        if log:
            lo = max(lo, 1e-9)
            hi = max(hi, lo * 2)
            # a little room around the data, not whole decades (ticks fall inside)
            self.lo, self.hi = lo / 1.25, hi * 1.25
        else:
            if hi <= lo:
                hi = lo + 1
            step = nice_step(hi - lo)
            self.lo, self.hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
            self.step = step
        self.a, self.b = a, b

    def __call__(self, v):
        if self.log:
            v = max(v, self.lo)
            t = (math.log10(v) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        else:
            t = (v - self.lo) / (self.hi - self.lo)
        return self.a + t * (self.b - self.a)

    def ticks(self):
        if self.log:
            out = []
            e0, e1 = math.floor(math.log10(self.lo)), math.ceil(math.log10(self.hi))
            decades = math.log10(self.hi / self.lo)
            for e in range(e0, e1 + 1):
                for m in (1, 2, 5) if decades <= 3 else (1,):
                    v = m * 10**e
                    if self.lo <= v <= self.hi:
                        out.append(v)
            return out
        n = int(round((self.hi - self.lo) / self.step))
        return [self.lo + i * self.step for i in range(n + 1)]


class Svg:
    def __init__(self, width, height):
        self.w, self.h = width, height
        self.parts = []

    def add(self, s):
        self.parts.append(s)

    def text(self, x, y, s, size=12, anchor="start", weight="normal", rotate=None, fill="#222"):
        tr = f' transform="rotate({rotate} {x:.1f} {y:.1f})"' if rotate else ""
        self.add(
            f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'font-weight="{weight}" fill="{fill}"{tr}>{escape(str(s))}</text>'
        )

    def line(self, x1, y1, x2, y2, stroke="#222", width=1, dash=None):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" stroke-width="{width}"{d}/>')

    def rect(self, x, y, w, h, fill, stroke="none", title=None):
        t = f"<title>{escape(title)}</title>" if title else ""
        self.add(f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0):.1f}" height="{max(h, 0):.1f}" fill="{fill}" stroke="{stroke}">{t}</rect>')

    def polyline(self, pts, stroke, width=2, dash=None):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        p = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        self.add(f'<polyline points="{p}" fill="none" stroke="{stroke}" stroke-width="{width}"{d}/>')

    def circle(self, x, y, r, fill, title=None):
        t = f"<title>{escape(title)}</title>" if title else ""
        self.add(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{fill}">{t}</circle>')

    def save(self, path):
        body = "\n".join(self.parts)
        doc = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.w}" height="{self.h}" '
            f'viewBox="0 0 {self.w} {self.h}" font-family="Helvetica, Arial, sans-serif">\n'
            f'<rect width="100%" height="100%" fill="white"/>\n{body}\n</svg>\n'
        )
        with open(path, "w", encoding="utf-8") as f:
            f.write(doc)


def legend(svg, items, x, y, width):
    """items: (name, color, dash); flows left to right, wrapping at `width`."""
    cx, cy = x, y
    for name, color, dash in items:
        w = 34 + 7 * len(name)
        if cx + w > x + width and cx > x:
            cx, cy = x, cy + 18
        svg.line(cx, cy - 4, cx + 22, cy - 4, stroke=color, width=3, dash=dash)
        svg.text(cx + 27, cy, name, size=11)
        cx += w
    return cy + 18


def line_chart(path, title, xlabel, ylabel, series, xlog=False, ylog=False, xticks=None, note=None):
    """series: dicts {name, color, dash, points: [(x, y)]}; xticks: [(x, label)] or None."""
    series = [s for s in series if s["points"]]
    if not series:
        return False
    W, left, right, top = 860, 80, 30, 50
    legend_rows = 1 + sum(34 + 7 * len(s["name"]) for s in series) // (W - left - right)
    H = 430 + 18 * legend_rows
    bottom = H - 70 - 18 * legend_rows
    xs = [p[0] for s in series for p in s["points"]]
    ys = [p[1] for s in series for p in s["points"]]
    if xticks:
        xs += [t[0] for t in xticks]
    sx = Scale(min(xs), max(xs), left, W - right, log=xlog) if not xticks else None
    if xticks:
        lo, hi = min(xs), max(xs)
        pad = (hi - lo) * 0.03 or 1
        sx = Scale(lo - pad, hi + pad, left, W - right)
        sx.lo, sx.hi = lo - pad, hi + pad
    sy = Scale(min(ys) if ylog else min(0, min(ys)), max(ys), bottom, top, log=ylog)
    svg = Svg(W, H)
    svg.text(W / 2, 24, title, size=15, anchor="middle", weight="bold")
    for v in sy.ticks():
        y = sy(v)
        svg.line(left, y, W - right, y, stroke="#e3e3e3")
        svg.text(left - 6, y + 4, fmt_tick(v), size=11, anchor="end")
    for v, label in xticks or [(v, fmt_tick(v)) for v in sx.ticks()]:
        x = sx(v)
        svg.line(x, top, x, bottom, stroke="#efefef")
        svg.line(x, bottom, x, bottom + 5)
        svg.text(x, bottom + 18, label, size=11, anchor="middle")
    svg.line(left, bottom, W - right, bottom)
    svg.line(left, top, left, bottom)
    svg.text((left + W - right) / 2, bottom + 38, xlabel, size=12, anchor="middle")
    svg.text(18, (top + bottom) / 2, ylabel, size=12, anchor="middle", rotate=-90)
    for s in series:
        pts = [(sx(x), sy(y)) for x, y in s["points"]]
        svg.polyline(pts, s["color"], dash=s.get("dash"))
        for (px, py), (x, y) in zip(pts, s["points"]):
            svg.circle(px, py, 3, s["color"], title=f"{s['name']}: {fmt_tick(x)} → {y:g}")
    end = legend(svg, [(s["name"], s["color"], s.get("dash")) for s in series], left, bottom + 58, W - left - right)
    if note:
        svg.text(left, end + 2, note, size=10, fill="#555")
    svg.h = max(H, int(end + 14))
    svg.save(path)
    return True


def hbar_chart(path, title, xlabel, groups, series, note=None, label_width=None):
    """groups: labels; series: dicts {name, color, values: {group: (med, lo, hi)}}.
    Horizontal bars (median) with min–max whiskers; one bar per series within a group."""
    series = [s for s in series if any(v for v in s["values"].values())]
    groups = [g for g in groups if any(s["values"].get(g) for s in series)]
    if not groups:
        return False
    if label_width is None:
        label_width = 20 + int(6.4 * max(len(g) for g in groups))
    W, left, right, top = 860, label_width, 40, 50
    bar, gap = 14, 10
    per_group = [sum(1 for s in series if s["values"].get(g)) for g in groups]
    plot_h = sum(n * bar + gap for n in per_group)
    bottom = top + plot_h
    legend_rows = 0 if len(series) == 1 else 1 + sum(34 + 7 * len(s["name"]) for s in series) // (W - 40)
    H = int(bottom + 60 + 18 * legend_rows + (14 if note else 0))
    hi = max(v[2] for s in series for v in s["values"].values() if v)
    sx = Scale(0, hi, left, W - right)
    svg = Svg(W, H)
    svg.text(W / 2, 24, title, size=15, anchor="middle", weight="bold")
    for v in sx.ticks():
        x = sx(v)
        svg.line(x, top, x, bottom, stroke="#e3e3e3")
        svg.text(x, bottom + 16, fmt_tick(v), size=11, anchor="middle")
    y = top
    for g, n in zip(groups, per_group):
        y0 = y
        for s in series:
            v = s["values"].get(g)
            if not v:
                continue
            med, lo, hi_ = v
            tip = f"{g} / {s['name']}: median {med:g} [min {lo:g}, max {hi_:g}]"
            svg.rect(left, y + 1, sx(med) - left, bar - 2, s["color"], title=tip)
            cy = y + bar / 2
            svg.line(sx(lo), cy, sx(hi_), cy, stroke="#111", width=1.2)
            svg.line(sx(lo), cy - 4, sx(lo), cy + 4, stroke="#111", width=1.2)
            svg.line(sx(hi_), cy - 4, sx(hi_), cy + 4, stroke="#111", width=1.2)
            svg.text(sx(hi_) + 5, cy + 4, f"{med:.3g}", size=10, fill="#333")
            y += bar
        svg.text(left - 8, (y0 + y) / 2 + 4, g, size=11, anchor="end")
        y += gap
    svg.line(left, top, left, bottom)
    svg.line(left, bottom, W - right, bottom)
    svg.text((left + W - right) / 2, bottom + 34, xlabel, size=12, anchor="middle")
    end = bottom + 52
    if len(series) > 1:
        end = legend(svg, [(s["name"], s["color"], None) for s in series], 20, bottom + 56, W - 40)
    if note:
        svg.text(20, end + 2, note, size=10, fill="#555")
    svg.save(path)
    return True
