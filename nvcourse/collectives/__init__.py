"""Runnable collectives on CPU processes: allreduce, reducescatter, allgather, broadcast.

A :class:`ProcessGroup` of N worker processes (start method "spawn") exchanges data through
shared memory with the algorithms of :data:`ALGORITHMS` (naive, ring, binary tree, recursive
halving-doubling, direct). Every call can be verified against numpy, slowed down to an emulated
link (:class:`LinkEmulation`) and traced step by step (:class:`TraceEvent`).

    >>> from nvcourse.collectives import ProcessGroup
    >>> with ProcessGroup(4) as pg:                                   # doctest: +SKIP
    ...     r = pg.run("allreduce", nbytes="1MiB", algo="ring", iters=5)
    ...     print(r.time_s, r.busbw_GBps, r.correct)

Units: sizes in bytes, times in seconds, bandwidths in GB/s = 1e9 B/s (nccl-tests' convention).
See also :mod:`nvcourse.collectives.model` (alpha-beta predictions), :mod:`.fit` (measure α, β),
:mod:`.plots` (timeline, ring animation frames) and ``nvcourse bench`` (:mod:`.cli`).
"""

from .group import DEFAULT_ALGO, CollectiveError, Fault, LinkEmulation, ProcessGroup, RunResult, TraceEvent
from .plan import ALGORITHMS, DTYPES, OPERATIONS, SUPPORTED, busbw_factor

__all__ = [
    "ProcessGroup",
    "LinkEmulation",
    "Fault",
    "CollectiveError",
    "RunResult",
    "TraceEvent",
    "ALGORITHMS",
    "OPERATIONS",
    "SUPPORTED",
    "DTYPES",
    "DEFAULT_ALGO",
    "busbw_factor",
]
