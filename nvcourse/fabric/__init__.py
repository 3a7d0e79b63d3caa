"""Rack-scale and multi-node fabrics: fat-tree builders, max-min fair flow simulation, ECMP collisions,
all-reduce on a fabric (ring, hierarchical, in-network), and the mixture-of-experts all-to-all model.

GB/s = 10^9 B/s, per direction; port rates in Gb/s come from the catalog.

>>> from nvcourse.fabric import superpod
>>> superpod("b200", 16).counts()
{'nodes': 512, 'gpus': 4096, 'leaf': 128, 'spine': 128, 'core': 64}
"""

from . import data, ecmp, moe
from .builders import fat_tree, superpod
from .collectives import (
    FABRIC_ALGORITHMS,
    NODE_PLACEMENTS,
    AllReduceEstimate,
    allreduce_on_fabric,
    allreduce_scaling,
    alltoall_flows,
    node_order,
    ring_flows,
)
from .flows import SimResult, max_min_rates, simulate
from .network import LAYOUTS, ROUTINGS, TIER_NAMES, Fabric

__all__ = [
    "data", "ecmp", "moe",
    "Fabric", "fat_tree", "superpod", "LAYOUTS", "ROUTINGS", "TIER_NAMES",
    "SimResult", "max_min_rates", "simulate",
    "FABRIC_ALGORITHMS", "NODE_PLACEMENTS", "AllReduceEstimate", "allreduce_on_fabric", "allreduce_scaling",
    "alltoall_flows", "node_order", "ring_flows",
]
