"""The alpha-beta (Hockney) model of one point-to-point transfer.

Sending ``n`` bytes over a link costs

    t(n) = α + n / β

with α the per-message latency (seconds) and β the achievable bandwidth (bytes per second, one
direction). Two numbers follow:

* effective bandwidth  ``B_eff(n) = n / t(n) = β · n / (n + αβ)`` — how fast a message of size n really goes;
* half-bandwidth size  ``n½ = α·β`` — the size at which ``B_eff = β/2``. Smaller messages are
  *latency-bound* (time ≈ α), larger ones *bandwidth-bound* (time ≈ n/β).

β for a catalog link is its line rate times a sourced efficiency factor (see ``catalog.toml``): the gap
between the number on the datasheet and what software reaches is explicit, never hidden in a fit.

Everything is vectorised with numpy: pass an array of sizes (and/or arrays of α and β that broadcast)
and get an array back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _data, catalog
from ._validate import integer

__all__ = [
    "LinkParams",
    "link_params",
    "time_to_move",
    "transfer_time",
    "effective_bandwidth",
    "half_bandwidth_size",
    "sweep_all_links",
    "fit_alpha_beta",
    "LinkMeasurement",
    "link_measurements",
]


@dataclass(frozen=True)
class LinkParams:
    """α (seconds) and β (bytes/second, one direction) of a link, plus where they came from."""

    alpha_s: float
    beta_Bps: float
    label: str = ""

    def __post_init__(self) -> None:
        _check_alpha_beta(self.alpha_s, self.beta_Bps)

    @property
    def half_bandwidth_bytes(self) -> float:
        return self.alpha_s * self.beta_Bps

    def time(self, nbytes: ArrayLike) -> NDArray[np.float64] | float:
        return transfer_time(nbytes, self.alpha_s, self.beta_Bps)

    def bandwidth(self, nbytes: ArrayLike) -> NDArray[np.float64] | float:
        return effective_bandwidth(nbytes, self.alpha_s, self.beta_Bps)


def _check_alpha_beta(alpha_s: ArrayLike, beta_Bps: ArrayLike) -> None:
    a = np.asarray(alpha_s, dtype=float)
    b = np.asarray(beta_Bps, dtype=float)
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"alpha_s (latency, seconds) must be finite and >= 0, got {alpha_s!r}")
    if not np.all(np.isfinite(b)) or np.any(b <= 0):
        raise ValueError(f"beta_Bps (bandwidth, bytes/s) must be finite and > 0, got {beta_Bps!r}")


def _sizes(nbytes: ArrayLike) -> NDArray[np.float64]:
    n = np.asarray(nbytes, dtype=float)
    if not np.all(np.isfinite(n)) or np.any(n <= 0):
        raise ValueError("nbytes (message size, bytes) must be finite and > 0")
    return n


def _scalar_or_array(x: NDArray[np.float64]) -> NDArray[np.float64] | float:
    return float(x) if x.ndim == 0 else x


def link_params(link_id: str, *, links: int = 1, use_efficiency: bool = True) -> LinkParams:
    """α and β of ``links`` bonded catalog links (e.g. 18 NVLink 4 links of one H100).

    Args:
        link_id: a catalog link id ("nvlink4", "pcie5", "ib-ndr", ...).
        links: number of links used together (bandwidth adds up; latency does not).
        use_efficiency: False gives the line rate (the datasheet view), True what software reaches.
    """
    links = integer("links", links)
    link = catalog.get_link(link_id)
    per_link = link.beta_Bps if use_efficiency else link.line_GBps_dir * 1e9
    label = f"{links} x {link.name}" if links > 1 else link.name
    return LinkParams(alpha_s=link.alpha_s, beta_Bps=per_link * links, label=label)


def time_to_move(nbytes: float, link_id: str, links: int = 1) -> float:
    """Seconds to push ``nbytes`` through ``links`` catalog links at their achievable bandwidth (one message)."""
    if nbytes <= 0:
        return 0.0
    return float(link_params(link_id, links=links).time(nbytes))


def transfer_time(nbytes: ArrayLike, alpha_s: ArrayLike, beta_Bps: ArrayLike) -> NDArray[np.float64] | float:
    """t(n) = α + n/β, in seconds. ``nbytes`` in bytes, ``alpha_s`` in s, ``beta_Bps`` in B/s."""
    _check_alpha_beta(alpha_s, beta_Bps)
    n = _sizes(nbytes)
    return _scalar_or_array(np.asarray(alpha_s, dtype=float) + n / np.asarray(beta_Bps, dtype=float))


def effective_bandwidth(nbytes: ArrayLike, alpha_s: ArrayLike, beta_Bps: ArrayLike) -> NDArray[np.float64] | float:
    """B_eff(n) = n / (α + n/β), in bytes per second."""
    n = _sizes(nbytes)
    return _scalar_or_array(n / np.asarray(transfer_time(n, alpha_s, beta_Bps)))


def half_bandwidth_size(alpha_s: ArrayLike, beta_Bps: ArrayLike) -> NDArray[np.float64] | float:
    """n½ = α·β, in bytes: the message size that reaches half of β."""
    _check_alpha_beta(alpha_s, beta_Bps)
    return _scalar_or_array(np.asarray(alpha_s, dtype=float) * np.asarray(beta_Bps, dtype=float))


def sweep_all_links(sizes: ArrayLike, *, use_efficiency: bool = True) -> tuple[list[str], NDArray[np.float64]]:
    """Effective bandwidth (B/s) of every catalog link at every size, in one broadcast.

    Returns ``(link_ids, table)`` with ``table.shape == (len(link_ids), len(sizes))``.
    """
    n = _sizes(sizes).reshape(1, -1)
    ids = list(catalog.links())
    params = [link_params(i, use_efficiency=use_efficiency) for i in ids]
    alpha = np.array([p.alpha_s for p in params]).reshape(-1, 1)
    beta = np.array([p.beta_Bps for p in params]).reshape(-1, 1)
    return ids, n / (alpha + n / beta)


def fit_alpha_beta(nbytes: ArrayLike, seconds: ArrayLike) -> LinkParams:
    """Least-squares fit of t = α + n/β to measured (size, time) pairs.

    Needs at least two distinct sizes. Raises ValueError when the data cannot give a positive β
    (times that do not grow with size).
    """
    n = _sizes(nbytes).ravel()
    t = np.asarray(seconds, dtype=float).ravel()
    if n.shape != t.shape:
        raise ValueError(f"nbytes and seconds must have the same length, got {n.size} and {t.size}")
    if np.unique(n).size < 2:
        raise ValueError("fit_alpha_beta needs measurements at two or more distinct sizes")
    if not np.all(np.isfinite(t)) or np.any(t <= 0):
        raise ValueError("seconds (measured times) must be finite and > 0")
    slope, intercept = np.polyfit(n, t, 1)
    if slope <= 0:
        raise ValueError("measured times do not grow with size: no positive bandwidth fits these data")
    return LinkParams(alpha_s=max(float(intercept), 0.0), beta_Bps=1.0 / float(slope), label="fitted")


# ---------------------------------------------------------------- published measurements


@dataclass(frozen=True)
class LinkMeasurement:
    """A published measurement of ``links`` catalog links used together, GB/s in one direction."""

    id: str
    link: str
    links: int
    measured_GBps_dir: float
    what: str
    source: str

    @property
    def line_GBps_dir(self) -> float:
        return catalog.get_link(self.link).line_GBps_dir * self.links

    @property
    def model_GBps_dir(self) -> float:
        return catalog.get_link(self.link).achievable_GBps_dir * self.links


def link_measurements() -> tuple[LinkMeasurement, ...]:
    """The published measurements of ``data/link_measurements.toml`` (each with its source)."""
    return tuple(LinkMeasurement(**m) for m in _data.load("link_measurements")["measurement"])
