"""Pictures of fabrics: the tiers of a fat-tree with every cable coloured by its load.

The models never import this module; notebooks and widgets do.
"""

from __future__ import annotations

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.path import Path

from .flows import SimResult
from .network import Fabric

__all__ = ["draw_fabric", "cable_utilisation", "cable_segments"]

TIER_Y = {"host": 0.0, "leaf": 1.0, "spine": 2.0, "core": 3.0}
HOT = "#D55E00"
_X_MIN = -0.22  # room left of the rows for their names


def cable_utilisation(sim: SimResult) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per cable: (tier of its lower end 0/1/2, lower index, upper index, utilisation of the busier
    direction, flows on the busier direction)."""
    fab = sim.fabric
    lo, hi = fab.link_ends
    t = fab.link_tier
    u = sim.utilisation
    fl = sim.flows_per_link
    tiers, los, his, utils, flows = [], [], [], [], []
    for k, (up, down) in enumerate(((0, 1), (2, 3), (4, 5))):
        a, b = np.flatnonzero(t == up), np.flatnonzero(t == down)
        if a.size == 0:
            continue
        tiers.append(np.full(a.size, k))
        los.append(lo[a])
        his.append(hi[a])
        utils.append(np.maximum(u[a], u[b]))
        flows.append(np.maximum(fl[a], fl[b]))
    return tuple(np.concatenate(x) for x in (tiers, los, his, utils, flows))


def _distinct_cables(tier, a, b, util, nflows, key_a=None, key_b=None) -> tuple[np.ndarray, ...]:
    """One line per group of cables with the same ``(tier, key_a, key_b)`` (default: the same two ends, i.e.
    parallel cables, which cover the same pixels). The busiest of a group (then the one with most flows)
    stands for it, drawn at its own ends."""
    key_a = a if key_a is None else key_a
    key_b = b if key_b is None else key_b
    order = np.lexsort((nflows, util, key_b, key_a, tier))  # within a group, the busiest last
    cols = tuple(x[order] for x in (tier, a, b, util, nflows))
    t, ka, kb = tier[order], key_a[order], key_b[order]
    last = np.ones(t.size, dtype=bool)
    last[:-1] = (t[1:] != t[:-1]) | (ka[1:] != ka[:-1]) | (kb[1:] != kb[:-1])
    return tuple(x[last] for x in cols)


# Agg pays a fixed cost per path (~10 µs, mostly Python-side Path objects and per-path set-up), which at 12k
# cables was most of a redraw: a few cables per Path (MOVETO/LINETO pairs) cut it by half; more per path
# makes each path's scanline sweep slower again.
_CABLES_PER_PATH = 4


# Path() validates its arguments (~5 µs each, a third of building a 512-node picture); ours are made right here,
# so they are built the way matplotlib builds its own internal paths, when that helper exists.
_TEMPLATE = Path(np.zeros((2, 2)), [Path.MOVETO, Path.LINETO])
_fast_path = getattr(Path, "_fast_from_codes_and_verts", None)


def _cable_paths(segs: np.ndarray) -> list[Path]:
    """Straight segments ``(n, 2, 2)`` as Paths of up to ``_CABLES_PER_PATH`` unconnected segments each."""
    verts = np.ascontiguousarray(segs, dtype=float).reshape(-1, 2)
    codes = np.tile([Path.MOVETO, Path.LINETO], _CABLES_PER_PATH).astype(Path.code_type)
    k = 2 * _CABLES_PER_PATH
    if _fast_path is None:
        return [Path(verts[i : i + k], codes[: len(verts[i : i + k])]) for i in range(0, len(verts), k)]
    return [_fast_path(verts[i : i + k], codes[: len(verts[i : i + k])], internals_from=_TEMPLATE)
            for i in range(0, len(verts), k)]


def cable_segments(collection) -> np.ndarray:
    """The segments ``(n, 2, 2)`` a cable collection of :func:`draw_fabric` draws (for tests and tools)."""
    paths = collection.get_paths()
    if not paths:
        return np.zeros((0, 2, 2))
    return np.concatenate([p.vertices.reshape(-1, 2, 2) for p in paths])


def _x(index: np.ndarray, count: int) -> np.ndarray:
    return (np.asarray(index) + 0.5) / max(count, 1)


def draw_fabric(fabric: Fabric, ax: Axes, sim: SimResult | None = None, *, hottest: int = 8, title: str | None = None,
                merge_px: float = 4.0, max_switch_lines: int | None = 1500) -> float:
    """Draw hosts, leaves, spines (and cores) as rows, cables as lines coloured by utilisation.

    With ``sim``, idle cables are light grey, busy ones coloured from pale to dark by utilisation and the
    ``hottest`` most loaded switch-to-switch cables drawn thick in orange (ties broken by the number of
    flows sharing the cable, so ECMP collisions come first).

    ``merge_px``: cables of one tier whose ends fall in the same ``merge_px``-wide columns of the drawing
    are drawn as one line, the busiest (parallel cables always are). At 512 nodes the hosts are ~1.5 px
    apart and 4,096 host cables would paint the same pixels many times over; at 128 nodes and below
    (hosts >= 6 px apart) only parallel cables merge. 0: only parallel cables.

    ``max_switch_lines``: when more lines than this remain between switches (leaf–spine, spine–core), the
    columns of those tiers widen (up to four times ``merge_px``) until they fit. Those cables are long: Agg's
    time grows with the lines and their length, and in a 10-inch figure a complete leaf–spine tier of 256 nodes
    (64 x 32 switches, 2,048 cables) is solid paint already. Host cables always merge at ``merge_px``, so each
    host keeps a visible cable. None: no limit.

    Returns the column width used between switches, in pixels (0 when only parallel cables merge).
    """
    structure_only = sim is None  # no traffic: the cables ARE the picture (rail vs top-of-rack wiring)
    if sim is None:
        n = fabric.n_links
        sim = SimResult(fabric, "none", np.zeros(0), np.zeros(n), fabric.capacity_GBps[:n].copy(),
                        np.zeros(n, dtype=np.int64))
    tier, a, b, util, nflows, used_px = _visible_cables(fabric, ax, sim, merge_px, max_switch_lines)
    cnt = _tier_counts(fabric)
    y0 = tier.astype(float)  # host 0, leaf 1, spine 2
    x0 = (a + 0.5) / cnt[tier]
    x1 = (b + 0.5) / cnt[tier + 1]
    segs = np.stack([np.stack([x0, y0], 1), np.stack([x1, y0 + 1], 1)], 1)
    _draw_cables(ax, segs, util, structure_only)
    switch_cable = tier > 0
    if hottest and np.any(util[switch_cable] > 0):
        score = np.where(switch_cable, util + 1e-3 * nflows, -1.0)
        top = np.argsort(-score, kind="stable")[:hottest]
        top = top[score[top] > 0]
        ax.add_collection(
            LineCollection(segs[top], colors=HOT, linewidths=1.5 + 0.8 * np.minimum(nflows[top], 5), zorder=3),
            autolim=False,
        )
    _draw_tiers(ax, fabric)
    if title:
        ax.set_title(title, fontsize=10)
    return used_px


_TIERS = ("host", "leaf", "spine", "core")


def _tier_sizes(fabric: Fabric) -> dict[str, int]:
    return {"host": fabric.nodes, "leaf": fabric.n_leaves, "spine": fabric.n_spines, "core": fabric.n_cores}


def _tier_counts(fabric: Fabric) -> np.ndarray:
    """Boxes per tier (at least 1), indexable by tier number."""
    sizes = _tier_sizes(fabric)
    return np.array([max(sizes[n], 1) for n in _TIERS], dtype=float)


def _visible_cables(fabric: Fabric, ax: Axes, sim: SimResult, merge_px: float,
                    max_switch_lines: int | None) -> tuple[np.ndarray, ...]:
    """(tier, lower end, upper end, utilisation, flows, column px) of the cables left after merging those
    that would paint the same pixels (see :func:`draw_fabric`)."""
    cnt = _tier_counts(fabric)
    tier, a, b, util, nflows = cable_utilisation(sim)
    if merge_px <= 0:
        return (*_distinct_cables(tier, a, b, util, nflows), 0.0)
    fig = ax.get_figure()
    axes_px = ax.get_position().width * fig.get_figwidth() * fig.dpi  # before layout: close enough
    px = axes_px / (1.0 - _X_MIN)  # pixels per data unit (x runs from _X_MIN to 1)

    def merged(mask: np.ndarray, width_px: float) -> tuple[np.ndarray, ...]:
        t, lo_, hi_ = tier[mask], a[mask], b[mask]
        column = width_px / px  # in data units
        return _distinct_cables(t, lo_, hi_, util[mask], nflows[mask],
                                np.floor((lo_ + 0.5) / cnt[t] / column).astype(np.int64),
                                np.floor((hi_ + 0.5) / cnt[t + 1] / column).astype(np.int64))

    hosts = merged(tier == 0, merge_px)  # host cables: always at merge_px
    for used_px in merge_px * np.array([1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0]):
        switches = merged(tier > 0, used_px)
        if max_switch_lines is None or switches[0].size <= max_switch_lines:
            break
    return (*(np.concatenate(pair) for pair in zip(hosts, switches)), float(used_px))


def _draw_cables(ax: Axes, segs: np.ndarray, util: np.ndarray, structure_only: bool) -> None:
    """Cables in 21 utilisation levels (idle, then 5 % steps), one collection per level with one colour and one
    width: per-cable width lists make matplotlib rescale a dash pattern for every cable (a 512-node fabric has
    12k), which cost more than drawing them. Levels go from idle to full, so busy cables stay on top."""
    level = np.where(util > 0, 1 + np.round(20 * np.clip(util, 0, 1)), 0).astype(int)
    cmap = colormaps["Blues"]
    for lv in np.unique(level):
        same = level == lv
        if lv == 0 and structure_only:
            colour, width = (0.35, 0.35, 0.35, 0.75), 0.6  # pale idle grey made them nearly invisible here
        elif lv == 0:
            colour, width = (0.88, 0.88, 0.88, 0.5), 0.25
        else:
            u = (lv - 1) / 20
            colour = (*cmap(0.2 + 0.8 * u)[:3], 0.35 + 0.5 * u)
            width = 0.4 + 1.0 * u
        ax.add_collection(PathCollection(_cable_paths(segs[same]), facecolors="none", edgecolors=[colour],
                                         linewidths=width, zorder=1, transform=ax.transData), autolim=False)


def _draw_tiers(ax: Axes, fabric: Fabric) -> None:
    """The boxes of each tier as a row of markers, named on the left; the axes' limits."""
    sizes = _tier_sizes(fabric)
    for name in _TIERS:
        c = sizes[name]
        if c == 0:
            continue
        xs = _x(np.arange(c), c)
        ax.scatter(
            xs,
            np.full(c, TIER_Y[name]),
            s=max(4, min(40, 2400 / c)),
            c="#333333",
            marker="s" if name != "host" else "o",
            zorder=4,
        )
        ax.text(-0.02, TIER_Y[name], f"{name} ({c})", ha="right", va="center", fontsize=9)
    top_y = 3 if fabric.n_cores else 2
    ax.set_xlim(_X_MIN, 1.0)
    ax.set_ylim(-0.3, top_y + 0.3)
    ax.set_axis_off()
