"""Every figure a course notebook draws from the models is readable: nothing cut off, no text on top of text.

For each notebook, the figures and dashboards listed in ``figure_cases.py`` (built as the notebook builds them):
every static figure, and every Dashboard's figure at its initial state and with each control at each end of its
range, passes :func:`figure_audit.figure_problems` (artists inside the canvas for dashboards, whose PNG is not
cropped to a tight box; no overlapping tick labels, legend entries or annotations; log axes with 3+ labels; no
legend over markers, bar centres, texts or more than 5 % of a line; no label on another point's marker).
The notebooks themselves are run by nbval; figures of this machine's own timings are not judged here.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest
from figure_audit import figure_problems
from figure_cases import CASES, DRAWN_INSIDE, MEASURED, NO_FIGURES
from notebook_figures import audit

import nvcourse.chapters

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb") if not p.name.startswith("00"))
ALL_CASES = [(nb, name, build) for nb, cases in CASES.items() for name, build in cases()]
#: chapter functions that draw, by their names' shape
DRAWS = ("plot_", "_figure", "_dashboard", "_view", "render_", "draw_", "_scatter")


@pytest.mark.slow
@pytest.mark.parametrize("nb, name, build", ALL_CASES, ids=[f"{nb}:{name}" for nb, name, _ in ALL_CASES])
def test_every_model_figure_of_the_notebook_is_readable(nb: str, name: str, build):
    problems = audit(name, build())
    assert not problems, f"{nb}: {len(problems)} figure problem(s):\n  " + "\n  ".join(problems[:25])


def test_every_notebook_has_its_figures_listed_or_says_why_not():
    assert sorted(set(NOTEBOOKS) - set(CASES) - set(MEASURED) - set(NO_FIGURES)) == []
    assert sorted((set(CASES) | set(MEASURED) | set(NO_FIGURES)) - set(NOTEBOOKS)) == []


def test_every_drawing_function_of_a_chapter_module_is_audited():
    """A new figure or dashboard in a chapter module is added to figure_cases.py (or said to be measured)."""
    listed = {name.split("[")[0] for _, name, _ in ALL_CASES}
    listed |= set(" ".join(MEASURED.values()).replace(",", " ").replace(":", " ").split()) | set(DRAWN_INSIDE)
    missing = []
    for info in pkgutil.iter_modules(nvcourse.chapters.__path__):
        mod = importlib.import_module(f"nvcourse.chapters.{info.name}")
        for fname, fn in inspect.getmembers(mod, inspect.isfunction):
            if fn.__module__ == mod.__name__ and not fname.startswith("_") and any(
                    fname.startswith(d) if d.endswith("_") and not d.startswith("_") else fname.endswith(d)
                    for d in DRAWS) and fname not in listed:
                missing.append(f"{info.name}.{fname}")
    assert missing == [], "add to tests/figure_cases.py: " + ", ".join(missing)


def test_the_audit_sees_a_cut_off_legend_overlapping_labels_and_a_bare_log_axis():

    from matplotlib.figure import Figure

    fig = Figure(figsize=(4, 2))
    ax = fig.subplots()
    ax.plot([1, 2], [1, 2], label="a long legend entry")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.4))  # below the axes, outside a 2-inch figure
    ax.text(1.5, 1.5, "label one")
    ax.text(1.5, 1.5, "label two")
    ax.set_yscale("log")
    ax.set_ylim(1.5, 1.9)  # no decade inside: at most one labelled tick
    found = "\n".join(figure_problems(fig))
    assert "cut off" in found and "'label one' and 'label two'" in found and "log y axis" in found
    fine = Figure(figsize=(4, 3), layout="constrained")
    ax = fine.subplots()
    ax.plot([1, 10, 100], [1, 10, 100])
    ax.set_xscale("log")
    assert figure_problems(fine) == []


@pytest.mark.parametrize("lo, hi", [(5.2e-6, 3.7e-5), (0.086, 0.1065), (1e-6, 1e-2)])
def test_a_time_axis_has_three_labels_even_over_a_narrow_range(lo, hi):
    """5.2 to 37 µs holds only 10 and 20 µs of 1-2-5; 86 to 107 ms not even two integer multiples of 10 ms."""

    from nvcourse.plots import new_figure, time_axis

    fig, ax = new_figure(4, 3)
    ax.plot([1, 2], [lo, hi])
    time_axis(ax, "y")
    ax.set_ylim(lo, hi)
    assert figure_problems(fig) == []


def _legend_figure(loc: str, **legend_kw):
    """Markers along the bottom-left to top-right diagonal, a dense flat curve along the top, a bar, a text."""

    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 3.5), layout="constrained")
    ax = fig.subplots()
    xs = [i / 10 for i in range(11)]
    ax.plot(xs, xs, "o", label="measured")
    ax.plot([i / 100 for i in range(101)], [1.2] * 101, label="model")
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.3)
    ax.legend(loc=loc, **legend_kw)
    return fig, ax


def test_a_legend_over_markers_or_a_curve_is_found_and_one_in_a_free_corner_is_not():
    fig, _ = _legend_figure("lower right")  # the free corner: below the diagonal, under the curve
    assert figure_problems(fig) == []
    fig, _ = _legend_figure("upper left")  # over the start of the curve at 1.2
    found = "\n".join(figure_problems(fig))
    assert "hides" in found and "of line 'model'" in found
    fig, _ = _legend_figure("center")  # on the diagonal: markers hidden
    assert "marker(s) of line 'measured'" in "\n".join(figure_problems(fig))
    # a legend outside the axes hides nothing
    fig, _ = _legend_figure("upper left", bbox_to_anchor=(1.02, 1.0))
    assert not [p for p in figure_problems(fig) if "hides" in p or "covers" in p]


def test_a_legend_over_bars_scatter_points_or_a_text_is_found():
    fig, ax = _legend_figure("lower right")
    ax.bar([0.85], [0.1], width=0.1, bottom=0.0)  # its centre in the lower-right corner
    assert "centre of 1 bar(s)" in "\n".join(figure_problems(fig))
    fig, ax = _legend_figure("lower right")
    ax.scatter([0.95], [0.02])
    assert "scatter point(s)" in "\n".join(figure_problems(fig))
    fig, ax = _legend_figure("lower right")
    ax.text(0.9, 0.05, "a note")
    assert "covers text 'a note'" in "\n".join(figure_problems(fig))


def test_chapter_06s_64_mib_scaling_legend_in_its_old_place_is_found():
    """The case a walkthrough saw: the legend inside the bus-bandwidth panel, lower left, on the falling curves."""

    import matplotlib.pyplot as plt

    from nvcourse.chapters.ch06_fabrics import scaling_figure

    fig, _ = scaling_figure([2, 4, 8, 16, 32, 64, 128, 256, 512], 64 * 2**20, routing="dmodk")
    try:
        assert figure_problems(fig, check_canvas=False) == []  # as the course draws it: legend below the panels
        fig.legends.clear()
        fig.axes[1].legend(fontsize=8, loc="lower left")  # where it was before commit 4eecb96
        found = "\n".join(figure_problems(fig, check_canvas=False))
        assert "marker(s) of line 'NCCL ring (flat, one per rail)'" in found
    finally:
        plt.close(fig)


def test_a_label_on_another_points_marker_is_found_and_one_on_its_own_point_is_not():

    from matplotlib.figure import Figure

    fig = Figure(figsize=(4, 3), layout="constrained")
    ax = fig.subplots()
    ax.plot([1, 1.5, 3], [1, 1.02, 2], "o")
    ax.set_ylim(0, 3)
    ax.annotate("case 1", (1, 1), xytext=(0, 0), textcoords="offset points", ha="left", va="center")
    ax.text(3, 2, "case 3", ha="center", va="center")  # written on its own marker
    assert figure_problems(fig) == []
    ax.texts[0].set_fontsize(30)  # now long enough to reach the point right of its own
    assert "text 'case 1' hides 1 marker(s)" in "\n".join(figure_problems(fig))
