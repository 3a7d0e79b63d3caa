"""nvcourse.nccl.ncclog_faults and the reader's problems and remarks built on it (review of the readers, items 2, 3,
13, 15 and the smaller points), on real pastes in tests/fixtures.

Every expected value is read from the fixture's text (quoted in the comment beside it), or from NCCL's, libfabric's
or aws-ofi-nccl's source where a line is built from a format string (the comment names the file and function).
"""

import re
from pathlib import Path

import pytest

from nvcourse import _data
from nvcourse.nccl.ncclog import explain, read_text
from nvcourse.nccl.ncclog_faults import library_warnings, peer_memory_lsmod, read_error_return

FIXTURES = Path(__file__).parent / "fixtures"
DATA = Path(__file__).parents[1] / "nvcourse" / "data" / "nccl"


def text_of(rel: str) -> str:
    path = FIXTURES / rel if (FIXTURES / rel).exists() else DATA / Path(rel).name
    return path.read_text(encoding="utf-8")


def load(rel: str):
    return read_text(text_of(rel))


AWSOFI24 = "pasted_heldout2/awsofinccl24_horovod_ompi_tags_libfabric_old_ring_lines_warn.log"
AWSOFI889 = "pasted_heldout2/awsofinccl889_cloudwatch_pipe_prefixes_efa_nccl2215.log"
NCCL660 = "ncclog/ib_error4_gdr_vm_nccl660.log"
NCCL302 = "pasted_heldout4/nccl302_rank_bracket_prefix_ib_and_roce_hcas_nccl256_ring_p2p_ipc.log"
NCCL988 = "ncclog/ibext_sharp_no_peermem_v2_12_nccl988.log"
AKS36 = "pasted_heldout/aks36_kubectl_logs_grep_gdr.log"
TREES350 = "ncclog/graph_trees_a100pcie_2nodes_nccltests350.log"


# ---------------------------------------------------------------- NCCL's error-return trail
@pytest.mark.parametrize(("msg", "where", "code", "result", "detail"), [
    ("include/net.h:24 -> 2", "include/net.h:24", 2, "ncclSystemError", None),  # awsofinccl24, NCCL 2.4
    ("proxy.cc:614 -> 2 [Proxy Thread]", "proxy.cc:614", 2, "ncclSystemError", None),  # nccl660
    ("net.cc:79 -> 3", "net.cc:79", 3, "ncclInternalError", None),  # socket_lo..._nccl1053
    # NEQCHECK's "%s:%d -> %d (%s)" with strerror (src/include/checks.h, 2.18.3 to 2.30.4)
    ("misc/socket.cc:484 -> 2 (Connection refused)", "misc/socket.cc:484", 2, "ncclSystemError", "Connection refused"),
    # 2.30.7's INFO_LOC "%s:%d (%s) " then "-> %d" (src/include/debug.h, checks.h NCCLCHECK)
    ("transport/net.cc:1298 (sendProxyProgress) -> 6", "transport/net.cc:1298", 6, "ncclRemoteError", None),
])
def test_a_trail_line_is_read_in_every_form(msg, where, code, result, detail):
    assert read_error_return(msg) == {"where": where, "code": code, "result": result, "detail": detail}


def test_every_result_code_is_named_from_the_data_file():
    # data/nccl_readers.toml [nccl_results]: ncclResult_t of src/nccl.h.in at v2.30.7-1, codes 1 to 8
    src = _data.load("nccl_readers")["nccl_results"]["src"]
    assert re.search(r"github\.com/NVIDIA/nccl/blob/[0-9a-f]{40}/src/nccl\.h\.in \(ncclResult_t\), tag v2", src)
    assert [read_error_return(f"init.cc:1 -> {code}")["result"] for code in range(1, 9)] == [
        "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError", "ncclInvalidArgument", "ncclInvalidUsage",
        "ncclRemoteError", "ncclInProgress", "ncclTimeout"]
    assert read_error_return("init.cc:1 -> 9")["result"] is None  # ncclNumResults: no result has the code


def test_other_messages_are_not_a_trail():
    assert read_error_return("Channel 00/0 : 0[0] -> 1[1] via P2P/IPC") is None
    assert read_error_return("Ring 00 : 7 -> 8 [send] via NET/AWS Libfabric/0") is None


def test_a_plugin_warn_with_its_trail_leads_and_gdr_off_is_only_noted():
    """awsofinccl24: "[7] create_nccl_ofi_component:459 NCCL WARN NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid
    argument" and "[7] NCCL INFO include/net.h:24 -> 2"; the job hangs. GDR off (its three "[send] via NET/AWS
    Libfabric/0" lines) is no part of that failure."""
    log = load(AWSOFI24)
    assert log.error_returns == [{"where": "include/net.h:24", "code": 2, "result": "ncclSystemError",
                                  "detail": None, "count": 1}]
    lead = log.problems[0]
    assert "NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument" in lead["problem"]
    assert "include/net.h:24 -> 2" in lead["problem"] and "2 = ncclSystemError" in lead["problem"]
    assert "aws-ofi-nccl" in lead["fix"] and lead["source"].startswith("https://docs.nvidia.com/deeplearning/nccl/")
    assert not [p for p in log.problems if "GDRDMA" in p["problem"]]
    assert [r for r in log.remarks if "GDRDMA" in r["remark"]]
    assert len(log.warnings) == 1  # EXPECTED.toml scores the NCCL WARN lines: still the one


def test_an_ib_error_with_its_trail_leads_and_the_vm_points_at_the_hypervisor():
    """nccl660: two "NCCL WARN NET/IB : Got completion from peer ... with error 4" lines (vm2, vm1), each followed by
    "include/net.h:32 -> 2", "transport/net.cc:870 -> 2", "proxy.cc:494 -> 2", "proxy.cc:614 -> 2 [Proxy Thread]"."""
    log = load(NCCL660)
    assert [(e["where"], e["count"]) for e in log.error_returns] == [
        ("include/net.h:32", 2), ("transport/net.cc:870", 2), ("proxy.cc:494", 2), ("proxy.cc:614", 2)]
    assert log.problems[0]["problem"].startswith("NCCL returned an error: 2 WARN lines: 'NET/IB : Got completion")
    assert "8 error returns" in log.problems[0]["problem"]
    assert not [p for p in log.problems if p["problem"].startswith("2 WARN lines")]  # not said twice
    # the hosts are named vm2 and vm1: a hint, said as one; ACS of a VM's bridges is the hypervisor's
    assert log.vm_evidence == {"hosts": ["vm2", "vm1"]}
    (acs,) = [p for p in log.problems if p["case"] == "acs_hint"]
    assert "(vm2, vm1) suggest virtual machines" in acs["fix"] and "hypervisor host" in acs["fix"]
    assert "ATS" in acs["fix"] and "docs.nvidia.com/ai-enterprise" in acs["fix"]


def test_a_hypervisor_line_is_quoted_as_the_evidence():
    # lscpu prints "Hypervisor vendor:     KVM" in a VM; here added to nccl660's text
    log = read_text("Hypervisor vendor:     KVM\n" + text_of(NCCL660))
    assert log.vm_evidence == {"line": "Hypervisor vendor:     KVM"}
    (acs,) = [p for p in log.problems if p["case"] == "acs_hint"]
    assert acs["fix"].startswith("the paste shows a virtual machine ('Hypervisor vendor:     KVM')")


def test_a_trail_without_a_warn_is_no_fatal_error():
    """socket_lo..._nccl1053: "net.cc:79 -> 3" after NCCL_IBEXT_DISABLE=1, then NCCL goes on ("Using network
    Socket"): an error NCCL recovered from, not the run's failure."""
    log = load("socket_lo_gdr_disabled_topo_nccl1053.log")
    assert log.error_returns[0]["where"] == "net.cc:79" and log.warnings == []
    assert not [p for p in log.problems if p["problem"].startswith("NCCL returned an error")]


def test_the_2_30_7_warn_prefix_with_the_function_name_is_read():
    # src/debug.cc at v2.30.7-1: "[%d] %s:%d (%s) NCCL WARN %s" after "host:pid:tid "; the trail's INFO_LOC form
    text = ("h:1:2 [0] transport/net_ib.cc:1696 (ncclIbTest) NCCL WARN NET/IB : Got completion from peer x with "
            "status=5\nh:1:2 [0] NCCL INFO transport/net.cc:1298 (sendProxyProgress) -> 6\n")
    log = read_text(text)
    assert log.warnings == ["NET/IB : Got completion from peer x with status=5"]
    assert "6 = ncclRemoteError" in log.problems[0]["problem"]


# ---------------------------------------------------------------- libraries under NCCL
def test_the_libfabric_warn_is_read_once_and_is_not_an_nccl_warn():
    """awsofinccl889: "libfabric:85:1747438790::core:core:fi_getinfo_():1392<warn> fi_getinfo: provider efa output
    empty list | <the same line again>" (CloudWatch prints it twice)."""
    log = load(AWSOFI889)
    assert log.library_warnings == [{"library": "libfabric", "level": "warn", "provider": "core",
                                     "message": "fi_getinfo: provider efa output empty list", "count": 1}]
    assert log.warnings == []  # EXPECTED.toml: "the libfabric <warn> line is not an NCCL WARN"
    (p,) = log.problems
    assert "fi_getinfo: provider efa output empty list" in p["problem"] and "efa" in p["cause"]
    assert "fi_info -p efa" in p["fix"] and p["source"].endswith("libfabric/blob/main/src/fabric.c")
    assert "Nothing in these lines looks wrong" not in explain(log)


def test_the_empty_list_is_a_retried_query_when_the_provider_is_then_selected():
    # aws-ofi-nccl src/nccl_ofi_net.cpp: NCCL_OFI_INFO "Selected provider is %s, fabric is %s (found %d nics)"
    selected = "ip-10-36-29-253:79:79 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 4 nics)\n"
    log = read_text(text_of(AWSOFI889) + selected)
    assert log.net_provider == "efa" and log.problems == []
    assert [r for r in log.remarks if "then selected efa" in r["remark"]]


def test_ucx_and_pmix_lines_are_library_warnings():
    """nccltests313: two "ucp_context.c:1951 UCX  WARN  UCP API version is incompatible: required >= 1.15, actual
    1.14.0 (loaded from /usr/lib64/libucp.so.0)"; nccltests190: "PMIX ERROR: BAD-PARAM in file
    base/bfrop_base_unpack.c at line 692" and "... dstore_base.c at line 2225", twice each."""
    ucx = library_warnings(text_of("pasted_heldout3/nccltests313_alltoall_g8_h20_ucx_warns_cut_at_column_header.txt"))
    assert ucx == [{"library": "UCX", "level": "WARN", "provider": None, "count": 2,
                    "message": "UCP API version is incompatible: required >= 1.15, actual 1.14.0 (loaded from "
                               "/usr/lib64/libucp.so.0)"}]
    pmix = library_warnings(text_of(
        "pasted_heldout4/nccltests190_hypercube_srun_bash_c_long_options_pmix_errors_cut_in_devices.txt"))
    assert [(w["library"], w["message"], w["count"]) for w in pmix] == [
        ("PMIx", "BAD-PARAM in file base/bfrop_base_unpack.c at line 692", 2),
        ("PMIx", "BAD-PARAM in file dstore_base.c at line 2225", 2)]
    assert library_warnings("the paste has two UCX WARN lines and a PMIX ERROR: line\n") == []  # prose


# ---------------------------------------------------------------- peer memory from a pasted lsmod
def test_empty_lsmod_greps_on_nccl_2_12_mean_no_gdr():
    """nccl988: "(pytorch) [root@gpu3 ~]# lsmod | grep nvidia_peermem", "... # lsmod | grep nv_peer_mem", then a bare
    prompt: both empty; "NCCL version 2.12.9+cuda11.6" (DMA-BUF came in 2.13) and 8 "mlx5_N:1/IB/SHARP" ports."""
    log = load(NCCL988)
    assert log.peer_memory_lsmod == {"nvidia_peermem": False, "nv_peer_mem": False}
    (p,) = [p for p in log.problems if p["case"] == "no_peermem_but_ib"]
    assert "NCCL 2.12.9" in p["problem"] and "8 RDMA ports" in p["problem"] and "nvidia-peermem" in p["fix"]
    assert p["source"] == "https://github.com/NVIDIA/nccl/issues/988"


@pytest.mark.parametrize(("shell", "seen"), [
    # a loaded module answers with its lsmod row (name, size, users)
    ("$ lsmod | grep -E 'nvidia_peermem|nv_peer_mem'\nnvidia_peermem         16384  0\n$\n",
     {"nvidia_peermem": True, "nv_peer_mem": False}),
    ("$ lsmod | grep peer\n$ \n", {"nvidia_peermem": False, "nv_peer_mem": False}),
    ("$ lsmod | grep nvidia_peermem\n$\n", {"nvidia_peermem": False}),  # nv_peer_mem not asked
    ("$ lsmod | grep nvidia_peermem\n", {}),  # the paste ends there: the answer may be cut
])
def test_lsmod_answers(shell, seen):
    assert peer_memory_lsmod(shell) == seen


def test_a_loaded_module_or_a_dma_buf_nccl_is_no_problem():
    loaded = text_of(NCCL988).replace("# lsmod | grep nv_peer_mem\n", "# lsmod | grep nv_peer_mem\nnv_peer_mem  "
                                                                       "        16384  0\n", 1)
    assert not [p for p in read_text(loaded).problems if p["case"] == "no_peermem_but_ib"]
    newer = text_of(NCCL988).replace("NCCL version 2.12.9+cuda11.6", "NCCL version 2.19.3+cuda12.3")
    log = read_text(newer)
    assert not [p for p in log.problems if p["case"] == "no_peermem_but_ib"]
    assert [r for r in log.remarks if "needs DMA-BUF" in r["remark"]]


# ---------------------------------------------------------------- channel counts
def test_a_grep_filtered_paste_gives_a_lower_bound_not_a_count():
    """aks36: `grep GDR` kept "Channel 00/0", "08/0", "04/0", "06/0", "12/0", "14/0", "04/0" connection lines and no
    line with NCCL's count."""
    log = load(AKS36)
    assert log.channel_ids == [0, 4, 6, 8, 12, 14] and log.channels_printed is None
    assert log.channels == 15  # the JSON field keeps its meaning: highest id + 1 when no count is printed
    text = explain(log)
    assert "At least 15 channels (channel ids seen: 0, 4, 6, 8, 12, 14; NCCL's count is not in the paste)" in text
    assert "15 channels." not in text


def test_tree_ids_count_as_channels_seen():
    # nccl302: "Trees [0] ... [1] ... [2] ... [3] ..." and three "Ring 00 : 155[3d000] -> ..." lines
    log = load(NCCL302)
    assert log.channel_ids == [0, 1, 2, 3] and log.channels_printed is None
    assert "At least 4 channels (channel ids seen: 0-3;" in explain(log)


def test_a_printed_count_is_said_as_a_count():
    # nccl1267: "Channel 00/32 :    0" ... (src/graph/rings.cc "Channel %02d/%02d :")
    log = load("ncclog/socket_v2_19_single_rank_nccl1267.log")
    assert log.channels_printed == 32 and "32 channels." in explain(log) and "At least" not in explain(log)


def test_only_ring_00_lines_give_at_least_one_channel():
    log = load(AWSOFI24)  # "Ring 00 : ..." lines only
    assert log.channel_ids == [0] and "At least 1 channel (channel ids seen: 0;" in explain(log)


# ---------------------------------------------------------------- network
def test_roce_beside_infiniband_ports_is_a_problem():
    # nccl302: "NET/IB : Using [0]mlx5_1:1/IB [1]mlx5_3:1/IB [2]mlx5_0:1/IB [3]mlx5_2:1/RoCE [4]mlx5_4:1/IB"
    log = load(NCCL302)
    (p,) = [p for p in log.problems if "RoCE" in p["problem"]]
    assert "mlx5_2:1/RoCE beside 4 InfiniBand ports" in p["problem"]
    assert "NCCL_IB_HCA=^=mlx5_2:1" in p["fix"] and p["source"] == "https://github.com/NVIDIA/nccl/issues/302"
    # NCCL 2.5 prints no "Using network" line: the devices are said from the NET/IB line
    assert "NET/IB lists 5 devices (mlx5_1:1/IB, mlx5_3:1/IB, mlx5_0:1/IB, mlx5_2:1/RoCE, ...)" in explain(log)


def test_roce_beside_infiniband_is_a_remark_when_the_connections_use_infiniband_only():
    """nccl707: "NET/IB : Using [0]mlx5_8:1/IB ... [6]mlx5_15:1/IB [7]mlx5_16:1/RoCE [8]mlx5_17:1/RoCE", and its
    connections go "via NET/IB/0", "/2", "/4", "/5" (all InfiniBand ports)."""
    log = load("ib_v2_7_a100_gdr_env_nccl707.log")
    assert not [p for p in log.problems if "RoCE" in p["problem"]]
    (r,) = [r for r in log.remarks if "RoCE" in r["remark"]]
    assert "use InfiniBand ports only" in r["remark"] and "NCCL_IB_HCA=^=mlx5_16:1,mlx5_17:1" in r["remark"]


def test_a_long_device_list_says_it_is_cut():
    # nccl988: eight "[N]mlx5_N:1/IB/SHARP" devices, four shown
    assert "over 8 devices (mlx5_0:1/IB/SHARP, mlx5_1:1/IB/SHARP, mlx5_2:1/IB/SHARP, mlx5_3:1/IB/SHARP, ...)" in \
        explain(load(NCCL988))


def test_gdr_on_by_the_distance_line_quotes_it():
    """nccltests350: no "via NET/..." line; "GPU Direct RDMA Enabled for GPU 81000 / HCA 1 (distance 6 <= 7)" and
    "... HCA 0 (distance 7 <= 7)", NCCL_NET_GDR_LEVEL=SYS, graphs "type LOC/PHB"."""
    log = load(TREES350)
    text = explain(log)
    assert "GPUDirect RDMA is on by NCCL's distance decision: 'GPU 81000 / HCA 1 (distance 6 <= 7)', " \
           "'GPU 81000 / HCA 0 (distance 7 <= 7)'" in text
    assert "(NET/.../GDRDMA)." not in text
    (r,) = [r for r in log.remarks if "topology search" in r["remark"]]
    assert "PHB" in r["remark"] and "NCCL_NET_GDR_LEVEL=SYS" in r["remark"]
    # its NET/IB line: "[0]mlx5_0:1/RoCE [1]mlx5_2:1/IB", and no connection line to say which one is used
    assert [p for p in log.problems if "mlx5_0:1/RoCE beside 1 InfiniBand port" in p["problem"]]


def test_a_phb_network_path_is_explained():
    # nccl1519: "Pattern 5, crossNic 0, nChannels 7, bw 3.000000/3.000000, type NVL/PHB" and no network line
    log = load("ncclog/graph_nvls_h100_2nodes_nccl1519.log")
    (r,) = [r for r in log.remarks if "topology search" in r["remark"]]
    assert "PHB paths (NVLS, type NVL/PHB)" in r["remark"] and "PXB" in r["remark"]
    assert "does not name the network" in r["remark"]


# ---------------------------------------------------------------- the environment
@pytest.mark.parametrize(("rel", "setting"), [
    ("pasted_heldout2/vllm15769_ray_worker_prefix_repeated_suffix_nvls_8gpu.log", "NCCL_P2P_LEVEL=NVL"),
    ("ncclog/tuning_table_h800_tree_nccl1154.log", "NCCL_ALGO=Tree"),
    (AKS36, "NCCL_NET_GDR_LEVEL=SYS"),
])
def test_a_chosen_setting_is_information_not_a_problem(rel, setting):
    log = load(rel)
    var = setting.split("=")[0]
    assert var in log.env and not [p for p in log.problems if var in p["problem"]]
    (r,) = [r for r in log.remarks if r["remark"].startswith("set by the environment")]
    assert setting in r["remark"]


def test_the_json_adds_fields_and_keeps_the_old_ones():
    d = load(AWSOFI24).to_json()
    for key in ("channels", "warnings", "problems", "explanation", "channels_printed", "channel_ids",
                "error_returns", "library_warnings", "peer_memory_lsmod", "vm_evidence", "remarks"):
        assert key in d, key
    assert d["channels"] == 1 and d["channel_ids"] == [0] and d["channels_printed"] is None
    assert all(set(r) == {"remark", "source"} for r in d["remarks"])


def test_gdr_off_over_a_net_plugin_says_the_plugin_decides():
    """efa_aws_libfabric: "NET/OFI Using aws-ofi-nccl 1.5.0aws", "Using network AWS Libfabric", eight "via NET/AWS
    Libfabric/0" lines without /GDRDMA and no NET-subsystem line: still a problem, whose cause names the plugin."""
    log = load("efa_aws_libfabric_mpirun_tagged.log")
    (gdr,) = [p for p in log.problems if "GDRDMA" in p["problem"]]
    assert "net plugin" in gdr["cause"] and "aws-ofi-nccl before 1.1.0" in gdr["cause"]
