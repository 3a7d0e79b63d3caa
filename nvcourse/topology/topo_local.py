"""NCCL's local NICs of each GPU, worked out from its topology XML, for :mod:`.topo_xml` and the ``topo`` text.

NCCL takes as a GPU's local NICs the network devices whose path from the GPU has the most bandwidth, and among those
the lowest path type (``src/graph/topo.cc`` ``ncclTopoGetLocal``, which ``ncclTopoGetLocalNet`` calls through
``ncclTopoGetLocalNetType``; read at v2.30.7-1). A path's bandwidth is its slowest link (``src/graph/paths.cc``
``ncclTopoSetPaths``): the ``<pci>`` links on the way (:func:`~.topo_pcie.nccl_pci_GBps`; a bridge NCCL merged into
a Broadcom switch above has none, :func:`~.topo_pcie.bcm_flatten`), the net's own link (``speed`` / 8000 GB/s,
``ncclTopoAddNet``), the link between two CPUs of one host (``ncclTopoGetInterCpuBw``) and, for a GPU on C2C, the
better of its C2C link and its PCIe way up to the CPU (both are PHB from a NIC beyond the CPU, so the search keeps
the faster). The figures and their sources are in ``nvcourse/data/nccl_tuning.toml`` ``[topology_xml]``.

These are the paths NCCL sets from the file. It changes some afterwards, which is not followed here: a GPU-NIC pair
that cannot use GPUDirect RDMA is routed through the CPU, and a GPU may reach a NIC through an NVLink peer (PXN).
Where a figure is missing (a NIC with no speed, a NIC known only as a PCI device, a link with no speed or width, a
CPU with no arch or model when the path crosses CPUs), NCCL fills it in when it runs, so no pick is made here.
"""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET

from .. import _data
from .topo_pcie import c_strtol

__all__ = ["code_nearest", "inter_cpu_GBps", "local_nic_notes", "local_nics", "path_GBps"]

_XML = _data.load("nccl_tuning")["topology_xml"]
_LOC_GBPS = float(_XML["loc_GBps"])  # a <nic> straight under <cpu> (ncclTopoAddCpu links it at LOC_BW)
_NET_DEFAULT_MBPS = int(_XML["net_default_speed_Mbps"])  # ncclTopoAddNet: no speed, or one <= 0
_INTER = {k: float(v) for k, v in _XML["inter_cpu_GBps"].items()}
#: nvidia-smi's codes from nearest to farthest, as the XML reader gives them; NCCL's path types keep that order
#: (src/include/graph.h: PATH_PIX 4, PATH_PXB 5, PATH_PHB 8, PATH_SYS 9)
_NEAR = ("PIX", "PXB", "PHB", "NODE", "SYS")


def _f32(x: float) -> float:
    """``x`` stored in a C float, as NCCL keeps its bandwidths: ties are compared as NCCL compares them."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _int_attr(raw: str | None) -> int | None:
    """An attribute as NCCL's xmlGetAttrInt reads it (strtol, base 0); None when absent (NCCL stops there)."""
    return None if raw is None else c_strtol(raw)


def _cpu_kind(cpu: ET.Element) -> str | None:
    """The key of ``inter_cpu_GBps`` for this ``<cpu>`` (ncclTopoAddCpu, ncclTopoGetInterCpuBw), ``'loc'`` for a CPU
    NCCL links at LOC_BW, None where the file leaves out what NCCL needs (it reads the host when it runs)."""
    arch, vendor = cpu.get("arch"), cpu.get("vendor")
    if arch is None:
        return None
    names = _XML["cpu_arch"]
    if arch.startswith(names["power"]):
        return "power"
    if arch.startswith(names["arm"]):
        return "arm"
    if not arch.startswith(names["x86"]):
        return "loc"
    if vendor is None:
        return None
    family, model = _int_attr(cpu.get("familyid")), _int_attr(cpu.get("modelid"))
    if vendor.startswith(_XML["cpu_vendor"]["intel"]):
        if family is None or model is None:
            return None
        for entry in _XML["intel_model_from"]:
            if family == 6 and model >= entry["modelid"]:
                return f"intel_{entry['model']}"
        return "intel_bdw"
    if vendor.startswith(_XML["cpu_vendor"]["amd"]):
        return "amd"
    if any(vendor.startswith(v) for v in _XML["cpu_vendor"]["zhaoxin"]):
        if family is None or model is None:
            return None
        yf = _XML["zhaoxin_yongfeng"]
        return "zhaoxin_yongfeng" if (family, model) == (yf["familyid"], yf["modelid"]) else "zhaoxin"
    return "loc"


def inter_cpu_GBps(cpu: ET.Element) -> float | None:
    """GB/s NCCL gives the link from this CPU to another CPU of its host; None when the file does not say enough."""
    kind = _cpu_kind(cpu)
    return None if kind is None else _LOC_GBPS if kind == "loc" else _INTER[kind]


def _min(parts: list[float | None]) -> float | None:
    return None if any(p is None for p in parts) else min(_f32(p) for p in parts)


def _net_GBps(n: dict) -> float:
    speed = n["speed_Gbps"]
    mbps = speed * 1000 if speed is not None and speed > 0 else _NET_DEFAULT_MBPS
    return mbps / 8000.0


def _own(d: dict) -> float | None:
    """A device's own link: its ``<pci>``'s, or LOC_BW for a NIC straight under ``<cpu>``."""
    return _LOC_GBPS if d["bus_id"] is None and not d["path"] else d["own_GBps"]


def _gpu_to_cpu(g: dict) -> float | None:
    """The GPU's best way up to its CPU: its PCIe links, or its C2C links (bw x count / 1000 each, added up)."""
    pcie = _min([_own(g), *g["links"]])
    c2c = sum(c["bw"] * c["count"] / 1000.0 for c in g.get("c2c", []) if c["bw"] and c["count"])
    return None if pcie is None else max(pcie, _f32(c2c))


def _common(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """How many bridges two paths share from the CPU down."""
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return k


def path_GBps(g: dict, n: dict, code: str, inter: dict[tuple, float | None]) -> float | None:
    """NCCL's bandwidth for the path from GPU ``g`` to net ``n`` (:mod:`.topo_xml`'s dicts), ``code`` their path code,
    ``inter`` the inter-CPU figure per ``(host, numa)``; None when a figure is missing."""
    net = _net_GBps(n)
    if code in ("PIX", "PXB"):  # below a common bridge: the links under it, on both sides
        k = _common(g["path"], n["path"])
        return _min([_own(g), *g["links"][k:], _own(n), *n["links"][k:], net])
    parts = [_gpu_to_cpu(g), _own(n), *n["links"], net]
    if g["numa"] != n["numa"]:  # the link leaves the NIC's CPU (ncclTopoConnectCpus, seen from the NIC)
        parts.append(inter.get((n["host"], n["numa"])))
    return _min(parts)


def local_nics(gpus: dict[str, dict], nics: dict[str, dict], codes: dict[tuple[str, str], str],
               inter: dict[tuple, float | None]) -> dict[str, dict]:
    """``{GPU: {'nics': [NIC labels], 'path': code, 'GBps': bandwidth, 'nic_GBps': {NIC: bandwidth}}}``: the NICs
    NCCL takes as each GPU's local ones (``nic_GBps``: NCCL's bandwidth to every NIC of its host), for the GPUs whose
    every path to a NIC of their host is known; ``nics`` are the named nets, in the reader's order."""
    out: dict[str, dict] = {}
    for g, gd in gpus.items():
        mine = {n: d for n, d in nics.items() if d["host"] == gd["host"]}  # no path to another host's NICs
        rated = {n: path_GBps(gd, d, codes[(g, n)], inter) for n, d in mine.items()}
        if not rated or None in rated.values():
            continue
        best = max(rated.values())
        near = min(_NEAR.index(codes[(g, n)]) for n, bw in rated.items() if bw == best)
        picks = [n for n, bw in rated.items() if bw == best and _NEAR.index(codes[(g, n)]) == near]
        out[g] = {"nics": picks, "path": _NEAR[near], "GBps": round(best, 6),
                  "nic_GBps": {n: round(bw, 6) for n, bw in rated.items()}}
    return out


def code_nearest(g: str, nics: list[str], codes: dict[tuple[str, str], str]) -> tuple[list[str], str] | None:
    """The NICs of GPU ``g`` at its best path code (ties together) and that code: the pick by code alone."""
    ranked = [(_NEAR.index(c), n) for n in nics if (c := codes.get((g, n))) in _NEAR]
    if not ranked:
        return None
    best = min(r for r, _n in ranked)
    return [n for r, n in ranked if r == best], _NEAR[best]


def local_nic_notes(local: dict[str, dict], nics: list[str], codes: dict[tuple[str, str], str],
                    names: dict[str, str]) -> list[str]:
    """One note where NCCL's pick (``local``, from :func:`local_nics`) differs from the nearest NICs by path code:
    which GPUs, what NCCL takes and what it leaves out, with the bandwidths of its model."""
    groups: dict[tuple, list[str]] = {}
    for g, pick in local.items():
        by_code = code_nearest(g, nics, codes)
        if by_code is None or set(by_code[0]) == set(pick["nics"]):
            continue
        left = tuple(n for n in by_code[0] if n not in pick["nics"])
        top = max(pick["nic_GBps"][n] for n in left)
        groups.setdefault((tuple(pick["nics"]), pick["path"], pick["GBps"], left, by_code[1], top), []).append(g)
    if not groups:
        return []
    parts = []
    for (taken, code, bw, left, left_code, top), gs in groups.items():
        said = ", ".join(names.get(n, n) for n in taken)
        parts.append(f"{', '.join(gs)} {'takes' if len(gs) == 1 else 'take'} {said} ({code}, {bw:g} GB/s), not "
                     f"{', '.join(names.get(n, n) for n in left)} ({left_code}, "
                     f"{'' if len(left) == 1 else 'at most '}{top:g} GB/s)")
    return ["the nearest NIC line follows NCCL's pick of a GPU's local NICs: the most bandwidth on the path first "
            "(its slowest link in NCCL's model: the PCIe links as the file states them, the NIC's speed, the link "
            "between CPUs), the nearest path type only among equals; so " + "; ".join(parts)]
