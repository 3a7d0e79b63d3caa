"""Sentences of chapters 04, 04b and 05 that a fresh learner found at odds with a dashboard, the code or another
chapter, or that used a word or number before giving it: each now holds against the model it describes. Expected
values come from the chapters' text; markdown line breaks read as spaces."""

import json
import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from nvcourse.chapters.ch04_collectives import FORMULA_SIZES, algorithms_for
from nvcourse.chapters.ch04b_predicting import SIZES
from nvcourse.collectives import model as formulas
from nvcourse.costmodel import predict_sweep, tuning
from nvcourse.costmodel.bands import BANDS, band_of
from nvcourse.costmodel.launch import LAUNCH_MODES
from nvcourse.nccl.diagnose import BANDS as READER_BANDS

ROOT = Path(__file__).resolve().parents[1]
NB04, NB04B, NB05 = ("04_collectives_and_allreduce.ipynb", "04b_predicting_collectives.ipynb",
                     "05_nvl72_rack_scale.ipynb")
MiB = 2**20


@cache
def cell(nb: str, cid: str) -> str:
    cells = json.loads((ROOT / "notebooks" / nb).read_text(encoding="utf-8"))["cells"]
    return next(re.sub(r"\s+", " ", "".join(c["source"])) for c in cells if c["id"] == cid)


@pytest.mark.parametrize("launch", LAUNCH_MODES)
def test_04b_things_to_try_a100_node_counts_match_the_picks(launch):
    # "2 nodes (the tree at every size; ...), 4 nodes (the ring wins some sizes from 64 MiB up), then 256 nodes (the
    # tree wins at every size ...)": the dashboard's auto pick over its whole size axis, in every launch mode
    text = cell(NB04B, "c011")
    assert "`dgx-a100` (8 GPUs per node) with: - 2 nodes: the tree at every size; at 1 GiB busbw above" in text
    assert "- 4 nodes: the ring wins some sizes from 64 MiB up; - 256 nodes: the tree wins at every size" in text
    assert "the tree for large messages" not in text

    def picks(nodes: int) -> list[tuple[float, str]]:
        sw = predict_sweep("allreduce", "dgx-a100", 8, SIZES, nodes=nodes, launch=launch)
        return [(float(s), str(a)) for s, a in zip(SIZES, sw.algo, strict=True)]

    assert {a for _s, a in picks(2)} == {"tree"} and {a for _s, a in picks(256)} == {"tree"}
    four = picks(4)
    ring = [s for s, a in four if a == "ring"]
    assert ring and min(ring) == 64 * MiB and {a for _s, a in four} == {"ring", "tree"}


def test_04b_section_11_band_labels_are_the_codes_and_say_06b_has_its_own():
    text = cell(NB04B, "800dda6a")
    for label in ("| ≥ 16 MiB |", "| 64 KiB – 16 MiB |", "| ≤ 64 KiB |"):
        assert label in text, label
    assert "below 64 KiB" not in text
    # one convention, the code's: 64 KiB is in the small band, 16 MiB in the large one (as §12's figure labels them)
    assert [b[0] for b in BANDS] == ["<= 64 KiB", "64 KiB-16 MiB", ">= 16 MiB"]
    assert band_of(64 * 2**10) == "<= 64 KiB" and band_of(64 * 2**10 + 1) == "64 KiB-16 MiB"
    assert band_of(16 * MiB) == ">= 16 MiB"
    # "chapter 06b's nccl-tests reader sorts sizes into its own bands, with the bandwidth band from 32 MiB"
    # the note on the bands moved to reference §12 ("The size bands of section 11")
    assert ("These are the model's size bands (64 KiB counts as small); chapter 06b's nccl-tests reader sorts sizes "
            "into its own bands, with the bandwidth band from 32 MiB.") in cell(NB04B, "b4c06a12")
    reader = {name: (lo, hi) for name, lo, hi in READER_BANDS}
    assert reader["bandwidth"][0] == 32 * MiB != BANDS[-1][1]
    nb06b = (ROOT / "notebooks" / "06b_nccl_in_practice.ipynb").read_text(encoding="utf-8")
    assert "bandwidth (≥ 32 MiB)" in nb06b


def test_04_key_point_scopes_the_size_rule_to_ring_and_tree():
    text = cell(NB04, "c030")
    assert ("Direct (it needs a crossbar) wins on paper; between ring and tree (p ≥ 3), which wins depends on size "
            "relative to $n_{1/2} = \\alpha\\beta$") in text
    assert "- Which algorithm wins depends on size" not in text
    for alpha_us in (0.1, 10.0, 1000.0):
        for beta_GBps in (0.1, 10.0, 1000.0):
            a, b = alpha_us * 1e-6, beta_GBps * 1e9
            n_half = a * b
            for p in (2, 3, 4, 8, 16, 64):
                # "direct wins on paper": the fastest of the formulas dashboard at every size
                for s in FORMULA_SIZES:
                    times = {x: formulas.predict("allreduce", x, p, s, a, b) for x in algorithms_for("allreduce", p)}
                    assert min(times, key=times.get) == "direct"
                sizes = 2.0 ** np.arange(0, 50)
                ring_wins = [s for s in sizes
                             if formulas.predict("allreduce", "ring", p, s, a, b)
                             < formulas.predict("allreduce", "tree", p, s, a, b)]
                if p == 2:  # why "p ≥ 3": on two ranks the ring wins at every size
                    assert len(ring_wins) == len(sizes)
                    continue
                # the tree below the crossover, the ring above it, and the crossover within a few n½
                lo = min(ring_wins)
                assert all(s in ring_wins for s in sizes if s >= lo)
                assert n_half / 2 <= lo <= 16 * n_half, (p, alpha_us, beta_GBps, lo / n_half)


def test_05_no_longer_says_the_ring_and_nvls_run_level_to_64_mib():
    # the model chooses with NCCL's own estimate (chapter 04b): NVLS from 3 MiB on 8 B200 (test_prose_facts_walk_r3.py)
    text = cell(NB05, "c05ref2")
    assert "runs level with NVLS" not in text and "up to 2 MiB on 8 B200" in text


def test_04b_tree_base_latency_is_named_where_the_formula_uses_it():
    text = cell(NB04B, "b4c06a12")  # the published picks, moved from §10 to reference §12
    base = tuning.base_latency_us("tree", "LL")
    step = 2 * (7 * tuning.hw_latency_us("nvlink", "tree", "LL") + tuning.hw_latency_us("net", "tree", "LL"))
    assert f"with {base:g} µs the tree's LL base latency (section 4's printout): ${base:g} + 2" in text
    assert f"= {base + step:.1f}$ µs" in text


def test_04b_and_05_words_are_given_where_first_used():
    assert "memory fence" not in cell(NB04B, "e2115298")
    assert "| **Simple** | one flag per large chunk, set once the whole chunk is visible |" in cell(NB04B, "e2115298")
    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert "the crossover [$n_{1/2}$](../docs/glossary.md#n-half) moves" in cell(NB04B, "c018")
    assert "[DP (and PP)](../docs/glossary.md#parallelism) across it" in cell(NB05, "c012")
    for anchor in ("n-half", "parallelism"):
        assert f'<a id="{anchor}"></a>' in glossary


def test_04_names_no_internal_function_and_05_names_dp_where_it_first_appears():
    nb04 = json.loads((ROOT / "notebooks" / NB04).read_text(encoding="utf-8"))["cells"]
    assert not any("fit_alpha_beta" in "".join(c["source"]) for c in nb04 if c["cell_type"] == "markdown")
    assert "(a least-squares line through one-way time vs size)" in cell(NB04, "c022")
    assert "Data parallelism (DP: one gradient all-reduce per step" in cell(NB05, "ace36372")
    nb05 = json.loads((ROOT / "notebooks" / NB05).read_text(encoding="utf-8"))["cells"]
    md = " ".join(re.sub(r"\s+", " ", "".join(c["source"])) for c in nb05 if c["cell_type"] == "markdown")
    assert md.index("Data parallelism (DP:") < md.index("DP (and PP)")
