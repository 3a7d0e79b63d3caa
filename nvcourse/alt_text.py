"""Alt text for the course's figures, written from what a figure shows: its kind, title, axes and series.

A screen reader, a deck and a printed handout need one sentence or three that say what the picture is, without
the picture. :func:`describe` reads them off the figure's own artists (titles, axis labels and scales, legend
entries, how many lines, bars and points each panel holds), so every figure of every chapter gets one without a
caption typed by hand, and a translated label is described in its own words. Only labels and counts are used,
never data values: a figure of this machine's timings gets the same text on every machine (nbval compares it).

The description travels with the figure: :func:`install` makes IPython display every matplotlib figure with it as
the PNG's ``alt`` metadata (the decks and handouts put it on the picture; nbval does not compare metadata, so a
figure's text view stays as it was), and the dashboards put it on their pictures.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import matplotlib
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle

from .i18n import ngettext
from .i18n import translate as _

__all__ = ["describe", "install"]

_MAX_NAMES = 8  # series named one by one; beyond that, "and N more"


def _clean(text: str) -> str:
    """A label as a sentence reads it: TeX dollars and braces dropped, white space folded."""
    for ch in "${}":
        text = text.replace(ch, "")
    return " ".join(text.replace("\\", "").split())


def _names(labels: list[str]) -> str:
    shown = [_clean(lb) for lb in labels[:_MAX_NAMES]]
    more = len(labels) - len(shown)
    return ", ".join(shown) + (ngettext(" and {n} more", " and {n} more", more).format(n=more) if more > 0 else "")


def _series(ax: Axes) -> list[str]:
    """What one panel holds, as short phrases ("3 lines: ring, tree, NVLS", "12 bars", "40 points")."""
    lines = [ln for ln in ax.get_lines() if ln.get_visible() and len(ln.get_xdata()) > 1
             and not ln.get_label().startswith("_")]
    unnamed_lines = [ln for ln in ax.get_lines() if ln.get_visible() and ln.get_label().startswith("_")
                     and len(ln.get_xdata()) > 1]
    bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_visible() and p.get_width() and p.get_height()]
    points = [c for c in ax.collections if isinstance(c, PathCollection) and c.get_visible()]
    areas = [c for c in ax.collections if isinstance(c, PolyCollection) and c.get_visible()]
    images = [im for im in ax.get_images() if isinstance(im, AxesImage)]
    parts = []
    if lines:
        parts.append(ngettext("{n} line: {names}", "{n} lines: {names}", len(lines)).format(
            n=len(lines), names=_names([ln.get_label() for ln in lines])))
    elif unnamed_lines:
        parts.append(ngettext("{n} line", "{n} lines", len(unnamed_lines)).format(n=len(unnamed_lines)))
    stacks = _stacks(ax, bars)
    if stacks:
        parts.append(ngettext("{n} stacked bar", "{n} stacked bars", stacks).format(n=stacks))
    elif bars:
        parts.append(ngettext("{n} bar", "{n} bars", len(bars)).format(n=len(bars)))
    n_points = sum(len(c.get_offsets()) for c in points)
    if n_points:
        parts.append(ngettext("{n} point", "{n} points", n_points).format(n=n_points))
    if areas:
        parts.append(ngettext("{n} shaded band", "{n} shaded bands", len(areas)).format(n=len(areas)))
    if images:
        parts.append(_("a colour map"))
    return parts


def _stacks(ax: Axes, bars: list[Rectangle]) -> int:
    """How many stacked bars ``bars`` draw, or 0 when no bar is stacked: a stacked bar is rectangles of different
    ``bar`` calls at one position, each starting where another ends (a reader counts the bars, not their
    segments; one call's bars of width 1 touch too, and are not a stack; nor are side-by-side bars of a grouped chart
    whose lengths happen to be equal: a bar call's rectangles stack only along their own orientation)."""
    call = {id(patch): i for i, container in enumerate(ax.containers) for patch in container}
    orientation = {id(patch): getattr(container, "orientation", None)
                   for container in ax.containers for patch in container}

    def stacked(group: list[tuple[float, float, int]]) -> bool:
        ends = {(round(start + length, 9), c) for start, length, c in group}
        return any(round(start, 9) == end and c != other for start, _length, c in group for end, other in ends)

    for at, along, other in (("x", "y", "horizontal"), ("y", "x", "vertical")):  # vertical bars stack along y
        size_at, size_along = ("width", "height") if at == "x" else ("height", "width")
        groups: dict[tuple[float, float], list[tuple[float, float, int]]] = {}
        for i, bar in enumerate(bars):  # a rectangle drawn outside any bar call counts as a call of its own
            if orientation.get(id(bar)) == other:
                continue
            key = (round(getattr(bar, f"get_{at}")(), 9), round(getattr(bar, f"get_{size_at}")(), 9))
            groups.setdefault(key, []).append((getattr(bar, f"get_{along}")(), getattr(bar, f"get_{size_along}")(),
                                               call.get(id(bar), -1 - i)))
        if len(groups) < len(bars) and any(stacked(g) for g in groups.values()):
            return len(groups)
    return 0


def _named_lines(ax: Axes) -> bool:
    """Whether the panel has lines with names (then :func:`_series` already lists them: no legend repeated)."""
    return any(ln.get_visible() and len(ln.get_xdata()) > 1 and not ln.get_label().startswith("_")
               for ln in ax.get_lines())


def _axis(ax: Axes, which: str) -> str:
    label = _clean(ax.get_xlabel() if which == "x" else ax.get_ylabel())
    scale = ax.get_xscale() if which == "x" else ax.get_yscale()
    if not label:
        return ""
    return label + (_(" (log scale)") if scale == "log" else "")


def _panel(ax: Axes) -> str:
    bits = []
    title = _clean(ax.get_title())
    if title:
        bits.append(_("“{title}”").format(title=title))
    if not ax.axison:  # a drawing (a topology, a fabric, a timeline of boxes): its marks are not data points
        bits.append(_("a diagram"))
        legend = ax.get_legend()
        keys = [t.get_text() for t in legend.get_texts() if t.get_text()] if legend is not None else []
        if keys:
            bits.append(_("key: {names}").format(names=_names(keys)))
        labels = list(dict.fromkeys(_clean(t.get_text()) for t in ax.texts if _clean(t.get_text())))
        if labels:
            bits.append(_("labelled {names}").format(names=_names(labels)))
        return ", ".join(bits)
    x, y = _axis(ax, "x"), _axis(ax, "y")
    if x or y:
        bits.append(_(" against ").join(v for v in (y, x) if v))
    series = _series(ax)
    if series:
        bits.append(_("; ").join(series))
    legend = ax.get_legend()
    if legend is not None and not _named_lines(ax):
        entries = [t.get_text() for t in legend.get_texts() if t.get_text()]
        if entries:
            bits.append(_("legend: {names}").format(names=_names(entries)))
    return ", ".join(bits)


def describe(fig: Figure) -> str:
    """One to a few sentences that say what ``fig`` shows (kind, titles, axes with their scales, series).

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(); _ = ax.plot([1, 2], [3, 4], label="ring"); _ = ax.set_xlabel("size")
    >>> describe(fig)
    'Figure: 1 line: ring; y against size.'
    """
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]
    head = _clean(fig._suptitle.get_text()) if fig._suptitle is not None else ""
    texts = [p for p in (_panel(ax) for ax in panels) if p]
    if not texts:
        return _("Figure: {title}.").format(title=head) if head else _("Figure: a diagram.")
    if len(texts) == 1:
        if head:
            return _("Figure “{title}”: {panel}.").format(title=head, panel=texts[0])
        return _("Figure: {panel}.").format(panel=texts[0])
    listed = " ".join(_("Panel {i}: {panel}.").format(i=i + 1, panel=t) for i, t in enumerate(texts))
    if head:
        return _("Figure “{title}” with {n} panels. {panels}").format(title=head, n=len(texts), panels=listed)
    return _("Figure with {n} panels. {panels}").format(n=len(texts), panels=listed)


def tick_px(fig: Figure) -> float | None:
    """The smallest tick label of ``fig`` in pixels of its saved PNG (points × dpi / 72), or None without
    ticks: a deck checks that it reaches 18 px on a 1280×720 slide."""
    dpi = matplotlib.rcParams["savefig.dpi"]
    dpi = fig.dpi if dpi == "figure" else float(dpi)
    sizes = [label.get_fontsize() for ax in fig.axes if ax.axison
             for label in (*ax.xaxis.get_ticklabels(), *ax.yaxis.get_ticklabels()) if label.get_text()]
    return round(min(sizes) * dpi / 72, 1) if sizes else None


def _display_bundle(fig: Figure, png_formatter: Any, before: Callable[[Figure], None] | None = None,
                    ) -> tuple[Any, dict[str, Any]] | None:
    if before is not None:
        before(fig)
    png = png_formatter(fig)  # drawn here, so the tick labels exist for tick_px
    if png is None:
        return None
    meta: dict[str, Any] = {}
    if isinstance(png, tuple):  # a formatter that already returns (data, metadata)
        png, meta = png
    meta = {**meta, "alt": describe(fig)}
    px = tick_px(fig)
    if px:
        meta["tick_px"] = px
    return png, meta


def install(before: Callable[[Figure], None] | None = None) -> bool:
    """In an IPython kernel, display every matplotlib figure with its description as the PNG's ``alt``
    metadata (decks and handouts use it). Returns whether it installed (False outside IPython, or before the
    inline backend registered its PNG formatter). Call it after pyplot is imported, so it wraps the inline
    backend's formatter rather than being replaced by it. ``before(fig)`` runs just before each figure is drawn
    (the deck style's font check)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    if not getattr(shell, "_nvcourse_alt_hook", False):
        # matplotlib picks its backend lazily, so the inline backend may register its PNG formatter only when a
        # cell makes the first figure; this hook wraps it then, before the backend's own post-execute display
        shell._nvcourse_alt_hook = True
        shell.events.register("post_execute", lambda: install(before))
    formatters = shell.display_formatter.formatters
    png = formatters["image/png"]
    original = png.lookup_by_type(Figure) if Figure in png.type_printers else None
    if original is None or getattr(original, "_nvcourse_alt", False):
        return original is not None

    def with_alt(fig: Figure):
        return _display_bundle(fig, original, before)

    with_alt._nvcourse_alt = True  # type: ignore[attr-defined]
    png.for_type(Figure, with_alt)
    return True
