"""The figure audit: what a learner would find wrong in a drawn figure (cut off, overlapping texts, a log axis
without a scale, a legend or a label over data). Test-only: the tests run it on every figure the course draws.
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from nvcourse.plots import _line_name, _markers

__all__ = ["LEGEND_LINE_SHARE", "figure_problems"]


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
