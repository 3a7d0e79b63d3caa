"""ECMP collisions in closed form: balls into bins.

Equal-cost multi-path routing hashes each flow onto one of ``k`` equal up-links. For ``m`` flows whose
hashes are independent and uniform, the number of flows on a link is Binomial(m, 1/k) and:

* a given flow shares its link with at least one other with probability ``1 - (1 - 1/k)^(m-1)``;
* the expected number of busy links is ``k (1 - (1 - 1/k)^m)``;
* if every flow could otherwise run at the link rate and colliding flows share equally, a flow gets
  ``1/(1 + X)`` of the rate, X ~ Binomial(m-1, 1/k), whose mean is ``k (1 - (1 - 1/k)^m) / m``
  (the busy links' total capacity shared by m flows);
* a bulk-synchronous step waits for the slowest flow, i.e. for the most loaded link:
  :func:`max_load_pmf` gives its exact distribution.

>>> round(collision_probability(32, 32), 3)   # 32 flows on 32 up-links: most flows collide
0.626
>>> round(mean_rate_fraction(32, 32), 3)
0.638
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .._validate import integer

__all__ = [
    "collision_probability",
    "any_collision_probability",
    "expected_busy_links",
    "mean_rate_fraction",
    "max_load_pmf",
    "expected_max_load",
]


def _check(m: int, k: int) -> tuple[int, int]:
    return integer("flows", m), integer("links", k)


def collision_probability(flows: int, links: int) -> float:
    """Probability that one given flow shares its link with at least one of the other ``flows - 1``."""
    m, k = _check(flows, links)
    return 1.0 - (1.0 - 1.0 / k) ** (m - 1)


def any_collision_probability(flows: int, links: int) -> float:
    """Probability that at least two flows share a link (the birthday problem)."""
    m, k = _check(flows, links)
    if m > k:
        return 1.0
    return 1.0 - math.prod(1.0 - i / k for i in range(m))


def expected_busy_links(flows: int, links: int) -> float:
    """Expected number of links that carry at least one flow."""
    m, k = _check(flows, links)
    return k * (1.0 - (1.0 - 1.0 / k) ** m)


def mean_rate_fraction(flows: int, links: int) -> float:
    """Mean rate of a flow as a fraction of the link rate when colliding flows share a link equally."""
    m, k = _check(flows, links)
    return expected_busy_links(m, k) / m


def max_load_pmf(flows: int, links: int) -> NDArray[np.float64]:
    """Exact distribution of the largest number of flows on one link: ``pmf[j] = P(max load = j)``.

    P(max <= t) = m!/k^m · [x^m] (sum_{j<=t} x^j/j!)^k, computed bin by bin in log space.
    """
    m, k = _check(flows, links)
    lg = np.array([math.lgamma(i + 1) for i in range(m + 1)])
    cdf = np.zeros(m + 1)
    for t in range(1, m + 1):
        # log of sum over compositions of n balls into b bins (each <= t) of n!/prod(j!) / k^n
        log_g = np.full(m + 1, -np.inf)
        log_g[0] = 0.0
        for _ in range(k):
            new = np.full(m + 1, -np.inf)
            for j in range(0, min(t, m) + 1):
                # choose j of the n balls for this bin: C(n, j) / k^j
                n = np.arange(j, m + 1)
                term = log_g[: m + 1 - j] + lg[n] - lg[j] - lg[n - j] - j * math.log(k)
                new[j:] = np.logaddexp(new[j:], term)
            log_g = new
        cdf[t] = math.exp(min(0.0, log_g[m]))
        if cdf[t] > 1 - 1e-15:
            cdf[t:] = 1.0
            break
    pmf = np.diff(cdf, prepend=0.0)
    return np.clip(pmf, 0.0, 1.0)


def expected_max_load(flows: int, links: int) -> float:
    """Expected number of flows on the busiest link: a synchronous step slows down by this factor."""
    pmf = max_load_pmf(flows, links)
    return float(np.dot(np.arange(pmf.size), pmf))
