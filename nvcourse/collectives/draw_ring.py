"""Step-by-step replay of a ring all-reduce recorded by the shared-memory process group.

The *trace* of a real run (``ProcessGroup.run("allreduce", algo="ring", trace=True)``) says, for each
step, which rank read which chunk from which peer and how long it took. What each rank's buffer
holds after each step — the partial sums — is obtained by executing the same step program
(:func:`nvcourse.collectives.plan.build_plan`) on *labels* instead of numbers: rank ``r`` contributes
the bit ``1 << r``, so every element of a partial sum is the set of ranks already added in. The
replay checks that the trace and the program agree (same chunk, same peer, every step) and refuses
a trace that does not match.

    >>> with ProcessGroup(4) as pg:                                             # doctest: +SKIP
    ...     res = pg.run("allreduce", 64, algo="ring", iters=1, warmup=0, trace=True)
    >>> replay = RingReplay.from_result(res)                                     # doctest: +SKIP
    >>> render_ring(replay)(1)   # (LiveFigure, html) for step 1               # doctest: +SKIP
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np

from ..i18n import localize_numbers
from ..i18n import translate as _
from ..tables import table_html
from ..units import format_size, format_time
from . import plan as _plan
from .draw import RANK_COLOURS, Block, draw_buffer, rank_letter, ring_frames

__all__ = ["RingReplay", "RingView", "ring_states", "draw_ring_step", "ring_step_html", "render_ring"]

MAX_RING_RANKS = 8


def ring_states(nprocs: int, count: int) -> tuple[list[list[list[Block]]], list[dict[int, list[int]]]]:
    """What every rank holds after each step of the ring all-reduce plan on ``count`` elements.

    Returns ``(states, written)``: ``states[k][r][c]`` is the :class:`Block` in chunk ``c`` of rank
    ``r`` after ``k`` steps (``k = 0``: before the call; a chunk not yet written holds the rank's own
    input), and ``written[k]`` maps rank → chunks it wrote in step ``k`` (0-based).
    """
    if not 2 <= nprocs <= MAX_RING_RANKS:
        raise ValueError(f"nprocs must be from 2 to {MAX_RING_RANKS}; got {nprocs!r}")
    plan = _plan.build_plan("allreduce", "ring", nprocs, count)
    bounds = _plan.chunk_bounds(count, nprocs)
    if any(hi <= lo for lo, hi in zip(bounds, bounds[1:])):
        raise ValueError(f"count must be at least nprocs={nprocs} so every chunk has an element; got {count}")
    inputs = [np.full(count, 1 << r, dtype=np.int64) for r in range(nprocs)]

    def snapshot(bufs) -> list[list[Block]]:
        state = []
        for r in range(nprocs):
            row = []
            for c in range(nprocs):
                masks = np.unique(bufs["out"][r][bounds[c]:bounds[c + 1]])
                if len(masks) != 1:
                    raise AssertionError(f"rank {r} chunk {c} holds mixed partial sums {masks.tolist()}")
                m = int(masks[0]) or (1 << r)
                row.append(Block(tuple(q for q in range(nprocs) if m >> q & 1), c))
            state.append(row)
        return state

    # before the call every chunk of a rank holds its own input; then one state per step that moved data
    # (the plan's last step only waits)
    states = [[[Block((r,), c) for c in range(nprocs)] for r in range(nprocs)]]
    written: list[dict[int, list[int]]] = []

    def record(_step: int, wrote: dict[int, list[int]], bufs) -> None:
        states.append(snapshot(bufs))
        written.append(wrote)

    _plan.simulate(plan, inputs, fill=0, on_step=record)
    return states, written


@dataclass
class RingReplay:
    """A real ring all-reduce trace plus the partial sums after each step.

    ``frames`` are :func:`nvcourse.collectives.draw.ring_frames` of the trace (times in seconds
    from the first event); ``states[k]`` is every rank's buffer after ``k`` steps (see
    :func:`ring_states`); ``written[k]`` the chunks each rank wrote in step ``k``.
    """

    nprocs: int
    count: int
    itemsize: int
    frames: list[dict]
    states: list[list[list[Block]]]
    written: list[dict[int, list[int]]]
    iteration: int = 0

    @property
    def nsteps(self) -> int:
        return len(self.frames)

    @classmethod
    def from_result(cls, result, *, iteration: int | None = None) -> RingReplay:
        """Build the replay from a :class:`~nvcourse.collectives.RunResult` of a traced ring all-reduce.

        ``iteration``: which recorded call (``TraceEvent.iteration``); default the last one recorded.
        """
        if result.op != "allreduce" or result.algo != "ring":
            raise ValueError(f"need a ring allreduce; got {result.op} with algo {result.algo}")
        if not result.trace:
            raise ValueError("the result has no trace: run with trace=True")
        p = result.procs
        if iteration is None:
            iteration = max(e.iteration for e in result.trace)
        frames = ring_frames(result.trace, p, iteration=iteration)
        states, written = ring_states(p, result.count)
        if len(frames) != len(written):
            raise ValueError(f"trace has {len(frames)} steps with transfers, the ring plan {len(written)}")
        for k, (frame, wrote) in enumerate(zip(frames, written)):
            for t in frame["transfers"]:
                dst, src, chunk = t["dst"], t["src"], t["chunk"]
                if src != (dst - 1) % p or wrote.get(dst) != [chunk]:
                    raise ValueError(
                        f"trace step {k}: rank {dst} read chunk {chunk} from rank {src}, but the ring plan "
                        f"has it read chunk {wrote.get(dst)} from rank {(dst - 1) % p}"
                    )
            if sorted(t["dst"] for t in frame["transfers"]) != sorted(wrote):
                raise ValueError(
                    f"trace step {k}: ranks {[t['dst'] for t in frame['transfers']]} acted, plan expects "
                    f"{sorted(wrote)}"
                )
        itemsize = result.nbytes // result.count if result.count else 4
        return cls(p, result.count, itemsize, frames, states, written, iteration)

    def phase(self, k: int) -> str:
        """Phase of step ``k`` (1-based; 0 is the state before the call)."""
        if k == 0:
            return "before the call"
        return "reduce-scatter" if k <= self.nprocs - 1 else "all-gather"


def _positions(p: int) -> tuple[float, list[tuple[float, float]]]:
    radius = 3.3 if p <= 4 else 1.05 * p
    pts = []
    for r in range(p):
        ang = math.pi / 2 - 2 * math.pi * r / p
        pts.append((radius * math.cos(ang), radius * math.sin(ang)))
    return radius, pts


_W, _H = 1.0, 0.75  # one chunk's box, data units


def _check_step(replay: RingReplay, k: int) -> None:
    if not 0 <= k <= replay.nsteps:
        raise ValueError(f"step must be from 0 to {replay.nsteps}; got {k!r}")


def _draw_ring_static(ax, replay: RingReplay) -> None:
    """What every step shares: the faint ring, each rank's frame and name, the limits."""
    import matplotlib.pyplot as plt

    p = replay.nprocs
    radius, pts = _positions(p)
    ax.add_patch(plt.Circle((0, 0), radius * 0.62, fill=False, ec="#cccccc", lw=1, ls=(0, (3, 3))))
    for r, (x, y) in enumerate(pts):
        x0, y0 = x - p * _W / 2, y - _H / 2
        ax.text(x, y + _H / 2 + 0.12, _("rank {r} ({letter})").format(r=r, letter=rank_letter(r)), ha="center",
                va="bottom", fontsize=9, color="black", fontweight="bold")
        ax.add_patch(plt.Rectangle((x0 - 0.12, y0 - 0.08), p * _W + 0.24, _H + 0.16, fill=False,
                                   ec=RANK_COLOURS[r % len(RANK_COLOURS)], lw=1.5))
    lim = radius + p * _W / 2 + 0.3
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-radius - 0.9, radius + 1.1)
    ax.set_aspect("equal")
    ax.axis("off")


def _ring_title(replay: RingReplay, k: int) -> str:
    phase = replay.phase(k)
    if k == 0:
        return _("before the call: each rank holds only its own data (one colour per rank)")
    if phase == "reduce-scatter":
        return _("step {k} of {n} — reduce-scatter: each rank receives one chunk from its left neighbour\nand adds its "
                 "own (thick outline = just written)").format(k=k, n=replay.nsteps)
    return _("step {k} of {n} — all-gather: each rank receives one finished chunk (Σ)\nfrom its left neighbour and "
             "stores it (thick outline = just written)").format(k=k, n=replay.nsteps)


def _draw_ring_state(ax, replay: RingReplay, k: int) -> list:
    """What step ``k`` shows: buffers and partial sums, step k's transfers and phase. Returns the artists."""
    from matplotlib.patches import FancyArrowPatch

    p = replay.nprocs
    radius, pts = _positions(p)
    state = replay.states[k]
    wrote = replay.written[k - 1] if k else {}
    artists: list = []
    for r, (x, y) in enumerate(pts):
        artists += draw_buffer(ax, x - p * _W / 2, y - _H / 2, state[r], p, width=_W, height=_H,
                               highlight=set(wrote.get(r, [])), fontsize=9)
    if k:
        for t in replay.frames[k - 1]["transfers"]:
            src, dst = t["src"], t["dst"]
            a0 = math.atan2(pts[src][1], pts[src][0])
            a1 = math.atan2(pts[dst][1], pts[dst][0])
            if a1 > a0:
                a1 -= 2 * math.pi
            r_in = radius * 0.62
            off = 0.22 if p <= 4 else 0.1
            start = (r_in * math.cos(a0 - off), r_in * math.sin(a0 - off))
            end = (r_in * math.cos(a1 + off), r_in * math.sin(a1 + off))
            artists.append(ax.add_artist(FancyArrowPatch(start, end, connectionstyle="arc3,rad=-0.25", arrowstyle="-|>",
                                                         mutation_scale=16, lw=2.2, color="#333333")))
            am = (a0 + a1) / 2
            artists.append(ax.text(0.42 * radius * math.cos(am), 0.42 * radius * math.sin(am),
                                   _("chunk {n}").format(n=t["chunk"]), ha="center", va="center", fontsize=8.5,
                                   bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="#999999", lw=0.6)))
    artists.append(ax.text(0, 0, replay.phase(k) if k else _("before the call"), ha="center", va="center", fontsize=11,
                           color="#555555",
                           style="italic"))
    return artists


def draw_ring_step(replay: RingReplay, k: int, *, ax=None):
    """Draw the ring after ``k`` steps (0: before the call): buffers, partial sums and step ``k``'s transfers.

    Returns the Figure.
    """
    import matplotlib.pyplot as plt

    _check_step(replay, k)
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 6.0), layout="constrained")
    else:
        fig = ax.figure
    _draw_ring_static(ax, replay)
    _draw_ring_state(ax, replay, k)
    ax.set_title(_ring_title(replay, k), fontsize=10)
    return fig


class RingView:
    """The ring dashboard's figure, kept: rank frames and names drawn once, each step's buffers, arrows and
    title redrawn over them (:class:`nvcourse.widgets.LiveFigure`)."""

    def __init__(self, replay: RingReplay) -> None:
        from ..widgets import new_live_figure

        self.replay = replay
        self.live, self.ax = new_live_figure(7.5, 6.0)
        self.ax.grid(False)
        _draw_ring_static(self.ax, replay)
        self.ax.set_title(_ring_title(replay, 1), fontsize=10)  # the layout keeps room for a two-line title ...
        self.live.animate(self.ax.title)  # ... which each step rewrites
        self.live.draw()  # lay out and cache the static part now, while the title has two lines
        self.state: list = []

    def __call__(self, step: int):
        _check_step(self.replay, step)
        for artist in self.state:
            self.live.forget(artist)
        self.state = _draw_ring_state(self.ax, self.replay, step)
        self.live.animate(*self.state)
        self.ax.title.set_text(_ring_title(self.replay, step))
        return self.live, ring_step_html(self.replay, step)


def ring_step_html(replay: RingReplay, k: int) -> str:
    """The readout for step ``k``: who sent which chunk to whom, what the receiver now holds, measured times."""
    if k == 0:
        total = replay.frames[-1]["end"] if replay.frames else 0.0
        return _("{p} ranks, {size} each, cut into {p} chunks. {n} steps in all; the recorded call took {time} from "
                 "its first to its last action. Move the slider.").format(
            p=replay.nprocs, size=localize_numbers(format_size(replay.count * replay.itemsize)), n=replay.nsteps,
            time=html.escape(localize_numbers(format_time(total))))
    frame = replay.frames[k - 1]
    rows = []
    for t in sorted(frame["transfers"], key=lambda t: t["src"]):
        block = replay.states[k][t["dst"]][t["chunk"]]
        verb = _("adds its own → holds") if replay.phase(k) == "reduce-scatter" else _("stores")
        rows.append([_("rank {src} → rank {dst}").format(src=t["src"], dst=t["dst"]),
                     _("chunk {n}").format(n=t["chunk"]), html.escape(localize_numbers(format_size(t["nbytes"]))),
                     f"{verb} {html.escape(block.label(replay.nprocs))}",
                     html.escape(localize_numbers(format_time(t["end"] - t["start"])))])
    span = localize_numbers(format_time(frame["end"] - frame["start"]))
    return (_("<b>step {k}</b> ({phase}): every rank moves one chunk; in the trace this step spans {span}, as ranks "
              "wait for their neighbour to run or to send.").format(k=k, phase=replay.phase(k), span=html.escape(span))
            + table_html([_("transfer"), _("chunk"), _("bytes"), _("receiver"), _("measured")], rows))


def render_ring(replay: RingReplay):
    """A ``render(step)`` for :class:`nvcourse.widgets.Dashboard`: returns ``(LiveFigure, html)``."""
    return RingView(replay)
