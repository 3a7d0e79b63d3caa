"""The nccl-tests verdict for the transition band (64 KiB to 32 MiB) blames a slow rank only when the large-size
plateau falls short too; a run that sits under the model in the mid sizes and reaches the model's plateau at the
top is just ramping up, and a run with no large sizes cannot tell the two apart.

Inputs are the real pastes kept with their source URL (the 06b A100 sample, an nccl-tests issue's 2-node H100 run);
the truncated case is the same real A100 paste cut before 32 MiB, as a paste that stops early looks.
"""

from pathlib import Path

from nvcourse.nccl.diagnose import diagnose
from nvcourse.nccl.nccltests import read_text

A100 = Path(__file__).parents[1] / "nvcourse" / "data" / "nccl" / "a100_2nodes_16ranks_oke.txt"
H100_SLOW = Path(__file__).parent / "fixtures" / "nccl_tests" / "allreduce_h100_2nodes_srun_label_nccltests290.txt"


def _bands(text: str) -> dict[str, dict]:
    return {b["band"]: b for b in diagnose(read_text(text)).bands}


def _cases(band: dict) -> set[str]:
    return {c["case"] for c in band["causes"]}


def test_a_mid_size_dip_under_a_full_plateau_is_the_ramp_not_a_rank():
    text = A100.read_text(encoding="utf-8")
    # the paste's own rows: 2 x 8 A100 (8 x 200 Gb/s NICs per node) reach busbw above 200 GB/s from 1 GiB up
    big = [float(ln.split()[7]) for ln in text.splitlines() if ln.strip()[:1].isdigit() and int(ln.split()[0]) >= 2**30]
    assert big and min(big) > 200
    bands = _bands(text)
    assert bands["bandwidth"]["plateau_ratio"] >= 0.85
    mid = bands["transition"]
    assert mid["ratio"] < 0.85  # under the model in the mid sizes ...
    assert "slow_rank" not in _cases(mid)  # ... yet no rank is blamed
    assert "ramp up to it" in mid["verdict"] and "not a slow rank" in mid["verdict"]


def test_a_mid_size_dip_with_a_short_plateau_still_points_at_the_path():
    bands = _bands(H100_SLOW.read_text(encoding="utf-8"))
    assert bands["bandwidth"]["plateau_ratio"] < 0.85
    mid = bands["transition"]
    assert "slow_rank" in _cases(mid)
    assert "plateau short too" in next(c["evidence"] for c in mid["causes"] if c["case"] == "slow_rank")


def test_a_paste_that_stops_before_32_MiB_blames_nobody():
    lines = A100.read_text(encoding="utf-8").splitlines()
    cut = [ln for ln in lines if not (ln.strip()[:1].isdigit() and int(ln.split()[0]) >= 32 * 2**20)]
    bands = _bands("\n".join(cut) + "\n")
    assert "bandwidth" not in bands
    mid = bands["transition"]
    assert mid["ratio"] < 0.85 and "slow_rank" not in _cases(mid)
    assert "cannot tell a slow path from the ramp" in mid["verdict"]
