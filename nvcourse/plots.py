"""Shared plotting helpers: one look for every figure of the course.

All axis labels are passed in by the caller as plain strings, so a translated edition only changes
strings in code; no text is baked into image files.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, Locator, LogLocator, MaxNLocator, NullLocator

from . import alt_text
from .units import format_rate, format_size, format_time

__all__ = [
    "KIND_COLOURS",
    "ALGO_COLOURS",
    "new_figure",
    "style_axes",
    "bytes_axis",
    "rate_axis",
    "time_axis",
    "colour_for_link",
    "label_points",
]

#: The deck style (``NVCOURSE_DECK=1``, set by ``tasks.py slides`` while it executes a chapter for its deck):
#: figures are drawn at 100 dpi and shown at their own size, so a 14 pt tick label is 19 px (18.7 px once
#: reveal.js keeps its 4 % margin) on a 1280×720 slide, readable from the back of a room; labels grow with it.
DECK_RC = {"figure.dpi": 100, "savefig.dpi": 100, "font.size": 14, "xtick.labelsize": 14, "ytick.labelsize": 14,
           "axes.labelsize": 15, "axes.titlesize": 16, "legend.fontsize": 13, "figure.titlesize": 17}


def deck_mode() -> bool:
    """Whether figures are being drawn for a deck (``NVCOURSE_DECK`` set)."""
    return bool(os.environ.get("NVCOURSE_DECK"))


#: The smallest text a deck figure shows, in points at the deck's 100 dpi: 13 pt is 18 px on a 1280×720 slide.
DECK_MIN_PT = 13
#: Gap (px of the PNG) a deck figure keeps between two tick labels; closer ones are thinned.
DECK_TICK_GAP_PX = 6


def _at_least(text, size: float) -> None:
    if text.get_text() and text.get_fontsize() < size:
        text.set_fontsize(size)


def deck_fonts(fig: Figure) -> None:
    """In deck mode, make a figure readable on a projector: every tick label, axis label, title, legend entry
    and annotation at least the deck style's size (a chart with 8 pt ticks in a notebook column is unreadable
    on a projector; no text under :data:`DECK_MIN_PT`), the panels laid out so that no label runs into its
    neighbour (constrained layout), and tick labels that would touch thinned to every second (third, …) one.
    Elsewhere, nothing: a notebook's figures are unchanged."""
    if not deck_mode():
        return
    for ax in fig.axes:
        for axis, key in ((ax.xaxis, "xtick.labelsize"), (ax.yaxis, "ytick.labelsize")):
            if any(label.get_fontsize() < DECK_RC[key] for label in axis.get_ticklabels()):
                axis.set_tick_params(labelsize=DECK_RC[key])
            _at_least(axis.label, DECK_RC["axes.labelsize"])
        _at_least(ax.title, DECK_RC["axes.titlesize"])
        legend = ax.get_legend()
        for text in [*(legend.get_texts() if legend is not None else []), *ax.texts]:
            _at_least(text, DECK_MIN_PT)
    for legend in fig.legends:
        for text in legend.get_texts():
            _at_least(text, DECK_MIN_PT)
    for text in fig.texts:
        _at_least(text, DECK_MIN_PT)
    if fig.get_layout_engine() is None:  # a figure laid out once and kept (a live dashboard's) keeps its layout
        try:
            fig.set_layout_engine("constrained")
        except RuntimeError:  # a colorbar laid out by another engine: keep that engine
            pass
    wrap_long_axis_labels(fig)
    fit_figure_legends(fig)
    thin_tick_labels(fig)


def _drawn(fig: Figure):
    """The figure laid out and drawn (so texts have their final size and place); returns its renderer."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    # a figure made without pyplot has a bare canvas that cannot draw; saving it would attach Agg all the same
    canvas = fig.canvas if hasattr(fig.canvas, "get_renderer") else FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def wrap_long_axis_labels(fig: Figure) -> bool:
    """Break an axis label longer than its axes (the deck's larger text makes "bus bandwidth, GB/s (nccl-tests
    definition)" taller than a 4 inch panel, into its neighbour) over two lines, at the space nearest its
    middle. Returns whether a label changed."""
    renderer = _drawn(fig)
    changed = False
    for ax in fig.axes:
        box = ax.get_window_extent(renderer)
        for label, room in ((ax.xaxis.label, box.width), (ax.yaxis.label, box.height)):
            text = label.get_text()
            extent = label.get_window_extent(renderer)
            if "\n" in text or " " not in text or max(extent.width, extent.height) <= room:
                continue
            spaces = [i for i, c in enumerate(text) if c == " "]
            cut = min(spaces, key=lambda i: abs(i - len(text) / 2))
            label.set_text(text[:cut] + "\n" + text[cut + 1:])
            changed = True
    return changed


def fit_figure_legends(fig: Figure) -> bool:
    """Give a figure-level legend fewer columns (more rows) while it is wider than the figure: with the deck's
    larger text a one-row legend under two panels would widen the picture, and the slide then shrinks it
    (and every label with it). Returns whether a legend changed."""
    changed = False
    for legend in list(fig.legends):
        ncols = legend._ncols  # matplotlib keeps the column count and placement private
        while ncols > 1 and legend.get_window_extent(_drawn(fig)).width > fig.bbox.width:
            ncols -= 1
            # a legend's box is built once: make it anew, same entries and place, fewer columns
            size = max(legend.prop.get_size_in_points(), DECK_MIN_PT)
            new = fig.legend(list(legend.legend_handles), [t.get_text() for t in legend.texts], loc=legend._loc,
                             ncols=ncols, fontsize=size)
            new._outside_loc = legend._outside_loc  # constrained layout makes room for it as for the old one
            legend.remove()
            legend, changed = new, True
    return changed


def _kept_every(boxes: list, horizontal: bool, gap: float) -> int:
    """The smallest step k such that every k-th of the (ordered) label boxes stands clear of the next."""
    for k in range(1, len(boxes) + 1):
        kept = boxes[::k]
        if all((b.x0 - a.x1 if horizontal else b.y0 - a.y1) >= gap for a, b in zip(kept, kept[1:])):
            return k
    return len(boxes)


def thin_tick_labels(fig: Figure, gap_px: float = DECK_TICK_GAP_PX) -> bool:
    """Hide tick labels that would run into each other ("1 KiB4 KiB16 KiB"), keeping every k-th one with the
    smallest k that leaves ``gap_px`` pixels between them. Returns whether any label was hidden."""
    renderer = _drawn(fig)
    hidden = False
    for ax in fig.axes:
        for axis, horizontal in ((ax.xaxis, True), (ax.yaxis, False)):
            labels = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
            boxes = [t.get_window_extent(renderer) for t in labels]
            order = sorted(range(len(labels)), key=lambda i: boxes[i].x0 if horizontal else boxes[i].y0)
            k = _kept_every([boxes[i] for i in order], horizontal, gap_px)
            for rank, i in enumerate(order):
                if rank % k:
                    labels[i].set_visible(False)
                    hidden = True
    return hidden


#: Luminance gap under which two curves of the same line style look alike in a greyscale print (0 black, 1 white).
GREY_GAP = 0.12
#: Line styles and markers, in the order a curve that would look like another in greyscale takes them.
GREY_STYLES = (("-", "None"), ("--", "None"), ("-.", "None"), (":", "None"), ("-", "o"), ("--", "s"),
               ("-.", "^"), (":", "D"), ("-", "v"), ("--", "x"))


def _luminance(colour) -> float:
    r, g, b = to_rgb(colour)
    return 0.299 * r + 0.587 * g + 0.114 * b


def greyscale_safe(fig: Figure) -> bool:
    """Make every named curve distinguishable without colour: a curve whose colour has about the same grey as an
    earlier one's (the Okabe–Ito blue and green differ by 0.08) and the same line style and marker takes the next
    unused style of :data:`GREY_STYLES`; its legend entry follows. Figures are drawn this way for display (in a
    notebook, a dashboard, a deck or a handout), so a greyscale print and a colour-blind reader can tell curves
    apart; the chapters' code keeps choosing colours only. Returns whether a curve changed."""
    any_change = False
    for ax in fig.axes:
        lines = [ln for ln in ax.get_lines() if ln.get_visible() and not ln.get_label().startswith("_")
                 and len(ln.get_xdata()) > 1]
        changed: dict[str, Line2D] = {}
        for i, line in enumerate(lines):
            grey = _luminance(line.get_color())
            taken = {(o.get_linestyle(), o.get_marker()) for o in lines[:i]
                     if abs(_luminance(o.get_color()) - grey) < GREY_GAP}
            if (line.get_linestyle(), line.get_marker()) not in taken:
                continue
            style = next((s for s in GREY_STYLES if s not in taken), None)
            if style is None:
                continue
            line.set_linestyle(style[0])
            line.set_marker(style[1])
            if style[1] != "None":
                line.set_markevery(max(1, len(line.get_xdata()) // 8))
                line.set_markersize(5)
            changed[line.get_label()] = line
        any_change = any_change or bool(changed)
        # the panel's legend, and a legend of the whole figure (drawn under the panels) built from its curves
        for legend in [ax.get_legend(), *fig.legends] if changed else []:
            for handle, text in zip(legend.legend_handles, legend.get_texts()) if legend is not None else []:
                source = changed.get(text.get_text())
                if isinstance(handle, Line2D) and source is not None:
                    handle.set_linestyle(source.get_linestyle())
                    handle.set_marker(source.get_marker())
    return any_change


def before_display(fig: Figure) -> bool:
    """What every figure goes through just before it is drawn for display: curves told apart in greyscale, and
    in deck mode, fonts a room can read. Returns whether the figure changed (a cached picture is then stale)."""
    changed = greyscale_safe(fig)
    deck_fonts(fig)
    return changed or deck_mode()


if deck_mode():
    plt.rcParams.update(DECK_RC)
alt_text.install(before=before_display)  # every figure a notebook shows: described, greyscale-safe

#: One colour per link family, used in every figure (colour-blind-safe Okabe–Ito palette).
KIND_COLOURS = {
    "pcie": "#E69F00",
    "nvlink": "#009E73",
    "infiniband": "#0072B2",
    "ethernet": "#CC79A7",
    "cpu": "#999999",
}


#: One colour per collective algorithm or all-reduce kernel, in every figure that compares them (Okabe–Ito).
ALGO_COLOURS = {
    "ring": "#0072B2",
    "tree": "#009E73",
    "rhd": "#E69F00",
    "direct": "#CC79A7",
    "naive": "#999999",
    "nvls": "#D55E00",
    "hierarchical": "#56B4E9",
    "sharp": "#000000",  # in-network reduction (chapter 06)
    # NCCL's other algorithms (chapter 04b's sweep): NVLSTree, CollNet and PAT
    "nvlstree": "#8c564b",
    "collnet": "#e377c2",
    "pat": "#17becf",
    # inference all-reduce kernels (chapter 07c): NCCL and the custom one-shot / two-shot kernels
    "nccl": "#0072B2",
    "oneshot": "#009E73",
    "twoshot": "#E69F00",
    "nccl-sym": "#D55E00",  # NCCL's symmetric-memory kernels (registered buffers, 2.27+)
}


def colour_for_link(kind: str) -> str:
    return KIND_COLOURS.get(kind, "#555555")


def new_figure(width: float = 8.0, height: float = 4.2, ncols: int = 1) -> tuple[Figure, Axes | np.ndarray]:
    """A figure sized for the notebook column, with light grid lines."""
    alt_text.install(before=before_display)  # again: a later `%matplotlib inline` replaces the formatter
    fig, ax = plt.subplots(1, ncols, figsize=(width, height), layout="constrained")
    for a in np.atleast_1d(ax):
        style_axes(a)
    return fig, ax


def style_axes(ax: Axes) -> None:
    """The course's look for one axes: light major grid lines."""
    ax.grid(True, which="major", alpha=0.35)


class _DecadeLocator(LogLocator):
    """Powers of ten, plus 2× and 5× (or every integer multiple) when the view spans too few decades for three
    labels: an axis from 300 µs to 2 ms labelled only '1 ms' does not tell the reader its scale."""

    def tick_values(self, vmin, vmax):
        lo, hi = sorted((max(vmin, 1e-300), max(vmax, 1e-300)))
        # the coarsest set that puts three ticks inside the view: counting decades is not enough (5.2 to 37 µs
        # is 0.85 decades, but of 1-2-5 only 10 µs and 20 µs fall inside it)
        for subs in ([1.0], [1.0, 2.0, 5.0], np.arange(1.0, 10.0)):
            self._subs = np.array(subs)
            ticks = super().tick_values(vmin, vmax)
            if np.count_nonzero((ticks >= lo * (1 - 1e-9)) & (ticks <= hi * (1 + 1e-9))) >= 3:
                return ticks
        # a view narrower than 1 to 2 (86 to 107 ms): round values spaced evenly, as on a linear axis
        return MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)


def _log_axis(ax: Axes, which: str, formatter) -> None:
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis.set_major_locator(LogLocator(base=2, numticks=12) if formatter is _fmt_size else _DecadeLocator(numticks=12))
    axis.set_major_formatter(FuncFormatter(formatter))
    # No minor ticks: on a log axis they are ~8 per decade, each a Text to lay out, and they dominated the
    # redraw time of every dashboard (chapter 02's went from ~400 ms to well under half of that).
    axis.set_minor_locator(NullLocator())


def _fmt_size(x: float, _pos=None) -> str:
    return format_size(x, digits=3).replace(" ", "\u2009")


def _fmt_rate(x: float, _pos=None) -> str:
    return format_rate(x, digits=3)


def _fmt_time(x: float, _pos=None) -> str:
    return format_time(x, digits=3)


class _PowerOfTwoLocator(Locator):
    """Ticks at powers of two, spaced so that at most ``max_ticks`` labels fit."""

    def __init__(self, max_ticks: int = 9) -> None:
        self.max_ticks = max_ticks

    def __call__(self):
        lo, hi = sorted(self.axis.get_view_interval())
        lo_e, hi_e = int(np.floor(np.log2(max(lo, 1e-3)))), int(np.ceil(np.log2(max(hi, 1e-3))))
        span = max(hi_e - lo_e, 1)
        step = next(s for s in (1, 2, 5, 10, 20, 30, 40) if span / s <= self.max_ticks)
        start = int(np.ceil(lo_e / step) * step)
        return [2.0**e for e in range(start, hi_e + 1, step)]


def bytes_axis(ax: Axes, which: str = "x", label: str = "message size", max_ticks: int = 9) -> None:
    """Log axis in bytes with binary labels (1 KiB, 1 MiB, ...) at readable powers of two."""
    _log_axis(ax, which, _fmt_size)
    axis = ax.xaxis if which == "x" else ax.yaxis
    axis.set_major_locator(_PowerOfTwoLocator(max_ticks))
    axis.set_minor_locator(NullLocator())
    (ax.set_xlabel if which == "x" else ax.set_ylabel)(label)


def rate_axis(ax: Axes, which: str = "y", label: str = "bandwidth (per direction)") -> None:
    """Log axis in bytes/second with decimal labels (GB/s = 10^9 B/s, as nccl-tests)."""
    _log_axis(ax, which, _fmt_rate)
    (ax.set_xlabel if which == "x" else ax.set_ylabel)(label)


def time_axis(ax: Axes, which: str = "y", label: str = "time") -> None:
    """Log axis in seconds with µs/ms labels."""
    _log_axis(ax, which, _fmt_time)
    (ax.set_xlabel if which == "x" else ax.set_ylabel)(label)


def _line_name(line) -> str:
    label = line.get_label()
    return repr(label) if not label.startswith("_") else \
        f"(unlabelled, colour {line.get_color()}, style {line.get_linestyle()!r})"


def _markers(ax: Axes) -> list[tuple[str, np.ndarray]]:
    """(what, display xy) of every visible data marker of ``ax``: a Line2D's vertices when it has a marker,
    a scatter's offsets. Each is one data point a reader must see."""
    from matplotlib.collections import PathCollection

    found = []
    for line in ax.get_lines():
        if line.get_visible() and line.get_marker() not in (None, "", " ", "None", "none") and len(line.get_xydata()):
            xy = line.get_transform().transform(np.asarray(line.get_xydata(), float))
            found.append((f"marker(s) of line {_line_name(line)}", xy[np.isfinite(xy).all(axis=1)]))
    for coll in ax.collections:
        if isinstance(coll, PathCollection) and coll.get_visible() and len(coll.get_offsets()):
            xy = coll.get_offset_transform().transform(np.asarray(coll.get_offsets(), float))
            found.append((f"scatter point(s) of {coll.get_label()!r}", xy[np.isfinite(xy).all(axis=1)]))
    return found


def label_points(ax: Axes, xs, ys, labels, *, fontsize: float = 7) -> list[str]:
    """Label scatter points without putting a label on another label or on another point's marker: each label
    tries four spots around its point and is left out if all four touch a label already placed or cover a
    marker of the axes. Returns the labels left out (say so in a caption).

    Call it last, when the axes' limits and size are final (it draws the figure once to measure).
    """
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    placed, skipped = [], []
    markers = np.concatenate([xy for _, xy in _markers(ax)] or [np.empty((0, 2))])
    spots = ((4, 3, "left", "bottom"), (4, -3, "left", "top"), (-4, 3, "right", "bottom"), (-4, -3, "right", "top"))
    for x, y, label in zip(xs, ys, labels, strict=True):
        for dx, dy, ha, va in spots:
            t = ax.annotate(str(label), (x, y), xytext=(dx, dy), textcoords="offset points", fontsize=fontsize,
                            ha=ha, va=va)
            box = t.get_window_extent(renderer)
            own = ax.transData.transform((x, y))
            on = (markers[:, 0] > box.x0) & (markers[:, 0] < box.x1) & (markers[:, 1] > box.y0) & \
                (markers[:, 1] < box.y1) & (np.hypot(*(markers - own).T) > 2.0)
            if not on.any() and not any(box.overlaps(other) for other in placed):
                placed.append(box)
                break
            t.remove()
        else:
            skipped.append(str(label))
    return skipped
