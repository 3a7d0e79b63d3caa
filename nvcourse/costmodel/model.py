"""Alpha-beta cost models of NCCL-style collectives, from the hardware catalog.

Every (operation, algorithm, system, GPUs, nodes) reduces to two numbers::

    t(S) = latency_s + S * s_per_byte

``S`` is the size nccl-tests prints (its "size" column, PERFORMANCE.md): the buffer of allreduce,
broadcast and reduce; the *total* (n-chunk) buffer of allgather, reducescatter and alltoall; the
message of sendrecv. ``latency_s`` is a number of steps times the catalog's per-step α of the link
class crossed (NVLink / PCIe inside a node, the NIC between nodes); ``s_per_byte`` is the bytes each
GPU must push through its busiest resource divided by that resource's achievable bandwidth (catalog
line rate x sourced efficiency). See :func:`cost` for every formula and ``notebooks/04b`` for their
derivation.

Vocabulary:

* **node**: what the scale-up fabric joins: an NVLink domain (8 GPUs of a DGX, or all 72 GPUs of a
  GB200 NVL72 rack), or one host when GPUs only share PCIe. ``gpus`` is GPUs *per node*; ``nodes`` is
  how many such nodes talk over their NICs. For NVL72 the node is the 72-GPU rack, not the 4-GPU
  compute tray: NCCL treats a multi-node NVLink domain as one node (MNNVL), and it is the unit across
  which a hierarchical algorithm must leave NVLink.
* **algbw** = S / t; **busbw** = algbw x :func:`busbw_factor` (nccl-tests). GB/s = 1e9 B/s, one direction.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np

from . import factors, nvls_graph, p2p, tuning
from .config import Config, configure, tree_network_s_per_byte
from .costs import Cost
from .latency import latency_s

__all__ = [
    "OPERATIONS",
    "ALGORITHMS",
    "COURSE_ALGORITHMS",
    "NCCL_ALGORITHMS",
    "OP_ALGORITHMS",
    "SELECTORS",
    "Cost",
    "Config",
    "busbw_factor",
    "configure",
    "algorithms",
    "cost",
    "why_not",
]

#: Collective operations, named as nccl-tests names its binaries (without ``_perf`` and underscores).
OPERATIONS: Final[tuple[str, ...]] = (
    "allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "sendrecv",
)  # fmt: skip
#: Algorithms the model knows: NCCL's (ring, tree, nvls, nvlstree, collnet, pat) and the course's own
#: textbook ones (:data:`COURSE_ALGORITHMS`), which NCCL does not have.
ALGORITHMS: Final[tuple[str, ...]] = (
    "ring", "tree", "rhd", "direct", "nvls", "hierarchical", "nvlstree", "collnet", "pat",
)  # fmt: skip
#: The course's own algorithms: available by name, never picked by ``auto`` (NCCL has none of them;
#: ``direct`` for alltoall/sendrecv is NCCL's point-to-point and is the exception).
COURSE_ALGORITHMS: Final[tuple[str, ...]] = ("rhd", "direct", "hierarchical")
#: Which algorithms exist for which operation (before asking whether a system can run them).
OP_ALGORITHMS: Final[dict[str, tuple[str, ...]]] = {
    "allreduce": ("ring", "tree", "rhd", "direct", "nvls", "hierarchical", "nvlstree", "collnet"),
    "allgather": ("ring", "rhd", "direct", "nvls", "pat"),
    "reducescatter": ("ring", "rhd", "direct", "nvls", "pat"),
    "broadcast": ("ring", "tree", "direct"),
    "reduce": ("ring", "tree", "direct"),
    "alltoall": ("direct",),
    "sendrecv": ("direct",),
}
#: What NCCL's tuner chooses from by default (NCCL 2.30 ``src/graph/tuning.cc`` lines 288-304 and 498-512:
#: Ring/Tree/NVLS/NVLSTree for allreduce, Ring/NVLS/PAT for allgather and reducescatter, Ring for
#: broadcast and reduce; point-to-point sends for alltoall and sendrecv). CollNet is off unless
#: ``NCCL_COLLNET_ENABLE`` is set (and SHARP switches exist), so it is available by name only.
NCCL_ALGORITHMS: Final[dict[str, tuple[str, ...]]] = {
    "allreduce": ("ring", "tree", "nvls", "nvlstree"),
    "allgather": ("ring", "nvls", "pat"),
    "reducescatter": ("ring", "nvls", "pat"),
    "broadcast": ("ring",),
    "reduce": ("ring",),
    "alltoall": ("direct",),
    "sendrecv": ("direct",),
}
#: ``algo`` values that choose per size: ``auto`` and ``nccl`` (a synonym kept for old callers) = the
#: fastest (algorithm, protocol) pair among NCCL's own algorithms, as NCCL's tuner picks.
SELECTORS: Final[tuple[str, ...]] = ("auto", "nccl")


def busbw_factor(op: str, n: int) -> float:
    """nccl-tests' bus-bandwidth factor for ``n`` ranks: ``busbw = algbw * busbw_factor(op, n)``.

    From nccl-tests ``doc/PERFORMANCE.md``: allreduce 2(n-1)/n; reducescatter, allgather and alltoall
    (n-1)/n; broadcast, reduce and sendrecv 1. The factor turns algbw into the bandwidth each rank's
    links must carry with the *ring* (point-to-point) algorithm, so busbw can be compared with the
    per-direction link rate whatever n is.

    busbw is therefore a *normalised* number, not a measured wire rate. It can exceed the link rate
    when the algorithm moves fewer bytes per rank than the ring: with NVLS the NVSwitch adds the
    contributions, so each GPU sends about S(n+1)/n bytes instead of 2S(n-1)/n; on two nodes the
    double binary tree sends S across the network per node instead of 2S(n-1)/n, so its busbw can pass
    the NICs' rate (NCCL issue #812).

    >>> busbw_factor("allreduce", 8)
    1.75
    >>> busbw_factor("allgather", 4), busbw_factor("broadcast", 4)
    (0.75, 1.0)
    """
    if op not in OPERATIONS:
        raise ValueError(f"op must be one of {', '.join(OPERATIONS)}; got {op!r}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n (number of ranks) must be an integer >= 1; got {n!r}")
    if op == "allreduce":
        return 2.0 * (n - 1) / n
    if op in ("allgather", "reducescatter", "alltoall"):
        return (n - 1) / n
    return 1.0


#: NCCL's name of each of its algorithms in ``baseLatencies`` (data/nccl_versions.toml).
_RELEASE_KEYS: Final[dict[str, str]] = {
    "nvls": "nvls", "nvlstree": "nvlstree", "pat": "pat", "collnet": "collnet_chain",
}  # fmt: skip


def _release_lacks(op: str, algo: str, c: Config) -> str | None:
    """Why NCCL ``c.nccl_version`` does not have ``algo`` for ``op``, or None (NVLS came in 2.17, NVLSTree in 2.18,
    PAT in 2.23; NVLS all-gather / reduce-scatter in 2.17, not in 2.18, again from 2.19)."""
    v = c.nccl_version
    key = _RELEASE_KEYS.get(algo)
    if key is not None and not tuning.has_algorithm(key, v):
        return f"NCCL {v} has no {algo} algorithm (tuning.cc of that release)"
    if algo == "nvls" and op in ("allgather", "reducescatter") and tuning.rules(v).get("gather_scatter_ring_only"):
        return f"NCCL {v} runs {op} with the ring only"
    return None


def why_not(op: str, algo: str, c: Config) -> str | None:
    """None if ``algo`` can run ``op`` on ``c``; else the reason."""
    if algo not in OP_ALGORITHMS[op]:
        return f"{algo} is not an algorithm for {op}"
    g, k = c.gpus, c.nodes
    if (why := _release_lacks(op, algo, c)) is not None:
        return why
    if algo in ("nvls", "nvlstree") and not c.nvls_enabled:
        return f"{algo} is disabled (NCCL_NVLS_ENABLE=0)"
    if algo == "nvls":
        s = c.system
        if not s.in_switch_reduction:
            return f"{s.id} has no in-switch reduction (NVLink SHARP)"
        if g < tuning.nvls_min_gpus():  # ncclNvlsInit: from 2 GPUs; above that the tuner chooses by time
            return f"NCCL enables NVLS from {tuning.nvls_min_gpus()} GPUs of a node; got gpus={g}"
        if s.scale_up_link not in factors.LINK_ARCH:
            return f"no NVLS efficiency is known for {s.scale_up_link} (factors.LINK_ARCH)"
        if (why := nvls_graph.op_limit(op, g)) is not None:
            return why
        if k > 1:
            return "NVLS across nodes needs CollNet (NCCL_COLLNET_ENABLE); across nodes use nvlstree"
    if algo == "nvlstree":
        if g < 2:
            return "NVLSTree needs gpus >= 2"
        why = why_not(op, "nvls", configure(c.system.id, g, 1, c.nic.id, nccl_version=c.nccl_version))
        if why is not None:
            return why.replace("NVLS", "NVLSTree")
        if k < 2:
            return "NCCL disables NVLSTree on a single node (tuning.cc line 502); use nvls"
    if algo == "collnet":
        if k < 2:
            return "collnet (SHARP in the network switches) needs nodes >= 2"
        if c.nic.kind != "infiniband":
            return f"collnet needs InfiniBand switches with SHARP; the NIC is {c.nic.id}"
    if algo == "pat":
        if g != 1 or k < 2:
            return f"NCCL runs PAT with one GPU per node only (gpus=1, nodes>=2); got gpus={g}, nodes={k}"
    if algo == "rhd":
        if k > 1:
            return "rhd is modelled inside one node only; across nodes use ring, tree or hierarchical"
        if g & (g - 1):
            return f"rhd needs a power-of-two number of GPUs; got gpus={g}"
    if algo == "hierarchical" and k < 2:
        return "hierarchical needs nodes >= 2"
    if algo == "direct" and k > 1 and op not in ("alltoall", "sendrecv"):
        return f"direct {op} is modelled inside one node only"
    return None


def algorithms(
    op: str, system: str, gpus: int, nodes: int = 1, fabric: str | None = None, nccl_version: str | None = None
) -> tuple[str, ...]:
    """The algorithms that can run ``op`` in this configuration (with NCCL ``nccl_version``'s algorithms)."""
    _check_op(op)
    c = configure(system, gpus, nodes, fabric, nccl_version=nccl_version)
    return tuple(a for a in OP_ALGORITHMS[op] if why_not(op, a, c) is None)


def _check_op(op: str) -> None:
    if op not in OPERATIONS:
        raise ValueError(f"op must be one of {', '.join(OPERATIONS)}; got {op!r}")


def _log2c(x: int) -> int:
    return max(0, math.ceil(math.log2(x))) if x > 1 else 0


def cost(op: str, algo: str, c: Config) -> Cost:
    """Latency and seconds-per-byte of ``algo`` for ``op`` on configuration ``c`` (see the module doc).

    With n = g x k ranks (g GPUs per node, k nodes), α = per-step latency inside the node (catalog
    scale-up link), α_net = the NIC's, B = the ring bandwidth inside a node (:class:`Domain`),
    B_node = the node's NIC bandwidth shared by its g GPUs:

    * ring: allreduce 2(n-1) steps, each GPU sends 2(n-1)/n·S; reducescatter/allgather n-1 steps,
      (n-1)/n·S; broadcast/reduce pipelined chain, n-1 steps, S. Of the steps, 2(k-1) resp. k-1
      cross a node boundary and cost α_net (NCCL tuning.cc). Bandwidth min(B, B_node).
    * tree (NCCL's: a pipelined chain through the g GPUs of each node, a double binary tree between
      the k nodes): allreduce 2((g-1)α + ⌈log2 k⌉α_net) + S·max(2/B, inter), inter = 1/B_node for
      k = 2 (each node sends S), 2/B_node for k > 2 (an inner node of one tree sends S/2 up and 2·S/2
      down, and S/2 up as a leaf of the other); broadcast/reduce half the latency and
      S·max(1/B, 1/B_node). Inside one node the chain is never better than the ring, as in NCCL.
    * rhd (recursive halving then doubling, power-of-two g, one node): log2 g steps each way; step j
      exchanges S/2^(j+1) with the partner at XOR distance 2^j, at the bandwidth that pattern gets.
    * direct (every GPU talks to every peer in one step through the switch): reducescatter /
      allgather / alltoall one step, (n-1)/n·S per GPU; allreduce = two steps (RS then AG);
      broadcast/reduce: the root sends/receives (g-1)·S; sendrecv: S to the next rank. A sendrecv across
      nodes pays two network crossings per call (the receiver's clear-to-send, then the data: 2·α_net) and runs a
      message on few channels of 14 GB/s each until it is a few hundred KiB (:mod:`.p2p`); an all-to-all across
      nodes is still charged one α_net (see the branch below). Inside one node a send/recv or all-to-all message is
      split over NCCL's channels and copied twice, through the receiver's FIFO (:func:`.p2p.nvlink_ramp`).
    * nvls (NVLink SHARP): one in-switch step, each GPU sends and receives S·(g+1)/g at
      B x nvlsEfficiency (NCCL: Hopper 0.85, Blackwell 0.74).
    * hierarchical (allreduce, k >= 2): ring reduce-scatter in the node, ring allreduce of S/g between
      the k nodes over each GPU's share of the NICs, ring allgather in the node, one after the other.
    """
    why = why_not(op, algo, c)
    if why is not None:
        allowed = [a for a in OP_ALGORITHMS[op] if why_not(op, a, c) is None]
        raise ValueError(f"algo {algo!r} cannot run here: {why}; allowed: {', '.join(allowed + list(SELECTORS))}")
    d = c.dom
    g, k, n = c.gpus, c.nodes, c.ranks
    a_in, a_net = d.alpha_s, c.nic.alpha_s
    b_inv = d.ring_inv  # s per byte through one ring link inside the node (0 if g == 1)
    node_inv = 1.0 / c.node_nic_Bps if k > 1 else 0.0

    if algo == "ring":
        if op == "allreduce":
            steps, inter, vol = 2 * (n - 1), 2 * (k - 1), 2.0 * (n - 1) / n
        elif op in ("allgather", "reducescatter"):
            steps, inter, vol = n - 1, k - 1, (n - 1) / n
        else:  # broadcast, reduce: pipelined chain
            steps, inter, vol = n - 1, k - 1, 1.0
        return Cost((steps - inter) * a_in + inter * a_net, vol * max(b_inv, node_inv), steps)

    if algo == "tree":
        depth_in, depth_net = g - 1, _log2c(k)  # NCCL: a chain inside the node, binary trees across
        lat1 = depth_in * a_in + depth_net * a_net
        if op == "allreduce":
            return Cost(2 * lat1, max(2.0 * b_inv, tree_network_s_per_byte(c)), 2 * (depth_in + depth_net))
        return Cost(lat1, max(b_inv, node_inv), depth_in + depth_net)

    if algo == "rhd":
        half = sum(inv / 2 ** (j + 1) for j, inv in enumerate(d.rhd_inv))
        steps = len(d.rhd_inv)
        if op == "allreduce":
            return Cost(2 * steps * a_in, 2 * half, 2 * steps)
        return Cost(steps * a_in, half, steps)

    if algo == "direct":
        if op == "sendrecv":
            if k > 1:
                return p2p.across_nodes(c)
            return Cost(a_in, d.shift_inv, 1, ramp=p2p.nvlink_ramp(c, s_per_byte=d.shift_inv))
        if op == "alltoall" and k > 1:
            # NCCL's grouped sends to every peer at once: one point-to-point latency (its rendezvous, p2p.py), as
            # chapter 05's MoE model (fabric/moe.py) charges
            intra = d.a2a_pair_inv / n
            inter = (n - g) / n / c.nic_Bps_per_gpu
            return Cost(p2p.latency_s(c), max(intra, inter), p2p.crossings(c))
        if op in ("broadcast", "reduce"):
            return Cost(a_in, d.root_inv, 1)
        one = d.a2a_pair_inv / g  # every GPU sends S/g to each of the g-1 others
        if op == "allreduce":
            return Cost(2 * a_in, 2 * one, 2)
        ramp = p2p.nvlink_ramp(c, s_per_byte=d.a2a_pair_inv, all_to_all=True) if op == "alltoall" else None
        return Cost(a_in, one, 1, ramp=ramp)  # all-to-all: NCCL's sends, split and copied twice as send/recv's

    if algo in ("nvls", "nvlstree"):
        eff = factors.NVLS_EFFICIENCY[factors.LINK_ARCH[c.system.scale_up_link]]
        # allreduce: each GPU sends and receives S(g+1)/g; allgather/reducescatter: it receives (writes) S(g-1)/g
        share = (g + 1) / g if op == "allreduce" else (g - 1) / g
        intra = share / (d.gpu_Bps * eff)
        if algo == "nvls":
            return Cost(latency_s(op, "nvls", "Simple", c), intra, 1)
        return Cost(latency_s(op, "nvlstree", "Simple", c), max(intra, tree_network_s_per_byte(c)), 1)

    if algo == "collnet":  # the node reduces (chain) to its NICs; the SHARP switches add; pipelined
        return Cost(latency_s(op, "collnet", "Simple", c), max(2.0 * b_inv, node_inv), 1)

    if algo == "pat":  # one GPU per node: each sends (n-1)/n S over its NICs, in log2(n) steps
        return Cost(latency_s(op, "pat", "Simple", c), (n - 1) / n * node_inv, _log2c(n))

    # hierarchical allreduce
    lat = 2 * (g - 1) * a_in + 2 * (k - 1) * a_net
    spb = 2.0 * (g - 1) / g * b_inv + 2.0 * (k - 1) / k * node_inv
    return Cost(lat, spb, 2 * (g - 1) + 2 * (k - 1))
