"""Run a notebook's code in this process (Agg backend) and audit every figure it draws.

:func:`audit_notebook` executes the code cells (magics dropped, cells tagged to be skipped or to raise left
out), checks each figure a cell leaves open with :func:`figure_audit.figure_problems`, and for every
:class:`~nvcourse.widgets.Dashboard` the notebook builds, checks the figure of its initial state and of each
control moved, one at a time, to each end of its range (a slider's min and max, every option of a dropdown,
a checkbox flipped), then with the controls moved one after the other to their last end and left there.
Combinations the model rejects (an error note) are not figures, so skipped.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import ipywidgets as w
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
from figure_audit import figure_problems  # noqa: E402

from nvcourse.widgets import Dashboard  # noqa: E402

SKIP_TAGS = {"nbval-skip", "skip-execution", "raises-exception", "nbval-raises-exception"}


def extremes(widget: w.ValueWidget) -> list[tuple[str, object]]:
    """(label, value) for each end of a control's range, skipping the value it has now."""
    now = widget.value
    if isinstance(widget, w.Checkbox):
        ends = [(str(not now), not now)]
    elif isinstance(widget, w.FloatLogSlider):
        ends = [("min", widget.base**widget.min), ("max", widget.base**widget.max)]
    elif isinstance(widget, (w.SelectMultiple,)):
        values = [v for _, v in widget._options_full] if hasattr(widget, "_options_full") else list(widget.options)
        ends = [("one", (values[0],)), ("all", tuple(values))]
    elif hasattr(widget, "options"):
        opts = list(widget.options)
        values = [o[1] if isinstance(o, tuple) else o for o in opts]
        labels = [str(o[0]) if isinstance(o, tuple) else str(o) for o in opts]
        if isinstance(widget, (w.Dropdown, w.RadioButtons, w.ToggleButtons)) and len(values) <= 12:
            ends = list(zip(labels, values, strict=True))  # a choice, not a range: every option is an end
        else:
            ends = [(labels[0], values[0]), (labels[-1], values[-1])]
    elif hasattr(widget, "min") and hasattr(widget, "max"):
        ends = [("min", widget.min), ("max", widget.max)]
    else:  # free text: nothing to move to
        ends = []
    return [(label, v) for label, v in ends if v != now]


def dashboard_states(dash: Dashboard):
    """Yield (state description, figure) for the initial state and each control at each of its ends.

    The figure is the one the Dashboard drew (``last_figure``, after its own layout handling); None where
    the combination shows an error note instead."""
    def current():
        return None if dash.last_error else dash.last_figure

    yield "initial", current()
    for name, widget in dash.controls.items():
        start = widget.value
        for label, value in extremes(widget):
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    widget.value = value
            except Exception:
                continue
            yield f"{name}={label} ({value!r})", current()
        with contextlib.redirect_stdout(io.StringIO()):
            widget.value = start
    # then as a learner does: each control to its far end and left there (a frozen layout meets new labels)
    for name, widget in dash.controls.items():
        ends = extremes(widget)
        if ends:
            with contextlib.redirect_stdout(io.StringIO()):
                widget.value = ends[-1][1]
            yield f"after moving the controls up to {name} to their last end", current()


def audit_notebook(path: Path) -> list[str]:
    """'where: problem' for every figure problem found while running ``path``."""
    nb = nbformat.read(path, as_version=4)
    built: list[Dashboard] = []
    original_init = Dashboard.__init__

    def recording_init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        built.append(self)

    problems: list[str] = []
    namespace: dict = {"__name__": "__main__"}
    cwd = os.getcwd()
    Dashboard.__init__ = recording_init
    try:
        os.chdir(path.parent)
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or set(cell.metadata.get("tags", [])) & SKIP_TAGS:
                continue
            source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
            n_before = len(built)
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(source, f"{path.name} cell {i}", "exec"), namespace)
            for num in plt.get_fignums():
                fig = plt.figure(num)
                problems += [f"cell {i} figure: {p}" for p in figure_problems(fig, check_canvas=False)]
                plt.close(fig)
            for k, dash in enumerate(built[n_before:]):
                for state, fig in dashboard_states(dash):
                    if fig is not None:
                        problems += [f"cell {i} dashboard {k} at {state}: {p}"
                                     for p in figure_problems(fig, redo_layout=False)]
                    plt.close("all")
    finally:
        Dashboard.__init__ = original_init
        os.chdir(cwd)
        plt.close("all")
    return problems
