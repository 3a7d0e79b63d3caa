"""A built fat-tree fabric (:class:`Fabric`): its switches, its cables as directed physical links, and how
flows are routed over them (ECMP, D-mod-k, ideal spreading). :mod:`nvcourse.fabric.builders` builds one.

Links are full duplex; capacities are in GB/s (10^9 B/s) **per direction**. :attr:`Fabric.graph` is a
networkx graph with one edge per cable bundle (``links`` parallel cables, ``capacity_GBps_dir`` their sum).
The flow simulator uses an array of *directed physical links* (every cable, each direction) instead;
:meth:`Fabric.route` maps flows onto it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import networkx as nx
import numpy as np
from numpy.typing import NDArray

from .._validate import choice
from ..i18n import number, whole
from ..i18n import translate as _

__all__ = ["Fabric", "LAYOUTS", "ROUTINGS", "TIER_NAMES"]

LAYOUTS = ("rail", "tor")
#: "ecmp": per-flow hashing onto one equal-cost path (Ethernet/RoCE); "dmodk": deterministic destination-based
#: routes as an InfiniBand subnet manager computes them for a fat-tree (D-mod-k / ftree: the up-port is the
#: destination's index modulo the port count); "ideal": every flow spread over all paths (adaptive routing,
#: packet spraying at its best).
ROUTINGS = ("ecmp", "dmodk", "ideal")
#: Tier of each directed physical link (index into this tuple): NIC up/down, leaf up/down, spine up/down.
TIER_NAMES = ("host→leaf", "leaf→host", "leaf→spine", "spine→leaf", "spine→core", "core→spine")


@dataclass(frozen=True, eq=False)
class Fabric:
    """A built fat-tree. Use :func:`~nvcourse.fabric.builders.fat_tree` or :func:`~nvcourse.fabric.builders.superpod`
    to make one.

    Counts: ``n_leaves``, ``n_spines``, ``n_cores`` switches; ``leaf_up`` up-ports per leaf.
    """

    nodes: int
    rails: int
    radix: int
    port_GBps_dir: float
    nodes_per_su: int
    layout: str
    levels: int
    oversubscription: float  # realised down:up ratio of a leaf
    n_su: int
    n_leaves: int
    leaf_up: int
    n_spines: int
    spine_stride: int  # 2 levels: number of spines S (leaf port p -> spine p % S); 3 levels: spines per pod
    leaves_per_pod: int
    n_pods: int
    spine_up: int  # 3 levels: up-ports per spine (0 for 2 levels)
    cores_per_group: int
    n_cores: int
    label: str = ""
    notes: dict = field(default_factory=dict, repr=False)

    # ---------------------------------------------------------------- counts and ports
    @property
    def gpus(self) -> int:
        return self.nodes * self.rails

    def counts(self) -> dict[str, int]:
        """Switch counts in the shape of NVIDIA's RA tables."""
        return {
            "nodes": self.nodes,
            "gpus": self.gpus,
            "leaf": self.n_leaves,
            "spine": self.n_spines,
            "core": self.n_cores,
        }

    @property
    def cables(self) -> dict[str, int]:
        """Number of physical cables per tier."""
        return {
            "host-leaf": self.gpus,
            "leaf-spine": self.n_leaves * self.leaf_up,
            "spine-core": self.n_spines * self.spine_up,
        }

    @property
    def hosts_per_leaf(self) -> int:
        return self.nodes_per_su if self.layout == "rail" else self.nodes_per_su // self.rails

    # ---------------------------------------------------------------- physical link indexing
    @cached_property
    def _offsets(self) -> dict[str, int]:
        hr = self.gpus
        lu = self.n_leaves * self.leaf_up
        su = self.n_spines * self.spine_up
        o = {"nic_up": 0, "nic_down": hr, "leaf_up": 2 * hr, "leaf_down": 2 * hr + lu}
        o["spine_up"] = 2 * hr + 2 * lu
        o["spine_down"] = o["spine_up"] + su
        o["n_phys"] = o["spine_down"] + su
        # aggregate "links" used by ideal spreading (not physical)
        o["agg_leaf_up"] = o["n_phys"]
        o["agg_leaf_down"] = o["agg_leaf_up"] + self.n_leaves
        o["agg_pod_up"] = o["agg_leaf_down"] + self.n_leaves
        o["agg_pod_down"] = o["agg_pod_up"] + self.n_pods
        o["n_all"] = o["agg_pod_down"] + self.n_pods
        return o

    @property
    def n_links(self) -> int:
        """Number of directed physical links (each cable counts twice)."""
        return self._offsets["n_phys"]

    @cached_property
    def link_tier(self) -> NDArray[np.int8]:
        """Tier of every directed physical link, an index into :data:`TIER_NAMES`."""
        o = self._offsets
        t = np.empty(o["n_phys"], dtype=np.int8)
        for i, key in enumerate(("nic_up", "nic_down", "leaf_up", "leaf_down", "spine_up", "spine_down")):
            end = o[["nic_down", "leaf_up", "leaf_down", "spine_up", "spine_down", "n_phys"][i]]
            t[o[key] : end] = i
        return t

    @cached_property
    def link_ends(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """(lower, upper) switch/host index of every directed physical link.

        The lower end is a host (NIC tiers), a leaf (leaf tiers) or a spine (spine tiers); the upper end
        is a leaf, a spine or a core. Use with :attr:`link_tier` to draw the fabric.
        """
        o = self._offsets
        lo = np.empty(o["n_phys"], dtype=np.int64)
        hi = np.empty(o["n_phys"], dtype=np.int64)
        nic = np.arange(self.gpus)
        host, rail = nic // self.rails, nic % self.rails
        leaf = self.leaf_of(host, rail)
        for key in ("nic_up", "nic_down"):
            lo[o[key] : o[key] + self.gpus] = host
            hi[o[key] : o[key] + self.gpus] = leaf
        port = np.arange(self.n_leaves * self.leaf_up)
        lf, p = port // self.leaf_up, port % self.leaf_up
        sp = self._spine_of_leaf_port(lf, p)
        for key in ("leaf_up", "leaf_down"):
            lo[o[key] : o[key] + port.size] = lf
            hi[o[key] : o[key] + port.size] = sp
        if self.spine_up:
            sport = np.arange(self.n_spines * self.spine_up)
            s, q = sport // self.spine_up, sport % self.spine_up
            core = (s % self.spine_stride) * self.cores_per_group + q % self.cores_per_group
            for key in ("spine_up", "spine_down"):
                lo[o[key] : o[key] + sport.size] = s
                hi[o[key] : o[key] + sport.size] = core
        return lo, hi

    @cached_property
    def capacity_GBps(self) -> NDArray[np.float64]:
        """Capacity of every directed link in GB/s (physical links, then ideal-spreading aggregates)."""
        o = self._offsets
        cap = np.full(o["n_all"], self.port_GBps_dir)
        cap[o["agg_leaf_up"] : o["agg_pod_up"]] = self.leaf_up * self.port_GBps_dir
        cap[o["agg_pod_up"] : o["n_all"]] = (
            max(1, self.spine_stride * self.spine_up) * self.port_GBps_dir
        )  # unused with 2 levels
        return cap

    def leaf_of(self, node: NDArray, rail: NDArray) -> NDArray[np.int64]:
        node = np.asarray(node, dtype=np.int64)
        rail = np.asarray(rail, dtype=np.int64)
        if self.layout == "rail":
            return (node // self.nodes_per_su) * self.rails + rail
        return node // self.hosts_per_leaf

    def pod_of_leaf(self, leaf: NDArray) -> NDArray[np.int64]:
        return np.asarray(leaf, dtype=np.int64) // self.leaves_per_pod

    def _spine_of_leaf_port(self, leaf: NDArray, port: NDArray) -> NDArray[np.int64]:
        if self.levels == 2:
            return port % self.spine_stride
        return self.pod_of_leaf(leaf) * self.spine_stride + port

    # ---------------------------------------------------------------- routing
    def route(
        self,
        src_node: NDArray,
        src_rail: NDArray,
        dst_node: NDArray,
        dst_rail: NDArray,
        *,
        routing: str = "ecmp",
        seed: int | None = 0,
    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Map flows (NIC to NIC) to links: returns COO arrays ``(flow_index, link_index)``.

        ``routing="ecmp"``: every flow hashes onto one up-port at each tier (a seeded uniform random
        choice, as a hash of the flow's header would), and onto one of the parallel cables on the way down.
        ``routing="dmodk"``: the same paths, chosen from the *destination* instead of a hash (what an
        InfiniBand subnet manager's fat-tree routing installs: D-mod-k), so no seed matters.
        ``routing="ideal"``: every flow is spread evenly over all equal-cost paths (adaptive routing or
        packet spraying at its best); it then uses aggregate links whose capacity is the sum of the tier's
        cables (see :attr:`capacity_GBps`).
        """
        choice("routing", routing, ROUTINGS)
        sn, sr, dn, dr = self._check_flows(src_node, src_rail, dst_node, dst_rail)
        o = self._offsets
        n = sn.size
        fid = np.arange(n, dtype=np.int64)
        la, lb = self.leaf_of(sn, sr), self.leaf_of(dn, dr)
        pa, pb = self.pod_of_leaf(la), self.pod_of_leaf(lb)
        nic_up = o["nic_up"] + sn * self.rails + sr
        nic_down = o["nic_down"] + dn * self.rails + dr
        parts_f = [fid, fid]
        parts_l = [nic_up, nic_down]
        cross = la != lb
        if self.levels == 3:
            same_pod = cross & (pa == pb)
            other_pod = cross & (pa != pb)
        else:
            same_pod, other_pod = cross, np.zeros(n, dtype=bool)
        if routing == "ideal":
            f = fid[cross]
            parts_f += [f, f]
            parts_l += [o["agg_leaf_up"] + la[cross], o["agg_leaf_down"] + lb[cross]]
            f = fid[other_pod]
            parts_f += [f, f]
            parts_l += [o["agg_pod_up"] + pa[other_pod], o["agg_pod_down"] + pb[other_pod]]
        else:
            hops = self._hashed_hops(routing, seed, fid, dn, dr, la, lb, pa, pb, same_pod, other_pod)
            parts_f += hops[0]
            parts_l += hops[1]
        return np.concatenate(parts_f), np.concatenate(parts_l)

    def _check_flows(self, src_node, src_rail, dst_node, dst_rail) -> tuple[NDArray[np.int64], ...]:
        """The four flow arrays as flat int64 arrays, checked: same length, in range, never node to itself."""
        sn, sr, dn, dr = (np.asarray(a, dtype=np.int64).ravel() for a in (src_node, src_rail, dst_node, dst_rail))
        if not (sn.size == sr.size == dn.size == dr.size):
            raise ValueError("src_node, src_rail, dst_node and dst_rail must have the same length")
        for name, arr, hi in (
            ("src_node", sn, self.nodes),
            ("dst_node", dn, self.nodes),
            ("src_rail", sr, self.rails),
            ("dst_rail", dr, self.rails),
        ):
            if arr.size and (arr.min() < 0 or arr.max() >= hi):
                raise ValueError(f"{name} must be in 0..{hi - 1}")
        if np.any(sn == dn):
            raise ValueError(
                "a flow's source and destination are on the same node: intra-node traffic does not use the fabric"
            )
        return sn, sr, dn, dr

    def _hashed_hops(self, routing: str, seed: int | None, fid, dn, dr, la, lb, pa, pb, same_pod,
                     other_pod) -> tuple[list, list]:
        """(flow indices, link indices) of the switch hops of crossing flows under 'ecmp' or 'dmodk': one cable
        per tier, chosen by a hash (seeded) or by the destination."""
        o = self._offsets
        n = fid.size
        parts_f: list = []
        parts_l: list = []
        rng = np.random.default_rng(seed)

        def pick(high: int, mask: NDArray | None, div: int) -> NDArray[np.int64]:
            """A hash (ecmp: seeded random) or, for dmodk, the destination node divided by ``div`` modulo the
            port count, rotated by the rail (each NIC has its own LID, so the rails' routes differ)."""
            size = n if mask is None else int(np.count_nonzero(mask))
            if routing == "dmodk":
                d, r = (dn, dr) if mask is None else (dn[mask], dr[mask])
                return (d // div + r) % high
            return rng.integers(0, high, size=size)

        u = self.leaf_up
        port = pick(u, None, 1)  # leaf up-port chosen by the hash (or by the destination)
        if self.levels == 2:
            S = self.spine_stride
            k = u // S
            f = fid[same_pod]
            p = port[same_pod]
            spine = p % S
            down_port = spine + S * pick(k, same_pod, S)  # one of k parallel cables to the dest leaf
            parts_f += [f, f]
            parts_l += [o["leaf_up"] + la[f] * u + p, o["leaf_down"] + lb[f] * u + down_port]
            return parts_f, parts_l
        # same pod: leaf port p -> spine p of the pod -> the dest leaf's port p (one cable each)
        f = fid[same_pod]
        p = port[same_pod]
        parts_f += [f, f]
        parts_l += [o["leaf_up"] + la[f] * u + p, o["leaf_down"] + lb[f] * u + p]
        # other pod: leaf port p -> spine j=p of pod A -> core (hash) -> spine j of pod B -> dest leaf port j
        f = fid[other_pod]
        j = port[other_pod]
        us, cg = self.spine_up, self.cores_per_group
        q = pick(us, other_pod, u)
        core_in_group = q % cg
        q_down = core_in_group + cg * pick(us // cg, other_pod, u * us)
        sa = pa[f] * self.spine_stride + j
        sb = pb[f] * self.spine_stride + j
        parts_f += [f, f, f, f]
        parts_l += [
            o["leaf_up"] + la[f] * u + j,
            o["spine_up"] + sa * us + q,
            o["spine_down"] + sb * us + q_down,
            o["leaf_down"] + lb[f] * u + j,
        ]
        return parts_f, parts_l

    def physical_loads(self, loads_all: NDArray[np.float64], *, spread: bool = True) -> NDArray[np.float64]:
        """Put the loads of the ideal-spreading aggregate links onto their cables: divided evenly
        (``spread=True``, for rates) or copied to each (``spread=False``, for flow counts)."""
        o = self._offsets
        phys = np.array(loads_all[: o["n_phys"]], dtype=float)
        u = self.leaf_up
        du = u if spread else 1
        phys[o["leaf_up"] : o["leaf_down"]] += np.repeat(loads_all[o["agg_leaf_up"] : o["agg_leaf_down"]] / du, u)
        phys[o["leaf_down"] : o["spine_up"]] += np.repeat(loads_all[o["agg_leaf_down"] : o["agg_pod_up"]] / du, u)
        if self.spine_up:
            per_pod = self.spine_stride * self.spine_up
            dp = per_pod if spread else 1
            phys[o["spine_up"] : o["spine_down"]] += np.repeat(
                loads_all[o["agg_pod_up"] : o["agg_pod_down"]] / dp, per_pod
            )
            phys[o["spine_down"] : o["n_phys"]] += np.repeat(loads_all[o["agg_pod_down"] : o["n_all"]] / dp, per_pod)
        return phys

    # ---------------------------------------------------------------- graph
    @cached_property
    def graph(self) -> nx.Graph:
        """networkx graph: nodes ``host0``, ``leaf0``, ``spine0``, ``core0`` (attribute ``tier``), one edge
        per cable bundle with ``links`` (parallel cables) and ``capacity_GBps_dir`` (their sum, per direction)."""
        g = nx.Graph(name=self.label or f"fat-tree ({self.levels} levels, {self.layout})")
        g.add_nodes_from((f"host{i}", {"tier": "host", "index": i}) for i in range(self.nodes))
        g.add_nodes_from((f"leaf{i}", {"tier": "leaf", "index": i}) for i in range(self.n_leaves))
        g.add_nodes_from((f"spine{i}", {"tier": "spine", "index": i}) for i in range(self.n_spines))
        g.add_nodes_from((f"core{i}", {"tier": "core", "index": i}) for i in range(self.n_cores))
        lo, hi = self.link_ends
        tier = self.link_tier
        names = {0: ("host", "leaf"), 2: ("leaf", "spine"), 4: ("spine", "core")}
        for t, (a, b) in names.items():
            sel = tier == t
            if not sel.any():
                continue
            pairs, counts = np.unique(np.stack([lo[sel], hi[sel]], axis=1), axis=0, return_counts=True)
            for (x, y), c in zip(pairs.tolist(), counts.tolist()):
                g.add_edge(f"{a}{x}", f"{b}{y}", links=c, capacity_GBps_dir=c * self.port_GBps_dir)
        return g

    def describe(self) -> str:
        """The fabric in one line, in the current language: nodes and NICs, layout, levels, switch counts and radix,
        port rate (GB/s per direction), each leaf's down and up ports and the oversubscription."""
        c = self.counts()
        core = _(", {core} core").format(core=whole(c["core"])) if self.levels == 3 else ""
        return _("{nodes} nodes x {rails} NICs ({gpus} GPUs), {layout} layout, {levels} levels: {leaf} leaf, {spine} "
                 "spine{core} switches of {radix} ports at {rate} GB/s per direction; leaf {down} down / {up} up "
                 "(oversubscription {over}:1)").format(
            nodes=whole(c["nodes"]), rails=self.rails, gpus=whole(c["gpus"]), layout=self.layout, levels=self.levels,
            leaf=whole(c["leaf"]), spine=whole(c["spine"]), core=core, radix=self.radix,
            rate=number(self.port_GBps_dir, "g"), down=self.nodes_per_su, up=self.leaf_up,
            over=number(self.oversubscription, ".3g"))

