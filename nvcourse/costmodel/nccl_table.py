"""NCCL's own bandwidth table on one NVSwitch domain: what its tuner multiplies out, to choose as NCCL chooses.

NCCL picks an (algorithm, protocol) pair per call by its own time estimate: latency + bytes / its table's
bandwidth. That bandwidth is not the link's: it is ``channels x speed`` from NCCL's topology search, which tries a
short list of speeds per channel (``data/nccl_tuning.toml`` ``[graph_search]``), times NCCL's refinements
(``tuning.cc``). On an 8-GPU H100 node the search settles on 12 ring channels of 30 GB/s, 360 GB/s of bus bandwidth,
while the GPU's 18 NVLinks carry NCCL's 20.6 GB/s each, 370.8: the model times a call with the second (it is what
the data path reaches, validated at large sizes) and chooses with the first, as NCCL does.

Where the search's result cannot be derived from the catalog (more than one node, a PCIe host or a DGX-1 mesh,
NCCL before 2.19), :func:`algbw_GBps` returns None and the model chooses with its own bandwidth.

>>> from nvcourse.costmodel.config import configure
>>> g = ring_graph(configure("dgx-h100", 8))
>>> g.channels, g.speed_GBps, round(g.channels * g.speed_GBps, 1)
(12, 30.0, 360.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import tree_search, tuning
from .config import Config

__all__ = [
    "nsteps",
    "algbw_ratio",
    "Graph",
    "ring_graph",
    "tree_graph",
    "nvls_graph",
    "algbw_GBps",
    "same_channels",
    "port_GBps",
    "speeds_intra",
]


@dataclass(frozen=True)
class Graph:
    """One graph of NCCL's search: ``channels`` of ``speed_GBps`` each (bwIntra), and the NVLS graph's inter speed."""

    channels: int
    speed_GBps: float
    inter_GBps: float
    #: the search pattern that found a tree graph: ``balanced_tree``, or the simpler ``tree`` (Hopper and later)
    pattern: str = "balanced_tree"


def nsteps(op: str, n: int) -> int:
    """NCCL's step count of a ring on ``n`` ranks (tuning.cc ``nsteps``).

    2(n-1) for all-reduce, n-1 for all-gather and reduce-scatter, n otherwise."""
    if op == "allreduce":
        return 2 * (n - 1)
    if op in ("allgather", "reducescatter"):
        return n - 1
    return n


def algbw_ratio(op: str, algo: str, n: int) -> float:
    """NCCL's bus -> algorithm bandwidth factor on ``n`` ranks (tuning.cc, "Convert bus BW to algorithm BW"): a ring
    n/nsteps; all-gather and reduce-scatter on any other algorithm 1 (not converted); NVLS and NVLSTree n/nsteps;
    a tree 0.5."""
    if algo == "ring":
        return n / nsteps(op, n)
    if op in ("allgather", "reducescatter"):
        return 1.0
    return n / nsteps(op, n) if algo in ("nvls", "nvlstree") else 0.5


def _at(table: dict[str, object], version: str) -> object:
    """The entry of ``table`` (keyed by first release) that ``version`` takes: the latest key at or below it."""
    keys = [k for k in table if tuning.newer_or_same(version, k)]
    return table[max(keys, key=tuning.version_key)]


def _section() -> dict:
    return tuning.raw()["graph_search"]


def speeds_intra(arch: str, version: str) -> list[float]:
    """The release's intra-node speed array for ``arch`` (the generic one before Hopper)."""
    row = "blackwell" if arch == "blackwell" else "hopper" if arch == "hopper" else "default"
    out: dict[str, list[float]] = {}
    for k in sorted(_section()["speeds_intra"], key=tuning.version_key):
        if tuning.newer_or_same(version, k):
            out.update(_section()["speeds_intra"][k])
    if row == "blackwell" and row not in out:  # before 2.25 a Blackwell GPU takes the Hopper array (ccMin >= 90)
        row = "hopper"
    return [float(s) for s in out[row]]


def _on_switch(c: Config) -> bool:
    """One node of 2 GPUs or more on a switch (NVSwitch, an NVL72 domain)."""
    return c.nodes == 1 and c.gpus >= 2 and c.system.topology in ("nvswitch", "nvl72")


def _applies(c: Config) -> bool:
    """Whether the search's result can be derived: one node on a switch, NCCL 2.19 or later."""
    return _on_switch(c) and tuning.newer_or_same(c.nccl_version, _section()["first_version"])


def port_GBps(c: Config) -> float:
    """A GPU's NVLink bandwidth in NCCL's topology, GB/s per direction: links x NCCL's per-link figure, the catalog's
    link rate unless the release is older than the figure (``nvlink_GBps_until``)."""
    arch, older = tuning.gpu_arch(c.system.gpu), _section()["nvlink_GBps_until"]
    release = tuning.version_key(tuning.resolve_version(c.nccl_version))
    for last in sorted(older, key=tuning.version_key):
        if arch in older[last] and release <= tuning.version_key(last):
            return c.system.links_per_gpu * float(older[last][arch])
    return c.system.links_per_gpu * c.system.link.beta_Bps / 1e9


def _fits(channels: int, speed: float, port: float, per_channel: float = 1.0, extra: float = 0.0) -> bool:
    # NCCL subtracts rounded to 1e-3 GB/s (SUB_ROUND); the tolerance keeps 12 x 30 <= 360.0 true in floats
    return (channels * per_channel + extra) * speed <= port + 1e-6


def _walk(port: float, speeds: list[float], min_ch: int, max_ch: int, start_total: float) -> Graph | None:
    """Pass 1 of ncclTopoCompute on a switch: from the fastest speed with ``min_ch`` channels within
    ``start_total``, down while the next is above 0.49 of the best found; the most channels x speed wins (ties keep
    the first); a solution with channels x speed at or above ``port`` ends it (NCCL's test is the system's total
    bandwidth). Trees are searched step by step instead (:mod:`.tree_search`)."""
    i = 0
    while i < len(speeds) - 1 and (speeds[i] > port or speeds[i] * min_ch > start_total):
        i += 1
    best: Graph | None = None
    while True:
        s = speeds[i]
        n = min(max_ch, math.floor((port + 1e-6) / s))
        if n >= min_ch and (best is None or n * s > best.channels * best.speed_GBps):
            best = Graph(n, s, s)
        if best is not None and best.channels * best.speed_GBps >= port:
            return best
        ratio = _section()["speed_step_min_ratio"]
        if i < len(speeds) - 1 and (best is None or speeds[i + 1] / best.speed_GBps > ratio):
            i += 1
            continue
        return best


def _dup(g: Graph, arch: str, max_ch: int) -> Graph:
    """ncclTopoDupChannels: twice the channels at half the speed, where NCCL does it."""
    sec = _section()
    if g.speed_GBps < sec["dup_min_GBps"]:
        return g
    if arch in ("hopper", "blackwell") and g.speed_GBps < sec["dup_hopper_min_GBps"] and (
            g.channels > sec["dup_hopper_max_channels"]):  # fmt: skip
        return g
    dup = min(2 * g.channels, max_ch)
    div = math.ceil(dup / g.channels)
    return Graph(dup, g.speed_GBps / div, g.inter_GBps / div)


def _raise(g: Graph, port: float, speeds: list[float], per_channel: float = 1.0) -> Graph:
    """Pass 2: faster speeds with as many channels, while they fit."""
    faster = [s for s in speeds if s > g.speed_GBps]
    for s in sorted(faster):
        if not _fits(g.channels, s, port, per_channel):
            break
        g = Graph(g.channels, s, s)
    return g


def ring_graph(c: Config) -> Graph | None:
    """NCCL's ring graph on ``c``'s one switch domain (channels, speed), or None where it cannot be derived."""
    if not _applies(c):
        return None
    v, arch = c.nccl_version, tuning.gpu_arch(c.system.gpu)
    port, speeds = port_GBps(c), speeds_intra(arch, v)
    max_ch = int(_at(_section()["max_channels"], v)) // 2
    g = _walk(port, speeds, 1, max_ch, port)
    return None if g is None else _raise(_dup(g, arch, max_ch), port, speeds)


def tree_graph(c: Config) -> Graph | None:
    """NCCL's tree graph: as many channels as the ring, at the speed NCCL's search settles on, run step by step
    (:mod:`.tree_search`): twice a GPU's bandwidth on 2 GPUs (the chains 0->1 and 1->0 share no link; a 2-H100 NCCL
    2.29 log prints trees 0-5 from GPU 0 and 6-11 from GPU 1 and the bandwidths 12 x 60 GB/s gives), up to
    n/(n-1) of it on more where the search finds it within its step budget."""
    ring = ring_graph(c)
    if ring is None:
        return None
    arch = tuning.gpu_arch(c.system.gpu)
    speeds = tuple(speeds_intra(arch, c.nccl_version))
    cc9 = tuning.ARCHITECTURES.index(arch) >= tuning.ARCHITECTURES.index("hopper")  # compute capability 9.0 and later
    found = tree_search.search_tree(c.gpus, port_GBps(c), ring.channels, speeds, cc9)
    if found is None:
        return None
    return Graph(found.channels, found.speed_GBps, found.inter_GBps, found.pattern)


def nvls_graph(c: Config) -> Graph | None:
    """NCCL's NVLS graph on one domain: one channel per GPU (at most NCCL_MAX_NVLS_ARITY), each taking its speed
    from every GPU and twice from its head; the inter speed raised while below twice the intra speed."""
    if not _applies(c) or tuning.nvls_efficiency(tuning.gpu_arch(c.system.gpu), c.nccl_version) is None:
        return None
    v, arch = c.nccl_version, tuning.gpu_arch(c.system.gpu)
    port, speeds = port_GBps(c), speeds_intra(arch, v)
    heads = min(int(_at(_section()["nvls_max_arity"], v)), c.gpus)
    i = 0
    while i < len(speeds) - 1 and (speeds[i] > port or speeds[i] * heads > port):
        i += 1
    while i < len(speeds) - 1 and not _fits(heads, speeds[i], port, extra=1.0):
        i += 1
    if not _fits(heads, speeds[i], port, extra=1.0):
        return None
    intra = inter = speeds[i]
    while i > 0 and inter < 2 * intra:
        i -= 1
        inter = speeds[i]
    return Graph(heads, intra, inter)


def same_channels(c: Config) -> bool:
    """Whether NCCL's ring graph repeats one ring on every channel (sameChannels): its first search, which tries
    that, succeeds on a switch (in every release); across nodes the channels go through different NICs and the model
    assumes not."""
    return _on_switch(c)


def _ring_bus(op: str, proto: str, c: Config, g: Graph) -> float:
    v, arch = c.nccl_version, tuning.gpu_arch(c.system.gpu)
    bus = g.channels * g.speed_GBps
    if proto == "LL":
        eff = tuning.efficiency("ring_ll", v, op=op, nodes=1, gpus_per_node=c.gpus)
        return min(tuning.ll_max_bw_GBps(arch, 1, c.system.host_cpu, v), bus * eff)
    if proto == "LL128":
        cap = g.channels * tuning.per_channel_max_GBps("ring_ll128", arch, 1, v, op)
        bus *= tuning.efficiency("ring_ll128", v, op=op, nodes=1, gpus_per_node=c.gpus)
        return min(bus, cap) if cap else bus
    return bus


def _tree_bus(proto: str, c: Config, g: Graph) -> float:
    v, arch = c.nccl_version, tuning.gpu_arch(c.system.gpu)
    bus = g.channels * g.speed_GBps * _section()["tree_allreduce_efficiency"]
    cap = g.channels * tuning.per_channel_max_GBps("tree", arch, 1, v)
    bus = min(bus, cap) if cap else bus
    if proto == "LL":
        bus = min(bus * tuning.efficiency("tree_ll", v), tuning.ll_max_bw_GBps(arch, 1, c.system.host_cpu, v))
    elif proto == "LL128":
        cap = g.channels * tuning.per_channel_max_GBps("tree_ll128", arch, 1, v)
        bus *= tuning.efficiency("tree_ll128_one_node", v)
        bus = min(bus, cap) if cap else bus
    return bus * _simple_tree_rating(g, v)


def _simple_tree_rating(g: Graph, version: str) -> float:
    """NCCL 2.26+ rates a tree found through the simpler TREE pattern x0.85 (``maxTreePattern``), every protocol."""
    t = tuning.raw()["tree_search"]
    late = tuning.newer_or_same(version, t["simple_tree_rating_from"])
    return float(t["simple_tree_rating"]) if g.pattern == "tree" and late else 1.0


def _nvls_bus(op: str, c: Config, g: Graph) -> float:
    eff = tuning.nvls_efficiency(tuning.gpu_arch(c.system.gpu), c.nccl_version) or 0.0
    intra = g.speed_GBps * eff * (g.channels - 1) / g.channels
    intra *= 2.0 if op == "allreduce" else (c.gpus - 1) / c.gpus
    return g.channels * min(intra, g.inter_GBps)


def algbw_GBps(op: str, algo: str, proto: str, c: Config) -> float | None:
    """NCCL's table bandwidth of (``algo``, ``proto``) for ``op`` on ``c``, GB/s of algorithm bandwidth (what
    its TUNING table prints), or None where the model does not derive it (see the module doc)."""
    n = c.gpus
    if algo == "ring" and op in ("allreduce", "allgather", "reducescatter", "broadcast", "reduce"):
        g = ring_graph(c)
        return None if g is None else _ring_bus(op, proto, c, g) * algbw_ratio(op, algo, n)
    if algo == "tree" and op == "allreduce":
        g = tree_graph(c)
        return None if g is None else _tree_bus(proto, c, g) * algbw_ratio(op, algo, n)
    if algo == "nvls" and op in ("allreduce", "allgather", "reducescatter") and proto == "Simple":
        if not tuning.newer_or_same(c.nccl_version, _section()["nvls_first_version"]):
            return None
        g = nvls_graph(c)
        if g is None or g.channels < 2:
            return None
        return _nvls_bus(op, c, g) * algbw_ratio(op, algo, n)
    return None
