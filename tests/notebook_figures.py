"""Audit a figure or a Dashboard the way a learner meets it (the cases are in ``figure_cases.py``).

:func:`audit` checks each open figure with :func:`figure_audit.figure_problems`, and for a
:class:`~nvcourse.widgets.Dashboard` the figure of its initial state and of each control moved, one at a time,
to each end of its range (a slider's min and max, every option of a dropdown, a checkbox flipped), then with the
controls moved one after the other to their last end and left there. Combinations the model rejects (an error
note) are not figures, so skipped.
"""

from __future__ import annotations

import contextlib
import io

import ipywidgets as w
import matplotlib.pyplot as plt
from figure_audit import figure_problems

from nvcourse.widgets import Dashboard


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


def audit(name: str, built: object) -> list[str]:
    """'name: problem' for every problem of what a case built: a figure (as the inline backend shows it, cropped
    to its tight box) or a Dashboard's figure in every state of :func:`dashboard_states` (as drawn, uncropped)."""
    problems: list[str] = []
    try:
        if isinstance(built, Dashboard):
            for state, fig in dashboard_states(built):
                if fig is not None:
                    problems += [f"{name} at {state}: {p}" for p in figure_problems(fig, redo_layout=False)]
                plt.close("all")
        else:
            for num in plt.get_fignums():
                problems += [f"{name}: {p}" for p in figure_problems(plt.figure(num), check_canvas=False)]
    finally:
        plt.close("all")
    return problems
