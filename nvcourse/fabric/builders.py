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

The result is a :class:`~nvcourse.fabric.network.Fabric` (links, routing, graph: :mod:`nvcourse.fabric.network`).

>>> f = fat_tree(nodes=127, radix=64, port_GBps_dir=50.0)       # H100 SuperPOD, 4 SU
>>> f.counts()
{'nodes': 127, 'gpus': 1016, 'leaf': 32, 'spine': 16, 'core': 0}
"""

from __future__ import annotations

import math

from .. import catalog
from .._validate import choice, integer, number
from . import data
from .network import LAYOUTS, ROUTINGS, TIER_NAMES, Fabric

# Fabric and the constants are defined in .network and re-exported here, where they always were.
__all__ = ["Fabric", "fat_tree", "superpod", "LAYOUTS", "ROUTINGS", "TIER_NAMES"]


def _smallest_divisor_at_least(n: int, need: int) -> int | None:
    for d in range(max(1, need), n + 1):
        if n % d == 0:
            return d
    return None



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
    common = dict(nodes=nodes, rails=rails, radix=radix, port_GBps_dir=float(port_GBps_dir), nodes_per_su=nodes_per_su,
                  layout=layout, oversubscription=down / up, n_su=n_su, n_leaves=n_leaves, leaf_up=up, label=label)
    max2 = radix  # two levels: every leaf needs at least one cable to every spine (S <= up)
    if levels is None:
        levels = 2 if n_leaves <= max2 else 3
    if levels == 2:
        return _two_levels(common)
    return _three_levels(common)


def _two_levels(c: dict) -> Fabric:
    """Leaves and one spine layer: every leaf cabled to every spine, the spines a divisor of a leaf's up-ports."""
    radix, up, n_leaves, rails = c["radix"], c["leaf_up"], c["n_leaves"], c["rails"]
    need = math.ceil(n_leaves * up / radix)
    S = _smallest_divisor_at_least(up, need)
    if S is None:
        rail = c["layout"] == "rail"
        hosts = radix * (c["nodes_per_su"] if rail else c["nodes_per_su"] // rails) // (rails if rail else 1)
        raise ValueError(
            f"radix={radix} is too small for nodes={c['nodes']} in two levels ({n_leaves} leaves; at most {radix} "
            f"leaves, "
            f"i.e. {hosts} nodes); allowed: nodes <= {hosts}, a larger radix, or levels=3"
        )
    return Fabric(**c, levels=2, n_spines=S, spine_stride=S, leaves_per_pod=n_leaves, n_pods=1, spine_up=0,
                  cores_per_group=0, n_cores=0)


def _three_levels(c: dict) -> Fabric:
    """Pods of leaves and spines (half a switch's ports down, half up) under a core layer."""
    radix, up, n_leaves, rails, layout = c["radix"], c["leaf_up"], c["n_leaves"], c["rails"], c["layout"]
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
        nodes_per_su = c["nodes_per_su"]
        max_nodes = radix * leaves_per_pod * (nodes_per_su // rails if layout == "rail" else nodes_per_su // rails)
        raise ValueError(
            f"radix={radix} is too small for nodes={c['nodes']} in three levels ({n_pods} pods; at most {radix} pods, "
            f"i.e. {max_nodes} nodes); allowed: nodes <= {max_nodes} or a larger radix"
        )
    return Fabric(**c, levels=3, n_spines=n_pods * spines_per_pod, spine_stride=spines_per_pod,
                  leaves_per_pod=leaves_per_pod, n_pods=n_pods, spine_up=spine_up, cores_per_group=cg,
                  n_cores=spines_per_pod * cg)


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
