"""The real nccl-tests outputs and NCCL logs the course ships (``nvcourse/data/nccl``), by label.

Course data, not a view: chapter 06b's paste boxes offer them and its checkers grade answers on them. Each
file's ``%%`` header names its source. The labels and the headers' systems stay English (the labels name the samples
in code and tests); :func:`sample_label` and :func:`system_words` give them in the reader's language.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from ..i18n import translate as _

__all__ = ["SAMPLES", "LOGS", "sample_path", "sample_text", "sample_label", "system_words", "hosts_shown",
           "link_words"]

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


#: A container's host name as Docker sets it (its id's first 12 hex digits): a hash to a learner, shown as words
_CONTAINER_ID = re.compile(r"\b[0-9a-f]{12}\b")


def hide_container_id(text: str) -> str:
    """``text`` with a container id (``container 036260b61d3a``) written as "a container" (the files keep the id)."""
    return re.sub(r"\bcontainer " + _CONTAINER_ID.pattern, "a container", text)


def _sample_words() -> dict[str, str]:
    """The shipped samples' labels (:data:`SAMPLES`, :data:`LOGS`) and the systems of their ``%% system:`` lines
    (container ids already hidden), English -> the current language (the files and the labels stay English: the
    labels name the samples in code and tests)."""
    return {
        "8x H100, one node (NVSwitch)": _("8x H100, one node (NVSwitch)"),
        "2 nodes x 8 H100 (InfiniBand)": _("2 nodes x 8 H100 (InfiniBand)"),
        "2 nodes x 8 A100 (RoCE)": _("2 nodes x 8 A100 (RoCE)"),
        "2 nodes x 1 A40 (no op line: which test ran?)": _("2 nodes x 1 A40 (no op line: which test ran?)"),
        "2 nodes x 1 T4 over AWS EFA (with NCCL INFO lines)": _("2 nodes x 1 T4 over AWS EFA (with NCCL INFO lines)"),
        "8x H800: NVLS not available": _("8x H800: NVLS not available"),
        "2 nodes x 8 H100: NVLS available": _("2 nodes x 8 H100: NVLS available"),
        "2 nodes, IB with GDRDMA, P2P/CUMEM (NCCL 2.2x)": _("2 nodes, IB with GDRDMA, P2P/CUMEM (NCCL 2.2x)"),
        "A100, IB, NCCL 2.7.6 wording": _("A100, IB, NCCL 2.7.6 wording"),
        "AWS EFA plugin, mpirun tags": _("AWS EFA plugin, mpirun tags"),
        "Sockets on loopback": _("Sockets on loopback"),
        "H20 node: the topology search's ring graph, crossNic 1":
            _("H20 node: the topology search's ring graph, crossNic 1"),
        "1 node, 8x H100 80GB HBM3 (NVSwitch), one process, -g 8, driver 550.90.07 / CUDA 12.4":
            _("1 node, 8x H100 80GB HBM3 (NVSwitch), one process, -g 8, driver 550.90.07 / CUDA 12.4"),
        "2 Kubernetes worker pods x 8 H100 80GB HBM3, MPI operator with HPC-X OpenMPI, one process per GPU":
            _("2 Kubernetes worker pods x 8 H100 80GB HBM3, MPI operator with HPC-X OpenMPI, one process per GPU"),
        "2 nodes x 8 A100-SXM4-40GB (OCI BM.GPU4.8 on OKE), RDMA over RoCE VFs, one process per GPU under MPI":
            _("2 nodes x 8 A100-SXM4-40GB (OCI BM.GPU4.8 on OKE), RDMA over RoCE VFs, one process per GPU under "
              "MPI"),
        "2 nodes (gpu23, gpu24), 1x NVIDIA A40 each, sendrecv_perf -b 256 -e 1G":
            _("2 nodes (gpu23, gpu24), 1x NVIDIA A40 each, sendrecv_perf -b 256 -e 1G"),
        "2 EKS nodes (g4dn, 1x Tesla T4 each), AWS EFA through aws-ofi-nccl 1.5.0, NCCL 2.12.7+cuda11.4, mpirun "
        "--tag-output":
            _("2 EKS nodes (g4dn, 1x Tesla T4 each), AWS EFA through aws-ofi-nccl 1.5.0, NCCL 2.12.7+cuda11.4, "
              "mpirun --tag-output"),
        "a container, 8x H800 on NVSwitch, one process (-g 8), NCCL 2.18 built from source, NCCL_ALGO forced to a "
        "list that includes NVLS":
            _("a container, 8x H800 on NVSwitch, one process (-g 8), NCCL 2.18 built from source, NCCL_ALGO forced "
              "to a list that includes NVLS"),
        "qh100-gpu19 and qh100-gpu20, 8x H100 each (16 ranks), NVSwitch with NVLS, 4 NICs per node":
            _("qh100-gpu19 and qh100-gpu20, 8x H100 each (16 ranks), NVSwitch with NVLS, 4 NICs per node"),
        "AKS, 2 worker pods x 8 GPUs (16 ranks), InfiniBand, one process per GPU, NCCL 2.2x wording (Channel NN/0, "
        "P2P/CUMEM)":
            _("AKS, 2 worker pods x 8 GPUs (16 ranks), InfiniBand, one process per GPU, NCCL 2.2x wording (Channel "
              "NN/0, P2P/CUMEM)"),
        "host 10-90-43-152, 4x A100-SXM4-40GB in one process (-g 4) on 2 nodes, 7 IB HCAs + 2 RoCE ports, NCCL "
        "2.7.6, NCCL_P2P_LEVEL=LOC, NCCL_SHM_DISABLE=1":
            _("host 10-90-43-152, 4x A100-SXM4-40GB in one process (-g 4) on 2 nodes, 7 IB HCAs + 2 RoCE ports, "
              "NCCL 2.7.6, NCCL_P2P_LEVEL=LOC, NCCL_SHM_DISABLE=1"),
        "host axa, GPUs on NVSwitch (NVL 264.0 in the topology dump), IB disabled on purpose, sockets forced onto "
        "loopback `lo`":
            _("host axa, GPUs on NVSwitch (NVL 264.0 in the topology dump), IB disabled on purpose, sockets forced "
              "onto loopback `lo`"),
        "H20-GPU-05, H20 NVSwitch node (NVL[370.8] to NVS/0) with NICs, NCCL_PXN_DISABLE=1; two processes "
        "interleaved":
            _("H20-GPU-05, H20 NVSwitch node (NVL[370.8] to NVS/0) with NICs, NCCL_PXN_DISABLE=1; two processes "
              "interleaved"),
    }


def sample_label(name: str) -> str:
    """A shipped sample's label (a key of :data:`SAMPLES` or :data:`LOGS`) in the current language."""
    return _sample_words().get(name, name)


def system_words(system: str) -> str:
    """A sample's ``%% system:`` text as a learner reads it: a container's id hidden (:func:`hide_container_id`),
    in the current language where the course knows the text."""
    system = hide_container_id(system)
    return _sample_words().get(system, system)


def hosts_shown(hosts: list[str], limit: int) -> str:
    """The first ``limit`` of a log's host names, labelled as host names; a container's (its id, a hash to a
    learner) as "a container", with no label when every one is."""
    names = [_("a container") if _CONTAINER_ID.fullmatch(h) else h for h in hosts[:limit]]
    if all(_CONTAINER_ID.fullmatch(h) for h in hosts[:limit]):
        return ", ".join(names)
    label = _("host name in the log: ") if len(hosts) == 1 else _("host names in the log: ")
    return label + ", ".join(names)


#: A GitHub address: owner, repository, then what it points at (an issue's or pull request's number, or a file)
_GITHUB = re.compile(r"https?://github\.com/[^/]+/(?P<repo>[^/]+)"
                     r"(?:/(?:issues|pull)/(?P<number>\d+)|/blob/[^/]+/(?:[^\s]*/)?(?P<file>[^/\s]+?)(?:\.\w+)?)?/?$")


def link_words(url: str) -> str:
    """The text a caption shows for a source's ``url``, as words: a GitHub file as its repository and file name
    ("oci-hpc-oke README", never the commit of a permalink), an issue or pull request as ``repo#number`` (as the
    chapters cite them), any other address as its host name."""
    found = _GITHUB.match(url)
    if found and found["number"]:
        return f"{found['repo']}#{found['number']}"
    if found:
        return f"{found['repo']} {found['file']}" if found["file"] else found["repo"]
    return re.sub(r"^https?://(?:www\.)?([^/]+).*$", r"\1", url)
