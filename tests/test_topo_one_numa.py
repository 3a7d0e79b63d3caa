"""``nvidia-smi topo -m`` pastes whose GPUs all report one NUMA node (or one CPU set) while devices read SYS: no CPU
socket is made up from such codes (nvcourse.topology.topo_graph.one_numa_sys).

Expected values read from the pastes: a10-4gpu-sys-2nic.txt prints NUMA Affinity 0 and CPU Affinity 0-127 on every GPU
row, SYS between every GPU pair and every GPU-NIC pair (6 + 8 = 14 pairs), PIX between NIC0 and NIC1; the V100 paste
(nccltests37) prints CPU Affinity 0-95 on every row and no NUMA column, SYS on 12 GPU pairs; pcie-8gpu-vllm.txt prints
CPU Affinity 0-95 and NUMA N/A on every row, SYS exactly between GPU0-3 and GPU4-7 (kept as two sockets).
"""

from pathlib import Path

import networkx as nx

from nvcourse.topology.draw import save_topology
from nvcourse.topology.topo_parser import read_topo

DATA = Path(__file__).parent.parent / "nvcourse" / "data" / "topo"
A10 = DATA / "a10-4gpu-sys-2nic.txt"
A100_BOND = DATA / "a100-8gpu-17nic-bond.txt"
VLLM = DATA / "pcie-8gpu-vllm.txt"
V100 = (Path(__file__).parent / "fixtures" / "pasted_heldout2"
        / "nccltests37_allgather_g8_v100_no_hash_old_columns_oob_failed.txt")


def _cpus(res) -> list[str]:
    return [n for n, k in res.graph.nodes(data="kind") if k == "cpu"]


def test_a10_one_numa_node_with_sys_is_one_cpu_and_a_vm_note(tmp_path):
    res = read_topo(str(A10))
    assert _cpus(res) == ["CPU0"]
    note = next(n for n in res.notes if n.startswith("all 4 GPUs report NUMA node 0, yet 14 device pairs read SYS"))
    assert "suggests a VM or virtualised PCIe" in note and "no socket inferred" in note
    assert not any("SMP interconnect" in n for n in res.notes)
    # the drawing stays a tree: each SYS device under its own root port, the two PIX NICs on one switch
    tree = res.graph.edge_subgraph([(u, v) for u, v, d in res.graph.edges(data=True) if d.get("kind") != "nvlink"])
    assert nx.is_tree(tree)
    assert sum(1 for _n, k in res.graph.nodes(data="kind") if k == "host_bridge") == 5
    out = tmp_path / "a10.png"
    save_topology(res.graph, str(out))
    assert out.stat().st_size > 10_000


def test_a100_bond_numa_zero_everywhere_is_one_cpu():
    res = read_topo(str(A100_BOND))  # every GPU row ends in NUMA Affinity 0
    assert _cpus(res) == ["CPU0"] and any(n.startswith("all 8 GPUs report NUMA node 0") for n in res.notes)


def test_v100_one_cpu_set_with_unsplittable_sys_is_one_cpu():
    res = read_topo(str(V100))
    assert _cpus(res) == ["CPU0"]
    note = next(n for n in res.notes if n.startswith("all 8 GPUs report CPU affinity 0-95, yet 12 device pairs"))
    assert "or NUMA hidden from the OS" in note


def test_vllm_clean_socket_split_is_kept():
    res = read_topo(str(VLLM))
    assert sorted(_cpus(res)) == ["CPU0", "CPU1"] and not any("no socket inferred" in n for n in res.notes)
