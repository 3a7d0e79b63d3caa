"""NCCL's size-dependent corrections to its own α-β estimate of a call (``ncclTopoGetAlgoTime``).

NCCL times every (algorithm, protocol) pair as ``latency + bytes / bandwidth`` and then corrects two cases
it found the straight line gets wrong (``data/nccl_tuning.toml`` ``[size_correction]``):

* **Trees at medium sizes.** A tree all-reduce reaches less of its bandwidth between a few KiB and a few
  hundred MiB than the model says (the pipeline through the tree's levels is short of chunks), so NCCL
  scales the tree's bandwidth by a factor per power of two of the size, per protocol (``tree_allreduce``:
  lowest around a few hundred KiB, back to 1 in the hundreds of MiB). The course interpolates between powers
  of two: see :meth:`SizeCorrection.bw_factor`. NVLSTree gets the same table, on newer GPUs with an x86 host
  only (``nvlstree_min_arch``, ``nvlstree_host_cpus``).
* **Rings across nodes with Simple** ("plateau effect of ring"): the latency is multiplied by
  ``ring_plateau`` (larger before Ampere) once each rank's share per channel reaches
  ``ring_plateau_min_bytes``.

These are NCCL's own constants, not fitted by the course; they decide which pair NCCL picks and are part of
the time the course predicts for NCCL's algorithms.

>>> c = SizeCorrection(bw_factors=(1.0, 0.5), latency_multiplier=2.0, latency_from_bytes=128)
>>> [round(float(c.bw_factor(s)), 2) for s in (64, 128, 181, 256, 2**20)]   # 64 B: index 0, 128 B: 1, then back to 1
[1.0, 0.5, 0.75, 1.0, 1.0]
>>> float(c.latency_factor(100)), float(c.latency_factor(128))
(1.0, 2.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import tuning
from .config import Config

__all__ = ["SizeCorrection", "ChannelRamp", "P2pNetRamp", "for_pair", "channel_ramp"]


@dataclass(frozen=True)
class SizeCorrection:
    """Multipliers NCCL applies at a given size: bandwidth by ``log2(bytes / 64)``, latency from a size on."""

    #: bandwidth factor at index log2(bytes // 64); 1 outside the table (below 64 B or past its end)
    bw_factors: tuple[float, ...] = ()
    latency_multiplier: float = 1.0
    #: the latency is multiplied from this size (bytes) on
    latency_from_bytes: float = math.inf

    def bw_factor(self, nbytes: ArrayLike) -> NDArray[np.float64]:
        """The factor on the bandwidth for calls of ``nbytes`` bytes.

        NCCL indexes the table by ``log2i(nBytes >> 6)``, a step per power of two, which makes its estimate
        fall where a factor rises from one power of two to the next. Real calls never get faster as they grow, so
        the course takes NCCL's value at each power of two (the sizes nccl-tests runs) and interpolates in
        log2(size) between them, and to 1 one power of two beyond each end of the table."""
        x = np.log2(np.maximum(np.asarray(nbytes, dtype=float), 1.0) / 64.0)
        n = len(self.bw_factors)
        if n == 0:
            return np.ones_like(x)
        xs = np.arange(-1, n + 1, dtype=float)
        ys = np.array((1.0, *self.bw_factors, 1.0))
        return np.interp(x, xs, ys)

    def latency_factor(self, nbytes: ArrayLike) -> NDArray[np.float64]:
        """The factor on the latency for calls of ``nbytes`` bytes."""
        return np.where(np.asarray(nbytes, dtype=float) >= self.latency_from_bytes, self.latency_multiplier, 1.0)


@dataclass(frozen=True)
class ChannelRamp:
    """NCCL's channel count for a call of a given size: ``floor(bytes / bytes_per_channel)`` channels, from 1 to
    ``channels`` (src/enqueue.cc: ``while (nBytes < nc * nt * threadThreshold) nc--``).

    The course takes ``bytes / bytes_per_channel`` without the floor: NCCL's whole channels make the time a sawtooth
    that falls each time a channel is added; without the floor the bandwidth term stays flat from one channel's
    worth of bytes to all channels' worth (a call then takes as long as one channel's share at one channel's rate),
    and the two agree wherever the size is a whole number of channels' worth (powers of two, for LL and Simple).

    >>> r = ChannelRamp(channels=16, bytes_per_channel=32768)
    >>> [float(x) for x in r.factor([1024, 65536, 98304, 2**19, 2**30])]   # share of the bandwidth the call gets
    [0.0625, 0.125, 0.1875, 1.0, 1.0]
    """

    channels: int
    bytes_per_channel: float

    def factor(self, nbytes: ArrayLike) -> NDArray[np.float64]:
        """nc / channels: the share of the pair's bandwidth a call of ``nbytes`` bytes runs with."""
        nc = np.clip(np.asarray(nbytes, dtype=float) / self.bytes_per_channel, 1, self.channels)
        return nc / self.channels


@dataclass(frozen=True)
class P2pNetRamp:
    """The channels NCCL gives a point-to-point message across nodes, by its size, and the rate they reach
    (:mod:`.p2p` builds it; ``data/nccl_tuning.toml`` ``[p2p_net]`` for NCCL's rule and its lines).

    A message of b bytes runs on ``channels(b)`` channels (src/enqueue.cc ``addP2pToPlan``: parts of
    ``min_part_bytes`` to ``max_part_bytes``, from ``channels_min`` up to ``channels_max``; see :meth:`channels`),
    each carrying at most ``per_channel_Bps`` over the network. The network then runs at min(``net_Bps``, channels x
    per_channel_Bps) and the call at the slower of that and the rest of its path (``other_s_per_byte``, NVLink inside
    the node).

    Inside one node (``[p2p_nvlink]``) the same split applies with NVLink as the "network", and each part goes through
    two copies: the sender copies a chunk into the receiver's buffer, the receiver copies it out, one chunk later
    (``stage_chunk_bytes``; :meth:`fill_s`). An all-to-all sends one message of ``message_share`` x S to each peer,
    all at once, on at most ``concurrent_channels_max`` channels per message.

    >>> r = P2pNetRamp(s_per_byte=1 / 47e9, other_s_per_byte=0.0, net_Bps=47e9, per_channel_Bps=14e9,
    ...                min_part_bytes=65536, max_part_bytes=131072, channels_min=1, channels_max=4)
    >>> [float(x) for x in r.channels([65536, 131072, 196608, 262144, 524288, 2**30])]
    [1.0, 1.0, 1.5, 2.0, 4.0, 4.0]
    >>> [round(float(x), 3) for x in r.factor([65536, 262144, 2**30])]   # 14/47, 28/47, then the NIC's rate
    [0.298, 0.596, 1.0]
    """

    #: seconds per byte of the call at the full rate (the Cost's ``s_per_byte``)
    s_per_byte: float
    #: seconds per byte of the part of the path that is not the network (NVLink inside the node), s/B
    other_s_per_byte: float
    #: the network rate the message reaches on all its channels (one NIC), B/s
    net_Bps: float
    #: what one channel carries over the network, B/s
    per_channel_Bps: float
    min_part_bytes: float
    max_part_bytes: float
    channels_min: int
    channels_max: int
    #: messages up to this size run NCCL's LL protocol, which this split does not describe: they keep the full rate
    full_rate_up_to_bytes: float = 0.0
    #: one message as a share of nccl-tests' size S (1 for send/recv; 1/g for an all-to-all of g GPUs, one per peer)
    message_share: float = 1.0
    #: the chunk a second copy stage waits for, bytes (0: one copy, no such stage)
    stage_chunk_bytes: float = 0.0
    #: the most channels one message's parts run on at the same time (an all-to-all's messages share NCCL's channels)
    concurrent_channels_max: float = math.inf

    def _message_bytes(self, nbytes: ArrayLike) -> NDArray[np.float64]:
        return np.maximum(np.asarray(nbytes, dtype=float) * self.message_share, 1.0)

    def channels(self, nbytes: ArrayLike) -> NDArray[np.float64]:
        """Channels of one message of a call of ``nbytes`` bytes (nccl-tests' size S).

        NCCL takes min(channels_min, ceil(b / min_part)) channels and doubles them while a part is over
        ``max_part_bytes``, so its time falls each time a channel is added (a sawtooth). As :class:`ChannelRamp`, the
        course takes the count without rounding up: b / min_part up to channels_min, then channels_min, then
        b / max_part up to channels_max. The time then never falls as the size grows, and the count is NCCL's at the
        powers of two (the sizes nccl-tests runs)."""
        b = self._message_bytes(nbytes)
        nc = np.maximum(np.minimum(b / self.min_part_bytes, self.channels_min), b / self.max_part_bytes)
        return np.clip(nc, 1.0, self.channels_max)

    def _rate_Bps(self, nbytes: ArrayLike) -> NDArray[np.float64]:
        """What one message's channels carry, B/s: min(the "network", channels x per_channel_Bps)."""
        return np.minimum(self.net_Bps, self.channels(nbytes) * self.per_channel_Bps)

    def factor(self, nbytes: ArrayLike) -> NDArray[np.float64]:
        """The share of the call's full rate it gets at ``nbytes`` bytes (1 once its channels reach the NIC)."""
        split = self.s_per_byte / np.maximum(self.other_s_per_byte, 1.0 / self._rate_Bps(nbytes))
        return np.where(self._message_bytes(nbytes) <= self.full_rate_up_to_bytes, 1.0, split)

    def fill_s(self, nbytes: ArrayLike) -> NDArray[np.float64] | float:
        """Seconds the second copy stage adds to a call of ``nbytes`` bytes: it starts one chunk after the first, on
        every channel at once, so the call pays one chunk per channel (never more than the message) at the
        message's rate; 0 without such a stage and for LL-sized messages (LL moves data in 16-byte lines)."""
        b = self._message_bytes(nbytes)
        in_flight = np.minimum(self.channels(nbytes), self.concurrent_channels_max)
        t = np.minimum(b, in_flight * self.stage_chunk_bytes) / self._rate_Bps(nbytes)
        t = np.where(b <= self.full_rate_up_to_bytes, 0.0, t)
        return float(t) if np.ndim(t) == 0 else t


def channel_ramp(algo: str, proto: str, c: Config) -> ChannelRamp | None:
    """NCCL's channel ramp of a ring or tree call with ``proto`` on ``c``, or None where the channel count is not
    known (``[coll_channels]``) or the algorithm chooses its channels otherwise (NVLS, NVLSTree, CollNet, PAT)."""
    if algo not in ("ring", "tree"):
        return None
    channels = tuning.coll_channels(tuning.gpu_arch(c.system.gpu))
    if channels is None:
        return None
    t = tuning.raw()["channel_ramp"]
    threshold = float(t["thread_threshold"][proto])
    if algo == "ring" and proto == "LL" and t["ring_ll_times_ranks"]:
        threshold *= c.ranks
    return ChannelRamp(int(channels), float(t["max_threads"][proto]) * threshold)


def _tree_table(proto: str, limit: int, version: str) -> tuple[float, ...]:
    t = tuning.raw(version)["size_correction"]
    return tuple(float(x) for x in t["tree_allreduce"][proto][:limit])


def for_pair(op: str, algo: str, proto: str, c: Config) -> SizeCorrection | None:
    """NCCL's correction for (``algo``, ``proto``) of ``op`` on ``c``, or None where NCCL applies none."""
    if op != "allreduce":
        return None
    v = c.nccl_version
    t = tuning.raw(v)["size_correction"]
    arch = tuning.gpu_arch(c.system.gpu)
    if algo == "tree":
        return SizeCorrection(bw_factors=_tree_table(proto, int(t["tree_max_log"]), v))
    if algo == "nvlstree":
        late_enough = tuning.ARCHITECTURES.index(arch) >= tuning.ARCHITECTURES.index(t["nvlstree_min_arch"])
        in_release = t.get("nvlstree_correction", True)  # NCCL 2.29 on (data/nccl_versions.toml)
        if late_enough and in_release and c.system.host_cpu in t["nvlstree_host_cpus"]:
            return SizeCorrection(bw_factors=_tree_table(proto, int(t["nvlstree_max_log"]), v))
        return None
    if algo == "ring" and proto == "Simple" and c.nodes > 1:
        return _ring_plateau(t, arch, c)
    return None


def _ring_plateau(t: dict[str, Any], arch: str, c: Config) -> SizeCorrection | None:
    """NCCL's "plateau effect of ring": none before 2.17; 2.17: x1.9 below Hopper, x1.5 from it, from
    ranks/16 x 64 KiB on; 2.18 on: x1.9 below Ampere, x1.4 from it, once bytes / (channels x ranks) >= 64."""
    rule = t.get("ring_plateau_rule", [80, float(t["ring_plateau"]["ampere_and_later"])])
    if rule is None:
        return None
    before = float(t["ring_plateau"]["before_ampere"])
    first_fast = {80: "ampere", 90: "hopper"}[int(rule[0])]
    late = tuning.ARCHITECTURES.index(arch) >= tuning.ARCHITECTURES.index(first_fast)
    mult = float(rule[1]) if late else before
    if int(rule[0]) == 90:  # 2.17's threshold: nBytes >= nRanks / 16 x 65536
        return SizeCorrection(latency_multiplier=mult, latency_from_bytes=c.ranks / 16.0 * 65536)
    # NCCL tests bytes / (channels x ranks); where no published log gives the channel count, one channel
    # (the multiplier then starts at the smallest size it could: Simple rarely wins there anyway)
    channels = tuning.coll_channels(arch) or 1
    start = float(t["ring_plateau_min_bytes"] * channels * c.ranks)
    return SizeCorrection(latency_multiplier=mult, latency_from_bytes=start)
