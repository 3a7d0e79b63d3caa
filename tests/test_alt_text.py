"""Alt text: every figure of the course is described from what it shows, in notebooks, dashboards, decks and
handouts (nvcourse.alt_text)."""

from __future__ import annotations

import html

import matplotlib.pyplot as plt
import pytest
from figure_cases import CASES
from matplotlib.figure import Figure

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
