"""The all-to-all of a mixture-of-experts (MoE) layer, inside one NVLink domain or across nodes.

Expert parallelism (EP) spreads the ``experts`` of a layer over ``ep`` GPUs. Each GPU holds
``tokens`` tokens; the router sends each token's hidden vector (``hidden`` elements of
``bytes_per_elem`` bytes) to ``top_k`` experts (**dispatch**) and brings the ``top_k`` results back
(**combine**). With experts chosen uniformly, a fraction ``(ep-1)/ep`` of those copies goes to another
GPU, so one all-to-all sends, per GPU,

    V = tokens · top_k · hidden · bytes_per_elem · (ep - 1) / ep  bytes.

A forward pass has two all-to-alls per MoE layer (dispatch, combine) and the backward pass two more.

Where the bytes go depends on the NVLink domain of ``d`` GPUs (8 in an HGX/DGX node, 72 in an NVL72):
the EP group is packed into whole domains, so ``(min(ep, d) - 1)/ep`` of the copies stay on NVLink and
``(ep - min(ep, d))/ep`` cross the scale-out network through the GPU's own NIC. Both move at once:

    t = α + max(V_nvlink / β_nvlink, V_network / β_nic)

with α the latency of one point-to-point call across nodes when any byte leaves the domain (NVLink's α
otherwise): two network crossings, since NCCL's sender waits for the receiver's clear-to-send
(:mod:`nvcourse.costmodel.p2p`), β_nvlink the GPU's achievable NVLink bandwidth and β_nic its share of the
node's NICs (per direction, catalog values times efficiency). All peers are sent to at once (NCCL groups the
point-to-point sends), so that latency is charged once per all-to-all, and the fabric is assumed non-blocking
(see :mod:`nvcourse.fabric.flows` for contention).

**Node-limited routing and per-node deduplication** (DeepSeek-V3 §3.2.2, DeepEP). The formula above
sends every remote copy over the NIC: a token whose top-8 experts sit on 3 GPUs of the same remote
node crosses the network 3 times. DeepEP's kernels send it *once per destination node* (to the GPU of
the same rail there, which forwards it over NVLink), and DeepSeek-V3's router caps each token at
``max_nodes`` = 4 nodes. With the EP group spread over ``n = ep/d`` domains and experts chosen uniformly,
the network bytes per GPU become

    V_network = tokens · hidden · bytes_per_elem · E[remote nodes a token hits]

with ``E[remote nodes] = (n-1)·(1 - C(E - E/n, k)/C(E, k))`` (each other node is hit unless all k experts
miss it), or, when routing is limited to ``M < n`` nodes, ``M'·(n-1)/n`` with ``M'`` the expected number
of the M chosen nodes that receive at least one expert (:func:`remote_nodes_per_token`). For DeepSeek-V3's
EP 64 on 8-GPU nodes (256 experts, top-8, M = 4): 7 copies per token without either, 4.6 with dedup,
3.2 with dedup and the 4-node limit: 2.2x fewer network bytes. Select it with
``moe_alltoall_time(..., dedup=True, max_nodes=4)``; the default (no dedup) is the upper bound above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import catalog, costmodel
from ..costmodel import p2p

__all__ = ["MoEConfig", "AllToAllTime", "alltoall_bytes_per_gpu", "remote_nodes_per_token", "network_copies_per_token",
           "moe_alltoall_time", "moe_layer_time", "domain_allreduce_time"]


def _posint(name: str, v: object) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    return v


@dataclass(frozen=True)
class MoEConfig:
    """One MoE layer's communication-relevant shape.

    Attributes:
        hidden: hidden size (elements per token vector).
        tokens: tokens per GPU per micro-batch (sequence length x micro-batch size).
        experts: routed experts per layer; top_k: experts each token is sent to.
        bytes_per_elem: 2 for BF16 (DeepSeek-V3 dispatches in FP8: 1).
        moe_layers: MoE layers in the model (for the per-step total).
    """

    hidden: int
    tokens: int
    experts: int
    top_k: int
    bytes_per_elem: float = 2.0
    moe_layers: int = 1

    def __post_init__(self) -> None:
        for name in ("hidden", "tokens", "experts", "top_k", "moe_layers"):
            _posint(name, getattr(self, name))
        if self.top_k > self.experts:
            raise ValueError(f"top_k must be <= experts ({self.experts}), got {self.top_k}")
        if not (isinstance(self.bytes_per_elem, (int, float)) and self.bytes_per_elem > 0):
            raise ValueError(f"bytes_per_elem must be > 0, got {self.bytes_per_elem!r}")

    @property
    def routed_bytes(self) -> float:
        """Bytes of token copies a GPU routes in one dispatch (before removing the local share)."""
        return self.tokens * self.top_k * self.hidden * self.bytes_per_elem


def _check_ep(cfg: MoEConfig, ep: int) -> int:
    _posint("ep", ep)
    if ep > cfg.experts:
        raise ValueError(f"ep (GPUs holding experts) must be <= experts ({cfg.experts}): each GPU needs at least one "
                         f"expert, got {ep}")
    return ep


def alltoall_bytes_per_gpu(cfg: MoEConfig, ep: int) -> float:
    """Bytes one GPU sends to other GPUs in one dispatch (or combine) all-to-all."""
    ep = _check_ep(cfg, ep)
    return cfg.routed_bytes * (ep - 1) / ep


@dataclass(frozen=True)
class AllToAllTime:
    """One all-to-all of a MoE layer on one system: bytes per GPU by path and the time (seconds)."""

    system: str
    ep: int
    nvlink_bytes: float
    network_bytes: float
    nvlink_s: float
    network_s: float
    alpha_s: float

    @property
    def time_s(self) -> float:
        return self.alpha_s + max(self.nvlink_s, self.network_s)

    @property
    def bottleneck(self) -> str:
        return "network" if self.network_s > self.nvlink_s else "NVLink"


def _p_miss(experts: int, per_node: float, k: int) -> float:
    """Probability that none of k distinct experts drawn uniformly from ``experts`` lands on a node of ``per_node``."""
    return math.comb(experts - round(per_node), k) / math.comb(experts, k)


def remote_nodes_per_token(experts: int, top_k: int, ep: int, gpus_per_node: int, *,
                           max_nodes: int | None = None) -> float:
    """Expected number of *other* nodes (NVLink domains) one token's top-k experts live on.

    The EP group spans ``n = ceil(ep / gpus_per_node)`` nodes with ``experts / n`` experts each. Without a
    limit: ``(n-1)·(1 - C(E-E/n, k)/C(E, k))``. With node-limited routing to ``max_nodes = M < n`` nodes
    (chosen, as far as placement goes, uniformly): the k experts spread over the M chosen nodes, hitting
    ``M' = M·(1 - C((M-1)E/n, k)/C(M·E/n, k))`` of them, each remote with probability ``(n-1)/n``.
    """
    _posint("experts", experts)
    _posint("top_k", top_k)
    _posint("ep", ep)
    _posint("gpus_per_node", gpus_per_node)
    n = math.ceil(ep / gpus_per_node)
    if n == 1:
        return 0.0
    per_node = experts / n
    if max_nodes is None or max_nodes >= n:
        return (n - 1) * (1 - _p_miss(experts, per_node, top_k))
    m = _posint("max_nodes", max_nodes)
    pool = round(m * per_node)
    hit = m * (1 - math.comb(pool - round(per_node), top_k) / math.comb(pool, top_k)) if top_k <= pool else m
    return hit * (n - 1) / n


def network_copies_per_token(cfg: MoEConfig, ep: int, gpus_per_node: int, *, dedup: bool = False,
                             max_nodes: int | None = None) -> float:
    """Copies of a token's hidden vector that cross the network in one dispatch.

    Without dedup: one per remote expert, ``k·(ep - min(ep, d))/ep`` (``max_nodes`` then only moves experts,
    not bytes, and is ignored). With dedup: one per remote node, :func:`remote_nodes_per_token`.
    """
    ep = _check_ep(cfg, ep)
    if not dedup:
        return cfg.top_k * (ep - min(ep, gpus_per_node)) / ep
    return remote_nodes_per_token(cfg.experts, cfg.top_k, ep, gpus_per_node, max_nodes=max_nodes)


def moe_alltoall_time(cfg: MoEConfig, ep: int, system: str, *, dedup: bool = False,
                      max_nodes: int | None = None) -> AllToAllTime:
    """Time of one dispatch (or combine) all-to-all with the EP group packed into ``system``'s NVLink domains.

    ``dedup=True``: per-node deduplication (DeepEP): each token crosses the network once per remote node
    it needs, optionally capped at ``max_nodes`` (node-limited routing), then fans out over NVLink; the
    NVLink bytes then also carry that fan-out: ``(d-1)/d`` of the remote copies are forwarded once more.
    """
    ep = _check_ep(cfg, ep)
    s = catalog.get_system(system)
    d = s.gpus_per_domain
    local = min(ep, d)
    v_nvl = cfg.routed_bytes * (local - 1) / ep
    v_net = cfg.routed_bytes * (ep - local) / ep
    if dedup and v_net > 0:
        token_bytes = cfg.routed_bytes / cfg.top_k
        v_net = token_bytes * network_copies_per_token(cfg, ep, d, dedup=True, max_nodes=max_nodes)
        # arriving copies for the node's other GPUs are forwarded over NVLink (symmetric traffic)
        v_nvl += cfg.routed_bytes * (ep - local) / ep * (d - 1) / d
    b_nvl = s.scaleup_achievable_GBps_dir * 1e9
    b_nic = s.scaleout_GBps_dir_per_gpu * s.nic.efficiency * 1e9
    # across nodes NCCL's point-to-point waits for the receiver's clear-to-send: the NIC's α per network crossing
    alpha = p2p.crossings_over(s.nic.id) * s.nic.alpha_s if v_net > 0 else s.link.alpha_s
    return AllToAllTime(system, ep, v_nvl, v_net, v_nvl / b_nvl, v_net / b_nic, alpha)


def moe_layer_time(cfg: MoEConfig, ep: int, system: str, *, backward: bool = True, dedup: bool = False,
                   max_nodes: int | None = None) -> dict[str, float]:
    """Communication time of the MoE all-to-alls: per layer and per step (all ``moe_layers``), seconds.

    Per layer = 2 all-to-alls forward (+2 backward when ``backward``).
    """
    one = moe_alltoall_time(cfg, ep, system, dedup=dedup, max_nodes=max_nodes)
    per_layer = (4 if backward else 2) * one.time_s
    return {"alltoall_s": one.time_s, "per_layer_s": per_layer, "per_step_s": per_layer * cfg.moe_layers,
            "bottleneck": one.bottleneck}



def _below_nvls_minimum(system: str, minimum: int, gpus: int) -> ValueError:
    """The one error for an NVLS all-reduce asked below the catalog's nvls_min_gpus (where the Simple-only formula
    says NVLS starts to pay; NCCL itself enables NVLS from 2 GPUs)."""
    return ValueError(
        f"in_switch=True is the cost model's NVLS all-reduce, which needs at least {minimum} GPUs on {system} "
        "(catalog nvls_min_gpus: where the Simple-only formula says NVLS starts to pay; NCCL itself enables it from "
        f"2 GPUs); got gpus={gpus}; use in_switch=False (the ring)"
    )

def domain_allreduce_time(system: str, nbytes: float, gpus: int, *, in_switch: bool = False) -> float:
    """All-reduce of ``nbytes`` per GPU among ``gpus`` GPUs of one NVLink domain (tensor parallelism), seconds.

    The course's α-β cost model (:func:`nvcourse.costmodel.cost`, NCCL's Simple per-step α; the
    protocol-aware :func:`nvcourse.costmodel.predict` is faster at small sizes) inside one node:

    * ring (``in_switch=False``): ``2(g-1)α + 2(g-1)/g · n/β``;
    * in-switch reduction (NVLink SHARP, ``in_switch=True``; NCCL's NVLS): each GPU load-reduces its 1/g
      slice through the multicast address (the switch fetches the g contributions and adds them), then
      multicast-stores the reduced slice to all g GPUs, so each GPU sends and receives ``n(g+1)/g`` bytes,
      at ``β × nvlsEfficiency`` (0.85 Hopper, 0.74 Blackwell), after one NVLS latency (25 µs):
      ``L + (g+1)/g · n/(β·η)``, constants in :mod:`nvcourse.costmodel.factors`.

    Raises:
        ValueError: bad ``gpus``/``nbytes``, a system without in-switch reduction, or fewer GPUs than NVLS
            pays on that system (catalog ``nvls_min_gpus``: the course's estimate from one run with NVLS forced,
            nccl#1455; NCCL itself enables NVLS from 2 GPUs and lets its tuner choose).
    """
    s = catalog.get_system(system)
    _posint("gpus", gpus)
    if gpus > s.gpus_per_domain:
        raise ValueError(f"gpus must be <= the NVLink domain of {system} ({s.gpus_per_domain}), got {gpus}")
    if isinstance(nbytes, bool) or not (isinstance(nbytes, (int, float)) and nbytes > 0):
        raise ValueError(f"nbytes must be > 0, got {nbytes!r}")
    if gpus == 1:
        return 0.0
    if in_switch and not s.in_switch_reduction:
        raise ValueError(f"{system} has no in-switch reduction; use in_switch=False")
    if in_switch and s.nvls_min_gpus is not None and gpus < s.nvls_min_gpus:
        # the cost model runs NVLS from 2 GPUs, as NCCL does; the dashboard keeps the course's threshold
        raise _below_nvls_minimum(system, s.nvls_min_gpus, gpus)
    try:
        # the textbook α-β form (Simple per-step α, no protocol choice), as the docstring states
        cfg = costmodel.configure(system, gpus)
        return float(costmodel.cost("allreduce", "nvls" if in_switch else "ring", cfg).time(nbytes))
    except ValueError as e:
        if not in_switch:
            raise
        if s.nvls_min_gpus is not None and gpus < s.nvls_min_gpus:
            raise _below_nvls_minimum(system, s.nvls_min_gpus, gpus) from e
        raise ValueError(f"in_switch=True is the cost model's NVLS all-reduce, which cannot run here: {e}") from e
