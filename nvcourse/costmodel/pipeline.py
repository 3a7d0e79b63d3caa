"""NCCL's NVLS all-reduce pipeline on one domain: why NVLS reaches its plateau slowly, and in steps.

On one NVLink domain NCCL runs NVLS all-reduce on ``channels`` channels, each a pipeline of three warp groups
(scatter, reduce + broadcast through the switch, gather; ``data/nccl_tuning.toml`` ``[nvls_pipeline]``). Data
moves in loops of ``heads x chunk`` bytes per channel, all channels at once, so a loop takes
``channels x heads x chunk`` bytes' worth of the bandwidth. Two terms come on top of
``latency + S x seconds-per-byte``:

* **fill and drain**: the first loop must cross every stage before the pipeline is full and the last one drains
  after, which costs ``(stages - 1)`` loops. It is charged at the in-switch rate (``seconds-per-byte``). The
  scatter and gather stages are copies within the GPU's own memory (src/transport/nvls.cc), faster than that, so
  for the copies alone this is an upper bound.
* **extra loops**: each loop is one step of NCCL's Simple protocol for every warp group, and a step has fixed
  costs that run in series inside the warp group (its barriers, a system-scope memory fence before the step's
  flag is posted, the memory pipeline draining at the end of the step; src/device/prims_simple.h). NCCL's 8
  buffer slots per head and channel hide the wait for the other GPUs, not these. The chunk shrinks for smaller
  calls (NCCL's rule), so the same bytes take more loops. Each loop beyond those of the full chunk is charged
  ``loop_latency_s``, a borrowed magnitude: NCCL's figure for one Simple step over NVLink (hwLatencies, the
  ring's 3.4 µs), which NCCL's tuner charges once per ring hop per call, never per chunk, and never to NVLS.
  The full chunk's loops are not charged: NCCL's NVLS efficiency (``[nvls_efficiency]``) is calibrated where
  calls run at the full chunk, and charging every loop while raising the peak rate to match those calls gives
  the same times up to rounding. Within a band the term grows with the bytes, so it is counted with the
  bandwidth term.

Because the chunk is a step function of the size, so is the extra-loops term. NCCL applies the rule per
channel (src/enqueue.cc calls it with each channel's bytes) and splits a call over its channels in whole
cells: for an all-reduce of 1 GiB - 16 B on 8 H100, fifteen channels get exactly 64 MiB (full chunk, 64 loops)
and the last one 64 MiB - 16 B (64 KiB chunk, 128 loops); the call ends with its slowest channel, so it takes
longer than one of 1 GiB. The model splits evenly, which gives the same slowest channel. Published sweeps at
powers of two sit on the fast side of each threshold (1 GiB, 64 MiB and 8 MiB on 8 H100) and lose most,
against a smooth curve, in the middle of a band (512 MiB, 32 MiB). The term is a constant share of the time
within a band, so it corrects each band's level, not its slope.

Scope: one-domain NVLS all-reduce, and NVLSTree all-reduce across nodes (:func:`nvlstree_allreduce`): the same fill
on NCCL's NVLS channels with NVLSTree's own chunk rule, and no extra-loop cost (``[nvlstree_pipeline]``). NVLS
reduce-scatter and all-gather use NVLS's chunk rule but are charged neither.

>>> p = PipelineFill(stages=3, heads=8, channels=16, chunk_bytes=131072, shrink=((64, 65536), (8, 32768), (2, 16384)),
...                  loop_latency_s=3.4e-6)
>>> p.chunk_bytes_at(2**30), p.chunk_bytes_at(2**28), p.chunk_bytes_at(2**25), p.chunk_bytes_at(2**22)
(131072, 65536, 32768, 16384)
>>> round(p.fill_s(2**30, 1 / 280e9) * 1e6, 1)   # two loops of 16 x 8 x 128 KiB at 280 GB/s
119.8
>>> round(p.extra_loops_s(2**29) * 1e6, 1)   # 512 MiB: 64 loops of 64 KiB chunks, 32 more than of 128 KiB
108.8
>>> p.extra_loops_s(2**30)   # 1 GiB runs at the full chunk
0.0
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import tuning

__all__ = ["PipelineFill", "nvls_allreduce", "nvlstree_allreduce"]


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
    #: seconds each loop beyond those of the full chunk costs (a Simple step's fixed costs; NCCL's 3.4 µs borrowed)
    loop_latency_s: float = 0.0

    def chunk_bytes_at(self, nbytes: ArrayLike) -> NDArray[np.float64] | int:
        """The chunk NCCL uses for a call of ``nbytes`` bytes (per-channel bytes = nbytes / channels)."""
        per_channel = np.asarray(nbytes, dtype=float) / self.channels
        chunk = np.full(per_channel.shape, float(self.chunk_bytes))
        for m, c in self.shrink:
            chunk = np.where((per_channel < m * self.heads * chunk) & (chunk > c), float(c), chunk)
        return int(chunk) if chunk.ndim == 0 else chunk

    def loop_bytes_at(self, nbytes: ArrayLike) -> NDArray[np.float64]:
        """Bytes one loop of all channels carries at ``nbytes`` (channels x heads x chunk)."""
        return self.channels * self.heads * np.asarray(self.chunk_bytes_at(nbytes), dtype=float)

    def fill_s(self, nbytes: ArrayLike, s_per_byte: float) -> NDArray[np.float64] | float:
        """Seconds the pipeline's fill and drain add: (stages - 1) loops, a loop never more than the data."""
        s = np.asarray(nbytes, dtype=float)
        t = (self.stages - 1) * np.minimum(self.loop_bytes_at(s), s) * s_per_byte
        return float(t) if np.ndim(t) == 0 else t

    def extra_loops_s(self, nbytes: ArrayLike) -> NDArray[np.float64] | float:
        """Seconds the loops a shrunken chunk adds cost: (loops at NCCL's chunk - loops at the full chunk) x
        ``loop_latency_s``; 0 at the full chunk."""
        s = np.asarray(nbytes, dtype=float)
        full = self.channels * self.heads * float(self.chunk_bytes)
        t = (np.ceil(s / self.loop_bytes_at(s)) - np.ceil(s / full)) * self.loop_latency_s
        return float(t) if np.ndim(t) == 0 else t

    def extra_s(self, nbytes: ArrayLike, s_per_byte: float) -> NDArray[np.float64] | float:
        """Seconds the pipeline adds to ``latency + S x seconds-per-byte``: the fill and the extra loops."""
        t = np.asarray(self.fill_s(nbytes, s_per_byte)) + np.asarray(self.extra_loops_s(nbytes))
        return float(t) if np.ndim(t) == 0 else t


def nvls_allreduce(gpu_id: str, gpus: int) -> PipelineFill | None:
    """The NVLS all-reduce pipeline of ``gpus`` GPUs of one domain (min(32, gpus) heads), or None where the data
    has no channel count."""
    t = tuning.raw()["nvls_pipeline"]
    channels = t["channels_one_domain"].get(tuning.gpu_arch(gpu_id))
    if channels is None:
        return None
    shrink = tuple((int(m), int(c)) for m, c in t["shrink"])
    loop_latency_s = tuning.hw_latency_us(*t["loop_latency_from"]) * 1e-6
    # a loop carries one chunk per head: NCCL's NVLS graph has one head per GPU, at most 32 ([nvls_heads])
    return PipelineFill(int(t["stages"]), tuning.nvls_heads(gpus), int(channels), int(t["chunk_bytes"]), shrink,
                        loop_latency_s)


def nvlstree_allreduce(gpu_id: str, heads: int, nodes: int) -> PipelineFill | None:
    """NCCL's NVLSTree all-reduce pipeline across ``nodes`` nodes with ``heads`` NVLS heads per node
    (``[nvlstree_pipeline]``: NCCL's NVLS channel count, NVLSTree's own chunk rule, the fill of NVLS's stages; no
    extra-loop cost), or None on one node or where the data has no channel count for the GPU."""
    t = tuning.raw()["nvlstree_pipeline"]
    channels = t["channels_multi_node"].get(tuning.gpu_arch(gpu_id))
    if channels is None or nodes < 2:
        return None
    chunk = int(t["chunk_bytes_from_4_nodes"] if nodes >= 4 else t["chunk_bytes"])
    shrink = tuple((int(m), int(c)) for m, c in t["shrink"])
    return PipelineFill(int(t["stages"]), int(heads), int(channels), chunk, shrink)
