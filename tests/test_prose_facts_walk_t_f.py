"""Sentences of chapters 06d, 07c and 10 that a fresh learner found pointing to the wrong chapter, talking about an
earlier revision, or using a word before it is defined: each now says what the course and its models say. Expected
values come from the chapters' text; markdown line breaks read as spaces."""

import json
import re
from functools import cache
from pathlib import Path

import numpy as np

from nvcourse.chapters import ch06d_runbook as ch06d
from nvcourse.chapters import ch07c_serving
from nvcourse.observability import counters

ROOT = Path(__file__).resolve().parents[1]
NB06D = "06d_bringup_and_fault_runbook.ipynb"
NB07C = "07c_communication_for_inference.ipynb"
NB10 = "10_other_interconnects_and_numerics.ipynb"


@cache
def cells(nb: str) -> list[tuple[str, str, str, str]]:
    """(id, type, source, outputs' text) of every cell, whitespace collapsed."""
    out = []
    for c in json.loads((ROOT / "notebooks" / nb).read_text(encoding="utf-8"))["cells"]:
        shown = json.dumps(c.get("outputs", []), ensure_ascii=False)
        out.append((c["id"], c["cell_type"], re.sub(r"\s+", " ", "".join(c["source"])), shown))
    return out


def cell(nb: str, cid: str) -> str:
    return next(src for i, _, src, _ in cells(nb) if i == cid)


def glossary_chapter(anchor: str) -> str:
    row = next(ln for ln in (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8").splitlines()
               if ln.startswith(f'| <a id="{anchor}"></a>'))
    return re.search(r"\| \[(\w+)\]\(", row).group(1)


def first_cell_saying(nb: str, pattern: str, outputs: bool = True) -> tuple[str, str]:
    """(id, source) of the first cell whose prose (or, with ``outputs``, printed output) matches ``pattern``."""
    return next((i, src) for i, kind, src, shown in cells(nb)
                if (kind == "markdown" and re.search(pattern, src)) or (outputs and re.search(pattern, shown)))


# ---------------------------------------------------------------- 10 §3 and 07c §2: which chapter explains what


def test_10_points_nvls_and_symmetric_kernels_to_the_chapter_that_explains_them():
    text = cell(NB10, "c008")
    assert "- **NVLS** (NVLink SHARP, chapter 04b): the NVLink switch itself adds" in text
    assert ("- **Symmetric kernels** (symmetric-memory kernels, chapter 04b; chapter 07c compares them at decode "
            "sizes):") in text
    assert "(chapter 05)" not in text and "**Symmetric kernels** (chapter 07c)" not in text
    assert glossary_chapter("nvls") == glossary_chapter("symmetric-kernels") == "04b"
    heads = [src for _, kind, src, _ in cells("04b_predicting_collectives.ipynb") if kind == "markdown"]
    assert any("## 7. NVLS: the switch adds" in s for s in heads)
    ref = next(s for s in heads if "## 12. Reference" in s)
    assert ref.index("## 12. Reference") < ref.index("### Registered buffers and symmetric-memory kernels")
    # 07c introduces them as met before, in that reference part, and does compare them at decode sizes (§2)
    sec2 = cell(NB07C, "c004")
    assert ("Since version 2.27 NCCL has its own answer: **symmetric-memory kernels** (met in chapter 04b's "
            "reference part), one-shot-like") in sec2
    assert "## 2. One-shot, two-shot and NCCL's symmetric kernels" in sec2


def test_10_defines_fp16_where_it_first_uses_it_with_the_formats_real_widths():
    first_id, first = first_cell_saying(NB10, r"\bFP16\b", outputs=False)
    assert first_id == "c008"
    said = ("In BF16 (8 bits of precision: 7 stored mantissa bits and the implicit one) that partial sum is rounded at "
            "every hop, $n-1$ times on $n$ GPUs. FP16, the other 16-bit float, keeps 11 bits of precision (10 stored) "
            "but a much narrower range of exponents than BF16.")
    assert said in first and first.index(said) < first.index("FP16 inputs")
    fp16 = np.finfo(np.float16)
    assert fp16.bits == 16 and fp16.nmant == 10  # 10 stored, 11 with the implicit bit
    bf16_max = (2 - 2.0**-7) * 2.0**127  # BF16: FP32's 8-bit exponent, 7 stored bits
    assert float(fp16.max) == 65504 and bf16_max > 1e38 > float(fp16.max) * 1e30


# ---------------------------------------------------------------- 07c: learner words, one name, defined first


def test_07c_nvl72_sentence_speaks_to_the_learner_not_about_a_revision():
    text = cell(NB07C, "c018")
    assert ("The NVL72 still wins clearly: it is why rack-scale domains matter for MoE. (Chapter 05's table keeps the "
            "no-dedup figure as an upper bound.)") in text
    assert not any(re.search(r"now stated|right bytes", src) for _, kind, src, _ in cells(NB07C) if kind == "markdown")


def test_07c_names_resharding_as_its_table_does_and_defines_the_collapsed_techniques_first():
    rows = ch07c_serving.serving_rows()
    assert len(rows) == 7 and "Engines combine seven techniques" in cell(NB07C, "c020a")
    hidden = [r["key"] for r in rows if r["key"] not in ch07c_serving.IN_VIEW]
    assert hidden == ["fp8", "attention-dp", "reshard", "graphs"]
    said = cell(NB07C, "c020a")
    assert ("The other four wait under the table: FP8 weights; attention-DP (each GPU keeps whole requests' KV "
            "caches); prefill TP ≠ decode TP (each KV page re-split between the two); and **CUDA graphs**, a decode "
            "step recorded once and replayed with one launch ([glossary](../docs/glossary.md#cuda-graph)).") in said
    assert said.index("The other four") < said.index("Each result")  # before the table that prints them
    reshard = next(r for r in rows if r["key"] == "reshard")
    assert reshard["item"] == "prefill TP 2 → decode TP 8" and reshard["short"].startswith("every page sent as")
    assert "**Prefill TP ≠ decode TP.**" in cell(NB07C, "c07cmore")
    assert "paged KV transfers, prefill TP ≠ decode TP, CUDA graphs" in cell(NB07C, "c000")
    assert not any("resharding" in src for _, kind, src, _ in cells(NB07C) if kind == "markdown")
    # the first prose that uses "CUDA graph" after the objectives is the one that defines it
    body = [(i, src) for i, kind, src, _ in cells(NB07C) if kind == "markdown" and i != "c000"]
    assert next(i for i, src in body if re.search(r"\bCUDA graphs?\b", src)) == "c020a"


# ---------------------------------------------------------------- 06d: rail, flaps and SRD at first use


def test_06d_links_rail_before_the_first_card_that_uses_it():
    assert re.search(r"\brails?\b", ch06d.checks_html("pcie"))  # the first card (§3's) says "rail"
    first_id, first = first_cell_saying(NB06D, r"\brails?\b")
    assert first_id == "c007"
    assert ("[rail](../docs/glossary.md#rail): in a rail-optimised cluster, NIC k of every server and the leaf switch "
            "they share.") in first
    row = next(ln for ln in (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8").splitlines()
               if ln.startswith('| <a id="rail"></a>'))
    assert "NIC k of every server goes to the same leaf switch" in row


def test_06d_defines_a_flap_where_it_pages_on_one_by_the_counter_the_rule_alerts_on():
    first_id, first = first_cell_saying(NB06D, r"\bflap")
    assert first_id == "c011c"
    assert "on link flaps (the link went down and retrained: `LinkDownedCounter` rose)" in first
    alert = [r["counter"] for r in counters.ib_link_rule() if r["action"] == "alert"]
    assert alert[1].startswith("LinkDownedCounter")


def test_06d_every_prose_srd_links_the_glossary():
    prose = [src for _, kind, src, _ in cells(NB06D) if kind == "markdown" and re.search(r"\bSRD\b", src)]
    assert prose and all("glossary.md#srd" in s for s in prose)
    assert "over EFA's [SRD](../docs/glossary.md#srd), so `NCCL_IB_*` variables do nothing there" in cell(NB06D, "c019")


# ---------------------------------------------------------------- 09 §8.1: one idea per paragraph, detail folded

NB09 = "09_capstone_design_a_cluster.ipynb"


def paragraphs_in_view(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", re.sub(r"<details>.*?</details>", "", text, flags=re.S))
            if p.strip()]


def raw(nb: str, cid: str) -> str:
    cells_ = json.loads((ROOT / "notebooks" / nb).read_text(encoding="utf-8"))["cells"]
    return next("".join(c["source"]) for c in cells_ if c["id"] == cid)


def test_09_fabric_predict_defines_adaptive_routing_in_its_own_paragraph_before_asking():
    paras = [re.sub(r"\s+", " ", p) for p in paragraphs_in_view(raw(NB09, "g9-01").split("### 8.1 The fabric")[1])]
    assert paras[0].startswith("*In this part:*")  # the one-line map of 8.1, then its predict
    # walk W: the definition comes before the Predict, which then reads as one setup and its question
    assert paras[1].startswith("**Adaptive routing** (AR): each switch sends a packet out of whichever of its ports")
    assert "NVIDIA's reference design for a large DGX cluster" in paras[1]
    assert paras[2].startswith("**Predict first.** A 1,024-GPU job") and "adaptive" not in paras[2].lower()
    assert paras[3].startswith("On InfiniBand with AR, what share of the NICs' bandwidth will the job's all-reduce "
                               "get: about 100 %, 70 % or 30 %?")


def test_09_fabric_answer_keeps_advice_in_view_and_folds_configuration_and_the_07b_cross_check():
    text = raw(NB09, "g9-03") + "\n\n" + raw(NB09, "n9-fabric")  # the AR toggle follows the dashboard (walk V)
    in_view = " ".join(paragraphs_in_view(text))
    for folded in ("`NCCL_IB_SL`", "`ibdiagnet`", "Chapter 07b's bucket timeline", "0.744 s − 0.527 s"):
        assert folded in text and folded not in in_view, folded
    for kept in ("so the static-route row is a misconfiguration to catch, not a design to choose.",
                 "Four things restore the bandwidth", "Oversubscription never helps",
                 "a slower all-reduce that still hides behind the backward pass costs nothing."):
        assert kept in re.sub(r"\s+", " ", in_view), kept
    assert "<summary>How AR goes missing, and how to check it</summary>" in text
    assert "<summary>How the step row counts that hiding, against chapter 07b's bucket timeline</summary>" in text
    # "Four things ..." and "None of them comes free ..." are two paragraphs now
    assert not any("Four things" in p and "None of them comes free" in p for p in paragraphs_in_view(text))
