"""The step programs: one small registered function per (operation, algorithm), as nccl-tests has one file per
collective.

A program writes, for every rank and global step, the :class:`Action` s the rank performs (see
:mod:`nvcourse.collectives.plan` for the buffers and how the waits are derived). Each function registered with
:func:`register` gets a :class:`Builder`, the number of ranks ``p >= 2`` and the element count, and returns
``(counts, exit_refs)``: each buffer kind's length and what every rank's output is. One rank is the same copy
for every operation (:func:`program`). :data:`PROGRAMS` is the registry; ``plan.SUPPORTED`` is derived from it.

Sizes in this module are in **elements**, not bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .._validate import choice

__all__ = [
    "Ref",
    "Action",
    "Builder",
    "PROGRAMS",
    "BCAST_PIPELINE_CHUNKS",
    "chunk_bounds",
    "register",
    "program",
    "tree_children",
    "tree_depth",
]

#: Number of chunks of the pipelined ring (chain) broadcast.
BCAST_PIPELINE_CHUNKS = 8
#: Chunk boundaries are rounded to this many elements (64 B for float32) to avoid false sharing.
_ALIGN = 16

Counts = dict[str, int]
Program = Callable[["Builder", int, int], tuple[Counts, list["Ref | None"]]]
#: (operation, algorithm) -> its program, in registration (teaching) order.
PROGRAMS: dict[tuple[str, str], Program] = {}


@dataclass(frozen=True)
class Ref:
    """A region ``[lo, hi)`` (elements) of buffer ``kind`` (``in``/``out``/``tmp``) owned by rank ``owner``."""

    kind: str
    owner: int
    lo: int
    hi: int

    @property
    def size(self) -> int:
        return self.hi - self.lo


@dataclass(frozen=True)
class Action:
    """``dsts[0] = sum(srcs)``; ``dsts[1:] = dsts[0]``. With ``dsts`` empty: a synchronising read only."""

    dsts: tuple[Ref, ...]
    srcs: tuple[Ref, ...]
    chunk: int = -1


def chunk_bounds(count: int, parts: int, align: int = _ALIGN) -> list[int]:
    """Boundaries of ``parts`` nearly equal chunks of ``count`` elements (aligned when large enough)."""
    if count >= align * parts * 4:
        inner = [(count * i // parts) // align * align for i in range(1, parts)]
    else:
        inner = [count * i // parts for i in range(1, parts)]
    return [0, *inner, count]


class Builder:
    """Collects each rank's actions by step; empty regions are dropped."""

    def __init__(self, nprocs: int):
        self.p = nprocs
        self.steps: dict[int, dict[int, list[Action]]] = {r: {} for r in range(nprocs)}

    def add(self, rank: int, step: int, dsts, srcs, chunk: int = -1) -> None:
        dsts, srcs = tuple(dsts), tuple(srcs)
        if any(ref.size <= 0 for ref in dsts + srcs):
            return
        self.steps[rank].setdefault(step, []).append(Action(dsts, srcs, chunk))

    def finish(self, exit_refs: list[Ref | None]) -> list[list[list[Action]]]:
        last = max((s for r in self.steps.values() for s in r), default=-1)
        out = [[list(self.steps[r].get(s, [])) for s in range(last + 1)] for r in range(self.p)]
        for r in range(self.p):  # final step: the caller "reads" its output, so it waits for all writers
            ref = exit_refs[r]
            out[r].append([Action((), (ref,))] if ref is not None and ref.size > 0 else [])
        return out


def register(op: str, algo: str) -> Callable[[Program], Program]:
    """Decorator: make ``fn`` the program of ``op`` with ``algo``."""

    def add(fn: Program) -> Program:
        PROGRAMS[op, algo] = fn
        return fn

    return add


def program(op: str, algo: str, p: int, count: int) -> tuple[Counts, list[list[list[Action]]]]:
    """Counts and per-rank steps of ``op`` with ``algo`` on ``p`` ranks and ``count`` elements (checked by the
    caller, :func:`nvcourse.collectives.plan.build_plan`)."""
    if (op, algo) not in PROGRAMS:
        choice("op", op, sorted({o for o, _ in PROGRAMS}))
        choice(f"algo for {op}", algo, sorted(a for o, a in PROGRAMS if o == op))
    b = Builder(p)
    if p == 1:  # one rank: its output is a copy of its input, whatever the operation
        b.add(0, 0, [Ref("out", 0, 0, count)], [Ref("in", 0, 0, count)])
        return {"in": count, "out": count, "tmp": 0}, b.finish([Ref("out", 0, 0, count)])
    counts, exits = PROGRAMS[op, algo](b, p, count)
    return counts, b.finish(exits)


def _log2(p: int) -> int:
    return p.bit_length() - 1


def tree_children(r: int, p: int) -> list[int]:
    """Children of rank ``r`` in the binary tree of ``p`` ranks rooted at 0 (heap order)."""
    return [c for c in (2 * r + 1, 2 * r + 2) if c < p]


def tree_depth(r: int) -> int:
    """Depth of rank ``r`` in that tree (the root is at depth 0)."""
    return _log2(r + 1)


def _outs(p: int, count: int) -> list[Ref]:
    return [Ref("out", r, 0, count) for r in range(p)]


def _halving(b: Builder, p: int, part_kind: str, first_kind: str, final: Callable | None, bounds: list[int]):
    """Recursive-halving reduce-scatter; returns each rank's list of regions (chunk units) per step."""
    L = _log2(p)
    region = {r: (0, p) for r in range(p)}
    hist: dict[int, list[tuple[int, int]]] = {r: [] for r in range(p)}
    for k in range(L):
        d = p >> (k + 1)
        for r in range(p):
            lo, hi = region[r]
            hist[r].append((lo, hi))
            mid = (lo + hi) // 2
            klo, khi = (lo, mid) if r & d == 0 else (mid, hi)
            partner = r ^ d
            kind = first_kind if k == 0 else part_kind
            e0, e1 = bounds[klo], bounds[khi]
            if k == L - 1 and final is not None:
                dst = final(r, e0, e1)
            else:
                dst = Ref(part_kind, r, e0, e1)
            b.add(r, k, [dst], [Ref(kind, r, e0, e1), Ref(kind, partner, e0, e1)], chunk=klo)
        for r in range(p):
            lo, hi = region[r]
            mid = (lo + hi) // 2
            region[r] = (lo, mid) if r & d == 0 else (mid, hi)
    return hist

# ---------------------------------------------------------------- all-reduce


@register("allreduce", "naive")
def _allreduce_naive(b: Builder, p: int, count: int):
    """Rank 0 sums every input, then copies the sum to every other rank: 2 steps, all traffic through rank 0."""
    out = _outs(p, count)
    b.add(0, 0, [out[0]], [Ref("in", q, 0, count) for q in range(p)])
    b.add(0, 1, out[1:], [out[0]])
    return {"in": count, "out": count, "tmp": 0}, out


@register("allreduce", "ring")
def _allreduce_ring(b: Builder, p: int, count: int):
    """Reduce-scatter then all-gather around the ring: 2(p−1) steps, in step s rank r adds chunk (r−1−s) mod p
    from its left neighbour; then each completed chunk travels once more around the ring."""
    bd = chunk_bounds(count, p)
    for s in range(p - 1):
        for r in range(p):
            c, left = (r - 1 - s) % p, (r - 1) % p
            lo, hi = bd[c], bd[c + 1]
            partial = Ref("in" if s == 0 else "out", left, lo, hi)
            b.add(r, s, [Ref("out", r, lo, hi)], [Ref("in", r, lo, hi), partial], chunk=c)
    for t in range(p - 1):
        for r in range(p):
            c, left = (r - t) % p, (r - 1) % p
            lo, hi = bd[c], bd[c + 1]
            b.add(r, p - 1 + t, [Ref("out", r, lo, hi)], [Ref("out", left, lo, hi)], chunk=c)
    return {"in": count, "out": count, "tmp": 0}, _outs(p, count)


@register("allreduce", "tree")
def _allreduce_tree(b: Builder, p: int, count: int):
    """Reduce up a binary tree to rank 0 (one level per step), then broadcast down it: 2·depth steps."""
    out = _outs(p, count)
    D = tree_depth(p - 1)
    for d in range(D - 1, -1, -1):
        for r in range(p):
            kids = tree_children(r, p)
            if tree_depth(r) != d or not kids:
                continue
            srcs = [Ref("in", r, 0, count)] + [Ref("out" if tree_children(c, p) else "in", c, 0, count) for c in kids]
            b.add(r, D - 1 - d, [out[r]], srcs)
    for d in range(1, D + 1):
        for r in range(1, p):
            if tree_depth(r) == d:
                b.add(r, D + d - 1, [out[r]], [out[(r - 1) // 2]])
    return {"in": count, "out": count, "tmp": 0}, out


@register("allreduce", "rhd")
def _allreduce_rhd(b: Builder, p: int, count: int):
    """Recursive halving (reduce-scatter) then recursive doubling (all-gather): 2·log2(p) steps, p a power of 2."""
    bd = chunk_bounds(count, p)
    hist = _halving(b, p, "out", "in", None, bd)
    L = _log2(p)
    for k in range(L - 1, -1, -1):
        d = p >> (k + 1)
        for r in range(p):
            lo, hi = hist[r][k]
            mid = (lo + hi) // 2
            olo, ohi = (mid, hi) if r & d == 0 else (lo, mid)
            e0, e1 = bd[olo], bd[ohi]
            b.add(r, L + (L - 1 - k), [Ref("out", r, e0, e1)], [Ref("out", r ^ d, e0, e1)], chunk=olo)
    return {"in": count, "out": count, "tmp": 0}, _outs(p, count)


@register("allreduce", "direct")
def _allreduce_direct(b: Builder, p: int, count: int):
    """One step: rank r sums chunk r of every input and writes it into every rank's output."""
    bd = chunk_bounds(count, p)
    for r in range(p):
        lo, hi = bd[r], bd[r + 1]
        dsts = [Ref("out", r, lo, hi)] + [Ref("out", q, lo, hi) for q in range(p) if q != r]
        srcs = [Ref("in", r, lo, hi)] + [Ref("in", q, lo, hi) for q in range(p) if q != r]
        b.add(r, 0, dsts, srcs, chunk=r)
    return {"in": count, "out": count, "tmp": 0}, _outs(p, count)


# ---------------------------------------------------------------- reduce-scatter


def _rs_counts(p: int, count: int, tmp: bool) -> Counts:
    return {"in": count, "out": count // p, "tmp": count if tmp else 0}


@register("reducescatter", "naive")
def _reducescatter_naive(b: Builder, p: int, count: int):
    """Rank 0 sums every input into its scratch, then copies chunk q to rank q: 2 steps."""
    m = count // p
    outs = [Ref("out", r, 0, m) for r in range(p)]
    b.add(0, 0, [Ref("tmp", 0, 0, count)], [Ref("in", q, 0, count) for q in range(p)])
    for q in range(p):
        b.add(0, 1, [outs[q]], [Ref("tmp", 0, q * m, (q + 1) * m)], chunk=q)
    return _rs_counts(p, count, True), outs


@register("reducescatter", "ring")
def _reducescatter_ring(b: Builder, p: int, count: int):
    """p−1 steps around the ring; rank r ends with chunk r of the sum."""
    m = count // p
    outs = [Ref("out", r, 0, m) for r in range(p)]
    for s in range(p - 1):
        for r in range(p):
            c, left = (r - s - 2) % p, (r - 1) % p
            lo, hi = c * m, (c + 1) * m
            partial = Ref("in" if s == 0 else "tmp", left, lo, hi)
            dst = outs[r] if s == p - 2 else Ref("tmp", r, lo, hi)
            b.add(r, s, [dst], [Ref("in", r, lo, hi), partial], chunk=c)
    return _rs_counts(p, count, True), outs


@register("reducescatter", "rhd")
def _reducescatter_rhd(b: Builder, p: int, count: int):
    """Recursive halving: log2(p) steps, p a power of 2."""
    m = count // p
    outs = [Ref("out", r, 0, m) for r in range(p)]
    _halving(b, p, "tmp", "in", lambda r, e0, e1: outs[r], [i * m for i in range(p + 1)])
    return _rs_counts(p, count, True), outs


@register("reducescatter", "direct")
def _reducescatter_direct(b: Builder, p: int, count: int):
    """One step: rank r sums chunk r of every input into its output."""
    m = count // p
    outs = [Ref("out", r, 0, m) for r in range(p)]
    for r in range(p):
        b.add(r, 0, [outs[r]], [Ref("in", r, r * m, (r + 1) * m)] +
              [Ref("in", q, r * m, (r + 1) * m) for q in range(p) if q != r], chunk=r)
    return _rs_counts(p, count, False), outs


# ---------------------------------------------------------------- all-gather


def _ag(p: int, count: int) -> tuple[int, list[Ref], Counts]:
    m = count // p
    return m, [Ref("in", r, 0, m) for r in range(p)], {"in": m, "out": count, "tmp": 0}


@register("allgather", "naive")
def _allgather_naive(b: Builder, p: int, count: int):
    """Rank 0 gathers every input, then copies the whole buffer to every other rank: 2 steps."""
    m, ins, counts = _ag(p, count)
    out = _outs(p, count)
    for q in range(p):
        b.add(0, 0, [Ref("out", 0, q * m, (q + 1) * m)], [ins[q]], chunk=q)
    b.add(0, 1, out[1:], [out[0]])
    return counts, out


@register("allgather", "ring")
def _allgather_ring(b: Builder, p: int, count: int):
    """p−1 steps: each rank passes on the chunk it received last from its left neighbour."""
    m, ins, counts = _ag(p, count)
    for r in range(p):
        b.add(r, 0, [Ref("out", r, r * m, (r + 1) * m)], [ins[r]], chunk=r)
    for t in range(p - 1):
        for r in range(p):
            c, left = (r - 1 - t) % p, (r - 1) % p
            src = ins[left] if t == 0 else Ref("out", left, c * m, (c + 1) * m)
            b.add(r, t, [Ref("out", r, c * m, (c + 1) * m)], [src], chunk=c)
    return counts, _outs(p, count)


@register("allgather", "rhd")
def _allgather_rhd(b: Builder, p: int, count: int):
    """Recursive doubling: in step k rank r fetches its partner's 2^k chunks: log2(p) steps, p a power of 2."""
    m, ins, counts = _ag(p, count)
    for r in range(p):
        b.add(r, 0, [Ref("out", r, r * m, (r + 1) * m)], [ins[r]], chunk=r)
    for k in range(_log2(p)):
        for r in range(p):
            partner = r ^ (1 << k)
            c0 = (partner >> k) << k
            src = ins[partner] if k == 0 else Ref("out", partner, c0 * m, (c0 + (1 << k)) * m)
            b.add(r, k, [Ref("out", r, c0 * m, (c0 + (1 << k)) * m)], [src], chunk=c0)
    return counts, _outs(p, count)


@register("allgather", "direct")
def _allgather_direct(b: Builder, p: int, count: int):
    """One step: every rank reads every rank's input (its own first)."""
    m, ins, counts = _ag(p, count)
    for r in range(p):
        for q in [r] + [q for q in range(p) if q != r]:
            b.add(r, 0, [Ref("out", r, q * m, (q + 1) * m)], [ins[q]], chunk=q)
    return counts, _outs(p, count)


# ---------------------------------------------------------------- broadcast (root 0)


@register("broadcast", "naive")
def _broadcast_naive(b: Builder, p: int, count: int):
    """Rank 0 writes its input into every rank's output: 1 step, all traffic from the root."""
    out = _outs(p, count)
    b.add(0, 0, out, [Ref("in", 0, 0, count)])
    return {"in": count, "out": count, "tmp": 0}, out


@register("broadcast", "ring")
def _broadcast_ring(b: Builder, p: int, count: int):
    """Pipelined chain 0 → 1 → … → p−1 in BCAST_PIPELINE_CHUNKS chunks: chunk c reaches rank r at step c+r−1."""
    out = _outs(p, count)
    M = max(1, min(BCAST_PIPELINE_CHUNKS, count))
    bd = chunk_bounds(count, M)
    b.add(0, 0, [out[0]], [Ref("in", 0, 0, count)])
    for r in range(1, p):
        for c in range(M):
            lo, hi = bd[c], bd[c + 1]
            src = Ref("in", 0, lo, hi) if r == 1 else Ref("out", r - 1, lo, hi)
            b.add(r, c + r - 1, [Ref("out", r, lo, hi)], [src], chunk=c)
    return {"in": count, "out": count, "tmp": 0}, out


@register("broadcast", "tree")
def _broadcast_tree(b: Builder, p: int, count: int):
    """Down a binary tree: rank r copies from its parent at step depth(r)−1."""
    out = _outs(p, count)
    root_in = Ref("in", 0, 0, count)
    b.add(0, 0, [out[0]], [root_in])
    for r in range(1, p):
        parent = (r - 1) // 2
        b.add(r, tree_depth(r) - 1, [out[r]], [root_in if parent == 0 else out[parent]])
    return {"in": count, "out": count, "tmp": 0}, out


@register("broadcast", "direct")
def _broadcast_direct(b: Builder, p: int, count: int):
    """One step: every rank reads the root's input."""
    out = _outs(p, count)
    for r in range(p):
        b.add(r, 0, [out[r]], [Ref("in", 0, 0, count)])
    return {"in": count, "out": count, "tmp": 0}, out
