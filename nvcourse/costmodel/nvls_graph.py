"""NCCL's NVLS graph: how many NVLS channels ("heads") a domain gets, what the busiest GPU moves, and the
per-channel cap NCCL puts on NVLSTree.

The course's textbook NVLS formula (:func:`nvcourse.costmodel.model.cost`) has each of g GPUs send and
receive S·(g+1)/g bytes at B·e (B the GPU's NVLink bandwidth per direction, e NCCL's nvlsEfficiency). In
NCCL each NVLS channel has a *head* GPU that reduces its share of the data; the graph has one channel per
GPU but **at most 32** (``data/nccl_tuning.toml`` ``[nvls_heads]``). With h heads a head sends and receives
S·(h+1)/h: the same S·(g+1)/g up to 32 GPUs, S·33/32 on 72 GPUs (1.7 % more than 73/72); NCCL runs NVLS
all-gather and reduce-scatter only up to 32 GPUs per node. Across nodes only GPUs with a NIC of their own can
head, and NCCL's tuner caps NVLSTree at h x perChMaxNVLSTreeBw of bus bandwidth (tuning.cc lines 205-211,
320-322): an empirical ceiling in its estimate, not a limit of the data path, which the model applies too.

>>> from nvcourse.costmodel.model import configure
>>> round(1 / nvls_s_per_byte("allreduce", configure("dgx-h100", 8)) / 1e9, 2)   # 370.8 x 0.85 x 8/9
280.16
>>> round(1 / nvlstree_cap_s_per_byte(configure("dgx-h100", 8, 2)) / 1e9, 1)  # 8 x 57.7 x 16/30
246.2
"""

from __future__ import annotations

from . import tuning
from .config import Config

__all__ = ["op_limit", "heads", "nvls_s_per_byte", "nvlstree_cap_s_per_byte"]


def _efficiency(c: Config) -> tuple[str, float]:
    arch = tuning.gpu_arch(c.system.gpu)
    e = tuning.nvls_efficiency(arch, c.nccl_version)
    if e is None:
        raise ValueError(f"NCCL has no NVLS on {arch} GPUs ({c.system.gpu})")
    return arch, e


def op_limit(op: str, gpus: int) -> str | None:
    """Why NCCL would not run NVLS ``op`` on ``gpus`` GPUs per node, or None: beyond its 32 heads, all-reduce only
    (enqueue.cc line 2004)."""
    if op != "allreduce" and gpus > tuning.nvls_heads(gpus):
        top = tuning.nvls_heads(gpus)
        return f"NCCL runs NVLS {op} only up to {top} GPUs per node (its NVLS heads); got gpus={gpus}"
    return None


def heads(c: Config) -> int:
    """NVLS heads on one node of ``c``: one per GPU, at most 32; across nodes only GPUs with a NIC of their own
    can head (search.cc lines 754-770), so at most the NICs of the node's GPUs."""
    h = tuning.nvls_heads(c.gpus)
    if c.nodes > 1:
        s = c.system
        h = min(h, max(1, c.gpus * s.nics_per_host // s.gpus_per_host))
    return h


def nvls_s_per_byte(op: str, c: Config) -> float:
    """Seconds per byte of the in-switch part on one node of ``c``: all-reduce S·(h+1)/h at B·e through the busiest
    (head) GPU; all-gather / reduce-scatter (NCCL: up to 32 GPUs): each GPU receives S·(g-1)/g at B·e."""
    _, e = _efficiency(c)
    g = c.gpus
    if op == "allreduce":
        h = heads(c)
        share = (h + 1) / h
    elif (why := op_limit(op, g)) is not None:
        raise ValueError(why)
    else:
        share = (g - 1) / g
    return share / (c.dom.gpu_Bps * e)


def nvlstree_cap_s_per_byte(c: Config) -> float:
    """Seconds per byte of all-reduce (NCCL's only NVLSTree collective) under NCCL's empirical per-channel ceiling:
    heads x perChMaxNVLSTreeBw of bus bandwidth, x n / 2(n-1) as algorithm bandwidth over n ranks."""
    arch, _ = _efficiency(c)
    cap = tuning.per_channel_max_GBps("nvlstree", arch, c.nodes, c.nccl_version)
    if cap <= 0:  # the release has no NVLSTree cap (before 2.28)
        return 0.0
    bus_Bps = heads(c) * cap * 1e9
    n = c.ranks
    return 2 * (n - 1) / n / bus_Bps
