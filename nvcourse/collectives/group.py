"""A reusable group of worker processes that run collectives through shared memory."""

from __future__ import annotations

import multiprocessing as mp
import os
import secrets
import statistics
import time
import weakref
from dataclasses import dataclass, field
from multiprocessing import connection, shared_memory

import numpy as np

from . import _worker
from . import plan as _plan
from .plan import OPERATIONS

__all__ = [
    "ProcessGroup",
    "LinkEmulation",
    "Fault",
    "CollectiveError",
    "RunResult",
    "TraceEvent",
    "DEFAULT_ALGO",
]

#: What ``algo="auto"`` picks: "direct" has the fewest steps and the least memory traffic on one host.
DEFAULT_ALGO = {op: "direct" for op in OPERATIONS}
MAX_ITERS = 100_000
_POLL_S = 0.05


class CollectiveError(RuntimeError):
    """A worker died, raised, or made no progress within the timeout. The group is closed afterwards."""


@dataclass(frozen=True)
class LinkEmulation:
    """Make every step that touches a peer take at least ``latency_s + bytes / bandwidth_Bps``.

    ``latency_s`` in seconds (per hop), ``bandwidth_Bps`` in bytes per second (per rank's link).
    Real work still happens; the emulation only waits for the remainder (sleeping when it can).
    """

    latency_s: float = 0.0
    bandwidth_Bps: float = float("inf")

    def __post_init__(self) -> None:
        if not (self.latency_s >= 0 and np.isfinite(self.latency_s)):
            raise ValueError(f"latency_s must be a finite number >= 0 (seconds); got {self.latency_s!r}")
        if not self.bandwidth_Bps > 0:
            raise ValueError(f"bandwidth_Bps must be > 0 (bytes per second); got {self.bandwidth_Bps!r}")


@dataclass(frozen=True)
class Fault:
    """Fault injection: rank ``rank`` does ``action`` just before ``step`` of call number ``iteration``.

    ``iteration`` counts every call of one ``run`` including warm-up ones, from 0. ``action``:
    ``"kill"`` (SIGKILL itself), ``"exit"`` (exit code 3), ``"hang"`` (sleep forever: exercises the
    timeout) or ``"raise"`` (a Python exception in the worker).
    """

    rank: int
    step: int = 0
    iteration: int = 0
    action: str = "kill"

    def __post_init__(self) -> None:
        if self.action not in ("kill", "exit", "hang", "raise"):
            raise ValueError(f"fault action must be one of kill, exit, hang, raise; got {self.action!r}")


@dataclass(frozen=True)
class TraceEvent:
    """One action of one rank: ``start``/``end`` in seconds from the first event of the run.

    ``peer`` is the rank whose buffer was read or written (-1: local only, -2: several peers);
    ``chunk`` the algorithm's chunk index (-1: whole buffer); ``nbytes`` the bytes written.
    """

    rank: int
    iteration: int
    step: int
    peer: int
    chunk: int
    nbytes: int
    start: float
    end: float


@dataclass
class RunResult:
    """Outcome of :meth:`ProcessGroup.run`. Times in seconds, sizes in bytes, bandwidths in GB/s (1e9 B/s)."""

    op: str
    algo: str
    procs: int
    nbytes: int
    count: int
    dtype: str
    times_s: list[float]  # per timed call: max over ranks
    rank_times_s: list[list[float]]  # [call][rank]
    correct: bool | None  # None when verify=False
    wrong: int | None  # elements that differ from numpy's answer, all ranks together
    trace: list[TraceEvent] = field(default_factory=list)
    backend: str = "shm"

    @property
    def time_s(self) -> float:
        """Median over calls of the slowest rank's time per call."""
        return statistics.median(self.times_s)

    @property
    def algbw_GBps(self) -> float:
        return self.nbytes / self.time_s / 1e9 if self.time_s > 0 else float("inf")

    @property
    def busbw_GBps(self) -> float:
        return self.algbw_GBps * _plan.busbw_factor(self.op, self.procs) if self.op in OPERATIONS else self.algbw_GBps

    def row(self) -> dict:
        """The JSON row of ``nvcourse bench --json``."""
        return {
            "op": self.op,
            "algo": self.algo,
            "backend": self.backend,
            "procs": self.procs,
            "bytes": self.nbytes,
            "count": self.count,
            "dtype": self.dtype,
            "time_s": self.time_s,
            "algbw_GBps": self.algbw_GBps,
            "busbw_GBps": self.busbw_GBps,
            "correct": self.correct,
            "wrong": self.wrong,
            "iters": len(self.times_s),
        }


class _Resources:
    """Everything that must be released; shared with the finalizer (which must not see the group)."""

    def __init__(self) -> None:
        self.procs: list = []
        self.conns: list = []
        self.segments: list[shared_memory.SharedMemory] = []

    def release(self) -> None:
        for c in self.conns:
            try:
                c.send(("stop",))
            except Exception:
                pass
        deadline = time.monotonic() + 1.0
        for p in self.procs:
            p.join(max(0.0, deadline - time.monotonic()))
        for p in self.procs:
            if p.exitcode is None:
                p.kill()
        for p in self.procs:
            p.join(2.0)
        for c in self.conns:
            try:
                c.close()
            except Exception:
                pass
        for seg in self.segments:
            _drop_segment(seg)
        self.procs, self.conns, self.segments = [], [], []


def _drop_segment(seg: shared_memory.SharedMemory) -> None:
    try:
        seg.close()
    except BufferError:  # numpy views still exist; the mapping goes with them, the name goes now
        pass
    except Exception:
        pass
    try:
        seg.unlink()
    except FileNotFoundError:
        pass
    except Exception:
        pass


def _emu_tuple(emulation: LinkEmulation | None) -> tuple[float, float] | None:
    if emulation is None:
        return None
    if not isinstance(emulation, LinkEmulation):
        raise ValueError(f"emulation must be a LinkEmulation or None; got {type(emulation).__name__}")
    if emulation.latency_s == 0 and emulation.bandwidth_Bps == float("inf"):
        return None
    return (emulation.latency_s, emulation.bandwidth_Bps)


class ProcessGroup:
    """``nprocs`` worker processes exchanging data through shared memory; reusable across calls.

    >>> with ProcessGroup(4) as pg:                                         # doctest: +SKIP
    ...     r = pg.run("allreduce", nbytes=1 << 20, algo="ring", iters=5)
    ...     r.time_s, r.busbw_GBps, r.correct

    Workers are started with the "spawn" method (same behaviour on Linux, macOS, Windows and in
    Jupyter; a script must guard its top level with ``if __name__ == "__main__":``). They ignore
    SIGINT; an interrupt or any error in the parent closes the group. A worker that dies, raises or
    makes no progress for ``timeout_s`` seconds makes :meth:`run` raise :class:`CollectiveError`, after
    which the group is closed (no process, no shared-memory segment left). Workers exit by themselves
    if the parent dies.
    """

    def __init__(
        self,
        nprocs: int,
        *,
        timeout_s: float = 10.0,
        emulation: LinkEmulation | None = None,
        start_timeout_s: float = 60.0,
    ) -> None:
        if isinstance(nprocs, bool) or not isinstance(nprocs, int) or not 1 <= nprocs <= _plan.MAX_PROCS:
            raise ValueError(f"procs must be an integer from 1 to {_plan.MAX_PROCS}; got {nprocs!r}")
        if not (isinstance(timeout_s, (int, float)) and timeout_s > 0):
            raise ValueError(f"timeout_s must be a number of seconds > 0; got {timeout_s!r}")
        self.nprocs = nprocs
        self.timeout_s = float(timeout_s)
        self.emulation = emulation
        _emu_tuple(emulation)
        #: Prefix of every shared-memory segment name of this group (unique per group).
        self.name_prefix = "nvc" + secrets.token_hex(4)
        self._res = _Resources()
        self._finalizer = weakref.finalize(self, self._res.release)
        self._closed = False
        self._gen = 0
        self._segs: dict[str, tuple[int, list[shared_memory.SharedMemory]]] = {}
        self._filled: tuple | None = None
        self._expected: list[np.ndarray] | None = None
        try:
            ctl = shared_memory.SharedMemory(
                name=self.name_prefix + "c", create=True, size=8 * _worker.ctl_slots(nprocs)
            )
            self._res.segments.append(ctl)
            self._ctl_shm: shared_memory.SharedMemory | None = ctl
            ctl.buf[:] = bytes(ctl.size)
            ctx = mp.get_context("spawn")
            for rank in range(nprocs):
                parent_end, child_end = ctx.Pipe(duplex=True)
                proc = ctx.Process(
                    target=_worker.main,
                    args=(rank, nprocs, ctl.name, child_end, os.getpid()),
                    name=f"nvcourse-rank{rank}",
                    daemon=True,
                )
                proc.start()
                child_end.close()
                self._res.procs.append(proc)
                self._res.conns.append(parent_end)
            self.pids = self._collect(("ready",), "start", start_timeout_s, send=False)
        except BaseException:
            self.close()
            raise

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> ProcessGroup:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop the workers and remove every shared-memory segment. Safe to call twice."""
        self._closed = True
        self._expected = None
        self._ctl_shm = None
        self._segs = {}
        self._finalizer()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def size(self) -> int:
        return self.nprocs

    def segment_names(self) -> list[str]:
        """Names of the shared-memory segments currently held (for leak checks)."""
        return [s.name for s in self._res.segments]

    def kill_worker(self, rank: int) -> None:
        """Kill worker ``rank`` (SIGKILL) — fault injection; the next call raises :class:`CollectiveError`."""
        self._check_open()
        if not 0 <= rank < self.nprocs:
            raise ValueError(f"rank must be from 0 to {self.nprocs - 1}; got {rank!r}")
        proc = self._res.procs[rank]
        proc.kill()
        proc.join(5.0)

    # -- control path ----------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise CollectiveError("the process group is closed (after close() or a failed call); make a new one")

    def _counters(self) -> list[int]:
        """Steps completed by each rank (from the shared control block); no view outlives the call."""
        if self._ctl_shm is None:
            return [0] * self.nprocs
        ctl = self._ctl_shm.buf.cast("q")
        try:
            return [ctl[_worker.DONE + _worker.LINE * r] + ctl[_worker.bar_slot(self.nprocs, r)]
                    for r in range(self.nprocs)]
        finally:
            ctl.release()

    def _progress(self) -> int:
        return sum(self._counters())

    def _fail(self, message: str) -> None:
        if self._ctl_shm is not None:
            ctl = self._ctl_shm.buf.cast("q")
            ctl[_worker.ABORT] = 1
            ctl.release()
        self.close()
        raise CollectiveError(message)

    def _check_alive(self, what: str) -> None:
        for r, p in enumerate(self._res.procs):
            if p.exitcode is not None:
                self._fail(f"rank {r} (pid {p.pid}) died with exit code {p.exitcode} before {what}")

    def _collect(self, cmd: tuple, what: str, timeout_s: float | None = None, send: bool = True) -> list:
        """Send ``cmd`` to every worker and wait for every reply; turn failures into CollectiveError."""
        timeout_s = self.timeout_s if timeout_s is None else timeout_s
        conns, procs = self._res.conns, self._res.procs
        if send:
            self._send_all([cmd] * len(conns), what)
        replies: dict[int, object] = {}
        by_conn = {c: r for r, c in enumerate(conns)}
        by_sentinel = {p.sentinel: r for r, p in enumerate(procs)}
        last_progress, t_last = self._progress(), time.monotonic()
        try:
            while len(replies) < len(conns):
                waiting = [c for r, c in enumerate(conns) if r not in replies]
                ready = connection.wait(waiting + list(by_sentinel), timeout=_POLL_S)
                for obj in ready:
                    if obj in by_conn and by_conn[obj] not in replies:
                        r = by_conn[obj]
                        try:
                            status, payload = obj.recv()
                        except (EOFError, OSError):
                            continue  # the sentinel tells why
                        if status in ("ok", "ready"):
                            replies[r] = payload
                        elif status == "aborted":
                            replies[r] = None
                        else:
                            self._fail(f"rank {r} (pid {procs[r].pid}) raised during {what}: {payload}")
                for obj in ready:
                    if obj in by_sentinel:
                        r = by_sentinel[obj]
                        procs[r].join(0.5)
                        if r in replies and what == "stop":
                            continue
                        self._fail(
                            f"rank {r} (pid {procs[r].pid}) died with exit code {procs[r].exitcode} during {what}"
                        )
                now = time.monotonic()
                prog = self._progress()
                if prog != last_progress:
                    last_progress, t_last = prog, now
                elif now - t_last > timeout_s:
                    stuck = [r for r in range(len(conns)) if r not in replies]
                    self._fail(
                        f"{what} timed out: no progress for {timeout_s:g} s; ranks {stuck} did not finish "
                        f"(pids {[procs[r].pid for r in stuck]}; steps done per rank {self._counters()})"
                    )
        except BaseException as exc:  # KeyboardInterrupt from the kernel, or our own CollectiveError
            if not self._closed:
                self.close()
            if isinstance(exc, CollectiveError):
                raise
            raise
        return [replies[r] for r in range(len(conns))]

    def _send_all(self, cmds: list, what: str) -> None:
        self._check_alive(what)
        for r, (c, cmd) in enumerate(zip(self._res.conns, cmds)):
            try:
                c.send(cmd)
            except (BrokenPipeError, ConnectionError, OSError):
                self._res.procs[r].join(1.0)
                self._check_alive(what)
                self._fail(f"rank {r} (pid {self._res.procs[r].pid}) stopped listening before {what}")

    def barrier(self) -> None:
        """All workers meet once (a control-path check that the group is alive)."""
        self._check_open()
        self._collect(("barrier",), "barrier")

    # -- buffers ---------------------------------------------------------------------------
    def _ensure(self, kind: str, nbytes: int) -> list[shared_memory.SharedMemory]:
        cap, segs = self._segs.get(kind, (0, []))
        if nbytes <= cap and segs:
            return segs
        new_cap = max(4096, 1 << max(0, (nbytes - 1).bit_length()))
        self._gen += 1
        new = []
        try:
            for r in range(self.nprocs):
                name = f"{self.name_prefix}{kind[0]}{r}g{self._gen}"
                seg = shared_memory.SharedMemory(name=name, create=True, size=new_cap)
                self._res.segments.append(seg)
                new.append(seg)
        except BaseException:
            for seg in new:
                self._res.segments.remove(seg)
                _drop_segment(seg)
            raise
        for seg in segs:
            self._res.segments.remove(seg)
            _drop_segment(seg)  # workers still map the old ones until their next call; names go now
        self._segs[kind] = (new_cap, new)
        self._filled = None
        return new

    def _arrays(self, kind: str, count: int, dtype: np.dtype) -> list[np.ndarray]:
        return [np.frombuffer(s.buf, dtype=dtype, count=count) for s in self._segs[kind][1]]

    def _prepare(self, op: str, plan_counts: dict[str, int], count: int, dtype: np.dtype, verify: bool):
        """Fill inputs with small integers (exact sums in every dtype), poison outputs, compute numpy's answer."""
        p = self.nprocs
        ins = self._arrays("in", plan_counts["in"], dtype)
        outs = self._arrays("out", plan_counts["out"], dtype)
        key = (op, count, dtype.str, self._gen)
        if self._filled != key:
            rng = np.random.default_rng(12345)
            base = rng.integers(-8, 8, size=plan_counts["in"]).astype(dtype)
            for r, a in enumerate(ins):
                shift = (977 * r) % len(a)
                a[: len(a) - shift] = base[shift:]
                a[len(a) - shift:] = base[:shift]
                a += r % 5
            del base
            self._filled = key
        if not verify:
            self._expected = None
            return
        poison = -31 if dtype.kind in "iu" else np.nan
        for o in outs:
            o.fill(poison)
        if op == "allreduce":
            total = ins[0].copy()
            for a in ins[1:]:
                total += a
            self._expected = [total] * p
        elif op == "reducescatter":
            total = ins[0].copy()
            for a in ins[1:]:
                total += a
            m = count // p
            self._expected = [total[r * m:(r + 1) * m] for r in range(p)]
        elif op == "allgather":
            cat = np.concatenate(ins)
            self._expected = [cat] * p
        elif op == "broadcast":
            self._expected = [ins[0].copy()] * p
        else:  # pingpong: rank 0 gets rank 1's input back, rank 1 gets rank 0's
            self._expected = None

    def _verify(self, plan_counts: dict[str, int], dtype: np.dtype) -> int:
        outs = self._arrays("out", plan_counts["out"], dtype)
        wrong = 0
        for o, e in zip(outs, self._expected or []):
            wrong += int(np.count_nonzero(o != e))
        self._expected = None
        return wrong

    # -- the call --------------------------------------------------------------------------
    def run(
        self,
        op: str,
        nbytes: int | str = 1 << 20,
        *,
        algo: str = "auto",
        dtype: str = "float32",
        iters: int = 5,
        warmup: int = 1,
        verify: bool = True,
        trace: bool = False,
        emulation: LinkEmulation | None = None,
        fault: Fault | None = None,
    ) -> RunResult:
        """Run ``warmup`` untimed then ``iters`` timed calls of collective ``op`` on ``nbytes`` bytes.

        ``nbytes`` is nccl-tests' size S (an int or a string such as ``"64MiB"``): the message of an
        allreduce or broadcast, the *input* of a reducescatter and the *output* of an allgather; it
        is rounded down to whole elements (and for reducescatter/allgather to a multiple of procs).
        Each timed call starts after a barrier; its time is the slowest rank's. ``verify`` compares
        every rank's output with numpy's answer. ``emulation`` (default: the group's) slows each
        step to a link's speed; ``trace`` records every action (:class:`TraceEvent`).
        """
        from ..units import parse_size

        self._check_open()
        if op not in OPERATIONS and op != "pingpong":
            raise ValueError(f"op must be one of {', '.join(OPERATIONS)}; got {op!r}")
        if op != "pingpong":
            algo = DEFAULT_ALGO[op] if algo == "auto" else algo
            _plan.check_args(op, algo, self.nprocs, dtype)
        elif self.nprocs < 2:
            raise ValueError(f"procs must be at least 2 for a ping-pong; got {self.nprocs}")
        if dtype not in _plan.DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(_plan.DTYPES)}; got {dtype!r}")
        nbytes = parse_size(nbytes, what="nbytes")
        for name, value, low in (("iters", iters, 1), ("warmup", warmup, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_ITERS:
                raise ValueError(f"{name} must be an integer from {low} to {MAX_ITERS}; got {value!r}")
        emu = _emu_tuple(emulation if emulation is not None else self.emulation)
        if fault is not None:
            if not isinstance(fault, Fault):
                raise ValueError(f"fault must be a Fault or None; got {type(fault).__name__}")
            if not 0 <= fault.rank < self.nprocs:
                raise ValueError(f"fault rank must be from 0 to {self.nprocs - 1}; got {fault.rank}")
        dt = np.dtype(dtype)
        if op == "pingpong":
            count = max(1, nbytes // dt.itemsize)
            counts = {"in": count, "out": count, "tmp": 0}
        else:
            count = _plan.normalize_count(op, self.nprocs, nbytes, dt.itemsize)
            counts = _plan.build_plan(op, algo, self.nprocs, count).counts
        names = {}
        for kind in ("in", "out", "tmp"):
            if counts[kind]:
                names[kind] = [s.name for s in self._ensure(kind, counts[kind] * dt.itemsize)]
        self._prepare(op, counts, count, dt, verify and op != "pingpong")
        spec = {
            "op": op,
            "algo": algo,
            "count": count,
            "dtype": dtype,
            "segments": names,
            "iters": iters,
            "warmup": warmup,
            "trace": trace,
            "emulation": emu,
        }
        if fault is None:
            replies = self._collect(("run", spec), op)
        else:
            cmds = [
                ("run", dict(spec, fault=(fault.iteration, fault.step, fault.action) if r == fault.rank else None))
                for r in range(self.nprocs)
            ]
            self._send_all(cmds, op)
            replies = self._collect(("run", spec), op, send=False)
        rank_times = [list(t) for t in zip(*(rep["times"] for rep in replies))]
        if op == "pingpong":
            times = [rt[0] / 2 for rt in rank_times]
        else:
            times = [max(rt) for rt in rank_times]
        correct = wrong = None
        if verify and op != "pingpong":
            wrong = self._verify(counts, dt)
            correct = wrong == 0
        events = [TraceEvent(*e) for rep in replies for e in rep["trace"]]
        if events:
            t0 = min(e.start for e in events)
            events = sorted(
                (TraceEvent(e.rank, e.iteration, e.step, e.peer, e.chunk, e.nbytes, e.start - t0, e.end - t0)
                 for e in events),
                key=lambda e: (e.start, e.rank),
            )
        return RunResult(
            op=op,
            algo=algo,
            procs=self.nprocs,
            nbytes=count * dt.itemsize,
            count=count,
            dtype=dtype,
            times_s=times,
            rank_times_s=rank_times,
            correct=correct,
            wrong=wrong,
            trace=events,
        )

    def pingpong(self, nbytes: int | str, *, iters: int = 20, warmup: int = 2) -> float:
        """Median one-way time (seconds) of a copy of ``nbytes`` bytes between ranks 0 and 1 (half a round trip)."""
        return self.run("pingpong", nbytes, iters=iters, warmup=warmup, verify=False).time_s

