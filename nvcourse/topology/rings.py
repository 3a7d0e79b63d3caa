"""NCCL-style rings over an interconnect graph: how many disjoint rings fit, and each one's bandwidth.

Bandwidths in GB/s (10^9 B/s) per direction, on the graphs of :mod:`nvcourse.topology.metrics`; link loads from
:mod:`nvcourse.topology.loads`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import networkx as nx

from .builders import gpu_nodes, natural_key
from .loads import capacity, link_loads, max_scale

__all__ = ["RingPlan", "nccl_rings"]


@dataclass(frozen=True)
class RingPlan:
    """NCCL-style rings over NVLink.

    A ring is directed (data flows one way round it) and uses one link out of and one link into every GPU;
    a full-duplex link can carry one ring in each direction. So on a direct mesh a GPU with L links carries at
    most L rings, each pinned to its cables. On NVSwitch systems NCCL's *channels* (parallel rings/trees) are
    set by its topology search and tuning, not by L, and the switches spread each channel over all NVLinks:
    here a "ring" is one link's worth of bandwidth, and the aggregate (rings x per-ring bandwidth) is the same.

    Attributes:
        n_rings: number of directed rings.
        ring_GBps_dir: bandwidth of one ring, GB/s per direction (one link's line rate).
        total_GBps_dir: n_rings x ring_GBps_dir: what a ring all-reduce can use per GPU (its busbw ceiling
            at line rate; NCCL reaches about link.efficiency of it).
        rings: GPU orders (one per undirected cycle; each is used in both directions when ``bidirectional``).
        method: ``'switch'``, ``'hamiltonian'`` or ``'pcie'``.
    """

    n_rings: int
    ring_GBps_dir: float
    rings: tuple[tuple[str, ...], ...]
    method: str
    notes: str = ""
    bidirectional: bool = True
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def total_GBps_dir(self) -> float:
        return self.n_rings * self.ring_GBps_dir


def _is_nvlink_edge(G: nx.Graph, u: str, v: str) -> bool:
    link = G.edges[u, v].get("link") or ""
    return link.startswith("nvlink") or G.edges[u, v].get("kind") == "nvlink"


def nccl_rings(G: nx.Graph) -> RingPlan:
    """Rings in the spirit of NCCL's ring search, and their bandwidth (GB/s per direction).

    * NVSwitch fabric (every GPU wired to every switch): a switch with k links to each GPU carries k rings'
      worth of bandwidth; rings = sum over switches = links per GPU (an accounting of bandwidth: NCCL's own
      channel count differs, and each channel is sprayed over all links).
    * Direct NVLink (DGX-1): the largest set of link-disjoint Hamiltonian cycles (a pair with 2 NVLinks can be
      used by two cycles), each used in both directions: 2 directed rings per cycle.
    * No NVLink between GPUs (PCIe): one ring GPU0 -> GPU1 -> ... at the throughput of that ring pattern.
    """
    gpus = gpu_nodes(G)
    n = len(gpus)
    if n < 2:
        raise ValueError(f"rings need at least 2 GPUs, the graph has {n}")
    gset = set(gpus)
    switches = [x for x, k in G.nodes(data="kind") if k == "nvswitch"]
    direct = [(u, v) for u, v in G.edges if u in gset and v in gset and _is_nvlink_edge(G, u, v)]
    if switches and not direct:
        rings_total = 0
        per_link = math.inf
        for s in switches:
            if not gset <= set(G.neighbors(s)):
                raise ValueError(f"switch {s} does not reach every GPU; ring count undefined for this model")
            counts = [G.edges[s, g].get("count", 1) for g in gpus]
            rings_total += min(counts)
            for g in gpus:
                per_link = min(per_link, capacity(G, s, g) / G.edges[s, g].get("count", 1))
        return RingPlan(rings_total, per_link, (tuple(gpus),), "switch",
                        notes=f"{rings_total} rings, one link per GPU each, through {len(switches)} switch chip(s)",
                        bidirectional=False)
    if direct:
        return _hamiltonian_rings(G, gpus)
    rate = max_scale(G, link_loads(G, {(a, b): 1.0 for a, b in zip(gpus, gpus[1:] + gpus[:1])}))
    return RingPlan(1, rate, (tuple(gpus),), "pcie", notes="no NVLink: one ring over the PCIe tree",
                    bidirectional=False)


def _hamiltonian_rings(G: nx.Graph, gpus: list[str]) -> RingPlan:
    n = len(gpus)
    if n > 12:
        raise ValueError(f"Hamiltonian ring search is limited to 12 GPUs, the graph has {n}")
    gset = set(gpus)
    count = {}
    per_link = math.inf
    for u, v in G.edges:
        if u in gset and v in gset and _is_nvlink_edge(G, u, v):
            c = G.edges[u, v].get("count", 1)
            count[frozenset((u, v))] = c
            per_link = min(per_link, capacity(G, u, v) / c)
    adj = {g: sorted((h for h in gpus if frozenset((g, h)) in count), key=natural_key) for g in gpus}
    cycles: list[tuple[str, ...]] = []

    def extend(path: list[str], seen: set[str]) -> None:
        if len(path) == n:
            if path[0] in adj[path[-1]] and path[1] < path[-1]:  # each undirected cycle once
                cycles.append(tuple(path))
            return
        for nb in adj[path[-1]]:
            if nb not in seen:
                seen.add(nb)
                path.append(nb)
                extend(path, seen)
                path.pop()
                seen.remove(nb)

    extend([gpus[0]], {gpus[0]})
    if n == 2:
        cycles = [tuple(gpus)]

    def edges_of(cycle: tuple[str, ...]) -> list[frozenset]:
        if n == 2:
            return [frozenset(cycle), frozenset(cycle)]
        return [frozenset((cycle[i], cycle[(i + 1) % n])) for i in range(n)]

    best: list[tuple[str, ...]] = []
    bound = min(sum(count.get(frozenset((g, h)), 0) for h in gpus) for g in gpus) // 2

    def pack(start: int, chosen: list[tuple[str, ...]], left: dict) -> None:
        nonlocal best
        if len(chosen) > len(best):
            best = list(chosen)
        if len(best) >= bound:
            return
        for i in range(start, len(cycles)):
            es = edges_of(cycles[i])
            need = defaultdict(int)
            for e in es:
                need[e] += 1
            if all(left.get(e, 0) >= k for e, k in need.items()):
                for e, k in need.items():
                    left[e] -= k
                chosen.append(cycles[i])
                pack(i, chosen, left)
                chosen.pop()
                for e, k in need.items():
                    left[e] += k
            if len(best) >= bound:
                return

    pack(0, [], dict(count))
    if not best:
        raise ValueError("no NVLink ring visits every GPU")
    return RingPlan(2 * len(best), per_link, tuple(best), "hamiltonian",
                    notes=f"{len(best)} link-disjoint Hamiltonian cycle(s), each used in both directions",
                    extra={"hamiltonian_cycles_found": len(cycles)})


