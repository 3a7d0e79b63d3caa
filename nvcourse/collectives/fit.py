"""Measure the alpha-beta parameters of this machine's shared-memory "link" (and γ, numpy's add rate)."""

from __future__ import annotations

import statistics
import time

import numpy as np

__all__ = ["least_squares_alpha_beta", "fit_alpha_beta", "measure_gamma", "DEFAULT_FIT_SIZES"]

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
    one-way time is half the median round trip.
    """
    times = [group.pingpong(int(s), iters=iters, warmup=warmup) for s in sizes]
    return least_squares_alpha_beta(list(sizes), times)


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
