"""Every constant of the cost model that is not in the hardware catalog, in one place, with its source.

The catalog (``nvcourse/data/catalog.toml``) owns the hardware: link rates, link efficiencies, α per
link class, links per GPU, NICs per host. What is left here are *modelling* constants: numbers NVIDIA
put in NCCL's own cost model (``src/graph/topo.h``, ``src/graph/tuning.cc``, ``src/tuning/nvls.cc``).
The structure of the DGX-1 mesh and of the PCIe tree (link map, sockets, leaf switches, the CPU-to-CPU
link) is hardware, so it lives in the catalog too. Nothing here is fitted to the measurements in
``data/measurements.toml``.
"""

from __future__ import annotations

from typing import Final

from . import tuning

__all__ = [
    "NVLS_EFFICIENCY",
    "LINK_ARCH",
    "NVLS_LATENCY_US",
    "FACTOR_SOURCES",
]

#: NVLS (NVLink SHARP) efficiency: the share of the GPU's effective NVLink bandwidth that in-switch
#: reduction reaches. NCCL ``src/tuning/nvls.cc`` (earlier ``src/graph/tuning.cc``):
#: ``nvlsEfficiency[] = {0 Volta, 0 Ampere, 0.85 Hopper, 0.74 Blackwell}``, read from ``data/nccl_tuning.toml``.
NVLS_EFFICIENCY: Final[dict[str, float]] = {
    k: float(v) for k, v in tuning.raw()["nvls_efficiency"].items() if k != "lines"
}

#: Scale-up link (catalog id) -> GPU architecture, for :data:`NVLS_EFFICIENCY`. NVLink 4 is Hopper's
#: (H100/H200/H800), NVLink 5 Blackwell's (B200, GB200); earlier generations have no NVLS. Keyed by the
#: link rather than the GPU id so that a new GPU variant in the catalog needs no change here.
LINK_ARCH: Final[dict[str, str]] = {"nvlink4": "hopper", "nvlink5": "blackwell"}

#: Latency NCCL's model charges for one NVLS collective inside a node, µs (``hwLat[NVLINK][NVLS][Simple]``,
#: read from ``data/nccl_tuning.toml``; 23 in older releases). NVLS runs as a single in-switch step.
NVLS_LATENCY_US: Final[float] = tuning.hw_latency_us("nvlink", "nvls", "Simple")

#: Where each factor comes from, for the notebook and ``validation.factor_table()``.
FACTOR_SOURCES: Final[dict[str, str]] = {
    "link efficiency (catalog Link.efficiency)": "per link in nvcourse/data/catalog.toml: NVLink = NCCL topo.h "
    "effective bandwidth per link / line rate; IB = nccl-tests issues (46-48 GB/s per NDR NIC, 24 GB/s per HDR HCA, "
    "12.2 GB/s per EDR)",
    "NVLS efficiency 0.85 (Hopper) / 0.74 (Blackwell)": tuning.source("nvls_efficiency"),
    "NVLS latency 25 us": tuning.source("hw_latency_us"),
    "per-step latency by algorithm, protocol (LL/LL128/Simple) and link class": tuning.source("hw_latency_us"),
    "base latency per call by algorithm and protocol": tuning.source("base_latency_us"),
    "LL / LL128 bandwidth efficiency and caps": tuning.source("efficiency") + "; caps: "
    + tuning.source("ll_max_bw_GBps"),
    "alpha per step (catalog Link.alpha_us)": "NCCL's Simple-protocol ring hwLat: NVLink 3.4, PCI 5.7, NET 14 us ("
    + tuning.source("hw_latency_us") + ")",
    "inter-socket bandwidth 6 / 16 GB/s (catalog System.inter_socket_GBps_dir)": "NCCL src/graph/topo.h BDW_QPI_BW / "
    "AMD_BW (model values); pcie-8gpu host CPU is an assumption "
    "https://github.com/NVIDIA/nccl/blob/master/src/graph/topo.h",
    "DGX-1 cube-mesh link counts (catalog System.nvlink_pairs)": "DGX-1 whitepaper; nvidia-smi topo -m in "
    "Oneflow-Inc/DLPerf",
}
