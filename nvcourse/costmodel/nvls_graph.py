"""NCCL's NVLS graph: how many NVLS channels ("heads") a domain gets, what the busiest GPU moves, and the
per-channel cap NCCL puts on NVLSTree.

The course's textbook NVLS formula (:func:`nvcourse.costmodel.model.cost`) has each of g GPUs send and
receive S·(g+1)/g bytes at B·e (B the GPU's NVLink bandwidth per direction, e NCCL's nvlsEfficiency). In
NCCL each NVLS channel has a *head* GPU that reduces its share of the data; the graph has one channel per
GPU but **at most 32** (``data/nccl_tuning.toml`` ``[nvls_heads]``). With h heads a head sends and receives
S·(h+1)/h: the same S·(g+1)/g up to 32 GPUs, S·33/32 on 72 GPUs (1.7 % more than 73/72). Across nodes
NCCL also caps NVLSTree at h x perChMaxNVLSTreeBw of bus bandwidth (tuning.cc lines 205-211, 320-322).

>>> from nvcourse.costmodel.model import configure
>>> round(1 / nvls_s_per_byte("allreduce", configure("dgx-h100", 8)) / 1e9, 2)   # 370.8 x 0.85 x 8/9
280.16
>>> round(1 / nvlstree_cap_s_per_byte("allreduce", configure("dgx-h100", 8, 2)) / 1e9, 1)  # 8 x 57.7 x 16/30
246.2
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import tuning

if TYPE_CHECKING:
    from .model import Config

__all__ = ["nvls_s_per_byte", "nvlstree_cap_s_per_byte"]


def _efficiency(c: Config) -> tuple[str, float]:
    arch = tuning.gpu_arch(c.system.gpu)
    e = tuning.nvls_efficiency(arch)
    if e is None:
        raise ValueError(f"NCCL has no NVLS on {arch} GPUs ({c.system.gpu})")
    return arch, e


def nvls_s_per_byte(op: str, c: Config) -> float:
    """Seconds per byte of the in-switch part on one node of ``c``: all-reduce S·(h+1)/h at B·e through the busiest
    (head) GPU, h = min(32, GPUs); all-gather / reduce-scatter: each GPU receives S·(g-1)/g at B·e."""
    _, e = _efficiency(c)
    g = c.gpus
    if op == "allreduce":
        h = tuning.nvls_heads(g)
        share = (h + 1) / h
    else:
        share = (g - 1) / g
    return share / (c.dom.gpu_Bps * e)


def nvlstree_cap_s_per_byte(op: str, c: Config) -> float:
    """Seconds per byte under NCCL's NVLSTree cap: h x perChMaxNVLSTreeBw of bus bandwidth, as algorithm
    bandwidth (x n / 2(n-1) for all-reduce over n ranks)."""
    arch, _ = _efficiency(c)
    bus_Bps = tuning.nvls_heads(c.gpus) * tuning.per_channel_max_GBps("nvlstree", arch, c.nodes) * 1e9
    n = c.ranks
    steps = 2 * (n - 1) if op == "allreduce" else n - 1
    return steps / n / bus_Bps
