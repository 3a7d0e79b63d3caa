"""Probes that measure the machine model's primitives on this machine (:class:`MachineParams`).

:mod:`nvcourse.collectives.machine` is the model; this module runs the processes that measure what it needs:
copy and add rates with k processes streaming at once (:func:`measure_streams`), how long a rank takes to notice
a peer's counter after waiting (:func:`measure_notice`), α for N ranks sharing fewer cores
(:func:`measure_shared_alpha`), and all of them together (:func:`measure_machine`). Units: bytes, seconds,
bytes per second. Every probe process is joined, or killed at its deadline, before the function returns.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import statistics
import time
from multiprocessing import shared_memory

import numpy as np

from . import _worker
from . import plan as _plan
from .group import ProcessGroup
from .machine import DEFAULT_FOOTPRINTS, PIECE_BYTES, MachineParams, predict_plan

__all__ = [
    "measure_streams",
    "measure_notice",
    "measure_shared_alpha",
    "measure_machine",
    "DEFAULT_NOTICE_WAITS",
]


def _stream_proc(rank: int, k: int, footprints, piece_bytes: int, min_time_s: float, reps: int,
                 barrier, queue) -> None:
    """One of k processes: for each footprint, time copy and add on this process's share of it."""
    try:
        results = {}
        piece = max(1, piece_bytes // 4)
        for fp in footprints:
            for kind, nbuf in (("copy", 2), ("add", 3)):
                n = max(16, int(fp) // (k * nbuf * 4))
                # shared memory like the group's buffers (same page size: no transparent huge pages)
                segs = [shared_memory.SharedMemory(create=True, size=n * 4) for _ in range(nbuf)]
                bufs = [np.frombuffer(sg.buf, dtype=np.float32, count=n) for sg in segs]
                for b in bufs:
                    b.fill(1.0)
                chunks = [(lo, min(n, lo + piece)) for lo in range(0, n, piece)]
                views = [[b[lo:hi] for b in bufs] for lo, hi in chunks]

                def once(views=views, kind=kind):  # bound now: the loop rebinds both
                    if kind == "copy":
                        for s, d in views:
                            np.copyto(d, s)
                    else:
                        for a, b, c in views:
                            np.add(a, b, out=c)

                once()
                t0 = time.perf_counter()
                once()
                t1 = max(1e-7, time.perf_counter() - t0)
                inner = max(1, int(min_time_s / t1))
                ts = []
                for _ in range(reps):
                    barrier.wait()
                    t0 = time.perf_counter()
                    for _ in range(inner):
                        once()
                    ts.append((time.perf_counter() - t0) / inner)
                results[(kind, fp)] = n * 4 / statistics.median(ts)
                del views, bufs, b, once
                for sg in segs:
                    sg.close()
                    sg.unlink()
        queue.put((rank, results))
    except BaseException as exc:  # reported to the parent
        queue.put((rank, exc))


def _gather(queue, n: int, what: str, timeout_s: float) -> dict:
    """``{rank: result}`` from ``n`` probe processes before the deadline; a process's exception is raised here."""
    got = {}
    deadline = time.monotonic() + timeout_s
    while len(got) < n:
        r, res = queue.get(timeout=max(0.1, deadline - time.monotonic()))
        if isinstance(res, BaseException):
            raise RuntimeError(f"{what} process {r} failed: {res!r}")
        got[r] = res
    return got


def _reap(procs) -> None:
    """Join every probe process; kill one that has not left 2 s later (no process outlives its probe)."""
    for pr in procs:
        pr.join(2.0)
        if pr.exitcode is None:
            pr.kill()
            pr.join(1.0)


def measure_streams(k: int, footprints=DEFAULT_FOOTPRINTS, *, piece_bytes: int = PIECE_BYTES,
                    min_time_s: float = 2e-3, reps: int = 5, timeout_s: float = 300.0) -> dict:
    """Per-process copy and add rates (bytes written/s) with ``k`` processes streaming at the same time.

    Each process works on its own arrays, ``footprint / k`` bytes per process (split over 2 arrays for
    a copy, 3 for an add), in pieces of ``piece_bytes`` like the workers; before every repetition all
    k processes meet at a barrier. Returns ``{("copy"|"add", footprint): median over processes of each
    process's median rate}``.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1; got {k}")
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(k)
    queue = ctx.Queue()
    procs = [ctx.Process(target=_stream_proc, args=(r, k, list(footprints), piece_bytes, min_time_s, reps,
                                                     barrier, queue), daemon=True) for r in range(k)]
    for pr in procs:
        pr.start()
    try:
        got = _gather(queue, k, "stream", timeout_s)
    finally:
        barrier.abort()
        _reap(procs)
    keys = got[0].keys()
    return {key: statistics.median(got[r][key] for r in got) for key in keys}


#: Waits (seconds) at which :func:`measure_notice` measures the notice latency.
DEFAULT_NOTICE_WAITS: tuple[float, ...] = (0.0, 3e-6, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3)


def _notice_proc(rank: int, nprocs: int, ctl_name: str, parent_pid: int, waits, reps: int, queue) -> None:
    """Ranks ping-pong in pairs (0,1), (2,3), ...: the even rank works ``T``, bumps its counter and times
    until its partner answers. With an odd count the last rank streams copies."""
    try:
        w = _worker.Worker(rank, nprocs, ctl_name, parent_pid)
        ctl, perf = w.ctl, time.perf_counter
        stop = _worker.bar_slot(nprocs, 0)
        total = len(waits) * (reps + 1)
        me = _worker.DONE + _worker.LINE * rank
        if rank % 2 == 0 and rank + 1 < nprocs:
            peer = me + _worker.LINE
            res, seq = {}, 0
            for T in waits:
                ts = []
                for _ in range(reps + 1):
                    w.wait_ge(peer, seq)  # the partner has answered the previous round and waits again
                    t_end = perf() + T
                    while perf() < t_end:  # "work" while the partner waits
                        pass
                    seq += 1
                    t0 = perf()
                    ctl[me] = seq
                    w.wait_ge(peer, seq)
                    ts.append(perf() - t0)
                res[T] = statistics.median(ts[1:])
            if rank == 0:
                ctl[stop] = 1
            queue.put((rank, res))
        elif rank % 2 == 1:
            peer = me - _worker.LINE
            for seq in range(1, total + 1):
                w.wait_ge(peer, seq)
                ctl[me] = seq
            queue.put((rank, None))
        else:  # odd group: the last rank streams memory like a working rank
            a = np.ones(PIECE_BYTES // 4, dtype=np.float32)
            b = np.ones_like(a)
            while not ctl[stop]:
                for _ in range(16):
                    np.copyto(b, a)
            queue.put((rank, None))
        w.close()
    except BaseException as exc:
        queue.put((rank, exc))


def measure_notice(nprocs: int = 2, waits=DEFAULT_NOTICE_WAITS, *, reps: int = 15,
                   timeout_s: float = 120.0) -> tuple[list[float], list[float]]:
    """Notice latency of the workers' spin-wait after waiting ``T``, with ``nprocs`` processes running.

    The processes ping-pong in pairs at the same time, with the workers' own wait
    (:meth:`_worker.Worker.wait_ge`: spin, then yield, then sleep): the even rank of a pair keeps
    busy for T while its partner waits, bumps its counter and times until the answer arrives (with
    N > C the pairs compete for cores like the ranks of a group). The round trip is the partner's
    notice after a wait of T plus the even rank's after a short one, so
    ``notice(T) = rtt(T) − rtt(0)/2``. Returns ``(waits, notice_s)``: medians over ``reps`` and pairs.
    """
    if nprocs < 2:
        raise ValueError(f"nprocs must be >= 2 for a notice probe; got {nprocs}")
    waits = sorted(float(t) for t in waits)
    if waits[0] != 0.0:
        waits = [0.0] + waits
    ctx = mp.get_context("spawn")
    ctl = shared_memory.SharedMemory(create=True, size=8 * _worker.ctl_slots(nprocs))
    ctl.buf[:] = bytes(ctl.size)
    queue = ctx.Queue()
    procs = [ctx.Process(target=_notice_proc, args=(r, nprocs, ctl.name, os.getpid(), waits, reps, queue),
                         daemon=True) for r in range(nprocs)]
    try:
        for pr in procs:
            pr.start()
        got = _gather(queue, nprocs, "notice probe", timeout_s)
    finally:
        c = ctl.buf.cast("q")
        c[_worker.bar_slot(nprocs, 0)] = 1
        c.release()
        _reap(procs)
        ctl.close()
        ctl.unlink()
    pairs = [res for res in got.values() if res]
    rtt = {t: statistics.median(res[t] for res in pairs) for t in waits}
    half0 = rtt[0.0] / 2
    return waits, [max(half0, rtt[t] - half0) for t in waits]


def measure_shared_alpha(group, *, iters: int = 50, repeats: int = 3, call_s: float = 0.0) -> float:
    """α (seconds) for ``group``'s N >= 3 ranks all stepping at once, from a ring all-gather of one float32 per
    rank: the median call time of ``repeats`` runs of ``iters`` calls, less what the model prices besides α
    (numpy calls and bookkeeping at ``call_s`` each), divided by the number of α the model puts on that call's
    critical path (N − 1: the waits on the left neighbour, and the skew of the opening barrier). No data to speak
    of: this is a latency probe, the N-rank form of the ping-pong. It matters when N exceeds the cores, where
    the peer a rank waits for is often not running and the hand-off goes through the scheduler (several µs to
    tens of µs instead of the ~1 µs of two running processes). N = 2 is refused: that plan has no wait to time,
    and the 2-rank ping-pong already is the hand-off.
    """
    p = group.nprocs
    if p < 3:
        raise ValueError(f"the group needs at least 3 ranks (2 ranks: use the ping-pong's α); got {p}")
    plan = _plan.build_plan("allgather", "ring", p, _plan.normalize_count("allgather", p, 4 * p, 4))
    free = MachineParams.flat(0.0, 1e30, 1e30, cores=p, call_s=call_s)
    base = predict_plan(plan, 4, free)
    count = predict_plan(plan, 4, MachineParams.flat(1.0, 1e30, 1e30, cores=p, call_s=call_s)) - base
    if count < 0.5:  # pragma: no cover - the ring all-gather waits on every rank for p >= 3
        raise RuntimeError(f"the ring all-gather of {p} ranks has no wait to time")
    runs = [group.run("allgather", 4 * p, algo="ring", iters=iters, warmup=5, verify=False).time_s
            for _ in range(max(1, repeats))]
    return max(0.0, statistics.median(runs) - base) / count


def _call_overhead_s(reps: int = 2000) -> float:
    a = np.ones(16, dtype=np.float32)
    b = np.ones(16, dtype=np.float32)
    np.copyto(a, b)
    t0 = time.perf_counter()
    for _ in range(reps):
        np.copyto(a, b)
    return (time.perf_counter() - t0) / reps


def measure_machine(group=None, *, footprints=DEFAULT_FOOTPRINTS, max_procs: int | None = None,
                    cores: int | None = None, alpha_s: float | None = None, pingpong_iters: int = 50,
                    reps: int = 5, min_time_s: float = 2e-3, notice_procs: int | None = None,
                    notice_waits=DEFAULT_NOTICE_WAITS, notice_reps: int = 15,
                    shared_procs=()) -> MachineParams:
    """Measure :class:`MachineParams` on this machine.

    α: one-way time of an 8-byte ping-pong between ranks 0 and 1 of ``group`` (median of 3 runs; a
    :class:`~nvcourse.collectives.ProcessGroup`; a 2-rank group is started when ``group`` is None and
    ``alpha_s`` is not given). Rates: :func:`measure_streams` for k = 1 .. min(``max_procs``, C),
    C = ``cores`` (default: the CPUs this process may run on). With ``notice_procs`` = N >= 2 also the
    notice latency after waits of ``notice_waits`` seconds, N processes running (:func:`measure_notice`);
    beyond the longest wait the table stays constant. For every N in ``shared_procs`` with N > C and N >= 3,
    α for N ranks (:func:`measure_shared_alpha`) on ``group`` when it has N ranks, else on a group started for it.
    """
    if cores:
        C = int(cores)
    elif hasattr(os, "sched_getaffinity"):
        C = len(os.sched_getaffinity(0))
    else:
        C = os.cpu_count() or 1
    C = max(1, C)
    kmax = min(C, max_procs) if max_procs else C
    t0 = time.perf_counter()
    if alpha_s is None:
        if group is not None:
            alpha_s = statistics.median(group.pingpong(8, iters=pingpong_iters, warmup=5) for _ in range(3))
        else:
            with ProcessGroup(2) as pg:
                alpha_s = statistics.median(pg.pingpong(8, iters=pingpong_iters, warmup=5) for _ in range(3))
    remote = None  # the rate of reading another process's fresh writes: needs a group to ping-pong in
    if group is not None:
        rates = []
        for m in (256 * 2**10, 2**20):
            t = statistics.median(group.pingpong(m, iters=pingpong_iters, warmup=5) for _ in range(3))
            if t > alpha_s:
                rates.append(m / (t - alpha_s))
        remote = statistics.median(rates) if rates else None
    fps = sorted(set(int(f) for f in footprints))
    copy_rows, add_rows = [], []
    for k in range(1, kmax + 1):
        res = measure_streams(k, fps, reps=reps, min_time_s=min_time_s)
        copy_rows.append([res[("copy", f)] for f in fps])
        add_rows.append([res[("add", f)] for f in fps])
    waits, notice = [], []
    if notice_procs and notice_procs >= 2:
        waits, notice = measure_notice(notice_procs, notice_waits, reps=notice_reps)
    shared = {}
    call_s = _call_overhead_s()
    for n in sorted({int(n) for n in shared_procs}):
        if n <= C or n < 3:
            continue  # every rank has its core, or 2 ranks: the ping-pong's α applies
        if group is not None and group.nprocs == n:
            shared[n] = measure_shared_alpha(group, call_s=call_s)
        else:
            with ProcessGroup(n) as pg:
                shared[n] = measure_shared_alpha(pg, call_s=call_s)
    notes = {"measure_s": time.perf_counter() - t0}
    if hasattr(os, "getloadavg"):
        notes["loadavg"] = os.getloadavg()
    return MachineParams(float(alpha_s), C, fps, copy_rows, add_rows, call_s, waits, notice, notes, remote,
                         shared)
