"""What a :class:`~nvcourse.collectives.ProcessGroup` call takes and returns: link emulation, fault
injection, trace events and results. Times in seconds, sizes in bytes, bandwidths in GB/s (1e9 B/s)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

import numpy as np

from .._validate import choice
from . import plan as _plan
from .plan import OPERATIONS

__all__ = ["LinkEmulation", "Fault", "TraceEvent", "RunResult", "fill_inputs", "expected_outputs",
           "emulation_tuple", "table_header", "table_row", "table_footer", "format_table"]


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
        choice("fault action", self.action, ("kill", "exit", "hang", "raise"))


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


def fill_inputs(ins: list[np.ndarray], dtype: np.dtype) -> None:
    """Fill each rank's input with small integers (sums exact in every dtype), different on every rank."""
    rng = np.random.default_rng(12345)
    base = rng.integers(-8, 8, size=len(ins[0])).astype(dtype)
    for r, a in enumerate(ins):
        shift = (977 * r) % len(a)
        a[: len(a) - shift] = base[shift:]
        a[len(a) - shift:] = base[:shift]
        a += r % 5


def expected_outputs(op: str, ins: list[np.ndarray], count: int, p: int) -> list[np.ndarray] | None:
    """numpy's answer for every rank's output (None for a ping-pong, which is not verified)."""
    if op in ("allreduce", "reducescatter"):
        total = ins[0].copy()
        for a in ins[1:]:
            total += a
        if op == "allreduce":
            return [total] * p
        m = count // p
        return [total[r * m:(r + 1) * m] for r in range(p)]
    if op == "allgather":
        return [np.concatenate(ins)] * p
    if op == "broadcast":
        return [ins[0].copy()] * p
    return None  # pingpong: rank 0 gets rank 1's input back, rank 1 gets rank 0's


def emulation_tuple(emulation: LinkEmulation | None) -> tuple[float, float] | None:
    """``(latency_s, bandwidth_Bps)`` for the workers, or None when nothing is emulated."""
    if emulation is None:
        return None
    if not isinstance(emulation, LinkEmulation):
        raise ValueError(f"emulation must be a LinkEmulation or None; got {type(emulation).__name__}")
    if emulation.latency_s == 0 and emulation.bandwidth_Bps == float("inf"):
        return None
    return (emulation.latency_s, emulation.bandwidth_Bps)


# ---------------------------------------------------------------- rows as nccl-tests prints them

_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half", "int32": "int32", "int64": "int64"}


def table_header(title: str) -> list[str]:
    """The header lines of nccl-tests' table (sizes in bytes, times in µs, bandwidths in GB/s)."""
    return [
        f"# {title}",
        "#",
        f"# {'size':>10} {'count':>12} {'type':>6} {'algo':>7} {'time':>10} {'algbw':>8} {'busbw':>8} {'#wrong':>7}",
        f"# {'(B)':>10} {'(elements)':>12} {'':>6} {'':>7} {'(us)':>10} {'(GB/s)':>8} {'(GB/s)':>8} {'':>7}",
    ]


def table_row(r: dict) -> str:
    wrong = "N/A" if r["wrong"] is None else str(r["wrong"])
    return (f"  {r['bytes']:>10} {r['count']:>12} {_TYPE_NAMES.get(r['dtype'], r['dtype']):>6} {r['algo']:>7} "
            f"{r['time_s'] * 1e6:>10.2f} {r['algbw_GBps']:>8.3f} {r['busbw_GBps']:>8.3f} {wrong:>7}")


def table_footer(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    bad = sum(1 for r in rows if r["correct"] is False)
    return [f"# Avg bus bandwidth : {sum(r['busbw_GBps'] for r in rows) / len(rows):.3f} GB/s",
            f"# Out of bounds values : {bad} {'OK' if not bad else 'FAILED'}"]


def format_table(rows: list[dict], title: str) -> str:
    return "\n".join([*table_header(title), *(table_row(r) for r in rows), *table_footer(rows)])
