"""Live dashboards for the notebooks: controls that drive a model, a plot and a readout.

:class:`Dashboard` is the one building block. It calls a ``render(**values)`` function whenever a
control changes and shows what it returns:

* a matplotlib ``Figure`` — drawn in the plot area (and closed, so figures do not pile up);
* a string — HTML for the readout line;
* a tuple ``(figure, html)`` — both;
* a :class:`LiveFigure` (alone or in the tuple) — a figure the render function keeps and updates in place:
  only the artists that change are redrawn over a cached image of the rest (axes, ticks, labels), which
  is most of the cost of a redraw. Use it where a control changes data, not axes.

If ``render`` raises (a combination the model rejects, say), the learner sees the message in a yellow
note — never a traceback — and the controls stay usable. Controls should already make invalid states
unreachable (ranges, dropdowns); the note is the safety net.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Image, display
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from PIL import Image as PILImage

from .alt_text import describe, tick_px
from .i18n import language, number
from .i18n import translate as _
from .markup import NO_MATH_CLASSES
from .plots import before_display, deck_mode
from .units import format_size

__all__ = ["Dashboard", "LiveFigure", "new_live_figure", "log_slider", "size_slider", "error_note", "figure_png"]


class LiveFigure:
    """A figure that stays on screen across a Dashboard's updates and is redrawn in place.

    Most of a matplotlib redraw is axes, ticks and text, which a slider rarely changes. So: build the
    figure once, register the artists a control changes with :meth:`animate`, and on each update only
    change their data (``line.set_ydata``, ``marker.set_data``, a new legend...). :meth:`png` draws the
    static part once, keeps that image, and afterwards pastes it back and draws just the animated
    artists on top (matplotlib's *blitting*). When something static changes (axis limits, a title),
    call :meth:`invalidate` and the next :meth:`png` redraws everything.

    The picture equals a full redraw's, except where an animated artist crosses an axes frame or a
    tick: blitting draws it over them, a full redraw under. The figure is not managed by pyplot, so
    it is never shown twice by the inline backend and needs no closing. Its layout (constrained, by
    default) is solved on the first draw and then kept: give animated texts (a title that changes)
    their longest content before the first draw.

    Args:
        figure: a figure without a pyplot manager (see :func:`new_live_figure`); an Agg canvas is attached.
    """

    def __init__(self, figure: Figure) -> None:
        self.figure = figure
        self.canvas = FigureCanvasAgg(figure)
        self.artists: list[Artist] = []
        self._background = None
        self.full_draws = 0  # how many times everything was drawn (tests and benchmarks read it)

    def animate(self, *artists: Artist) -> None:
        """Mark artists as changing: they are left out of the cached image and redrawn on every :meth:`png`."""
        for artist in artists:
            artist.set_animated(True)
            if artist not in self.artists:
                self.artists.append(artist)

    def forget(self, artist: Artist) -> None:
        """Stop redrawing an animated artist (e.g. a legend replaced by a new one) and remove it from the figure."""
        if artist in self.artists:
            self.artists.remove(artist)
        try:
            artist.remove()
        except (ValueError, NotImplementedError, AttributeError):
            pass

    def invalidate(self) -> None:
        """Something static changed: the next :meth:`png` redraws the whole figure."""
        self._background = None

    def draw(self) -> None:
        """Bring the canvas up to date: cached background (drawn if needed), then the animated artists."""
        if self._background is None:
            self.canvas.draw()  # skips animated artists
            self.full_draws += 1
            if self.figure.get_layout_engine() is not None:
                self.figure.set_layout_engine(None)  # keep the first layout; it fits every later state
            self._background = self.canvas.copy_from_bbox(self.figure.bbox)
        else:
            self.canvas.restore_region(self._background)
        renderer = self.canvas.get_renderer()
        for artist in self.artists:
            if artist.get_visible() and artist.figure is not None:
                artist.draw(renderer)

    def png(self) -> bytes:
        """Draw (see :meth:`draw`) and encode the image as PNG bytes."""
        self.draw()
        width, height = self.canvas.get_width_height()
        return _encode_png(self.canvas.buffer_rgba(), width, height)


def new_live_figure(width: float = 8.0, height: float = 4.2, ncols: int = 1) -> tuple[LiveFigure, Axes | np.ndarray]:
    """A :class:`LiveFigure` sized for the notebook column, with the course's grid, and its axes."""
    from .plots import style_axes

    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(1, ncols)
    for a in np.atleast_1d(axes):
        style_axes(a)
    return LiveFigure(fig), axes


RenderResult = Figure | LiveFigure | str | tuple[Figure | LiveFigure | None, str | None] | None


def _encode_png(rgba, width: int, height: int) -> bytes:
    image = PILImage.frombuffer("RGBA", (width, height), rgba, "raw", "RGBA", 0, 1)
    alpha = np.frombuffer(rgba, np.uint8)[3::4]
    if alpha.size and alpha.min() == 255:  # opaque (the course's figures are): RGB encodes ~35 % faster, smaller
        image = image.convert("RGB")
    buf = io.BytesIO()
    image.save(buf, format="png", compress_level=1)  # level 6 (default) is 1.6x slower for files ~4 % smaller
    return buf.getvalue()


def figure_png(fig: Figure, renderer: RendererAgg | None = None) -> bytes:
    """PNG bytes of a figure in one draw.

    The inline backend's ``display(fig)`` crops with ``bbox_inches="tight"``, which lays the figure out
    and draws it twice; the course's figures use constrained layout, so one plain draw is enough and
    a slider change costs about half as much. With ``renderer`` (an Agg renderer of the figure's size
    and dpi, kept by the caller) the figure is drawn there: matplotlib caches text metrics per
    renderer, so the labels a dashboard draws again and again are measured once.
    """
    if renderer is None:
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        return buf.getvalue()
    renderer.clear()
    fig.draw(renderer)
    return _encode_png(renderer.buffer_rgba(), int(renderer.width), int(renderer.height))


def figure_image(fig: Figure) -> Image:
    """The figure as an ``IPython.display.Image`` (drawn once, :func:`figure_png`) carrying its description as alt
    text, for a cell that shows a figure through ``display`` rather than the inline backend."""
    before_display(fig)
    return Image(data=figure_png(fig), format="png", alt=describe(fig))


def error_note(message: str) -> str:
    """HTML for a friendly error note (no traceback); ⚠ without U+FE0F, so no emoji font is needed."""
    return (
        '<div class="nvcourse-note" style="background:#fff4ce;border-left:4px solid #e0a800;'
        f'padding:6px 10px;margin:4px 0">\u26a0 {html.escape(message)}</div>'
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
        self._renderers: dict[tuple, RendererAgg] = {}  # one per figure size: its text-metrics cache is reused
        self._render = render
        self.readout = widgets.HTML(layout=widgets.Layout(min_height="1.5em"))
        self.plot = widgets.Output(layout=widgets.Layout(min_height="120px"))
        self.last_error: str | None = None
        self.last_figure: Figure | None = None
        self.last_png: bytes | None = None  # the picture on screen, also the kernel-less view (_repr_mimebundle_)
        self._drawn_values: dict[str, Any] | None = None  # the values of the last update()
        boxes = list(self.controls.values())
        shown = [_with_local_readout(w) for w in boxes]
        rows = [widgets.HBox(shown[i : i + columns]) for i in range(0, len(shown), columns)]
        super().__init__([*rows, self.readout, self.plot])
        self.add_class("nvcourse-dashboard")
        for w in boxes:
            _show_full_label(w)
        for w in boxes:
            w.observe(self._on_change, names="value")
        self.update()

    @property
    def values(self) -> dict[str, Any]:
        return {name: w.value for name, w in self.controls.items()}

    def _on_change(self, _change: dict) -> None:
        # A control whose observer sets another control (06b: a sample fills the text box) fires twice for one
        # change of the learner's; the second time every value is what was just drawn, so drawing it again
        # would only double the wait.
        try:
            same = self.values == self._drawn_values
        except Exception:  # values that do not compare (none of the course's controls): draw
            same = False
        if not same:
            self.update()

    def update(self) -> None:
        """Re-run ``render`` with the current values and show the result."""
        self._drawn_values = self.values
        try:
            result = self._render(**self.values)
        except Exception as exc:  # a widget never shows a traceback
            self.last_error = f"{type(exc).__name__}: {exc}" if not isinstance(exc, ValueError) else str(exc)
            self.readout.value = error_note(self.last_error)
            self.last_png = None
            self.plot.clear_output(wait=False)
            plt.close("all")
            return
        self.last_error = None
        if isinstance(result, tuple):
            fig, text = result
        elif isinstance(result, (Figure, LiveFigure)):
            fig, text = result, None
        else:
            fig, text = None, result
        self.readout.value = text or ""
        self.plot.clear_output(wait=True)
        self.last_png = None
        self.last_figure = fig.figure if isinstance(fig, LiveFigure) else fig  # what the tests audit
        # curves told apart in greyscale; in a deck, ticks a room can read
        if self.last_figure is not None and before_display(self.last_figure) and isinstance(fig, LiveFigure):
            fig.invalidate()
        if isinstance(fig, LiveFigure):
            self._show(fig.png())
        elif fig is not None:
            key = (tuple(fig.get_size_inches()), len(fig.axes))
            frozen = self.freeze_layout and key in self._layouts
            if frozen:
                fig.set_layout_engine(None)
                for ax, box in zip(fig.axes, self._layouts[key], strict=False):
                    ax.set_position(box)
            width, height = fig.bbox.size
            rkey = (width, height, fig.dpi)
            if rkey not in self._renderers:
                self._renderers[rkey] = RendererAgg(width, height, fig.dpi)
            png = figure_png(fig, self._renderers[rkey])
            if frozen and _spills(fig, self._renderers[rkey]):
                # this figure's labels are wider than the first one's (another system's row labels, a longer
                # legend): the frozen layout would cut them off, so lay this one out afresh
                for ax in fig.axes:
                    ax.set_in_layout(True)  # set_position took them out of it
                fig.set_layout_engine("constrained")
                png = figure_png(fig, self._renderers[rkey])
            if self.freeze_layout and not frozen and fig.get_layout_engine() is not None:
                self._layouts[key] = [ax.get_position().bounds for ax in fig.axes]
            self._show(png)
            plt.close(fig)

    def _show(self, png: bytes) -> None:
        self.last_png = png
        with self.plot:
            display(Image(data=png, format="png", alt=self.alt_text()))

    def alt_text(self) -> str:
        """What the picture on screen shows, for a screen reader, a deck or a handout (see :mod:`.alt_text`)."""
        return describe(self.last_figure) if self.last_figure is not None else _("Figure: the dashboard's picture.")

    def static_html(self) -> str:
        """The dashboard as it stands, without a kernel: control values, readout and picture as plain HTML.

        Stored with the widget view in a notebook's output (see :meth:`_repr_mimebundle_`), it is what
        GitHub, nbviewer and an untrusted JupyterLab (a notebook just opened, before Run All) show
        instead of the ``Dashboard(children=...)`` repr. The picture is an ``<img>`` with a data URI.
        """
        settings = ", ".join(
            f"{html.escape(_control_label(w, name))} = {html.escape(_control_value(w))}"
            for name, w in self.controls.items()
        )
        parts = [
            # MathJax kept off: a control named "$/GPU-h" and a readout with a price would pair up as TeX
            f'<div class="nvcourse-dashboard-static {NO_MATH_CLASSES}">',
            '<div style="color:#555;font-size:90%">'
            + html.escape(_("Dashboard (run the notebook to move its controls): {settings}")).format(settings=settings)
            + "</div>",
        ]
        if self.readout.value:
            parts.append(f"<div>{self.readout.value}</div>")
        if self.last_png:
            data = base64.b64encode(_small_png(self.last_png)).decode("ascii")
            alt = html.escape(self.alt_text(), quote=True)
            px = tick_px(self.last_figure) if deck_mode() and self.last_figure is not None else None
            size = f' data-tick-px="{px}"' if px else ""  # a deck checks its projected tick labels
            parts.append(f'<img alt="{alt}"{size} src="data:image/png;base64,{data}"/>')
        parts.append("</div>")
        return "\n".join(parts)

    def _repr_mimebundle_(self, **kwargs) -> dict[str, Any] | None:
        """The widget view for a live kernel, plus :meth:`static_html` and a sentence for viewers without one."""
        data = super()._repr_mimebundle_(**kwargs)
        if data is None:
            return None
        data["text/html"] = self.static_html()
        data["text/plain"] = _("Dashboard: run the notebook to use its controls (a static picture is in the HTML "
                               "output)")
        return data


def _with_local_readout(widget: widgets.Widget) -> widgets.Widget:
    """The widget as the dashboard shows it: a float slider's own readout writes its value the English way
    (``0.55``, d3's format has no locale), so in another language it is hidden and a label beside the slider
    prints the value in that language's style (``0,55``), updated as the slider moves; other widgets as they are."""
    if language() == "en" or not isinstance(widget, (widgets.FloatSlider, widgets.FloatLogSlider)):
        return widget
    if not widget.readout:
        return widget  # the dashboard prints the value itself (04's α and β)
    spec = widget.readout_format or ".2f"
    label = widgets.Label(number(widget.value, spec), layout=widgets.Layout(width="4.5em"))
    widget.readout = False

    def follow(change: dict) -> None:
        label.value = number(change["new"], spec)

    widget.observe(follow, names="value")
    return widgets.HBox([widget, label])


def _show_full_label(widget: widgets.Widget) -> None:
    """Give a control's description its full width and a tooltip, so no label is cut to "checkpoin…".

    ipywidgets reserves 80 px for a description and truncates the rest, units included. A control that
    already sets ``style.description_width`` keeps it; a slider with a long label is widened so that its
    track keeps ~200 px.
    """
    description = getattr(widget, "description", "") or ""
    if not description:
        return
    if not getattr(widget, "tooltip", None):
        widget.tooltip = description
    style = getattr(widget, "style", None)
    if style is not None and hasattr(style, "description_width") and not style.description_width:
        style.description_width = "initial"
        if isinstance(widget, (widgets.IntSlider, widgets.FloatSlider, widgets.FloatLogSlider,
                               widgets.SelectionSlider)) and not widget.layout.width:
            widget.layout.width = f"{max(300, 8 * len(description) + 260)}px"


def _spills(fig: Figure, renderer: RendererAgg) -> bool:
    """Whether anything drawn lies outside the canvas (more than half a pixel); the figure was just drawn."""
    box = fig.bbox
    for artist in fig.get_children():  # all of them: set_position takes axes out of the layout's accounting
        tight = artist.get_tightbbox(renderer) if artist.get_visible() else None
        if tight is not None and (tight.x0 < box.x0 - 0.5 or tight.y0 < box.y0 - 0.5 or tight.x1 > box.x1 + 0.5
                                  or tight.y1 > box.y1 + 0.5):
            return True
    return False


def _small_png(png: bytes) -> bytes:
    """The same picture in a file a quarter the size or less (128-colour palette, ~50 ms): the static view
    is stored in the notebook next to the live one, so it should not double the notebook's size."""
    image = PILImage.open(io.BytesIO(png)).convert("RGB")
    buf = io.BytesIO()
    image.quantize(colors=128, method=PILImage.Quantize.FASTOCTREE, dither=PILImage.Dither.NONE).save(buf, format="png")
    return buf.getvalue() if buf.tell() < len(png) else png


def _control_label(widget: widgets.Widget, name: str) -> str:
    return getattr(widget, "description", "") or name


def _control_value(widget: widgets.Widget) -> str:
    label = getattr(widget, "label", None)  # selection widgets: what the learner reads, not the value behind it
    if isinstance(label, str) and label:  # a SelectionSlider's label can be '' until a front end syncs it
        return label
    labels = getattr(widget, "label", None)
    if isinstance(labels, tuple) and any(labels):
        return ", ".join(labels)
    value = getattr(widget, "value", "")
    if isinstance(value, float):
        return number(value, ".3g")
    text = str(value)
    return text if len(text) <= 40 else text[:39] + "…"


def log_slider(
    description: str, *, minimum: float, maximum: float, value: float, fmt: str = ".3g", step: float = 0.05
) -> widgets.FloatLogSlider:
    """A logarithmic slider from ``minimum`` to ``maximum`` (both > 0), e.g. latency or bandwidth."""
    if not 0 < minimum < maximum:
        raise ValueError(f"log_slider needs 0 < minimum < maximum, got {minimum}, {maximum}")
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


def size_slider(
    description: str = "message", *, min_exp: int = 0, max_exp: int = 34, value_exp: int = 20
) -> widgets.SelectionSlider:
    """A slider over powers of two, showing sizes as '1 MiB'; its value is the size in bytes."""
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
