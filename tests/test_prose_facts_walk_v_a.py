"""Guards for the sentences fixed after fresh-learner walkthrough V-5 (chapters 00, 01, 02 and 04): each one is
recomputed from the model, the catalog or the readout it describes, so a build that breaks the claim fails here.

Markdown cannot compute: the sentence must appear in the chapter as written (line breaks read as spaces).
"""

import re

import matplotlib.pyplot as plt
import pytest
from test_prose_facts_core import _ch01_state, prose

from nvcourse import catalog, linkmodel

CH00 = "00_start_here.ipynb"
CH01 = "01_why_one_gpu_is_not_enough.ipynb"
CH02 = "02_pcie_vs_nvlink.ipynb"
CH04 = "04_collectives_and_allreduce.ipynb"
KIB256 = 2**18


# ------------------------------------------------------------------------------------------------ 04
def _ring_tree(link_id: str, links: int):
    """(link, {algo: (latency term, bandwidth term)}) of a 4-rank all-reduce of 256 KiB, as §5's emulation times it."""
    from nvcourse.chapters import ch04_collectives as ch

    p = linkmodel.link_params(link_id, links=links)
    terms = {a: ch.formula_terms("allreduce", a, 4, KIB256, p.alpha_s, p.beta_Bps) for a in ("ring", "tree")}
    return p, terms


def test_04_ring_beats_tree_on_pcie_because_the_trees_bytes_cost_more_than_its_steps():
    # c028: the old "On the slow link 256 KiB is bandwidth-bound" broke chapter 02's own rule (n½ = 154 KiB:
    # 256 KiB is "in between"); the ring wins because the tree's 3.5 n extra bytes outweigh its 2 extra α
    from nvcourse.chapters import ch02_links as ch02

    text = prose(CH04)
    assert ("Why? The ring takes 6 steps to this tree's 4 but moves over 3× fewer bytes along the slowest path "
            "(1.5 n vs 5 n), so it wins once the tree's extra bytes (3.5 n/β) cost more than the ring's two extra "
            "steps (2α). On the slow link they do at 256 KiB, which lies between its n½ (printed above) and 4·n½: "
            "chapter 02's \"in between\", where both terms count. On the fast link 256 KiB is latency-bound "
            "(below n½/4), and the tree's fewer steps win.") in text
    assert "On the slow link 256 KiB is bandwidth-bound" not in text
    pcie, slow = _ring_tree("pcie4", 1)
    nvl, fast = _ring_tree("nvlink4", 18)
    for p, terms in ((pcie, slow), (nvl, fast)):
        (ring_lat, ring_bw), (tree_lat, tree_bw) = terms["ring"], terms["tree"]
        assert ring_lat / p.alpha_s == pytest.approx(6) and tree_lat / p.alpha_s == pytest.approx(4)
        assert ring_bw * p.beta_Bps / KIB256 == pytest.approx(1.5) and tree_bw * p.beta_Bps / KIB256 == pytest.approx(5)
        assert tree_bw / ring_bw > 3  # "over 3× fewer bytes"
    assert ch02.regime_of(KIB256, pcie.half_bandwidth_bytes) == "between"
    assert pcie.half_bandwidth_bytes < KIB256 < 4 * pcie.half_bandwidth_bytes
    assert ch02.regime_of(KIB256, nvl.half_bandwidth_bytes) == "latency" and KIB256 < nvl.half_bandwidth_bytes / 4
    # the why: extra bytes against extra steps, and the order it gives on each link
    (r_lat, r_bw), (t_lat, t_bw) = slow["ring"], slow["tree"]
    assert t_bw - r_bw > r_lat - t_lat and sum(slow["ring"]) < sum(slow["tree"])
    (r_lat, r_bw), (t_lat, t_bw) = fast["ring"], fast["tree"]
    assert t_bw - r_bw < r_lat - t_lat and sum(fast["tree"]) < sum(fast["ring"])


@pytest.mark.parametrize("p", range(2, 9))
def test_04_after_p_minus_1_ring_steps_rank_r_holds_chunk_r_plus_1(p):
    # c012: "every rank holds exactly one Σ chunk — a reduce-scatter with the chunks rotated (rank r holds chunk
    # r + 1 mod p)" — what the step slider and §2's trace show, against §1's contract "rank r gets chunk r"
    from nvcourse.collectives.draw_ring import ring_states

    assert ("after step 3 (= p − 1) every rank holds exactly one Σ chunk — a reduce-scatter with the chunks rotated "
            "(rank r holds chunk r + 1 mod p).") in prose(CH04)
    assert "that is a reduce-scatter." not in prose(CH04)
    states, _ = ring_states(p, 4 * p)
    for r, row in enumerate(states[p - 1]):
        full = [b.chunk for b in row if len(b.sources) == p]
        assert full == [(r + 1) % p], (p, r, [b.label(p) for b in row])


def test_04_tree_fan_in_is_one_exactly_where_the_level_below_holds_one_rank():
    # c013: "$c_d$ (2, or 1 where the level below holds one rank)"
    from nvcourse.collectives.model import tree_level_children
    from nvcourse.collectives.programs import tree_depth

    assert "$c_d$ (2, or 1 where the level below holds one rank)" in prose(CH04)
    assert "half-empty" not in prose(CH04)
    for p in range(2, 73):
        per_level = [sum(1 for r in range(p) if tree_depth(r) == d) for d in range(tree_depth(p - 1) + 1)]
        for d, c in enumerate(tree_level_children(p)):
            assert c == (1 if per_level[d + 1] == 1 else 2), (p, d)


def test_04_section_5_defines_spawn_asks_its_question_and_section_6_says_live_runs_vary():
    text = prose(CH04)
    assert ('`ProcessGroup(p)` starts p worker processes (the "spawn" method: each is a fresh Python interpreter, '
            "not a copy of this notebook's process)") in text
    import inspect

    from nvcourse.collectives import group  # the group really starts its workers that way

    assert 'mp.get_context("spawn")' in inspect.getsource(group.ProcessGroup)
    assert "### Why can this run's order differ from the model's?" in text
    assert "Where does the model's order show, then?" not in text
    # §6's committed MPI run can show a 100× fall between its two sizes: the prose says why before the reader asks
    assert ("These times are live and vary from run to run: a busbw that falls far between the two sizes is this "
            "shared machine, not the library (§5's sweep explains why).") in text
    assert "a sudden fall of busbw between two sizes is the machine, not the algorithm" in text
    assert text.index("(§5's sweep explains why)") > text.index("## 6.")


def test_04_readout_defines_one_shot_and_two_shot_where_it_names_them():
    from nvcourse.chapters import ch04_collectives as ch

    seen = 0
    for p in (2, 4, 64):
        for size in (2**6, 2**18, 2**30):
            fig, text = ch.render_formulas(p, 3.4, 370.8, size)
            plt.close(fig)
            text = text.replace("&#x27;", "'")
            if "one-shot" in text:
                seen += 1
                said = text.index("its one-shot and two-shot kernels are a direct all-reduce over NVLink")
                assert text.index("One-shot: every GPU reads all its peers' buffers and adds them itself, in one "
                                  "step; two-shot: every GPU sums its own chunk from all peers, then writes it into "
                                  "all of them.") > said
    assert seen


def test_04_core_minutes_did_not_grow():
    from pathlib import Path

    from nvcourse.devtools import reading_time

    root = Path(__file__).resolve().parents[1]
    assert reading_time.measure_chapter(root / "notebooks" / CH04).core_min <= 32


# ------------------------------------------------------------------------------------------------ 02
def test_02_share_of_beta_never_prints_scientific_notation():
    from nvcourse.chapters import ch02_links as ch

    view = ch._AlphaBetaView()
    tiny = 0
    for alpha in (0.1, 3.4, 100.0):
        for beta in (ch.BETA_GRID["minimum"], 370.8, ch.BETA_GRID["maximum"]):
            for size in (1, 2**10, 2**20, 2**34):
                _live, text = view(alpha, beta, size)
                share = re.search(r"= (.+?) of β", text).group(1)
                assert not re.search(r"\de-?\d", share), share
                p = linkmodel.LinkParams(alpha_s=alpha * 1e-6, beta_Bps=beta * 1e9)
                if 100 * p.bandwidth(size) / p.beta_Bps < 0.01:
                    tiny += 1
                    assert share == "&lt; 0.01 %", share
    plt.close("all")
    assert tiny and ch._percent(0.0001) == "0.01 %" and ch._percent(0.0032) == "0.32 %"


def test_02_section_4_says_where_its_path_codes_come_from_and_the_alpha_block_says_what_it_answers():
    text = prose(CH02)
    assert ("The path depends on where they sit (`nvidia-smi topo -m` prints the code in brackets; chapter 03 "
            "reads it):") in text
    for code in ("PIX", "PXB", "PHB", "NODE", "SYS"):
        assert f"(`{code}`" in text or f"`{code}`)" in text or f"/`{code}`" in text
    assert ("**What α is made of (§2).** It answers: why does a step that moves no data cost microseconds? Each "
            "step pays for launching the GPU kernel") in text


# ------------------------------------------------------------------------------------------------ 01
@pytest.mark.parametrize("pp", [1, 2, 4, 8, 16])
def test_01_two_micro_batches_per_stage_and_why(pp):
    from nvcourse.chapters import ch01_one_gpu as ch
    from nvcourse.training.step import pipeline_bubble_fraction

    text = prose(CH01)
    assert "A step runs 2 × PP micro-batches: more per stage shrink the bubble." in text
    assert "(so DP = 8; PP = 1, so 2 micro-batches) and 4,096-token sequences, one per micro-batch:" in text
    fig, readout = ch._render("llama3-70b", "h100", 8, pp, 8, 3)
    plt.close(fig)
    assert f"micro-batch 1, {2 * pp} micro-batches per step" in readout
    if pp > 1:  # more micro-batches per stage: a smaller bubble
        assert pipeline_bubble_fraction(pp, 2 * pp) < pipeline_bubble_fraction(pp, pp)


def test_01_the_nic_column_is_named_after_the_table_that_has_it():
    from nvcourse.chapters import ch01_one_gpu as ch

    text = prose(CH01)
    intro = text.index("the table the bytes it sends per step and their time over its NVLinks and one 400 Gb/s NIC.")
    assert text.index("the NIC column") > intro
    fig, readout = ch._render("llama3-70b", "a100-pcie", 8, 1, 8, 0)
    plt.close(fig)
    assert "NIC" in readout


def test_01_things_to_try_has_one_idea_per_bullet_and_its_figures_are_the_dashboards():
    text = prose(CH01)
    plain, t0 = _ch01_state(1, 1, 64, 0)
    z3, t3 = _ch01_state(1, 1, 64, 3)
    states = z3.total - z3.activations
    assert (f"Now turn on ZeRO-3: the model states shrink from {(plain.total - plain.activations) / 1e12:.1f} TB to "
            f"{states / 1e9:.1f} GB per GPU. - Yet the readout says {z3.total / 1e9:.0f} GB, \"does not fit\": "
            f"{z3.activations / 1e9:.1f} GB is the activations of one 4,096-token sequence, which ZeRO does not "
            "shard. - TP shards the activations, PP does not: its first stage holds several micro-batches. - The "
            f"data-parallel bytes under ZeRO-3: {t3.dp / t0.dp:g}× those without, because this step has 2 "
            "micro-batches") in text
    assert not z3.fits(80)
    for pp in (1, 2, 4):  # PP does not shrink the activations; TP does
        assert _ch01_state(1, pp, 1, 0)[0].activations == pytest.approx(_ch01_state(1, 1, 1, 0)[0].activations)
    assert _ch01_state(8, 1, 1, 0)[0].activations == pytest.approx(_ch01_state(1, 1, 1, 0)[0].activations / 8)


# ------------------------------------------------------------------------------------------------ 00
def test_00_says_what_the_scale_up_link_and_nvswitch_columns_hold():
    import contextlib
    import io
    from argparse import Namespace

    from nvcourse import catalog_cli

    text = prose(CH00)
    assert ("NVLink dom. is how many GPUs NVLink joins; scale-up link is the link that joins them (PCIe where GPUs "
            "have no NVLink), and [NVSwitch](../docs/glossary.md#nvswitch) counts switch chips.") in text
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        catalog_cli._systems(Namespace(json=False))
    header = out.getvalue().splitlines()[0]
    assert "scale-up link" in header and "NVSwitch" in header
    for s in catalog.systems().values():
        assert s.scale_up_link.startswith("nvlink" if s.gpus_per_domain > 1 else "pcie"), s.id
    chips = {sid: s.nvswitch_count for sid, s in catalog.systems().items()}
    assert chips["dgx-h100"] == 4 and chips["dgx-b200"] == 2 and chips["gb200-nvl72"] == 18  # switch chips
    assert chips["pcie-8gpu"] == chips["dgx-1-v100"] == 0
