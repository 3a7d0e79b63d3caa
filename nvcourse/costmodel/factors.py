"""Every constant of the cost model that is not in the hardware catalog, in one place, with its source.

The catalog (``nvcourse/data/catalog.toml``) owns the hardware: link rates, link efficiencies, α per
link class, links per GPU, NICs per host. What is left here are *modelling* constants: numbers NVIDIA
put in NCCL's own cost model (``src/graph/topo.h``, ``src/graph/tuning.cc``, ``src/tuning/nvls.cc``)
and the structure of two systems that the catalog describes only by name (``hybrid-cube-mesh``,
``pcie-tree``). Nothing here is fitted to the measurements in ``data/measurements.toml``.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "NVLS_EFFICIENCY",
    "LINK_ARCH",
    "NVLS_LATENCY_US",
    "INTER_SOCKET_GBps_dir",
    "CUBE_MESH_NVLINKS",
    "CUBE_MESH_SOCKET",
    "PCIE_TREE_LEAF",
    "PCIE_TREE_SOCKET",
    "FACTOR_SOURCES",
]

#: NVLS (NVLink SHARP) efficiency: the share of the GPU's effective NVLink bandwidth that in-switch
#: reduction reaches. NCCL ``src/tuning/nvls.cc`` (earlier ``src/graph/tuning.cc``):
#: ``static const float nvlsEfficiency[] = {0.0f /*Volta*/, 0.0f /*Ampere*/, 0.85f /*Hopper*/, 0.74f /*Blackwell*/}``
#: https://github.com/NVIDIA/nccl/blob/master/src/tuning/nvls.cc
NVLS_EFFICIENCY: Final[dict[str, float]] = {"hopper": 0.85, "blackwell": 0.74}

#: Scale-up link (catalog id) -> GPU architecture, for :data:`NVLS_EFFICIENCY`. NVLink 4 is Hopper's
#: (H100/H200/H800), NVLink 5 Blackwell's (B200, GB200); earlier generations have no NVLS. Keyed by the
#: link rather than the GPU id so that a new GPU variant in the catalog needs no change here.
LINK_ARCH: Final[dict[str, str]] = {"nvlink4": "hopper", "nvlink5": "blackwell"}

#: Latency NCCL's model charges for one NVLS collective inside a node, µs (``hwLat[NVLINK][NVLS][Simple]``
#: = 25 in NCCL 2.2x ``src/graph/tuning.cc``; 23 in older releases). NVLS runs as a single in-switch step.
NVLS_LATENCY_US: Final[float] = 25.0

#: Bandwidth of the CPU-to-CPU link (UPI/QPI/xGMI) that GPU traffic between sockets crosses, GB/s per
#: direction, as NCCL's topology model sets it (``src/graph/topo.h``: ``BDW_QPI_BW 6.0`` for Broadwell,
#: ``AMD_BW 16.0`` for AMD EPYC). These are NCCL's *model* values, not measurements.
#: * dgx-1-v100: two Xeon E5-2698 v4 (Broadwell) per the DGX-1 whitepaper -> BDW_QPI_BW.
#: * pcie-8gpu: ASSUMPTION: an AMD EPYC host (the usual host of 8-GPU PCIe Gen4 servers) -> AMD_BW.
INTER_SOCKET_GBps_dir: Final[dict[str, float]] = {"dgx-1-v100": 6.0, "pcie-8gpu": 16.0}

#: DGX-1 (V100) hybrid cube-mesh: NVLink links between GPU pairs (NV1 / NV2 in ``nvidia-smi topo -m``),
#: from the DGX-1 whitepaper figure and the topology dump in Oneflow-Inc/DLPerf (catalog source
#: ``dlperf-topo``). Two fully connected quads {0..3} and {4..7}, plus i <-> i+4. Every GPU uses 6 links.
CUBE_MESH_NVLINKS: Final[dict[tuple[int, int], int]] = {
    (0, 1): 1, (0, 2): 1, (0, 3): 2, (0, 4): 2,
    (1, 2): 2, (1, 3): 1, (1, 5): 2,
    (2, 3): 2, (2, 6): 1,
    (3, 7): 1,
    (4, 5): 1, (4, 6): 1, (4, 7): 2,
    (5, 6): 2, (5, 7): 1,
    (6, 7): 2,
}  # fmt: skip
#: CPU socket of each DGX-1 GPU (CPU affinity column of the same dump).
CUBE_MESH_SOCKET: Final[tuple[int, ...]] = (0, 0, 0, 0, 1, 1, 1, 1)

#: pcie-8gpu: leaf PCIe switch and socket of each GPU (PIX pairs 0-1, 2-3, 4-5, 6-7; PXB inside a
#: socket; SYS across), from the ``nvidia-smi topo -m`` in vllm-project/vllm#11122 (catalog ``vllm-11122``).
PCIE_TREE_LEAF: Final[tuple[int, ...]] = (0, 0, 1, 1, 2, 2, 3, 3)
PCIE_TREE_SOCKET: Final[tuple[int, ...]] = (0, 0, 0, 0, 1, 1, 1, 1)

#: Where each factor comes from, for the notebook and ``validation.factor_table()``.
FACTOR_SOURCES: Final[dict[str, str]] = {
    "link efficiency (catalog Link.efficiency)": "per link in nvcourse/data/catalog.toml: NVLink = NCCL topo.h effective "
    "bandwidth per link / line rate; IB = nccl-tests issues (46-48 GB/s per NDR NIC, 24 GB/s per HDR HCA, 12.2 GB/s per EDR)",
    "NVLS efficiency 0.85 (Hopper) / 0.74 (Blackwell)": "NCCL src/tuning/nvls.cc nvlsEfficiency "
    "https://github.com/NVIDIA/nccl/blob/master/src/tuning/nvls.cc",
    "NVLS latency 25 us": "NCCL src/graph/tuning.cc hwLat[NVLINK][NVLS][Simple] https://github.com/NVIDIA/nccl/blob/master/src/graph/tuning.cc",
    "alpha per step (catalog Link.alpha_us)": "NCCL src/graph/tuning.cc hwLat Ring/Simple: NVLink 3.4, PCI 5.7, NET 14 us",
    "inter-socket bandwidth 6 / 16 GB/s": "NCCL src/graph/topo.h BDW_QPI_BW / AMD_BW (model values); "
    "pcie-8gpu host CPU is an assumption https://github.com/NVIDIA/nccl/blob/master/src/graph/topo.h",
    "DGX-1 cube-mesh link counts": "DGX-1 whitepaper; nvidia-smi topo -m in Oneflow-Inc/DLPerf",
}
