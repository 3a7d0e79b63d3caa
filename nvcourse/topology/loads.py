"""The routing model of an interconnect graph: bundle capacities and the load each demand puts on them.

A flow between two GPUs follows the paths with the fewest links, split among them in proportion to each path's
bottleneck bandwidth. On an NVSwitch system this is what the hardware does (a GPU sprays over all its links, so
a chip with 5 links gets 5/18 of the traffic); on the DGX-1 it stands for software relaying through an
intermediate GPU (pairs without NVLink). Bandwidths in GB/s (10^9 B/s) per direction; edges marked
``unbounded`` have infinite capacity. :mod:`~nvcourse.topology.metrics` and :mod:`~nvcourse.topology.rings`
build on it.
"""

from __future__ import annotations

import math
from collections import defaultdict, deque

import networkx as nx

__all__ = ["capacity", "link_loads", "max_scale"]


def capacity(G: nx.Graph, u: str, v: str) -> float:
    """Capacity of the bundle u-v in GB/s per direction (``inf`` when unbounded).

    Raises ValueError when the edge has no known bandwidth (e.g. a parsed ``NV12`` without a link generation).
    """
    data = G.edges[u, v]
    if data.get("unbounded"):
        return math.inf
    bw = data.get("GBps_dir")
    if bw is None:
        raise ValueError(
            f"link {u}-{v} ({data.get('link') or 'unknown type'}, x{data.get('count', 1)}) has no known bandwidth; "
            "give the link generation (e.g. nvlink='nvlink4', pcie='pcie5')"
        )
    return float(bw)


def _shortest_paths_from(G: nx.Graph, src: str) -> dict[str, list[str]]:
    """BFS predecessor lists (all shortest paths) from src."""
    dist = {src: 0}
    preds: dict[str, list[str]] = {src: []}
    queue = deque([src])
    while queue:
        u = queue.popleft()
        for v in G.neighbors(u):
            if v not in dist:
                dist[v] = dist[u] + 1
                preds[v] = [u]
                queue.append(v)
            elif dist[v] == dist[u] + 1:
                preds[v].append(u)
    return preds


def _paths(preds: dict[str, list[str]], src: str, dst: str) -> list[list[str]]:
    if dst == src:
        return [[src]]
    out = []
    for p in preds.get(dst, []):
        for head in _paths(preds, src, p):
            out.append(head + [dst])
    return out


def link_loads(G: nx.Graph, demands: dict[tuple[str, str], float]) -> dict[tuple[str, str], float]:
    """Load on every *directed* bundle (u, v), in the demands' units (GB/s per direction).

    Each demand follows its fewest-link paths, split in proportion to each path's bottleneck capacity
    (equal split when all are unbounded). Raises ValueError if a destination is unreachable.
    """
    loads: dict[tuple[str, str], float] = defaultdict(float)
    by_src: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for (a, b), amount in demands.items():
        if a != b and amount:
            by_src[a].append((b, amount))
    caps: dict[tuple[str, str], float] = {}  # capacity() per bundle, looked up once (NVL72: ~750k lookups)

    def cap(u: str, v: str) -> float:
        c = caps.get((u, v))
        if c is None:
            c = caps[(u, v)] = capacity(G, u, v)
        return c

    for src, items in by_src.items():
        preds = _shortest_paths_from(G, src)
        for dst, amount in items:
            if dst not in preds:
                raise ValueError(f"no route from {src} to {dst}")
            paths = _paths(preds, src, dst)
            weights = [min(cap(p[i], p[i + 1]) for i in range(len(p) - 1)) for p in paths]
            if all(math.isinf(w) for w in weights):
                weights = [1.0] * len(paths)
            else:
                weights = [w if not math.isinf(w) else max(x for x in weights if not math.isinf(x)) for w in weights]
            total = sum(weights)
            for p, w in zip(paths, weights):
                share = amount * w / total
                for i in range(len(p) - 1):
                    loads[(p[i], p[i + 1])] += share
    return dict(loads)


def max_scale(G: nx.Graph, loads: dict[tuple[str, str], float]) -> float:
    """Largest factor by which the loads can grow before some bundle is full."""
    scale = math.inf
    for (u, v), load in loads.items():
        if load > 0:
            scale = min(scale, capacity(G, u, v) / load)
    return scale
