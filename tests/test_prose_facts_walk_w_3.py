"""Guards for walkthrough round W (06d, 07, 08): each sentence fixed there is computed from the model or the data and
checked against the text it stands in."""

import json
import re

from test_prose_facts_core import ROOT

from nvcourse import _data, reliability, training
from nvcourse.chapters import ch06d_runbook as ch06d
from nvcourse.chapters import ch07_training as ch07
from nvcourse.chapters import ch08_reliability as ch08
from nvcourse.collectives.plan import build_plan
from nvcourse.nccl.ncclog import read_text

NB06D = "06d_bringup_and_fault_runbook.ipynb"
NB07 = "07_training_at_scale.ipynb"
NB08 = "08_reliability_and_operations.ipynb"


def _nb(nb: str) -> list[dict]:
    return json.loads((ROOT / "notebooks" / nb).read_text(encoding="utf-8"))["cells"]


def _cells(nb: str) -> dict[str, str]:
    return {c["id"]: "".join(c["source"]) for c in _nb(nb) if c["cell_type"] == "markdown"}


def _flat(s: str) -> str:
    return " ".join(s.split())


def _plain(html: str) -> str:
    return _flat(re.sub(r"<[^>]+>", " ", html))


# ------------------------------------------------------------------------------------------------------------ 06d
def test_06d_drill_box_shows_this_case_or_a_labelled_healthy_cluster_for_every_step():
    d = ch06d.drill_data()
    text = _flat(_cells(NB06D)["c017"])
    assert ("Each command in the box shows an excerpt of this case's output where its reporter posted it, otherwise "
            "what a healthy cluster shows, labelled as such.") in text
    assert "otherwise a healthy cluster's" not in text
    kinds = set()
    for step, s in d["steps"].items():
        shown = _plain(ch06d.drill_step_html(step))
        if "output" in s and s["src"] == d["story_src"]:
            assert "Quoted from:" in shown, step
            kinds.add("case")
        else:  # a healthy excerpt or, with no published output, a healthy description: both say "healthy"
            assert "healthy" in shown and "Quoted from:" not in shown, step
            kinds.add("excerpt" if "output" in s else "description")
    assert kinds == {"case", "excerpt", "description"}  # why the sentence says "what a healthy cluster shows"


def test_06d_section5_read_policy_sentence_is_plain_and_true_of_the_reader():
    s5 = _flat(_cells(NB06D)["c06dref"])  # the read policy moved to §10, the reference section (walkthrough Y)
    assert ("`nvcourse ncclog` flags such sends as a problem: on Ampere or newer GPUs they mean "
            "`NCCL_NET_GDR_READ=0` is set.") in s5
    assert "lists the sends under what looks wrong" not in s5
    line = "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [{d}] via NET/IB/0{g}\n"
    log = read_text(line.format(d="receive", g="/GDRDMA") * 2 + line.format(d="send", g="") * 2)
    assert log.gdr is False and any("GDR" in p["problem"] for p in log.problems)
    assert "NCCL_NET_GDR_READ" in ch06d.LOOK_AT["gpu_nic"]


def test_06d_section5_keeps_the_worked_fault_folded():
    # walkthrough Y: the worked fault moved, folded, to §10; the order of the fixes (an objective) stays in §5
    s5, ref = _cells(NB06D)["c009"], _cells(NB06D)["c06dref"]
    assert "### A worked fault" not in s5 + ref and "<details><summary>A worked fault</summary>" not in s5
    folded = ref.split("<details><summary>A worked fault</summary>", 1)[1]
    body, _after = folded.split("</details>", 1)
    assert "(distance 7 > 4)" in body
    for said in ("**The order of the fixes matters.**", "raise the level last"):
        assert said in s5 and said not in ref, said
    assert s5.index("**The order of the fixes matters.**") < s5.index("**Reference:** section 10")


def test_06d_grace_c2c_version_story_agrees_in_text_card_and_sources():
    raw = _data.load("runbook")
    src = raw["sources"]["nccl-src"]["title"]
    assert "NCCL_NET_GDR_C2C (GPUDirect RDMA through the Grace CPU on C2C systems: added in 2.26 off by default, on " \
           "by default from 2.27)" in src
    assert "(or NCCL_NET_GDR_C2C=1 on 2.26)" in raw["signatures"]["gdr_distance"]["fix"]
    assert "from 2.27 NCCL_NET_GDR_C2C=1 turns it on by default" in raw["signatures"]["gdr_distance"]["nccl_tests"]
    ref = _flat(_cells(NB06D)["c06dref"])
    assert "NVLink-C2C) gets GDR with `NCCL_NET_GDR_C2C=1` from NCCL 2.26, by default from 2.27." in ref
    assert "allowed from NCCL 2.27" not in _flat("\n".join(_cells(NB06D).values()))


def test_06d_busbw_is_linked_to_the_glossary():
    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert '<a id="busbw"></a>' in glossary
    md = "\n".join(_cells(NB06D).values())
    first = re.search(r"\bbusbw\b", md)
    assert md[first.start() - 1:first.end() + len("](../docs/glossary.md#busbw)")] == \
        "[busbw](../docs/glossary.md#busbw)"


# ------------------------------------------------------------------------------------------------------------ 07
def test_07_tp_first_never_slower_on_dgx_and_ties_when_dp_is_one():
    eff = training.data()["defaults"]["compute_efficiency"]
    ratios: dict[bool, list[float]] = {True: [], False: []}
    for model in ("llama3-8b", "llama3-70b"):
        for tp in (1, 2, 4, 8, 16):
            for pp in (1, 2, 4):
                for gpus in (g for g in ch07.GPU_COUNTS if g >= tp * pp and g % (tp * pp) == 0 and g <= 256):
                    try:
                        a, b = (training.step_time(model, "dgx-h100", gpus, tp=tp, pp=pp, placement=pl,
                                                   compute_efficiency=eff, virtual_stages=1)
                                for pl in ("tp-first", "dp-first"))
                    except ValueError:
                        continue
                    ratios[gpus == tp * pp].append(a.total_s / b.total_s)
    assert ratios[True] and all(abs(r - 1) < 1e-9 for r in ratios[True])  # dp = 1: the two placements tie
    assert max(ratios[False]) <= 1 + 1e-9 and min(ratios[False]) < 1  # otherwise tp-first is ahead or level
    ref = _flat(_cells(NB07)["c016a"])
    assert "in the §7 dashboard tp-first is never slower than dp-first in any DGX H100 or NVL72 state" in ref
    assert "tp-first beats dp-first" not in ref


# ------------------------------------------------------------------------------------------------------------ 08
def test_08_failure_record_has_no_erratum_aside():
    r = reliability.failure_record()
    assert sum(n for _, _, n in r.causes) == r.unexpected_interruptions  # the counts are what the chapter adds up
    text = _flat(_cells(NB08)["c004"])
    assert "the table prints" not in text and "148/419" not in text
    assert '"faulty GPU" (148' in text


def test_08_second_table_sentence_says_what_its_columns_hold():
    html = ch08.signals_table_html()
    head = [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<th[^>]*>(.*?)</th>", html)]
    assert head[:5] == ["layer", "fault", "counters", "kind", "tool"]
    assert "Xid 79" in html  # the XIDs sit in the counters column, by fault class; no column says what each means
    text = _flat(_cells(NB08)["c016"])
    assert ("the second table lists, for each fault class, its counters and XIDs and the tool that reads them (its "
            "\"GPU lost\" XIDs drain a node too).") in text
    assert "with what it means" not in text


def test_08_steps_done_count_since_the_group_started():
    cell = next(c for c in _nb(NB08) if c.get("id") == "c021")
    out = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))
    steps = json.loads(re.search(r"steps done per rank (\[[\d, ]+\])", out).group(1))
    per_call = len(build_plan("allreduce", "ring", 4, 2**18).steps[0])
    assert max(steps) > per_call  # more than one call's steps: the count runs on from the first call
    text = _flat(_cells(NB08)["c022"])
    assert ("*steps done per rank* counts the steps of its part of the ring that each rank completed since the group "
            "started, the first call's included, before it stalled.") in text


def test_06d_send_lines_without_gdrdma_are_read_the_same_in_the_prose_and_the_readout():
    # walkthrough X: §5 said the reader flags such sends (on Ampere or newer: NCCL_NET_GDR_READ=0 is set) while the
    # table's readout called them "not a fault"; both now say it is the read policy, off by default before Ampere
    prose = _flat(_cells(NB06D)["c06dref"])  # the sentence moved to §10 (walkthrough Y)
    readout = _flat(re.sub(r"<[^>]+>", "", ch06d.LOOK_AT["gpu_nic"]))
    assert "on Ampere or newer GPUs they mean `NCCL_NET_GDR_READ=0` is set" in prose
    assert "not a fault" not in readout
    assert ("NCCL's read policy (NCCL_NET_GDR_READ), not a broken peer-memory path: off by default before Ampere; on "
            "Ampere or newer, look for NCCL_NET_GDR_READ=0.") in readout
