"""Guards for fresh-learner walkthrough V on chapters 03 and 04b: predict-first question 3 of 04b gets its answer
from the model, the registered-buffers readout speaks a learner's words, the terms and figures the learner could
not place are defined or printed where they are used, and chapter 03's new sentences (one-to-all, the DGX-1's
hops, §4's printout) hold against the model."""

import json
import re
from pathlib import Path

import pytest
from test_prose_facts_core import prose

from nvcourse import catalog
from nvcourse.chapters import ch03_topology as ch03
from nvcourse.chapters import ch04b_predicting as ch04b
from nvcourse.costmodel import configure, sweeps, symmetric, tuning
from nvcourse.costmodel.prediction import predict
from nvcourse.devtools import reading_time
from nvcourse.topology import build_system_graph, metrics

ROOT = Path(__file__).resolve().parents[1]
NB03 = "03_topologies_and_nvswitch.ipynb"
NB04B = "04b_predicting_collectives.ipynb"
MiB, GiB = 2**20, 2**30


def _nb(notebook: str) -> list[dict]:
    return json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))["cells"]


def _cells(notebook: str) -> dict[str, str]:
    """Cell id -> its source, whitespace runs read as one space."""
    return {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in _nb(notebook)}


def _shown(notebook: str, cell_id: str) -> str:
    """What a code cell printed, as stored."""
    cell = next(c for c in _nb(notebook) if c["id"] == cell_id)
    return "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))


# ------------------------------------------------------------------------------- 04b: question 3 is answered
def test_04b_question_3_is_answered_under_the_dashboard_and_the_readout_prints_the_figures():
    c = _cells(NB04B)
    question = "at which sizes do registered buffers help most?"
    assert f"3. On 8 H100 with `buffers` = `registered`, {question}" in c["b4c06a06"]
    assert ("**Question 3:** in GPU time registered buffers win at every size, most in the low megabytes; the readout "
            "prints by how much.") in c["c011"].split("## 10.")[0]  # §9, under the dashboard
    view = ch04b.SweepView()
    _, text = view("allreduce", "auto", "dgx-h100", 8, 1, "device", "registered")
    gain = ch04b.registered_gain("allreduce", "dgx-h100", 8, "device")
    best = max(gain, key=gain.__getitem__)
    assert (f"Plain-buffer time ÷ registered time: {gain[best]:.1f}× at 2 MiB (the largest), {gain[8.0]:.1f}× at 8 B, "
            f"{gain[float(GiB)]:.1f}× at 1 GiB.") in text
    assert best == 2 * MiB


def test_04b_registered_buffers_help_most_in_the_low_megabytes_by_the_model():
    # "in GPU time" (launch = device) on 8 H100 over the dashboard's sizes
    gain = ch04b.registered_gain("allreduce", "dgx-h100", 8)
    assert set(gain) == {float(s) for s in ch04b.SIZES}
    assert min(gain.values()) > 1  # "win at every size"
    best = max(gain, key=gain.__getitem__)
    assert MiB <= best < 10 * MiB  # "most in the low megabytes"
    assert gain[best] > gain[8.0] > gain[float(GiB)]  # not for the smallest messages, as §12's table might suggest
    # ~4.1x at 2 MiB (plain buffers run NVLS there, with its fill, since the model picks as NCCL's own estimate does),
    # ~3x at 8 B, ~1.5x at 1 GiB (the multicast kernel at the NVLink line rate, not NCCL's peak)
    assert gain[best] == pytest.approx(4.1, abs=0.1) and gain[float(GiB)] == pytest.approx(1.5, abs=0.1)


def test_04b_gain_is_the_ratio_of_the_two_predictions_in_every_launch_mode():
    for launch in ("device", "single-process"):
        gain = ch04b.registered_gain(launch=launch)
        for size in (8.0, 4.0 * MiB, float(GiB)):
            plain = predict("allreduce", "dgx-h100", 8, size, launch=launch).time_s
            reg = predict("allreduce", "dgx-h100", 8, size, launch=launch, registered=True)
            assert reg.algo == "symmetric"
            assert gain[size] == pytest.approx(plain / reg.time_s)


# ------------------------------------------------------------------- 04b: the readout's "why not" in plain words
@pytest.mark.parametrize("system, words", [
    ("pcie-8gpu", "symmetric kernels need all GPUs on NVLink switches; this system's GPUs are joined by a PCIe tree"),
    ("dgx-1-v100", "this system's GPUs are joined by NVLink cables from GPU to GPU, with no switch"),
    ("dgx-a100", "NCCL's symmetric kernels run on Hopper and Blackwell GPUs only; the A100 is Ampere"),
])
def test_04b_registered_readout_says_why_not_in_a_learners_words(system, words):
    s = catalog.get_system(system)
    gpus = max(s.gpus_per_host, s.gpus_per_domain)
    line = ch04b._symmetric_text("allreduce", system, gpus, 1, "device")
    assert words in line
    for internal in ("isAllDirectNvlink", "pcie-tree", "hybrid-cube-mesh", "is ampere", "is volta", f"{system} is"):
        assert internal not in line, internal
    # the reason holds: the system really lacks what the sentence says it needs
    if "switch" in words:
        assert not s.nvswitch_count and s.topology not in ("nvswitch", "nvl72")
    else:
        assert tuning.gpu_arch(s.gpu) == "ampere" and s.topology == "nvswitch"


def test_04b_every_why_not_is_free_of_ncclinternal_names():
    for sid in catalog.systems():
        for nodes in (1, 2):
            for op in ("allreduce", "alltoall"):
                why = symmetric.why_not(op, configure(sid, 2, nodes)) or ""
                assert "isAllDirectNvlink" not in why and "-tree" not in why and "-mesh" not in why, (sid, why)


# ------------------------------------------------------------------ 04b: terms and figures placed where used
def test_04b_one_shot_and_two_shot_are_defined_where_section_6_uses_them():
    sec6 = _cells(NB04B)["b4c06a04"]
    assert ("its one-shot kernel (each GPU reads all the others' buffers and adds) and two-shot kernel (a direct "
            "reduce-scatter, then a direct all-gather) are a direct all-reduce over NVLink.") in sec6
    # the same kernels as section 12 describes, and as the readout names them
    assert "*one-shot* (each GPU reads every other GPU's buffer over NVLink and adds)" in _cells(NB04B)["b4c06a12"]
    assert ch04b.kernel_words("AllReduce_AGxLL_R").endswith("one-shot")
    assert ch04b.kernel_words("AllReduce_RSxLD_AGxST").endswith("two-shot")
    first = prose(NB04B).index("one-shot")
    assert prose(NB04B)[first - 4:first] == "its "  # the first use is §6's, with its definition


def test_04b_tree_base_latency_is_printed_in_section_4_and_is_the_one_section_10_uses():
    out = _shown(NB04B, "982acff8")
    tree = [tuning.base_latency_us("tree", p) for p in tuning.PROTOCOLS]
    ring = [tuning.base_latency_us("ring", p) for p in tuning.PROTOCOLS]
    assert f"base latency per call, tree: {tree} µs" in out and f"base latency per call, ring: {ring} µs" in out
    assert ch04b.hw_latency_lines() in out
    ll = tuning.base_latency_us("tree", "LL")
    assert f"with {ll:g} µs the tree's LL base latency (section 4's printout)" in _cells(NB04B)["b4c06a12"]
    assert ll != tuning.base_latency_us("ring", "LL")  # why section 10 needs the tree's, not §2b's ring figure
    assert "and each algorithm's base latency per call" in _cells(NB04B)["b4c06a02"]


def test_04b_section_11_says_which_bars_are_held_out_and_which_were_used_to_build_the_model():
    text = _cells(NB04B)["u04b-runs-md"]
    assert ("two of the twenty-six held-out runs (two-node all-gather, RoCE, Google Cloud), then three runs the "
            "model was built on:") in text
    roles = {s["id"]: s["role"] for s in sweeps._raw_sweeps("all")}
    ids = list(ch04b.RUNS_IN_WORDS)
    assert [roles[i] for i in ids] == ["held_out"] * 2 + ["calibration"] * 3


def test_04b_intro_sharp_link_and_section_12_folds():
    c = _cells(NB04B)
    assert "Sections 1 and 3–6 are the formulas: algbw and busbw, then each algorithm's;" in c["c000"]
    assert "Sections 1 and 3–6 derive each algorithm's formula" not in c["c000"]
    assert "**CollNet** ([SHARP](../docs/glossary.md#sharp))" in c["c008"]
    sec12 = c["b4c06a12"]
    measured = sec12.index("<details><summary>What measurements show: lower than both estimates</summary>")
    assert sec12.index("| Blackwell GPUs |") < measured < sec12.index("Measurements on Blackwell")
    # across nodes is about what NCCL runs: it sits in that sub-part, before the estimates are compared
    versus = sec12.index("### Symmetric kernels against the classic path")
    assert sec12.index("### Registered buffers and symmetric-memory kernels") < sec12.index("From NCCL 2.29.2") < versus
    assert versus < measured < sec12.index("rather than trust the ratio. </details>")


def test_04b_core_and_reading_minutes_do_not_grow():
    row = reading_time.measure_chapter(ROOT / "notebooks" / NB04B)
    assert row.core_min <= 21 and row.reading_min <= 47
    assert reading_time.measure_chapter(ROOT / "notebooks" / NB03).core_min <= 14


# ----------------------------------------------------------------------------------------------------- 03
def test_03_one_to_all_gets_the_most_on_the_dgx1_and_stops_at_gpu0s_single_links():
    text = prose(NB03)
    assert ("**One-to-all** gets the most of the three: only GPU0 sends, so no other GPU's traffic shares its links. "
            "It stops when GPU0's single links, to GPU1 and GPU2, fill: they also carry the bytes that GPU1 and GPU2 "
            "relay on to GPUs with no NVLink to GPU0.") in text
    rate = {p: ch03._pattern_facts("dgx-1-v100", p)[0] for p in ("ring", "all-to-all", "one-to-all")}
    assert rate["one-to-all"] > rate["all-to-all"] > rate["ring"]
    G = build_system_graph("dgx-1-v100")
    rows = ch03._pattern_facts("dgx-1-v100", "one-to-all")[1]
    full = {frozenset((r["a"], r["b"])) for r in rows if r["utilisation"] > 0.999}
    assert full == {frozenset(("GPU0", "GPU1")), frozenset(("GPU0", "GPU2"))}
    assert all(G.edges[tuple(e)].get("count", 1) == 1 for e in full)
    loads = metrics.link_loads(G, metrics.traffic(G, "one-to-all"))
    far = [g for g in (f"GPU{i}" for i in range(1, 8)) if not G.has_edge("GPU0", g)]
    for hop in ("GPU1", "GPU2"):  # each relays to a GPU GPU0 has no NVLink to
        assert any(loads.get((hop, g), 0) > 0 for g in far), hop


def test_03_dgx1_max_hops_is_2_by_relaying_through_a_common_neighbour():
    assert ("and 2 on the DGX-1 too (a pair without NVLink relays through a GPU linked to both)" in prose(NB03))
    G = build_system_graph("dgx-1-v100")
    assert metrics.hop_stats(G)["max"] == 2
    gpus = [f"GPU{i}" for i in range(8)]
    for i, a in enumerate(gpus):
        for b in gpus[i + 1:]:
            if not G.has_edge(a, b):
                assert any(G.has_edge(a, m) and G.has_edge(m, b) for m in gpus), (a, b)


def test_03_section_4_names_the_figures_of_its_printout_and_leaves_the_nvl72_to_the_table_that_shows_it():
    sec4 = _cells(NB03)["c012"]
    assert "Each arrow" not in sec4 and "NVL72" not in sec4
    assert ("In the printout below, the last figure of each system's line is the busbw NCCL can reach for large "
            "messages, without the per-step latency") in sec4
    assert "(under its line: the GPUs in the order each ring visits them)" in sec4
    out = _shown(NB03, "c013")
    assert "gb200-nvl72" not in out and " -> " in out
    for sid in ("dgx-1-v100", "dgx-a100", "dgx-h100", "dgx-b200"):  # the line's last figure is the ring busbw
        line = next(x for x in out.splitlines() if x.startswith(sid))
        assert line.rstrip().endswith(f"{ch03.ring_busbw_GBps(sid):.1f} GB/s"), line
    assert "chapter 05 adds" in ch03.metrics_table_html()  # the table that does show the NVL72
    source = "".join(next(c for c in _nb(NB03) if c["id"] == "c012")["source"])
    paragraphs = [p for p in re.split(r"\n\s*\n|\n(?=- )", source) if p.strip()]  # paragraphs and list items
    assert max(len(p.split()) for p in paragraphs) < 50
