"""Inline SVG plots for the site: hand-written SVG, so fast, deterministic and self-contained.

Why not a charting library (Vega-Lite, Plotly): a plot here is a few lines with bands over
five lengths, which SVG draws in a few kilobytes that read without JavaScript, render the same
bytes every time (the site of one snapshot is reproducible, and tests read the plots without a
browser), and need no 0.7-3.5 MB script shipped in the site. What a library would add, picking,
highlighting and filtering lines, is a few lines of the site's own script over the groups drawn
here (``base.html``): each series is a ``<g class="series" data-key="NAME">``.

An encoding keeps one colour and dash on every page (:func:`assign_styles`, once per site over
every encoding it shows; :func:`colour`, :func:`dash`): ALiBi is the same line on a board,
on the compare page and on its own page. Eighteen colours cannot tell forty lines apart, so a
plot of many rows does not draw forty lines: its page shows the top rows and a reader's selection
(a series drawn ``hidden`` is in the SVG, not shown, for the site's script to show), and past the
palette an encoding's line differs by its dash.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from dataclasses import dataclass, field
from html import escape

FONT = 11  # px
CHAR_W = 0.58 * FONT  # a rough width of one character, for layout
SCALE_COLOURS = ("#1b6ca8", "#d1495b", "#2a9d8f", "#e9a03b", "#6a4c93", "#3d5a40", "#8d6e63", "#c2185b")
# distinct hues and lightnesses, each dark enough for a white page (after Kelly's and Tableau's palettes)
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f",
           "#bcbd22", "#000075", "#800000", "#469990", "#f032e6", "#9a6324", "#3cb44b", "#4363d8", "#e6a100")
DASHES = ("", "6 3", "2 2", "8 3 2 3")
LEGEND_ROWS = 16  # the legend items a plot of lines leaves room for (a reader picks the lines shown)
_styles: dict[str, tuple[str, str]] = {}


def assign_styles(names) -> None:
    """Give each of ``names`` in the order given the next palette colour; past the palette, the next
    dash. Called once per site, with every encoding it shows: its colours then hold on every page."""
    _styles.clear()
    for i, name in enumerate(dict.fromkeys(names)):
        _styles[name] = (PALETTE[i % len(PALETTE)], DASHES[(i // len(PALETTE)) % len(DASHES)])


def colour(name: str) -> str:
    """The encoding's colour: the site's assignment, else a hue from a hash of its name."""
    if name in _styles:
        return _styles[name][0]
    h = hashlib.sha256(name.encode()).digest()
    hue = int.from_bytes(h[:2], "big") * 360 // 65536
    return f"hsl({hue},{55 + h[2] % 35}%,{30 + h[3] % 22}%)"


def dash(name: str) -> str:
    """The encoding's dash pattern: the site's assignment, else one from a hash of the name."""
    if name in _styles:
        return _styles[name][1]
    return DASHES[hashlib.sha256(name.encode()).digest()[4] % len(DASHES)]


# A figure beyond this is no measurement a plot can place (a diverged loss, a record's 1e308):
# it is drawn as a gap, like a missing value, so one value cannot crash or flatten a render.
PLOT_LIMIT = 1e12


def plottable(v) -> bool:
    return v is not None and isinstance(v, (int, float)) and math.isfinite(v) and abs(v) <= PLOT_LIMIT


def _plottable_point(x, y, lo, hi):
    """A series point with what cannot be drawn taken out: no y (a gap) where x or y cannot be, no
    band where a bound cannot be."""
    if not plottable(x) or not plottable(y):
        return (x if plottable(x) else 0.0, None, None, None)
    return (x, y, lo if plottable(lo) else None, hi if plottable(hi) else None)


@dataclass
class Series:
    key: str  # the encoding (its colour and the group's data-key)
    label: str
    points: list[tuple[float, float | None, float | None, float | None]]  # x, y, lo, hi (None: no value there)
    colour: str | None = None
    dash: str | None = None
    hidden: bool = False  # drawn for the site's script to show, not shown at first

    def __post_init__(self):
        self.colour = self.colour or colour(self.key)
        self.dash = dash(self.key) if self.dash is None else self.dash
        self.points = [_plottable_point(*p) for p in self.points]


@dataclass
class Point:
    key: str
    label: str
    x: float
    y: float
    x_err: tuple[float, float] | None = None  # (lo, hi)
    y_err: tuple[float, float] | None = None
    colour: str | None = None
    hidden: bool = False  # drawn for the site's script to show, not shown at first

    def __post_init__(self):
        self.colour = self.colour or colour(self.key)
        if self.x_err is not None and not all(map(plottable, self.x_err)):
            self.x_err = None
        if self.y_err is not None and not all(map(plottable, self.y_err)):
            self.y_err = None

    @property
    def drawable(self) -> bool:
        return plottable(self.x) and plottable(self.y)


@dataclass
class _Frame:
    """Data -> pixel mapping of a plot area."""

    left: float
    top: float
    width: float
    height: float
    x0: float
    x1: float
    y0: float
    y1: float
    log2_x: bool = False
    parts: list[str] = field(default_factory=list)

    def px(self, x: float) -> float:
        if self.log2_x:
            x, lo, hi = math.log2(x), math.log2(self.x0), math.log2(self.x1)
        else:
            lo, hi = self.x0, self.x1
        return self.left + (x - lo) / ((hi - lo) or 1) * self.width

    def py(self, y: float) -> float:
        return self.top + self.height - (y - self.y0) / ((self.y1 - self.y0) or 1) * self.height


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]; a range no plot can hold (not finite, beyond
    PLOT_LIMIT) gets 0 to 1, and at most 4n + 2 ticks are made whatever the floats do."""
    if not (plottable(lo) and plottable(hi)):
        lo, hi = 0.0, 1.0
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    step = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * step:
            step *= m
            break
    first = math.floor(lo / step) * step
    ticks, t = [], first
    while t <= hi + step * 1e-9 and len(ticks) < 4 * n + 2:
        ticks.append(round(t, 10))
        if t + step == t:  # a step below the floats' resolution at this magnitude
            break
        t += step
    if ticks[-1] < hi:
        ticks.append(round(t, 10))
    return ticks


def _fmt_tick(v: float) -> str:
    return f"{v:g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.0e}"


def _text(x, y, s, anchor="start", size=FONT, extra="") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"{extra}>{escape(s)}</text>'


def _axes(f: _Frame, xticks, yticks, xlabel, ylabel, title) -> None:
    p = f.parts
    bottom = f.top + f.height
    p.append(f'<line x1="{f.left}" y1="{bottom}" x2="{f.left + f.width}" y2="{bottom}" stroke="#555"/>')
    p.append(f'<line x1="{f.left}" y1="{f.top}" x2="{f.left}" y2="{bottom}" stroke="#555"/>')
    for t in yticks:
        y = f.py(t)
        p.append(f'<line x1="{f.left}" y1="{y:.1f}" x2="{f.left + f.width}" y2="{y:.1f}" stroke="#eee"/>')
        p.append(_text(f.left - 4, y + 3.5, _fmt_tick(t), "end"))
    for t in xticks:
        x = f.px(t)
        p.append(f'<line x1="{x:.1f}" y1="{bottom}" x2="{x:.1f}" y2="{bottom + 4}" stroke="#555"/>')
        p.append(_text(x, bottom + 15, _fmt_tick(t), "middle"))
    p.append(_text(f.left + f.width / 2, bottom + 32, xlabel, "middle"))
    p.append(_text(12, f.top + f.height / 2, ylabel, "middle", extra=f' transform="rotate(-90 12 {f.top + f.height / 2:.1f})"'))
    p.append(_text(f.left, 14, title, "start", FONT + 1, ' font-weight="600"'))


def _svg(width: float, height: float, parts: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 {width:.0f} {height:.0f}" '
            f'width="{width:.0f}" height="{height:.0f}" role="img" aria-label="{escape(label)}" '
            f'font-family="system-ui, sans-serif">' + "".join(parts) + "</svg>")


def _range(values: list[float], pad: float = 0.05) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    span = (hi - lo) or abs(hi) or 1.0
    return lo - pad * span, hi + pad * span


def _y_range(means: list[float], bands: list[float], bounds: tuple[float, float] | None) -> tuple[float, float]:
    """The lines' range, widened toward the bands by at most the lines' own span, within ``bounds``."""
    lo, hi = min(means), max(means)
    span = (hi - lo) or 0.1 * abs(hi) or 1.0
    lo, hi = max(min(bands + [lo]), lo - span), min(max(bands + [hi]), hi + span)
    if bounds is not None:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    return _range([lo, hi], 0.03)


def _legend(parts: list[str], x: float, y: float, items: list[tuple[str, str, str, str, bool]]) -> None:
    """items: (key, label, colour, dash, hidden); one line each, the shown ones stacked in order. A
    hidden series' item is drawn hidden: the site's script shows and restacks it (``restack`` in
    base.html) when a reader shows its line."""
    shown = 0
    for i, (key, label, col, dsh, hidden) in enumerate(items):
        yy = y + shown * 15
        shown += not hidden
        parts.append(f'<g class="legend-item" data-key="{escape(key)}" data-order="{i}"'
                     + (' style="display:none"' if hidden else "") + ">"
                     f'<line x1="{x}" y1="{yy - 4}" x2="{x + 18}" y2="{yy - 4}" stroke="{col}" stroke-width="2.5"'
                     + (f' stroke-dasharray="{dsh}"' if dsh else "") + "/>"
                     + _text(x + 23, yy, label) + "</g>")


def line_plot(series: list[Series], *, title: str, xlabel: str, ylabel: str, log2_x: bool = True,
              marker_x: float | None = None, marker_label: str = "", legend: bool = True,
              bounds: tuple[float, float] | None = None, y_from: list[Series] | None = None,
              chance: float | None = None, width: float = 560, height: float = 300) -> str:
    """Lines with interval bands; x on a log2 axis; an optional vertical marker (the training length)
    and a horizontal line at the chance level.

    The y range follows the lines of ``y_from`` (default: the series not ``hidden``, which a
    board's page shows at first; a page that draws some rows of a board passes the whole board, so
    the axis is the board's and a flat line looks flat); a band or a line beyond it is cut at the
    plot's edge (a point's hover text keeps its figure), so two seeds' wide t intervals, or one
    row that diverges beyond the training length, do not flatten every line."""
    if log2_x:  # a point at x <= 0 has no place on a log axis: a gap
        series = [dataclasses.replace(s, points=[p if p[0] > 0 else (1.0, None, None, None) for p in s.points])
                  for s in series]
    xs = [x for s in series for x, y, *_ in s.points if y is not None]
    if not xs:
        return ""
    ranged = y_from or [s for s in series if not s.hidden] or series
    ys = _y_range([y for s in ranged for _, y, *_ in s.points if y is not None]
                  + ([chance] if chance is not None else []),
                  [v for s in ranged for _, y, lo, hi in s.points if y is not None for v in (lo, hi) if v is not None],
                  bounds)
    legend_w = (max(len(s.label) for s in series) * CHAR_W + 36) if legend else 0
    height = max(height, 60 + 15 * min(len(series), LEGEND_ROWS)) if legend else height
    f = _Frame(56, 26, width - 56 - 12, height - 26 - 44, min(xs), max(xs), *ys, log2_x=log2_x)
    if marker_x is not None:
        f.x0, f.x1 = min(f.x0, marker_x), max(f.x1, marker_x)
    if f.x0 == f.x1:
        f.x0, f.x1 = (f.x0 / 2, f.x1 * 2) if log2_x else (f.x0 - 1, f.x1 + 1)
    if log2_x:
        xticks = [2 ** k for k in range(math.floor(math.log2(f.x0)), math.ceil(math.log2(f.x1)) + 1)]
        f.x0, f.x1 = xticks[0], xticks[-1]
    else:
        xticks = nice_ticks(f.x0, f.x1)
        f.x0, f.x1 = xticks[0], xticks[-1]
    yticks = nice_ticks(f.y0, f.y1)
    if bounds is not None:  # an accuracy's axis stops at 0 and 1
        yticks = [t for t in yticks if bounds[0] <= t <= bounds[1]] or yticks
    f.y0, f.y1 = min(yticks[0], f.y0), max(yticks[-1], f.y1)
    if bounds is not None:
        f.y0, f.y1 = max(f.y0, bounds[0]), min(f.y1, bounds[1])
    _axes(f, xticks, yticks, xlabel, ylabel, title)
    if marker_x is not None:
        x = f.px(marker_x)
        f.parts.append(f'<line class="marker" x1="{x:.1f}" y1="{f.top}" x2="{x:.1f}" y2="{f.top + f.height}" '
                       'stroke="#777" stroke-dasharray="4 3"/>')
        f.parts.append(_text(x + 3, f.top + 10, marker_label, extra=' fill="#555"'))
    if chance is not None:
        y = f.py(chance)
        f.parts.append(f'<line class="chance" x1="{f.left}" y1="{y:.1f}" x2="{f.left + f.width}" y2="{y:.1f}" '
                       'stroke="#999" stroke-dasharray="1 3"/>')
        f.parts.append(_text(f.left + f.width - 3, y - 3, f"chance {chance:.3g}", "end", extra=' fill="#555"'))
    clip = "clip-" + hashlib.sha256(f"{title}|{xlabel}|{ylabel}".encode()).hexdigest()[:10]  # unique on a page
    f.parts.append(f'<clipPath id="{clip}"><rect x="{f.left}" y="{f.top}" width="{f.width}" height="{f.height}"/></clipPath>'
                   f'<g clip-path="url(#{clip})">')
    for order, s in enumerate(series):  # data-order keeps the given order (a board's: best first) for the script
        f.parts.append(_series(f, s, order))
    f.parts.append("</g>")
    if legend:
        _legend(f.parts, width + 8, 40, [(s.key, s.label, s.colour, s.dash, s.hidden) for s in series])
    return _svg(width + legend_w, height, f.parts, title)


def _series(f: _Frame, s: Series, order: int = 0) -> str:
    out = [f'<g class="series" data-key="{escape(s.key)}" data-order="{order}"'
           + (' style="display:none"' if s.hidden else "") + ">"]
    runs, current = [], []
    for point in s.points:
        if point[1] is None:
            if current:
                runs.append(current)
            current = []
        else:
            current.append(point)
    if current:
        runs.append(current)
    for run in runs:
        banded = [p for p in run if p[2] is not None and p[3] is not None]
        if len(banded) > 1:
            def clip(v: float) -> float:
                return min(max(v, f.y0), f.y1)

            edge = [f"{f.px(x):.1f},{f.py(clip(hi)):.1f}" for x, _, _, hi in banded]
            edge += [f"{f.px(x):.1f},{f.py(clip(lo)):.1f}" for x, _, lo, _ in reversed(banded)]
            out.append(f'<polygon class="band" points="{" ".join(edge)}" fill="{s.colour}" fill-opacity="0.08"/>')
        path = " ".join(f"{f.px(x):.1f},{f.py(y):.1f}" for x, y, *_ in run)
        out.append(f'<polyline points="{path}" fill="none" stroke="{s.colour}" stroke-width="1.8"'
                   + (f' stroke-dasharray="{s.dash}"' if s.dash else "") + "/>")
        for x, y, lo, hi in run:
            tip = f"{s.label}: {y:.4g} at {x:g}" + (f" [{lo:.4g}, {hi:.4g}]" if lo is not None and hi is not None else "")
            out.append(f'<circle cx="{f.px(x):.1f}" cy="{f.py(y):.1f}" r="2.6" fill="{s.colour}">'
                       f"<title>{escape(tip)}</title></circle>")
    out.append("</g>")
    return "".join(out)


def scatter_plot(points: list[Point], *, title: str, xlabel: str, ylabel: str, width: float = 560,
                 height: float = 360, legend: bool = True) -> str:
    """Points with error bars, a legend (``legend``: else the page's own), and direct labels
    wherever one fits without overlapping."""
    points = [p for p in points if p.drawable]
    if not points:
        return ""
    xs = [v for p in points for v in (p.x, *(p.x_err or ()))]
    ys = [v for p in points for v in (p.y, *(p.y_err or ()))]
    legend_w = (max(len(p.label) for p in points) * CHAR_W + 36) if legend else 0
    height = max(height, 60 + 15 * len(points)) if legend else height
    f = _Frame(56, 26, width - 56 - 12, height - 26 - 44, *_range(xs, 0.08), *_range(ys, 0.08))
    xticks, yticks = nice_ticks(f.x0, f.x1), nice_ticks(f.y0, f.y1)
    f.x0, f.x1, f.y0, f.y1 = xticks[0], xticks[-1], yticks[0], yticks[-1]
    _axes(f, xticks, yticks, xlabel, ylabel, title)
    # the shown markers; a hidden point gets no direct label (a reader who shows it reads its legend item)
    boxes = [(f.px(p.x) - 4, f.py(p.y) - 4, f.px(p.x) + 4, f.py(p.y) + 4) for p in points if not p.hidden]
    for p in points:
        g = [f'<g class="series" data-key="{escape(p.key)}"' + (' style="display:none"' if p.hidden else "") + ">"]
        cx, cy = f.px(p.x), f.py(p.y)
        if p.x_err:
            g.append(f'<line x1="{f.px(p.x_err[0]):.1f}" y1="{cy:.1f}" x2="{f.px(p.x_err[1]):.1f}" y2="{cy:.1f}" '
                     f'stroke="{p.colour}" stroke-width="1.2"/>')
        if p.y_err:
            g.append(f'<line x1="{cx:.1f}" y1="{f.py(p.y_err[0]):.1f}" x2="{cx:.1f}" y2="{f.py(p.y_err[1]):.1f}" '
                     f'stroke="{p.colour}" stroke-width="1.2"/>')
        tip = f"{p.label}: x {p.x:.3g}, y {p.y:.3g}"
        g.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4" fill="{p.colour}"><title>{escape(tip)}</title></circle>')
        spot = None if p.hidden else _free_spot(cx, cy, len(p.label) * CHAR_W * 0.9, boxes, f)
        if spot is not None:
            boxes.append(spot)
            g.append(_text(spot[0], spot[3] - 2, p.label, size=FONT - 1, extra=f' fill="{p.colour}"'))
        g.append("</g>")
        f.parts.append("".join(g))
    if legend:
        _legend(f.parts, width + 8, 40, [(p.key, p.label, p.colour, "", p.hidden) for p in points])
    return _svg(width + legend_w, height, f.parts, title)


def _free_spot(cx, cy, w, boxes, f: _Frame):
    """A label box near (cx, cy) that overlaps no marker or label placed so far, inside the plot; or None."""
    h = FONT
    for dx, dy in ((6, -4), (6, 10), (-6 - w, -4), (-6 - w, 10), (-w / 2, -10), (-w / 2, 18)):
        box = (cx + dx, cy + dy - h, cx + dx + w, cy + dy)
        inside = f.left <= box[0] and box[2] <= f.left + f.width and f.top <= box[1] and box[3] <= f.top + f.height
        if inside and not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in boxes):
            return box
    return None


def scale_colour(i: int) -> str:
    return SCALE_COLOURS[i % len(SCALE_COLOURS)]
