"""Shared plotting helpers: one look for every figure of the course.

All axis labels are passed in by the caller as plain strings, so a translated edition only changes
strings in code; no text is baked into image files.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, Locator, LogLocator, MaxNLocator, NullLocator

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
    "figure_problems",
    "label_points",
]

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
    # inference all-reduce kernels (chapter 07c): NCCL and the custom one-shot / two-shot kernels
    "nccl": "#0072B2",
    "oneshot": "#009E73",
    "twoshot": "#E69F00",
}


def colour_for_link(kind: str) -> str:
    return KIND_COLOURS.get(kind, "#555555")


def new_figure(width: float = 8.0, height: float = 4.2, ncols: int = 1) -> tuple[Figure, Axes | np.ndarray]:
    """A figure sized for the notebook column, with light grid lines."""
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


def figure_problems(
    fig: Figure, *, tolerance_px: float = 1.0, check_canvas: bool = True, redo_layout: bool = True
) -> list[str]:
    """What a learner would find wrong in a drawn figure; an empty list when none.

    * an artist outside the canvas (cut off in the PNG): the figure's tight box must lie in its box;
    * two texts on top of each other: tick labels of one axis, legend entries, annotations, titles;
    * a log axis with fewer than three labelled ticks (a reader cannot tell the scale);
    * a legend drawn over data: markers, bar centres, texts or a share of a line (see :func:`_hides`);
    * a text in an axes on the marker of a point other than the one it labels.

    Used by the tests on every dashboard; the figure is drawn once with an Agg renderer, animated artists
    (a :class:`~nvcourse.widgets.LiveFigure`'s) included. ``check_canvas=False`` for a figure shown by the
    inline backend, which saves it with a tight box (nothing is cut off there). ``redo_layout=False`` for a
    figure already drawn as shown (a Dashboard's): its layout is not solved again, since a second solve of
    constrained layout can fit what the first, the one in the PNG, did not.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    animated = [a for a in fig.findobj() if a.get_animated()]
    for a in animated:  # a plain draw skips them, and their text extents would be stale
        a.set_animated(False)
    engine = fig.get_layout_engine()
    if not redo_layout and engine is not None:
        fig.set_layout_engine(None)
    try:
        canvas.draw()
    finally:
        for a in animated:
            a.set_animated(True)
        if not redo_layout and engine is not None:
            fig.set_layout_engine(engine)
    renderer = canvas.get_renderer()
    problems = []
    box = fig.bbox
    for artist in fig.get_children() if check_canvas else []:
        # in_layout is not a filter: axes placed by set_position (a Dashboard's frozen layout) are out of it
        if not artist.get_visible():
            continue
        tight = artist.get_tightbbox(renderer)
        if tight is None or tight.width == 0:
            continue
        out = {
            "left": box.x0 - tight.x0, "right": tight.x1 - box.x1,
            "bottom": box.y0 - tight.y0, "top": tight.y1 - box.y1,
        }
        cut = {side: px for side, px in out.items() if px > tolerance_px}
        if cut:
            name = _describe(artist)
            edges = ", ".join(f"{px:.0f} px past the {side} edge" for side, px in cut.items())
            problems.append(f"{name} is cut off: {edges}")
    texts: list[tuple[str, object]] = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for axis_name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text().strip()]
            lo, hi = sorted(axis.get_view_interval())
            labels = [t for t in labels if _in_view(t, axis_name, lo, hi)]
            extents = [(t.get_text(), t.get_window_extent(renderer)) for t in labels]
            problems += _overlaps(extents, f"{_axes_name(ax)} {axis_name} tick labels")
            if axis.get_scale() == "log" and len(labels) < 3 and ax.get_position().width > 0.1:
                problems.append(f"{_axes_name(ax)}: log {axis_name} axis has {len(labels)} labelled tick(s)")
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            problems += _overlaps([(t.get_text(), t.get_window_extent(renderer)) for t in legend.get_texts()],
                                  f"{_axes_name(ax)} legend entries")
        axes_box = ax.get_window_extent(renderer)
        for t in ax.texts:  # a text clipped to its axes but reaching past them is cut where the axes end
            if t.get_visible() and t.get_clip_on() and t.get_text().strip():
                e = t.get_window_extent(renderer)
                if e.x0 < axes_box.x0 - tolerance_px or e.x1 > axes_box.x1 + tolerance_px or \
                        e.y0 < axes_box.y0 - tolerance_px or e.y1 > axes_box.y1 + tolerance_px:
                    problems.append(f"text {t.get_text()!r} is clipped by the edge of {_axes_name(ax)}")
        texts += [(t.get_text(), t) for t in ax.texts if t.get_visible() and t.get_text().strip()]
    texts += [(t.get_text(), t) for t in fig.texts if isinstance(t, Text) and t.get_visible() and t.get_text().strip()]
    problems += _overlaps([(s, t.get_window_extent(renderer)) for s, t in texts], "texts")
    legends = [ax.get_legend() for ax in fig.axes if ax.get_visible()] + list(fig.legends)
    for legend in legends:
        if legend is not None and legend.get_visible():
            where = f"legend of {_axes_name(legend.axes)}" if legend.axes is not None else "figure legend"
            problems += _hides(legend.get_window_extent(renderer), where, fig.axes, renderer)
    for ax in fig.axes:  # a label on another point's marker: the reader cannot see that point
        for t in ax.texts if ax.get_visible() else []:
            if t.get_visible() and t.get_text().strip():
                problems += _hides(t.get_window_extent(renderer), f"text {t.get_text()!r}", [ax], renderer,
                                   markers_only=True, own=_anchors(t, ax))
    return problems


#: Share of a line's drawn length (sampled every ~2 px on screen) a legend may cover. A curve that passes
#: under a legend's corner is still read where it goes in and comes out; at 5 % of its length (about 25 px
#: of a 500 px curve) a knee, a crossing or an end point can be under the legend.
LEGEND_LINE_SHARE = 0.05


def _hides(box, where: str, axes, renderer, *, markers_only: bool = False, own=()) -> list[str]:
    """What an artist with display box ``box`` (a legend, a label) is drawn over, after a draw.

    Hidden if the box holds: any marker (a Line2D's vertices when it has markers, a scatter's offsets) or
    bar/patch centre -- each is one data point, so the tolerance is zero; any text placed in the axes; or
    more than :data:`LEGEND_LINE_SHARE` of a plain line's length. Only what lies inside its axes counts
    (the rest is clipped away); a legend outside every axes hides nothing. ``markers_only``: only markers
    and scatter points, and none within 2 px of a point in ``own`` (a label sits on or next to its own
    point; a bar's label in the bar and a label along a line are placed there on purpose).
    """
    from matplotlib.patches import Rectangle

    found: list[str] = []
    own = np.asarray(own, float).reshape(-1, 2)
    for ax in axes:
        frame = ax.get_window_extent(renderer)
        if not ax.get_visible() or not box.overlaps(frame):
            continue

        def drawn(xy: np.ndarray, frame=frame) -> np.ndarray:  # inside the axes, not clipped away
            x, y = xy[:, 0], xy[:, 1]
            return (x >= frame.x0) & (x <= frame.x1) & (y >= frame.y0) & (y <= frame.y1)

        def covered(xy: np.ndarray) -> np.ndarray:
            x, y = xy[:, 0], xy[:, 1]
            keep = drawn(xy) & (x > box.x0) & (x < box.x1) & (y > box.y0) & (y < box.y1)
            for p in own:
                keep &= np.hypot(x - p[0], y - p[1]) > 2.0
            return keep

        for name, xy in _markers(ax):
            n = int(covered(xy).sum())
            if n:
                found.append(f"{where} hides {n} {name}")
        for line in [] if markers_only else ax.get_lines():
            xy = line.get_transform().transform(np.asarray(line.get_xydata(), float)) if line.get_visible() else None
            if xy is None or line.get_linestyle() in ("None", "", " ", "none") or len(xy) < 2:
                continue
            xy = xy[np.isfinite(xy).all(axis=1)]
            pts = _along(xy, step_px=2.0)
            pts = pts[drawn(pts)]
            share = covered(pts).mean() if len(pts) else 0.0
            if share > LEGEND_LINE_SHARE:
                found.append(f"{where} hides {share:.0%} of line {_line_name(line)}")
        if markers_only:
            continue
        centres = [p.get_window_extent(renderer) for p in ax.patches
                   if p.get_visible() and isinstance(p, Rectangle) and p.get_width() and p.get_height()]
        n = int(covered(np.array([[(b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2] for b in centres]).reshape(-1, 2)).sum())
        if n:
            found.append(f"{where} hides the centre of {n} bar(s)")
        for t in ax.texts:
            if t.get_visible() and t.get_text().strip():
                e = t.get_window_extent(renderer)
                if min(e.x1, box.x1) - max(e.x0, box.x0) > 1 and min(e.y1, box.y1) - max(e.y0, box.y0) > 1:
                    found.append(f"{where} covers text {t.get_text()!r}")
    return found


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


def _anchors(t, ax: Axes) -> list[tuple[float, float]]:
    """Display points a text labels: where it is placed and, for an annotation, the point it annotates."""
    pts = [tuple(t.get_transform().transform(t.get_position()))]
    if hasattr(t, "xy") and getattr(t, "xycoords", None) == "data":
        pts.append(tuple(ax.transData.transform(t.xy)))
    return pts


def _along(xy: np.ndarray, step_px: float) -> np.ndarray:
    """Points every ``step_px`` along a polyline in display coordinates (its vertices included)."""
    seg = np.hypot(*np.diff(xy, axis=0).T)
    dist = np.concatenate([[0.0], np.cumsum(seg)])
    if dist[-1] == 0:
        return xy
    at = np.union1d(np.arange(0.0, dist[-1], step_px), dist)
    return np.column_stack([np.interp(at, dist, xy[:, 0]), np.interp(at, dist, xy[:, 1])])


def _in_view(label, axis_name: str, lo: float, hi: float) -> bool:
    x, y = label.get_position()
    v = x if axis_name == "x" else y
    return lo - 1e-9 * abs(hi - lo) <= v <= hi + 1e-9 * abs(hi - lo)


def _overlaps(extents: list[tuple[str, object]], where: str, min_px: float = 1.0) -> list[str]:
    found = []
    for i, (a, ba) in enumerate(extents):
        for b, bb in extents[i + 1 :]:
            w = min(ba.x1, bb.x1) - max(ba.x0, bb.x0)
            h = min(ba.y1, bb.y1) - max(ba.y0, bb.y0)
            if w > min_px and h > min_px:
                found.append(f"{where} overlap: {a!r} and {b!r}")
    return found


def _axes_name(ax: Axes) -> str:
    return f"axes {ax.get_title()!r}" if ax.get_title() else "axes"


def _describe(artist) -> str:
    from matplotlib.text import Text

    if isinstance(artist, Axes):
        return _axes_name(artist) + " (or its labels)"
    if isinstance(artist, Text):
        return f"text {artist.get_text()!r}"
    return type(artist).__name__.lower()


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
