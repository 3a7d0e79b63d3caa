"""Guards for chapter 04b's sentences fixed after fresh-learner walkthrough W (round 1): the "things to try" scoped
to the dashboard states where they hold, the Blackwell table over every GPU count the slider allows, and the words
defined where they are first used. Expected values come from the model; markdown line breaks read as spaces."""

import json
import re
from functools import cache
from pathlib import Path

import pytest

from nvcourse.chapters.ch04b_predicting import SIZES
from nvcourse.costmodel import configure, predict, predict_sweep
from nvcourse.costmodel.launch import LAUNCH_MODES
from nvcourse.units import format_size

ROOT = Path(__file__).resolve().parents[1]
NB04B = "04b_predicting_collectives.ipynb"
MiB, GiB = 2**20, 2**30
SLIDER = range(1, 9)  # GPUs/node on a DGX across nodes (the slider's range for these systems)


@cache
def cell(cid: str) -> str:
    cells = json.loads((ROOT / "notebooks" / NB04B).read_text(encoding="utf-8"))["cells"]
    return next(re.sub(r"\s+", " ", "".join(c["source"])) for c in cells if c["id"] == cid)


@cache
def picks(system: str, gpus: int, nodes: int, launch: str = "device") -> tuple[tuple[float, str], ...]:
    """The dashboard's auto pick at every size of its axis."""
    sw = predict_sweep("allreduce", system, gpus, SIZES, nodes=nodes, launch=launch)
    return tuple((float(s), str(a)) for s, a in zip(SIZES, sw.algo, strict=True))


# ------------------------------------------------------------------------------------------- things to try
@pytest.mark.parametrize("launch", LAUNCH_MODES)
def test_a100_node_counts_hold_at_8_gpus_per_node_and_the_text_says_so(launch):
    text = cell("c011")
    nic = configure("dgx-a100", 8, 2).nic_Bps_per_gpu * 8 / 1e9
    assert (f"`dgx-a100` (8 GPUs per node) with: - 2 nodes: the tree at every size; at 1 GiB busbw above the {nic:.0f} "
            "GB/s of the NICs; - 4 nodes: the ring wins some sizes from 64 MiB up; - 256 nodes: the tree wins at "
            "every size") in text
    assert {a for _s, a in picks("dgx-a100", 8, 2, launch)} == {"tree"}
    assert predict("allreduce", "dgx-a100", 8, GiB, nodes=2, launch=launch).busbw_GBps > nic
    ring = [s for s, a in picks("dgx-a100", 8, 4, launch) if a == "ring"]
    assert ring and min(ring) == 64 * MiB
    assert {a for _s, a in picks("dgx-a100", 8, 256, launch)} == {"tree"}


def test_a100_claims_need_their_scope():
    # why "(8 GPUs per node)": at fewer GPUs per node the 2-node pick or busbw, or the 4-node ring's start, differ
    two_node_tree = [g for g in SLIDER if {a for _s, a in picks("dgx-a100", g, 2)} == {"tree"}]
    above = [g for g in SLIDER if predict("allreduce", "dgx-a100", g, GiB, nodes=2).busbw_GBps
             > configure("dgx-a100", 8, 2).nic_Bps_per_gpu * 8 / 1e9]
    ring_from_64 = [g for g in SLIDER if min(s for s, a in picks("dgx-a100", g, 4) if a == "ring") == 64 * MiB]
    assert two_node_tree != list(SLIDER) and above != list(SLIDER) and ring_from_64 != list(SLIDER)
    assert 8 in two_node_tree and 8 in above and 8 in ring_from_64


def test_h100_four_gpus_never_pick_nvls_and_five_at_4_mib_only():
    text = cell("c011")
    nvls = {g: [s for s, a in picks("dgx-h100", g, 1) if a == "nvls"] for g in range(2, 9)}
    assert nvls[4] == [] and nvls[5] == [4 * 2**20]
    assert min(nvls[8]) == 2 * 2**20 and all(a == "nvls" for s, a in picks("dgx-h100", 8, 1) if s >= 2 * 2**20)
    assert (f"`dgx-h100` with 4 GPUs (no NVLS), then 5 (NVLS at {format_size(nvls[5][0])} only), then 8 (NVLS from "
            f"{format_size(min(nvls[8]))} on)") in text
    assert "3 then 4 GPUs (NVLS switches on" not in text


# ------------------------------------------------------------------------------------- 2b, 3 and 1: definitions
def test_worked_example_waits_for_section_7_before_naming_nvls():
    text = cell("e2115298")
    assert "| size | ring, LL | ring, Simple | |---|---|---|" in text
    assert "NVLS" not in text
    ll, simple = (predict("allreduce", "dgx-h100", 8, 8, algo="ring", proto=p).time_s * 1e6 for p in ("LL", "Simple"))
    assert f"= {ll:.0f}$ µs | $8.4 + 14\\times 3.4 = {simple:.0f}$ µs |" in text


def test_alpha_net_is_defined_where_first_used():
    cells = json.loads((ROOT / "notebooks" / NB04B).read_text(encoding="utf-8"))["cells"]
    first = next(c["id"] for c in cells if c["cell_type"] == "markdown" and "α_net" in "".join(c["source"]))
    assert first == "c006"
    assert ("Across $k$ nodes the ring leaves each node once per channel, so its bandwidth is "
            "$\\min(B, B_\\text{node})$, and NCCL charges α_net, the α of one step across the network, for the "
            "$2(k-1)$ steps that cross nodes.") in cell("c006")


def test_n_is_defined_once_before_its_first_use():
    sec1 = cell("c002")
    sentence = "Here $n$ is chapter 04's $p$; chapters 02, 04, 05 and 06 write bytes as $n$."
    assert sentence in sec1
    assert sec1.index("$n$ GPUs and a buffer") < sec1.index("the *total* of the $n$ chunks") < sec1.index(sentence)
    assert "elsewhere $n$ counts bytes" not in cell("c018") and "chapter 04" not in cell("c018")


# -------------------------------------------------------------------------------------------------- 12
def _sym_over_classic(op: str, system: str, gpus: int, size: float) -> float:
    sym = predict(op, system, gpus, size, registered=True)
    assert sym.algo == "symmetric"
    return sym.time_s / predict(op, system, gpus, size).time_s


def _blackwell_class(op: str, system: str, gpus: int) -> str:
    """One operation's row wording in section 12's Blackwell table, from the model's symmetric/classic ratio."""
    ratios = [_sym_over_classic(op, system, gpus, s) for s in SIZES if s <= MiB]
    if all(r > 1 for r in ratios):
        if all(_sym_over_classic(op, system, gpus, s) > 1 for s in SIZES if s > MiB):
            return "higher at every size (and above 1 MiB too)"
        return "higher at every size"
    if all(r < 1 for r in ratios):
        return "lower at every size"
    assert max(ratios) > 1, (op, system, gpus)
    return "higher at some size"


def _blackwell_row(system: str, gpus: int) -> str:
    """The row of section 12's Blackwell table that the model gives for ``gpus``: all three operations alike, or
    all-reduce and all-gather alike with reduce-scatter named where it differs (on 5 to 8 GPUs)."""
    rows = {op: _blackwell_class(op, system, gpus) for op in ("allreduce", "allgather", "reducescatter")}
    assert rows["allreduce"] == rows["allgather"], (system, gpus, rows)
    if rows["reducescatter"] == rows["allreduce"]:
        return rows["allreduce"]
    assert (rows["allreduce"], rows["reducescatter"]) == ("higher at some size", "higher at every size")
    return "higher at some size (reduce-scatter up to 8 GPUs: at every size)"


def test_blackwell_table_covers_every_gpu_count_and_names_the_operations():
    text = cell("b4c06a12")
    assert ("| Blackwell GPUs | all-reduce, all-gather and reduce-scatter: the symmetric estimate against the classic "
            "one, sizes up to 1 MiB |") in text
    rows = {"2": [2], "3 or 4": [3, 4], "5 to 11": list(range(5, 12)), "12 or more, in an NVL72": list(range(12, 73))}
    for label, counts in rows.items():
        for g in counts:
            systems = ["gb200-nvl72"] + (["dgx-b200"] if g <= 8 else [])
            for system in systems:
                row = _blackwell_row(system, g)
                if label == "5 to 11" and g > 8:  # the row's note on reduce-scatter stops at 8 GPUs
                    assert _blackwell_class("reducescatter", system, g) == "higher at some size", (system, g)
                    row = "higher at some size (reduce-scatter up to 8 GPUs: at every size)"
                assert f"| {label} | {row} |" in text, (system, g, row)
    assert "so on 2 to 11 GPUs the symmetric estimate is higher at some size up to 1 MiB" in text
    assert "| 5 to 8 |" not in text


def test_section_12_symmetric_sub_parts_ask_one_question_each():
    text = cell("b4c06a12")
    runs, versus = (text.index(h) for h in ("### Registered buffers and symmetric-memory kernels",
                                            "### Symmetric kernels against the classic path"))
    assert text[runs:].startswith("### Registered buffers and symmetric-memory kernels *When does NCCL run them?*")
    assert text[versus:].startswith("### Symmetric kernels against the classic path *Which estimate is lower?*")
    assert runs < text.index("From NCCL 2.29.2") < versus  # across nodes: what NCCL runs, not how fast
