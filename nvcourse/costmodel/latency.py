"""NCCL's latency of one call of a collective with an (algorithm, protocol) pair (``ncclTopoTuneModel``).

latency = NCCL's ``baseLatencies[algo][proto]`` (once per call) + its per-step ``hwLatencies`` times the steps
that cross each link class (NVLink or PCIe inside a node, the network between nodes), by the formulas of
``tuning.cc`` (``data/nccl_tuning.toml`` names the lines). The course's textbook formulas (:mod:`.model`) use it
for NCCL's NVLS, NVLSTree, CollNet and PAT; :mod:`.protocols` for every NCCL pair.

>>> from nvcourse.costmodel.config import configure
>>> round(latency_s("allreduce", "ring", "LL", configure("dgx-h100", 8)) * 1e6, 2)   # 6.6 + 14 steps x 0.6 us
15.0
"""

from __future__ import annotations

import math

from . import cloud, tuning
from .config import Config
from .nccl_table import nsteps, same_channels

__all__ = ["NCCL_NAMES", "nsteps", "latency_s", "ring_network_latency_s"]

#: Course name -> NCCL's table key and name (as ``NCCL_ALGO`` spells it).
NCCL_NAMES: dict[str, tuple[str, str]] = {
    "ring": ("ring", "Ring"),
    "tree": ("tree", "Tree"),
    "nvls": ("nvls", "NVLS"),
    "nvlstree": ("nvlstree", "NVLSTree"),
    "collnet": ("collnet_chain", "CollNetChain"),
    "pat": ("pat", "PAT"),
}


def intra_class(c: Config) -> str:
    """NCCL's link class inside a node: ``nvlink`` where the GPUs have NVLink, else ``pci``."""
    return "nvlink" if c.system.has_nvlink else "pci"


def _log2i(x: int) -> int:
    return int(math.floor(math.log2(x))) if x >= 1 else 0


def _inter_us(hw_net_us: float, proto: str, c: Config, time: bool) -> float:
    """One network step, µs: NCCL's (its ``hwLatencies[NET]`` figure with the plugin's reported latency, as the release
    reads it), or with ``time`` the time a cloud fabric's own plugin vendor charges such a step where it gives one
    (AWS EFA p5 with LL: :func:`.cloud.step_time_us`)."""
    step = cloud.step_time_us(c.net_ll_step_us, proto) if time else None
    if step is None:
        return cloud.inter_latency_us(hw_net_us, c.plugin_latency_us, proto, c.nccl_version)
    return step


def latency_s(op: str, algo: str, proto: str, c: Config, *, time: bool = False) -> float:
    """NCCL's latency of one call of ``op`` with (``algo``, ``proto``), seconds (tuning.cc lines 384-435).

    ``time=True``: the model's time for it, which differs where a net plugin reports NCCL a latency chosen to
    steer NCCL's pick and its vendor charges a network step otherwise (:func:`_inter_us`), and for a broadcast or
    reduce ring on one switch node, which NCCL charges one step (sameChannels) and the model times n; NCCL picks by
    the default."""
    key, _ = NCCL_NAMES[algo]
    g, k, n = c.gpus, c.nodes, c.ranks
    intra_cls = intra_class(c)
    v = c.nccl_version
    lat = tuning.base_latency_us(key, proto, v)
    intra = tuning.hw_latency_us(intra_cls, key, proto, v)
    # ppn == 1: "latencies are fully exposed, use the Tree network latency" (line 387); plus what the net plugin
    # reports (graph->latencyInter: 0 for NCCL's IB transport, EFA's from its plugin, by release: cloud.py)
    inter = _inter_us(tuning.hw_latency_us("net", "tree" if g == 1 else key, proto, v), proto, c, time)
    steps = nsteps(op, n)
    if algo == "ring":
        hw = tuning.hw_latency_us(intra_cls if k == 1 else "net", key, proto, v)
        if op in ("broadcast", "reduce"):
            if same_channels(c) and not time:  # NCCL: one ring on every channel, one step's latency (396-397)
                return (lat + hw) * 1e-6
            # NCCL's when not sameChannels: nsteps x the step latency, Simple charged at the tree's (lines 398-402);
            # and the model's time always: the first chunk crosses every hop of the ring before the last GPU has it
            step = tuning.hw_latency_us(intra_cls if k == 1 else "net", "tree", proto, v) if proto == "Simple" else hw
            return (lat + steps * step) * 1e-6
        if k > 1:
            intra = max(intra, tuning.net_overhead_us(c.system.host_cpu, proto, v))
        n_inter = 0 if k == 1 else (2 * (k - 1) if op == "allreduce" else k - 1)
        return (lat + (steps - n_inter) * intra + n_inter * inter) * 1e-6
    if algo == "tree":
        return (lat + 2 * ((g - 1) * intra + _log2i(k) * inter)) * 1e-6
    if algo == "nvls":  # base 0 from 2.19 (2.17-2.18 kept NVLS's latency in baseLat)
        return (lat + intra + (inter if k > 1 else 0.0)) * 1e-6
    if algo == "nvlstree":
        return (lat + intra + 2 * _log2i(k) * inter) * 1e-6
    if algo == "collnet":  # CollNet chain: a chain through the node, one SHARP step in the network
        return (lat + 2 * (g - 1) * intra + inter) * 1e-6
    # pat (all-gather / reduce-scatter, one GPU per node)
    p = tuning.raw(v)["pat"]
    return (lat + _log2i(k) * inter / p["log_latency_divisor"] + n * p["per_rank_us"]) * 1e-6


def ring_network_latency_s(op: str, proto: str, c: Config) -> float:
    """The part of the ring's :func:`latency_s` (``time=True``) that its network steps pay (2(k-1) of them for
    all-reduce on k nodes, each at the network's per-step latency), seconds; 0 on one node."""
    if c.nodes == 1 or op in ("broadcast", "reduce"):
        return 0.0
    key, _ = NCCL_NAMES["ring"]
    inter = _inter_us(tuning.hw_latency_us("net", "tree" if c.gpus == 1 else key, proto, c.nccl_version), proto, c,
                      True)
    n_inter = 2 * (c.nodes - 1) if op == "allreduce" else c.nodes - 1
    return n_inter * inter * 1e-6
