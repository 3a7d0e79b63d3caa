"""Every figure a course notebook draws is readable: nothing cut off, no text on top of other text.

For each notebook (run in this process, see ``notebook_figures.py``): every static figure, and every
Dashboard's figure at its initial state and with each control at each end of its range, passes
:func:`nvcourse.plots.figure_problems` (artists inside the canvas for dashboards, whose PNG is not cropped
to a tight box; no overlapping tick labels, legend entries or annotations; log axes with 3+ labels).
About 10-50 s per notebook.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from notebook_figures import audit_notebook

from nvcourse.plots import figure_problems

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if not p.name.startswith("00"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_figure_of_the_notebook_is_readable(path: Path):
    problems = audit_notebook(path)
    assert not problems, f"{path.name}: {len(problems)} figure problem(s):\n  " + "\n  ".join(problems[:25])


def test_the_audit_sees_a_cut_off_legend_overlapping_labels_and_a_bare_log_axis():
    import matplotlib

    matplotlib.use("Agg")
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
    import matplotlib

    matplotlib.use("Agg")
    from nvcourse.plots import new_figure, time_axis

    fig, ax = new_figure(4, 3)
    ax.plot([1, 2], [lo, hi])
    time_axis(ax, "y")
    ax.set_ylim(lo, hi)
    assert figure_problems(fig) == []
