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

import numpy as np

from .._validate import choice
from ..costmodel.model import busbw_factor as nccl_tests_factor
from .programs import BCAST_PIPELINE_CHUNKS, PROGRAMS, Action, Builder, Ref, chunk_bounds, program

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
    "chunk_bounds",
    "BCAST_PIPELINE_CHUNKS",
]

#: Collective operations (nccl-tests names, without underscores).
OPERATIONS: tuple[str, ...] = ("allreduce", "reducescatter", "allgather", "broadcast")
#: Algorithms available for each operation, in teaching order: the registry of step programs, so the table
#: cannot drift from the code (:data:`nvcourse.collectives.programs.PROGRAMS`).
SUPPORTED: dict[str, tuple[str, ...]] = {op: tuple(a for o, a in PROGRAMS if o == op) for op in OPERATIONS}
#: Every algorithm name of the shared-memory group (the costmodel's NCCL algorithms are a different set).
ALGORITHMS: tuple[str, ...] = tuple(dict.fromkeys(a for _, a in PROGRAMS))
#: Algorithms that need the number of processes to be a power of two.
POW2_ONLY: frozenset[str] = frozenset({"rhd"})
#: Element types (the reduction is a sum).
DTYPES: tuple[str, ...] = ("float32", "float64", "float16", "int32", "int64")
#: Largest group size we accept (shared-memory programs are planned in O(steps^2)).
MAX_PROCS = 64



def busbw_factor(op: str, nprocs: int) -> float:
    """nccl-tests' bus-bandwidth factor: busbw = algbw × factor.

    One definition serves the whole course: this delegates to :func:`nvcourse.costmodel.busbw_factor`
    (see its docstring for why busbw can exceed the link rate), after checking ``op`` is one of ours.
    """
    choice("op", op, OPERATIONS)
    return nccl_tests_factor(op, nprocs)


def check_args(op: str, algo: str, nprocs: int, dtype: str = "float32") -> None:
    """Raise :class:`ValueError` naming the parameter and the allowed values for bad input."""
    choice("op", op, OPERATIONS)
    if isinstance(nprocs, bool) or not isinstance(nprocs, int) or not 1 <= nprocs <= MAX_PROCS:
        raise ValueError(f"procs must be an integer from 1 to {MAX_PROCS}; got {nprocs!r}")
    choice(f"algo for {op}", algo, SUPPORTED[op])
    if algo in POW2_ONLY and nprocs & (nprocs - 1):
        others = ", ".join(a for a in SUPPORTED[op] if a not in POW2_ONLY)
        raise ValueError(
            f"algo {algo!r} needs procs to be a power of two (1, 2, 4, 8, ...); got procs={nprocs}; "
            f"use one of {others}"
        )
    choice("dtype", dtype, DTYPES)


def normalize_count(op: str, nprocs: int, nbytes: int, itemsize: int) -> int:
    """Elements in the message of ``nbytes`` bytes (nccl-tests' size ``S``), rounded down like nccl-tests.

    For reducescatter and allgather the count is a multiple of ``nprocs`` (at least one element per
    rank); otherwise at least one element.
    """
    count = nbytes // itemsize
    if op in ("reducescatter", "allgather"):
        return max(1, count // nprocs) * nprocs
    return max(1, count)


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


def pingpong_plan(nprocs: int, count: int) -> Plan:
    """Rank 0 writes ``count`` elements into rank 1's ``out``; rank 1 then copies them back into rank 0's."""
    if nprocs < 2:
        raise ValueError(f"procs must be at least 2 for a ping-pong; got {nprocs}")
    b = Builder(nprocs)
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
        for s, r, lo, hi, w in accs:
            for s2, r2, lo2, hi2, w2 in accs:
                if r2 == r or s2 > s or not (w or w2) or hi2 <= lo or hi <= lo2:
                    continue
                if s2 == s:
                    raise AssertionError(f"ranks {r} and {r2} conflict on {key} [{lo},{hi}) in step {s}")
                d = need[r][s]
                d[r2] = max(d.get(r2, 0), s2 + 1)
    return [[sorted(d.items()) for d in need[r]] for r in range(p)]


def build_plan(op: str, algo: str, nprocs: int, count: int) -> Plan:
    """Programs and waits for ``op`` with ``algo`` on ``nprocs`` ranks and ``count`` elements
    (see :func:`normalize_count`)."""
    check_args(op, algo, nprocs)
    if count < 1:
        raise ValueError(f"count must be >= 1; got {count}")
    if op in ("reducescatter", "allgather") and count % nprocs:
        raise ValueError(f"count for {op} must be a multiple of procs={nprocs}; got {count}")
    counts, steps = program(op, algo, nprocs, count)
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


def is_power_of_two(n: int) -> bool:
    return n >= 1 and not n & (n - 1)


