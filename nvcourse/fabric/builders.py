"""Fat-tree fabrics for GPU clusters: leaf / spine / core switches of a given radix.

A **node** (server) has ``rails`` NICs, one per GPU. Nodes come in **scalable units** (SU) of
``nodes_per_su`` nodes (32 in NVIDIA's DGX SuperPOD). Two ways to cable the NICs to the leaf switches:

* ``layout="rail"`` — *rail-optimised*: NIC *i* of every node of an SU goes to leaf *i* of that SU, so an
  SU has ``rails`` leaves and traffic between same-rank GPUs of two nodes in an SU is one switch hop;
* ``layout="tor"`` — *top-of-rack*: all NICs of a node go to the same leaf (``nodes_per_su / rails``
  nodes per leaf).

Each leaf has ``nodes_per_su`` down-ports and ``round(nodes_per_su / oversubscription)`` up-ports
(``oversubscription`` = down:up, 1 = non-blocking).

**Two levels** (leaf, spine). The up-ports of a leaf are striped over the spines: port *p* goes to spine
``p mod S``, so every leaf has the same number ``u/S`` of parallel links to every spine. ``S`` is the
smallest divisor of ``u`` for which the spines have enough ports: ``S >= L·u / radix`` (``L`` leaves).
This one rule reproduces NVIDIA's tables: 8/16/24/32 leaves of 32 up-ports on 64-port switches give
4, 8, 16 (12 does not divide 32) and 16 spines.

**Three levels** (leaf, spine, core). Leaves form *pods* of ``radix/2`` leaves (whole SUs); a pod has
``u`` spines with one link from every leaf; each spine has as many up-ports as down-ports. Spine
position *j* of every pod connects to core group *j*, whose size is again the smallest divisor of the
spine's up-port count that gives the cores enough ports. 16 SU on 64-port switches: 4 pods x 32 spines
= 128 spines, 32 groups x 2 = 64 cores, as in the B200 SuperPOD RA.

Links are full duplex; capacities are in GB/s (10^9 B/s) **per direction**. :attr:`Fabric.graph` is a
networkx graph with one edge per cable bundle (``links`` parallel cables, ``capacity_GBps_dir`` their sum).
The flow simulator uses an array of *directed physical links* (every cable, each direction) instead;
:meth:`Fabric.route` maps flows onto it.

>>> f = fat_tree(nodes=127, radix=64, port_GBps_dir=50.0)       # H100 SuperPOD, 4 SU
>>> f.counts()
{'nodes': 127, 'gpus': 1016, 'leaf': 32, 'spine': 16, 'core': 0}
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import networkx as nx
import numpy as np
from numpy.typing import NDArray

from .. import catalog
from .._validate import choice, integer, number
from . import data

__all__ = ["Fabric", "fat_tree", "superpod", "LAYOUTS", "ROUTINGS", "TIER_NAMES"]

LAYOUTS = ("rail", "tor")
#: "ecmp": per-flow hashing onto one equal-cost path (Ethernet/RoCE); "dmodk": deterministic destination-based
#: routes as an InfiniBand subnet manager computes them for a fat-tree (D-mod-k / ftree: the up-port is the
#: destination's index modulo the port count); "ideal": every flow spread over all paths (adaptive routing,
#: packet spraying at its best).
ROUTINGS = ("ecmp", "dmodk", "ideal")
#: Tier of each directed physical link (index into this tuple): NIC up/down, leaf up/down, spine up/down.
TIER_NAMES = ("host→leaf", "leaf→host", "leaf→spine", "spine→leaf", "spine→core", "core→spine")


def _smallest_divisor_at_least(n: int, need: int) -> int | None:
    for d in range(max(1, need), n + 1):
        if n % d == 0:
            return d
    return None


@dataclass(frozen=True, eq=False)
class Fabric:
    """A built fat-tree. Use :func:`fat_tree` or :func:`superpod` to make one.

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
        if routing not in ROUTINGS:
            raise ValueError(f"routing must be one of {ROUTINGS}, got {routing!r}")
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
            else:
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
        return np.concatenate(parts_f), np.concatenate(parts_l)

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
        c = self.counts()
        core = f", {c['core']} core" if self.levels == 3 else ""
        return (
            f"{c['nodes']} nodes x {self.rails} NICs ({c['gpus']} GPUs), {self.layout} layout, {self.levels} levels: "
            f"{c['leaf']} leaf, {c['spine']} spine{core} switches of {self.radix} ports at {self.port_GBps_dir:g} GB/s "
            f"per direction; "
            f"leaf {self.nodes_per_su} down / {self.leaf_up} up (oversubscription {self.oversubscription:.3g}:1)"
        )


def fat_tree(
    nodes: int,
    *,
    radix: int = 64,
    port_GBps_dir: float = 50.0,
    rails: int = 8,
    nodes_per_su: int = 32,
    layout: str = "rail",
    oversubscription: float = 1.0,
    levels: int | None = None,
    label: str = "",
) -> Fabric:
    """Build a two- or three-level fat-tree for ``nodes`` servers of ``rails`` NICs each.

    Args:
        nodes: number of servers (>= 1).
        radix: ports per switch (64 for Quantum-2 / Spectrum-4; see :mod:`nvcourse.fabric.data`).
        port_GBps_dir: rate of one port, GB/s per direction (50 for 400 Gb/s NDR).
        rails: NICs per node (one per GPU).
        nodes_per_su: nodes per scalable unit = down-ports of a leaf.
        layout: ``"rail"`` (rail-optimised) or ``"tor"`` (all NICs of a node on one leaf).
        oversubscription: leaf down:up ratio, >= 1 (1 = non-blocking).
        levels: 2, 3, or None for the fewest levels that fit.

    Raises:
        ValueError: naming the parameter and what is allowed.
    """
    nodes = integer("nodes", nodes, 1)
    rails = integer("rails", rails, 1)
    nodes_per_su = integer("nodes_per_su", nodes_per_su, 1)
    radix = integer("radix", radix, 2)
    port_GBps_dir = number("port_GBps_dir", port_GBps_dir, positive=True)  # GB/s per direction
    choice("layout", layout, LAYOUTS)  # 'rail' = rail-optimised, 'tor' = top-of-rack
    ratio_ok = isinstance(oversubscription, (int, float)) and not isinstance(oversubscription, bool)
    if not (ratio_ok and 1 <= oversubscription < math.inf):
        raise ValueError("oversubscription must be >= 1 (down:up ratio of a leaf; 1 = non-blocking); "
                         f"got {oversubscription!r}")
    if levels not in (None, 2, 3):
        raise ValueError(f"levels must be 2, 3 or None (fewest that fit), got {levels!r}")
    if layout == "tor" and nodes_per_su % rails:
        raise ValueError(
            f"nodes_per_su must be a multiple of rails={rails} for layout='tor' (a leaf takes whole nodes), got "
            f"{nodes_per_su}"
        )

    down = nodes_per_su
    up = max(1, round(down / oversubscription))
    if down + up > radix:
        raise ValueError(
            f"radix={radix} is too small: a leaf needs {down} down-ports (nodes_per_su) + {up} up-ports = {down + up}; "
            f"allowed: radix >= {down + up}, or fewer nodes_per_su, or more oversubscription"
        )
    n_su = math.ceil(nodes / nodes_per_su)
    if layout == "rail":
        n_leaves = n_su * rails
    else:
        n_leaves = math.ceil(nodes / (nodes_per_su // rails))

    max2 = radix  # two levels: every leaf needs at least one cable to every spine (S <= up)
    if levels is None:
        levels = 2 if n_leaves <= max2 else 3
    if levels == 2:
        need = math.ceil(n_leaves * up / radix)
        S = _smallest_divisor_at_least(up, need)
        if S is None:
            hosts = (
                radix
                * (nodes_per_su if layout == "rail" else nodes_per_su // rails)
                // (rails if layout == "rail" else 1)
            )
            raise ValueError(
                f"radix={radix} is too small for nodes={nodes} in two levels ({n_leaves} leaves; at most {max2} "
                f"leaves, "
                f"i.e. {hosts} nodes); allowed: nodes <= {hosts}, a larger radix, or levels=3"
            )
        return Fabric(
            nodes=nodes, rails=rails, radix=radix, port_GBps_dir=float(port_GBps_dir), nodes_per_su=nodes_per_su,
            layout=layout, levels=2, oversubscription=down / up, n_su=n_su, n_leaves=n_leaves, leaf_up=up,
            n_spines=S, spine_stride=S, leaves_per_pod=n_leaves, n_pods=1, spine_up=0, cores_per_group=0, n_cores=0,
            label=label,
        )

    # three levels
    half = radix // 2
    if layout == "rail":
        sus_per_pod = half // rails
        if sus_per_pod < 1:
            raise ValueError(
                f"radix={radix} is too small for three rail-optimised levels with rails={rails}; allowed: radix >= "
                f"{2 * rails}"
            )
        leaves_per_pod = sus_per_pod * rails
    else:
        leaves_per_pod = half
    n_pods = math.ceil(n_leaves / leaves_per_pod)
    spines_per_pod = up
    spine_up = leaves_per_pod
    need = math.ceil(n_pods * spine_up / radix)
    cg = _smallest_divisor_at_least(spine_up, need)
    if cg is None:
        max_nodes = radix * leaves_per_pod * (nodes_per_su // rails if layout == "rail" else nodes_per_su // rails)
        raise ValueError(
            f"radix={radix} is too small for nodes={nodes} in three levels ({n_pods} pods; at most {radix} pods, "
            f"i.e. {max_nodes} nodes); allowed: nodes <= {max_nodes} or a larger radix"
        )
    return Fabric(
        nodes=nodes, rails=rails, radix=radix, port_GBps_dir=float(port_GBps_dir), nodes_per_su=nodes_per_su,
        layout=layout, levels=3, oversubscription=down / up, n_su=n_su, n_leaves=n_leaves, leaf_up=up,
        n_spines=n_pods * spines_per_pod, spine_stride=spines_per_pod, leaves_per_pod=leaves_per_pod, n_pods=n_pods,
        spine_up=spine_up, cores_per_group=cg, n_cores=spines_per_pod * cg, label=label,
    )


def superpod(pod: str = "h100", su: int = 4, *, nodes: int | None = None, **overrides) -> Fabric:
    """A DGX SuperPOD compute fabric from the sourced data: system NICs, switch radix and port rate.

    ``nodes`` defaults to the published row for ``su`` when there is one (31 nodes per H100 SU row), else
    ``32·su``. Extra keyword arguments go to :func:`fat_tree` (``layout``, ``oversubscription``, ...).
    """
    su = integer("su", su, 1)
    info = data.superpods().get(pod)
    if info is None:
        raise ValueError(f"unknown SuperPOD {pod!r}; allowed: {', '.join(data.superpods())}")
    system = catalog.get_system(info["system"])
    switch = data.get_switch(info["switch"])
    if nodes is None:
        rows = {r.su: r for r in data.superpod_rows(pod)}
        nodes = rows[su].nodes if su in rows else su * info["nodes_per_su"]
    kw = dict(
        radix=switch.ports,
        port_GBps_dir=switch.link.line_GBps_dir,
        rails=system.nics_per_host,
        nodes_per_su=info["nodes_per_su"],
        label=f"{info['name']}, {su} SU",
    )
    kw.update(overrides)
    return fat_tree(nodes, **kw)
