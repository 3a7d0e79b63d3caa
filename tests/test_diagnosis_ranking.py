"""The nccl-tests verdict ranks its causes by evidence: which level (PCIe, ring over NVLink, NVLS, the node's NICs)
the large-size plateau matches and how far below the model it sits.

The signature runs below are HAND-MADE (documented as such): nccl-tests' exact row format with a flat busbw at
the large sizes, built by ``_handmade`` from the busbw alone (algbw = busbw / (2(n-1)/n), time = size / algbw).
Real pastes follow: their ranking is checked against what the maintainers said in the source thread.
"""

from pathlib import Path

import pytest

from nvcourse.nccl.diagnose import diagnose
from nvcourse.nccl.nccltests import read_text

DATA = Path(__file__).parents[1] / "nvcourse" / "data" / "nccl"
FIX = Path(__file__).parent / "fixtures" / "nccl_tests"


def _handmade(busbw_GBps: float, nodes: int = 1, gpus: int = 8, gpu: str = "NVIDIA H100 80GB HBM3") -> str:
    """A hand-made all_reduce_perf output: 8 MiB .. 8 GiB, busbw rising to a flat ``busbw_GBps`` plateau."""
    n = nodes * gpus
    lines = ["# nThread 1 nGpus 1 minBytes 8388608 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 "
             "agg iters: 1 validation: 1 graph: 0", "#", "# Using devices"]
    for r in range(n):
        lines.append(f"#  Rank {r:2d} Group  0 Pid {1000 + r:6d} on {'node%d' % (r // gpus):>10s} device {r % gpus:2d} "
                     f"[0x{0x18 + r % gpus:02x}] {gpu}")
    lines += ["#", "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
              "algbw   busbw #wrong"]
    size = 8 * 2**20
    while size <= 8 * 2**30:
        bus = busbw_GBps * min(1.0, size / (256 * 2**20)) ** 0.15  # ramps up, flat from 256 MiB
        alg = bus / (2 * (n - 1) / n)
        t = size / (alg * 1e3)
        lines.append(f"{size:12d} {size // 4:13d}     float     sum      -1 {t:8.1f} {alg:7.2f} {bus:7.2f}      0 "
                     f"{t:8.1f} {alg:7.2f} {bus:7.2f}      0")
        size *= 2
    return "\n".join(lines) + "\n"


def _band(text, **kw):
    d = diagnose(read_text(text), **kw)
    return {b["band"]: b for b in d.bands}["bandwidth"]


def test_flat_90_on_8_h100_is_pcie_not_nvls_off():
    """The review's case: an 8 x H100 run flat at ~90 GB/s must not be told 'at ring level, NVLS looks off'."""
    b = _band(_handmade(90.0))
    assert b["causes"][0]["case"] == "pcie_plateau"
    assert "nvls_missing" not in {c["case"] for c in b["causes"]}
    assert "at the ring level" not in b["verdict"] and "at the PCIe level" in b["verdict"]
    assert b["level"]["matches"] == "pcie" and "not on NVLink" in b["causes"][0]["evidence"]


def test_flat_at_ring_level_on_8_h100_is_nvls_off():
    b = _band(_handmade(360.0))
    assert b["level"]["matches"] == "ring" and b["causes"][0]["case"] == "nvls_missing"
    assert "at the ring level" in b["verdict"]


def test_between_pcie_and_ring_is_a_slow_rank_first():
    b = _band(_handmade(220.0))
    assert b["level"]["matches"] is None and b["causes"][0]["case"] == "slow_rank"
    assert "nvls_missing" not in {c["case"] for c in b["causes"]}


def test_nvls_level_needs_no_cause():
    b = _band(_handmade(470.0))
    assert b["level"]["matches"] == "nvls" and b["causes"] == [] and "NVLS" in b["verdict"]


@pytest.mark.parametrize("busbw,first", [(3.0, "socket_fallback"), (90.0, "no_gdr"), (200.0, "slow_rank")])
def test_two_nodes_ranked_by_the_nics_level(busbw, first):
    # ring forced across 3 nodes (no tree above the NICs): the node's 8 NDR NICs carry ~376 GB/s together
    b = _band(_handmade(busbw, nodes=3))
    assert b["causes"][0]["case"] == first


def test_three_nodes_at_the_nics_level_is_fine():
    b = _band(_handmade(350.0, nodes=3))
    assert b["ratio"] > 0.85 and b["causes"] == []


def test_real_two_node_tree_above_the_nics_stays_first():
    """nccl-tests#196 (2 x 8 A100): the tree above the NIC rate is expected, not a fault."""
    b = _band((DATA / "a100_2nodes_16ranks_oke.txt").read_text())
    assert b["causes"][0]["case"] == "tree_beats_nic"
    assert "no_gdr" not in {c["case"] for c in b["causes"]}


def test_real_single_node_h100_at_nvls_level():
    """nccl-tests#212: ~480 GB/s on 8 H100 is NVLS at work (sjeaugey in the thread)."""
    b = _band((DATA / "h100_8gpu_single_node_markdown_indented.txt").read_text())
    assert b["level"]["matches"] == "nvls" and b["causes"] == []


def test_real_two_node_h100_below_its_nics_is_not_called_ring_level():
    """nccl-tests#290: 2 x 8 H100 at ~155 GB/s; AddyLaddy expects 46-48 GB/s per NDR NIC (8 of them)."""
    b = _band((FIX / "allreduce_h100_2nodes_srun_label_nccltests290.txt").read_text())
    assert "at the ring level" not in b["verdict"] and b["causes"][0]["case"] == "slow_rank"
    assert b["level"]["levels_GBps"]["nic"] > 300



def test_the_bandwidth_verdict_compares_the_plateau_with_the_models_plateau():
    # 06b's 2-node A100 sample: its plateau is about 1.05x the model's tree plateau; a band median (0.75x) counted
    # the ramp up to it as a shortfall and sent the learner after a slow GPU
    from nvcourse.chapters import ch06b_nccl_in_practice as ch

    run = ch.read_sample("2 nodes x 8 A100 (RoCE)")
    diag = diagnose(run)
    band = next(b for b in diag.bands if b["band"] == "bandwidth")
    text = ch.diagnosis_text(diag)
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("bandwidth:"))
    assert "as the model expects" in line and "slow GPU" not in line
    assert 0.95 <= band["plateau_ratio"] <= 1.15 and band["ratio"] < band["plateau_ratio"]
