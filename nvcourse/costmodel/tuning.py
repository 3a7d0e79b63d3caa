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

from functools import cache
from typing import Any, Final

from .._data import load
from ..i18n import translate as _

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
    "nvls_min_gpus",
    "coll_channels",
    "gpu_arch",
    "ll128_allowed",
    "DEFAULT_VERSION",
    "version_key",
    "versions",
    "resolve_version",
    "newer_or_same",
    "rules",
    "has_algorithm",
]

#: NCCL's protocols, in NCCL's order (``NCCL_PROTO_LL``, ``NCCL_PROTO_LL128``, ``NCCL_PROTO_SIMPLE``).
PROTOCOLS: Final[tuple[str, ...]] = ("LL", "LL128", "Simple")
#: NCCL's link classes (``NCCL_HW_NVLINK``, ``NCCL_HW_PCI``, ``NCCL_HW_NET``).
LINK_CLASSES: Final[tuple[str, ...]] = ("nvlink", "pci", "net")
#: The NCCL release whose tables nccl_tuning.toml holds: what a prediction uses unless told otherwise.
DEFAULT_VERSION: Final[str] = "2.30"
#: NCCL's GPU architecture rows, oldest first (its compute-capability index: Volta, Ampere, Hopper, Blackwell).
ARCHITECTURES: Final[tuple[str, ...]] = ("volta", "ampere", "hopper", "blackwell")


def raw(version: str | None = None) -> dict[str, Any]:
    """NCCL's tables for ``version`` (``X.Y``; None = :data:`DEFAULT_VERSION`, nccl_tuning.toml as is), read-only.

    Another version takes nccl_tuning.toml and replaces what ``data/nccl_versions.toml`` has for it."""
    v = resolve_version(version)
    return load("nccl_tuning") if v == DEFAULT_VERSION else _versioned(v)


@cache
def versions() -> tuple[str, ...]:
    """The NCCL releases (``X.Y``) whose tables the data holds, oldest first."""
    return tuple(load("nccl_versions")["versions"])


def version_key(v: str) -> tuple[int, ...]:
    """A release ``X.Y`` (or ``X.Y.Z``) as a tuple that sorts as releases do: 2.9 before 2.19."""
    return tuple(int(x) for x in v.split("."))


@cache
def resolve_version(version: str | None) -> str:
    """``X.Y`` for a version written ``X.Y``, ``X.Y.Z``, ``vX.Y.Z-1`` or None (the default); ValueError otherwise."""
    if version is None or version == "":
        return DEFAULT_VERSION
    text = str(version).strip().lstrip("v").split("-")[0].split("+")[0]
    parts = text.split(".")
    minor = ".".join(parts[:2])
    if len(parts) in (2, 3) and all(p.isdigit() for p in parts) and minor in versions():
        return minor
    raise ValueError(_("nccl_version must be one of {allowed} (X.Y, or X.Y.Z of one of them); got {value}").format(
        allowed=", ".join(versions()), value=repr(version)))


def newer_or_same(version: str | None, than: str) -> bool:
    """Whether NCCL ``version`` (None = the default) is ``than`` or later."""
    return version_key(resolve_version(version)) >= version_key(than)


def _rows_by_arch(rows: list[list[float]]) -> dict[str, list[float]]:
    """NCCL's rows by architecture; a GPU newer than the release's last row takes that row (compCapIndex clamps)."""
    return {a: list(rows[min(i, len(rows) - 1)]) for i, a in enumerate(ARCHITECTURES)}


def _by_algo(table: dict[str, list[float]], pat_base: bool = False) -> dict[str, list[float]]:
    """A release's row per algorithm in nccl_tuning.toml's names; a row the release's array leaves out is 0 (C
    zero-initialises it), but PAT's base latency, which 2.23-2.27 write as a literal 8 us in the code."""
    out = dict(table)
    if "collnet" in out:  # 2.8-2.13: one CollNet algorithm
        out.setdefault("collnet_direct", out["collnet"])
        out.setdefault("collnet_chain", out.pop("collnet"))
    for algo in ("collnet_direct", "collnet_chain", "nvls", "nvlstree", "pat"):
        out.setdefault(algo, [8.0, 8.0, 8.0] if (algo == "pat" and pat_base) else [0.0, 0.0, 0.0])
    return out


def _caps(sec: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """per_channel_max_GBps of a release: its per-architecture tables, or its one LL128 cap of before 2.18."""
    caps: dict[str, Any] = {"lines": sec.get("ring_ll128_lines", sec.get("ll128_any_lines", ""))}
    for kind in ("ring_ll128", "tree_ll128", "tree", "nvlstree"):
        if kind in sec:
            caps[kind] = _rows_by_arch(sec[kind])
    # NVLSTree's per-channel ceiling came in 2.28 as NCCL's measure of what NVLSTree reaches; the data path is the
    # same in 2.18-2.27, so those releases keep 2.30's (on the calibration runs: 2-node H100 on 2.26, 16 % -> 5 %)
    caps.setdefault("nvlstree", base["per_channel_max_GBps"]["nvlstree"])
    if "ll128_any" in sec:
        one = sec["ll128_any"]
        if isinstance(one, float):
            rows = {a: [one] * 3 for a in ARCHITECTURES}
        elif len(one) == len(_FUNCTIONS):  # per collective (2.8-2.9): kept per op, see per_channel_max_GBps
            rows = {a: [min(one)] * 3 for a in ARCHITECTURES}
            caps["ll128_by_op"] = dict(zip(_FUNCTIONS, one, strict=True))
        else:  # per architecture (2.17)
            rows = {a: [r[0]] * 3 for a, r in _rows_by_arch([[x] for x in one]).items()}
        caps["ring_ll128"] = caps["tree_ll128"] = rows
    return caps


@cache
def _versioned(v: str) -> dict[str, Any]:
    base = load("nccl_tuning")
    sec = load("nccl_versions")["versions"][v]
    out: dict[str, Any] = {k: val for k, val in base.items()}
    out["source"] = {"repo": base["source"]["repo"], "commit": sec["commit"], "version": sec["tag"].lstrip("v")[:-2],
                     "file": base["source"]["file"]}  # fmt: skip
    pat8 = bool(sec.get("pat_base_8_in_code", False))
    out["base_latency_us"] = {"lines": sec["base_latency_us_lines"], **_by_algo(sec["base_latency_us"], pat8)}
    out["hw_latency_us"] = {"lines": sec["hw_latency_us_lines"]} | {
        cls: _by_algo(t) for cls, t in sec["hw_latency_us"].items()
    }
    ll = sec["ll_max_bw_GBps"]
    out["ll_max_bw_GBps"] = {"lines": sec["ll_max_bw_GBps_lines"], **_rows_by_arch(ll), "intel": ll[0], "amd": ll[1]}
    out["per_channel_max_GBps"] = _caps(sec, base)
    corr = dict(base["size_correction"])
    corr["tree_allreduce"] = dict(zip(PROTOCOLS, sec["tree_correction"], strict=True))
    corr["tree_max_log"] = len(sec["tree_correction"][0])
    corr["lines"] = sec["tree_correction_lines"]
    corr["nvlstree_correction"] = bool(sec.get("nvlstree_correction", False))
    corr["ring_plateau_rule"] = sec.get("ring_plateau")
    out["size_correction"] = corr
    if "nvls_efficiency" in sec:
        e = sec["nvls_efficiency"]
        out["nvls_efficiency"] = {"lines": sec["nvls_efficiency_lines"], "hopper": e[2], "blackwell": e[3]}
    out["net_overhead_us"] = base["net_overhead_us"] if sec.get("net_overhead") else {
        "lines": "", "intel": 0.0, "amd": 0.0, "simple_multiplier": 1.0,
    }  # fmt: skip
    out["version_rules"] = sec
    return out


#: NCCL's collectives in its own order (``ncclFunc_t``), for the per-collective LL128 caps of 2.8-2.9.
_FUNCTIONS: Final[tuple[str, ...]] = ("broadcast", "reduce", "allgather", "reducescatter", "allreduce")


def rules(version: str | None = None) -> dict[str, Any]:
    """The formula facts of ``version`` (``data/nccl_versions.toml``; cached: read-only)."""
    return load("nccl_versions")["versions"][resolve_version(version)]


def has_algorithm(algo_key: str, version: str | None = None) -> bool:
    """Whether NCCL ``version`` has the algorithm (nvls, nvlstree, pat: its tuning.cc names it; others: always)."""
    if algo_key not in ("nvls", "nvlstree", "pat"):
        return True
    return bool(rules(version).get(f"has_{algo_key}", False))


def source(table: str | None = None, version: str | None = None) -> str:
    """'NCCL 2.30.7 src/graph/tuning.cc lines A-B @ commit' for a table (or the file)."""
    r = raw(version)
    s = r["source"]
    lines = r.get(table, {}).get("lines", "") if table else ""
    where = f" lines {lines}" if lines else ""
    return f"NCCL {s['version']} {s['file']}{where} @ {s['commit'][:12]} ({s['repo']})"


def _proto_index(proto: str) -> int:
    if proto not in PROTOCOLS:
        raise ValueError(f"proto must be one of {', '.join(PROTOCOLS)}; got {proto!r}")
    return PROTOCOLS.index(proto)


def base_latency_us(algo: str, proto: str, version: str | None = None) -> float:
    """NCCL's once-per-call latency of (algorithm, protocol), µs (``baseLatencies``)."""
    return float(raw(version)["base_latency_us"][algo][_proto_index(proto)])


def hw_latency_us(link_class: str, algo: str, proto: str, version: str | None = None) -> float:
    """NCCL's per-step latency over a link class, µs (``hwLatencies``); 0 where NCCL never runs the pair."""
    if link_class not in LINK_CLASSES:
        raise ValueError(f"link_class must be one of {', '.join(LINK_CLASSES)}; got {link_class!r}")
    return float(raw(version)["hw_latency_us"][link_class][algo][_proto_index(proto)])


def _node_column(nodes: int) -> int:
    return 0 if nodes <= 1 else (1 if nodes == 2 else 2)


def _cpu_row(host_cpu: str) -> str:
    """NCCL's CPU row: AMD hosts have their own; Intel, Arm and any other host take Intel's (tuning.cc 225-233,
    268-272)."""
    return "amd" if host_cpu == "amd" else "intel"


def ll_max_bw_GBps(arch: str, nodes: int, host_cpu: str = "intel", version: str | None = None) -> float:
    """Cap on LL's bus bandwidth, GB/s: by GPU architecture on one node, by host CPU (catalog ``host_cpu``)
    across nodes."""
    row = arch if nodes <= 1 else _cpu_row(host_cpu)
    return float(raw(version)["ll_max_bw_GBps"][row][_node_column(nodes)])


def net_overhead_us(host_cpu: str, proto: str, version: str | None = None) -> float:
    """What each inter-node ring step costs NCCL at least, µs: the host's network post overhead, tripled with
    Simple (``getNetOverhead``, NCCL 2.18 on; 0 before)."""
    t = raw(version)["net_overhead_us"]
    return float(t[_cpu_row(host_cpu)]) * (float(t["simple_multiplier"]) if proto == "Simple" else 1.0)


def per_channel_max_GBps(kind: str, arch: str, nodes: int, version: str | None = None, op: str = "allreduce") -> float:
    """Per-channel bus-bandwidth cap, GB/s (``kind``: ring_ll128, tree_ll128, tree, nvlstree); 0 where the release
    has no such cap. NCCL 2.8-2.9 capped LL128 per collective (``op``)."""
    caps = raw(version)["per_channel_max_GBps"]
    if kind in ("ring_ll128", "tree_ll128") and "ll128_by_op" in caps:
        return float(caps["ll128_by_op"].get(op, caps["ll128_by_op"]["allreduce"]))
    if kind not in caps:
        return 0.0
    return float(caps[kind][arch][_node_column(nodes)])


def efficiency(name: str, version: str | None = None, *, op: str = "allreduce", nodes: int = 1,
               gpus_per_node: int = 8) -> float:  # fmt: skip
    """A protocol efficiency NCCL applies to the Simple bus bandwidth (see the TOML's [efficiency]).

    Where a release used another rule (``data/nccl_versions.toml``): ring LL x1/4 across nodes and for all-reduce
    and reduce, else x1/3, before 2.21; ring LL128 x0.7 with one GPU per node before 2.23; tree LL128 across nodes
    x0.915 in 2.8-2.9."""
    r = rules(version)
    if name == "ring_ll" and r.get("ring_ll_quarter"):
        return 0.25 if (nodes > 1 or op in ("allreduce", "reduce")) else 1.0 / 3.0
    if name == "ring_ll128" and gpus_per_node < 2 and "ring_ll128_one_gpu_per_node" in r:
        return float(r["ring_ll128_one_gpu_per_node"])
    if name == "tree_ll128_multi_node" and r.get("tree_ll128_multi_node_0915"):
        return 0.915
    return float(raw(version)["efficiency"][name])


def nvls_efficiency(arch: str, version: str | None = None) -> float | None:
    """NVLS (NVLink SHARP) efficiency of an architecture, or None where NCCL has no NVLS."""
    v = raw(version)["nvls_efficiency"].get(arch)
    return None if v is None else float(v)


def nvls_min_gpus() -> int:
    """The fewest GPUs of a node on which NCCL enables NVLS (``ncclNvlsInit``: 2); above it the tuner chooses."""
    return int(raw()["nvls_enable"]["min_gpus"])


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


def ll128_allowed(gpu_id: str, intra_nvlink: bool, version: str | None = None) -> bool:
    """Whether NCCL enables LL128 by default, inside a node and across the network alike.

    Not before Volta, only when the node's GPUs reach each other over NVLink (``typeIntra <= PATH_NVB``), on the
    architectures the release names (``ll128_enable``: Volta/Ampere up to 2.14, + Hopper from 2.15, + Blackwell
    from 2.25, all from 2.27). Across nodes NCCL also asks that the NIC sit no farther than the GPU's PCIe switch
    (``typeInter <= PATH_PXB``, Hopper on: PXN); every multi-node system of the catalog is built that way."""
    t = raw(version)["ll128"]
    if gpu_id in t["disabled_gpus"]:
        return False
    if t["needs_nvlink"] and not intra_nvlink:
        return False
    text = str(rules(version).get("ll128_enable", "")).lower()
    return "all connections" in text or gpu_arch(gpu_id) in text
