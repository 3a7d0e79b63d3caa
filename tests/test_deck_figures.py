"""Figures drawn for a deck (``NVCOURSE_DECK=1``) read from the back of a room at 1280×720.

The charts the instructor trial found unreadable on a projector, drawn here as ``tasks.py slides`` draws
them (deck style, then :func:`nvcourse.plots.before_display`), and measured in pixels of the PNG a deck
shows at its own size: no text under 18 px, no two tick labels touching, no axis label running into the
neighbouring panel. Outside deck mode the same figures are left as they are (the notebooks' outputs).
"""

from __future__ import annotations

import io

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.text import Text
from PIL import Image

from nvcourse import plots

MIN_PX = 18  # the smallest text a room reads on a 1280×720 slide


def _alpha_beta():
    from nvcourse.chapters import ch02_links as ch

    view = ch._AlphaBetaView()
    view(3.4, 370.8, 2**20)
    return view.live.figure


def _measured_vs_model():
    from nvcourse.chapters import ch04_collectives as ch

    sizes = [1024 * 4**k for k in range(8)]  # 1 KiB ... 16 MiB, the chapter's sweep
    rows = [{"op": "allreduce", "procs": 4, "algo": algo, "bytes": n, "time_s": 2e-5 + n / 2e9}
            for algo in ("ring", "tree") for n in sizes]
    return ch.plot_measured_vs_model(rows, 1e-5, 1e9)


def _scaling():
    from nvcourse.chapters import ch06_fabrics as ch

    return ch.scaling_figure([2, 4, 8, 16, 32, 64, 128, 256, 512], 64 * 2**20, routing="dmodk")[0]


def _ring_diagram():
    from nvcourse.collectives.draw import draw_collectives

    fig = draw_collectives()
    return fig if isinstance(fig, matplotlib.figure.Figure) else fig[0]


FIGURES = {"02 §2 α–β dashboard": _alpha_beta, "04 §5 measured vs model": _measured_vs_model,
           "06 §4 scaling": _scaling, "04 §1 collectives diagram": _ring_diagram}


def _drawn_for_deck(make, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("NVCOURSE_DECK", "1")
    with plt.rc_context(plots.DECK_RC):
        fig = make()
        plots.before_display(fig)
        png = io.BytesIO()
        fig.savefig(png, format="png", bbox_inches="tight")  # as the inline backend draws it
    fig.png_width_px = Image.open(png).size[0]
    return fig


def _shown(fig) -> list[Text]:
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and t.get_figure() is fig
            and (t.axes is None or t.axes.get_visible())]


@pytest.mark.parametrize("name", FIGURES)
def test_deck_figures_have_no_small_text(name: str, monkeypatch: pytest.MonkeyPatch):
    fig = _drawn_for_deck(FIGURES[name], monkeypatch)
    small = {t.get_text(): round(t.get_fontsize() * fig.dpi / 72, 1) for t in _shown(fig)
             if t.get_fontsize() * fig.dpi / 72 < MIN_PX - 0.1}
    assert small == {}, f"{name}: text under {MIN_PX} px: {small}"
    # no larger than drawn (a legend wider than the figure widens the picture, and the slide then shrinks it)
    assert fig.png_width_px <= fig.get_size_inches()[0] * fig.dpi + 25, name  # + tight padding
    plt.close(fig)


@pytest.mark.parametrize("name", FIGURES)
def test_deck_figures_tick_labels_and_panels_do_not_collide(name: str, monkeypatch: pytest.MonkeyPatch):
    fig = _drawn_for_deck(FIGURES[name], monkeypatch)
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        for axis, lo, hi in ((ax.xaxis, "x0", "x1"), (ax.yaxis, "y0", "y1")):
            boxes = sorted((t.get_window_extent(renderer) for t in axis.get_ticklabels()
                            if t.get_visible() and t.get_text()), key=lambda b: getattr(b, lo))
            for a, b in zip(boxes, boxes[1:]):
                assert getattr(b, lo) - getattr(a, hi) >= 1, f"{name}: tick labels touch on {axis.axis_name}"
        label = ax.yaxis.label.get_window_extent(renderer)
        for other in fig.axes:
            if other is not ax and other.get_visible() and label.width:
                assert not label.overlaps(other.get_window_extent(renderer)), f"{name}: y label in another panel"
        for legend in fig.legends:  # a label longer than its panel ran into the legend under the panels
            assert not label.overlaps(legend.get_window_extent(renderer)), f"{name}: y label in the legend"
    plt.close(fig)


def test_outside_a_deck_figures_are_left_as_drawn(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("NVCOURSE_DECK", raising=False)
    fig = _measured_vs_model()
    before = [(t.get_text(), t.get_fontsize(), t.get_visible()) for t in fig.findobj(Text)]
    plots.before_display(fig)
    assert [(t.get_text(), t.get_fontsize(), t.get_visible()) for t in fig.findobj(Text)] == before
    assert np.isfinite(fig.get_size_inches()).all()
    plt.close(fig)


def test_a_figure_made_without_pyplot_is_drawn_for_a_deck(monkeypatch: pytest.MonkeyPatch):
    from matplotlib.figure import Figure

    def bare() -> Figure:  # as a chapter builds a figure it hands to IPython's display (no pyplot canvas)
        fig = Figure(figsize=(6, 3))
        ax = fig.subplots()
        ax.plot([1, 4**8], [1, 2], label="x")
        ax.set_xscale("log", base=4)
        ax.legend(fontsize=6)
        return fig

    fig = _drawn_for_deck(bare, monkeypatch)
    assert min(t.get_fontsize() for t in _shown(fig)) >= plots.DECK_MIN_PT
