"""Isolation and multi-tenancy on GPU fabrics: partitions, what each tenant gets, the noisy neighbour,
the exposure of a control-plane address and the published cost of confidential computing.

Everything numeric comes from ``data/security.toml`` (sources there) or from the course's models:
:func:`nvcourse.costmodel.predict` for an NVLink partition's all-reduce, the fabric model
(:mod:`nvcourse.fabric`: routing and max-min fair rates) for two jobs sharing a fat-tree.

>>> [t.gpus for t in nvl72_split([9, 9])]
[36, 36]
>>> pkeys_can_talk(0x8001, 0x0001), pkeys_can_talk(0x0001, 0x0001)
(True, False)
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _data, catalog, costmodel
from ._validate import choice
from .fabric import Fabric, fat_tree, max_min_rates, ring_flows
from .i18n import translate as _

__all__ = [
    "raw", "TenantShare", "partition_sizes", "nvl72_split", "pkeys_can_talk", "pkey_partition", "exposure",
    "exposure_words", "QOS_MODES", "NoisyNeighbour", "shared_rates", "noisy_neighbour", "cc_measurements",
]

QOS_MODES = ("none", "ets", "strict")


def raw() -> dict[str, Any]:
    """The parsed ``data/security.toml`` (cached by ``_data.load``: treat it as read-only)."""
    return _data.load("security")


# --------------------------------------------------------------------------- NVLink partitions
@dataclass(frozen=True)
class TenantShare:
    """One tenant's NVLink partition and the all-reduce it gets (course model), times in seconds."""

    gpus: int
    nbytes: float
    time_s: float
    busbw_GBps: float
    algo: str


def partition_sizes(system: str) -> dict[str, Any]:
    """The NVLink partitioning record of ``system`` (``hgx-h100`` or ``gb200-nvl72``) from the data file."""
    parts = raw()["nvlink_partitions"]
    choice("system", system, parts)
    return dict(parts[system])


def nvl72_split(trays: list[int], nbytes: float = 2**30, *, system: str = "gb200-nvl72") -> list[TenantShare]:
    """Split an NVL72 rack's compute trays between tenants; each tenant's all-reduce of ``nbytes``.

    ``trays``: compute trays per tenant (each 4 GPUs), summing to at most the rack's 18. A tenant's
    partition is its own NVLink domain: NVSwitch ports are per GPU, so it keeps full per-GPU bandwidth
    but loses reach (no NVLink to the other tenant's GPUs) and, for small partitions, NVLS's advantage.
    """
    rec = partition_sizes("gb200-nvl72")
    per, total = int(rec["gpus_per_tray"]), int(rec["trays"])
    if not isinstance(trays, (list, tuple)) or not trays:
        raise ValueError("trays must be a non-empty list of tray counts, one per tenant")
    for t in trays:
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or t < 1:
            raise ValueError(f"trays: every tenant needs a whole number >= 1 of compute trays; got {t!r}")
    if sum(trays) > total:
        raise ValueError(f"trays must sum to at most the rack's {total} compute trays; got {sum(trays)}")
    out = []
    for t in trays:
        g = int(t) * per
        if g < 2:
            out.append(TenantShare(g, float(nbytes), 0.0, float("nan"), "none"))
            continue
        p = costmodel.predict("allreduce", system, g, nbytes)
        out.append(TenantShare(g, float(nbytes), p.time_s, p.busbw_GBps, p.algo))
    return out


# --------------------------------------------------------------------------- InfiniBand partitions
def pkey_partition(pkey: int) -> tuple[int, bool]:
    """(partition number, full member?) of a 16-bit P_Key: the low 15 bits and the top bit."""
    ib = raw()["infiniband"]
    bits, mbit = int(ib["pkey_bits"]), int(ib["membership_bit"])
    if isinstance(pkey, bool) or not isinstance(pkey, (int, np.integer)) or not 0 <= pkey < 1 << bits:
        raise ValueError(f"pkey must be an integer in 0..0x{(1 << bits) - 1:X}; got {pkey!r}")
    return int(pkey) & ((1 << mbit) - 1), bool(int(pkey) >> mbit & 1)


def pkeys_can_talk(a: int, b: int) -> bool:
    """Whether two ports with P_Keys ``a`` and ``b`` may exchange data packets: same partition number and
    at least one full member (two limited members of a partition cannot talk to each other)."""
    (pa, fa), (pb, fb) = pkey_partition(a), pkey_partition(b)
    return pa == pb and (fa or fb)


# --------------------------------------------------------------------------- control-plane exposure
# Example addresses that stand for public ones (RFC 5737, RFC 3849): ipaddress calls them private.
_DOCUMENTATION_NETS = tuple(ipaddress.ip_network(n) for n in (
    "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"))


def exposure(address: str) -> str:
    """Who can reach a socket bound to ``address`` (a MASTER_ADDR or a listen address):

    ``"this host only"`` (loopback), ``"every interface"`` (0.0.0.0 / ::, i.e. every network the host is
    on), ``"private network"`` (RFC 1918 / unique-local / link-local: whoever is on that network), or
    ``"internet"`` (a global address: anyone who can route to it, unless a firewall stops them).

    The documentation ranges (TEST-NET-1/2/3 and 2001:db8::/32, RFC 5737 / RFC 3849) are what examples use to
    stand for a public address, so they read as ``"internet"``, although Python's :mod:`ipaddress` files them
    under ``is_private`` (they are reserved, not routed).
    """
    try:
        ip = ipaddress.ip_address(str(address).strip().strip("[]"))
    except ValueError:
        msg = f"address must be an IPv4 or IPv6 address, e.g. 127.0.0.1 or 10.0.0.5; got {address!r}"
        raise ValueError(msg) from None
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "this host only"
    if ip.is_unspecified:
        return "every interface"
    if any(ip in net for net in _DOCUMENTATION_NETS if net.version == ip.version):
        return "internet"
    if ip.is_private or ip.is_link_local:
        return "private network"
    return "internet"


def exposure_words(where: str) -> str:
    """Who can reach an address (:func:`exposure`'s English answer), in the current language."""
    return {"this host only": _("this host only"), "every interface": _("every interface"),
            "private network": _("private network"), "internet": _("internet")}.get(where, where)


# --------------------------------------------------------------------------- noisy neighbour
def shared_rates(
    fabric: Fabric,
    jobs: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
    *,
    qos: str = "none",
    shares: list[float] | None = None,
    routing: str = "ideal",
    seed: int | None = 0,
) -> list[np.ndarray]:
    """Rates (GB/s) of several jobs' flows sharing ``fabric``; one array per job.

    ``qos``:

    * ``"none"``: one traffic class, every flow a max-min fair share (per-flow fairness: a job with more
      flows on a link takes more of it);
    * ``"ets"``: one class per job with guaranteed ``shares`` of every link (Ethernet ETS, or IB VL
      arbitration weights); each class first gets its share, then what the others leave (one
      redistribution pass: an approximation of work-conserving weighted scheduling);
    * ``"strict"``: strict priority in the order of ``jobs`` (the first job's class is served first).
    """
    choice("qos", qos, QOS_MODES)
    routed = [fabric.route(*flows, routing=routing, seed=seed) for flows in jobs]
    sizes = [int(np.asarray(f[0]).size) for f in jobs]
    cap = fabric.capacity_GBps

    def solve(k: int, capacity: np.ndarray) -> np.ndarray:
        fi, li = routed[k]
        return max_min_rates(sizes[k], fi, li, np.maximum(capacity, 1e-9)) if sizes[k] else np.zeros(0)

    def load(k: int, rate: np.ndarray) -> np.ndarray:
        fi, li = routed[k]
        return np.bincount(li, weights=rate[fi], minlength=cap.size)

    if qos == "none":
        off = np.cumsum([0, *sizes])
        fi = np.concatenate([routed[k][0] + off[k] for k in range(len(jobs))])
        li = np.concatenate([routed[k][1] for k in range(len(jobs))])
        rate = max_min_rates(int(off[-1]), fi, li, cap)
        return [rate[off[k] : off[k + 1]] for k in range(len(jobs))]
    if qos == "strict":
        out, left = [], cap.copy()
        for k in range(len(jobs)):
            r = solve(k, left)
            left = left - load(k, r)
            out.append(r)
        return out
    w = np.asarray(shares if shares is not None else [1.0 / len(jobs)] * len(jobs), dtype=float)
    if w.size != len(jobs) or np.any(w <= 0) or abs(w.sum() - 1) > 1e-9:
        raise ValueError(f"shares must give one fraction > 0 per job, summing to 1; got {shares!r}")
    first = [solve(k, cap * w[k]) for k in range(len(jobs))]
    loads = [load(k, first[k]) for k in range(len(jobs))]
    total = np.sum(loads, axis=0)
    return [solve(k, cap - (total - loads[k])) for k in range(len(jobs))]


@dataclass(frozen=True)
class NoisyNeighbour:
    """The victim job's all-reduce alone and next to the neighbour (seconds), and its network rates (GB/s)."""

    qos: str
    nbytes: float
    alone_s: float
    shared_s: float
    alone_rate_GBps: float
    shared_rate_GBps: float
    duty: float

    @property
    def slowdown(self) -> float:
        """Shared time / alone time, averaged over the neighbour's duty cycle."""
        return ((1 - self.duty) * self.alone_s + self.duty * self.shared_s) / self.alone_s


def noisy_neighbour(
    nbytes: float = 2**28,
    *,
    qos: str = "none",
    victim_share: float = 0.5,
    duty: float = 1.0,
    nodes: int = 16,
    oversubscription: float = 2.0,
    system: str = "dgx-h100",
) -> NoisyNeighbour:
    """Two jobs interleaved on a top-of-rack fat-tree (two hosts per leaf): the victim on the even nodes runs a
    hierarchical all-reduce of ``nbytes`` per GPU (ring flows between leaves); the neighbour on the odd nodes
    runs an all-to-all on every rail, all the time (``duty`` = fraction of the victim's collectives that
    overlap it). Rates from the fabric model; the all-reduce time from the course's cost model with that rate.
    """
    if not 0 <= duty <= 1:
        raise ValueError(f"duty must be in 0..1 (fraction of time the neighbour sends); got {duty!r}")
    if not 0 < victim_share < 1:
        raise ValueError(f"victim_share must be in (0, 1); got {victim_share!r}")
    if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 4 or nodes % 2:
        raise ValueError(f"nodes must be an even integer >= 4 (half per job); got {nodes!r}")
    sysm = catalog.get_system(system)
    nic = catalog.get_link(sysm.nic_link)
    g = sysm.nics_per_host
    fab = fat_tree(nodes, rails=g, nodes_per_su=2 * g, layout="tor", oversubscription=oversubscription,
                   port_GBps_dir=nic.line_GBps_dir)
    half = nodes // 2
    victim_nodes = np.arange(0, nodes, 2)
    neigh_nodes = np.arange(1, nodes, 2)
    # the victim's ring over its own nodes (ring_flows on a job-sized order, mapped to fabric nodes)
    vs, vr, vd, vdr = ring_flows(fat_tree(half, rails=g, port_GBps_dir=nic.line_GBps_dir))
    victim = (victim_nodes[vs], vr, victim_nodes[vd], vdr)
    a, b = np.nonzero(~np.eye(half, dtype=bool))
    r = np.tile(np.arange(g), a.size)
    neighbour = (neigh_nodes[np.repeat(a, g)], r, neigh_nodes[np.repeat(b, g)], r.copy())
    alone = shared_rates(fab, [victim], qos="none")[0].min()
    shared = shared_rates(fab, [victim, neighbour], qos=qos, shares=[victim_share, 1 - victim_share])[0].min()

    def t(rate_GBps: float) -> float:
        cfg = costmodel.configure(system, g, half, fabric=nic.id, net_Bps_per_gpu=rate_GBps * 1e9 * nic.efficiency)
        return float(costmodel.cost("allreduce", "hierarchical", cfg).time(nbytes))

    return NoisyNeighbour(qos, float(nbytes), t(alone), t(shared), float(alone), float(shared), float(duty))


# --------------------------------------------------------------------------- confidential computing
def cc_measurements(arch: str | None = None) -> list[dict[str, Any]]:
    """Published CC-on / CC-off throughput ratios (each one setup; see its ``label`` and ``src``)."""
    rows = [dict(m) for m in raw()["cc_measurements"]]
    if arch is not None:
        choice("arch", arch, sorted({m["arch"] for m in rows}))
        rows = [m for m in rows if m["arch"] == arch]
    return rows
