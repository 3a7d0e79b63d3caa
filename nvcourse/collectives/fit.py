"""Measure the alpha-beta parameters of this machine's shared-memory "link" (and γ, numpy's add rate),
and compare measured collectives with the machine model of :mod:`nvcourse.collectives.machine`
(:func:`measured_vs_model`; drawn by :func:`nvcourse.collectives.draw.plot_measured_vs_machine`)."""

from __future__ import annotations

import statistics
import time

import numpy as np

from . import machine, probes
from .model import predict
from .plan import SUPPORTED, build_plan, normalize_count

__all__ = [
    "least_squares_alpha_beta",
    "fit_alpha_beta",
    "measure_gamma",
    "DEFAULT_FIT_SIZES",
    "measure_machine_for",
    "measured_vs_model",
    "median_abs_error",
]

#: Ping-pong sizes in bytes: 8 B to 16 MiB.
DEFAULT_FIT_SIZES: tuple[int, ...] = tuple(8 * 4**k for k in range(12))


def least_squares_alpha_beta(sizes, times) -> tuple[float, float]:
    """Fit ``t = α + n/β`` by least squares, weighting each point by 1/t (relative error).

    Returns ``(alpha_s, beta_Bps)``; α is clipped at 0.
    """
    n = np.asarray(sizes, dtype=float)
    t = np.asarray(times, dtype=float)
    if n.shape != t.shape or len(n) < 2 or len(set(n.tolist())) < 2:
        raise ValueError("sizes and times must have the same length, with at least two different sizes")
    w = 1.0 / t
    A = np.stack([np.ones_like(n), n], axis=1) * w[:, None]
    (alpha, inv_beta), *_ = np.linalg.lstsq(A, t * w, rcond=None)
    if inv_beta <= 0:
        raise ValueError("times do not grow with size; cannot fit a bandwidth")
    return max(0.0, float(alpha)), float(1.0 / inv_beta)


def fit_alpha_beta(group, sizes=DEFAULT_FIT_SIZES, *, iters: int = 20, warmup: int = 3) -> tuple[float, float]:
    """Ping-pong between ranks 0 and 1 of ``group`` at each size; returns ``(alpha_s, beta_Bps)``.

    One "message" is a copy of n bytes from one rank's buffer into the other's, then a flag: the
    one-way time is half the median round trip. On a busy machine (a classroom hub on a few cores) other programs
    can take the CPU mid-sweep so that the times do not grow with the size; the sweep is then measured again, up
    to ``FIT_TRIES`` times, keeping each size's fastest time (interference only ever adds time), before giving up
    with a ValueError that says why.
    """
    best: list[float] = []
    for _ in range(FIT_TRIES):
        times = [group.pingpong(int(s), iters=iters, warmup=warmup) for s in sizes]
        best = [min(a, b) for a, b in zip(best, times)] if best else times
        try:
            return least_squares_alpha_beta(list(sizes), best)
        except ValueError as exc:
            if "cannot fit a bandwidth" not in str(exc):
                raise
    raise ValueError(f"the ping-pong times did not grow with the size in {FIT_TRIES} sweeps, so no bandwidth can be "
                     "fitted: other programs are taking the CPUs; run the cell again when the machine is quieter")


#: Sweeps :func:`fit_alpha_beta` measures before it gives up on a machine too busy to time.
FIT_TRIES = 3


def measure_gamma(nbytes: int = 32 * 2**20, *, reps: int = 5, dtype: str = "float32") -> float:
    """Reduction rate γ in bytes/s: ``np.add(a, b, out=a)`` on ``nbytes``-byte arrays in one process (median)."""
    n = max(1, nbytes // np.dtype(dtype).itemsize)
    a = np.ones(n, dtype=dtype)
    b = np.ones(n, dtype=dtype)
    np.add(a, b, out=a)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        np.add(a, b, out=a)
        ts.append(time.perf_counter() - t0)
    return n * a.itemsize / statistics.median(ts)


# -- measured vs model (machine model of :mod:`.machine`) ----------------------------------------

def _footprint_grid(lo: int, hi: int) -> list[int]:
    """Powers of 4 times 64 KiB covering [lo, hi] (at least two points)."""
    grid = [64 * 2**10]
    while grid[-1] < hi:
        grid.append(grid[-1] * 4)
    while len(grid) > 2 and grid[1] <= lo:
        grid.pop(0)
    if len(grid) < 2:
        grid.append(grid[-1] * 4)
    return grid


def measure_machine_for(group, sizes, *, op: str = "allreduce", algos=None, dtype: str = "float32",
                        reps: int = 5, min_time_s: float = 2e-3):
    """:func:`~nvcourse.collectives.probes.measure_machine` over just the footprints these calls touch; when the
    group has more ranks than this machine has cores (and at least 3), also α for that many ranks."""
    p = group.nprocs
    itemsize = np.dtype(dtype).itemsize
    algos = _algos(op, p, algos)
    fps = []
    for s in sizes:
        for a in algos:
            count = normalize_count(op, p, int(s), itemsize)
            fps.append(machine.footprint_bytes(build_plan(op, a, p, count), itemsize))
    return probes.measure_machine(group if p >= 2 else None, footprints=_footprint_grid(min(fps), max(fps)),
                                  max_procs=p, reps=reps, min_time_s=min_time_s, shared_procs=(p,))


def _algos(op: str, p: int, algos) -> list[str]:
    if algos is None:
        return [a for a in SUPPORTED[op] if not (a == "rhd" and p & (p - 1))]
    return [algos] if isinstance(algos, str) else list(algos)


def measured_vs_model(group, sizes=(64 * 2**10, 256 * 2**10, 2**20), algos=None, *, op: str = "allreduce",
                      params=None, iters: int = 5, warmup: int = 1, dtype: str = "float32",
                      alpha_beta: tuple | None = None) -> list[dict]:
    """Run ``op`` on ``group`` for every size and algorithm and put the machine model next to it.

    ``params``: :class:`~nvcourse.collectives.machine.MachineParams` (measured with
    :func:`measure_machine_for` when None). ``alpha_beta=(α, β, γ)``: also give the closed-form
    prediction of :func:`nvcourse.collectives.model.predict` (column ``alpha_beta_s``).
    Returns one dict per call: ``procs, op, algo, nbytes, measured_s, model_s, error`` (model/measured
    − 1), ``correct`` (and ``alpha_beta_s``, ``alpha_beta_error``).

        >>> with ProcessGroup(2) as pg:                                    # doctest: +SKIP
        ...     rows = measured_vs_model(pg, [2**16, 2**20], ["ring", "direct"])
        >>> plot_measured_vs_machine(rows)                                 # doctest: +SKIP
    """
    p = group.nprocs
    algos = _algos(op, p, algos)
    if params is None:
        params = measure_machine_for(group, sizes, op=op, algos=algos, dtype=dtype)
    rows = []
    for s in sizes:
        for a in algos:
            r = group.run(op, int(s), algo=a, iters=iters, warmup=warmup, dtype=dtype)
            pred = machine.predict_machine(op, a, p, r.nbytes, params, dtype=dtype)
            row = {"procs": p, "op": op, "algo": a, "nbytes": r.nbytes, "measured_s": r.time_s,
                   "model_s": pred, "error": pred / r.time_s - 1 if r.time_s > 0 else float("nan"),
                   "correct": r.correct}
            if alpha_beta is not None:
                ab = predict(op, a, p, r.nbytes, *alpha_beta)
                row["alpha_beta_s"] = ab
                row["alpha_beta_error"] = ab / r.time_s - 1 if r.time_s > 0 else float("nan")
            rows.append(row)
    return rows


def median_abs_error(rows, key: str = "error") -> float:
    """Median of ``|row[key]|`` over rows (a fraction: 0.3 = 30 %)."""
    errs = [abs(r[key]) for r in rows if key in r and r[key] == r[key]]
    if not errs:
        raise ValueError(f"no rows with {key!r}")
    return statistics.median(errs)
