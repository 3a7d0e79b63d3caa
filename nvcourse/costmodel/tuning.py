"""NCCL's own tuning constants (``nvcourse/data/nccl_tuning.toml``), read and looked up.

NCCL chooses an (algorithm, protocol) pair per call from a cost model of its own,
``src/graph/tuning.cc``: ``time = latency + bytes / bandwidth`` with a latency made of a *base* (once per
call) plus a *hardware* latency per step that depends on the link class (NVLink, PCIe, network), the
algorithm and the protocol, and a bandwidth that each protocol scales and caps. This module only
loads those tables (with the NCCL commit and line range they come from) and answers look-ups; the
formulas that use them are in :mod:`nvcourse.costmodel.protocols`.

>>> base_latency_us("ring", "LL"), hw_latency_us("nvlink", "ring", "LL"), hw_latency_us("net", "ring", "Simple")
(6.6, 0.6, 14.0)
"""

from __future__ import annotations

from typing import Any, Final

from .._data import load

__all__ = [
    "PROTOCOLS",
    "LINK_CLASSES",
    "raw",
    "source",
    "base_latency_us",
    "hw_latency_us",
    "ARCHITECTURES",
    "ll_max_bw_GBps",
    "net_overhead_us",
    "per_channel_max_GBps",
    "efficiency",
    "nvls_efficiency",
    "nvls_heads",
    "coll_channels",
    "gpu_arch",
    "ll128_allowed",
]

#: NCCL's protocols, in NCCL's order (``NCCL_PROTO_LL``, ``NCCL_PROTO_LL128``, ``NCCL_PROTO_SIMPLE``).
PROTOCOLS: Final[tuple[str, ...]] = ("LL", "LL128", "Simple")
#: NCCL's link classes (``NCCL_HW_NVLINK``, ``NCCL_HW_PCI``, ``NCCL_HW_NET``).
LINK_CLASSES: Final[tuple[str, ...]] = ("nvlink", "pci", "net")
#: NCCL's GPU architecture rows, oldest first (its compute-capability index: Volta, Ampere, Hopper, Blackwell).
ARCHITECTURES: Final[tuple[str, ...]] = ("volta", "ampere", "hopper", "blackwell")


def raw() -> dict[str, Any]:
    """The parsed TOML file (cached by :func:`nvcourse._data.load`: read-only)."""
    return load("nccl_tuning")


def source(table: str | None = None) -> str:
    """'NCCL 2.30.7 src/graph/tuning.cc lines A-B @ commit' for a table (or the file)."""
    s = raw()["source"]
    lines = raw().get(table, {}).get("lines", "") if table else ""
    where = f" lines {lines}" if lines else ""
    return f"NCCL {s['version']} {s['file']}{where} @ {s['commit'][:12]} ({s['repo']})"


def _proto_index(proto: str) -> int:
    if proto not in PROTOCOLS:
        raise ValueError(f"proto must be one of {', '.join(PROTOCOLS)}; got {proto!r}")
    return PROTOCOLS.index(proto)


def base_latency_us(algo: str, proto: str) -> float:
    """NCCL's once-per-call latency of (algorithm, protocol), µs (``baseLatencies``)."""
    return float(raw()["base_latency_us"][algo][_proto_index(proto)])


def hw_latency_us(link_class: str, algo: str, proto: str) -> float:
    """NCCL's per-step latency over a link class, µs (``hwLatencies``); 0 where NCCL never runs the pair."""
    if link_class not in LINK_CLASSES:
        raise ValueError(f"link_class must be one of {', '.join(LINK_CLASSES)}; got {link_class!r}")
    return float(raw()["hw_latency_us"][link_class][algo][_proto_index(proto)])


def _node_column(nodes: int) -> int:
    return 0 if nodes <= 1 else (1 if nodes == 2 else 2)


def _cpu_row(host_cpu: str) -> str:
    """NCCL's CPU row: AMD hosts have their own; Intel, Arm and any other host take Intel's (tuning.cc 225-233,
    268-272)."""
    return "amd" if host_cpu == "amd" else "intel"


def ll_max_bw_GBps(arch: str, nodes: int, host_cpu: str = "intel") -> float:
    """Cap on LL's bus bandwidth, GB/s: by GPU architecture on one node, by host CPU (catalog ``host_cpu``)
    across nodes."""
    row = arch if nodes <= 1 else _cpu_row(host_cpu)
    return float(raw()["ll_max_bw_GBps"][row][_node_column(nodes)])


def net_overhead_us(host_cpu: str, proto: str) -> float:
    """What each inter-node ring step costs NCCL at least, µs: the host's network post overhead, tripled with
    Simple (``getNetOverhead``)."""
    t = raw()["net_overhead_us"]
    return float(t[_cpu_row(host_cpu)]) * (float(t["simple_multiplier"]) if proto == "Simple" else 1.0)


def per_channel_max_GBps(kind: str, arch: str, nodes: int) -> float:
    """Per-channel bus-bandwidth cap, GB/s (``kind``: ring_ll128, tree_ll128, tree, nvlstree)."""
    return float(raw()["per_channel_max_GBps"][kind][arch][_node_column(nodes)])


def efficiency(name: str) -> float:
    """A protocol efficiency NCCL applies to the Simple bus bandwidth (see the TOML's [efficiency])."""
    return float(raw()["efficiency"][name])


def nvls_efficiency(arch: str) -> float | None:
    """NVLS (NVLink SHARP) efficiency of an architecture, or None where NCCL has no NVLS."""
    v = raw()["nvls_efficiency"].get(arch)
    return None if v is None else float(v)


def nvls_heads(gpus: int) -> int:
    """Channels ("heads") of NCCL's NVLS graph on a domain of ``gpus`` GPUs: one per GPU, at most 32."""
    return min(int(raw()["nvls_heads"]["max_heads"]), gpus)


def coll_channels(arch: str) -> int | None:
    """NCCL's collective channel count on this architecture's NVSwitch board, where a published log states it."""
    v = raw()["coll_channels"].get(arch)
    return None if v is None else int(v)


def gpu_arch(gpu_id: str) -> str:
    """NCCL's architecture row (volta, ampere, hopper, blackwell) of a catalog GPU id."""
    table = raw()["gpu_arch"]
    if gpu_id not in table:
        raise ValueError(f"no NCCL architecture is known for GPU {gpu_id!r} (data/nccl_tuning.toml [gpu_arch])")
    return str(table[gpu_id])


def ll128_allowed(gpu_id: str, intra_nvlink: bool) -> bool:
    """Whether NCCL enables LL128 by default: not before Volta, and only when the node's GPUs use NVLink."""
    t = raw()["ll128"]
    if gpu_id in t["disabled_gpus"]:
        return False
    return intra_nvlink or not t["needs_nvlink"]
