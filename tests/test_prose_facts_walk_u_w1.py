"""Chapters 00, 01, 04 and 05 after fresh-learner walkthrough U (W1): each sentence the walk found wrong, or that the
fix wrote, holds in every state its dashboard or model allows; the test rebuilds the figure from the model, the
catalog or a real run.

Markdown cannot compute: the sentence must appear in the chapter as written (line breaks read as spaces).
"""

import html
import json
import re

import matplotlib.pyplot as plt
import pytest
from test_prose_facts_core import ROOT, outputs, prose

from nvcourse import catalog, training

CH00 = "00_start_here.ipynb"
CH01 = "01_why_one_gpu_is_not_enough.ipynb"
CH04 = "04_collectives_and_allreduce.ipynb"
CH05 = "05_nvl72_rack_scale.ipynb"
TP_SLIDER = (1, 2, 4, 8, 16, 32, 64)  # chapter 01's "tensor parallel (TP)" slider
PP_SLIDER = (1, 2, 4, 8, 16)


def _section(text: str, start: str, end: str) -> str:
    return text[text.index(start):text.index(end)]


def _code(notebook: str) -> str:
    cells = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


# ------------------------------------------------------------------------------------------------ 00
def test_00_units_say_binary_for_messages_and_decimal_for_memory_as_chapter_01_prints():
    from nvcourse.chapters import ch01_one_gpu as ch

    text = prose(CH00)
    assert ("**Message and buffer sizes** in binary units: 1 MiB = 2²⁰ bytes, 1 GiB = 2³⁰ bytes; **memory "
            "capacities** in decimal GB (10⁹ bytes, ~7 % less than 1 GiB), like GB/s.") in text
    assert "**Sizes** in binary units" not in text
    assert round(100 * (1 - 1e9 / 2**30)) == 7
    # chapter 01 states memory in decimal GB, as the convention now says
    fig, readout = ch._render("llama3-70b", "h100", 8, 1, 8, 1)
    plt.close(fig)
    assert re.search(r"<b>[\d.]+ GB</b> per GPU of 80 GB", readout) and "GiB" not in readout


# ------------------------------------------------------------------------------------------------ 01
@pytest.mark.parametrize("m", [1, 2, 4, 8, 32])
def test_01_zero3_bytes_are_a_multiple_of_plain_data_parallel_bytes(m):
    # "with $m$ micro-batches: $(2m+1)/2$ times plain DP's bytes (1.5× for one)"
    assert ("- with $m$ micro-batches: $(2m+1)/2$ times plain DP's bytes (1.5× for one), if the gradients are "
            "[reduce-scattered](../docs/glossary.md#collectives) once per step") in prose(CH01)
    spec = training.get_model("llama3-70b")

    def dp(zero: int) -> float:
        return training.per_step_traffic_bytes(spec.params, dp=8, tp=8, pp=1, layers=spec.layers,
                                               hidden=spec.hidden, seq=4096, micro_batch=1, micro_batches=m,
                                               zero_stage=zero).dp

    assert dp(3) / dp(0) == pytest.approx((2 * m + 1) / 2)


@pytest.mark.parametrize("pp", PP_SLIDER)
def test_01_micro_batches_are_two_per_pipeline_stage_as_the_readout_says(pp):
    from nvcourse.chapters import ch01_one_gpu as ch

    assert "A step runs 2 × PP micro-batches: more per stage shrink the bubble." in prose(CH01)
    assert "micro_batches=2)" in _code(CH01)  # the printed example: PP = 1
    fig, readout = ch._render("llama3-70b", "h100", 8, pp, 8, 3)
    plt.close(fig)
    assert f"micro-batch 1, {2 * pp} micro-batches per step" in readout
    assert f"each of the {2 * pp} micro-batches" in readout


def test_01_the_nic_sentence_has_a_subject_and_its_own_paragraph():
    from test_prose_facts_core import _nic_ratio

    text = prose(CH01)
    assert "Through that NIC the same bytes take eight times longer on an H100, 15× on a B200." in text
    assert round(_nic_ratio("h100")) == 8 and round(_nic_ratio("b200")) == 15
    cells = json.loads((ROOT / "notebooks" / CH01).read_text(encoding="utf-8"))["cells"]
    c010 = "".join(next(c for c in cells if c.get("id") == "c010")["source"])
    assert "[line rate](../docs/glossary.md#line-rate).\n\nThrough that NIC" in c010


@pytest.mark.parametrize("gpu", ["v100", "a100", "h100", "h200", "b200", "b200-gb200"])
@pytest.mark.parametrize("tp", TP_SLIDER)
def test_01_readout_says_when_tp_outgrows_the_nvlink_domain(gpu, tp):
    # the NVLink column times TP traffic as if every peer were one NVLink hop away: past the domain it says so
    from nvcourse.chapters import ch01_one_gpu as ch

    domain = max(s.gpus_per_domain for s in catalog.systems().values() if s.gpu == gpu)
    assert ch.nvlink_domain(gpu) == domain
    fig, readout = ch._render("llama3-70b", gpu, tp, 1, 8, 1)
    plt.close(fig)
    caveat = f"TP {tp} is wider than the {domain}-GPU NVLink domain of a system with this GPU"
    assert (caveat in readout) == (tp > domain), (gpu, tp)
    if tp > domain:
        assert "so its NVLink time is a lower bound." in readout
    assert "Traceback" not in readout


def test_01_tp_64_leaves_the_8_gpu_domain_as_the_prose_says():
    assert ("TP 64 cannot stay inside an 8-GPU NVLink domain (chapter 05 shows a 72-GPU one)") in prose(CH01)
    from nvcourse.chapters import ch01_one_gpu as ch

    assert ch.nvlink_domain("h100") == 8 < 64 and ch.nvlink_domain("b200-gb200") == 72 > 64


# ------------------------------------------------------------------------------------------------ 04
def test_04_objective_says_the_measurement_is_optional_and_the_path_agrees():
    from nvcourse.devtools import reading_time

    text = prose(CH04)
    assert "- measure a collective on your machine (§5, optional), fit α and β" in text
    assert "and (optionally) measures them with real processes." in text
    assert "## 5." in reading_time.PATH["04"] and "## 5. A real all-reduce on your machine" in text


@pytest.mark.parametrize("p", [4, 8, 16, 32, 64])
def test_04_small_buffer_order_is_a_list_of_step_counts(p):
    from nvcourse.chapters import ch04_collectives as ch04

    text = prose(CH04)
    assert ("are decided by the number of steps, fewest first: - direct: α; - naive: 2α; - rhd and tree: "
            "2 log₂ p · α; - ring: 2(p − 1)α (all but direct equal at p = 2). Large ones are decided by the bytes")\
        in text
    alpha, beta = 1e-6, 1e11
    lat = {a: ch04.formula_terms("allreduce", a, p, 2**20, alpha, beta)[0] / alpha
           for a in ch04.algorithms_for("allreduce", p)}
    lg = p.bit_length() - 1
    assert lat["direct"] == pytest.approx(1) and lat["naive"] == pytest.approx(2)
    assert lat["rhd"] == pytest.approx(2 * lg) and lat["tree"] == pytest.approx(2 * lg)
    assert lat["ring"] == pytest.approx(2 * (p - 1))
    two = {a: ch04.formula_terms("allreduce", a, 2, 2**20, alpha, beta)[0] / alpha
           for a in ch04.algorithms_for("allreduce", 2)}
    assert {round(v, 9) for a, v in two.items() if a != "direct"} == {2.0}


def test_04_ring_readout_step_spans_overlap_and_the_prose_says_so():
    from nvcourse.chapters import ch04_collectives as ch
    from nvcourse.collectives.draw_ring import ring_step_html
    from nvcourse.collectives.group import ProcessGroup

    assert ("the table lists what was measured for each transfer (step spans overlap across ranks: their sum can "
            "exceed the call's time).") in prose(CH04)
    with ProcessGroup(4) as pg:
        traced = pg.run("allreduce", 64, algo="ring", iters=1, warmup=1, trace=True)
    replay = ch.RingReplay.from_result(traced)
    total = replay.frames[-1]["end"]
    spans = [f["end"] - f["start"] for f in replay.frames]
    assert all(0 <= s <= total + 1e-12 for s in spans)
    assert "the recorded call took" in ring_step_html(replay, 0)
    assert "in the trace this step spans" in ring_step_html(replay, 1)


def test_04_the_model_marks_are_the_figures_model_line():
    from nvcourse.alt_text import describe
    from nvcourse.chapters import ch04_collectives as ch
    from nvcourse.collectives.results import LinkEmulation

    text = prose(CH04)
    assert "The short black lines across the bars (the legend's \"model\") are the model's times." in text
    assert "black ticks" not in text
    emu = {"slow": LinkEmulation(latency_s=1e-3, bandwidth_Bps=1e8), "fast": LinkEmulation(latency_s=1e-4,
                                                                                             bandwidth_Bps=1e9)}
    rows = {k: [{"op": "allreduce", "algo": a, "procs": 4, "bytes": 2**18, "time_s": 0.01} for a in ("ring", "tree")]
            for k in emu}
    fig = ch.plot_link_tradeoff(rows, emu)
    try:
        alt = describe(fig)
        legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    finally:
        plt.close(fig)
    assert "line: model" in alt and "model" in legend


@pytest.mark.parametrize("beta_GBps", [0.1, 1.0, 25.0, 370.8, 1000.0])
def test_04_check_yourself_q4_rhd_stays_slightly_ahead_at_1_gib(beta_GBps):
    # Q4: α = 5 µs, 16 ranks: at 1 GiB the bandwidth terms are equal and rhd stays slightly ahead on paper
    from nvcourse.chapters import ch04_collectives as ch04

    text = prose(CH04)
    assert ("At 1 GiB the equal bandwidth terms dominate: rhd stays slightly ahead on paper (the dashboard shows "
            "it); the ring's edge, neighbour-only traffic, shows on a real network (chapter 06).") in text
    assert "usually wins" not in text
    ring, rhd = (ch04.formula_terms("allreduce", a, 16, 2**30, 5e-6, beta_GBps * 1e9) for a in ("ring", "rhd"))
    assert ring[1] == pytest.approx(rhd[1])
    assert 0 < (sum(ring) - sum(rhd)) / sum(ring) < 0.06


def test_04_sweep_numbers_are_said_to_be_one_runs():
    assert ("the printed figures come from one run on one machine, so yours differ, and a sudden fall of busbw "
            "between two sizes is the machine, not the algorithm.") in prose(CH04)


# ------------------------------------------------------------------------------------------------ 05
def test_05_a_single_switch_chip_any_one_of_them_in_section_1_and_q1():
    from nvcourse.topology import build_system_graph, metrics

    text = prose(CH05)
    nvl = catalog.get_system("gb200-nvl72")
    assert set(nvl.switch_links_per_gpu) == {1} and len(nvl.switch_links_per_gpu) == nvl.nvswitch_count == 18
    assert "so any GPU reaches any other through a single switch chip, any one of them" in text
    assert "exactly one switch" not in text and "one hop" not in text  # chapter 03 counts GPU → switch → GPU as 2
    assert ("so a path between two GPUs crosses a single switch chip (2 hops in chapter 03's count: "
            "GPU → switch → GPU)") in text
    assert metrics.hop_stats(build_system_graph("gb200-nvl72"))["max"] == 2


def test_05_section_2_answers_one_question_with_one_number():
    from nvcourse.costmodel import tuning, validation

    text = prose(CH05)
    body = _section(text, "## 2.", "## 3.")
    assert "(since which version: §6)" not in text
    assert "(in recent versions)." in body and "§6 has the figures, sources and NCCL's older rule." in body
    assert ("For small buffers NCCL runs the ring with its low-latency protocol, LL "
            "([glossary](../docs/glossary.md#protocol), chapter 04b)") in body
    assert '<a id="protocol"></a>**protocol: LL, LL128, Simple**' in (ROOT / "docs" / "glossary.md").read_text()
    assert body.index("a fraction $\\eta$ of the NVLink rate") < body.index("fraction η of the link rate")
    assert "**Large buffers: less than the byte saving,**" in body and "Published runs measure about 1.25×" in body
    for moved in ("1.31×", "1.30×", "1.56×", "0.85", "1.32×", "1.91×"):
        assert moved not in body, moved
    cases = {k.id: k for k in validation.cases()}
    published = [cases[f"{s}-allreduce-nvls"].busbw_GBps / cases[f"{s}-allreduce-ring"].busbw_GBps
                 for s in ("h100-8gpu", "nvl72")]
    assert all(1.25 <= round(r, 2) <= 1.3 for r in published)
    for gen in ("hopper", "blackwell"):
        assert tuning.nvls_efficiency(gen) < 1  # the gain stays below the byte saving


def test_05_section_6_explains_the_tables_figures_right_under_it():
    from nvcourse.chapters import ch05_nvl72 as ch

    text = prose(CH05)
    ref = _section(text, "## 6.", "## Key points")
    assert "Where 1.91× and 1.47× come from" not in text
    table = ref.index("| bytes each GPU moves | 1.95× |")
    figures = ref.index("In figures: at g = 72 each GPU moves 1.95× fewer bytes (1.91× in NCCL's model")
    assert table < figures < ref.index("**Small buffers on 72 GPUs")
    ring, nvls, gain = ch.nvls_vs_ring(2**30, 72)
    assert f"at 1 GiB, {ring.time_s * 1e3:.2f} ms for the ring against {nvls.time_s * 1e3:.2f} ms for NVLS" in ref
    assert f"| 1 GiB all-reduce, NCCL's model | {gain:.2f}× |" in ref
    # the Simple-only threshold (5 and 6 GPUs) is folded away in a collapsed box of §6
    box = ref[ref.index("<details><summary>From how many GPUs does NVLS win"):ref.index("</details>")]
    for sid, g in (("dgx-h100", "5 for H100"), ("gb200-nvl72", "6 for Blackwell")):
        assert g.startswith(str(catalog.get_system(sid).nvls_min_gpus)) and g in box
    assert "[nccl#1455](https://github.com/NVIDIA/nccl/issues/1455)" in box
    h100 = ref[ref.index("**Why the H100 figures agree.**"):]
    assert "1.56 × 0.85 ≈ 1.32×" in h100 and "1.31× against the published 1.30×" in h100


def test_05_details_under_the_table_speak_to_learners():
    from nvcourse.chapters import ch05_nvl72 as ch

    _fig, summary = ch.ring_vs_nvls_summary()
    plt.close(_fig)
    printed = outputs(ROOT / "notebooks" / CH05)
    for text in (summary, printed):
        assert "used only by the Simple-α formula" not in text and "nccl#1455" not in text
    nvl72, h100 = (catalog.get_system(s).nvls_min_gpus for s in ("gb200-nvl72", "dgx-h100"))
    line = (f"On an NVL72 or a B200, where the Simple-only formula says NVLS starts to pay: {nvl72} GPUs; on an "
            f"H100: {h100} (the course's estimates, from published runs; NCCL itself enables NVLS from 2)")
    assert html.escape(line) in summary and html.escape(line) in printed


def test_05_published_runs_are_named_in_words():
    from nvcourse.chapters import ch05_nvl72 as ch
    from nvcourse.costmodel import validation

    code, printed = _code(CH05), outputs(ROOT / "notebooks" / CH05)
    ids = [i for ring_id, nvls_id, _name in ch.PUBLISHED_RUNS for i in (ring_id, nvls_id)]
    assert {k.id for k in validation.cases()} >= set(ids)
    for i in ids:
        assert i not in code and i not in printed, i
    lines = ch.published_runs_text().splitlines()
    assert lines[0].startswith("8 x H100, ring, 4 GiB: bus bandwidth model")
    assert lines[-2:] == ["8 x H100: NVLS / ring  model 1.31x, published 1.30x",
                          "NVL72: NVLS / ring  model 1.41x, published 1.25x"]
    assert "\n".join(lines) in printed


def test_05_and_its_neighbours_do_not_read_longer():
    from nvcourse.devtools import reading_time

    measured = {n: reading_time.measure_chapter(ROOT / "notebooks" / n) for n in (CH00, CH01, CH04, CH05)}
    limits = {CH00: (11, 11), CH01: (18, 18), CH04: (47, 32), CH05: (31, 20)}  # (read, core) before this walk
    for name, chapter in measured.items():
        assert (chapter.reading_min, chapter.core_min) <= limits[name], (name, chapter)
