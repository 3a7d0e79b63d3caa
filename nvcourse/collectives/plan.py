"""Collective algorithms written as per-rank *step programs* over shared-memory buffers.

Every rank owns three kinds of buffer, all in shared memory and visible to every other rank:

* ``in``  — the rank's input (never written by an algorithm);
* ``out`` — the rank's output;
* ``tmp`` — scratch for partial sums (only the algorithms that need it).

An algorithm is a list of global steps. In step ``s`` each rank performs a few :class:`Action` s; an
action reads regions of any rank's buffers (``srcs``) and writes regions (``dsts``): ``dsts[0]`` gets
the element-wise sum of ``srcs`` (a plain copy when there is one source) and ``dsts[1:]`` get copies
of it. Reading a peer's buffer is a "receive", writing a peer's buffer a "send": one copy, like
NVLink load/store or XPMEM.

Synchronisation is *derived*, not hand written: :func:`build_plan` looks at every pair of accesses
to overlapping regions by different ranks where at least one is a write, and makes the later step
wait until the earlier rank has finished the earlier step (read-after-write and write-after-read).
Two different ranks touching the same region in the same step with a write is a planning error.
At run time each rank publishes "steps done" in a shared counter and spin-waits on the counters of
the ranks it depends on — nothing else.

Sizes in this module are in **elements**, not bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = [
    "OPERATIONS",
    "ALGORITHMS",
    "SUPPORTED",
    "DTYPES",
    "Ref",
    "Action",
    "Plan",
    "busbw_factor",
    "normalize_count",
    "build_plan",
    "check_args",
]

#: Collective operations (nccl-tests names, without underscores).
OPERATIONS: tuple[str, ...] = ("allreduce", "reducescatter", "allgather", "broadcast")
#: All algorithm names; see :data:`SUPPORTED` for which operation has which.
ALGORITHMS: tuple[str, ...] = ("naive", "ring", "tree", "rhd", "direct")
#: Algorithms available for each operation.
SUPPORTED: dict[str, tuple[str, ...]] = {
    "allreduce": ("naive", "ring", "tree", "rhd", "direct"),
    "reducescatter": ("naive", "ring", "rhd", "direct"),
    "allgather": ("naive", "ring", "rhd", "direct"),
    "broadcast": ("naive", "ring", "tree", "direct"),
}
#: Algorithms that need the number of processes to be a power of two.
POW2_ONLY: frozenset[str] = frozenset({"rhd"})
#: Element types (the reduction is a sum).
DTYPES: tuple[str, ...] = ("float32", "float64", "float16", "int32", "int64")
#: Largest group size we accept (shared-memory programs are planned in O(steps^2)).
MAX_PROCS = 64

#: Number of chunks of the pipelined ring (chain) broadcast.
BCAST_PIPELINE_CHUNKS = 8
#: Chunk boundaries are rounded to this many elements (64 B for float32) to avoid false sharing.
_ALIGN = 16


def busbw_factor(op: str, nprocs: int) -> float:
    """nccl-tests' bus-bandwidth factor: busbw = algbw × factor.

    One definition serves the whole course: this delegates to :func:`nvcourse.costmodel.busbw_factor`
    (see its docstring for why busbw can exceed the link rate), after checking ``op`` is one of ours.
    """
    if op not in OPERATIONS:
        raise ValueError(f"op must be one of {', '.join(OPERATIONS)}; got {op!r}")
    from ..costmodel.model import busbw_factor as nccl_tests_factor

    return nccl_tests_factor(op, nprocs)


def check_args(op: str, algo: str, nprocs: int, dtype: str = "float32") -> None:
    """Raise :class:`ValueError` naming the parameter and the allowed values for bad input."""
    if op not in OPERATIONS:
        raise ValueError(f"op must be one of {', '.join(OPERATIONS)}; got {op!r}")
    if isinstance(nprocs, bool) or not isinstance(nprocs, int) or not 1 <= nprocs <= MAX_PROCS:
        raise ValueError(f"procs must be an integer from 1 to {MAX_PROCS}; got {nprocs!r}")
    if algo not in SUPPORTED[op]:
        raise ValueError(f"algo for {op} must be one of {', '.join(SUPPORTED[op])} (or 'auto'); got {algo!r}")
    if algo in POW2_ONLY and nprocs & (nprocs - 1):
        others = ", ".join(a for a in SUPPORTED[op] if a not in POW2_ONLY)
        raise ValueError(
            f"algo {algo!r} needs procs to be a power of two (1, 2, 4, 8, ...); got procs={nprocs}; "
            f"use one of {others}"
        )
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}; got {dtype!r}")


def normalize_count(op: str, nprocs: int, nbytes: int, itemsize: int) -> int:
    """Elements in the message of ``nbytes`` bytes (nccl-tests' size ``S``), rounded down like nccl-tests.

    For reducescatter and allgather the count is a multiple of ``nprocs`` (at least one element per
    rank); otherwise at least one element.
    """
    count = nbytes // itemsize
    if op in ("reducescatter", "allgather"):
        return max(1, count // nprocs) * nprocs
    return max(1, count)


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


@dataclass
class Plan:
    """Per-rank programs plus the derived waits.

    ``steps[r][s]`` lists rank ``r``'s actions in step ``s``; ``deps[r][s]`` lists ``(q, k)``: before
    step ``s`` rank ``r`` waits until rank ``q`` has completed ``k`` steps of this call.
    ``counts`` gives each buffer kind's length in elements (0: not needed).
    """

    op: str
    algo: str
    nprocs: int
    count: int
    counts: dict[str, int]
    steps: list[list[list[Action]]]
    deps: list[list[list[tuple[int, int]]]] = field(default_factory=list)

    @property
    def nsteps(self) -> int:
        return len(self.steps[0])


def chunk_bounds(count: int, parts: int, align: int = _ALIGN) -> list[int]:
    """Boundaries of ``parts`` nearly equal chunks of ``count`` elements (aligned when large enough)."""
    if count >= align * parts * 4:
        inner = [(count * i // parts) // align * align for i in range(1, parts)]
    else:
        inner = [count * i // parts for i in range(1, parts)]
    return [0, *inner, count]


class _Builder:
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


def _log2(p: int) -> int:
    return p.bit_length() - 1


def _tree_children(r: int, p: int) -> list[int]:
    return [c for c in (2 * r + 1, 2 * r + 2) if c < p]


def _depth(r: int) -> int:
    return _log2(r + 1)


def _halving(b: _Builder, p: int, part_kind: str, first_kind: str, final: "callable | None", bounds: list[int]):
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


def _programs(op: str, algo: str, p: int, count: int) -> tuple[dict[str, int], list[list[list[Action]]]]:
    b = _Builder(p)
    full_out = [Ref("out", r, 0, count) for r in range(p)]
    if op == "allreduce":
        counts = {"in": count, "out": count, "tmp": 0}
        if p == 1:
            b.add(0, 0, [full_out[0]], [Ref("in", 0, 0, count)])
        elif algo == "ring":
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
        elif algo == "direct":
            bd = chunk_bounds(count, p)
            for r in range(p):
                lo, hi = bd[r], bd[r + 1]
                dsts = [Ref("out", r, lo, hi)] + [Ref("out", q, lo, hi) for q in range(p) if q != r]
                srcs = [Ref("in", r, lo, hi)] + [Ref("in", q, lo, hi) for q in range(p) if q != r]
                b.add(r, 0, dsts, srcs, chunk=r)
        elif algo == "naive":
            b.add(0, 0, [full_out[0]], [Ref("in", q, 0, count) for q in range(p)])
            b.add(0, 1, full_out[1:], [full_out[0]])
        elif algo == "tree":
            D = _depth(p - 1)
            for d in range(D - 1, -1, -1):
                for r in range(p):
                    kids = _tree_children(r, p)
                    if _depth(r) != d or not kids:
                        continue
                    srcs = [Ref("in", r, 0, count)] + [
                        Ref("out" if _tree_children(c, p) else "in", c, 0, count) for c in kids
                    ]
                    b.add(r, D - 1 - d, [full_out[r]], srcs)
            for d in range(1, D + 1):
                for r in range(1, p):
                    if _depth(r) == d:
                        b.add(r, D + d - 1, [full_out[r]], [full_out[(r - 1) // 2]])
        elif algo == "rhd":
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
        return counts, b.finish(full_out)

    if op == "reducescatter":
        m = count // p
        counts = {"in": count, "out": m, "tmp": count if algo in ("ring", "rhd", "naive") and p > 1 else 0}
        outs = [Ref("out", r, 0, m) for r in range(p)]
        if p == 1:
            b.add(0, 0, [outs[0]], [Ref("in", 0, 0, count)])
        elif algo == "direct":
            for r in range(p):
                b.add(r, 0, [outs[r]], [Ref("in", r, r * m, (r + 1) * m)] +
                      [Ref("in", q, r * m, (r + 1) * m) for q in range(p) if q != r], chunk=r)
        elif algo == "ring":
            for s in range(p - 1):
                for r in range(p):
                    c, left = (r - s - 2) % p, (r - 1) % p
                    lo, hi = c * m, (c + 1) * m
                    partial = Ref("in" if s == 0 else "tmp", left, lo, hi)
                    dst = outs[r] if s == p - 2 else Ref("tmp", r, lo, hi)
                    b.add(r, s, [dst], [Ref("in", r, lo, hi), partial], chunk=c)
        elif algo == "rhd":
            _halving(b, p, "tmp", "in", lambda r, e0, e1: outs[r], [i * m for i in range(p + 1)])
        elif algo == "naive":
            b.add(0, 0, [Ref("tmp", 0, 0, count)], [Ref("in", q, 0, count) for q in range(p)])
            for q in range(p):
                b.add(0, 1, [outs[q]], [Ref("tmp", 0, q * m, (q + 1) * m)], chunk=q)
        return counts, b.finish(outs)

    if op == "allgather":
        m = count // p
        counts = {"in": m, "out": count, "tmp": 0}
        ins = [Ref("in", r, 0, m) for r in range(p)]
        if p == 1:
            b.add(0, 0, [full_out[0]], [ins[0]])
        elif algo == "direct":
            for r in range(p):
                for q in [r] + [q for q in range(p) if q != r]:
                    b.add(r, 0, [Ref("out", r, q * m, (q + 1) * m)], [ins[q]], chunk=q)
        elif algo == "ring":
            for r in range(p):
                b.add(r, 0, [Ref("out", r, r * m, (r + 1) * m)], [ins[r]], chunk=r)
            for t in range(p - 1):
                for r in range(p):
                    c, left = (r - 1 - t) % p, (r - 1) % p
                    src = ins[left] if t == 0 else Ref("out", left, c * m, (c + 1) * m)
                    b.add(r, t, [Ref("out", r, c * m, (c + 1) * m)], [src], chunk=c)
        elif algo == "rhd":
            for r in range(p):
                b.add(r, 0, [Ref("out", r, r * m, (r + 1) * m)], [ins[r]], chunk=r)
            for k in range(_log2(p)):
                for r in range(p):
                    partner = r ^ (1 << k)
                    c0 = (partner >> k) << k
                    if k == 0:
                        src = ins[partner]
                    else:
                        src = Ref("out", partner, c0 * m, (c0 + (1 << k)) * m)
                    b.add(r, k, [Ref("out", r, c0 * m, (c0 + (1 << k)) * m)], [src], chunk=c0)
        elif algo == "naive":
            for q in range(p):
                b.add(0, 0, [Ref("out", 0, q * m, (q + 1) * m)], [ins[q]], chunk=q)
            b.add(0, 1, full_out[1:], [full_out[0]])
        return counts, b.finish(full_out)

    if op == "broadcast":
        counts = {"in": count, "out": count, "tmp": 0}
        root_in = Ref("in", 0, 0, count)
        if p == 1:
            b.add(0, 0, [full_out[0]], [root_in])
        elif algo == "naive":
            b.add(0, 0, full_out, [root_in])
        elif algo == "direct":
            for r in range(p):
                b.add(r, 0, [full_out[r]], [root_in])
        elif algo == "tree":
            b.add(0, 0, [full_out[0]], [root_in])
            for r in range(1, p):
                parent = (r - 1) // 2
                src = root_in if parent == 0 else full_out[parent]
                b.add(r, _depth(r) - 1, [full_out[r]], [src])
        elif algo == "ring":
            M = max(1, min(BCAST_PIPELINE_CHUNKS, count))
            bd = chunk_bounds(count, M)
            b.add(0, 0, [full_out[0]], [root_in])
            for r in range(1, p):
                for c in range(M):
                    lo, hi = bd[c], bd[c + 1]
                    src = Ref("in", 0, lo, hi) if r == 1 else Ref("out", r - 1, lo, hi)
                    b.add(r, c + r - 1, [Ref("out", r, lo, hi)], [src], chunk=c)
        return counts, b.finish(full_out)
    raise ValueError(f"op must be one of {', '.join(OPERATIONS)}; got {op!r}")


def pingpong_plan(nprocs: int, count: int) -> Plan:
    """Rank 0 writes ``count`` elements into rank 1's ``out``; rank 1 then copies them back into rank 0's."""
    if nprocs < 2:
        raise ValueError(f"procs must be at least 2 for a ping-pong; got {nprocs}")
    b = _Builder(nprocs)
    b.add(0, 0, [Ref("out", 1, 0, count)], [Ref("in", 0, 0, count)], chunk=0)
    b.add(1, 1, [Ref("out", 0, 0, count)], [Ref("out", 1, 0, count)], chunk=0)  # echo what arrived
    exits: list[Ref | None] = [Ref("out", 0, 0, count)] + [None] * (nprocs - 1)
    plan = Plan("pingpong", "pingpong", nprocs, count, {"in": count, "out": count, "tmp": 0}, b.finish(exits))
    plan.deps = derive_deps(plan.steps, nprocs)
    return plan


def derive_deps(steps: list[list[list[Action]]], p: int) -> list[list[list[tuple[int, int]]]]:
    """Waits implied by conflicting accesses of different ranks (see module docstring)."""
    per_buf: dict[tuple[str, int], list[tuple[int, int, int, int, bool]]] = {}
    for r in range(p):
        for s, actions in enumerate(steps[r]):
            for a in actions:
                for ref in a.dsts:
                    per_buf.setdefault((ref.kind, ref.owner), []).append((s, r, ref.lo, ref.hi, True))
                for ref in a.srcs:
                    per_buf.setdefault((ref.kind, ref.owner), []).append((s, r, ref.lo, ref.hi, False))
    need: list[list[dict[int, int]]] = [[{} for _ in steps[r]] for r in range(p)]
    for key, accs in per_buf.items():
        for i, (s, r, lo, hi, w) in enumerate(accs):
            for s2, r2, lo2, hi2, w2 in accs:
                if r2 == r or s2 > s or not (w or w2) or hi2 <= lo or hi <= lo2:
                    continue
                if s2 == s:
                    raise AssertionError(f"ranks {r} and {r2} conflict on {key} [{lo},{hi}) in step {s}")
                d = need[r][s]
                d[r2] = max(d.get(r2, 0), s2 + 1)
    return [[sorted(d.items()) for d in need[r]] for r in range(p)]


def build_plan(op: str, algo: str, nprocs: int, count: int) -> Plan:
    """Programs and waits for ``op`` with ``algo`` on ``nprocs`` ranks and ``count`` elements (see :func:`normalize_count`)."""
    check_args(op, algo, nprocs)
    if count < 1:
        raise ValueError(f"count must be >= 1; got {count}")
    if op in ("reducescatter", "allgather") and count % nprocs:
        raise ValueError(f"count for {op} must be a multiple of procs={nprocs}; got {count}")
    counts, steps = _programs(op, algo, nprocs, count)
    plan = Plan(op, algo, nprocs, count, counts, steps)
    plan.deps = derive_deps(steps, nprocs)
    return plan


def simulate(plan: Plan, inputs: list, *, order: str = "forward", fill: float | None = None,
             on_step: Callable[[int, dict[int, list[int]], dict[str, list]], None] | None = None) -> dict[str, list]:
    """Run a plan in one process with numpy arrays: returns the buffers.

    Steps execute in step order; within a step, ranks run in ``order`` ("forward" or "reverse") so that
    tests can check that the result does not depend on the interleaving the plan allows. ``out`` and
    ``tmp`` start filled with ``fill`` (default: the markers -99 and -77, so that a test sees an element
    nobody wrote). ``on_step(s, wrote, bufs)`` is called after every step that wrote something, with
    ``wrote`` = rank → the chunks it wrote in step ``s``.
    """
    import numpy as np

    p = plan.nprocs
    dtype = inputs[0].dtype
    bufs = {
        "in": [np.array(x, copy=True) for x in inputs],
        "out": [np.full(plan.counts["out"], -99 if fill is None else fill, dtype=dtype) for _ in range(p)],
        "tmp": [np.full(plan.counts["tmp"], -77 if fill is None else fill, dtype=dtype) for _ in range(p)],
    }

    def view(ref: Ref):
        return bufs[ref.kind][ref.owner][ref.lo:ref.hi]

    ranks = list(range(p)) if order == "forward" else list(range(p - 1, -1, -1))
    for s in range(plan.nsteps):
        wrote: dict[int, list[int]] = {}
        for r in ranks:
            for a in plan.steps[r][s]:
                if not a.dsts:
                    continue
                acc = view(a.srcs[0]).copy()
                for src in a.srcs[1:]:
                    acc = acc + view(src)
                for d in a.dsts:
                    view(d)[...] = acc
                wrote.setdefault(r, []).append(a.chunk)
        if on_step is not None and wrote:
            on_step(s, dict(sorted(wrote.items())), bufs)
    return bufs


def remote_bytes(rank: int, actions: list[Action], itemsize: int) -> int:
    """Bytes this rank moves to or from other ranks' buffers in one step (what a link would carry)."""
    total = 0
    for a in actions:
        if not a.dsts:
            continue
        for ref in a.dsts + a.srcs:
            if ref.owner != rank:
                total += ref.size * itemsize
    return total


def peer_of(rank: int, action: Action) -> int:
    """The single peer an action talks to; -1 when purely local, -2 when several peers."""
    peers = {ref.owner for ref in action.dsts + action.srcs if ref.owner != rank}
    if not peers:
        return -1
    return peers.pop() if len(peers) == 1 else -2


def nsteps_with_transfers(plan: Plan) -> int:
    """Number of steps in which at least one rank touches a peer's buffer (the α count of the plan)."""
    return sum(
        1
        for s in range(plan.nsteps)
        if any(remote_bytes(r, plan.steps[r][s], 1) for r in range(plan.nprocs))
    )


def is_power_of_two(n: int) -> bool:
    return n >= 1 and not n & (n - 1)


