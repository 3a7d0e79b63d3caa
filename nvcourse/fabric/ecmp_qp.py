"""ECMP with several queue pairs per connection: more flows to hash, fewer hot links.

RoCE (and any per-flow-hashing Ethernet fabric) puts every flow — a UDP 5-tuple, i.e. one queue pair
(QP) with its own source port — on one of ``k`` equal up-links by hashing. A collective whose ``m``
connections each carry the same bytes is as slow as its most loaded link. Splitting each connection
into ``q`` QPs (NCCL's ``NCCL_IB_QPS_PER_CONNECTION``; Meta's "E-ECMP" for Llama 3) hashes ``m·q``
sub-flows of ``1/q`` of the bytes each, so the busiest link's load in connection units is
``M/q`` with ``M`` the most sub-flows on one link (balls into bins; the exact pmf as in
:func:`nvcourse.fabric.ecmp.max_load_pmf`, here by polynomial powers so that ``m·q`` can be large).
A connection never runs faster than its NIC (the link rate), so the step's slowdown against a
perfectly balanced fabric is ``E[max(1, M/q)] / max(1, m/k)``.

:func:`simulate_slowdown` draws the same hashing with a seeded generator to check the closed form.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["expected_slowdown", "simulate_slowdown", "hot_link_load"]


def _check(connections: int, links: int, qps: int) -> None:
    for name, v in (("connections", connections), ("links", links), ("qps", qps)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1; got {v!r}")
    if connections * qps > 1024:
        raise ValueError(f"connections x qps must be at most 1024; got {connections * qps}")


def _trunc_mul(a: np.ndarray, la: float, b: np.ndarray, lb: float, n: int) -> tuple[np.ndarray, float]:
    """(a·b) truncated to degree n, rescaled to max 1; the log of the scale is carried separately."""
    c = np.convolve(a, b)[: n + 1]
    top = c.max()
    return c / top, la + lb + math.log(top)


def max_load_pmf(balls: int, bins: int) -> np.ndarray:
    """``pmf[j] = P(most balls in one bin = j)`` for ``balls`` thrown uniformly into ``bins``.

    P(max <= t) = n!/k^n · [x^n] (sum_{j<=t} x^j/j!)^k, the power taken by squaring with rescaling.
    """
    n, k = balls, bins
    # x = s·y with s = n/k puts the coefficients' peak near degree n (no underflow at n >> k)
    ls = math.log(n / k)
    lg_norm = math.lgamma(n + 1) - n * math.log(k) - n * ls
    cdf = np.zeros(n + 1)
    lo = max(1, math.ceil(n / k))
    cdf[:lo] = 0.0
    for t in range(lo, n + 1):
        logs = np.array([j * ls - math.lgamma(j + 1) for j in range(t + 1)])
        base = np.exp(logs - logs.max())
        res, lres = np.array([1.0]), 0.0
        p, lp, e = base, float(logs.max()), k
        while e:
            if e & 1:
                res, lres = _trunc_mul(res, lres, p, lp, n)
            e >>= 1
            if e:
                p, lp = _trunc_mul(p, lp, p, lp, n)
        coef = res[n] if res.size > n else 0.0
        cdf[t] = min(1.0, math.exp(lg_norm + lres) * coef) if coef > 0 else 0.0
        if cdf[t] > 1 - 1e-13:
            cdf[t:] = 1.0
            break
    return np.clip(np.diff(cdf, prepend=0.0), 0.0, 1.0)


def hot_link_load(connections: int, links: int, qps: int = 1) -> float:
    """Expected load of the busiest link in connection units, ``E[M/q]`` (1.0 = one connection's bytes)."""
    _check(connections, links, qps)
    pmf = max_load_pmf(connections * qps, links)
    return float(np.dot(np.arange(pmf.size), pmf)) / qps


def expected_slowdown(connections: int, links: int, qps: int = 1) -> float:
    """Step time over the balanced fabric's: ``E[max(1, M/q)] / max(1, m/k)`` (1.0 = no hot link)."""
    _check(connections, links, qps)
    pmf = max_load_pmf(connections * qps, links)
    loads = np.maximum(1.0, np.arange(pmf.size) / qps)
    return float(np.dot(loads, pmf)) / max(1.0, connections / links)


def simulate_slowdown(connections: int, links: int, qps: int = 1, *, trials: int = 2000,
                      seed: int = 0) -> tuple[float, float]:
    """Monte-Carlo mean slowdown and its standard error: hash ``m·q`` sub-flows uniformly onto ``k`` links."""
    _check(connections, links, qps)
    if trials < 2:
        raise ValueError(f"trials must be >= 2; got {trials}")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, links, size=(trials, connections * qps))
    flat = (np.arange(trials)[:, None] * links + picks).ravel()
    counts = np.bincount(flat, minlength=trials * links).reshape(trials, links)
    slow = np.maximum(1.0, counts.max(axis=1) / qps) / max(1.0, connections / links)
    return float(slow.mean()), float(slow.std(ddof=1) / np.sqrt(trials))
