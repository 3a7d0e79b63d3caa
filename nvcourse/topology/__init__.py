"""Interconnect topologies: graphs of the catalog's systems, their metrics, the ``nvidia-smi topo -m`` reader
and drawings.

>>> from nvcourse.topology import build_system_graph, bisection_bandwidth
>>> bisection_bandwidth(build_system_graph("dgx-h100")).GBps_dir   # 4 GPUs x 18 links x 25 GB/s, per direction
1800.0

All bandwidths are GB/s (10^9 B/s) per direction unless a name ends in ``_bidir``.
"""

from .builders import NODE_KINDS, build_system_graph, gpu_nodes
from .metrics import (
    PATTERNS,
    Bisection,
    alltoall_throughput,
    bisection_bandwidth,
    busiest_links,
    capacity,
    cut_capacity,
    hop_counts,
    hop_stats,
    link_loads,
    pattern_throughput,
    summary,
    traffic,
)
from .rings import RingPlan, nccl_rings

__all__ = [
    "NODE_KINDS",
    "PATTERNS",
    "Bisection",
    "RingPlan",
    "alltoall_throughput",
    "bisection_bandwidth",
    "build_system_graph",
    "busiest_links",
    "capacity",
    "cut_capacity",
    "gpu_nodes",
    "hop_counts",
    "hop_stats",
    "link_loads",
    "nccl_rings",
    "pattern_throughput",
    "summary",
    "traffic",
]
