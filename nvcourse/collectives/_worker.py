"""Worker process of :class:`nvcourse.collectives.ProcessGroup` (started with the "spawn" method).

Control path: the parent sends small commands over a pipe and gets one reply per command (pickled,
a few per ``run`` call). Data path: numpy on shared-memory buffers, and spin-waits on step counters in
a shared control block — no pickling, no locks, no system calls while data moves (except a yield or
short sleep when a wait lasts long, so that a 1-CPU machine does not livelock).

Control block layout (int64 slots, each counter on its own 64-byte line): slot 0 = abort flag;
``DONE + 8 r`` = steps rank r has completed since it started; ``BAR + 8 r`` = rank r's barrier epoch.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import traceback
from multiprocessing import resource_tracker, shared_memory

import numpy as np

from . import plan as _plan

LINE = 8  # int64 slots per cache line
ABORT = 0
DONE = LINE


def bar_slot(nprocs: int, rank: int) -> int:
    return DONE + LINE * nprocs + LINE * rank


def ctl_slots(nprocs: int) -> int:
    return LINE * (1 + 2 * nprocs)


PIECE_BYTES = 256 * 1024  # reductions and copies walk the data in pieces that stay in L2
SPINS_BEFORE_YIELD = 64
SLEEP_AFTER_S = 2e-3  # a wait longer than this sleeps between polls instead of yielding
CHECK_EVERY_S = 0.2  # how often a long wait checks the abort flag and whether the parent lives

_yield = getattr(os, "sched_yield", None) or (lambda: time.sleep(0))


class Aborted(Exception):
    """The parent raised the abort flag (a peer failed) or went away."""


def attach(name: str) -> shared_memory.SharedMemory:
    """Open an existing segment without registering it with the resource tracker (the parent owns it)."""
    if sys.version_info >= (3, 13):
        return shared_memory.SharedMemory(name=name, track=False)
    orig = resource_tracker.register
    resource_tracker.register = lambda *a, **k: None
    try:
        return shared_memory.SharedMemory(name=name)
    finally:
        resource_tracker.register = orig


class Worker:
    def __init__(self, rank: int, nprocs: int, ctl_name: str, parent_pid: int):
        self.rank, self.p, self.parent_pid = rank, nprocs, parent_pid
        self.ctl_shm = attach(ctl_name)
        self.ctl = self.ctl_shm.buf.cast("q")
        self.segs: dict[str, shared_memory.SharedMemory] = {}
        self.steps_done = 0  # our own DONE counter (all ranks advance it identically)
        self.epoch = 0
        self.cache: dict[tuple, object] = {}

    # -- waiting ---------------------------------------------------------------------------
    def _check(self) -> None:
        if self.ctl[ABORT]:
            raise Aborted("abort flag raised by the parent")
        if os.getppid() != self.parent_pid:
            raise SystemExit(0)  # parent died: nobody will read our results

    def wait_ge(self, slot: int, target: int) -> None:
        ctl = self.ctl
        if ctl[slot] >= target:
            return
        n = 0
        t_start = t_check = 0.0
        while ctl[slot] < target:
            n += 1
            if n < SPINS_BEFORE_YIELD:
                continue
            if n == SPINS_BEFORE_YIELD:
                t_start = t_check = time.perf_counter()
            if n & 15 == 0:
                if ctl[ABORT]:  # one memory read: an interrupt is seen within microseconds of a long wait
                    raise Aborted("abort flag raised by the parent")
                now = time.perf_counter()
                if now - t_check > CHECK_EVERY_S:
                    t_check = now
                    self._check()
                if now - t_start > SLEEP_AFTER_S:
                    time.sleep(2e-5)
                    continue
            _yield()

    def barrier(self) -> None:
        """Counter barrier: bump our epoch, wait until every rank's epoch has reached it."""
        self.epoch += 1
        p = self.p
        self.ctl[bar_slot(p, self.rank)] = self.epoch
        for q in range(p):
            self.wait_ge(bar_slot(p, q), self.epoch)

    # -- buffers ---------------------------------------------------------------------------
    def attach_segments(self, names: dict[str, list[str]]) -> dict[str, list[memoryview]]:
        bufs = {}
        for kind, per_rank in names.items():
            bufs[kind] = []
            for name in per_rank:
                if name not in self.segs:
                    self.segs[name] = attach(name)
                bufs[kind].append(self.segs[name].buf)
        wanted = {n for v in names.values() for n in v}
        for name in [n for n in self.segs if n not in wanted]:
            seg = self.segs.pop(name)
            self.cache.clear()
            try:
                seg.close()
            except BufferError:  # a cached view still points at it; dropped with the cache
                pass
        return bufs

    def compile(self, plan: _plan.Plan, dtype: np.dtype, bufs: dict[str, list[memoryview]]):
        """Turn this rank's program into numpy views, split in pieces of PIECE_BYTES."""
        piece = max(1, PIECE_BYTES // dtype.itemsize)
        arrays = {
            kind: [np.frombuffer(mv, dtype=dtype, count=plan.counts[kind]) for mv in per_rank]
            for kind, per_rank in bufs.items()
            if plan.counts.get(kind)
        }
        prog = []
        for s, actions in enumerate(plan.steps[self.rank]):
            deps = [(DONE + LINE * q, k) for q, k in plan.deps[self.rank][s]]
            compiled = []
            for a in actions:
                if not a.dsts:
                    continue
                n = a.dsts[0].size
                pieces = []
                for lo in range(0, n, piece):
                    hi = min(n, lo + piece)
                    d = [arrays[r.kind][r.owner][r.lo + lo:r.lo + hi] for r in a.dsts]
                    src = [arrays[r.kind][r.owner][r.lo + lo:r.lo + hi] for r in a.srcs]
                    pieces.append((d, src))
                compiled.append((pieces, _plan.peer_of(self.rank, a), a.chunk, n * dtype.itemsize))
            rbytes = _plan.remote_bytes(self.rank, actions, dtype.itemsize)
            prog.append((deps, compiled, rbytes))
        return prog

    # -- running ---------------------------------------------------------------------------
    def run(self, spec: dict) -> dict:
        dtype = np.dtype(spec["dtype"])
        bufs = self.attach_segments(spec["segments"])
        key = (spec["op"], spec["algo"], spec["count"], spec["dtype"], tuple(self.segs))
        prog = self.cache.get(key)
        if prog is None:
            if spec["op"] == "pingpong":
                plan = _plan.pingpong_plan(self.p, spec["count"])
            else:
                plan = _plan.build_plan(spec["op"], spec["algo"], self.p, spec["count"])
            prog = self.compile(plan, dtype, bufs)
            self.cache = {key: prog}
        emu = spec.get("emulation")  # (latency_s, bandwidth_Bps) or None
        fault = spec.get("fault")  # (iteration, step, action) for this rank, or None
        trace_on = spec["trace"]
        times: list[float] = []
        events: list[tuple] = []
        total = spec["warmup"] + spec["iters"]
        for it in range(total):
            self.barrier()
            record = trace_on and it >= spec["warmup"]
            ev = events if record else None
            t0 = time.perf_counter()
            self.execute(prog, emu, ev, it - spec["warmup"], fault if fault and fault[0] == it else None)
            t1 = time.perf_counter()
            if it >= spec["warmup"]:
                times.append(t1 - t0)
        return {"times": times, "trace": events}

    def execute(self, prog, emu, events, iteration: int, fault) -> None:
        ctl = self.ctl
        base = self.steps_done
        my_slot = DONE + LINE * self.rank
        perf = time.perf_counter
        add, copyto = np.add, np.copyto
        for s, (deps, compiled, rbytes) in enumerate(prog):
            if ctl[ABORT]:  # checked at every step too: with short waits (emulated links) wait_ge may never look
                raise Aborted("abort flag raised by the parent")
            if fault is not None and fault[1] == s:
                inject(fault[2])
            for slot, k in deps:
                if ctl[slot] < base + k:
                    self.wait_ge(slot, base + k)
            t_step = perf()
            for pieces, peer, chunk, nbytes in compiled:
                t_a = perf() if events is not None else 0.0
                for dsts, srcs in pieces:
                    d0 = dsts[0]
                    if len(srcs) == 1:
                        src = srcs[0]
                        for d in dsts:
                            copyto(d, src)
                        continue
                    add(srcs[0], srcs[1], out=d0)
                    for extra in srcs[2:]:
                        add(d0, extra, out=d0)
                    for d in dsts[1:]:
                        copyto(d, d0)
                if events is not None:
                    events.append((self.rank, iteration, s, peer, chunk, nbytes, t_a, perf()))
            if emu is not None and rbytes:
                deadline = t_step + emu[0] + rbytes / emu[1]
                while True:
                    left = deadline - perf()
                    if left <= 0:
                        break
                    if left > 2e-3:  # sleeps overshoot by ~0.1-1 ms on a busy VM: finish by yielding
                        time.sleep(min(left - 1e-3, CHECK_EVERY_S))
                        if left > CHECK_EVERY_S:  # a slow emulated link must not delay an interrupt
                            self._check()
                    else:
                        _yield()
            ctl[my_slot] = base + s + 1
        self.steps_done = base + len(prog)

    def close(self) -> None:
        self.cache.clear()
        self.ctl.release()
        try:
            self.ctl_shm.close()
        except BufferError:
            pass
        for seg in self.segs.values():
            try:
                seg.close()
            except BufferError:
                pass
        self.segs.clear()


def inject(kind: str) -> None:
    """Fault injection (see :class:`nvcourse.collectives.Fault`)."""
    if kind == "kill":
        if hasattr(signal, "SIGKILL"):
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(137)
    if kind == "exit":
        os._exit(3)
    if kind == "hang":
        while True:
            time.sleep(3600)
    if kind == "raise":
        raise RuntimeError("injected fault")
    raise ValueError(f"unknown fault kind {kind!r}")


def main(rank: int, nprocs: int, ctl_name: str, conn, parent_pid: int) -> None:
    """Entry point of a worker: serve commands until "stop", EOF on the pipe, or the parent's death."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what an interrupt means
    if hasattr(signal, "pthread_sigmask"):  # started with both blocked (resources.start_blocking_signals)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    w = Worker(rank, nprocs, ctl_name, parent_pid)
    conn.send(("ready", os.getpid()))
    try:
        while True:
            try:
                if not conn.poll(1.0):
                    if os.getppid() != parent_pid:
                        break
                    continue
                msg = conn.recv()
            except (EOFError, OSError):
                break
            cmd = msg[0]
            if cmd == "stop":
                break
            try:
                if cmd == "run":
                    reply = ("ok", w.run(msg[1]))
                elif cmd == "barrier":
                    w.barrier()
                    reply = ("ok", None)
                elif cmd == "reset":  # after an interrupted call the parent zeroed the control block
                    w.steps_done = w.epoch = 0
                    reply = ("ok", None)
                else:
                    reply = ("err", f"unknown command {cmd!r}")
            except Aborted as exc:
                reply = ("aborted", str(exc))
            except Exception as exc:  # reported to the parent, which raises CollectiveError
                reply = ("err", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
            try:
                conn.send(reply)
            except (BrokenPipeError, OSError):
                break
    finally:
        w.close()
