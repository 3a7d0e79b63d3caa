"""Pictures of what each collective does: every rank's buffer before and after the call.

A buffer is drawn as ``p`` slots (chunks). A :class:`Block` is one chunk's content: the ranks whose
data it holds (``sources``; several ranks = a sum) and which chunk of their input it is (``chunk``).
Rank ``r``'s own data is coloured with rank ``r``'s colour and lettered A, B, C, ...; a sum is drawn as
stripes of its sources' colours and labelled with their letters, or Σ when every rank contributed.

    >>> before, after = collective_blocks("allreduce", 2)
    >>> [b.label(2) for b in after[1]]
    ['Σ0', 'Σ1']

:func:`collective_blocks` is the data (tested); :func:`draw_collective` and :func:`draw_collectives`
turn it into matplotlib figures. The pictures include ``reduce`` and ``alltoall``, which the
shared-memory :class:`~nvcourse.collectives.ProcessGroup` does not run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._validate import choice
from ..i18n import english, number
from ..i18n import translate as _
from .fit import median_abs_error
from .group import TraceEvent

__all__ = [
    "COLLECTIVES",
    "TITLES",
    "titles",
    "RANK_COLOURS",
    "Block",
    "rank_letter",
    "collective_blocks",
    "draw_buffer",
    "draw_collective",
    "draw_collectives",
    "plot_timeline",
    "ring_frames",
    "plot_measured_vs_machine",
]

#: Operations drawn by :func:`draw_collectives`, in teaching order.
COLLECTIVES: tuple[str, ...] = ("broadcast", "reduce", "allreduce", "reducescatter", "allgather", "alltoall")



def titles() -> dict[str, tuple[str, str]]:
    """Title and one-line meaning of each picture, in the current language."""
    return {
        "broadcast": (_("broadcast (root 0)"), _("the root's buffer is copied to every rank")),
        "reduce": (_("reduce (root 0)"), _("the sum of all buffers lands on the root")),
        "allreduce": ("all-reduce", _("every rank gets the sum of all buffers")),
        "reducescatter": ("reduce-scatter", _("rank r gets chunk r of the sum")),
        "allgather": ("all-gather", _("every rank gets every rank's chunk")),
        "alltoall": ("all-to-all", _("rank r's chunk j goes to rank j (a transpose)")),
    }


with english():
    #: Title and one-line meaning of each picture, in English (the figures use :func:`titles`).
    TITLES: dict[str, tuple[str, str]] = titles()

#: One colour per rank (Okabe–Ito, colour-blind safe), reused by the ring animation.
RANK_COLOURS: tuple[str, ...] = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#999999")
MAX_RANKS = len(RANK_COLOURS)


def rank_letter(rank: int) -> str:
    """A, B, C, ... for ranks 0, 1, 2, ..."""
    return chr(ord("A") + rank)


@dataclass(frozen=True)
class Block:
    """One chunk of a buffer: the sum over ``sources`` (rank ids, sorted) of their chunk ``chunk``."""

    sources: tuple[int, ...]
    chunk: int

    def label(self, nprocs: int) -> str:
        """``'B2'`` (rank 1's chunk 2), ``'AC2'`` (a partial sum) or ``'Σ2'`` (the sum over all ranks)."""
        if len(self.sources) == nprocs and nprocs > 1:
            return f"Σ{self.chunk}"
        return "".join(rank_letter(s) for s in self.sources) + str(self.chunk)


def _own(rank: int, chunk: int) -> Block:
    return Block((rank,), chunk)


def collective_blocks(
    op: str, nprocs: int = 4, root: int = 0
) -> tuple[list[list[Block | None]], list[list[Block | None]]]:
    """``(before, after)``: for each rank a list of ``nprocs`` slots holding a :class:`Block` or ``None`` (empty).

    Slots are chunk positions in the buffer, so a reduce-scatter's output chunk ``r`` and an
    all-gather's input from rank ``r`` sit in slot ``r``. Slots a call does not write stay ``None``
    in ``after`` (for reduce: the output buffers of non-root ranks).
    """
    choice("op", op, COLLECTIVES)
    if isinstance(nprocs, bool) or not isinstance(nprocs, int) or not 2 <= nprocs <= MAX_RANKS:
        raise ValueError(f"nprocs must be an integer from 2 to {MAX_RANKS}; got {nprocs!r}")
    if not 0 <= root < nprocs:
        raise ValueError(f"root must be from 0 to {nprocs - 1}; got {root!r}")
    p = nprocs
    everyone = tuple(range(p))
    full = [[_own(r, c) for c in range(p)] for r in range(p)]
    empty = [[None] * p for _r in range(p)]
    total = [Block(everyone, c) for c in range(p)]
    if op == "broadcast":
        before = [list(full[root]) if r == root else [None] * p for r in range(p)]
        after = [list(full[root]) for _r in range(p)]
    elif op == "reduce":
        before = full
        after = [list(total) if r == root else [None] * p for r in range(p)]
    elif op == "allreduce":
        before = full
        after = [list(total) for _r in range(p)]
    elif op == "reducescatter":
        before = full
        after = [[total[c] if c == r else None for c in range(p)] for r in range(p)]
    elif op == "allgather":
        before = [[_own(r, r) if c == r else None for c in range(p)] for r in range(p)]
        after = [[_own(c, c) for c in range(p)] for _r in range(p)]
    else:  # alltoall: slot j of rank r receives rank j's chunk r
        before = full
        after = [[_own(j, r) for j in range(p)] for r in range(p)]
    return [list(x) for x in before], [list(x) for x in (after or empty)]


def draw_buffer(ax, x0: float, y0: float, slots, nprocs: int, *, width: float = 1.0, height: float = 0.8,
                highlight: set[int] | None = None, fontsize: float = 8) -> list:
    """Draw one rank's slots left to right from ``(x0, y0)`` (lower-left corner); sums as colour stripes.

    Returns the artists it added (the boxes' collection, then the labels)."""
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    highlight = highlight or set()
    labels = []
    boxes = []  # drawn as one PatchCollection: a ring step has ~60 rectangles, one artist each was most of a redraw
    for i, block in enumerate(slots):
        x = x0 + i * width
        if block is None:
            boxes.append(Rectangle((x + 0.04, y0), width - 0.08, height, fill=False, ls=(0, (2, 2)),
                                   ec="#999999", lw=0.8))
            continue
        k = len(block.sources)
        for j, s in enumerate(block.sources):  # horizontal stripes, one per source rank
            boxes.append(Rectangle((x + 0.04, y0 + j * height / k), width - 0.08, height / k,
                                   fc=RANK_COLOURS[s % MAX_RANKS], ec="none"))
        boxes.append(Rectangle((x + 0.04, y0), width - 0.08, height, fill=False,
                               ec="black", lw=2.2 if i in highlight else 0.6))
        label = block.label(nprocs)
        labels.append(ax.text(x + width / 2, y0 + height / 2, label, ha="center", va="center",
                              fontsize=fontsize if len(label) <= 3 else fontsize * 0.8,
                              bbox=dict(boxstyle="round,pad=0.12", fc="white", ec="none", alpha=0.75)))
    collection = ax.add_collection(PatchCollection(boxes, match_original=True), autolim=False)
    collection.set_zorder(1)  # under the labels (texts are at zorder 3)
    return [collection, *labels]


def draw_collective(op: str, nprocs: int = 4, *, ax=None, root: int = 0):
    """Draw ``op`` for ``nprocs`` ranks on one Axes: buffers before (left) and after (right). Returns the Axes."""
    import matplotlib.pyplot as plt

    before, after = collective_blocks(op, nprocs, root)
    if ax is None:
        _fig, ax = plt.subplots(figsize=(5.4, 0.55 * nprocs + 0.9), layout="constrained")
    p = nprocs
    gap = 1.6
    x_after = p + gap
    for r in range(p):
        y = p - 1 - r
        ax.text(-0.15, y + 0.4, _("rank {r}").format(r=r), ha="right", va="center", fontsize=8)
        draw_buffer(ax, 0, y, before[r], p)
        draw_buffer(ax, x_after, y, after[r], p)
    ax.annotate("", xy=(x_after - 0.2, p / 2), xytext=(p + 0.2, p / 2),
                arrowprops=dict(arrowstyle="-|>", lw=1.5, color="#333333"))
    ax.text(p / 2, p + 0.05, _("before"), ha="center", va="bottom", fontsize=8, color="#333333")
    ax.text(x_after + p / 2, p + 0.05, _("after"), ha="center", va="bottom", fontsize=8, color="#333333")
    title, meaning = titles()[op]
    ax.set_title(f"{title}\n{meaning}", fontsize=9.5)
    ax.set_xlim(-1.3, x_after + p + 0.1)
    ax.set_ylim(-0.2, p + 0.45)
    ax.set_aspect("equal")
    ax.axis("off")
    return ax


def draw_collectives(ops=COLLECTIVES, nprocs: int = 4, *, columns: int = 2):
    """A grid of :func:`draw_collective` pictures (default: all six). Returns the Figure."""
    import matplotlib.pyplot as plt

    ops = list(ops)
    for op in ops:
        choice("op", op, COLLECTIVES)
    rows = -(-len(ops) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.2 * columns, (0.5 * nprocs + 0.9) * rows), layout="constrained")
    flat = list(getattr(axes, "flat", [axes]))
    for ax, op in zip(flat, ops):
        draw_collective(op, nprocs, ax=ax)
    for ax in flat[len(ops):]:
        ax.axis("off")
    return fig


# ---------------------------------------------------------------- pictures of real traces


def plot_timeline(trace: Sequence[TraceEvent], *, iteration: int | None = 0, ax=None, title: str | None = None):
    """One row per rank, one bar per action (x in microseconds), coloured by step, labelled with the peer.

    Returns the matplotlib Axes. ``iteration=None`` shows every recorded call.
    """
    import matplotlib.pyplot as plt

    events = [e for e in trace if iteration is None or e.iteration == iteration]
    if ax is None:
        _fig, ax = plt.subplots(figsize=(9, 0.5 + 0.5 * (1 + max((e.rank for e in events), default=0))))
    if not events:
        ax.set_title(title or _("no trace events (run with trace=True)"))
        return ax
    t0 = min(e.start for e in events)
    span = max(e.end for e in events) - t0
    cmap = plt.get_cmap("tab10")
    for e in events:
        ax.barh(e.rank, (e.end - e.start) * 1e6, left=(e.start - t0) * 1e6, height=0.6,
                color=cmap(e.step % 10), edgecolor="black", linewidth=0.3)
        # a label only on a bar wide enough to hold it (~3 % of a 9-inch row): on short bars the labels piled
        # up into an unreadable smear; the colour still tells the step
        if e.peer >= 0 and (e.end - e.start) >= 0.03 * span:
            ax.text((e.start - t0 + (e.end - e.start) / 2) * 1e6, e.rank, f"←{e.peer}",
                    ha="center", va="center", fontsize=7)
    ranks = sorted({e.rank for e in events})
    ax.set_yticks(ranks, [_("rank {r}").format(r=r) for r in ranks])
    ax.invert_yaxis()
    ax.set_xlabel(_("time (µs)"))
    ax.set_title(title or _("trace: one bar per step (colour = step, label = peer)"))
    return ax


def ring_frames(trace: Sequence[TraceEvent], nprocs: int, *, iteration: int = 0) -> list[dict]:
    """Frames for animating a ring allreduce from a real trace, one per step.

    Each frame: ``{"step", "phase" ("reduce-scatter" or "all-gather"), "start", "end" (seconds from
    the first event), "transfers": [{"src", "dst", "chunk", "nbytes", "start", "end"}]}`` where
    ``dst`` is the rank that did the work and ``src`` the peer it read from.
    """
    events = [e for e in trace if e.iteration == iteration and e.peer >= 0]
    if not events:
        return []
    t0 = min(e.start for e in events)
    frames = []
    for step in sorted({e.step for e in events}):
        evs = sorted((e for e in events if e.step == step), key=lambda e: e.rank)
        frames.append({
            "step": step,
            "phase": "reduce-scatter" if step < nprocs - 1 else "all-gather",
            "start": min(e.start for e in evs) - t0,
            "end": max(e.end for e in evs) - t0,
            "transfers": [
                {"src": e.peer, "dst": e.rank, "chunk": e.chunk, "nbytes": e.nbytes,
                 "start": e.start - t0, "end": e.end - t0}
                for e in evs
            ],
        })
    return frames


def plot_measured_vs_machine(rows, ax=None, *, title: str | None = None):
    """Measured (markers) vs machine model (lines) time per call, log-log, one colour per algorithm.

    Rows of several group sizes go on the same axes (marker and line style per N). Returns the Axes.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _fig, ax = plt.subplots(figsize=(8, 5))
    algos = list(dict.fromkeys(r["algo"] for r in rows))
    procs = sorted({r["procs"] for r in rows})
    cmap = plt.get_cmap("tab10")
    markers, styles = "os^Dv", ["-", "--", ":", "-."]
    for j, p in enumerate(procs):
        for i, a in enumerate(algos):
            pts = sorted(
                (r["nbytes"], r["measured_s"], r["model_s"]) for r in rows if r["algo"] == a and r["procs"] == p
            )
            if not pts:
                continue
            x = [q[0] for q in pts]
            ax.plot(x, [q[2] * 1e6 for q in pts], styles[j % 4], color=cmap(i % 10), lw=1.2,
                    label=_("N={p} {algo} model").format(p=p, algo=a))
            ax.plot(x, [q[1] * 1e6 for q in pts], markers[j % 5], color=cmap(i % 10), ms=5, mfc="none",
                    label=_("N={p} {algo} measured").format(p=p, algo=a))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(_("message size S (bytes)"))
    ax.set_ylabel(_("time per call (µs)"))
    if rows:
        med = number(median_abs_error(rows) * 100, ".0f")
        ax.set_title(title or _("{op}: measured (markers) vs machine model (lines); median |error| {med} %").format(
            op=rows[0]["op"], med=med))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return ax
