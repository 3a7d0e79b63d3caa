"""The fill and drain of NCCL's NVLS all-reduce pipeline: why NVLS reaches its plateau slowly.

On one NVLink domain NCCL runs NVLS all-reduce on ``channels`` channels, each a pipeline of three warp groups
(scatter, reduce + broadcast through the switch, gather; ``data/nccl_tuning.toml`` ``[nvls_pipeline]``). Data
moves in loops of ``heads x chunk`` bytes per channel, all channels at once, so a loop takes
``channels x heads x chunk`` bytes' worth of the bandwidth; the first loop must cross every stage before the
pipeline is full and the last one drains after, which costs ``(stages - 1)`` loops on top of
``latency + S x seconds-per-byte``. The chunk shrinks for small sizes (NCCL's rule), so the extra time grows
with the size in steps, and the share it takes falls as the size grows.

The fill is charged at the in-switch rate (``seconds-per-byte``). The scatter and gather stages are copies
within the GPU's own memory (src/transport/nvls.cc), faster than that, so for the copies alone this is an upper
bound; published one-node runs are slower still at 16 MiB-2 GiB, so NCCL loses more per loop (its warp groups
waiting on each other) than the model describes.

>>> p = PipelineFill(stages=3, heads=8, channels=16, chunk_bytes=131072, shrink=((64, 65536), (8, 32768), (2, 16384)))
>>> p.chunk_bytes_at(2**30), p.chunk_bytes_at(2**28), p.chunk_bytes_at(2**25), p.chunk_bytes_at(2**22)
(131072, 65536, 32768, 16384)
>>> round(p.fill_s(2**30, 1 / 280e9) * 1e6, 1)   # two loops of 16 x 8 x 128 KiB at 280 GB/s
119.8
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import tuning

__all__ = ["PipelineFill", "nvls_allreduce"]


@dataclass(frozen=True)
class PipelineFill:
    """NCCL's NVLS pipeline on one domain: stages, heads (NVLS graph channels), channels, the chunk and its shrink
    rule."""

    stages: int
    heads: int
    channels: int
    chunk_bytes: int
    #: (m, c) in NCCL's order: if a channel's bytes < m x heads x chunk and chunk > c, the chunk becomes c
    shrink: tuple[tuple[int, int], ...]

    def chunk_bytes_at(self, nbytes: ArrayLike) -> NDArray[np.float64] | int:
        """The chunk NCCL uses for a call of ``nbytes`` bytes (per-channel bytes = nbytes / channels)."""
        per_channel = np.asarray(nbytes, dtype=float) / self.channels
        chunk = np.full(per_channel.shape, float(self.chunk_bytes))
        for m, c in self.shrink:
            chunk = np.where((per_channel < m * self.heads * chunk) & (chunk > c), float(c), chunk)
        return int(chunk) if chunk.ndim == 0 else chunk

    def fill_s(self, nbytes: ArrayLike, s_per_byte: float) -> NDArray[np.float64] | float:
        """Seconds the pipeline's fill and drain add: (stages - 1) loops, a loop never more than the data."""
        s = np.asarray(nbytes, dtype=float)
        loop = np.minimum(self.channels * self.heads * np.asarray(self.chunk_bytes_at(s), dtype=float), s)
        t = (self.stages - 1) * loop * s_per_byte
        return float(t) if np.ndim(t) == 0 else t


def nvls_allreduce(gpu_id: str, gpus: int) -> PipelineFill | None:
    """The NVLS all-reduce pipeline of ``gpus`` GPUs of one domain (min(32, gpus) heads), or None where the data
    has no channel count."""
    t = tuning.raw()["nvls_pipeline"]
    channels = t["channels_one_domain"].get(tuning.gpu_arch(gpu_id))
    if channels is None:
        return None
    shrink = tuple((int(m), int(c)) for m, c in t["shrink"])
    # a loop carries one chunk per head: NCCL's NVLS graph has one head per GPU, at most 32 ([nvls_heads])
    return PipelineFill(int(t["stages"]), tuning.nvls_heads(gpus), int(channels), int(t["chunk_bytes"]), shrink)
