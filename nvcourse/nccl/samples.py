"""The real nccl-tests outputs and NCCL logs the course ships (``nvcourse/data/nccl``), by label.

Course data, not a view: chapter 06b's paste boxes offer them and its checkers grade answers on them. Each
file's ``%%`` header names its source.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["SAMPLES", "LOGS", "sample_path", "sample_text"]

#: nccl-tests outputs shipped in nvcourse/data/nccl (real runs; sources in each file's %% header)
SAMPLES = {
    "8x H100, one node (NVSwitch)": "h100_8gpu_single_node_markdown_indented.txt",
    "2 nodes x 8 H100 (InfiniBand)": "h100_2nodes_16ranks_k8s_mpijob.txt",
    "2 nodes x 8 A100 (RoCE)": "a100_2nodes_16ranks_oke.txt",
    "2 nodes x 1 A40 (no op line: which test ran?)": "sendrecv_a40_2nodes_truncated.txt",
    "2 nodes x 1 T4 over AWS EFA (with NCCL INFO lines)": "efa_aws_libfabric_mpirun_tagged.log",
}
#: NCCL_DEBUG=INFO logs shipped in nvcourse/data/nccl
LOGS = {
    "8x H800: NVLS not available": "h800_nvls_not_available_nccl892.log",
    "2 nodes x 8 H100: NVLS available": "nvls_available_h100_2nodes_nccl1357.log",
    "2 nodes, IB with GDRDMA, P2P/CUMEM (NCCL 2.2x)": "ib_cumem_gdrdma_2nodes_aks30.log",
    "A100, IB, NCCL 2.7.6 wording": "ib_v2_7_a100_gdr_env_nccl707.log",
    "AWS EFA plugin, mpirun tags": "efa_aws_libfabric_mpirun_tagged.log",
    "Sockets on loopback": "socket_lo_gdr_disabled_topo_nccl1053.log",
    "H20 node: the topology search's ring graph, crossNic 1": "graph_ring_crossnic_h20_nccl1189.log",
}


def sample_path(name: str) -> Path:
    """The file of a shipped sample, by its file name or by its label in :data:`SAMPLES` / :data:`LOGS`."""
    name = SAMPLES.get(name, LOGS.get(name, name))
    return Path(str(resources.files("nvcourse").joinpath("data/nccl", name)))


def sample_text(name: str) -> str:
    """Text of a shipped sample, by its file name or by its label in :data:`SAMPLES` / :data:`LOGS`."""
    return sample_path(name).read_text(encoding="utf-8")
