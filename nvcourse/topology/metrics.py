"""Metrics of an interconnect graph: bisection, hops, traffic patterns and their throughput, a summary (link
loads: :mod:`nvcourse.topology.loads`; NCCL-style rings: :mod:`nvcourse.topology.rings`).

Every bandwidth here is in GB/s (10^9 B/s) **per direction**: a full-duplex bundle with ``GBps_dir = 50``
carries 50 GB/s one way *and* 50 GB/s the other way at the same time. NVIDIA's headline "bisection"
figures (DGX A100 2.4 TB/s, DGX H100 3.6 TB/s) add both directions: divide them by two to compare.

The graphs are those of :func:`nvcourse.topology.build_system_graph` or of the ``nvidia-smi topo -m`` reader:
undirected, one edge per bundle of links, capacity = ``GBps_dir``; edges marked ``unbounded`` have infinite
capacity. A switch chip is a node: it forwards anything (a non-blocking crossbar), so only its links limit.

The routing model behind link loads and throughput is in :mod:`nvcourse.topology.loads`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import networkx as nx

from .builders import gpu_nodes, natural_key
from .loads import capacity, link_loads, max_scale
from .rings import nccl_rings

__all__ = [
    "PATTERNS",
    "Bisection",
    "capacity",
    "cut_capacity",
    "bisection_bandwidth",
    "hop_counts",
    "hop_stats",
    "traffic",
    "link_loads",
    "pattern_throughput",
    "alltoall_throughput",
    "busiest_links",
    "pattern_report",
    "summary",
]

PATTERNS = ("ring", "all-to-all", "one-to-all")


# --------------------------------------------------------------------------------------------- bisection


@dataclass(frozen=True)
class Bisection:
    """Minimum bisection: the smallest cut capacity over all balanced splits of the GPUs.

    Attributes:
        GBps_dir: cut capacity in GB/s per direction (from side A to side B; equal the other way).
        side_a, side_b: one partition achieving it.
        method: ``'max-flow'`` (every split enumerated, min-cut by max-flow with switches free to sit on
            either side) or ``'uniform-crossbar'`` (exact closed form, see :func:`bisection_bandwidth`).
        splits: number of balanced splits examined (``None`` for the closed form).
    """

    GBps_dir: float
    side_a: tuple[str, ...]
    side_b: tuple[str, ...]
    method: str
    splits: int | None = None

    @property
    def GBps_bidir(self) -> float:
        """Both directions added: the convention of NVIDIA's headline bisection figures."""
        return 2 * self.GBps_dir


def _flow_network(G: nx.Graph) -> nx.DiGraph:
    D = nx.DiGraph()
    D.add_nodes_from(G.nodes)
    for u, v in G.edges:
        c = capacity(G, u, v)
        if math.isinf(c):
            D.add_edge(u, v)  # networkx: no 'capacity' attribute = infinite capacity
            D.add_edge(v, u)
        else:
            D.add_edge(u, v, capacity=c)
            D.add_edge(v, u, capacity=c)
    return D


def cut_capacity(G: nx.Graph, side_a: Iterable[str], side_b: Iterable[str]) -> float:
    """Minimum capacity (GB/s per direction) of a cut separating GPU set A from GPU set B.

    All other nodes (switches, CPUs, NICs) may fall on either side: this is the max-flow from A to B.
    """
    D = _flow_network(G)
    return _cut_in(D, list(side_a), list(side_b))


def _cut_in(D: nx.DiGraph, side_a: list[str], side_b: list[str]) -> float:
    s, t = ("__source__",), ("__sink__",)
    H = D.copy()
    for a in side_a:
        H.add_edge(s, a)
    for b in side_b:
        H.add_edge(b, t)
    try:
        return float(nx.maximum_flow_value(H, s, t))
    except nx.NetworkXUnbounded:
        return math.inf


def _uniform_crossbar(G: nx.Graph, gpus: list[str]) -> float | None:
    """Closed-form bisection when every non-GPU node is a switch wired to every GPU with equal capacity.

    Then no GPU-GPU edge exists and a switch's cut contribution is min(capacity to side A, to side B) = (n/2) c_s
    whichever side it is put on and whatever the split, so every balanced split has the same cut.
    """
    n = len(gpus)
    gset = set(gpus)
    total = 0.0
    for node in G.nodes:
        if node in gset:
            if any(nb in gset for nb in G.neighbors(node)):
                return None
            continue
        if set(G.neighbors(node)) != gset:
            return None
        caps = {capacity(G, node, g) for g in gpus}
        if len(caps) != 1:
            return None
        total += (n // 2) * caps.pop()
    return total


def bisection_bandwidth(G: nx.Graph, *, max_enumerate: int = 16, closed_form_first: bool = False) -> Bisection:
    """Minimum bisection bandwidth of the GPUs of ``G``, GB/s **per direction**.

    Exact in both methods:

    * up to ``max_enumerate`` GPUs, every balanced split is enumerated (8 GPUs: C(8,4)/2 = 35 splits) and its
      min-cut found by max-flow, switches and CPUs free to go on either side;
    * larger graphs must be uniform crossbars (every GPU wired to every switch, the same count per switch,
      no GPU-GPU links, like the NVL72): then each switch contributes (n/2) x its per-GPU bandwidth for
      *every* balanced split. Other large graphs raise ValueError.

    ``closed_form_first``: use the uniform-crossbar result whenever it applies, also for small graphs (the
    same value, tested; a live widget then skips the 35 max-flows of an 8-GPU NVSwitch box).
    """
    gpus = gpu_nodes(G)
    n = len(gpus)
    if n < 2:
        raise ValueError(f"bisection needs at least 2 GPUs, the graph has {n}")
    if closed_form_first:
        value = _uniform_crossbar(G, gpus)
        if value is not None:
            return Bisection(value, tuple(gpus[: n // 2]), tuple(gpus[n // 2:]), "uniform-crossbar", None)
    if n <= max_enumerate:
        D = _flow_network(G)
        first, rest = gpus[0], gpus[1:]
        best: tuple[float, tuple[str, ...], tuple[str, ...]] | None = None
        splits = 0
        for combo in itertools.combinations(rest, n // 2 - 1):
            a = (first, *combo)
            b = tuple(g for g in gpus if g not in a)
            splits += 1
            value = _cut_in(D, list(a), list(b))
            if best is None or value < best[0] - 1e-9:
                best = (value, a, b)
        assert best is not None
        return Bisection(best[0], best[1], best[2], "max-flow", splits)
    value = _uniform_crossbar(G, gpus)
    if value is None:
        raise ValueError(
            f"{n} GPUs is too many to enumerate the splits and the graph is not a uniform crossbar; "
            f"raise max_enumerate (slow) or simplify the graph"
        )
    half = n // 2
    return Bisection(value, tuple(gpus[:half]), tuple(gpus[half:]), "uniform-crossbar", None)


# --------------------------------------------------------------------------------------------- hops


def hop_counts(G: nx.Graph) -> dict[tuple[str, str], int]:
    """Links traversed on the shortest route between every ordered pair of distinct GPUs.

    A GPU-switch-GPU route is 2 hops; a direct NVLink is 1. Unreachable pairs are left out.
    """
    gpus = gpu_nodes(G)
    gset = set(gpus)
    out: dict[tuple[str, str], int] = {}
    for a in gpus:
        lengths = nx.single_source_shortest_path_length(G, a)
        for b, d in lengths.items():
            if b in gset and b != a:
                out[(a, b)] = d
    return out


def hop_stats(G: nx.Graph) -> dict[str, float]:
    """``{'min', 'max', 'mean'}`` of :func:`hop_counts` over ordered GPU pairs, and ``'unreachable'`` pairs."""
    hops = hop_counts(G)
    n = len(gpu_nodes(G))
    values = list(hops.values())
    if not values:
        return {"min": math.nan, "max": math.nan, "mean": math.nan, "unreachable": n * (n - 1)}
    return {
        "min": min(values),
        "max": max(values),
        "mean": sum(values) / len(values),
        "unreachable": n * (n - 1) - len(values),
    }


# --------------------------------------------------------------------------------------------- traffic


def traffic(G: nx.Graph, pattern: str, *, order: Sequence[str] | None = None, root: str | None = None
            ) -> dict[tuple[str, str], float]:
    """Demand matrix for one unit (1 GB/s) of traffic injected by each sending GPU.

    * ``'ring'``: GPU ``order[i]`` sends 1 to ``order[i+1]`` (wrapping). Default order: the first ring of
      :func:`nccl_rings` when the GPUs have NVLink, else GPU0, GPU1, ...
    * ``'all-to-all'``: every GPU sends 1/(n-1) to each other GPU (1 in total).
    * ``'one-to-all'``: ``root`` (default the first GPU) sends 1/(n-1) to each other GPU (1 in total).
    """
    gpus = gpu_nodes(G)
    n = len(gpus)
    if n < 2:
        raise ValueError(f"traffic needs at least 2 GPUs, the graph has {n}")
    if pattern == "ring":
        if order is None:
            order = _default_ring_order(G)
        order = list(order)
        if sorted(order, key=natural_key) != gpus:
            raise ValueError(f"ring order must list every GPU once: {gpus}")
        return {(order[i], order[(i + 1) % n]): 1.0 for i in range(n)}
    if pattern == "all-to-all":
        return {(a, b): 1.0 / (n - 1) for a in gpus for b in gpus if a != b}
    if pattern == "one-to-all":
        root = gpus[0] if root is None else root
        if root not in gpus:
            raise ValueError(f"root {root!r} is not a GPU; GPUs: {', '.join(gpus)}")
        return {(root, b): 1.0 / (n - 1) for b in gpus if b != root}
    raise ValueError(f"unknown traffic pattern {pattern!r}; allowed: {', '.join(PATTERNS)}")


def _default_ring_order(G: nx.Graph) -> list[str]:
    try:
        plan = nccl_rings(G)
    except ValueError:
        return gpu_nodes(G)
    return list(plan.rings[0]) if plan.rings else gpu_nodes(G)


def pattern_throughput(G: nx.Graph, pattern: str, **kwargs) -> float:
    """Largest rate each sending GPU can inject (GB/s per direction) for a traffic pattern.

    For ``'ring'`` that is the rate to the ring neighbour; for ``'all-to-all'`` the total a GPU sends (spread
    evenly over the others); for ``'one-to-all'`` the root's total. Uses :func:`link_loads`' routing.
    """
    return max_scale(G, link_loads(G, traffic(G, pattern, **kwargs)))


def alltoall_throughput(G: nx.Graph) -> float:
    """All-to-all throughput per GPU under uniform traffic, GB/s per direction (total sent by one GPU)."""
    return pattern_throughput(G, "all-to-all")


def pattern_report(G: nx.Graph, pattern: str, **kwargs) -> tuple[float, list[dict]]:
    """``(rate, rows)``: :func:`pattern_throughput` and every bundle's row of :func:`busiest_links`, from one
    routing pass (routing is the expensive part: an NVL72 all-to-all routes 5,112 demands over 18 paths each)."""
    loads = link_loads(G, traffic(G, pattern, **kwargs))
    rate = max_scale(G, loads)
    merged: dict[frozenset, tuple[str, str, float]] = {}
    for (u, v), load in loads.items():
        key = frozenset((u, v))
        if key not in merged or load > merged[key][2]:
            merged[key] = (u, v, load)
    rows = []
    for u, v, load in merged.values():
        cap = capacity(G, u, v)
        real = load * rate if math.isfinite(rate) else load
        rows.append({
            "a": u, "b": v,
            "load_GBps_dir": real,
            "capacity_GBps_dir": cap,
            "utilisation": (real / cap) if math.isfinite(cap) else 0.0,
        })
    rows.sort(key=lambda r: (-r["utilisation"], -r["load_GBps_dir"], natural_key(r["a"]), natural_key(r["b"])))
    return rate, rows


def busiest_links(G: nx.Graph, pattern: str, top: int | None = 5, **kwargs) -> list[dict]:
    """The most utilised bundles when every GPU injects at :func:`pattern_throughput`.

    Returns dicts ``{'a', 'b', 'load_GBps_dir', 'capacity_GBps_dir', 'utilisation'}`` for the busier direction
    of each undirected bundle, sorted by utilisation (1.0 = full), then by load. ``top=None`` returns all.
    """
    rows = pattern_report(G, pattern, **kwargs)[1]
    return rows if top is None else rows[:top]


# --------------------------------------------------------------------------------------------- summary


def summary(G: nx.Graph) -> dict:
    """Headline metrics of a graph as plain data (GB/s per direction)."""
    bis = bisection_bandwidth(G)
    rings = nccl_rings(G)
    hops = hop_stats(G)
    return {
        "gpus": len(gpu_nodes(G)),
        "bisection_GBps_dir": bis.GBps_dir,
        "bisection_split": [list(bis.side_a), list(bis.side_b)],
        "hops": hops,
        "alltoall_GBps_dir_per_gpu": alltoall_throughput(G),
        "rings": rings.n_rings,
        "ring_GBps_dir": rings.ring_GBps_dir,
        "rings_total_GBps_dir": rings.total_GBps_dir,
    }
