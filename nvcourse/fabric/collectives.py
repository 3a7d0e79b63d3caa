"""Collectives on a multi-node fabric: the traffic of one step, and all-reduce time as nodes grow.

Three all-reduce algorithms for ``N`` nodes of ``g`` GPUs (one NIC per GPU), ``p = N·g`` ranks, ``n``
bytes per rank:

* ``"ring"`` — NCCL's flat ring over all ``p`` GPUs: ``2(p-1)`` steps, of which ``2(N-1)`` cross the
  network and pay its latency, each GPU sending ``2(p-1)/p · n`` at the slower of its NVLink ring rate
  and its NIC rate.
* ``"hierarchical"`` — reduce-scatter inside the node over NVLink (``g-1`` steps of ``n/g``), then
  ``g`` independent rings, one per rail, all-reduce each GPU's ``n/g`` shard across the ``N`` nodes
  (``2(N-1)`` steps of ``n/(g·N)``), then all-gather inside the node.
* ``"tree"`` — NCCL's tree: a pipelined chain through the node's GPUs and a double binary tree between
  nodes (``costmodel``'s tree with its fastest protocol), its network rate from the same flow simulation
  as the ring step (the tree's flows are pairs of nodes too; their pattern is not simulated separately).
* ``"sharp"`` — the same intra-node phases as hierarchical, but the inter-node all-reduce happens in the
  switches (InfiniBand SHARP through NCCL CollNet): each GPU sends its shard up once and gets the reduced
  shard back, ``n/g`` bytes each way, with one in-network latency; the NVLink and network phases are
  pipelined (the time is the slower of the two plus both latencies), as NCCL's CollNet runs them.

One formula, one place: the ring and hierarchical formulas and everything inside a node (the NVLink ring's
rate and latency, the reduce-scatter and all-gather) come from the course's collective cost model
(:func:`nvcourse.costmodel.cost`). What this module adds is the *network rate*: the max-min fair flow
simulation (:func:`~nvcourse.fabric.flows.simulate`) of one inter-node ring step on the fabric gives the
rate of its slowest flow, so ECMP collisions, job placement and oversubscription show up in the time; it
replaces the cost model's per-GPU NIC bandwidth (``costmodel.configure(..., net_Bps_per_gpu=...)``). On a
non-blocking fabric with ideal routing that rate is the NIC's achievable rate and the result is exactly
``costmodel.predict(..., algo="hierarchical")`` (``tests/test_fabric_costmodel_consistency.py``). SHARP
is modelled here only. Line rates are scaled by the catalog link's efficiency (achievable / line, for
large messages) and latencies are NCCL's own model values (see catalog.toml). The hierarchical scheme (the
course's own, not NCCL's) adds its phases one after the other; SHARP/CollNet and NCCL's ring and tree
pipeline NVLink and network.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from .. import catalog, costmodel
from .._validate import choice
from ..costmodel import latency as latency_mod
from . import data
from .builders import fat_tree
from .flows import SimResult, simulate
from .network import Fabric

__all__ = [
    "FABRIC_ALGORITHMS",
    "NODE_PLACEMENTS",
    "node_order",
    "ring_flows",
    "alltoall_flows",
    "AllReduceEstimate",
    "allreduce_on_fabric",
    "allreduce_scaling",
]

#: All-reduce algorithms across nodes (not the shared-memory ``collectives.ALGORITHMS`` nor the costmodel's).
FABRIC_ALGORITHMS = ("ring", "tree", "hierarchical", "sharp")
#: Orders in which a scheduler hands out nodes (not ``training.PLACEMENTS``, which orders ranks in a job).
NODE_PLACEMENTS = ("packed", "random")


def node_order(fabric: Fabric, placement: str = "packed", seed: int | None = 0) -> NDArray[np.int64]:
    """The order of nodes along the job's rings: ``"packed"`` (node 0, 1, 2, ... neighbours share a leaf)
    or ``"random"`` (a scheduler that hands out scattered nodes; seeded)."""
    choice("placement", placement, NODE_PLACEMENTS)
    if placement == "packed":
        return np.arange(fabric.nodes)
    return np.random.default_rng(seed).permutation(fabric.nodes)


def ring_flows(fabric: Fabric, order: NDArray | None = None) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """Inter-node flows of one ring step: on every rail r, node order[i] sends to order[i+1] (closing the ring).

    Returns ``(src_node, src_rail, dst_node, dst_rail)``; empty for one node.
    """
    order = np.arange(fabric.nodes) if order is None else np.asarray(order, dtype=np.int64)
    if sorted(order.tolist()) != list(range(fabric.nodes)):
        raise ValueError(f"order must be a permutation of the {fabric.nodes} nodes")
    if fabric.nodes < 2:
        e = np.zeros(0, dtype=np.int64)
        return e, e, e, e
    rails = np.arange(fabric.rails)
    src = np.repeat(order, fabric.rails)
    dst = np.repeat(np.roll(order, -1), fabric.rails)
    r = np.tile(rails, fabric.nodes)
    return src, r, dst, r.copy()


def alltoall_flows(fabric: Fabric, nodes: int | None = None) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """Inter-node flows of an all-to-all among the first ``nodes`` nodes, rail-aligned (NCCL's PXN moves
    data over NVLink to the GPU on the destination's rail first): on every rail, every node to every other."""
    n = fabric.nodes if nodes is None else int(nodes)
    if not 1 <= n <= fabric.nodes:
        raise ValueError(f"nodes must be in 1..{fabric.nodes}, got {nodes!r}")
    a, b = np.nonzero(~np.eye(n, dtype=bool))
    R = fabric.rails
    src = np.repeat(a, R)
    dst = np.repeat(b, R)
    r = np.tile(np.arange(R), a.size)
    return src, r, dst, r.copy()


@dataclass(frozen=True)
class AllReduceEstimate:
    """Time of one all-reduce of ``nbytes`` per GPU, and its parts (seconds).

    ``busbw_GBps`` follows nccl-tests: ``algbw · 2(p-1)/p`` (also for SHARP, for comparability).
    ``net_rate_GBps``: achievable rate of the slowest network flow of a step (after contention).
    """

    algorithm: str
    nodes: int
    gpus: int
    nbytes: float
    time_s: float
    intra_s: float
    inter_s: float
    latency_s: float
    net_rate_GBps: float
    sim: SimResult | None = field(default=None, repr=False)

    @property
    def algbw_GBps(self) -> float:
        return self.nbytes / self.time_s / 1e9

    @property
    def busbw_GBps(self) -> float:
        p = self.gpus
        return self.algbw_GBps * (costmodel.busbw_factor("allreduce", p) if p > 1 else 1.0)


def _check_bytes(nbytes: float) -> float:
    if (
        isinstance(nbytes, bool)
        or not isinstance(nbytes, (int, float, np.integer, np.floating))
        or not np.isfinite(nbytes)
        or nbytes <= 0
    ):
        raise ValueError(f"nbytes (bytes per GPU) must be a number > 0, got {nbytes!r}")
    return float(nbytes)


def allreduce_on_fabric(
    fabric: Fabric,
    nbytes: float,
    *,
    algorithm: str = "hierarchical",
    system: str = "dgx-h100",
    nic_link: str | None = None,
    routing: str = "ecmp",
    placement: str = "packed",
    seed: int | None = 0,
) -> AllReduceEstimate:
    """All-reduce of ``nbytes`` per GPU over every GPU of ``fabric`` (see the module docstring).

    Args:
        system: catalog system for the NVLink inside a node (α, β of its scale-up links).
        nic_link: catalog link id for the NICs' latency and efficiency (default: the system's NIC).
        routing: ``"ecmp"`` (Ethernet hashing), ``"dmodk"`` (InfiniBand static routes) or ``"ideal"``;
            placement: ``"packed"`` or ``"random"`` node order.
    """
    choice("algorithm", algorithm, FABRIC_ALGORITHMS)
    n = _check_bytes(nbytes)
    sysm = catalog.get_system(system)
    nic = catalog.get_link(nic_link or sysm.nic_link)
    g, N = fabric.rails, fabric.nodes
    p = g * N
    port_Bps = fabric.port_GBps_dir * 1e9 * nic.efficiency

    def in_node(op: str) -> costmodel.Cost:
        """The cost model's α-β ring ``op`` among the g GPUs of one node (RS, AG: ``n`` is the whole buffer): the
        phases of the course's hierarchical scheme and of the SHARP one (Simple per-step α)."""
        return costmodel.cost(op, "ring", costmodel.configure(system, g, fabric=nic.id))

    if p == 1:
        return AllReduceEstimate(algorithm, N, p, n, 0.0, 0.0, 0.0, 0.0, float("nan"), None)
    if N == 1:  # everything stays inside the node: NCCL's NVLink ring (Simple), whatever the algorithm
        c = costmodel.pair_cost("allreduce", "ring", "Simple", costmodel.configure(system, g, fabric=nic.id))
        t = c.time(n)
        return AllReduceEstimate(algorithm, N, p, n, t, t, 0.0, c.latency_s, float("nan"), None)

    sim = None
    rs, ag = (in_node("reducescatter"), in_node("allgather")) if g > 1 else (None, None)
    intra = rs.time(n) + ag.time(n) if g > 1 else 0.0
    lat_i = rs.latency_s + ag.latency_s if g > 1 else 0.0
    if algorithm == "sharp":
        if not fabric_supports_sharp(nic_link or sysm.nic_link):
            raise ValueError(
                f"algorithm='sharp' needs InfiniBand switches with in-network reduction; the NIC link {nic.id!r} is "
                f"{nic.kind}"
            )
        net_rate = port_Bps
        if sysm.in_switch_reduction and g > 2:
            # on NVSwitch nodes that reduce in the switch, NCCL (2.18+) runs the in-node phases of SHARP with NVLink
            # SHARP (its NVLS algorithm), not NVLink rings: the cost model's NVLS all-reduce inside one node
            nv = costmodel.pair_cost("allreduce", "nvls", "Simple", costmodel.configure(system, g, fabric=nic.id))
            intra, lat_i = float(nv.time(n)), nv.latency_s
        inter_lat = data.collnet_alpha_s()
        inter = (n / g) / net_rate + inter_lat
        latency = lat_i + inter_lat
        # NCCL's CollNet pipelines the phases: chunks flow NVLink -> switch -> NVLink at the pace of the slower
        total = latency + max(intra - lat_i, inter - inter_lat)
    else:
        order = node_order(fabric, placement, seed)
        sim = simulate(fabric, *ring_flows(fabric, order), routing=routing, seed=seed)
        net_rate = sim.min_rate_GBps * 1e9 * nic.efficiency
        # the cost model's formulas, with the rate the simulated fabric gives each GPU's NIC flow
        cfg = costmodel.configure(system, g, N, fabric=nic.id, net_Bps_per_gpu=net_rate)
        if algorithm in ("ring", "tree"):  # NCCL's own, with the fastest protocol at this size
            proto, c = min(((pr, costmodel.pair_cost("allreduce", algorithm, pr, cfg))
                            for pr in ("LL", "LL128", "Simple")), key=lambda pc: pc[1].time(n))
        else:
            c = costmodel.cost("allreduce", "hierarchical", cfg)
        total, latency = c.time(n), c.latency_s
        if algorithm == "tree":  # pipelined: report the NVLink chain alone, and what the network adds to it
            if g > 1:
                one = costmodel.configure(system, g, fabric=nic.id)
                intra = min(float(costmodel.pair_cost("allreduce", "tree", pr, one).time(n))
                            for pr in ("LL", "LL128", "Simple"))
            else:
                intra = 0.0
            intra = min(intra, total)
            inter = total - intra
        elif algorithm == "ring":
            # a ring is pipelined: every step runs at the pace of its slowest link, so the network's share is not
            # its share of the steps but what it adds: "inside nodes" is the same ring with a network as fast as
            # NVLink and no per-step network latency (the cost model's own terms), "between nodes" the rest
            fast = costmodel.configure(system, g, N, fabric=nic.id, net_Bps_per_gpu=1e18)
            net_lat = latency_mod.ring_network_latency_s("allreduce", proto, fast)
            alone = float(costmodel.pair_cost("allreduce", "ring", proto, fast).time(n)) - net_lat
            intra = min(max(alone, 0.0), total)
            inter = total - intra
        else:
            inter = total - intra
    return AllReduceEstimate(algorithm, N, p, n, total, intra, inter, latency, net_rate / 1e9, sim)


def fabric_supports_sharp(nic_link: str) -> bool:
    """In-network reduction is modelled for InfiniBand only (SHARP in Quantum switches)."""
    return catalog.get_link(nic_link).kind == "infiniband"


def allreduce_scaling(
    nodes: list[int] | NDArray,
    nbytes: float,
    *,
    algorithms: tuple[str, ...] = FABRIC_ALGORITHMS,
    system: str = "dgx-h100",
    nic_link: str | None = None,
    routing: str = "ecmp",
    placement: str = "packed",
    seed: int | None = 0,
    **fabric_kw,
) -> dict[str, list[AllReduceEstimate]]:
    """All-reduce estimates for each node count and algorithm, each on its own fat-tree
    (``fat_tree(N, rails=<system NICs>, port_GBps_dir=<NIC line rate>, **fabric_kw)``)."""
    sysm = catalog.get_system(system)
    nic = catalog.get_link(nic_link or sysm.nic_link)
    out: dict[str, list[AllReduceEstimate]] = {a: [] for a in algorithms}
    for N in nodes:
        kw = dict(rails=sysm.nics_per_host, port_GBps_dir=nic.line_GBps_dir)
        kw.update(fabric_kw)
        fab = fat_tree(int(N), **kw)
        for a in algorithms:
            out[a].append(
                allreduce_on_fabric(
                    fab,
                    nbytes,
                    algorithm=a,
                    system=system,
                    nic_link=nic.id,
                    routing=routing,
                    placement=placement,
                    seed=seed,
                )
            )
    return out
