"""Bar charts as geometry for inline SVG (the template draws; no JavaScript, no build)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

ROW = 26
LABEL_W = 180
BAR_W = 280
WIDTH = 520


@dataclass
class Plot:
    height: int
    rects: list[dict] = field(default_factory=list)
    texts: list[dict] = field(default_factory=list)
    lines: list[dict] = field(default_factory=list)
    label: str = ""


def hbar(
    rows: Sequence[tuple[str, Sequence[tuple[float, str, str]]]], *, label: str, total: str = ""
) -> Plot:
    """Horizontal (stacked) bars: each row is a label and its segments (value, class, title);
    the longest row fills the width; ``total`` names what the right-hand figure counts."""
    peak = max((sum(v for v, _, _ in segs) for _, segs in rows), default=0) or 1
    plot = Plot(height=ROW * max(len(rows), 1) + 4, label=label)
    for n, (name, segments) in enumerate(rows):
        y = n * ROW + 4
        plot.texts.append({"x": 0, "y": y + 14, "text": name[:26], "anchor": "start"})
        x = LABEL_W
        for value, css, title in segments:
            w = BAR_W * value / peak
            if w > 0:
                plot.rects.append({"x": round(x, 1), "y": y, "w": round(w, 1), "h": 18,
                                   "cls": css, "title": title})
            x += w
        amount = sum(v for v, _, _ in segments)
        plot.texts.append({"x": round(x + 6, 1), "y": y + 14,
                           "text": f"{amount:g}{total}", "anchor": "start"})
    return plot


def vbar(points: Sequence[tuple[str, float]], *, label: str, height: int = 160) -> Plot:
    """Vertical bars (a histogram): each point is an x label and a value."""
    peak = max((v for _, v in points), default=0) or 1
    base = height - 22
    step = min(70, (WIDTH - 20) / max(len(points), 1))
    plot = Plot(height=height, label=label)
    for n, (name, value) in enumerate(points):
        h = (base - 18) * value / peak
        x = 10 + n * step
        plot.rects.append({"x": round(x + 6, 1), "y": round(base - h, 1), "w": round(step - 12, 1),
                           "h": round(h, 1), "cls": "bar", "title": f"{name}: {value:g}"})
        plot.texts.append({"x": round(x + step / 2, 1), "y": base + 16, "text": name,
                           "anchor": "middle"})
        plot.texts.append({"x": round(x + step / 2, 1), "y": round(base - h - 4, 1),
                           "text": f"{value:g}", "anchor": "middle"})
    return plot


PALETTE = ("#0b5cad", "#cf222e", "#1a7f37", "#9a6700", "#8250df", "#bf3989", "#0a7d86")


def line_plot(
    series: dict[str, Sequence[float]], *, label: str, threshold: float | None = None,
    height: int = 180, lo: float = 0.5, hi: float = 1.0,
) -> Plot:
    """One polyline per series over its successive values (e.g. accuracy per inspection
    round), y from ``lo`` to ``hi``, with an optional dashed threshold line."""
    plot = Plot(height=height, label=label)
    left, right, top, bottom = 40, WIDTH - 110, 10, height - 24
    longest = max((len(v) for v in series.values()), default=1)
    span = max(longest - 1, 1)

    def y_of(value: float) -> float:
        clipped = min(max(value, lo), hi)
        return round(bottom - (bottom - top) * (clipped - lo) / (hi - lo), 1)

    for value in (lo, (lo + hi) / 2, hi):
        plot.texts.append({"x": left - 4, "y": y_of(value) + 4, "text": f"{value:g}",
                           "anchor": "end"})
    if threshold is not None:
        plot.lines.append({"points": f"{left},{y_of(threshold)} {right},{y_of(threshold)}",
                           "color": "#9a6700", "dash": "4 3", "title": f"threshold {threshold}"})
    for n, (name, values) in enumerate(series.items()):
        color = PALETTE[n % len(PALETTE)]
        points = " ".join(
            f"{round(left + (right - left) * i / span, 1)},{y_of(v)}" for i, v in enumerate(values)
        )
        plot.lines.append({"points": points, "color": color, "dash": "", "title": name})
        plot.texts.append({"x": right + 8, "y": top + 14 * n + 10, "text": name[:14],
                           "anchor": "start", "color": color})
    return plot
