"""Guards for chapter 07b after fresh-learner walkthrough V: §8's answer 2 says when 16 MiB buckets wait under 10 ms
on NVL72 (only with the SM slowdown) and how many GPUs 64 racks are; the dashboard's grey lines are short sentences
with the rest behind a collapsed block; §2's worked question gives one setup per bullet and defines r; §7's toggle
has no aside in an aside; Check-yourself Q2 sizes α from the model. Markdown line breaks read as spaces."""

import json
import re
from functools import cache

import matplotlib.pyplot as plt
import pytest
from test_prose_facts_core import ROOT

from nvcourse import catalog, costmodel, overlap
from nvcourse.chapters import ch07b_overlap as ch07b

NB = "07b_overlapping_communication.ipynb"
MIB = 2**20
SHARES = [round(0.05 * k, 2) for k in range(7)]  # the dashboard's "SMs taken by comm": 0 to 30 % in 5 % steps


@cache
def cells() -> dict[str, str]:
    nb = json.loads((ROOT / "notebooks" / NB).read_text(encoding="utf-8"))
    return {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"] if c["cell_type"] == "markdown"}


def _wait(tl: overlap.Timeline) -> float:
    """The readout's "waiting for communication" (s): the exposed time less the SM slowdown."""
    return max(tl.exposed_s - max(tl.slowdown_s, 0.0), 0.0)


# ------------------------------------------------------------------------------------------------ §8 answer 2
def test_answer_2_nvl72_holds_in_every_sm_state_and_says_when_16_mib_gets_under():
    text = cells()["c016"]
    nvl = overlap.dp_scenario("llama3-70b", "gb200-nvl72", 64, tp=8)
    sizes = ch07b.BUCKET_CHOICES_MIB
    # "from 25 MiB up it waits under 10 ms at any SM share": 25 MiB is also the size the readout names
    assert ch07b.smallest_keeping_up(nvl) == 25
    assert f"buckets ≥ {ch07b.smallest_keeping_up(nvl)} MiB keep up" in ch07b.bucket_hint(nvl)
    for f in SHARES:
        assert all(_wait(nvl.timeline(m * MIB, f)) < 0.010 for m in sizes if m >= 25), f
        assert _wait(nvl.timeline(8 * MIB, f)) > 0.010, f  # nothing below 16 MiB gets under
    assert "from 25 MiB up it waits under 10 ms at any SM share;" in text
    # "at 15 %, 16 MiB too, only through the SM slowdown (the toggle above)": under 10 ms at the question's 15 %, not
    # with no SMs taken, and never with a smaller exposed time than 25 MiB's
    at15, at0 = nvl.timeline(16 * MIB, 0.15), nvl.timeline(16 * MIB, 0.0)
    assert _wait(at15) < 0.010 < _wait(at0) and at15.slowdown_s > 0
    assert all(nvl.timeline(16 * MIB, f).exposed_s > nvl.timeline(25 * MIB, f).exposed_s for f in SHARES)
    assert "at 15 %, 16 MiB too, only through the SM slowdown (the toggle above)." in text
    assert overlap.data()["defaults"]["comm_sm_fraction"] == 0.15  # "at 15 %": the dashboard's start, the question's
    assert "Why taking more SMs can cut the waiting but never the exposed time" in text  # the toggle above
    assert text.index("Why taking more SMs can cut the waiting") < text.index("16 MiB too")
    assert "from 16 MiB up the waiting is under 10 ms" not in text


def test_answer_2_counts_the_gpus_of_both_machines():
    dgx, nvl = (overlap.dp_scenario("llama3-70b", s, 64, tp=8) for s in ("dgx-h100", "gb200-nvl72"))
    rack = catalog.get_system("gb200-nvl72").gpus_per_domain
    assert nvl.gpus_per_node * nvl.tp == rack
    n_nvl, n_dgx = 64 * nvl.gpus_per_node * nvl.tp, 64 * dgx.gpus_per_node * dgx.tp
    assert f"A GB200 NVL72 does, though its 64 racks of {rack} GPUs are {n_nvl:,}, not {n_dgx}:" in cells()["c016"]


# ------------------------------------------------------------------------------------------------ the readout
def _grey(text: str) -> tuple[str, str]:
    """The readout's grey line (tags stripped) without, then with, its collapsed block's body."""
    grey = text.split("font-size:90%\">", 1)[1]
    shown = re.sub(r"<details>.*?</details>", "", grey)
    folded = re.search(r"<details><summary>[^<]*</summary>(.*?)</details>", grey)
    return re.sub(r"<[^>]+>", "", shown), (folded.group(1) if folded else "")


@pytest.mark.parametrize("scenario", range(3))
def test_readout_grey_lines_are_short_sentences_with_the_rest_folded(scenario):
    dash = ch07b.overlap_dashboard()
    c = dash.controls
    for model in c["model"].options:
        for system in c["system"].options:
            for nodes, chunks, sm in ((64, 4, 0.15), (1, 1, 0.0), (256, 8, 0.3)):
                fig, text = dash._render(scenario=ch07b._SCENARIOS[scenario], model=model, system=system,
                                         nodes=nodes, bucket_mib=25, prefetch=1, chunks=chunks, sm_fraction=sm)
                plt.close(fig)
                shown, folded = _grey(text)
                sentences = [s for s in re.split(r"(?<=[.;])\s+", shown) if s.strip()]
                assert all(len(s.split()) <= 25 for s in sentences), (scenario, model, system, sentences)
                assert "belong to the other scenarios" not in shown
                # the TP scenario echoes the controls that do not act on it, in view: moving any control visibly
                # changes the readout (the browser test moves every one of them)
                echo = f"Nodes ({nodes}), DDP bucket (25 MiB) and FSDP prefetch (1) do not change it."
                assert (echo in shown) == (scenario == 2) and ("do not change it" in shown) == (scenario == 2)
                assert ("belong to the other scenarios" in folded) != (scenario == 2)
                if scenario == 0:
                    sc = overlap.dp_scenario(model, system, nodes, tp=1 if model == "llama3-8b" else 8)
                    gpus = sc.gpus_per_node * sc.tp
                    assert f"{nodes} node(s) of {gpus} GPUs, {nodes * gpus:,} GPUs in all." in shown
                    assert ch07b.bucket_hint(sc) in shown and "α–β" not in shown
                    assert ("α–β bound of §2" in folded) == (sc.gpus_per_node * sc.nodes > 1)


# ------------------------------------------------------------------------------------------------ §2, §7, Q2
def test_worked_question_gives_one_setup_per_bullet_and_r_is_defined_where_first_used():
    raw = "".join(next(c["source"] for c in json.loads((ROOT / "notebooks" / NB).read_text(encoding="utf-8"))["cells"]
                       if c["id"] == "c004"))
    question = raw[raw.index("**Worked question"):]
    bullets = [b.split("\n\n")[0] for b in question.split("\n- ")[1:]]
    assert len(bullets) == 2
    assert bullets[0].startswith("Llama 3 8B with DP") and bullets[1].startswith("Llama 3 70B with TP 8")
    # the last-micro-batch rule is its own paragraph, after the two setups, with the prediction
    rule = "Only the last micro-batch's backward can hide the all-reduce (chapter 07). **Predict**"
    assert question.split("\n\n")[-1].startswith(rule) and not any("micro-batch's backward" in b for b in bullets)
    # r: defined in a clause at its first use (§2's answer), with no pointer ahead to §7
    small = overlap.dp_scenario("llama3-8b", "dgx-h100", 64)
    big = overlap.dp_scenario("llama3-70b", "dgx-h100", 64, tp=8)
    text = " ".join(cells().values())
    clause = "Gradient sizes are alike; $r$ (DP ranks per node, each with its own NIC) differs."
    assert text.index("$r$") == text.index(clause) + len("Gradient sizes are alike; ")
    assert (f"share its {small.gpus_per_node} NICs ($r$ = {small.gpus_per_node}), while TP 8 leaves one rank of each "
            f"70B DP group per node, whose NIC carries the whole ring ($r$ = {big.gpus_per_node}).") in cells()["c006"]
    assert "in §7)" not in cells()["c006"]


def test_section_7_toggle_has_no_aside_in_an_aside():
    text = cells()["c014"]
    assert ("MLP. Llama's has 3: its gate and up projections are both column-parallel, so §5's first GEMM holds two "
            "of them.") in text
    assert "(3 in Llama's" not in text


def test_check_yourself_q2_alpha_is_about_a_hundred_microseconds():
    text = cells()["c018"]
    assert "(about a hundred µs across many nodes)" in text and "hundreds of µs" not in text
    for nodes in (32, 64, 128, 256):  # "many nodes"
        sc = overlap.dp_scenario("llama3-8b", "dgx-h100", nodes)
        small = sc.allreduce(8.0)  # a small message's all-reduce: its latency
        fitted = costmodel.predict("allreduce", "dgx-h100", 8, 256 * MIB, nodes=nodes, algo="nccl").latency_s
        for alpha in (small, fitted):  # "about a hundred": within a factor of two either way
            assert 50e-6 <= alpha <= 200e-6, (nodes, alpha)
