"""Live dashboards for the notebooks: controls that drive a model, a plot and a readout.

:class:`Dashboard` is the one building block. It calls a ``render(**values)`` function whenever a
control changes and shows what it returns:

* a matplotlib ``Figure`` — drawn in the plot area (and closed, so figures do not pile up);
* a string — HTML for the readout line;
* a tuple ``(figure, html)`` — both.

If ``render`` raises (a combination the model rejects, say), the learner sees the message in a yellow
note — never a traceback — and the controls stay usable. Controls should already make invalid states
unreachable (ranges, dropdowns); the note is the safety net.
"""

from __future__ import annotations

import html
import io
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import Image, display
from matplotlib.figure import Figure

__all__ = ["Dashboard", "log_slider", "size_slider", "error_note", "figure_png"]

RenderResult = Figure | str | tuple[Figure | None, str | None] | None


def figure_png(fig: Figure) -> bytes:
    """PNG bytes of a figure in one draw.

    The inline backend's ``display(fig)`` crops with ``bbox_inches="tight"``, which lays the figure out
    and draws it twice; the course's figures use constrained layout, so one plain draw is enough and
    a slider change costs about half as much.
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def error_note(message: str) -> str:
    """HTML for a friendly error note (no traceback)."""
    return (
        '<div class="nvcourse-note" style="background:#fff4ce;border-left:4px solid #e0a800;'
        f'padding:6px 10px;margin:4px 0">⚠️ {html.escape(message)}</div>'
    )


class Dashboard(widgets.VBox):
    """Controls on top, a readout, then a plot; re-rendered on every change.

    Args:
        controls: name → widget; each widget's ``value`` is passed to ``render`` under that name.
        render: ``render(**values) -> Figure | str | (Figure, str) | None``.
        columns: lay the controls out in this many columns.
        freeze_layout: after the first figure, place the axes of later figures of the same shape where
            constrained layout put them the first time, instead of solving the layout again. The layout
            solve is ~40 % of a redraw; the figures of one dashboard keep their axes and labels, so the
            first layout fits them all. Pass False for a dashboard whose figures change shape.
    """

    def __init__(
        self,
        controls: Mapping[str, widgets.ValueWidget],
        render: Callable[..., RenderResult],
        *,
        columns: int = 2,
        freeze_layout: bool = True,
    ) -> None:
        self.controls = dict(controls)
        self.freeze_layout = freeze_layout
        self._layouts: dict[tuple, list[tuple[float, float, float, float]]] = {}
        self._render = render
        self.readout = widgets.HTML(layout=widgets.Layout(min_height="1.5em"))
        self.plot = widgets.Output(layout=widgets.Layout(min_height="120px"))
        self.last_error: str | None = None
        boxes = list(self.controls.values())
        rows = [widgets.HBox(boxes[i : i + columns]) for i in range(0, len(boxes), columns)]
        super().__init__([*rows, self.readout, self.plot])
        self.add_class("nvcourse-dashboard")
        for w in boxes:
            w.observe(self._on_change, names="value")
        self.update()

    @property
    def values(self) -> dict[str, Any]:
        return {name: w.value for name, w in self.controls.items()}

    def _on_change(self, _change: dict) -> None:
        self.update()

    def update(self) -> None:
        """Re-run ``render`` with the current values and show the result."""
        try:
            result = self._render(**self.values)
        except Exception as exc:  # a widget never shows a traceback
            self.last_error = f"{type(exc).__name__}: {exc}" if not isinstance(exc, ValueError) else str(exc)
            self.readout.value = error_note(self.last_error)
            self.plot.clear_output(wait=False)
            plt.close("all")
            return
        self.last_error = None
        fig, text = (result if isinstance(result, tuple) else (result, None) if isinstance(result, Figure) else (None, result))
        self.readout.value = text or ""
        self.plot.clear_output(wait=True)
        if fig is not None:
            key = (tuple(fig.get_size_inches()), len(fig.axes))
            frozen = self.freeze_layout and key in self._layouts
            if frozen:
                fig.set_layout_engine(None)
                for ax, box in zip(fig.axes, self._layouts[key]):
                    ax.set_position(box)
            png = figure_png(fig)
            if self.freeze_layout and not frozen and fig.get_layout_engine() is not None:
                self._layouts[key] = [ax.get_position().bounds for ax in fig.axes]
            with self.plot:
                display(Image(data=png, format="png"))
            plt.close(fig)


def log_slider(description: str, *, minimum: float, maximum: float, value: float, fmt: str = ".3g", step: float = 0.05) -> widgets.FloatLogSlider:
    """A logarithmic slider from ``minimum`` to ``maximum`` (both > 0), e.g. latency or bandwidth."""
    if not 0 < minimum < maximum:
        raise ValueError(f"log_slider needs 0 < minimum < maximum, got {minimum}, {maximum}")
    import math

    return widgets.FloatLogSlider(
        value=min(max(value, minimum), maximum),
        base=10,
        min=math.log10(minimum),
        max=math.log10(maximum),
        step=step,
        description=description,
        readout_format=fmt,
        continuous_update=False,
        style={"description_width": "initial"},
        layout=widgets.Layout(width="380px"),
    )


def size_slider(description: str = "message", *, min_exp: int = 0, max_exp: int = 34, value_exp: int = 20) -> widgets.SelectionSlider:
    """A slider over powers of two, showing sizes as '1 MiB'; its value is the size in bytes."""
    from .units import format_size

    if not min_exp <= value_exp <= max_exp:
        raise ValueError(f"size_slider needs min_exp <= value_exp <= max_exp, got {min_exp}, {value_exp}, {max_exp}")
    options = [(format_size(2**e), 2**e) for e in range(min_exp, max_exp + 1)]
    return widgets.SelectionSlider(
        options=options,
        value=2**value_exp,
        description=description,
        continuous_update=False,
        style={"description_width": "initial"},
        layout=widgets.Layout(width="380px"),
    )
