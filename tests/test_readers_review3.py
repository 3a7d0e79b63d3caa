"""What a third review of the readers' new texts found against NCCL's and nccl-tests' sources, each mended here:
expected values come from the fixtures' text and the sources named in each test."""

import copy
from pathlib import Path

from nvcourse.nccl import ncclog, nccltests
from nvcourse.nccl.diagnose import diagnose
from nvcourse.topology.topo_parser import parse_topo as parse_topology

FIX = Path(__file__).parent / "fixtures"
DATA = Path(__file__).parents[1] / "nvcourse" / "data"


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_an_old_error_column_does_not_outweigh_nccl_tests_own_zero():
    # nccltests78's second output: "268435456 1048576 float 520935 0.52 0.51 0e+00 519562 0.52 0.51 1e+00" and
    # "# Out of bounds values : 0 OK"; the output names no operation and alltoall is one it fits, whose in-place
    # column old nccl-tests never checked (src/alltoall.cu AlltoAllInitData: reportErrors = in_place ? 0 : 1)
    second = nccltests.read_all(_text(FIX / "pasted_heldout2" / "nccltests78_allreduce_then_alltoall_old_error_"
                                      "column_v100.txt"))[1]
    assert second.out_of_bounds == 0 and "alltoall" in second.op_candidates
    assert not [f for f in diagnose(second).findings if f["case"] == "wrong_nonzero"]
    # the same column with no footer printed, for a type nccl-tests checks exactly: still wrong data
    unfooted = copy.deepcopy(second)
    unfooted.out_of_bounds, unfooted.op = None, "allgather"
    unfooted.rows[0]["oop_error"] = 1.0
    assert [f for f in diagnose(unfooted).findings if f["case"] == "wrong_nonzero"]


def test_the_4_gib_hint_says_when_the_version_is_not_printed():
    # nccltests37: "all_gather_perf -g 8 -b 4294967296 -e 4294967296", no NCCL version line, "Out of bounds values : 2"
    run = nccltests.read_text(_text(FIX / "pasted_heldout2" / "nccltests37_allgather_g8_v100_no_hash_old_columns_oob_"
                                    "failed.txt"))
    assert run.nccl_version is None
    text = next(f["finding"] for f in diagnose(run).findings if f["case"] == "wrong_nonzero")
    assert "if this NCCL is older than 2.6.4 (the paste does not print its version): the size is 4 GiB" in text


def test_two_ranks_on_one_gpu_name_the_releases_of_each_refusal():
    # both device lines "device 0 [0000:02:00]" on host lab; "Duplicate GPU detected" is in v2.5.6-1 src/init.cc,
    # "Multiple ranks detected using the same GPU on this node" in v2.30.3-1 src/graph/topo.cc
    run = nccltests.read_text(_text(FIX / "nccl_tests" / "socket_rtx5090_2ranks_mpirun_v2_18.txt"))
    cause = next(f["cause"] for f in diagnose(run).findings if f["case"] == "shared_gpu")
    assert "NCCL (2.5 and later) refuses" in cause and "from 2.30.3 'Multiple ranks detected" in cause
    assert "separate containers" not in cause and "boot id" in cause


def test_settings_a_problem_names_are_not_listed_again_and_every_disable_is_a_problem():
    # nccl1053: "NCCL_SOCKET_IFNAME set by environment to lo", "NCCL_IB_DISABLE set by environment to 1",
    # "NCCL_IBEXT_DISABLE set by environment to 1"; the loopback problem's fix names NCCL_SOCKET_IFNAME
    log = ncclog.read_text(_text(DATA / "nccl" / "socket_lo_gdr_disabled_topo_nccl1053.log"))
    problems = " ".join(p["problem"] for p in log.problems)
    assert "NCCL_IBEXT_DISABLE=1 set by the environment" in problems and "NCCL_IB_DISABLE=1" in problems
    assert not any("NCCL_SOCKET_IFNAME" in r["remark"] for r in log.remarks)


def test_a_setting_is_never_called_harmless():
    # nccl1154: "NCCL_ALGO set by environment to Tree"
    log = ncclog.read_text(_text(FIX / "ncclog" / "tuning_table_h800_tree_nccl1154.log"))
    setting = next(r for r in log.remarks if "NCCL_ALGO=Tree" in r["remark"])
    assert setting.get("setting") is True and "check each is intended" in setting["remark"]
    assert "no fault here: set by" not in ncclog.explain(log)


def test_no_gdr_level_is_advised_where_every_nic_reports_gdr_0():
    # every <net ... gdr="0"> in the file; ncclTopoCheckGdr (v2.30.7-1 src/graph/paths.cc) returns before comparing
    # any level when the NIC's gdrSupport is 0
    res = parse_topology(_text(FIX / "tables_heldout" / "a100pcie-nvbridge-dump-timez.xml"))
    far = [n for n in res.notes if "nearest NIC" in n and "only through a CPU" in n]
    assert far and "GPUDirect RDMA is off here anyway: every NIC reports gdr 0" in far[0]
    assert "NCCL_NET_GDR_LEVEL=PHB" not in far[0]


def test_shared_nic_links_are_a_planning_budget_not_a_rate_limit():
    # modal: <pci busid="0002:00:00.0" ... link_speed="32.0 GT/s PCIe" link_width="16"> over mlx5_5..8 at 400 Gb/s
    res = parse_topology(_text(FIX / "tables_heldout2" / "modal-b200x8-gvisor-vm.xml"))
    note = next(n for n in res.notes if n.startswith("mlx5_5, mlx5_6, mlx5_7, mlx5_8 sit under one PCI device"))
    assert "within 48 GB/s per direction (a planning budget, not a rate limit)" in note and "held to" not in note


def test_p2p_status_matters_only_within_nccl_p2p_level():
    # the paste's matrix "GPU0  X  NS"; its topo -m gives GPU0-GPU1 NODE, beyond NCCL's default P2P level (PXB:
    # v2.30.7-1 src/graph/paths.cc ncclTopoCheckP2p checks NVML's status only for pairs within it)
    res = parse_topology(_text(DATA / "topo" / "pcie-2gpu-indented-wrapped.txt"))
    note = next(n for n in res.notes if "topo -p2p" in n)
    assert "NCCL uses P2P only for pairs within NCCL_P2P_LEVEL (PXB by default" in note
    assert note.endswith("GPU0-GPU1 is beyond the default level anyway")
