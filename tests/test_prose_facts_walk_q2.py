"""Chapters 07b, 07c, 09 and 10 after a fresh learner's walkthrough (Q2): each sentence it found to disagree with
another chapter or with its own dashboard, each number a rule did not produce, and each word met before its
definition, now holds in every state the sentence names and is defined where it is first used.

Markdown cannot compute: the sentence must appear in the chapter as written (line breaks read as spaces).
"""

import pytest
from test_ch09_capstone_prose import job_1024, said
from test_prose_facts_core import prose

from nvcourse import capstone_gates as cg
from nvcourse import overlap
from nvcourse.chapters import ch07b_overlap as ch07b
from nvcourse.observability import counters

NB09 = "09_capstone_design_a_cluster.ipynb"

# ---------------------------------------------------------------- 09 §8.1: the fabric


def test_09_fabric_step_exposed_time_is_the_ideal_overlap_and_07b_puts_the_case_higher():
    # 09's "0.22 s exposed" is max(0, all-reduce − backward); 07b's bucket timeline of the same case (Llama 3 70B,
    # TP 8 + DDP, 128 DGX H100 nodes, no SMs taken) gives 0.24 s at its best bucket and 0.45 s at DDP's 25 MiB
    r = cg.fabric_gate(job_1024(), cg.FabricChoice(nic="ib-ndr"))
    window = r.dp_comm_s - r.dp_exposed_s
    assert (f"{r.dp_comm_s:.3f}", f"{window:.3f}", f"{r.dp_exposed_s:.2f}") == ("0.744", "0.527", "0.22")
    sc = overlap.dp_scenario("llama3-70b", "dgx-h100", 128, tp=8)
    assert sc.backward_s == pytest.approx(window, rel=1e-3)  # the same backward in both chapters
    exposed = {m: sc.timeline(m * 2**20).exposed_s for m in ch07b.BUCKET_CHOICES_MIB}
    assert f"{min(exposed.values()):.2f}" == "0.24" and f"{exposed[25]:.2f}" == "0.45"
    assert min(exposed.values()) > r.dp_exposed_s  # a lower bound indeed
    assert ("The fabric step row also charges the best case of that hiding: its exposed time is all-reduce − "
            "backward (0.744 s − 0.527 s ≈ 0.22 s for the 1,024-GPU job), a lower bound. Chapter 07b's bucket "
            "timeline, which counts the last bucket and each bucket's latency, puts the same case at 0.24 s (512 MiB "
            "buckets) to 0.45 s (DDP's 25 MiB), more with smaller buckets, all with no SMs taken.") in said("g9-03")


def test_09_faster_nic_halves_the_per_rail_dp_ring_on_the_reference_fabric():
    # TP 8 fills the node, so each DP group is one GPU per node: one ring per rail, paced by its NIC (07b §2)
    big = job_1024()
    ndr, xdr = (cg.fabric_gate(big, cg.FabricChoice(nic=n)) for n in ("ib-ndr", "ib-xdr"))
    assert xdr.reference_busbw_GBps == pytest.approx(2 * ndr.reference_busbw_GBps, rel=0.02)
    assert xdr.dp_comm_s == pytest.approx(ndr.dp_comm_s / 2, rel=0.02)
    assert ("On the reference fabric the 800 Gb/s NIC halves the all-reduce (0.74 s to 0.37 s), since each per-rail "
            "ring is paced by its NIC.") in said("n9-fabric")


def test_09_busbw_warn_level_is_stated_as_the_rule_that_produces_it():
    m = cg.monitoring_requirements(cg.fabric_gate(job_1024(), cg.FabricChoice(nic="ib-ndr")))
    th = m.thresholds
    assert th.busbw_ratio_warn == pytest.approx(1 - counters.alert_policy().warn_margin * th.tolerable_loss)
    assert counters.alert_policy().warn_margin == 0.5
    assert th.busbw_ratio_critical == pytest.approx(1 - th.tolerable_loss)
    assert ("busbw warns at half the tolerable loss, 1 − ½f*, and is critical at 1 − f*;") in said("g9-08")


def test_09_symbols_and_names_carried_from_earlier_chapters_are_glossed_where_used():
    text = prose(NB09)
    assert "$b\\,s\\,h\\cdot 2$ bytes inside a node, for $b$ sequences of $s$ tokens and hidden size $h$;" in text
    assert "to measure $R$, the restart time." in text
    assert "with δ the checkpoint write time and M the mean time between interruptions" in text
    assert "(\"tp-first\" in it: each TP group's ranks sit inside one node, chapter 07)" in text
    assert "HPC-X, NVIDIA's bundle of HPC communication libraries" in text



def test_09_fabric_configuration_detail_sits_behind_toggles_and_the_advice_stays_in_view():
    import re

    text = said("g9-03") + " " + said("n9-fabric")  # the two toggles follow the dashboard (walk V)
    in_view = re.sub(r"<details>.*?</details>", "", text)
    assert "NCCL does not use it by default: count on SHARP only once a test job's log shows it in use." in in_view
    assert "Why the RoCE row is a floor: it hashes **one flow per rail and ring edge**, and real jobs open more." \
        in in_view
    for moved in ("Aggregation Manager (`sharp_am`)", "`NCCL_COLLNET_ENABLE=1`", "Chapter 06c's QP model",
                  "hashed on extra header fields (E-ECMP)"):
        assert moved in text and moved not in in_view, moved
    assert "<summary>What SHARP needs configured</summary>" in text
    assert "<summary>How many flows NCCL opens, and what more flows buy</summary>" in text

# ---------------------------------------------------------------- 07b: the bucket hint, words, §6's short answer
NB07B = "07b_overlapping_communication.ipynb"


def test_07b_bucket_hint_says_it_holds_with_no_sms_taken():
    # the learner's settings: the hint names a size from which buckets keep up, yet the readout (SMs taken) waits
    # at a smaller size; the hint is computed with no SMs taken and now says so
    for model, system, nodes, tp in (("llama3-70b", "gb200-nvl72", 64, 8), ("llama3-8b", "dgx-h100", 64, 1)):
        sc = overlap.dp_scenario(model, system, nodes, tp=tp)
        hint = ch07b.bucket_hint(sc)
        assert "keep up with the backward when no SMs are taken" in hint
        first = ch07b.smallest_keeping_up(sc)
        assert sc.timeline(first * 2**20, 0.0).comm_s <= sc.backward_s
    assert ch07b.bucket_hint(overlap.dp_scenario("llama3-70b", "dgx-h100", 64, tp=8)) == (
        "Even with no SMs taken, no offered bucket size keeps up with the backward.")


def test_07b_roofline_dense_and_async_tp_are_explained_where_first_used():
    text = prose(NB07B)
    assert ("communication rooflines (bounds that compare the compute time with the transfer time: $T \\ge C/W$ "
            "and friends)") in text
    said = "An H100 at 55 % of its [dense](../docs/glossary.md#dense) peak (no sparsity speed-up)"
    assert text.index(said) == text.index("dense") - len("An H100 at 55 % of its [")
    assert "PyTorch's asynchronous TP (async-TP)" in text


def test_07b_section_6_short_answer_matches_the_threshold_it_summarises():
    from nvcourse import rooflines

    C, W = rooflines.gpu_rates("dgx-h100", link="nvlink", efficiency=0.55)
    r = overlap.cp_ring_attention(seq=8192, cp=8, hidden=8192, kv_hidden=1024, flops_per_s=C, link_Bps=W)
    assert 100 <= r["threshold_tokens_per_gpu"] < 1000  # "a few hundred"
    assert ("hides its sends once each GPU holds enough of the sequence's tokens: a few hundred for Llama 3 70B "
            "over NVLink.") in prose(NB07B)


# ---------------------------------------------------------------- 07c: the MoE key point, rail and RoCE linked
NB07C = "07c_communication_for_inference.ipynb"


def test_07c_key_point_states_the_moe_byte_cut_section_7_shows():
    from nvcourse.chapters import ch07c_inference as ch07c

    rows = {r["routing"]: r for r in ch07c.moe_dispatch_rows() if r["system"] == "dgx-h100"}
    cut = rows["every copy"]["network_bytes"] / rows["dedup + ≤ 4 nodes"]["network_bytes"]
    assert round(cut) == 2 and f"{cut:.1f}" == "2.2"  # "about 2×" here, "2.2×" in §7
    text = prose(NB07C)
    assert "node-limited routing caps the nodes: about 2× fewer bytes than the naive count" in text
    assert "several-fold fewer bytes" not in text and "2.2× fewer bytes" in text


def test_07c_links_rail_and_roce_at_first_use():
    text = prose(NB07C)
    for word, anchor in (("rail", "rail"), ("RoCE", "roce")):
        first = text.index(word)
        assert text[first - 1:first + len(word) + 1] == f"[{word}]", word
        assert text[first + len(word) + 1:].startswith(f"(../docs/glossary.md#{anchor})"), word



def test_07c_serving_table_shows_the_rows_its_question_asks_about_and_keeps_the_rest_behind_toggles():
    import html
    import re

    from nvcourse.chapters import ch07c_serving

    page = ch07c_serving.serving_html()
    in_view = re.sub(r"<details>.*?</details>", "", page, flags=re.S)
    rows = ch07c_serving.serving_rows()
    assert {r["key"] for r in rows} >= set(ch07c_serving.IN_VIEW) and len(rows) == 7
    for r in rows:  # every short result is on the page; only the three the predict reads are in view
        assert html.escape(r["short"]) in page
        assert (html.escape(r["short"]) in in_view) == (r["key"] in ("mla", "paged", "speculative")), r["key"]
    text = prose(NB07C)
    assert "MLA's cache is about a fifth of the GQA one per token" in text  # read off a row in view
    # the lines under the table open the other techniques' results and the arithmetic with its sources
    assert "The other four wait under the table" in text
    assert "Each result is sourced in the lines under the table." in text


def test_07c_moe_rack_paragraph_follows_the_techniques_it_uses():
    # "wide expert parallelism" and "data-parallel attention" are §8's list items; the paragraph that spreads a
    # 671B model over many nodes now closes §8 instead of preceding it
    import json

    from test_prose_facts_core import ROOT

    cells = json.loads((ROOT / "notebooks" / NB07C).read_text(encoding="utf-8"))["cells"]
    ids = [c["id"] for c in cells]
    assert ids.index("c020a") < ids.index("c020c") < ids.index("c020") < ids.index("c021")
    rack = "".join(cells[ids.index("c020")]["source"])
    assert rack.startswith("**Why spread a model that fits one node?**") and "## 9. The dashboard" in rack


def test_07c_kv_transfer_measurement_sits_in_the_reference_section_and_section_6_points_there():
    import json

    from test_prose_facts_core import ROOT

    from nvcourse import inference

    cells = json.loads((ROOT / "notebooks" / NB07C).read_text(encoding="utf-8"))["cells"]
    ids = [c["id"] for c in cells]
    src = {c["id"]: "".join(c["source"]) for c in cells}
    assert ids.index("c07cref") < ids.index("c07cmoon") < ids.index("c015") < ids.index("c07cmoon2") < ids.index(
        "c022")
    assert "Mooncake's vLLM connector moved a 32,768-token" in src["c07cmoon"]
    assert "the KV transfer model against\nMooncake's measurement (§6)" in src["c07cref"]
    assert "(§10\ncompares this model with a published measurement.)" in src["c016"]
    m = inference.data()["kv_transfer"]["mooncake-qwen3-8b-32k"]
    x = inference.kv_transfer_time(m["model"], m["tokens"], "dgx-h100", path="rdma", nic=m["nic_link"],
                                   nics=m["nics"])
    assert round(x["time_s"] * 1e3 / m["transfer_ms"] - 1, 2) == -0.19  # "about a fifth too fast"
    assert "The model is about a fifth too fast" in src["c07cmoon2"] and "71 % of line rate" in src["c07cmoon2"]

# ---------------------------------------------------------------- 10 §3: one idea per paragraph


def test_10_fp32_accumulation_paragraph_says_one_thing_each():
    text = prose("10_other_interconnects_and_numerics.ipynb")
    assert ("Since version 2.27, NCCL has two ways to add everything in FP32 and round once. For an all-reduce, both "
            "work only inside one NVLink domain:") in text
    assert ("So across nodes an all-reduce still rounds at every hop, whatever NCCL's version: its inter-node part "
            "runs a ring or a tree, and NCCL's cross-node symmetric kernels") in text  # one sentence (walk V)


def test_07b_dashboard_default_sm_share_is_said_once_where_the_dashboard_starts():
    import json

    from test_prose_facts_core import ROOT

    cells = {c["id"]: "".join(c["source"]) for c in json.loads(
        (ROOT / "notebooks" / NB07B).read_text(encoding="utf-8"))["cells"]}
    c = ch07b.overlap_dashboard().controls
    assert c["sm_fraction"].value == 0.15
    s8 = cells["c016"][cells["c016"].index("## 8."):]
    said8 = s8[:s8.index("<details>")]
    assert "It starts with 15 % of the SMs taken (§3), so its exposed times include the SM slowdown" in said8
    assert said8.count("15 %") == 1
    assert "These thresholds are at the dense peak: at 55 % of it the thresholds are 0.55× as large." in cells["c016"]
