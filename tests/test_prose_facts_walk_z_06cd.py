"""Guards for the last fixes fresh-learner walkthrough Y asked for in chapters 06c and 06d: 06c's Check-yourself 3
says why 16 QPs gain less at 64 on 16 than at 32 on 32 (the same share of a smaller excess), the lab paragraph is
split, the lab figure's legend names the hierarchical model line, Quantum, Spectrum-X and Ultra Ethernet are glossed,
bus bandwidth links the glossary and RoCE v2's UDP/IP wrap is said to make it routable; 06d §10 says in one sentence
what NCCL 2.29 changes for a NIC behind a Grace CPU, and §7 points at the card that holds the node-pair table.
Markdown line breaks read as spaces."""

import json
import re
from functools import cache

import matplotlib.pyplot as plt
import pytest
from test_prose_facts_core import ROOT

from nvcourse import _data
from nvcourse.chapters import ch06c_multinode_lab as ch06c
from nvcourse.chapters import ch06d_runbook as ch06d
from nvcourse.cluster import record
from nvcourse.devtools import reading_time
from nvcourse.fabric import ecmp_qp as e

LAB, RUNBOOK = "06c_multinode_lab.ipynb", "06d_bringup_and_fault_runbook.ipynb"


@cache
def _raw(notebook: str) -> dict[str, str]:
    nb = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    return {c["id"]: "".join(c["source"]) for c in nb["cells"]}


def cells(notebook: str) -> dict[str, str]:
    return {cid: re.sub(r"\s+", " ", src) for cid, src in _raw(notebook).items()}


# ------------------------------------------------------------------------------------------------------------ 06c
def test_06c_check_yourself_3_less_gain_because_the_excess_starts_smaller_not_because_it_is_small():
    s = {}
    for c, k in [(64, 16), (32, 32)]:
        s1, s16 = e.expected_slowdown(c, k, 1), e.expected_slowdown(c, k, 16)
        s[c, k] = (s1, s16)
        # "Both times 16 QPs leave under a quarter of the hot link's excess, as §2's rule says"
        assert 0 < (s16 - 1) / (s1 - 1) < 0.25, (c, k)
        # §2's rule: four times the QPs leave under half of the excess (1 -> 4 and 4 -> 16)
        s4 = e.expected_slowdown(c, k, 4)
        assert (s4 - 1) / (s1 - 1) < 0.5 and (s16 - 1) / (s4 - 1) < 0.5, (c, k)
    (a1, a16), (b1, b16) = s[64, 16], s[32, 32]
    # "at 64 on 16 the busiest uplink starts at about twice its due load (8 connections where 4 are due)"
    due = 64 / 16
    assert due == 4 and round(a1) == 2 and round(a1 * due) == 8
    # the excess is not small next to the load: about as large as the balanced load itself
    assert a1 - 1 > 0.9
    # "not 3–4 times it as at 32 on 32" (one connection due per uplink)
    assert 32 / 32 == 1 and 3 <= b1 <= 4
    # "Less": the gain from 1 to 16 QPs is smaller at 64 on 16, in step time and as a factor
    assert a1 - a16 < b1 - b16 and a1 / a16 < b1 / b16
    text = cells(LAB)["c182191a"]
    assert ("<details><summary>Answer</summary>Less. Both times 16 QPs leave under a quarter of the hot link's "
            "excess, as §2's rule says, but at 64 on 16 the busiest uplink starts at about twice its due load "
            "(8 connections where 4 are due), not 3–4 times it as at 32 on 32 (check both on the dashboard).") in text
    assert "small next to its load" not in text and "little to shrink" not in text
    assert "four times the QPs leave under half of it" in cells(LAB)["12947629"]


def test_06c_lab_paragraph_is_split_where_the_dgx_comparison_starts():
    paragraphs = [p for p in _raw(LAB)["2aed01e9"].split("\n\n") if p.strip()]
    assert len(paragraphs) == 3
    first, second, third = (" ".join(p.split()) for p in paragraphs)
    assert first.startswith("In the recorded run the flat ring stays within 3–11 % of the model")
    assert second.startswith("Whether the hierarchical *total* wins depends on the last two columns")
    assert second.endswith("eating part, all or more of the time saved.")
    assert third.startswith("Hierarchical algorithms pay off reliably when the in-node path is much faster than the "
                            "NIC, as NVLink is on a DGX")
    assert third.endswith("A 4× slower emulated NIC widens the gap here too (recorded run):")
    # the paragraph that introduces the DGX line and the slower-NIC table sits right above the cell that prints them
    order = list(_raw(LAB))
    nxt = order[order.index("2aed01e9") + 1]
    assert "ch.nvlink_vs_nic(" in _raw(LAB)[nxt] and '"hier_slow_nic"' in _raw(LAB)[nxt]


def test_06c_lab_figure_legend_names_the_hierarchical_model_line():
    rec = record.load()
    rows = record.compare_hier(rec, "hier")
    fig = ch06c.lab_figure(rec)
    try:
        lines = {line.get_label(): list(line.get_ydata()) for line in fig.axes[0].get_lines()}
    finally:
        plt.close(fig)
    assert lines["hierarchical network phase, model"] == pytest.approx([r["hier_network_model_s"] for r in rows])
    assert not any(label.startswith("…") for label in lines)
    src = (ROOT / "nvcourse" / "chapters" / "ch06c_multinode_lab.py").read_text(encoding="utf-8")
    assert '_("… model")' not in src


def test_06c_glosses_quantum_spectrum_x_ultra_ethernet_and_links_bus_bandwidth():
    c = cells(LAB)
    assert ("NVIDIA's InfiniBand switches (Quantum) add **adaptive routing**, choosing among allowed ports per packet "
            "by queue depth.") in c["ab0d5c40"]
    assert "(NVIDIA's Spectrum-X; the Ultra Ethernet specification) spreads *packets*" in c["12947629"]
    sources = _data.load("ethernet_ai")["sources"]
    assert "NVIDIA Spectrum-X" in sources["spectrum-x"]["title"]
    assert any("Ultra Ethernet Consortium" in s["title"] and "Specification" in s["title"] for s in sources.values())
    assert "**Predict:** what [bus bandwidth](../docs/glossary.md#busbw) does each job get alone" in c["0ca6f791"]
    assert '<a id="busbw"></a>**busbw (bus bandwidth)**' in (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")


def test_06c_roce_v2_is_routable_across_ip_subnets():
    text = cells(LAB)["a10209e9"]
    assert "and wraps it in UDP/IP so it is routable across IP subnets." in text
    assert "ordinary Ethernet switches" not in text
    # 06d says the same of RoCE v2 (v1 is plain Ethernet, one segment)
    assert "Only a RoCE v2 entry (RoCE inside UDP/IP, so routable; v1 is plain Ethernet" in cells(RUNBOOK)["c011"]


def test_06c_reading_time_did_not_grow():
    row = reading_time.measure_chapter(ROOT / "notebooks" / LAB)
    assert row.reading_min <= 35 and row.words <= 2850


# ------------------------------------------------------------------------------------------------------------ 06d
def test_06d_section10_says_what_nccl_2_29_changes_for_a_nic_behind_grace():
    src = _data.load("runbook")["sources"]["nccl-src"]["title"]
    # the cited source: NCCL_NET_GDR_C2C on by default from 2.27; the default limit PXB up to 2.28, P2C from 2.29
    # while NCCL_NET_GDR_C2C is 1
    assert "added in 2.26 off by default, on by default from 2.27" in src
    assert "the default GDR limit (PXB up to 2.28; from 2.29 P2C while NCCL_NET_GDR_C2C is 1, its default" in src
    ref = cells(RUNBOOK)["c06dref"]
    assert ("Up to 2.28 the default limit is `PXB`, and a NIC behind a Grace CPU ([`P2C`](../docs/glossary.md#p2c); "
            "Grace is NVIDIA's Arm CPU, joined to the GPU by its chip-to-chip link, NVLink-C2C) gets GDR with "
            "`NCCL_NET_GDR_C2C=1` from NCCL 2.26, by default from 2.27. NCCL 2.29 changes only the mechanism: the "
            "default limit becomes `P2C` while `NCCL_NET_GDR_C2C` is 1.") in ref
    assert "From 2.29 `P2C` is the default level." not in ref
    # §5 keeps its short form, which agrees: PXB by default, P2C from 2.29
    assert "from NCCL 2.29 it is `P2C`, one step further" in cells(RUNBOOK)["c009"]


def test_06d_section7_points_at_the_card_that_holds_the_node_pair_table():
    c = cells(RUNBOOK)
    assert ("Keep going until every slow pair is explained: in the slow-node card below, both pairs with node 644 "
            "reach ~49 GB/s, as does a pair without it (284 and 678), against ~87-88 GB/s elsewhere") in c["c013"]
    assert "cited table" not in c["c013"]
    order = list(c)
    card = order[order.index("c013") + 1]
    assert 'ch.checks_html("nccl")' in _raw(RUNBOOK)[card]
    html = ch06d.checks_html("nccl")
    assert "One slow node (or rail) drags every ring it is in" in html
    assert "~49 GB/s for both pairs with node 644" in html and "284-678" in html and "~87-88 GB/s" in html


def test_06d_reading_time_did_not_grow():
    row = reading_time.measure_chapter(ROOT / "notebooks" / RUNBOOK)
    assert row.words < 3920 and row.reading_min <= 42
