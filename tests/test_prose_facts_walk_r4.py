"""Chapters 07b, 07c and 09 after a fresh learner's walkthrough (R4): each sentence it found to contradict a
dashboard or another chapter now says when it holds, and the capstone's fabric gate paces a per-rail DP ring by
its NIC, as chapter 07b's roofline does.

Markdown cannot compute: the sentence must appear in the chapter as written (line breaks read as spaces).
"""

import pytest
from test_prose_facts_core import prose

from nvcourse import capstone
from nvcourse import capstone_gates as cg

CAP = "09_capstone_design_a_cluster.ipynb"


def _job_1024() -> capstone.Report:
    targets = capstone.Targets(model="llama3-70b", training_tokens=2e12, max_days=30, max_usd=3e6, min_goodput=0.90,
                               min_efficiency=0.70, max_MW=3.0)
    return capstone.evaluate(capstone.Design("dgx-h100", 1024, tp=8, pp=1), targets)


# ------------------------------------------------------------------------------------------------------------ 09
def test_09_an_800G_nic_halves_the_per_rail_dp_allreduce_that_it_paces():
    rep = _job_1024()
    assert rep.step.placements["dp"].per_node == 1  # TP 8 fills the node: one DP rank per node, one ring per rail
    ndr, xdr = (cg.fabric_gate(rep, cg.FabricChoice(nic=nic)) for nic in ("ib-ndr", "ib-xdr"))
    assert ndr.algorithm == xdr.algorithm == "ring"
    # the reference fabric gives the step model's own NIC-bound all-reduce, and twice the port rate halves it
    assert ndr.dp_comm_s == pytest.approx(rep.step.dp_comm_s)
    assert xdr.dp_comm_s == pytest.approx(ndr.dp_comm_s / 2, rel=0.02)
    # the bus bandwidth is the NIC's, not NVLink's
    assert xdr.busbw_GBps == pytest.approx(2 * ndr.busbw_GBps, rel=0.02) and ndr.busbw_GBps < 60
    text = prose(CAP)
    assert (f"On the reference fabric the 800 Gb/s NIC halves the all-reduce ({ndr.dp_comm_s:.2f} s to "
            f"{xdr.dp_comm_s:.2f} s), since each per-rail ring is paced by its NIC.") in text
    assert "adds nothing" not in text
    assert "its ring joins the same-rail GPU of every other node, through its own NIC, never over NVLink" in text


def test_09_sharp_tops_100_percent_because_it_halves_the_nic_bytes():
    rep = _job_1024()
    sharp, ref = (cg.fabric_gate(rep, cg.FabricChoice(routing="dmodk", sharp=s)) for s in (True, False))
    assert sharp.algorithm == "sharp" and sharp.ratio > 1.9
    assert sharp.dp_comm_s == pytest.approx(rep.step.dp_comm_s / 2, rel=0.02)
    assert "SHARP tops 100 % because the buffer crosses each NIC once each way, half a ring's bytes." in prose(CAP)


def test_09_defines_the_efficiency_gate_and_why_mfu_is_lower():
    rep = _job_1024()
    assert rep.step.efficiency == pytest.approx(rep.step.mfu / rep.step.compute_efficiency)
    assert 0 < rep.step.compute_efficiency < 1 and rep.step.mfu < rep.step.efficiency
    text = prose(CAP)
    assert ("The *efficiency* gate is chapter 07's scaling efficiency: the step's time if the GPUs never waited (no "
            "communication, no pipeline bubble) divided by its real time.") in text
    assert text.index("The *efficiency* gate is") < text.index("## 3. Survey the options")


def test_09_links_ets_vl_arbitration_and_dcqcn_where_first_used():
    text = prose(CAP)
    for anchor in ("#ets", "#vl-sl", "#pfc-ecn"):
        assert f"(../docs/glossary.md{anchor})" in text, anchor
    assert text.index("[ETS](../docs/glossary.md#ets)") < text.index("A 50 % ETS share")


def test_09_bucket_timeline_range_names_its_bucket_sizes():
    from nvcourse import overlap

    sc = overlap.dp_scenario("llama3-70b", "dgx-h100", 128, tp=8)
    exposed = {mib: sc.timeline(mib * 2**20).exposed_s for mib in (4, 8, 16, 25, 512)}
    assert round(exposed[512], 2) == 0.24 and round(exposed[25], 2) == 0.45
    assert exposed[4] > exposed[8] > exposed[16] > exposed[25]
    assert ("puts the same case at 0.24 s (512 MiB buckets) to 0.45 s (DDP's 25 MiB), more with smaller buckets, all "
            "with no SMs taken.") in prose(CAP)
