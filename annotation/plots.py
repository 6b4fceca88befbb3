"""Bar and line charts as geometry for inline SVG (the template draws; no JavaScript, no
build, nothing inline for the Content-Security-Policy to refuse).

The SVG is drawn at its own width in CSS pixels and only shrinks when its card is
narrower, so text stays at the stylesheet's size (``FONT``); plots for half-width cards are
drawn narrower (``width=SMALL``). Labels are measured (``text_width``) so that they fit:
long ones are shortened with an ellipsis and keep their full text in a tooltip. Value
axes start at the data's real range, never clipped.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

#: Font size of plot text in CSS pixels (``.plot text`` in crowdqa.css).
FONT = 13
ROW = 26
#: Width of plots in full-width cards.
WIDTH = 560
#: Width of plots in half-width cards (``.grid-2`` columns are at least 22rem), the default.
SMALL = 360
#: Width of plots that must stay readable on a phone: a 375 px screen leaves a card about
#: 285 px, so their text shrinks to no less than 0.95 of ``FONT`` there (their labels sit
#: above the bars, ``hbar(labels_above=True)``, as a label column would leave no room).
NARROW = 300
#: Height of the line a label takes above its bar.
LABEL_ROW = 16
#: Longest label column, as a share of the width.
LABEL_SHARE = 0.5

PALETTE = ("#0b5cad", "#cf222e", "#1a7f37", "#9a6700", "#8250df", "#bf3989", "#0a7d86")


@dataclass
class Plot:
    height: int
    width: int = SMALL
    rects: list[dict] = field(default_factory=list)
    texts: list[dict] = field(default_factory=list)
    lines: list[dict] = field(default_factory=list)
    dots: list[dict] = field(default_factory=list)
    label: str = ""


def text_width(text: str, size: float = FONT) -> float:
    """Approximate rendered width of ``text``: wide (CJK) characters take a full em, others
    0.62 em (a generous mean for sans-serif digits and letters)."""
    return sum(size * (1.0 if unicodedata.east_asian_width(c) in "WF" else 0.62) for c in text)


def fit(text: str, room: float, size: float = FONT) -> str:
    """``text`` shortened with an ellipsis to fit ``room`` pixels."""
    if text_width(text, size) <= room:
        return text
    while text and text_width(text + "…", size) > room:
        text = text[:-1]
    return text + "…"


def _label(x: float, y: float, text: str, *, room: float, anchor: str = "start",
           color: str = "", rotate: bool = False) -> dict:
    shown = fit(text, room)
    entry = {"x": round(x, 1), "y": round(y, 1), "text": shown, "anchor": anchor,
             "title": text if shown != text else "", "color": color}
    if rotate:
        entry["transform"] = f"rotate(-90 {round(x, 1)} {round(y, 1)})"
    return entry


def nice_range(values: Sequence[float], *, lo: float | None = None,
               hi: float | None = None) -> tuple[float, float]:
    """The axis range: ``lo``/``hi`` when given, widened to hold every value (nothing is
    clipped); otherwise the data's range rounded outwards to a round step."""
    data = [v for v in values if v is not None]
    low = min(data) if data else 0.0
    high = max(data) if data else 1.0
    if lo is not None:
        low = min(lo, low)
    if hi is not None:
        high = max(hi, high)
    if high == low:
        high = low + 1
    if lo is None or hi is None:
        step = 10 ** math.floor(math.log10(high - low))
        if lo is None:
            low = math.floor(low / step) * step
        if hi is None:
            high = math.ceil(high / step) * step
    return low, high


def _tick(value: float) -> str:
    return f"{value:.3g}"


def hbar(
    rows: Sequence[tuple[str, Sequence[tuple[float, str, str]]]], *, label: str, total: str = "",
    width: int = SMALL, labels_above: bool = False,
) -> Plot:
    """Horizontal (stacked) bars: each row is a label and its segments (value, class, title);
    the longest row fills the width; ``total`` names what the right-hand figure counts.
    Labels are a column left of the bars, or, ``labels_above``, each on a line of its own
    above its bar, with the whole width (for a narrow plot: ``NARROW``)."""
    peak = max((sum(v for v, _, _ in segs) for _, segs in rows), default=0) or 1
    label_w = 0.0 if labels_above else min(
        max((text_width(name) for name, _ in rows), default=0) + 8, width * LABEL_SHARE)
    figure_w = max((text_width(f"{sum(v for v, _, _ in s):g}{total}") for _, s in rows),
                   default=0) + 10
    bar_w = max(width - label_w - figure_w, 40)
    row_h = ROW + (LABEL_ROW if labels_above else 0)
    plot = Plot(height=row_h * max(len(rows), 1) + 4, width=width, label=label)
    for n, (name, segments) in enumerate(rows):
        y = n * row_h + 4
        if labels_above:
            plot.texts.append(_label(0, y + 12, name, room=width))
            y += LABEL_ROW
        else:
            plot.texts.append(_label(0, y + 14, name, room=label_w - 8))
        x = label_w
        for value, css, title in segments:
            w = bar_w * value / peak
            if w > 0:
                plot.rects.append({"x": round(x, 1), "y": y, "w": round(w, 1), "h": 18,
                                   "cls": css, "title": title})
            x += w
        amount = sum(v for v, _, _ in segments)
        plot.texts.append({"x": round(x + 6, 1), "y": y + 14,
                           "text": f"{amount:g}{total}", "anchor": "start"})
    return plot


def vbar(points: Sequence[tuple[str, float]], *, label: str, height: int = 180,
         x_label: str = "", y_label: str = "", width: int = SMALL) -> Plot:
    """Vertical bars (a histogram): each point is an x label and a value; ``x_label`` and
    ``y_label`` name the axes."""
    peak = max((v for _, v in points), default=0) or 1
    left = 24 if y_label else 4
    base = height - (36 if x_label else 20)
    step = min(70, (width - left - 6) / max(len(points), 1))
    plot = Plot(height=height, width=width, label=label)
    for n, (name, value) in enumerate(points):
        h = (base - 20) * value / peak
        x = left + n * step
        plot.rects.append({"x": round(x + 4, 1), "y": round(base - h, 1),
                           "w": round(max(step - 8, 1), 1), "h": round(h, 1), "cls": "bar",
                           "title": f"{name}: {value:g}"})
        plot.texts.append(_label(x + step / 2, base + 15, name, room=step,
                                 anchor="middle"))
        plot.texts.append({"x": round(x + step / 2, 1), "y": round(base - h - 4, 1),
                           "text": f"{value:g}", "anchor": "middle"})
    plot.lines.append({"points": f"{left},{base} {width - 2},{base}", "color": "#8c959f",
                       "dash": "", "title": ""})
    if x_label:
        plot.texts.append(_label(left + (width - left) / 2, height - 4, x_label,
                                 room=width - left, anchor="middle"))
    if y_label:
        plot.texts.append(_label(14, base / 2 + 10, y_label, room=base, anchor="middle",
                                 rotate=True))
    return plot


def line_plot(
    series: dict[str, Sequence[float]], *, label: str, threshold: float | None = None,
    height: int = 200, lo: float | None = None, hi: float | None = None,
    x_label: str = "", y_label: str = "", x_span: tuple[str, str] | None = None,
    width: int = SMALL, threshold_label: str = "",
) -> Plot:
    """One polyline per series over its successive values (e.g. accuracy per inspection
    round), with an optional dashed threshold line (its tooltip ``threshold_label``, else
    "threshold <value>"). The y axis runs from ``lo`` to ``hi`` (the data's rounded range
    when not given) and widens to hold every value; ``x_label`` and ``y_label`` name the
    axes, ``x_span`` labels the first and last x."""
    plot = Plot(height=height, width=width, label=label)
    values = [v for vs in series.values() for v in vs]
    lo, hi = nice_range(values + ([threshold] if threshold is not None else []), lo=lo, hi=hi)
    ticks = [lo, (lo + hi) / 2, hi]
    legend_w = min(max((text_width(name) for name in series), default=0) + 12,
                   width * 0.3)
    axis_w = max(text_width(_tick(t)) for t in ticks) + 6
    left = axis_w + (18 if y_label else 4)
    right = width - legend_w - 8
    top = 10
    bottom = height - 8 - (16 if x_span else 0) - (16 if x_label else 0)
    longest = max((len(v) for v in series.values()), default=1)
    span = max(longest - 1, 1)

    def y_of(value: float) -> float:
        return round(bottom - (bottom - top) * (value - lo) / (hi - lo), 1)

    for value in ticks:
        plot.texts.append({"x": round(left - 4, 1), "y": y_of(value) + 4, "text": _tick(value),
                           "anchor": "end"})
    plot.lines.append({"points": f"{left},{top} {left},{bottom} {right},{bottom}",
                       "color": "#8c959f", "dash": "", "title": ""})
    if threshold is not None:
        plot.lines.append({"points": f"{left},{y_of(threshold)} {right},{y_of(threshold)}",
                           "color": "#9a6700", "dash": "4 3",
                           "title": threshold_label or f"threshold {threshold}"})
    for n, (name, vals) in enumerate(series.items()):
        color = PALETTE[n % len(PALETTE)]
        xy = [(round(left + (right - left) * i / span, 1), y_of(v)) for i, v in enumerate(vals)]
        plot.lines.append({"points": " ".join(f"{x},{y}" for x, y in xy), "color": color,
                           "dash": "", "title": name})
        plot.dots.extend({"x": x, "y": y, "color": color, "title": f"{name}: {v:g}"}
                         for (x, y), v in zip(xy, vals, strict=True))
        plot.texts.append(_label(right + 8, top + 14 * n + 10, name, room=legend_w - 4,
                                 color=color))
    if x_span:
        y = bottom + 16
        plot.texts.append(_label(left, y, x_span[0], room=(right - left) / 2))
        plot.texts.append(_label(right, y, x_span[1], room=(right - left) / 2, anchor="end"))
    if x_label:
        plot.texts.append(_label((left + right) / 2, height - 4, x_label, room=right - left,
                                 anchor="middle"))
    if y_label:
        plot.texts.append(_label(12, (top + bottom) / 2, y_label, room=bottom - top,
                                 anchor="middle", rotate=True))
    return plot
