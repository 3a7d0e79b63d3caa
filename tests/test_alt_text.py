"""Alt text: every figure of the course is described from what it shows, in notebooks, dashboards, decks and
handouts (nvcourse.alt_text)."""

from __future__ import annotations

import html

import matplotlib.pyplot as plt
import pytest
from figure_cases import CASES
from matplotlib.figure import Figure

from nvcourse import plots
from nvcourse.alt_text import describe
from nvcourse.widgets import Dashboard


def test_a_line_chart_is_described_by_its_title_axes_scales_and_series():
    fig, ax = plt.subplots()
    ax.plot([1, 10, 100], [1, 2, 3], label="ring")
    ax.plot([1, 10, 100], [2, 3, 4], label="NVLS")
    ax.set_xscale("log")
    ax.set(title="All-reduce on 8 GPUs", xlabel="message size", ylabel="busbw, GB/s")
    assert describe(fig) == ("Figure: “All-reduce on 8 GPUs”, busbw, GB/s against message size (log scale), "
                             "2 lines: ring, NVLS.")
    plt.close(fig)


def test_panels_bars_and_diagrams_are_told_apart():
    fig, (a, b) = plt.subplots(1, 2)
    a.bar(["x", "y", "z"], [1, 2, 3])
    a.set_ylabel("GB/s")
    b.set_axis_off()
    b.set_title("the ring")
    b.scatter([0, 1], [0, 1])
    text = describe(fig)
    assert text.startswith("Figure with 2 panels. Panel 1: GB/s, 3 bars. Panel 2: “the ring”, a diagram.")
    plt.close(fig)


def test_the_description_uses_labels_not_data_values():
    """A figure of this machine's timings must be described the same on every machine (nbval compares the
    dashboards' HTML): only labels and counts enter the text."""
    texts = set()
    for scale in (1.0, 3.7):
        fig, ax = plt.subplots()
        ax.plot([1, 2, 3], [scale, 2 * scale, 3 * scale], label="measured")
        ax.set_ylabel("GB/s")
        texts.add(describe(fig))
        plt.close(fig)
    assert len(texts) == 1


def _figures(built: object) -> list[Figure]:
    if isinstance(built, Dashboard):
        return [built.last_figure] if built.last_figure is not None else []
    if isinstance(built, tuple):
        return [f for f in built if isinstance(f, Figure)]
    return [built] if isinstance(built, Figure) else []


@pytest.mark.parametrize("stem", sorted(CASES))
def test_every_model_driven_figure_of_a_chapter_gets_a_description_that_says_something(stem: str):
    for name, build in CASES[stem]():
        built = build()
        for fig in _figures(built):
            text = describe(fig)
            assert text.startswith("Figure") and text.endswith("."), (name, text)
            # more than "Figure: a diagram.": a title, an axis or a series is named
            assert len(text) > len("Figure: a diagram.") or any(ax.get_title() for ax in fig.axes), (name, text)
        if isinstance(built, Dashboard) and built.last_png:
            assert f'alt="{html.escape(built.alt_text(), quote=True)}"' in built.static_html()
        plt.close("all")


def _grey_clashes(fig: Figure) -> list[str]:
    from matplotlib.colors import to_rgb

    def grey(colour) -> float:
        r, g, b = to_rgb(colour)
        return 0.299 * r + 0.587 * g + 0.114 * b

    clashes = []
    for ax in fig.axes:
        lines = [ln for ln in ax.get_lines() if ln.get_visible() and not ln.get_label().startswith("_")
                 and len(ln.get_xdata()) > 1]
        for i, a in enumerate(lines):
            for b in lines[i + 1:]:
                same = (a.get_linestyle(), a.get_marker()) == (b.get_linestyle(), b.get_marker())
                if same and abs(grey(a.get_color()) - grey(b.get_color())) < plots.GREY_GAP:
                    clashes.append(f"{a.get_label()} ~ {b.get_label()}")
    return clashes


@pytest.mark.parametrize("stem", sorted(CASES))
def test_every_curve_of_a_chapter_reads_in_greyscale_as_it_is_displayed(stem: str):
    """Two curves of one panel never differ by colour alone once drawn for display (notebook, dashboard, deck,
    handout): Okabe–Ito's blue (0.34 grey) and green (0.42) print alike, so the second takes a dash or marker."""
    for name, build in CASES[stem]():
        built = build()
        for fig in _figures(built):
            plots.before_display(fig)
            assert _grey_clashes(fig) == [], (name, _grey_clashes(fig))
            for ax in fig.axes:  # the legend shows each curve's own style (curves whose label is their own)
                legend = ax.get_legend()
                if legend is None:
                    continue
                styles = {t.get_text(): (h.get_linestyle(), h.get_marker())
                          for h, t in zip(legend.legend_handles, legend.get_texts())
                          if hasattr(h, "get_marker") and h.get_linestyle() != "None"}
                labels = [ln.get_label() for ln in ax.get_lines()]
                for line in ax.get_lines():
                    label = line.get_label()
                    if label in styles and labels.count(label) == 1 and line.get_linestyle() != "None":
                        assert styles[label] == (line.get_linestyle(), line.get_marker()), (name, label)
        plt.close("all")


def test_stacked_bars_are_counted_as_bars_not_segments():
    fig, ax = plt.subplots()
    ax.bar([0, 1], [1, 2], label="compute")
    ax.bar([0, 1], [2, 0], bottom=[1, 2], label="comm")  # bar 2's second segment is empty: not drawn
    ax.bar([0, 1], [1, 1], bottom=[3, 2], label="bubble")
    assert "2 stacked bars" in describe(fig)
    fig, ax = plt.subplots()
    ax.barh([0, 1], [1, 2])
    ax.barh([0, 1], [2, 2], left=[1, 2])
    assert "2 stacked bars" in describe(fig)
    for draw in ("bar", "barh"):  # one call's bars of width 1 touch, but are not a stack
        fig, ax = plt.subplots()
        getattr(ax, draw)([0, 1, 2], [1, 1, 1], 1.0)
        assert "3 bars" in describe(fig) and "stacked" not in describe(fig)
    for draw in ("bar", "barh"):
        # a grouped chart (02's line rate / model / measurement): side by side, touching, two of equal length
        fig, ax = plt.subplots()
        for offset, lengths in ((0.27, [63.0, 50.0]), (0.0, [55.4, 47.0]), (-0.27, [55.4, 47.0])):
            getattr(ax, draw)([0 + offset, 1 + offset], lengths, 0.27)
        assert "6 bars" in describe(fig) and "stacked" not in describe(fig), (draw, describe(fig))
    plt.close("all")
