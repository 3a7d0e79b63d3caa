"""A reusable group of worker processes that run collectives through shared memory."""

from __future__ import annotations

import multiprocessing as mp
import os
import secrets
import time
import weakref
from multiprocessing import connection, shared_memory

import numpy as np

from .._validate import choice
from ..errors import RuntimeFailure, Terminated
from ..i18n import translate as _
from ..units import format_size, parse_size
from . import _worker
from . import plan as _plan
from .plan import OPERATIONS
from .resources import (
    Resources,
    check_fits,
    create_segment,
    retire_segments,
    segment_capacity,
    signals_deferred,
    start_blocking_signals,
)
from .results import Fault, LinkEmulation, RunResult, TraceEvent, emulation_tuple, expected_outputs, fill_inputs

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


#: Seconds an interrupted call waits for the workers to abandon it before the group is closed instead.
RECOVER_S = 1.0


class CollectiveError(RuntimeFailure):
    """A worker died, raised, or made no progress within the timeout. The group is closed afterwards.

    A ``RuntimeError`` (via :class:`nvcourse.errors.RuntimeFailure`): the command line exits with status 1.
    """


class ProcessGroup:
    """``nprocs`` worker processes exchanging data through shared memory; reusable across calls.

    >>> with ProcessGroup(4) as pg:                                         # doctest: +SKIP
    ...     r = pg.run("allreduce", nbytes=1 << 20, algo="ring", iters=5)
    ...     r.time_s, r.busbw_GBps, r.correct

    Workers are started with the "spawn" method (same behaviour on Linux, macOS, Windows and in
    Jupyter; a script must guard its top level with ``if __name__ == "__main__":``). They ignore
    SIGINT. An interrupt (Ctrl-C, a notebook kernel's interrupt) during a call raises the caller's
    ``KeyboardInterrupt`` within about a second: the workers abandon the call and the group stays
    usable (``recover_on_interrupt=True``, the default) or is closed at once (False, what ``nvcourse
    bench`` uses; also after SIGTERM, :class:`nvcourse.errors.Terminated`). Any other error in the
    parent closes the group. A worker that dies, raises or
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
        recover_on_interrupt: bool = True,
    ) -> None:
        if isinstance(nprocs, bool) or not isinstance(nprocs, int) or not 1 <= nprocs <= _plan.MAX_PROCS:
            raise ValueError(_("procs must be an integer from 1 to {most}; got {value}").format(
                most=_plan.MAX_PROCS, value=repr(nprocs)))
        if not (isinstance(timeout_s, (int, float)) and timeout_s > 0):
            raise ValueError(_("timeout_s must be a number of seconds > 0; got {value}").format(value=repr(timeout_s)))
        self.nprocs = nprocs
        self.timeout_s = float(timeout_s)
        self.emulation = emulation
        self.recover_on_interrupt = bool(recover_on_interrupt)
        emulation_tuple(emulation)
        #: Prefix of every shared-memory segment name of this group: unique, and it names the owner's pid
        #: (``nvc<pid>_<random>``) so a leak can be traced; at most 30 characters with its suffixes (macOS).
        self.name_prefix = f"nvc{os.getpid()}_{secrets.token_hex(3)}"
        self._res = Resources()
        self._ctl_shm: shared_memory.SharedMemory | None = None
        self._busy: set[int] = set()  # ranks that were sent a command and have not replied
        self._finalizer = weakref.finalize(self, self._res.release)
        self._closed = False
        self._gen = 0
        self._segs: dict[str, tuple[int, list[shared_memory.SharedMemory]]] = {}
        self._filled: tuple | None = None
        self._expected: list[np.ndarray] | None = None
        try:
            ctl = create_segment(self.name_prefix + "c", 8 * _worker.ctl_slots(nprocs), self._res.segments)
            self._ctl_shm = ctl
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
                start_blocking_signals(proc)
                child_end.close()
                self._res.procs.append(proc)
                self._res.conns.append(parent_end)
            self.pids = self._collect(("ready",), "start", start_timeout_s, send=False)
        except BaseException:
            self._close_now()
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

    def _close_now(self) -> None:
        """Close after an interrupt or a failure: raise the abort flag, give the workers 0.3 s, kill the rest."""
        self._set_abort(1)
        if self._finalizer.alive:
            self._finalizer.detach()
            res = self._res
            self.close()
            # Running workers see the abort flag within 0.2 s and exit on "stop"; booting ones cannot.
            res.release(grace_s=0.3 if hasattr(self, "pids") else 0.0)
        else:
            self.close()

    def _set_abort(self, value: int) -> None:
        if self._ctl_shm is not None:
            ctl = self._ctl_shm.buf.cast("q")
            ctl[_worker.ABORT] = value
            ctl.release()

    def _interrupted(self, exc: BaseException) -> None:
        """After KeyboardInterrupt during a call: make the workers abandon it and re-synchronise them
        (group usable), or close the group when that is not wanted or does not work within RECOVER_S."""
        if self._closed:
            return
        if not self._busy:
            return  # the interrupt came before anything was sent, or after every reply: nothing to undo
        if not self.recover_on_interrupt or isinstance(exc, Terminated):
            self._close_now()
            return
        try:
            self._set_abort(1)
            deadline = time.monotonic() + RECOVER_S
            by_conn = {self._res.conns[r]: r for r in self._busy}
            while self._busy and time.monotonic() < deadline:
                for c in connection.wait(list(by_conn), timeout=0.05):
                    r = by_conn.pop(c)
                    self._busy.discard(r)
                    try:
                        c.recv()
                    except (EOFError, OSError):
                        raise CollectiveError(_("rank {rank} died while abandoning the interrupted call").format(
                            rank=r)) from None
                if any(p.exitcode is not None for p in self._res.procs):
                    raise CollectiveError(_("a worker died while abandoning the interrupted call"))
            if self._busy:
                raise CollectiveError(_("workers did not abandon the interrupted call in time"))
            ctl = self._ctl_shm.buf.cast("q")  # every worker idle: start every counter again from 0
            try:
                for i in range(len(ctl)):
                    ctl[i] = 0
            finally:
                ctl.release()
            self._collect(("reset",), "reset", timeout_s=RECOVER_S)
            self._expected = None
            self._filled = None  # inputs may have been half-written by an in-place step: fill them again
        except BaseException:  # a second Ctrl-C, a dead worker, a timeout: give up on the group
            self._close_now()

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
            raise ValueError(_("rank must be from 0 to {last}; got {value}").format(last=self.nprocs - 1,
                                                                                   value=repr(rank)))
        proc = self._res.procs[rank]
        proc.kill()
        proc.join(5.0)

    # -- control path ----------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise CollectiveError(_("the process group is closed (after close() or a failed call); make a new one"))

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
        self._close_now()
        raise CollectiveError(message)

    def _check_alive(self, what: str) -> None:
        for r, p in enumerate(self._res.procs):
            if p.exitcode is not None:
                self._fail(_("rank {rank} (pid {pid}) died with exit code {code} before {what}").format(
                    rank=r, pid=p.pid, code=p.exitcode, what=what))

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
                        self._busy.discard(r)
                        if status in ("ok", "ready"):
                            replies[r] = payload
                        elif status == "aborted":
                            replies[r] = None
                        else:
                            self._fail(_("rank {rank} (pid {pid}) raised during {what}: {error}").format(
                                rank=r, pid=procs[r].pid, what=what, error=payload))
                for obj in ready:
                    if obj in by_sentinel:
                        r = by_sentinel[obj]
                        procs[r].join(0.5)
                        if r in replies and what == "stop":
                            continue
                        self._fail(_("rank {rank} (pid {pid}) died with exit code {code} during {what}").format(
                            rank=r, pid=procs[r].pid, code=procs[r].exitcode, what=what))
                now = time.monotonic()
                prog = self._progress()
                if prog != last_progress:
                    last_progress, t_last = prog, now
                elif now - t_last > timeout_s:
                    stuck = [r for r in range(len(conns)) if r not in replies]
                    # "(pid N)" and "pids [...]" as written here: chapter 08's fault_message strips them
                    self._fail(_("{what} timed out: no progress for {seconds} s; ranks {ranks} did not finish "
                                 "(pids {pids}; steps done per rank {steps})").format(
                        what=what, seconds=format(timeout_s, "g"), ranks=stuck, pids=[procs[r].pid for r in stuck],
                        steps=self._counters()))
        except KeyboardInterrupt as exc:  # from the terminal or the notebook kernel
            self._interrupted(exc)
            raise
        except BaseException:  # our own CollectiveError, or anything unexpected
            if not self._closed:
                self._close_now()
            raise
        return [replies[r] for r in range(len(conns))]

    def _send_all(self, cmds: list, what: str) -> None:
        self._check_alive(what)
        for r, (c, cmd) in enumerate(zip(self._res.conns, cmds, strict=True)):
            try:
                c.send(cmd)
                self._busy.add(r)
            except (BrokenPipeError, ConnectionError, OSError):
                self._res.procs[r].join(1.0)
                self._check_alive(what)
                self._fail(_("rank {rank} (pid {pid}) stopped listening before {what}").format(
                    rank=r, pid=self._res.procs[r].pid, what=what))

    def barrier(self) -> None:
        """All workers meet once (a control-path check that the group is alive)."""
        self._check_open()
        try:
            self._collect(("barrier",), "barrier")
        except KeyboardInterrupt as exc:
            self._interrupted(exc)
            raise

    # -- buffers ---------------------------------------------------------------------------
    def _ensure(self, kind: str, nbytes: int) -> list[shared_memory.SharedMemory]:
        cap, segs = self._segs.get(kind, (0, []))
        if nbytes <= cap and segs:
            return segs
        new_cap = segment_capacity(nbytes)
        self._gen += 1
        new = []
        try:
            for r in range(self.nprocs):
                name = f"{self.name_prefix}{kind[0]}{r}g{self._gen}"
                new.append(create_segment(name, new_cap, self._res.segments))
        except BaseException:
            with signals_deferred():
                retire_segments(new, self._res.segments)
            raise
        with signals_deferred():
            retire_segments(segs, self._res.segments)  # workers map the old ones until their next call
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
            fill_inputs(ins, dtype)
            self._filled = key
        if not verify:
            self._expected = None
            return
        poison = -31 if dtype.kind in "iu" else np.nan
        for o in outs:
            o.fill(poison)
        self._expected = expected_outputs(op, ins, count, p)

    def _verify(self, plan_counts: dict[str, int], dtype: np.dtype) -> int:
        outs = self._arrays("out", plan_counts["out"], dtype)
        wrong = 0
        for o, e in zip(outs, self._expected or [], strict=False):
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
        self._check_open()
        algo, nbytes, emu = self._check_run(op, algo, nbytes, dtype, iters, warmup, emulation, fault)
        dt = np.dtype(dtype)
        if op == "pingpong":
            count = max(1, nbytes // dt.itemsize)
            counts = {"in": count, "out": count, "tmp": 0}
        else:
            count = _plan.normalize_count(op, self.nprocs, nbytes, dt.itemsize)
            counts = _plan.build_plan(op, algo, self.nprocs, count).counts
        shm_need = sum(self.nprocs * segment_capacity(counts[k] * dt.itemsize) for k in counts
                       if counts[k] and counts[k] * dt.itemsize > self._segs.get(k, (0, []))[0])
        check_fits(shm_need, (2 if verify else 1) * count * dt.itemsize,
                   f"{op} of {format_size(count * dt.itemsize)} on {self.nprocs} procs")
        names = {}
        for kind in ("in", "out", "tmp"):
            if counts[kind]:
                names[kind] = [s.name for s in self._ensure(kind, counts[kind] * dt.itemsize)]
        self._prepare(op, counts, count, dt, verify and op != "pingpong")
        spec = {"op": op, "algo": algo, "count": count, "dtype": dtype, "segments": names, "iters": iters,
                "warmup": warmup, "trace": trace, "emulation": emu}
        replies = self._dispatch(spec, fault)
        rank_times = [list(t) for t in zip(*(rep["times"] for rep in replies), strict=True)]
        if op == "pingpong":
            times = [rt[0] / 2 for rt in rank_times]
        else:
            times = [max(rt) for rt in rank_times]
        correct = wrong = None
        if verify and op != "pingpong":
            wrong = self._verify(counts, dt)
            correct = wrong == 0
        return RunResult(op=op, algo=algo, procs=self.nprocs, nbytes=count * dt.itemsize, count=count, dtype=dtype,
                         times_s=times, rank_times_s=rank_times, correct=correct, wrong=wrong,
                         trace=_trace_events(replies))

    def _check_run(self, op: str, algo: str, nbytes: int | str, dtype: str, iters: object, warmup: object,
                   emulation: LinkEmulation | None, fault: object) -> tuple[str, int, tuple | None]:
        """Check :meth:`run`'s arguments in order (ValueError naming each): the algorithm ``auto`` stands for,
        the size in bytes and the emulation as the workers take it."""
        if op != "pingpong":
            choice("op", op, OPERATIONS)
            algo = DEFAULT_ALGO[op] if algo == "auto" else algo
            _plan.check_args(op, algo, self.nprocs, dtype)
        elif self.nprocs < 2:
            raise ValueError(_("procs must be at least 2 for a ping-pong; got {value}").format(value=self.nprocs))
        choice("dtype", dtype, _plan.DTYPES)
        nbytes = parse_size(nbytes, what="nbytes")
        for name, value, low in (("iters", iters, 1), ("warmup", warmup, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_ITERS:
                raise ValueError(_("{name} must be an integer from {low} to {high}; got {value}").format(
                    name=name, low=low, high=MAX_ITERS, value=repr(value)))
        emu = emulation_tuple(emulation if emulation is not None else self.emulation)
        if fault is not None:
            if not isinstance(fault, Fault):
                raise ValueError(_("fault must be a Fault or None; got {type}").format(type=type(fault).__name__))
            if not 0 <= fault.rank < self.nprocs:
                raise ValueError(_("fault rank must be from 0 to {last}; got {value}").format(
                    last=self.nprocs - 1, value=fault.rank))
        return algo, nbytes, emu

    def _dispatch(self, spec: dict, fault: Fault | None) -> list[dict]:
        """Send one run to every worker (the fault only to its rank) and collect their replies."""
        op = spec["op"]
        try:
            if fault is None:
                return self._collect(("run", spec), op)
            cmds = [
                ("run", dict(spec, fault=(fault.iteration, fault.step, fault.action) if r == fault.rank else None))
                for r in range(self.nprocs)
            ]
            self._send_all(cmds, op)
            return self._collect(("run", spec), op, send=False)
        except KeyboardInterrupt as exc:  # also when it lands between sending and waiting
            self._interrupted(exc)
            raise

    def pingpong(self, nbytes: int | str, *, iters: int = 20, warmup: int = 2) -> float:
        """Median one-way time (seconds) of a copy of ``nbytes`` bytes between ranks 0 and 1 (half a round trip)."""
        return self.run("pingpong", nbytes, iters=iters, warmup=warmup, verify=False).time_s


def _trace_events(replies: list[dict]) -> list[TraceEvent]:
    """Every rank's recorded actions on one clock (the earliest start is 0), in order of start then rank."""
    events = [TraceEvent(*e) for rep in replies for e in rep["trace"]]
    if not events:
        return events
    t0 = min(e.start for e in events)
    return sorted(
        (TraceEvent(e.rank, e.iteration, e.step, e.peer, e.chunk, e.nbytes, e.start - t0, e.end - t0) for e in events),
        key=lambda e: (e.start, e.rank),
    )
