"""Machine model of the shared-memory collectives: the plan's own steps, priced with measured primitives.

The closed-form alpha-beta formulas of :mod:`nvcourse.collectives.model` price a step as ``α + m/β``
with one β for every size. On one host that misses what decides the time of a large collective:

* **where the data lives** — copies and adds run at cache speed while every buffer the call touches
  (all ranks together: its *footprint*) fits in the caches, at DRAM speed beyond;
* **how many ranks stream at once** — ranks share one memory system, so the per-rank rate with k
  concurrent streams is lower than with one; with more ranks than cores (N > C) only C run at a
  time and the others wait their turn (time sharing).

The machine model keeps the algorithm exact and measures only *primitive* operations:

1. :func:`plan_work` reads the step program of :mod:`nvcourse.collectives.plan` and lists, for each
   rank and step, the numpy kernels the worker will run (``copy`` of m bytes, ``add`` writing m
   bytes), exactly as :mod:`nvcourse.collectives._worker` executes an action: ``dsts[0] = srcs[0] +
   srcs[1]``, then one in-place add per further source, then one copy per further destination,
   walked in pieces of ``PIECE_BYTES``.
2. :func:`nvcourse.collectives.probes.measure_machine` measures, in k = 1..C processes running at the same time, the
per-process
   rate of ``np.copyto`` and ``np.add`` (bytes written per second) for several footprints, α,
   the cost of one synchronised step, from a ping-pong of a tiny message, and the rate of copying
   data another process has just written, from a ping-pong of 256 KiB and 1 MiB (those cache lines
   come from the other core's cache, often slower than a local copy). With more ranks than cores
   (N > C) a rank often waits for a peer that is not running and the hand-off goes through the
   scheduler: α is then measured for N >= 3 ranks from a ring of N workers passing one element each
   (an all-gather of 4 bytes per rank, whose critical path the model prices at N − 1 α),
   :func:`~nvcourse.collectives.probes.measure_shared_alpha`.
3. :func:`predict_plan` walks the plan's dependencies (the same waits the workers spin on): a rank
   starts step s when it has finished step s-1 and, α later, every rank it waits for has finished
   the step it needs (α: the time to notice a peer's counter; ranks also leave the barrier that
   opens each call α apart); a step costs ``Σ copy bytes / β(F, k) + Σ add bytes / γ(F, k)`` plus
   numpy's per-call overhead, where F is the call's footprint and k the number of ranks with work in
   that step (capped at C, and the rate divided by k/C when k > C). The call's time is the slowest
   rank's, from its own start — what :class:`ProcessGroup` reports.

Nothing is fitted to collective timings: the same :class:`MachineParams` price every algorithm.
Units: bytes, seconds, bytes per second.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field, replace

import numpy as np

from . import plan as _plan

__all__ = [
    "MachineParams",
    "StepWork",
    "step_seconds",
    "plan_work",
    "footprint_bytes",
    "predict_plan",
    "predict_machine",
    "DEFAULT_FOOTPRINTS",
    "PIECE_BYTES",
]

#: The worker walks every action in pieces of this many bytes (see ``_worker.PIECE_BYTES``).
PIECE_BYTES = 256 * 1024
#: Footprints (bytes, all processes together) at which the primitives are measured: 64 KiB .. 256 MiB.
DEFAULT_FOOTPRINTS: tuple[int, ...] = tuple(64 * 2**10 * 4**k for k in range(7))


@dataclass(frozen=True)
class StepWork:
    """Memory streams one rank runs in one step.

    ``copy_bytes``: bytes *written* by pure copies (one source); ``add_bytes``: bytes written by
    reductions (the first add of each action); ``extra_streams_bytes``: bytes of the further sources
    and destinations of reducing actions, which stream past the piece of ``dsts[0]`` that stays in
    cache (see :func:`plan_work`); ``calls``: numpy calls.
    """

    copy_bytes: int = 0
    add_bytes: int = 0
    calls: int = 0
    extra_streams_bytes: int = 0
    remote_dirty_bytes: int = 0

    @property
    def empty(self) -> bool:
        return self.copy_bytes == 0 and self.add_bytes == 0 and self.extra_streams_bytes == 0


def plan_work(plan: _plan.Plan, itemsize: int, piece_bytes: int = PIECE_BYTES) -> list[list[StepWork]]:
    """``work[r][s]``: what rank r computes in step s of ``plan`` (elements of ``itemsize`` bytes).

    The worker runs an action with k sources and d destinations of m elements piece by piece
    (``piece_bytes``, a piece stays in L2). With k = 1 it is d copies: ``copy_bytes += d·m``.
    With k >= 2 the first add ``dsts[0] = srcs[0] + srcs[1]`` is one add (``add_bytes += m``: two
    streams in, one out); the further k-2 in-place adds and d-1 copies re-read the cached piece of
    ``dsts[0]`` and each streams only one more array: ``extra_streams_bytes += (k-2 + d-1)·m``,
    priced like one stream of an add (a third of an add). Calls: each kernel once per piece.
    Actions without destinations (the final "read my output" step) compute nothing.
    """
    piece = max(1, piece_bytes // itemsize)
    dirty = remote_dirty_bytes(plan, itemsize)
    out = []
    for r_, steps in enumerate(plan.steps):
        row = []
        for s_, actions in enumerate(steps):
            cb = ab = xb = calls = 0
            for a in actions:
                if not a.dsts:
                    continue
                m = a.dsts[0].size * itemsize
                pieces = -(-a.dsts[0].size // piece)
                k, d = len(a.srcs), len(a.dsts)
                if k == 1:
                    cb += d * m
                    calls += d * pieces
                else:
                    ab += m
                    xb += (k - 2 + d - 1) * m
                    calls += (k - 1 + d - 1) * pieces
            row.append(StepWork(cb, ab, calls, xb, dirty[r_][s_]))
        out.append(row)
    return out


def remote_dirty_bytes(plan: _plan.Plan, itemsize: int) -> list[list[int]]:
    """``[r][s]``: bytes rank r reads in step s that another rank wrote last (steady state: calls run back to
    back, so the previous call's writes count). Inputs are never written during a call: never dirty."""
    p = plan.nprocs
    segs: dict[tuple[str, int], list[tuple[int, int, int]]] = {}  # (kind, owner) -> [(lo, hi, writer)]

    def write(ref, r):
        old = segs.get((ref.kind, ref.owner), [])
        new = []
        for lo, hi, w in old:
            if hi <= ref.lo or lo >= ref.hi:
                new.append((lo, hi, w))
                continue
            if lo < ref.lo:
                new.append((lo, ref.lo, w))
            if hi > ref.hi:
                new.append((ref.hi, hi, w))
        new.append((ref.lo, ref.hi, r))
        segs[(ref.kind, ref.owner)] = new

    def foreign(ref, r) -> int:
        return sum(max(0, min(hi, ref.hi) - max(lo, ref.lo))
                   for lo, hi, w in segs.get((ref.kind, ref.owner), []) if w != r)

    out = [[0] * plan.nsteps for _ in range(p)]
    for rnd in range(2):  # round 0 only leaves the state of a previous call behind
        for s in range(plan.nsteps):
            # every rank reads before anyone writes in the same step (the plan's waits guarantee no overlap)
            reads = [sum(foreign(x, r) for a in plan.steps[r][s] if a.dsts for x in a.srcs if x.kind != "in")
                     for r in range(p)]
            for r in range(p):
                for a in plan.steps[r][s]:
                    for d in a.dsts:
                        write(d, r)
            if rnd:
                for r in range(p):
                    out[r][s] = reads[r] * itemsize
    return out


def footprint_bytes(plan: _plan.Plan, itemsize: int) -> int:
    """Bytes of distinct buffer regions the whole call touches (every rank's in/out/tmp it reads or writes)."""
    spans: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for steps in plan.steps:
        for actions in steps:
            for a in actions:
                for ref in a.dsts + a.srcs:
                    spans.setdefault((ref.kind, ref.owner), []).append((ref.lo, ref.hi))
    total = 0
    for iv in spans.values():
        iv.sort()
        lo, hi = iv[0]
        for a, b in iv[1:]:
            if a > hi:
                total += hi - lo
                lo, hi = a, b
            else:
                hi = max(hi, b)
        total += hi - lo
    return total * itemsize


def _interp_loglog(xs: list[float], ys: list[float], x: float) -> float:
    """Piecewise-linear interpolation in log-log space, constant beyond the ends."""
    if x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    i = bisect.bisect_right(xs, x)
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    t = (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0))
    return math.exp(math.log(y0) + t * (math.log(y1) - math.log(y0)))


@dataclass
class MachineParams:
    """Measured primitives of one machine.

    ``footprints``: increasing footprints in bytes; ``copy_Bps[k-1][i]`` / ``add_Bps[k-1][i]``:
    per-process rate (bytes written per second) of ``np.copyto`` / ``np.add`` when k processes run
    at once with footprint ``footprints[i]`` all together; ``alpha_s``: cost of one synchronised step
    (tiny-message ping-pong, one way); ``call_s``: overhead of one numpy call; ``cores``: C, the
    number of ranks that can run at once. ``notice_s[i]``: time for a rank that has been waiting
    ``notice_waits_s[i]`` seconds on a peer's counter to notice it changed (the worker spins, then
    yields, then sleeps, so a long wait is noticed late); without this table every wait costs α.
    ``remote_Bps``: rate (bytes/s) of copying data that *another* process has just written (a large
    ping-pong: the cache lines come from the other core's cache); a step's bytes read from such
    buffers (:func:`remote_dirty_bytes`) cost at least this rate. None: no such penalty.
    ``shared_alpha_s[N]``: α for a plan of N > C ranks, N >= 3 (:func:`measure_shared_alpha`: with more
    ranks than cores a hand-off waits for the scheduler); N missing or N <= C: ``alpha_s`` (for N = 2 the
    2-rank ping-pong *is* the hand-off, on a shared core too).
    """

    alpha_s: float
    cores: int
    footprints: list[int]
    copy_Bps: list[list[float]]
    add_Bps: list[list[float]]
    call_s: float = 0.0
    notice_waits_s: list[float] = field(default_factory=list)
    notice_s: list[float] = field(default_factory=list)
    notes: dict = field(default_factory=dict)
    remote_Bps: float | None = None
    shared_alpha_s: dict[int, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.alpha_s < 0 or self.call_s < 0:
            raise ValueError("alpha_s and call_s must be >= 0 (seconds)")
        if self.cores < 1:
            raise ValueError(f"cores must be >= 1; got {self.cores}")
        if not self.footprints or list(self.footprints) != sorted(set(self.footprints)):
            raise ValueError("footprints must be a non-empty increasing list of sizes")
        for name, table in (("copy_Bps", self.copy_Bps), ("add_Bps", self.add_Bps)):
            if not table or any(len(row) != len(self.footprints) for row in table):
                raise ValueError(f"{name} needs one row per concurrency with one rate per footprint")
            if any(not v > 0 for row in table for v in row):
                raise ValueError(f"{name}: rates must be > 0 bytes/s")
        if len(self.notice_waits_s) != len(self.notice_s) or list(self.notice_waits_s) != sorted(self.notice_waits_s):
            raise ValueError("notice_waits_s must be increasing, with one notice_s per wait")
        if self.remote_Bps is not None and not self.remote_Bps > 0:
            raise ValueError(f"remote_Bps must be > 0 bytes/s or None; got {self.remote_Bps!r}")
        shared = {}
        for n, a in self.shared_alpha_s.items():
            try:  # JSON turns int keys into strings: to_dict() -> json -> MachineParams(**d) must round-trip
                procs = int(n)
            except (TypeError, ValueError):
                procs = None
            if procs is None or procs != float(n) or procs < 3 or not a >= 0:
                raise ValueError(f"shared_alpha_s maps procs (an integer >= 3) to seconds >= 0; got {n!r}: {a!r}")
            shared[procs] = float(a)
        self.shared_alpha_s = shared

    def alpha_for(self, procs: int) -> float:
        """α (seconds) for a plan of ``procs`` ranks: ``shared_alpha_s[procs]`` when procs > cores and measured."""
        if procs > self.cores and procs in self.shared_alpha_s:
            return self.shared_alpha_s[procs]
        return self.alpha_s

    def for_procs(self, procs: int) -> MachineParams:
        """These parameters with ``alpha_s`` = :meth:`alpha_for` (``procs``): what a plan of that size is priced with.
        A notice table, if any, is raised to at least that α (a hand-off is never cheaper than the N-rank α)."""
        a = self.alpha_for(procs)
        if a == self.alpha_s:
            return self
        return replace(self, alpha_s=a, notice_s=[max(x, a) for x in self.notice_s])

    def notice(self, waited_s: float) -> float:
        """Seconds until a rank that has waited ``waited_s`` notices its peer's counter (α without a table)."""
        if not self.notice_s:
            return self.alpha_s
        return float(np.interp(max(0.0, waited_s), self.notice_waits_s, self.notice_s))

    @classmethod
    def flat(cls, alpha_s: float, beta_Bps: float, gamma_Bps: float | None = None, *, cores: int = 1,
             call_s: float = 0.0) -> MachineParams:
        """Rates that depend on nothing: the machine model then reduces to plain α-β(-γ) per step.

        ``gamma_Bps=None`` makes adds free (1e30 B/s).
        """
        g = 1e30 if gamma_Bps is None else gamma_Bps
        return cls(alpha_s, cores, [1], [[beta_Bps]] * cores, [[g]] * cores, call_s)

    def _rate(self, table: list[list[float]], footprint: float, k: int) -> float:
        k = max(1, k)
        kk = min(k, self.cores, len(table))
        r = _interp_loglog([float(f) for f in self.footprints], table[kk - 1], max(1.0, float(footprint)))
        if k > self.cores:  # time sharing: only C of the k ranks run at any moment
            r *= self.cores / k
        return r

    def copy_rate(self, footprint: float, k: int = 1) -> float:
        """Per-rank copy rate (bytes written/s) with ``k`` ranks streaming over ``footprint`` bytes."""
        return self._rate(self.copy_Bps, footprint, k)

    def add_rate(self, footprint: float, k: int = 1) -> float:
        """Per-rank add rate (bytes written/s) with ``k`` ranks streaming over ``footprint`` bytes."""
        return self._rate(self.add_Bps, footprint, k)

    def to_dict(self) -> dict:
        return {"alpha_s": self.alpha_s, "cores": self.cores, "footprints": list(self.footprints),
                "copy_Bps": self.copy_Bps, "add_Bps": self.add_Bps, "call_s": self.call_s,
                "notice_waits_s": list(self.notice_waits_s), "notice_s": list(self.notice_s), "notes": self.notes,
                "remote_Bps": self.remote_Bps, "shared_alpha_s": dict(self.shared_alpha_s)}


def step_seconds(w: StepWork, footprint: float, k: int, params: MachineParams) -> float:
    """Seconds of the kernels of one step: copies at β, adds at γ, extra streams at 3γ, plus numpy calls; bytes
    read that another rank just wrote are slowed to ``params.remote_Bps`` when that is slower than a copy."""
    t = w.calls * params.call_s
    if w.copy_bytes:
        t += w.copy_bytes / params.copy_rate(footprint, k)
    if w.remote_dirty_bytes and params.remote_Bps:
        t += w.remote_dirty_bytes * max(0.0, 1 / params.remote_Bps - 1 / params.copy_rate(footprint, k))
    if w.add_bytes or w.extra_streams_bytes:
        g = params.add_rate(footprint, k)
        t += w.add_bytes / g + w.extra_streams_bytes / (3 * g)
    return t


def _timeline(work, plan, fp, params, begin):
    p, nsteps = plan.nprocs, plan.nsteps
    active = [sum(1 for r in range(p) if not work[r][s].empty) for s in range(nsteps)]
    finish = [[0.0] * nsteps for _ in range(p)]
    # plan.deps only points backwards in step index, so step order is a valid evaluation order
    for s in range(nsteps):
        k = active[s]
        for r in range(p):
            w = work[r][s]
            ready = finish[r][s - 1] if s else begin[r]
            start = ready
            for q, need in (plan.deps[r][s] if plan.deps else []):
                done = finish[q][need - 1]
                start = max(start, done + params.notice(done - ready))
            cost = params.call_s
            if not w.empty:
                cost += step_seconds(w, fp, k, params)
            finish[r][s] = start + cost
    return finish


def predict_plan(plan: _plan.Plan, itemsize: int, params: MachineParams, *, detail: bool = False,
                 rounds: int = 3):
    """Predicted seconds of one call of ``plan``: the slowest rank's time from its own start (see module doc).

    Timeline (seconds, per rank):

    * **step s** — ready when the rank has finished step s-1; for each wait ``(q, k)`` of the plan it
      starts only once rank q has finished step k-1 *and* it has noticed: ``params.notice(W)`` after
      that, W being how long it waited (α with flat parameters; α for N ranks,
      :meth:`MachineParams.alpha_for`, when the plan has more ranks than cores); then it runs its kernels: copy
      bytes at ``β(F, a)``, add bytes at ``γ(F, a)``, ``call_s`` per numpy call and one ``call_s``
      of bookkeeping, with F the call's footprint and a the number of ranks with work in step s
      (rates shared by time slicing when a > C);
    * **start** — every call begins with a barrier: the last rank to arrive leaves at once, each
      other rank ``notice(W)`` later, W its wait at the barrier. Calls run back to back, so the
      arrival times come from the previous call: the timeline is evaluated ``rounds`` times, starting
      with rank 0 first and the others ``notice(0)`` later;
    * **time** — ``max_r (finish_r − start_r)``, what :class:`ProcessGroup` reports (slowest rank).

    With ``detail=True`` returns ``(seconds, finish)`` with ``finish[r][s]`` each step's end time.
    """
    p = plan.nprocs
    if plan.nsteps == 0:
        return (0.0, []) if detail else 0.0
    params = params.for_procs(p)
    work = plan_work(plan, itemsize)
    fp = footprint_bytes(plan, itemsize)
    begin = [0.0] + [params.notice(0.0)] * (p - 1)
    for i in range(max(1, rounds)):
        finish = _timeline(work, plan, fp, params, begin)
        if i + 1 == max(1, rounds):
            break
        arrive = [finish[r][-1] for r in range(p)]  # when each rank reaches the next call's barrier
        last = max(range(p), key=lambda r: arrive[r])
        begin = [0.0 if r == last else params.notice(arrive[last] - arrive[r]) for r in range(p)]
    total = max(finish[r][-1] - begin[r] for r in range(p))
    return (total, finish) if detail else total


def predict_machine(op: str, algo: str, p: int, nbytes: int, params: MachineParams, *, dtype: str = "float32") -> float:
    """Machine-model seconds for one call of ``op`` with ``algo`` on ``p`` ranks and ``nbytes`` (nccl-tests' S)."""
    _plan.check_args(op, algo, p, dtype)
    itemsize = np.dtype(dtype).itemsize
    count = _plan.normalize_count(op, p, int(nbytes), itemsize)
    return predict_plan(_plan.build_plan(op, algo, p, count), itemsize, params)
