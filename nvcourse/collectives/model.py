"""Alpha-beta(-gamma) predictions for the algorithms of :mod:`nvcourse.collectives`.

The cost of one step is ``α + m/β (+ r/γ)``: a fixed latency α (seconds), m bytes over a link of
bandwidth β (bytes/s), and r bytes reduced at rate γ (bytes/s; optional). These are the formulas of
Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication Operations in MPICH" (2005),
written for the exact step programs of :mod:`nvcourse.collectives.plan` (``n`` = nccl-tests' size S in
bytes, ``p`` processes, "n/p" a chunk):

================  ==============================================================================
allreduce ring    2(p-1)·α + 2(p-1)/p·n/β + (p-1)/p·n/γ        (reduce-scatter + all-gather)
allreduce rhd     2·log2(p)·α + 2(p-1)/p·n/β + (p-1)/p·n/γ     (Rabenseifner; p a power of two)
allreduce direct  α + 2(p-1)/p·n/β + (p-1)/p·n/γ               (read all peers' shards, write all)
allreduce tree    Σ_d (α + c_d·n/β + c_d·n/γ) + L·(α + n/β)     (binary heap tree, L = ⌊log2 p⌋ levels,
                                                                c_d = most children of a rank at depth d
                                                                (2 in a full level, 1 in a half-full one);
                                                                unpipelined)
allreduce naive   2α + 2(p-1)·n/β + (p-1)·n/γ                  (root reduces, then sends to all)
reducescatter     ring (p-1)α + (p-1)/p·n(1/β+1/γ); rhd log2(p)α + same; direct α + same;
                  naive 2α + (p-1)·n(1/β+1/γ) + (p-1)/p·n/β
allgather         ring (p-1)α + (p-1)/p·n/β; rhd log2(p)α + same; direct α + same;
                  naive 2α + (p-1)/p·n/β + (p-1)·n/β
broadcast         naive α + (p-1)·n/β; direct α + n/β (switch multicast); tree L(α + n/β);
                  ring (chain, M chunks) (p+M-2)(α + n/(Mβ))
================  ==============================================================================

With :class:`~nvcourse.collectives.LinkEmulation` the group holds every step for at least exactly
these ``α + m/β``, so on emulated links the measurement should follow the model closely; on raw
shared memory the CPU's memory system and the scheduler add what the model leaves out.
"""

from __future__ import annotations

import math

from .plan import BCAST_PIPELINE_CHUNKS, SUPPORTED, check_args
from .programs import tree_children, tree_depth

__all__ = ["predict", "predict_table", "tree_level_children"]


def tree_level_children(p: int) -> list[int]:
    """For each reducing level of the plan's binary heap tree (root first), the most children any rank
    at that depth has: the critical path of the reduce phase pays that many reductions per level."""
    levels = tree_depth(p - 1) if p > 1 else 0
    return [max(len(tree_children(r, p)) for r in range(p) if tree_depth(r) == d) for d in range(levels)]


def predict(op: str, algo: str, p: int, nbytes: float, alpha_s: float, beta_Bps: float,
            gamma_Bps: float | None = None) -> float:
    """Predicted seconds for one call (see the module table). ``gamma_Bps=None``: reduction is free."""
    check_args(op, algo, p)
    if nbytes < 0 or alpha_s < 0 or beta_Bps <= 0 or (gamma_Bps is not None and gamma_Bps <= 0):
        raise ValueError("nbytes and alpha_s must be >= 0, beta_Bps and gamma_Bps > 0")
    if p == 1:
        return 0.0
    n, a = float(nbytes), alpha_s
    b = 1.0 / beta_Bps
    g = 0.0 if gamma_Bps is None else 1.0 / gamma_Bps
    f = (p - 1) / p
    lg = math.log2(p)
    L = int(math.floor(lg))
    if op == "allreduce":
        return {
            "ring": 2 * (p - 1) * a + 2 * f * n * b + f * n * g,
            "rhd": 2 * lg * a + 2 * f * n * b + f * n * g,
            "direct": a + 2 * f * n * b + f * n * g,
            "tree": sum(a + c * n * (b + g) for c in tree_level_children(p)) + L * (a + n * b),
            "naive": 2 * a + 2 * (p - 1) * n * b + (p - 1) * n * g,
        }[algo]
    if op == "reducescatter":
        return {
            "ring": (p - 1) * a + f * n * (b + g),
            "rhd": lg * a + f * n * (b + g),
            "direct": a + f * n * (b + g),
            "naive": 2 * a + (p - 1) * n * (b + g) + f * n * b,
        }[algo]
    if op == "allgather":
        return {
            "ring": (p - 1) * a + f * n * b,
            "rhd": lg * a + f * n * b,
            "direct": a + f * n * b,
            "naive": 2 * a + f * n * b + (p - 1) * n * b,
        }[algo]
    M = BCAST_PIPELINE_CHUNKS
    return {
        "naive": a + (p - 1) * n * b,
        "direct": a + n * b,
        "tree": L * (a + n * b),
        "ring": (p + M - 2) * (a + n / M * b),
    }[algo]


def predict_table(op: str, p: int, sizes: list[int], alpha_s: float, beta_Bps: float,
                  gamma_Bps: float | None = None) -> dict[str, list[float]]:
    """Predicted seconds per size for every algorithm that supports ``op`` with ``p`` processes."""
    algos = [a for a in SUPPORTED[op] if not (a == "rhd" and p & (p - 1))]
    return {a: [predict(op, a, p, s, alpha_s, beta_Bps, gamma_Bps) for s in sizes] for a in algos}
