"""nvcourse.nccl.ncclog on real NCCL_DEBUG=INFO logs (tests/fixtures/ncclog, sources in each file's header).

Expected values written by reading the fixture text. DEV fixtures were used while writing the reader; HELD-OUT
ones were tested only after it was written.
"""

import re
from pathlib import Path

import pytest

from nvcourse.nccl.ncclog import explain, read_text

FIX = Path(__file__).parent / "fixtures" / "ncclog"
DATA = Path(__file__).parents[1] / "nvcourse" / "data" / "nccl"


def path(name):
    """Fixtures the chapter uses live in nvcourse/data/nccl, the others under tests/fixtures."""
    return FIX / name if (FIX / name).exists() else DATA / name


def load(name):
    return read_text(path(name).read_text(encoding="utf-8"))


def cases_of(log):
    return {p["case"] for p in log.problems}


# ---------------------------------------------------------------- DEV fixtures
def test_two_nodes_gdrdma_and_p2p_read():
    log = load("ib_gdrdma_2nodes_p2p_read_nccltests133.log")
    assert log.hosts == ["nodeb", "nodea"]
    assert log.transports == {"P2P/direct pointer/read": 10, "NET/IB/GDRDMA": 2}
    assert log.gdr is True and log.version is None
    assert log.net_devices_per_gpu == {"nodeb[5]": ["0"], "nodeb[4]": ["0"]}
    assert "threadThresholds 8/8/64 | 128/8/64 | 8/8/512" in log.tuning
    assert log.problems == []


def test_v2_7_wording_and_env():
    log = load("ib_v2_7_a100_gdr_env_nccl707.log")
    assert (log.version, log.cuda, log.net, log.net_kind) == ("2.7.6", "11.1", "IB", "IB")
    assert len(log.net_devices) == 9 and log.net_devices[-1] == "mlx5_17:1/RoCE"
    assert log.env == {"NCCL_P2P_LEVEL": "LOC", "NCCL_SHM_DISABLE": "1"}
    assert log.transports == {"NET/IB/GDRDMA": 12} and log.gdr is True


def test_socket_fallback_single_rank():
    log = load("socket_v2_19_single_rank_nccl1267.log")
    assert (log.version, log.net, log.ib_found, log.nranks) == ("2.19.3", "Socket", False, 1)
    assert log.net_devices == ["ens7:10.128.0.32"]
    assert log.channels == 32 and log.rings[2] == [0]
    # "comm 0x... rank 0 nranks 1": one rank, so nothing crosses the network and the socket fallback is information
    # (review of the readers, item 15), not a problem
    assert "socket_fallback" not in cases_of(log)
    (remark,) = [r for r in log.remarks if "TCP sockets" in r["remark"]]
    assert "nranks 1" in remark["remark"] and remark["source"] == "https://github.com/NVIDIA/nccl/issues/1121"


def test_efa_with_the_old_plugin_name_is_recognised():
    # aws-ofi-nccl 1.11 and older name the plugin "AWS Libfabric" (read from the fixture's second line)
    log = load("efa_aws_libfabric_mpijob_v2_12_eks_blueprints.log")
    assert (log.version, log.net) == ("2.12.7", "AWS Libfabric")
    assert "efa_libfabric" in {s["signature"] for s in log.signatures}


def test_h800_nvls_not_available():
    log = load("h800_nvls_not_available_nccl892.log")
    assert log.nvls["supported"] is False and log.nvls["channels"] == 0 and log.channels == 16
    assert log.env["NCCL_ALGO"] == "Tree,Ring,,CollnetDirect,CollnetChain,NVLS"
    assert "nvls_missing" in cases_of(log)


# ---------------------------------------------------------------- HELD-OUT fixtures
def test_heldout_cumem_gdrdma_new_wording():
    log = load("ib_cumem_gdrdma_2nodes_aks30.log")
    assert log.hosts == ["nccl-tests-worker-0", "nccl-tests-worker-1"]
    assert log.transports == {"P2P/CUMEM/read": 6, "NET/IB/GDRDMA": 8}
    assert log.gdr is True and log.channels == 15
    assert log.net_devices_per_gpu["nccl-tests-worker-0[6]"] == ["14"]
    assert log.net_devices_per_gpu["nccl-tests-worker-1[3]"] == ["11"]
    assert log.problems == []


def test_heldout_gh200_ibext_sharp_dmabuf():
    log = load("gh200_ibext_sharp_dmabuf_nccl1291.log")
    assert log.hosts == ["gh1", "gh2"] and log.version is None
    assert (log.net, log.net_kind, log.net_devices) == ("IBext_v8", "IB", ["mlx5_2:1/IB/SHARP"])
    assert log.dmabuf is True and log.nranks == 2 and log.nnodes == 2 and log.ranks == [0, 1]
    assert log.mnnvl is False and log.env["NCCL_SOCKET_IFNAME"] == "bond0"
    assert log.rings == {0: [0, 1]} and log.channels == 4 and log.jobs == 1
    assert log.problems == []


def test_heldout_rank_tagged_lines():
    log = load("socket_rank_tagged_torchrun_nccl1232.log")
    assert log.hosts == ["node0", "node2"]
    assert len(log.devices) == 3
    assert log.env["NCCL_SOCKET_IFNAME"] == "en,eth,em,bond"
    assert any("no network line" in p["problem"] for p in log.problems)


def test_heldout_socket_loopback_gdr_disabled():
    log = load("socket_lo_gdr_disabled_topo_nccl1053.log")
    assert (log.net, log.net_kind, log.net_devices, log.gdr) == ("Socket", "Socket", ["lo:127.0.0.1"], False)
    assert log.env["NCCL_IB_DISABLE"] == "1" and log.env["NCCL_SOCKET_IFNAME"] == "lo"
    assert "socket_loopback" in cases_of(log)


def test_heldout_nvls_available_two_nodes():
    log = load("nvls_available_h100_2nodes_nccl1357.log")
    assert log.nvls["supported"] is True and log.nvls["heads"] == 4
    assert (log.nranks, log.nnodes, log.ranks) == (16, 2, [6])
    assert log.trees[3] == [{"rank": 6, "parent": -1, "children": [5, 14]}]
    assert log.trees[0] == [{"rank": 6, "parent": 4, "children": [5]}]
    assert "nvls_missing" not in cases_of(log)


def test_heldout_ibext_v2_12():
    log = load("ibext_sharp_no_peermem_v2_12_nccl988.log")
    assert (log.version, log.cuda, log.net, log.net_kind) == ("2.12.9", "11.6", "IBext", "IB")
    assert len(log.net_devices) == 8 and log.net_devices[0] == "mlx5_0:1/IB/SHARP"
    assert log.hosts == ["ad5b8ae33076"] and len(log.devices) == 2
    assert log.gdr is None


def test_heldout_p2p_trees_rings():
    log = load("p2p_direct_trees_rings_2gpu_nccl1358.log")
    assert (log.nranks, log.nnodes, log.ranks) == (2, 1, [0, 1])
    assert log.rings == {0: [0, 1], 1: [0, 1]} and log.channels == 2
    assert {"rank": 0, "parent": -1, "children": [1]} in log.trees[0]
    assert {"rank": 1, "parent": 0, "children": []} in log.trees[0]
    assert log.transports == {"P2P/direct pointer": 1}
    assert "P2P Chunksize set to 131072" in log.tuning


def test_heldout_efa_mpirun_tagged_plugin_without_gdr():
    log = load("efa_aws_libfabric_mpirun_tagged.log")
    assert (log.version, log.cuda, log.net, log.net_kind) == ("2.12.7", "11.4", "AWS Libfabric", "plugin")
    assert log.hosts == ["test-nccl-efa-worker-0", "test-nccl-efa-worker-1"]
    assert (log.nranks, log.ranks, log.channels) == (2, [0, 1], 2)
    assert log.rings == {0: [0, 1], 1: [0, 1]}
    assert log.transports == {"NET/AWS Libfabric": 8} and log.gdr is False
    assert log.trees[1] == [{"rank": 1, "parent": -1, "children": [0]}, {"rank": 0, "parent": 1, "children": []}]
    # GDR off, but the log was taken with the default debug subsystems (no NET lines: no NIC or distance line), so
    # it cannot tell a missing peer-memory module from NCCL's policy: the reader says so and asks for NET
    (gdr,) = [p for p in log.problems if "GDRDMA" in p["problem"]]
    assert "cannot say why" in gdr["problem"] and "NCCL_DEBUG_SUBSYS=INIT,ENV,NET" in gdr["fix"]
    assert "no_gdr" not in cases_of(log) and log.env["NCCL_SHM_DISABLE"] == "0"


# ---------------------------------------------------------------- behaviour
def test_explanation_is_one_paragraph_naming_the_problem():
    text = explain(load("h800_nvls_not_available_nccl892.log"))
    assert "\n" not in text and "NVLS" in text and "What looks wrong" in text


def test_warn_lines_collected():
    log = read_text("h:1:2 [1] misc/socket.cc:397 NCCL WARN Net : connecting to address  with family 33621\n")
    assert log.warnings == ["Net : connecting to address  with family 33621"]


def test_not_a_log():
    with pytest.raises(ValueError, match="expected NCCL_DEBUG=INFO lines"):
        read_text("hello\nworld\n")


def test_heldout2_warn_lines_in_nccl_tests_output():
    log = read_text((Path(__file__).parent / "fixtures" / "nccl_tests" /
                     "broadcast_v100_2nodes_socket_v2_9_warn.txt").read_text())
    assert log.version == "2.9.6" and log.cuda == "11.2"
    assert log.warnings == ["Failed to open libibverbs.so[.1]", "Failed to open libibverbs.so[.1]"]
    assert log.hosts == ["v100-gpu-1", "v100-gpu-5"]


def test_two_jobs_in_one_file():
    names = ("ib_v2_7_a100_gdr_env_nccl707.log", "socket_v2_19_single_rank_nccl1267.log")
    text = "".join(path(n).read_text() for n in names)
    log = read_text(text)
    assert log.jobs == 2 and log.version == "2.7.6"


def test_heldout4_tuning_table():
    log = load("tuning_table_h800_tree_nccl1154.log")
    assert log.env == {"NCCL_ALGO": "Tree"} and log.hosts == ["n122-230-208"]
    table = [t for t in log.tuning if "|" in t]
    assert len(table) == 4
    assert table[0].startswith("Algorithm") and table[1].startswith("Protocol")
    assert table[2].startswith("Max NThreads") and table[3].startswith("Broadcast")


def test_a_disable_variable_set_to_its_default_is_not_a_problem():
    """The exercise walkthrough (06b, exercise 7) showed "NCCL_SHM_DISABLE=0 set by the environment: results differ
    from NCCL's defaults" for the EFA log: 0 IS the default of NCCL's *_DISABLE variables (NCCL env docs), so
    nothing differs. Setting one to 1 still is a problem."""
    log = load("efa_aws_libfabric_mpirun_tagged.log")
    assert log.env["NCCL_SHM_DISABLE"] == "0"
    assert not [p for p in log.problems if "NCCL_SHM_DISABLE" in p["problem"]]
    assert "NCCL_SHM_DISABLE" not in explain(log)
    changed = load("ib_v2_7_a100_gdr_env_nccl707.log")  # NCCL_SHM_DISABLE=1
    assert [p for p in changed.problems if p["problem"].startswith("NCCL_SHM_DISABLE=1")]


# ---------------------------------------------------------------- topology-search ("graph") lines, HELD-OUT
def _graph(pattern, name, channels, bw_intra, bw_inter, t_intra, t_inter, cross_nic, same):
    return {"pattern": pattern, "name": name, "channels": channels, "bw_intra_GBps": bw_intra,
            "bw_inter_GBps": bw_inter, "type_intra": t_intra, "type_inter": t_inter, "cross_nic": cross_nic,
            "same_channels": same}


@pytest.mark.parametrize(
    ("name", "graphs"),
    [
        # one NVLS graph of 7 heads at 3 GB/s across two H100 nodes (the issue is about NICs not being used)
        ("graph_nvls_h100_2nodes_nccl1519.log", [_graph(5, "NVLS", 7, 3.0, 3.0, "NVL", "PHB", 0, 0)]),
        # a ring that leaves by one NIC and comes back by another: crossNic 1
        ("graph_ring_crossnic_h20_nccl1189.log", [_graph(4, "ring", 4, 24.0, 24.0, "NVL", "PIX", 1, 0)]),
        # 8 RTX 4090 over PCIe: one ring and one balanced tree of 5 GB/s, printed by several ranks
        ("graph_pcie_rtx4090_nccltests307.log", [_graph(4, "ring", 1, 5.0, 5.0, "SYS", "PIX", 0, 1),
                                                 _graph(1, "balanced tree", 1, 5.0, 5.0, "SYS", "PIX", 0, 1)]),
        # NCCL 2.7-2.9 wrote "speed": the same graph printed three times by two hosts
        ("graph_old_speed_2nodes_eth_nccl601.log", [_graph(4, "ring", 4, 1.2, 1.2, "SYS", "SYS", 0, 0)]),
        ("graph_old_speed_trees_pcie_nccl584.log", [_graph(4, "ring", 1, 9.0, 9.0, "PHB", "PIX", 0, 1),
                                                    _graph(2, "split tree", 1, 9.0, 9.0, "PHB", "PIX", 0, 1),
                                                    _graph(3, "tree", 1, 9.0, 9.0, "PHB", "PIX", 0, 1)]),
        # a tree with more bandwidth inside the node than across, and a graph the search found no channel for
        ("graph_trees_a100pcie_2nodes_nccltests350.log", [_graph(4, "ring", 1, 24.0, 24.0, "LOC", "PHB", 0, 1),
                                                          _graph(3, "tree", 1, 48.0, 24.0, "LOC", "PHB", 0, 1),
                                                          _graph(3, "tree", 0, 0.0, 0.0, "LOC", "PIX", 0, 1)]),
    ],
)
def test_heldout_graph_lines(name, graphs):
    assert load(name).graphs == graphs


def test_graph_lines_in_the_explanation():
    text = explain(load("graph_trees_a100pcie_2nodes_nccltests350.log"))
    assert ("Topology search, per channel: ring: 1 channel x 24 GB/s (paths LOC/PHB); tree: 1 channel x "
            "48 GB/s, 24 GB/s inter (paths LOC/PHB); tree: none found (paths LOC/PIX).") in text
    # NVLS counts heads, and no total: each head's bandwidth is reserved on every GPU's links
    assert "NVLS: 7 heads x 3 GB/s (paths NVL/PHB)" in explain(load("graph_nvls_h100_2nodes_nccl1519.log"))
    ring = explain(read_text("h:1:2 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 12, bw 30.000000/30.000000, "
                             "type NVL/PIX, sameChannels 1"))
    assert "ring: 12 channels x 30 GB/s = 360 GB/s (paths NVL/PIX)" in ring


# ---------------------------------------------------------------- NCCL's own P2P and ACS statements
def test_p2p_disabled_pairs_named_by_nccl():
    """pytorch#130113: NCCL's 'P2P is disabled between connected GPUs A and B' for pairs 2-1, 0-1, 2-0, 0-2."""
    log = load("p2p_disabled_pairs_pytorch130113.log")
    assert log.p2p_disabled_pairs == [[1, 2], [0, 1], [0, 2]] and log.hosts == ["node155"]
    assert "p2p_disabled_pair" in cases_of(log)


def test_ib_completion_error_4_points_at_acs():
    """nccl#660 (GDR in a VM): 'Got completion from peer ... with error 4'; sjeaugey in nccl#928: usually ACS."""
    log = load("ib_error4_gdr_vm_nccl660.log")
    assert log.hints == ["IB completion error 4 (IBV_WC_LOC_PROT_ERR)"] and len(log.warnings) == 2
    assert "acs_hint" in cases_of(log) and log.hosts == ["vm2", "vm1"]


def test_aws_ofi_plugin_lines_name_the_network_without_the_using_network_line():
    text = "\n".join(ln for ln in (DATA / "efa_aws_libfabric_mpirun_tagged.log").read_text().splitlines()
                     if "Using network" not in ln)
    log = read_text(text)
    assert (log.net, log.net_kind) == ("AWS Libfabric", "plugin")


# ---------------------------------------------------------------- net plugin, NICs, CUDA driver, Init COMPLETE
def test_aws_ofi_plugin_version_provider_nics_and_init_complete_order():
    """A 2-node EFA job (aws-ofi-nccl 1.5.0, whose version line read "NET/OFI Using aws-ofi-nccl 1.5.0aws")."""
    log = load("efa_aws_libfabric_mpirun_tagged.log")
    assert (log.net_plugin, log.net_plugin_version) == ("aws-ofi-nccl", "1.5.0aws")
    assert (log.net_provider, log.net_fabric, log.net_nics) == ("efa", None, 1)
    assert log.init_complete_ranks == [1, 0]  # rank 1's line is printed first


def test_aws_ofi_sixteen_nics_on_p5en():
    log = read_text((Path(__file__).parent / "fixtures" / "runbook" / "efa_ofi_provider_nccl1597.log").read_text())
    assert (log.net_provider, log.net_nics) == ("efa", 16)


def test_aws_ofi_formats_since_2023_and_2025():
    """aws-ofi-nccl's own format strings: "Initializing " PACKAGE_STRING (since 2023-07) and "Selected provider is
    %s, fabric is %s (found %d nics)" (since 2025-02), each behind NCCL_OFI_INFO's "NET/OFI " prefix."""
    log = read_text("h:1:2 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.14.0\n"
                    "h:1:2 [0] NCCL INFO NET/OFI Using transport protocol RDMA\n"
                    "h:1:2 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa-direct (found 4 nics)\n")
    assert (log.net_plugin, log.net_plugin_version) == ("aws-ofi-nccl", "1.14.0")
    assert (log.net_provider, log.net_fabric, log.net_nics) == ("efa", "efa-direct", 4)


def test_nccl_plugin_loader_names_the_plugin_without_a_version():
    log = load("h800_nvls_not_available_nccl892.log")
    assert (log.net_plugin, log.net_plugin_version) == ("NCCL RDMA Plugin", None)


def test_cuda_driver_version_code():
    assert load("socket_v2_19_single_rank_nccl1267.log").cuda_driver == 12000
    assert load("graph_trees_a100pcie_2nodes_nccltests350.log").cuda_driver == 12080
    assert read_text("h:1:2 [0] NCCL INFO Using network IB").cuda_driver is None


# ---------------------------------------------------------------- GPUDirect RDMA by NCCL version
# The two gdr_off_distance_* files are built from NCCL's own format strings at the tags named in their headers (no
# public 2.29/2.30 paste with GDR off was found), so they live apart from the real logs (and are not counted as real
# in the README); the expected values below are read from their lines.
FORMATS = Path(__file__).parent / "fixtures" / "ncclog_format_strings"
def test_gdr_off_by_distance_in_the_2_29_format():
    log = read_text((FORMATS / "gdr_off_distance_v2_29_format.log").read_text(encoding="utf-8"))
    assert log.version == "2.29.2" and log.gdr_hca is True
    assert log.gdr_connections == {"without": 4} and log.gdr is False
    assert log.gdr_distance == [{"gpu": "GPU/0-110592 (rank 0)", "net": "NET/0-0", "gdr": False, "distance": 9,
                                 "limit": 6, "format": "2.29 and later"}]
    assert "gdr_distance" in {s["signature"] for s in log.signatures}
    text = explain(log)
    assert "GPUDirect RDMA is off." in text and "Nothing in these lines looks wrong" not in text


def test_gdr_off_by_distance_on_2_30_where_the_distance_line_is_trace_only():
    """The NIC line says Enabled, the channels lack /GDRDMA, no distance line at INFO: the channels decide."""
    log = read_text((FORMATS / "gdr_off_distance_v2_30_format.log").read_text(encoding="utf-8"))
    assert log.version == "2.30.7" and log.gdr_distance == [] and log.gdr_hca is True
    assert log.gdr is False and log.gdr_connections == {"without": 4}
    (far,) = [p for p in log.problems if p.get("signature") == "gdr_distance"]
    assert "4 of 4 network connections without /GDRDMA" in far["problem"] and "TRACE" in far["problem"]
    assert "no_gdr" not in cases_of(log)
    assert "Nothing in these lines looks wrong" not in explain(log)


def test_gdr_nic_line_alone_is_not_evidence_of_use_and_mixed_channels_are_counted():
    hca = "h:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\n"
    log = read_text(hca)
    assert log.gdr is None and log.gdr_hca is True and "channel lines" in explain(log)
    mixed = hca + ("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n"
                   "h:1:3 [1] NCCL INFO Channel 00/0 : 1[1] -> 9[1] [send] via NET/IB/0\n")
    log = read_text(mixed)
    assert log.gdr is False and log.gdr_connections == {"gdrdma": 1, "without": 1}
    assert "on for 1 of 2 network connections" in explain(log)
    # C2C systems print "/GDRDMA(PCI)"; the proxy form "NET/IB/0(1)/GDRDMA" carries the proxy rank
    c2c = ("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 4[0] [send] via NET/IB/0/GDRDMA(PCI)\n"
           "h:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 4[0] [send] via NET/IB/1(2)/GDRDMA/Shared\n")
    log = read_text(c2c)
    assert log.gdr is True and log.gdr_connections == {"gdrdma": 2}
    assert set(log.transports) <= {"NET/IB/GDRDMA(PCI)", "NET/IB/GDRDMA/Shared"}


def test_receive_with_gdrdma_and_send_without_is_the_read_policy_not_peermem():
    """NCCL decides GDR for sends (a GDR read) apart from receives (NCCL_NET_GDR_READ, src/graph/paths.cc
    ncclTopoCheckGdr). No public paste with mixed lines was found, so this case is built from the real lines of
    ib_cumem_gdrdma_2nodes_aks30.log (4 receive and 4 send lines, all /GDRDMA) with '/GDRDMA' taken off the send
    lines only, as NCCL prints them when GDR reads are off."""
    real = path("ib_cumem_gdrdma_2nodes_aks30.log").read_text(encoding="utf-8")
    mixed = re.sub(r"(\[send\] via NET/IB/\d+)/GDRDMA", r"\1", real)
    assert mixed != real
    log = read_text(mixed)
    assert log.gdr_by_direction == {"receive": {"gdrdma": 4}, "send": {"without": 4}}
    assert log.gdr is False and log.gdr_connections == {"gdrdma": 4, "without": 4}
    (policy,) = [p for p in log.problems if "GDR" in p["problem"]]
    assert "4 send connections without /GDRDMA" in policy["problem"] and "off by policy" in policy["problem"]
    assert "NCCL_NET_GDR_READ" in policy["cause"] and "nvidia-peermem" not in str(policy)
    assert "no_gdr" not in cases_of(log)
    assert "NCCL_NET_GDR_READ" in explain(log) and "peer-memory path works" in explain(log)
    # the same lines with the variable in the paste name it
    log = read_text("h:1:2 [0] NCCL INFO NCCL_NET_GDR_READ set by environment to 0\n" + mixed)
    (policy,) = [p for p in log.problems if "GDR" in p["problem"]]
    assert "NCCL_NET_GDR_READ=0 is set" in policy["cause"]
    # the real log itself (every line /GDRDMA) reports no GDR problem; a receive without /GDRDMA is not the policy
    assert not [p for p in load("ib_cumem_gdrdma_2nodes_aks30.log").problems if "GDR" in p["problem"]]
    both = re.sub(r"(\[(?:send|receive)\] via NET/IB/\d+)/GDRDMA", r"\1", real)
    assert "no_gdr" not in cases_of(read_text(both))  # no NIC line in this default-subsystem log: cause unknown
    assert any("cannot say why" in p["problem"] for p in read_text(both).problems)
    # with the NET line that says the NIC cannot register GPU memory, the peer-memory signature is the diagnosis
    nic_off = read_text("h:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n" + both)
    assert not any("cannot say why" in p["problem"] for p in nic_off.problems)
    assert "no_peermem" in {sig["signature"] for sig in nic_off.signatures}


@pytest.mark.parametrize(("tc", "flagged"), [("26", True), ("34", True), ("106", False), ("0", False)])
def test_ib_tc_given_as_a_dscp_is_flagged(tc, flagged):
    """Chapter 06d section 6: NCCL writes NCCL_IB_TC into the whole traffic-class byte, so 26 sends DSCP 6; 106 is
    DSCP 26 with ECN bits 2 (26 x 4 + 2)."""
    log = read_text(f"h:1:2 [0] NCCL INFO NCCL_IB_TC set by environment to {tc}\n")
    tc_lines = [p["problem"] for p in log.problems if p["problem"].startswith("NCCL_IB_TC=")]
    assert bool(tc_lines) is flagged
    if tc == "26":
        assert "sends DSCP 6" in tc_lines[0] and "NCCL_IB_TC=106" in tc_lines[0]
        (p,) = [p for p in log.problems if p["problem"].startswith("NCCL_IB_TC=")]
        assert p["cause"] and "traffic-class byte" in p["cause"] and p["fix"].endswith("NCCL_IB_TC=106")


def test_a_sockets_only_log_is_not_told_to_load_nvidia_peermem():
    # TCP sockets never use GPUDirect RDMA: "GPUDirect RDMA is off ... load nvidia-peermem" pointed at the wrong layer
    text = ("h:1:2 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
            "h:1:2 [0] NCCL INFO NET/IB : No device found.\n"
            "h:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
            "h:1:2 [0] NCCL INFO Using network Socket\n"
            "h:1:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Socket/0\n"
            "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n")
    out = explain(read_text(text))
    assert "peermem" not in out and "GPUDirect RDMA is off" not in out
    assert "never use GPUDirect RDMA" in out and "TCP sockets" in out


# ---------------------------------------------------------------- lines from tests/fixtures/pasted_heldout2 (real)


def test_cloudwatch_console_lines_are_read_with_or_without_the_second_bar():
    # aws-ofi-nccl issue 889: "  | <ISO timestamp> | " before the line, or the timestamp glued to the host
    text = ("  | 2025-05-16T16:39:51.208-07:00 | ip-10-36-29-253:79:79 [0] NCCL INFO NCCL_SOCKET_IFNAME set by "
            "environment to eth0\n"
            "  | 2025-05-16T16:39:51.208-07:00ip-10-36-29-253:79:79 [0] NCCL INFO Bootstrap : Using "
            "eth0:10.36.29.253<0> | ip-10-36-29-253:79:79 [0] NCCL INFO Bootstrap : Using eth0:10.36.29.253<0>\n"
            "  | 2025-05-16T16:39:51.208-07:00 | ip-10-36-29-253:79:79 [0] NCCL INFO cudaDriverVersion 12040\n"
            "  | 2025-05-16T16:39:51.208-07:00 | NCCL version 2.21.5+cuda12.8\n")
    log = read_text(text)
    assert (log.version, log.cuda, log.cuda_driver) == ("2.21.5", "12.8", 12040)
    assert log.hosts == ["ip-10-36-29-253"] and log.env == {"NCCL_SOCKET_IFNAME": "eth0"}


def test_rays_repeated_suffix_is_not_part_of_a_value():
    # vLLM issue 15769: Ray de-duplicates worker lines and appends "[repeated Nx across cluster]"
    text = ("(RayWorkerWrapper pid=539) vllm-0:539:539 [6] NCCL INFO NCCL_P2P_LEVEL set by environment to NVL "
            "[repeated 15x across cluster]\n"
            "(RayWorkerWrapper pid=539) vllm-0:539:539 [6] NCCL INFO NCCL_CUMEM_ENABLE set by environment to 0. "
            "[repeated 15x across cluster]\n"
            "(RayWorkerWrapper pid=539) vllm-0:539:539 [6] NCCL INFO comm 0x2fa81fa0 rank 6 nRanks 8 nNodes 1 "
            "localRanks 8 localRank 6 MNNVL 0 [repeated 15x across cluster]\n"
            "(RayWorkerWrapper pid=539) vllm-0:539:539 [6] NCCL INFO Channel 00/0 : 6[ [repeated 27x across "
            "cluster]\n")
    log = read_text(text)
    assert log.env == {"NCCL_P2P_LEVEL": "NVL", "NCCL_CUMEM_ENABLE": "0"}
    assert (log.nranks, log.nnodes, log.hosts, log.transports) == (8, 1, ["vllm-0"], {})


def test_a_log_with_every_nccl_prefix_stripped_is_read_from_its_messages():
    # NCCL issue 1584: only the message text of each line was pasted (no "host:pid:tid [dev] NCCL INFO")
    text = ("NCCL_SOCKET_IFNAME set by environment to eth0\n"
            "cudaDriverVersion 12040\n"
            "NCCL version 2.24.3+cuda12.2\n"
            "NET/Plugin: Loaded net plugin NCCL RDMA Plugin v8 (v8)\n"
            "NCCL_IB_PCI_RELAXED_ORDERING set by environment to 1.\n"
            "NET/IB : Using [0]ibp0:1/IB/SHARP [1]ibp1:1/IB/SHARP [RO]; OOB eth0:10.7.147.73<0>\n"
            "Using network IBext_v8\n"
            "ncclCommInitRankConfig comm 0x596c4b4edb80 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 1a000 commId "
            "0xd134602cf80e4ea2 - Init START\n"
            "NVLS multicast support is available on dev 0\n"
            "Loading checkpoint shards: 100%\n")
    log = read_text(text)
    assert (log.version, log.cuda_driver, log.nranks, log.net, log.net_plugin) == (
        "2.24.3", 12040, 8, "IBext_v8", "NCCL RDMA Plugin v8")
    assert log.net_devices == ["ibp0:1/IB/SHARP", "ibp1:1/IB/SHARP"] and log.nvls["supported"] is True
    assert log.env == {"NCCL_SOCKET_IFNAME": "eth0", "NCCL_IB_PCI_RELAXED_ORDERING": "1"} and log.hosts == []
    # with NCCL's own lines present, a bare message-like line (prose, another tool) is not read as NCCL's
    mixed = "h:1:2 [0] NCCL INFO Using network Socket\nUsing network IB\n"
    assert read_text(mixed).net == "Socket"


def test_old_ring_connection_lines_give_transports_and_gdr():
    # aws-ofi-nccl issue 24 (NCCL 2.4 era): "Ring 00 : a[b] -> c[d] via ...", network lines without the device
    text = ("[1,26]<stdout>:ip-172-32-36-209:8716:9558 [2] NCCL INFO Ring 00 : 26[2] -> 30[6] via P2P/IPC\n"
            "[1,7]<stdout>:ip-172-32-38-1:21471:22316 [7] NCCL INFO Ring 00 : 7 -> 8 [send] via NET/AWS Libfabric/0\n"
            "[1,23]<stdout>:\n"
            "[1,23]<stdout>:ip-172-32-45-165:72593:73427 [7] create_nccl_ofi_component:459 NCCL WARN NET/OFI "
            "Couldn't open AV. RC: -22, ERROR: Invalid argument\n")
    log = read_text(text)
    assert log.transports == {"P2P/IPC": 1, "NET/AWS Libfabric": 1} and log.gdr is False
    assert len(log.warnings) == 1 and log.hosts == ["ip-172-32-36-209", "ip-172-32-38-1", "ip-172-32-45-165"]


def test_socket_interfaces_of_other_ranks_are_not_the_rdma_devices():
    # NVIDIA/nccl#224 (held-out set 4): rank 0 lists 34 RoCE ports on NET/IB, ranks 2-4 print NET/Socket interfaces
    path = Path(__file__).parent / "fixtures" / "pasted_heldout4" / (
        "nccl224_horovod_ompi_tags_34_roce_hcas_socket_ranks_nccl242.log")
    log = read_text(path.read_text(encoding="utf-8"))
    assert len(log.net_devices) == 34 and all(d.endswith(":1/RoCE") for d in log.net_devices)
    assert log.net_devices[:2] == ["mlx5_18:1/RoCE", "mlx5_6:1/RoCE"]
    # a log whose only network is sockets keeps its interfaces
    only = read_text("h:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
                     "h:1:2 [0] NCCL INFO Using network Socket\n")
    assert only.net_devices == ["eth0:10.0.0.1"]


def test_the_ports_of_a_merged_device_are_the_network_devices():
    # vLLM#6201 (held-out set 6): NCCL 2.20 prints a merged device as "[0]={[0] mlx5_7:1/RoCE, [1] mlx5_6:1/RoCE}"
    path = Path(__file__).parent / "fixtures" / "pasted_heldout5" / (
        "vllm6201_hostname_literal_merged_roce_nic_2ranks_nccl2205_cuda110.log")
    log = read_text(path.read_text(encoding="utf-8"))
    assert log.net_devices == ["mlx5_7:1/RoCE", "mlx5_6:1/RoCE"] and log.net == "IB"
    # a merged device beside a plain one, and the plain form keeps reading as before
    both = read_text("h:1:2 [0] NCCL INFO NET/IB : Using [0]={[0] mlx5_0:1/IB, [1] mlx5_1:1/IB} [2]mlx5_2:1/IB "
                     "[RO]; OOB eth0:10.0.0.1<0>\n")
    assert both.net_devices == ["mlx5_0:1/IB", "mlx5_1:1/IB", "mlx5_2:1/IB"]


def test_a_merged_device_counts_once_in_the_explanation_and_the_json_names_its_ports():
    log = read_text((Path(__file__).parent / "fixtures" / "pasted_heldout5" /
                     "vllm6201_hostname_literal_merged_roce_nic_2ranks_nccl2205_cuda110.log").read_text(encoding="utf-8"))
    assert log.net_merged == [["mlx5_7:1/RoCE", "mlx5_6:1/RoCE"]]
    assert "Network: IB over 1 device (mlx5_7:1/RoCE+mlx5_6:1/RoCE)." in explain(log)
    assert log.to_json()["net_merged"] == [["mlx5_7:1/RoCE", "mlx5_6:1/RoCE"]]


def test_network_devices_without_a_using_network_line_are_not_called_missing():
    # NVIDIA/nccl#224 (held-out set 4): NET/IB lists 34 RoCE ports, no "Using network" line: the network is there
    path = Path(__file__).parent / "fixtures" / "pasted_heldout4" / (
        "nccl224_horovod_ompi_tags_34_roce_hcas_socket_ranks_nccl242.log")
    text = explain(read_text(path.read_text(encoding="utf-8")))
    assert "no network line" not in text
    # a multi-node log with no network line at all still gets the problem
    bare = read_text("a:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
                     "b:1:2 [0] NCCL INFO comm 0x1 rank 1 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n")
    assert bare.hosts == ["a", "b"] and "several nodes but no network line in the log" in explain(bare)


def test_nvls_unavailable_says_where_it_is_a_fault():
    log = read_text("h:1:2 [0] NCCL INFO NVLS multicast support is not available on dev 0\n")
    assert "NVLS unavailable (no multicast support or 0 nvls channels): a fault only on Hopper or newer GPUs behind " \
           "NVSwitch, expected anywhere else" in explain(log)


def test_old_direct_shared_memory_connections_count_as_shm():
    # NVIDIA/nccl#644 (held-out set 4): NCCL up to 2.12 printed SHM connections as "via direct shared memory"; half
    # the ring's hops of this one-process 8-GPU log go through host memory, which the thread's slowness fits
    path = Path(__file__).parent / "fixtures" / "pasted_heldout4" / (
        "nccl644_single_host_8gpu_channels_direct_shared_memory_and_p2p_direct_pointer.log")
    text = explain(read_text(path.read_text(encoding="utf-8")))
    assert "7 connections between GPUs of one node go via SHM (host memory): P2P is off for them" in text
