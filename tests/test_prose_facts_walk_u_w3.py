"""Guards for a fresh learner's walk of 04b, 06c and 06d (walkthrough U, W3): the 06d drill shows no other case's
fault, each sentence fixed after the walk says what the model or the data gives, over the controls' range."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_prose_facts_core import prose

from nvcourse import _data, catalog
from nvcourse.costmodel import sweeps, symmetric, tuning
from nvcourse.costmodel.config import configure
from nvcourse.costmodel.prediction import predict
from nvcourse.devtools import reading_time
from nvcourse.fabric import ecmp_qp

ROOT = Path(__file__).resolve().parents[1]
NB04B, NB06C = "04b_predicting_collectives.ipynb", "06c_multinode_lab.ipynb"
NB06D = "06d_bringup_and_fault_runbook.ipynb"
FIX = ROOT / "tests" / "fixtures" / "runbook"
RUNBOOK = _data.load("runbook")
GiB = 2**30


def _cells(nb: str) -> dict[str, str]:
    """Markdown cells by id, as written (line breaks kept)."""
    cells = json.loads((ROOT / "notebooks" / nb).read_text(encoding="utf-8"))["cells"]
    return {c["id"]: "".join(c["source"]) for c in cells if c["cell_type"] == "markdown"}


def _flat(text: str) -> str:
    return " ".join(text.split())


# ------------------------------------------------------------------------------------------------------------ 06d
def test_06d_each_drill_step_is_its_own_case_or_a_labelled_healthy_illustration():
    # the drill is nccl#1676 (a missing peer-memory path, RDMA itself works): every step's evidence is that case's,
    # or labelled as not from it and consistent with the answer (no fault signature, no rising counter)
    from nvcourse.chapters import ch06d_runbook as ch
    from nvcourse.nccl.signatures import counter_readings

    d = RUNBOOK["drill"]
    case_url = RUNBOOK["sources"][d["story_src"]]["url"]
    assert "RDMA itself works" in d["why"] and "counter checks are not needed" in d["why"]
    for name, step in d["steps"].items():
        page = ch.drill_step_html(name)
        found = ch.drill_signatures(name)
        if "output" not in step:
            assert "No output of this command was published for this case." in page, name
            healthy = RUNBOOK["signatures"][step["healthy_of"]]["healthy"]
            assert _flat(healthy)[:40] in _flat(page.replace("&#x27;", "'")), name
            assert found == [] and "<pre" not in page, name
        elif step["src"] == d["story_src"]:
            assert f'href="{case_url}"' in page and "Quoted from:" in page, name
            assert case_url in (FIX / step["fixture"]).read_text().splitlines()[0], name
            assert set(found) <= {d["answer"]} and name in d["best_steps"], name
        else:
            assert "This case published no output of this command; here is a healthy one, quoted from:" in page, name
            assert found == [] and "rose by" not in page and name not in d["best_steps"], name
            assert case_url not in page, name
            # a healthy illustration: no error counter above zero either (one reading of one is history, not health)
            assert all(v == 0 for c in counter_readings(step["output"]) for v in c["values"]), name
    # the counters no longer show nccl#394's drops on this page
    counters = ch.drill_step_html("counters")
    assert "91316" not in counters and "issues/394" not in counters


def test_06d_drill_prose_says_the_outputs_are_labelled():
    text = _flat(_cells(NB06D)["c017"])
    assert ("Each command in the box shows an excerpt of this case's output where its reporter posted it, otherwise "
            "what a healthy cluster shows, labelled as such.") in text
    assert "quoted from the public case it comes from" not in text


def test_06d_intro_says_which_chapter_taught_what():
    text = _flat(_cells(NB06D)["c000"])
    assert "Chapter 06b taught you to read what nccl-tests and NCCL print, and 06c the RoCE fabric." in text
    assert "Chapters 06b and 06c taught you to read" not in text
    # 06c is the RoCE chapter; 06b the one that reads nccl-tests and NCCL's log
    assert "RoCE" in _cells(NB06C)["da64fe40"].splitlines()[0]
    assert "read its output and NCCL's log" in _cells("06b_nccl_in_practice.ipynb")[
        next(iter(_cells("06b_nccl_in_practice.ipynb")))].splitlines()[0]


def test_06d_gdr_limit_names_the_2_29_default_and_links_the_path_names():
    # NCCL's default GDR limit: PXB up to 2.28, P2C from 2.29 (runbook.toml [sources.nccl-src]); the 2.29 distance
    # line therefore ends in '> 6' (the gdr_distance card)
    src = RUNBOOK["sources"]["nccl-src"]["title"]
    assert "the default GDR limit (PXB up to 2.28; from 2.29 P2C" in src and "P2C 6" in src
    assert "(distance 9 > 6)' in 2.29" in RUNBOOK["signatures"]["gdr_distance"]["broken"]
    text = _flat(_cells(NB06D)["c009"])
    assert ("By default the limit is GPU and NIC under the same PCIe switches (`PXB`, a path name of "
            "`nvidia-smi topo -m`: [glossary](../docs/glossary.md#p2p)); from NCCL 2.29 it is `P2C`, one step further: "
            "a NIC reached through the GPU's link to a Grace CPU (section 10).") in text
    assert text.index("glossary.md#p2p") < text.index("`SYS`")  # SYS and PHB come after the link
    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    row = next(ln for ln in glossary.splitlines() if '<a id="p2p"></a>' in ln)
    assert all(f"({w})" in row for w in ("PXB", "PHB", "SYS"))


def test_06d_read_policy_row_is_one_idea_and_the_policy_is_told_under_the_table():
    text = _cells(NB06D)["c009"]
    row = next(ln for ln in text.splitlines() if ln.startswith("| `[receive]` lines end in"))
    assert row.endswith("| GDR works for receives; sends follow NCCL's read policy (section 10), not a missing "
                        "module |")
    assert "nvcourse ncclog" not in row and "Ampere" not in row
    # the policy itself moved to the reference section (walkthrough Y), where the row sends the reader
    ref = _cells(NB06D)["c06dref"]
    assert "| none ends in `/GDRDMA` | none |" in text
    assert "**Sends without `/GDRDMA`** are NCCL's read policy, `NCCL_NET_GDR_READ`, on by default from" in ref


def test_06d_every_check_names_its_source():
    from nvcourse.chapters import ch06d_runbook as ch

    for layer in ch.LAYERS:
        if layer == "cloud":
            continue
        cards = ch.check_cards_html(layer)
        assert "seen here" not in cards, layer
        names = re.findall(r'target="_blank">([^<]+)</a>', cards)
        assert len(names) == len(ch.signatures(layer)) and all(names), layer
    names = re.findall(r'target="_blank">([^<]+)</a>', ch.check_cards_html("gpu_nic"))
    assert names == ["nccl#1676", "nccl#1151"]


def test_06d_reads_no_longer_than_after_its_density_pass():
    row = reading_time.measure_chapter(ROOT / "notebooks" / NB06D)
    assert row.words < 3921 and row.reading_min <= 43


# ------------------------------------------------------------------------------------------------------------ 04b
def test_04b_nvlstree_cap_names_its_sizes_and_the_published_run():
    small, big = (predict("allreduce", "dgx-h100", 8, s * GiB, nodes=2, algo="nvlstree").algbw_GBps for s in (1, 16))
    assert predict("allreduce", "dgx-h100", 8, GiB, nodes=2).algo == "nvlstree"  # the dashboard's 1 GiB pick
    run = [p for p in sweeps.points("all") if p.sweep == "nccl-tests-309-h100-2node-ib-allreduce"]
    top = max(run, key=lambda p: p.bytes)
    assert top.bytes == 16 * GiB
    text = _flat(_cells(NB04B)["b4c06a12"])  # §8's constants, in reference §12
    assert (f"sets the model's algbw: {small:.0f} GB/s at 1 GiB (fill included), {big:.0f} GB/s at "
            f"16 GiB, where the published InfiniBand run reaches {top.bytes / top.time_s / 1e9:.0f}.") in text
    assert "algbw: 246 GB/s, and" not in text


def test_04b_tree_formula_defines_g_and_k_before_it():
    cell = _cells(NB04B)["b4c06a02"]
    assert cell.index("on $k$ nodes of $g$ GPUs each:") < cell.index(r"t_\text{tree AR}")


def test_04b_section_1_says_once_what_n_and_s_count():
    text = _flat(_cells(NB04B)["c002"])
    assert "Here $n$ is chapter 04's $p$; chapters 02, 04, 05 and 06 write bytes as $n$." in text
    # said right after the sentence that defines n (GPUs) and S (bytes) by using them
    assert text.index("a collective on $n$ GPUs and a buffer of **S** bytes") < text.index("Here $n$ is chapter 04's")
    assert "careful:" not in text


def test_04b_worked_example_shows_only_the_two_rings_before_nvls_is_introduced():
    text = _cells(NB04B)["e2115298"]
    assert "| size | ring, LL | ring, Simple |\n|---|---|---|\n" in text
    assert "NVLS" not in text and "fastest pair with Simple" not in text


@pytest.mark.parametrize("system", ["dgx-h100", "dgx-b200", "gb200-nvl72"])
@pytest.mark.parametrize("op", ["allreduce", "allgather", "reducescatter"])
def test_04b_readout_says_what_each_symmetric_kernel_is(system, op):
    from nvcourse.chapters.ch04b_predicting import _symmetric_text, kernel_words

    c = configure(system, 8)
    for k in symmetric.kernels(op, 2**20, c):
        words = kernel_words(k.name)
        assert ("one-shot" in words) == ("AGxLL" in k.name) and ("two-shot" in words) == ("RSxLD" in k.name)
        assert ("multicast" in words) == ("MC" in k.name)
    line = _symmetric_text(op, system, 8, 1, "device")
    for size in (8, GiB):
        name = predict(op, system, 8, size, registered=True).kernel
        assert f"({kernel_words(name)})" in line
    assert "`MC` in their names" in _cells(NB04B)["b4c06a12"]
    assert "named in the readout" in _cells(NB04B)["b4c06a06"]


def test_04b_symmetric_reference_is_one_idea_a_paragraph():
    cell = _cells(NB04B)["b4c06a12"]
    for joint in ("few synchronisations.\n\nNCCL runs them when both buffers are registered",
                  "the classic path.\n\nThe kernels:",
                  "algorithm and protocol.\n\nSwitching the `buffers` menu",
                  "below both estimates.\n\nNVIDIA's NCCL 2.27 announcement"):
        assert joint in cell, joint


def test_04b_nvl72_racks_are_a_little_slower_than_one_rack_at_1_gib():
    # Before NVLSTree was charged its pipeline's fill, 2-16 racks came out faster than one, a model artefact.
    nodes = [1, 2, 4, 8, 16, 64, 256]  # the dashboard's options
    one = predict("allreduce", "gb200-nvl72", 72, GiB)
    assert one.algo == "nvls"  # its fill is in its time (pipeline.py); NCCL's estimate has its table's bandwidth
    for k in nodes[1:]:
        p = predict("allreduce", "gb200-nvl72", 72, GiB, nodes=k)
        assert p.algo == "nvlstree"
        assert p.time_s > p.candidates_estimate_s["nvlstree/Simple"]  # NVLSTree pays its fill too
        assert one.time_s < p.time_s < 1.2 * one.time_s, k  # "a little slower"
        # (no claim on NCCL's estimates: one rack's has NCCL's table bandwidth, the racks' the model's own)
    text = _flat(_cells(NB04B)["c011"])
    assert ("then 2 to 256 nodes: a little slower at 1 GiB than one rack (both pay their pipeline's fill, "
            "section 10).") in text
    # the pick is NCCL's (the fill is in the time only): no size where the model picks other than NCCL
    assert ("The model picks as NCCL's formulas do, with NCCL's own estimate of each pair, then adds to the time what "
            "those formulas leave out: the time the NVLS pipeline takes to fill on one node, NVLSTree's across "
            "nodes") in prose(NB04B)
    for k in nodes[1:]:
        for size in (2**20, 16 * 2**20, GiB):
            p = predict("allreduce", "dgx-h100", 8, size, nodes=k)
            best = min(p.candidates_estimate_s, key=p.candidates_estimate_s.get)
            assert f"{p.algo}/{p.proto}" == best, (k, size)


def test_04b_small_all_to_all_across_nodes_costs_two_network_alphas_at_any_rank_count():
    # NCCL's point-to-point across nodes: the receiver's go-ahead (clear-to-send) crosses first, then the data
    alpha_net = 2 * tuning.hw_latency_us("net", "ring", "Simple")
    for sid in catalog.systems():
        s = catalog.get_system(sid)
        for g in range(1, max(s.gpus_per_host, s.gpus_per_domain) + 1):
            for k in (2, 4, 8, 16, 64, 256):
                assert predict("alltoall", sid, g, 8, nodes=k).time_s * 1e6 == pytest.approx(alpha_net, abs=0.01)
    # walkthrough X: launched from one process, the host's per-call floor (per GPU it drives) can set the time instead
    floor = {g: predict("alltoall", "dgx-h100", g, 8, nodes=2, launch="single-process").time_s * 1e6 for g in (2, 8)}
    assert floor[2] == pytest.approx(alpha_net, abs=0.01) and floor[8] > alpha_net + 1
    text = _flat(_cells(NB04B)["c011"])
    assert ("And `alltoall` across nodes: 8 B costs two network α (go-ahead, then data) at any GPU or node count (with "
            "`launch` = `single-process` the host's floor can set it instead); real ones grow with the ranks "
            "(section 6).") in text
    assert "many simultaneous small messages cost more than one α each" in prose(NB04B)


def test_04b_core_and_reading_time_did_not_grow():
    row = reading_time.measure_chapter(ROOT / "notebooks" / NB04B)
    assert row.core_min <= 21 and row.reading_min <= 47


# ------------------------------------------------------------------------------------------------------------ 06c
def _qp_states():
    from nvcourse.chapters.ch06c_multinode_lab import ecmp_qp_dashboard

    controls = ecmp_qp_dashboard().controls
    return controls["connections"].options, controls["links"].options, controls["qps"].options


def test_06c_more_qps_shrink_the_excess_a_little_faster_than_one_over_root_q():
    import matplotlib.pyplot as plt

    conns, links, qps = _qp_states()
    plt.close("all")
    for m in conns:
        for k in links:
            if m < k:
                continue
            for q in qps:
                if 4 * q not in qps or m * 4 * q > 1024:
                    continue
                ratio = (ecmp_qp.expected_slowdown(m, k, 4 * q) - 1) / (ecmp_qp.expected_slowdown(m, k, q) - 1)
                assert 0.4 < ratio < 0.5, (m, k, q)  # 1/√4 = 0.5: "a little faster", "under half"
    one, sixteen = (ecmp_qp.expected_slowdown(32, 32, q) for q in (1, 16))
    assert f"{sixteen:.2f}" == "1.55" and f"{1 + (one - 1) / 4:.2f}" == "1.63"  # 1/√q alone would leave 1.63×
    text = _flat(_cells(NB06C)["12947629"])
    assert ("the hot link's excess shrinks a little faster than 1/√*q* (four times the QPs leave under half of it), "
            "so 16 QPs still leave about 1.55×.") in text


def test_06c_readout_gives_one_slowdown_at_one_qp():
    import matplotlib.pyplot as plt

    from nvcourse.chapters.ch06c_multinode_lab import ecmp_qp_dashboard

    box = ecmp_qp_dashboard()
    box.controls["qps"].value = 1
    one = box.readout.value
    box.controls["qps"].value = 16
    many = box.readout.value
    plt.close("all")
    assert "with 1 QP (simulated" in one and "with 1 (simulated" not in one
    assert one.count("×</b>") == 1
    assert "with 1 QP, <b>" in many and "with 16 (simulated" in many


def test_06c_slowdown_formula_says_why():
    text = _flat(_cells(NB06C)["bad0eb36"])
    assert ("No step is shorter than one connection's worth, which is all a NIC can send: hence max(1, ·), for the "
            "busiest uplink and for a balanced one (*m/k*).") in text
    assert text.index("hence max(1, ·)") < text.index("E[max(1, *M/q*)] / max(1, *m/k*)")


def test_06c_defines_ncclx_before_the_table_that_uses_it():
    facts = _data.load("ethernet_ai")
    assert any("NCCLX" in f["fact"] for f in facts["facts"] if f["topic"] == "Entropy fixes")
    cells = _cells(NB06C)
    assert "(**NCCLX**, in the table below, is Meta's fork of NCCL)" in _flat(cells["ab0d5c40"])
    order = list(json.loads((ROOT / "notebooks" / NB06C).read_text(encoding="utf-8"))["cells"])
    ids = [c["id"] for c in order]
    assert ids.index("ab0d5c40") < ids.index("07b7263b")  # the prose, then the facts table
    first = next(i for i, c in enumerate(order) if "NCCLX" in "".join(c["source"]))
    assert order[first]["id"] == "ab0d5c40"


def test_06c_reading_time_unchanged():
    assert reading_time.measure_chapter(ROOT / "notebooks" / NB06C).reading_min <= 35
