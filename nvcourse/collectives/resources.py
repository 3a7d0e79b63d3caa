"""Shared-memory segments of a :class:`~nvcourse.collectives.ProcessGroup`, their release, and the check
that a request fits in RAM and /dev/shm *before* anything is allocated.

Sizes in bytes. Linux keeps POSIX shared memory in the tmpfs mounted at ``/dev/shm``: its pages count
against RAM (and a container's memory limit), and the mount has its own size limit (Docker's default is
64 MB, Binder's is small). :func:`check_fits` compares what a call needs with both and raises
:class:`~nvcourse.errors.ResourceError` with the numbers and how to raise the limit.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from multiprocessing import shared_memory

import numpy as np

from ..errors import ResourceError
from ..units import format_size
from . import plan as _plan

__all__ = ["Segment", "Resources", "drop_segment", "create_segment", "signals_deferred", "available_memory",
           "shm_free", "check_fits", "SHM_DIR", "start_blocking_signals", "segment_capacity", "memory_needed"]

SHM_DIR = "/dev/shm"
#: Headroom kept free for the interpreter, numpy temporaries and the rest of the machine, in bytes.
HEADROOM_BYTES = 64 * 2**20


@contextmanager
def signals_deferred():
    """Run the block with the Python handlers of SIGINT/SIGTERM deferred to its end (main thread only).

    A Ctrl-C landing inside ``SharedMemory.__init__`` (after ``shm_open``, before the object exists) or
    between an unlink and its bookkeeping would leave a /dev/shm entry nobody knows about (and a
    "leaked shared_memory objects" warning at exit). Blocking the signal is not enough: Python may already
    hold it and run its handler at any later bytecode, so the handlers themselves are swapped for a
    recorder, and the first recorded signal's own handler runs (and raises) after the block.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list = []
    old = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(sig)
        if callable(handler):  # a Python-level handler (KeyboardInterrupt, the CLI's Terminated)
            old[sig] = handler
            signal.signal(sig, lambda signum, frame: got.append((signum, frame)))
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if got:
            signum, frame = got[0]
            old[signum](signum, frame)


def create_segment(name: str, size: int, owners: list) -> shared_memory.SharedMemory:
    """Create segment ``name`` of ``size`` bytes and append it to ``owners`` with interrupts deferred."""
    with signals_deferred():
        seg = Segment(name=name, create=True, size=size)
        owners.append(seg)
    return seg


class Segment(shared_memory.SharedMemory):
    """A SharedMemory whose finaliser stays quiet when numpy views still pin its mapping.

    (The standard one prints "Exception ignored ... BufferError" at exit after an interrupted call: the
    name is unlinked at once anyway, and the mapping goes with the last view.)
    """

    def __del__(self) -> None:
        try:
            super().__del__()
        except BufferError:
            pass


def drop_segment(seg: shared_memory.SharedMemory) -> None:
    """Close (when no view pins it) and unlink ``seg``; never raises."""
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


def retire_segments(segs: list[shared_memory.SharedMemory], owners: list) -> None:
    """Unlink every segment of ``segs``, forget it in ``owners`` and empty ``segs``; call it with signals deferred.

    The list is emptied here so that the last reference to each segment goes inside the caller's deferred block:
    a segment's ``__del__`` is Python code, and a Ctrl-C whose handler runs inside a ``__del__`` is discarded
    ("Exception ignored in ..."): ``nvcourse bench`` then ran its sweep to the end and exited 0.
    """
    for seg in segs:
        owners.remove(seg)
        drop_segment(seg)
    segs.clear()


class Resources:
    """Everything a group must release; shared with its finalizer (which must not see the group)."""

    def __init__(self) -> None:
        self.procs: list = []
        self.conns: list = []
        self.segments: list[shared_memory.SharedMemory] = []

    def release(self, grace_s: float = 1.0) -> None:
        """Ask workers to stop, wait up to ``grace_s`` seconds, kill the rest, unlink every segment
        (with interrupts deferred: a second Ctrl-C must not leave a segment or a worker behind)."""
        with signals_deferred():
            self._release(grace_s)

    def _release(self, grace_s: float) -> None:
        for c in self.conns:
            try:
                c.send(("stop",))
            except Exception:
                pass
        deadline = time.monotonic() + grace_s
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
            drop_segment(seg)
        self.procs, self.conns, self.segments = [], [], []


def start_blocking_signals(proc) -> None:
    """Start ``proc`` with SIGINT/SIGTERM blocked, so the child inherits the block while it boots:
    a Ctrl-C to the terminal's process group then cannot kill a worker mid-import (with a
    traceback); the worker ignores SIGINT once running. The parent gets a pending signal right after."""
    mask = getattr(signal, "pthread_sigmask", None)
    with signals_deferred():  # an interrupt inside start() (after the spawn, before the child got its
        if mask is None:      # preparation data) made the child print "EOFError: Ran out of input"
            proc.start()
            return
        old = mask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            proc.start()
        finally:
            mask(signal.SIG_SETMASK, old)


def segment_capacity(nbytes: int) -> int:
    """Bytes of the segment that holds ``nbytes`` (a power of two >= 4 KiB, so that growing sweeps reuse it)."""
    return max(4096, 1 << max(0, (int(nbytes) - 1).bit_length()))


def memory_needed(op: str, nprocs: int, nbytes: int, *, algo: str = "auto", dtype: str = "float32",
                  verify: bool = True) -> tuple[int, int]:
    """``(shared-memory bytes, private bytes of the parent)`` a fresh group needs for one call (see
    :func:`nvcourse.collectives.resources.check_fits`). Checks the arguments like ``ProcessGroup.run``."""
    algo = "direct" if algo == "auto" else algo  # ProcessGroup's DEFAULT_ALGO
    _plan.check_args(op, algo, nprocs, dtype)
    itemsize = np.dtype(dtype).itemsize
    count = _plan.normalize_count(op, nprocs, int(nbytes), itemsize)
    counts = _plan.build_plan(op, algo, nprocs, count).counts
    shm = sum(nprocs * segment_capacity(c * itemsize) for c in counts.values() if c)
    return shm, (2 if verify else 1) * count * itemsize


# -- how much there is ---------------------------------------------------------------------------
def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _cgroup_room() -> tuple[int, str] | None:
    """(bytes left under the container's memory limit, where the limit comes from), or None."""
    for limit_path, usage_path in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit, usage = _read_int(limit_path), _read_int(usage_path)
        if limit is not None and usage is not None and limit < 2**60:
            return max(0, limit - usage), f"container memory limit {format_size(limit)}"
    return None


def available_memory() -> tuple[int, str] | None:
    """``(bytes of RAM available now, what bounds it)``, or None where the platform does not say."""
    best: tuple[int, str] | None = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    best = (int(line.split()[1]) * 1024, "MemAvailable")
                    break
    except (OSError, ValueError, IndexError):
        pass
    if best is None and hasattr(os, "sysconf"):
        try:
            best = (os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), "free physical memory")
        except (ValueError, OSError):
            best = None
    room = _cgroup_room()
    if room is not None and (best is None or room[0] < best[0]):
        best = room
    return best


def shm_free() -> tuple[int, int] | None:
    """``(free bytes, size bytes)`` of the /dev/shm mount, or None where there is none (macOS, Windows)."""
    if not sys.platform.startswith("linux") or not os.path.isdir(SHM_DIR):
        return None
    try:
        st = os.statvfs(SHM_DIR)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize


def check_fits(shm_bytes: int, private_bytes: int, what: str, *, param: str = "nbytes") -> None:
    """Raise :class:`ResourceError` unless ``shm_bytes`` fit in /dev/shm and ``shm_bytes + private_bytes``
    in available RAM. ``what`` describes the request (e.g. ``"allreduce of 64 MiB on 4 procs"``)."""
    shm = shm_free()
    if shm is not None and shm_bytes > shm[0]:
        raise ResourceError(
            f"{param}: {what} needs {format_size(shm_bytes)} of shared memory but {SHM_DIR} has "
            f"{format_size(shm[0])} free (size {format_size(shm[1])}); choose a smaller size or fewer procs, "
            f"or raise the limit (docker run --shm-size=2g ...; on Linux as root: mount -o remount,size=4G {SHM_DIR})"
        )
    need = shm_bytes + private_bytes + HEADROOM_BYTES
    mem = available_memory()
    if mem is not None and need > mem[0]:
        raise ResourceError(
            f"{param}: {what} needs about {format_size(need)} of memory ({format_size(shm_bytes)} shared + "
            f"{format_size(private_bytes + HEADROOM_BYTES)} in this process) but {format_size(mem[0])} is available "
            f"({mem[1]}); choose a smaller size or fewer procs, or give the machine/container more memory "
            "(docker run --memory=...; on Binder the limit is fixed)"
        )
