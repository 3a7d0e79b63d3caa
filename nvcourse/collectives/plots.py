"""Pictures of real traces: a per-rank timeline and the frames of a step-by-step ring animation."""

from __future__ import annotations

from collections.abc import Sequence

from .group import TraceEvent

__all__ = ["plot_timeline", "ring_frames"]


def plot_timeline(trace: Sequence[TraceEvent], *, iteration: int | None = 0, ax=None, title: str | None = None):
    """One row per rank, one bar per action (x in microseconds), coloured by step, labelled with the peer.

    Returns the matplotlib Axes. ``iteration=None`` shows every recorded call.
    """
    import matplotlib.pyplot as plt

    events = [e for e in trace if iteration is None or e.iteration == iteration]
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 0.5 + 0.5 * (1 + max((e.rank for e in events), default=0))))
    if not events:
        ax.set_title(title or "no trace events (run with trace=True)")
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
    ax.set_yticks(ranks, [f"rank {r}" for r in ranks])
    ax.invert_yaxis()
    ax.set_xlabel("time (µs)")
    ax.set_title(title or "trace: one bar per step (colour = step, label = peer)")
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
