"""Point-to-point (send/recv) across nodes and inside one node: what NCCL does that its tuner does not cost.

NCCL's tuner has no point-to-point model, so the course builds one from NCCL's source (``data/nccl_tuning.toml``
``[p2p_net]`` gives every file, line and constant):

* **Rendezvous.** Over NCCL's own IB/RoCE transport the sender waits for the receiver's clear-to-send, an RDMA write
  that crosses the network first (``ncclIbIsend`` / ``ncclIbPostFifo``). In a loop of calls the next call's
  clear-to-send leaves only once the receiving GPU has consumed this call's data (the proxy keeps one operation per
  connection active, ``recvProxyProgress`` finishes it on the GPU's ``head``), so every call pays two network
  crossings: :func:`latency_s` = 2 x the NIC's α.
* **Channels per message.** A message is split over channels by its size (parts of half a chunk to a chunk, 128 KiB
  across nodes), each channel carrying NCCL's 14 GB/s over the network (``NCCL_P2P_PER_CHANNEL_NET_BW``, 2.29 on):
  a message up to 128 KiB runs on one channel, so at 14 GB/s, not at the NIC's 47 GB/s. :func:`net_ramp`.

Both apply where NCCL's own network transport carries the call: a catalog NIC (InfiniBand or RoCE), not a cloud
fabric, whose net plugin has its own protocol (AWS's aws-ofi-nccl sends small messages eagerly, without waiting).

* **Inside one node** NCCL splits a message over channels by the same code with other part sizes (64 KiB to 16 MiB:
  ``[p2p_nvlink]``), each channel a thread block copying over NVLink at a per-channel rate where it is known (Hopper,
  from a calibration run; NCCL has no such figure), and, on buffers NCCL has not registered, each part is copied
  twice, into the receiver's FIFO and out of it, the second copy one chunk behind: :func:`nvlink_ramp`. An
  all-to-all's messages to its g - 1 peers go the same way, all at once.

>>> from .config import configure
>>> c = configure("dgx-b200", 8, nodes=8)
>>> round(latency_s(c) * 1e6, 1), crossings(c)
(28.0, 2)
>>> r = net_ramp(c, s_per_byte=1 / c.nic.beta_Bps, other_s_per_byte=0.0)
>>> [int(x) for x in r.channels([1024, 65536, 131072, 262144, 524288, 1048576])]
[1, 1, 1, 2, 4, 4]
>>> one = configure("dgx-h100", 8)
>>> [int(x) for x in nvlink_ramp(one, s_per_byte=one.dom.shift_inv).channels([2**25, 2**26, 2**27, 2**28, 2**29])]
[4, 4, 8, 16, 32]
"""

from __future__ import annotations

import math
from typing import Any

from . import cloud, tuning
from .config import Config
from .corrections import P2pNetRamp
from .costs import Cost

__all__ = [
    "own_transport", "crossings_over", "crossings", "latency_s", "chunk_bytes", "channels_per_peer", "net_ramp",
    "plugin_rails", "across_nodes", "nvlink_ramp",
]


def _t() -> dict[str, Any]:
    return dict(tuning.raw()["p2p_net"])


def _pow2_up(x: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1, x))))


def own_transport(c: Config) -> bool:
    """Whether NCCL's own network transport (IB/RoCE verbs) carries the call: a catalog NIC, not a cloud fabric."""
    return c.nodes > 1 and c.nic.id not in cloud.fabrics()


def crossings_over(nic_id: str) -> int:
    """Network crossings a point-to-point call across nodes pays over the NIC ``nic_id``: the clear-to-send and the
    data over NCCL's own transport (a catalog NIC), the data alone over a cloud fabric's net plugin."""
    return 1 if nic_id in cloud.fabrics() else int(_t()["rendezvous_crossings"])


def crossings(c: Config) -> int:
    """Network crossings a call on ``c`` pays (:func:`crossings_over` across nodes; one inside a node)."""
    return crossings_over(c.nic.id) if c.nodes > 1 else 1


def latency_s(c: Config) -> float:
    """The latency of one point-to-point call across nodes, seconds: the NIC's α per network crossing."""
    return crossings(c) * c.nic.alpha_s


def chunk_bytes(c: Config) -> int:
    """NCCL's point-to-point chunk across nodes, bytes (NCCL_P2P_NET_CHUNKSIZE; x2 on an ARM host with a GPU of
    compute capability >= 10.0)."""
    t = _t()
    arch = tuning.gpu_arch(c.system.gpu)
    late = tuning.ARCHITECTURES.index(arch) >= tuning.ARCHITECTURES.index("blackwell")
    ratio = int(t["arm_blackwell_chunk_ratio"]) if (c.system.host_cpu == "arm" and late) else 1
    return ratio * int(t["chunk_bytes"])


def _p2p_channels(c: Config) -> int:
    """NCCL's p2pnChannels: pow2Up of the collective channel count where logs state it (across nodes of 8 GPUs,
    ``[p2p_net] coll_channels_8gpu_nodes``, NCCL's count for one NIC per GPU at up to 400 Gb/s with CollNet off; on
    one node, and with fewer GPUs per node, ``[coll_channels]``), else MAXCHANNELS."""
    t = _t()
    if c.nodes > 1 and c.gpus == 8:
        return _pow2_up(int(t["coll_channels_8gpu_nodes"]))
    coll = tuning.coll_channels(tuning.gpu_arch(c.system.gpu))
    return _pow2_up(coll) if coll is not None else int(t["max_channels"])


def channels_per_peer(c: Config) -> tuple[int, int]:
    """(nChannelsMin, nChannelsMax) NCCL gives one point-to-point message to a peer across nodes."""
    t = _t()
    s = c.system
    nics = max(1, (c.nics_per_host or s.nics_per_host) // s.gpus_per_host)
    per_peer = max(nics, math.ceil(int(c.nic.line_GBps_dir) / float(t["per_channel_GBps"])))
    if c.gpus > 1:  # a GPU of the same node: 2 x its NVLink links through NVSwitch, 2 over PCIe
        local = 2 * max(1, s.links_per_gpu) if s.nvswitch_count > 0 else 2
        per_peer = min(per_peer, local)
    per_peer = _pow2_up(per_peer)
    total = _p2p_channels(c)
    rounds = math.ceil(c.ranks / int(t["max_p2p_per_batch"]))
    while per_peer * rounds > total and per_peer > 1:
        per_peer //= 2
    return _starting_channels(per_peer, c.ranks, total), per_peer


def _starting_channels(per_peer: int, ranks: int, total: int) -> int:
    """nChannelsMin: the channels a message starts on, p2pnChannelsPerPeer halved while x nRanks > p2pnChannels
    (src/enqueue.cc scheduleP2pTasksToPlan), on one node and across nodes alike."""
    low = per_peer
    while low * ranks > total and low > 1:
        low //= 2
    return low


def net_ramp(c: Config, *, s_per_byte: float, other_s_per_byte: float) -> P2pNetRamp | None:
    """The channels of a send/recv message across nodes and what they carry (:class:`.P2pNetRamp`; ``s_per_byte``
    and ``other_s_per_byte`` as its fields), or None where the model keeps the NIC's full rate from the first byte: a
    cloud fabric, or NCCL before 2.29 (no per-channel figure)."""
    t = _t()
    if not own_transport(c) or not tuning.newer_or_same(c.nccl_version, str(t["per_channel_since"])):
        return None
    low, high = channels_per_peer(c)
    chunk = chunk_bytes(c)
    return P2pNetRamp(
        s_per_byte=s_per_byte, other_s_per_byte=other_s_per_byte, net_Bps=c.nic.beta_Bps,
        per_channel_Bps=float(t["per_channel_GBps"]) * 1e9, min_part_bytes=chunk / 2, max_part_bytes=float(chunk),
        channels_min=low, channels_max=high,
    )


def rails_per_device(c: Config) -> int:
    """NICs in one GPU's NCCL network device: a cloud fabric's ``rails_per_device`` (its plugin may join several
    NICs into one device), 1 on a catalog NIC (NCCL's own transport makes each NIC a device)."""
    f = cloud.fabrics().get(c.nic.id)
    return 1 if f is None else f.rails_per_device


def plugin_rails(c: Config, *, s_per_byte: float, other_s_per_byte: float) -> P2pNetRamp | None:
    """The rails of a cloud fabric's NCCL device that a send/recv message is striped over (:class:`.P2pNetRamp` with
    one rail per "channel"), or None where the device is one NIC (:func:`rails_per_device` is 1: p4d, p4de, every
    catalog NIC). AWS's plugin on p5 joins the 4 EFAs nearest a GPU into one device and stripes a message over
    ceil(size / 128 KiB) of them (``data/cloud_fabrics.toml`` ``rails_per_device``, ``min_stripe_bytes``)."""
    rails = rails_per_device(c)
    if c.nodes < 2 or rails < 2:
        return None
    stripe = cloud.fabrics()[c.nic.id].min_stripe_bytes
    return P2pNetRamp(
        s_per_byte=s_per_byte, other_s_per_byte=other_s_per_byte, net_Bps=rails * c.nic.beta_Bps,
        per_channel_Bps=c.nic.beta_Bps, min_part_bytes=stripe, max_part_bytes=stripe,
        channels_min=1, channels_max=rails,
    )


def across_nodes(c: Config) -> Cost:
    """The :class:`.Cost` of a ``sendrecv`` on ``c`` (nodes > 1): S to the next rank, over the GPU's network device
    (one NIC at ``c.nic``'s achievable rate, or the rails of :func:`plugin_rails`) or NVLink inside the node, after
    :func:`latency_s`, at the slower of the node's NVLink and the network at the channels of :func:`net_ramp` (or
    the rails of :func:`plugin_rails`). An all-to-all across nodes is NCCL's grouped point-to-point over the
    same transport and pays the same :func:`latency_s`, once per call (``costmodel/model.py``'s direct branch, and
    chapter 05's MoE model)."""
    other = c.dom.shift_inv
    spb = max(other, 1.0 / (rails_per_device(c) * c.nic.beta_Bps))  # the GPU's network device
    ramp = net_ramp(c, s_per_byte=spb, other_s_per_byte=other) or plugin_rails(c, s_per_byte=spb,
                                                                                  other_s_per_byte=other)
    return Cost(latency_s(c), spb, crossings(c), ramp=ramp)


def _nvlink_channels(c: Config) -> int | None:
    """p2pnChannels inside one node: as a log of the board prints it (``[p2p_nvlink] p2p_channels``), else NCCL's
    rule, pow2Up of the collective channel count (``[coll_channels]``), else None (not known)."""
    printed = dict(tuning.raw()["p2p_nvlink"])["p2p_channels"].get(tuning.gpu_arch(c.system.gpu))
    if printed is not None:
        return int(printed)
    coll = tuning.coll_channels(tuning.gpu_arch(c.system.gpu))
    return _pow2_up(coll) if coll is not None else None


def nvlink_ramp(c: Config, *, s_per_byte: float, all_to_all: bool = False) -> P2pNetRamp | None:
    """The channels of a send/recv message inside one node of ``c``, what they carry and the second copy stage
    (``[p2p_nvlink]``; the same :class:`.P2pNetRamp` as across nodes, its "network" being NVLink at
    ``1 / s_per_byte``), or None where the model keeps NVLink's rate from the first byte and one copy: across nodes,
    off NVSwitch, NCCL before 2.22, or a GPU whose channel count is not known. With 8 H100 ranks a message starts on
    4 of the 32 channels: 84 GB/s up to 64 MiB. The per-channel rate is known for Hopper only; elsewhere the channels
    carry NVLink's rate and only the second copy stage is charged. A message small enough for NCCL's LL protocol
    keeps NVLink's rate and one copy (``full_rate_up_to_bytes``: 16 KiB from 2.29, 512 KiB before on H100).

    ``all_to_all``: an all-to-all's g - 1 messages of S/g each, sent at once (``s_per_byte`` per byte of one
    message), which share the p2pnChannels: the course lets at most p2pnChannels / (g - 1) channels of a message copy
    at once, an approximation (NCCL splits a channel's warps among up to 8 works, src/device/sendrecv.h lines
    106-115) that matters above 512 MiB only. With registered buffers the channels keep the per-channel rate measured
    on the FIFO path (no registered run was seen)."""
    t = dict(tuning.raw()["p2p_nvlink"])
    total = _nvlink_channels(c)
    if (c.nodes > 1 or c.system.nvswitch_count == 0 or total is None
            or not tuning.newer_or_same(c.nccl_version, str(t["since"]))):
        return None
    rate = t["per_channel_GBps"].get(tuning.gpu_arch(c.system.gpu))
    chunk = float(t["chunk_bytes"])
    # LL below NCCL's threshold: x p2pnChannelsPerPeer before 2.29, x the message's own channels (one, 16 KiB) from it
    by_channels = tuning.newer_or_same(c.nccl_version, str(t["ll_by_channels_since"]))
    ll = float(t["ll_threshold_bytes"]) * (1 if by_channels else total)
    return P2pNetRamp(
        s_per_byte=s_per_byte, other_s_per_byte=0.0, net_Bps=1.0 / s_per_byte,
        per_channel_Bps=math.inf if rate is None else float(rate) * 1e9,
        min_part_bytes=chunk / float(t["min_part_divisor"]), max_part_bytes=chunk * float(t["max_part_multiplier"]),
        channels_min=_starting_channels(total, c.ranks, total), channels_max=total, full_rate_up_to_bytes=ll,
        message_share=1.0 / c.gpus if all_to_all else 1.0,
        stage_chunk_bytes=0.0 if c.p2p_one_copy else chunk * int(t["stage_fill_chunks"]),
        concurrent_channels_max=total / (c.gpus - 1) if all_to_all else math.inf,
    )
