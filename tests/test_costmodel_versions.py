"""The NCCL version is a parameter (data/nccl_versions.toml, nvcourse.costmodel.tuning): each release's tables.

Expected values are read from NCCL's src/graph/tuning.cc at each release's tag (the line the data names), not from
the model's output."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from nvcourse._data import load
from nvcourse.costmodel import algorithms, configure, nccl_history, predict, tuning


def test_the_2_30_section_equals_the_hand_copied_tables():
    # nccl_tuning.toml was typed from NCCL 2.30.7; nccl_versions.toml's 2.30 section was extracted by the script
    sec, base = load("nccl_versions")["versions"]["2.30"], load("nccl_tuning")
    for algo, row in sec["base_latency_us"].items():
        assert base["base_latency_us"][algo] == row
    for cls in ("nvlink", "pci", "net"):
        for algo, row in sec["hw_latency_us"][cls].items():
            assert base["hw_latency_us"][cls][algo] == row, (cls, algo)
    for i, arch in enumerate(tuning.ARCHITECTURES):
        assert base["ll_max_bw_GBps"][arch] == sec["ll_max_bw_GBps"][i]
        for kind in ("ring_ll128", "tree_ll128", "tree", "nvlstree"):
            assert base["per_channel_max_GBps"][kind][arch] == sec[kind][i], (kind, arch)
    for proto, row in zip(tuning.PROTOCOLS, sec["tree_correction"], strict=True):
        assert base["size_correction"]["tree_allreduce"][proto] == row
    assert [base["nvls_efficiency"]["hopper"], base["nvls_efficiency"]["blackwell"]] == sec["nvls_efficiency"][2:]


@pytest.mark.parametrize(
    "version, algo, cls, proto, base_us, hw_us",
    [
        # v2.8.4-1 tuning.cc line 56: Ring {3.6, 10.0, 8.4}; line 69 NET Ring {2.7, 4.0, 9.6}
        ("2.8", "ring", "net", "Simple", 8.4, 9.6),
        ("2.8", "ring", "nvlink", "LL", 3.6, 0.47),
        # v2.12.12-1 line 69: NET Ring Simple 28
        ("2.12", "ring", "net", "Simple", 8.4, 28.0),
        # v2.18.6-1: Tree {6.8, 14.0, 0}, NVLINK Tree {.6, 1.25, 4}
        ("2.18", "tree", "nvlink", "Simple", 0.0, 4.0),
        # v2.19.4-1: NVLINK Tree Simple back to 28
        ("2.19", "tree", "nvlink", "Simple", 0.0, 28.0),
        ("2.30", "ring", "nvlink", "LL", 6.6, 0.6),
    ],
)
def test_tables_by_release(version, algo, cls, proto, base_us, hw_us):
    assert tuning.base_latency_us(algo, proto, version) == base_us
    assert tuning.hw_latency_us(cls, algo, proto, version) == hw_us


def test_rules_by_release():
    # ring LL: x1/4 for all-reduce before 2.21 (v2.20.5-1 line 181), x0.5 from 2.21 (v2.21.5-1 line 180)
    assert tuning.efficiency("ring_ll", "2.20", op="allreduce") == 0.25
    assert tuning.efficiency("ring_ll", "2.20", op="allgather") == pytest.approx(1 / 3)
    assert tuning.efficiency("ring_ll", "2.21", op="allreduce") == 0.5
    # ring LL128 with one GPU per node: 0.7 up to 2.22 (ppn < 2), 0.92 from 2.23
    assert tuning.efficiency("ring_ll128", "2.22", gpus_per_node=1) == 0.7
    assert tuning.efficiency("ring_ll128", "2.23", gpus_per_node=1) == 0.92
    # LL128: Hopper from 2.15, Blackwell from 2.25 (the comments of those releases), never without NVLink
    assert not tuning.ll128_allowed("h100", True, "2.14") and tuning.ll128_allowed("h100", True, "2.15")
    assert not tuning.ll128_allowed("b200", True, "2.24") and tuning.ll128_allowed("b200", True, "2.25")
    assert not tuning.ll128_allowed("a100-pcie", False, "2.30")
    # no network overhead term before 2.18 (getNetOverhead)
    assert tuning.net_overhead_us("intel", "Simple", "2.17") == 0.0
    assert tuning.net_overhead_us("amd", "Simple", "2.18") == 6.0


def test_algorithms_by_release():
    # NVLS came in 2.17, NVLSTree in 2.18, PAT in 2.23; NVLS all-gather: 2.17, not 2.18, again 2.19
    assert "nvls" not in algorithms("allreduce", "dgx-h100", 8, nccl_version="2.16")
    assert "nvls" in algorithms("allreduce", "dgx-h100", 8, nccl_version="2.17")
    assert "nvlstree" not in algorithms("allreduce", "dgx-h100", 8, nodes=2, nccl_version="2.17")
    assert "nvlstree" in algorithms("allreduce", "dgx-h100", 8, nodes=2, nccl_version="2.18")
    assert "nvls" not in algorithms("allgather", "dgx-h100", 8, nccl_version="2.18")
    assert "nvls" in algorithms("allgather", "dgx-h100", 8, nccl_version="2.19")
    assert "pat" not in algorithms("allgather", "dgx-h100", 1, nodes=4, nccl_version="2.22")
    assert "pat" in algorithms("allgather", "dgx-h100", 1, nodes=4, nccl_version="2.23")


def test_version_changes_the_prediction():
    old = predict("allreduce", "dgx-h100", 8, 8, nccl_version="2.8")
    new = predict("allreduce", "dgx-h100", 8, 8)
    # 2.8: ring LL 3.6 + 14 x 0.47 = 10.18 us; 2.30: 6.6 + 14 x 0.6 = 15.0 us
    assert old.time_s == pytest.approx(10.18e-6, rel=1e-3) and new.time_s == pytest.approx(15.0e-6, rel=1e-3)
    assert (old.nccl_version, new.nccl_version) == ("2.8", tuning.DEFAULT_VERSION)
    assert configure("dgx-h100", 8, nccl_version="2.26.2").nccl_version == "2.26"


@pytest.mark.parametrize("bad", ["2.7", "3.0", "latest", "2.x", "2.18.5.1"])
def test_bad_version_is_one_line(bad):
    with pytest.raises(ValueError, match=r"nccl_version must be one of 2\.8, .*2\.30"):
        tuning.resolve_version(bad)


def test_cli_nccl_version():
    argv = [sys.executable, "-m", "nvcourse", "predict", "allreduce", "--system", "dgx-h100", "--gpus", "8",
            "--bytes", "8"]  # fmt: skip
    out = subprocess.run([*argv, "--nccl-version", "2.8", "--json"], capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    assert d["nccl_version"] == "2.8" and d["time_s"] == pytest.approx(10.18e-6, rel=1e-3)
    bad = subprocess.run([*argv, "--nccl-version", "2.7"], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and "2.8" in bad.stderr and "2.30" in bad.stderr


def test_extractor_reads_both_layouts():
    old = """static const float baseLat  [NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS] = { { 4.4, 4.4,  0 },
{ 3.6, 10.0, 8.4 }, { 4.4, 4.4,  0 } };
static const double ll128MaxBwPerCh = 20.0;
  if (a == NCCL_ALGO_RING && p == NCCL_PROTO_LL) { busBw = std::min(llMaxBw, busBw * ((k) ? 1.0/4.0 : 1.0/3.0)); }
"""
    t = nccl_history.tables(old)
    assert t["base_latency_us"][0]["ring"] == [3.6, 10.0, 8.4] and t["ll128_any"][0] == 20.0
    assert nccl_history.facts(old)["ring_ll_quarter"][0] is True
    new = """static const ncclTunerConstants_t ncclTunerConstantsDefaults = {
  .baseLatencies = {
    {  6.8, 14.0,  8.4 }, {  6.6, 14.0,  8.4 },  // Tree, Ring
    {    0,    0,    0 }, {    0,    0,    0 },
    {    0,    0,    0 }, {    0,    0,    0 },
    {  8.0,  8.0,  8.0 }
    },
  .llMaxBws = {
     {39.0, 39.0, 20.4}, /* Volta */
     {2*141.0, 2*45.0 /*avg*/, 2*35.0},
  },
};"""
    t = nccl_history.tables(new)
    assert t["base_latency_us"][0]["pat"] == [8.0, 8.0, 8.0] and t["base_latency_us"][1:] == (2, 7)
    assert t["ll_max_bw_GBps"][0] == [[39.0, 39.0, 20.4], [282.0, 90.0, 70.0]]
