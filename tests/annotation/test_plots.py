"""The dashboard plots: axes at the data's real range, labels that fit, axis names."""

from __future__ import annotations

from annotation.plots import SMALL, WIDTH, fit, hbar, line_plot, text_width, vbar


def _ys(plot, title):
    line = next(line for line in plot.lines if line["title"] == title)
    return [float(p.split(",")[1]) for p in line["points"].split()]


def test_a_zero_accuracy_is_drawn_at_zero_not_clipped_to_the_axis_floor():
    plot = line_plot({"ann": [1.0, 0.0, 0.5]}, label="acc", lo=0, hi=1, threshold=0.95)
    top, bottom, mid = _ys(plot, "ann")  # 1.0, 0.0, 0.5
    ticks = {t["text"]: t["y"] - 4 for t in plot.texts if t["anchor"] == "end"}
    assert ticks["0"] == bottom  # 0.0 sits on the 0 tick
    assert ticks["1"] == top
    assert bottom > mid > top
    assert mid == (top + bottom) / 2


def test_values_outside_the_given_range_widen_the_axis():
    plot = line_plot({"a": [0.2, 0.9]}, label="x", lo=0.5, hi=1.0)
    ticks = [t["text"] for t in plot.texts if t["anchor"] == "end"]
    assert ticks[0] == "0.2"  # the axis starts at the lowest value, nothing is clipped
    ys = _ys(plot, "a")
    assert max(ys) == max(t["y"] - 4 for t in plot.texts if t["anchor"] == "end")


def test_without_a_range_the_axis_runs_over_the_data_rounded_out():
    plot = line_plot({"a": [13, 47]}, label="x")
    assert [t["text"] for t in plot.texts if t["anchor"] == "end"] == ["10", "30", "50"]


def test_long_labels_are_shortened_to_fit_with_their_full_text_as_tooltip():
    name = "Retrieve the top ten documents for every kept query"
    plot = hbar([(name, [(3, "bar", "3")]), ("short", [(1, "bar", "1")])], label="x")
    label = plot.texts[0]
    assert label["text"].endswith("…") and label["title"] == name
    assert text_width(label["text"]) <= plot.width * 0.5
    # every bar and its figure end inside the drawing
    for rect in plot.rects:
        assert rect["x"] + rect["w"] <= plot.width
    figures = [t for t in plot.texts if t["text"] in ("3", "1")]
    assert all(t["x"] + text_width(t["text"]) <= plot.width for t in figures)


def test_labels_that_fit_are_kept_whole_and_cjk_counts_wide():
    assert fit("done", 100) == "done"
    assert text_width("文档") == 2 * text_width("文档") / 2 > text_width("ab")
    assert fit("很长很长很长的标签", 40).endswith("…")


def test_the_rounds_histogram_names_its_axes():
    plot = vbar([("1", 4), ("2", 1)], label="rounds", x_label="inspection rounds needed",
                y_label="batches")
    texts = {t["text"]: t for t in plot.texts}
    assert "inspection rounds needed" in texts
    assert texts["batches"]["transform"].startswith("rotate(-90")
    assert plot.width == SMALL


def test_line_plot_legend_and_span_labels_stay_inside():
    plot = line_plot({"a-rather-long-worker-name": [1, 2, 3]}, label="x",
                     x_span=("2026-01-01", "2026-01-09"), width=WIDTH)
    for t in plot.texts:
        start = {"start": t["x"], "middle": t["x"] - text_width(t["text"]) / 2,
                 "end": t["x"] - text_width(t["text"])}[t["anchor"]]
        if "transform" not in t:
            assert start >= 0 and start + text_width(t["text"]) <= plot.width + 1, t


def test_labels_above_their_bars_take_the_whole_width_of_a_narrow_plot():
    """A phone's chart: no label column, so a 300 px plot (shrunk little on a phone)
    still gives labels and bars the whole width, each label on its own line above its bar."""
    from annotation.plots import LABEL_ROW, NARROW

    rows = [("1. Children under the age of 12 need a child seat in the front seat",
             [(0.9, "bar", "")]), ("2. Ask the dealer", [(0.3, "bar-pending", "")])]
    plot = hbar(rows, label="weights", width=NARROW, labels_above=True)
    assert plot.width == NARROW
    labels = [t for t in plot.texts if t["x"] == 0]
    assert [t["text"] for t in labels][1] == "2. Ask the dealer"
    assert text_width(labels[0]["text"]) <= NARROW and labels[0]["title"] == rows[0][0]
    for text, rect in zip(labels, plot.rects, strict=True):
        assert rect["x"] == 0 and text["y"] <= rect["y"] - 3  # above, descenders clear
        assert rect["y"] - text["y"] < LABEL_ROW
    assert plot.rects[0]["w"] > plot.rects[1]["w"] > 0
    assert plot.height >= 2 * (LABEL_ROW + 18)
