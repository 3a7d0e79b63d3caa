"""Guards for chapter 09 after fresh-learner walkthrough U (the density pass): the order of decisions in the title
cell, the gate table of §2, §8's table of four checks, the decision log's section hints, the reference section that
holds what §3 moved, and the one helper that formats the monitoring thresholds.

Each claim is computed from :mod:`nvcourse.capstone` / :mod:`nvcourse.capstone_gates` and looked for in the
notebook as written (line breaks read as spaces), so a change of model that moves it fails here.
"""

import json
import re
from pathlib import Path

import pytest
from test_prose_facts_core import prose

from nvcourse import capstone
from nvcourse import capstone_gates as cg
from nvcourse.chapters import ch09_capstone as ch

ROOT = Path(__file__).resolve().parents[1]
NB = "09_capstone_design_a_cluster.ipynb"
#: §8.2's serving targets, as the notebook writes them
SERVING = cg.ServingTargets(model="llama3-70b", max_token_ms=30, max_ttft_ms=1000, tokens_per_s=20_000,
                            prompt_tokens=4096)


def cells() -> list[dict]:
    return json.loads((ROOT / "notebooks" / NB).read_text(encoding="utf-8"))["cells"]


def md(cid: str) -> str:
    return re.sub(r"\s+", " ", next("".join(c["source"]) for c in cells() if c["id"] == cid))


def targets() -> capstone.Targets:
    ns = {"capstone": capstone}
    exec(next("".join(c["source"]) for c in cells() if c["id"] == "c003").rsplit("\n", 1)[0], ns)
    return ns["targets"]


def starting_report() -> capstone.Report:
    ns = {"capstone": capstone}
    exec(next("".join(c["source"]) for c in cells() if c["id"] == "c011").split("report =")[0], ns)
    return capstone.evaluate(ns["my_design"], targets())


def table_rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
            if line.startswith("|") and not line.startswith("|---")][1:]


# ------------------------------------------------------------------------------------------------ the order
def test_title_cell_says_what_to_decide_in_order_and_names_the_gates_and_log_rows():
    raw = next("".join(c["source"]) for c in cells() if c["id"] == "c000")
    rows = table_rows(raw.split("**What you decide, in order**")[1])
    assert [r[0] for r in rows] == ["§1–2", "§3–5", "§6", "§7", "§8", "§9"]
    # "the seven gates of §2": the design's own gates, for the notebook's targets (power is on: max_MW is set)
    report = starting_report()
    assert len(report.gates) == 7 and targets().max_MW is not None
    assert rows[1][2] == "the seven gates of §2"
    # every log row named in the table is a row of the log (the model's fields, or section 8's four)
    fields = {name for name, _hint in capstone.DECISION_LOG_FIELDS}
    named = {n.strip() for r in rows for n in r[3].split(",")} - {"its four rows", "the rest"}
    assert named <= fields, named - fields
    # "§8 ... its four rows": section 8 adds exactly four rows to the log
    fab = cg.fabric_gate(report, cg.FabricChoice())
    plan = cg.serving_plan(SERVING, "dgx-h100", batch=32)
    extra = ch.decision_log_rows(fabric=fab, serving=plan, isolation_result=cg.isolation_requirements(report),
                                 monitoring=cg.monitoring_requirements(fab))
    assert len(table_rows(extra)) == 4 and rows[4][3] == "its four rows"
    # "the rest": what §1-8 do not fill is Risks, Rollback, Owner and review date
    filled = set().union(*({n.strip() for n in r[3].split(",")} for r in rows[:5])) & fields
    assert fields - filled == {"Risks", "Rollback", "Owner and review date"}
    assert "| §9 | risks, rollback, owner | — | the rest |" in raw


def test_section_2_table_names_every_gate_the_design_is_checked_against():
    raw = next("".join(c["source"]) for c in cells() if c["id"] == "c002")
    rows = table_rows(raw.split("## 2. Set the targets first")[1])
    named = [r[0] for r in rows]
    assert sorted(named) == sorted(g.name for g in starting_report().gates)
    # each target field named is one the Targets object has, and the one its gate compares with
    for gate, field in (("time", "max_days"), ("budget", "max_usd"), ("goodput", "min_goodput"),
                        ("efficiency", "min_efficiency"), ("power", "max_MW")):
        assert [r[2] for r in rows if r[0] == gate] == [f"`{field}`"] and hasattr(targets(), field)
    # "Each target is a gate; two more check that the layout is possible": memory and placement need no target
    assert {r[0] for r in rows if not r[2].startswith("`")} == {"memory", "placement"}
    assert md("c002").index("*What must the design achieve, and which gate checks each target?*") < md(
        "c002").index("| gate |")


@pytest.mark.parametrize("gpus,pp", [(512, 2), (1024, 2), (1024, 1), (2048, 1)])
def test_memory_gate_is_the_gpus_memory_less_headroom_and_power_ignores_scale_out_switches(gpus, pp):
    r = capstone.evaluate(capstone.Design("dgx-h100", gpus, tp=8, pp=pp), targets())
    gate = {g.name: g for g in r.gates}
    assert gate["memory"].target.startswith("≤ ") and " of " in gate["memory"].target  # a share of the capacity
    assert "scale-out switches not counted" in gate["power"].measured
    assert "| memory | bytes per GPU (chapter 07) | the GPU's memory, less headroom |" in md("c002")


# ------------------------------------------------------------------------------------------------ section 8
def test_section_8_table_lists_the_four_checks_its_subsections_run():
    raw = next("".join(c["source"]) for c in cells() if c["id"] == "g9-01")
    rows = table_rows(raw.split("Four more checks:")[1].split("### 8.1")[0])
    assert [r[0] for r in rows] == ["fabric (§8.1)", "serving (§8.2)", "isolation (§8.3)", "monitoring (§8.3)"]
    text = prose(NB)
    for sub in ("### 8.1 The fabric", "### 8.2 Serving", "### 8.3 Isolation and monitoring"):
        assert sub in text
    # "the DP all-reduce ... gets a set share of what the same NICs get on a non-blocking fabric with adaptive
    # routing, and the step still meets the efficiency target": the fabric gate's two gates
    fab = cg.fabric_gate(starting_report(), cg.FabricChoice())
    assert [g.name for g in fab.gates] == ["fabric busbw", "fabric step"]
    # "serving: the smallest TP per replica": the plan takes the first candidate that fits and meets both targets
    plan = cg.serving_plan(SERVING, "dgx-h100", batch=32)
    ok = [tp for tp, tok, tt, fits in plan.candidates if fits and tok <= 30 and tt <= 1000]
    assert plan.tp == min(ok)


# ------------------------------------------------------------------------------------------------ section 9
def test_decision_log_template_names_the_section_that_fills_each_row():
    template = md("c014a")
    assert template.startswith("| field | entry |")
    for row, where in (("Decision", "§5"), ("Targets", "§2"), ("Options considered", "§3"), ("Evidence", "§5, §8"),
                       ("Assumptions", "§6"), ("Validation plan", "§7, §8.3")):
        assert re.search(rf"\| \*\*{row}\*\* \| _[^|]*{re.escape(where)}[^|]*_ \|", template), row
    assert [r[0] for r in table_rows(next("".join(c["source"]) for c in cells() if c["id"] == "c014a"))] == [
        f"**{name}**" for name, _hint in capstone.DECISION_LOG_FIELDS]
    assert "each hint names the section that supplies it" in md("g9-10")


def test_reference_section_is_last_before_the_key_points_and_holds_what_section_3_moved():
    ids = [c["id"] for c in cells()]
    assert ids.index("c014a") < ids.index("c09ref") == ids.index("c014") - 1
    ref = md("c09ref")
    assert ref.startswith("## 10. Reference:")
    assert "the memory gate, like chapter 07, assumes a distributed optimizer, ZeRO-1" in ref
    assert "compare systems on the second $M column (§10 says why)" in md("c004")
    assert "ZeRO" not in md("c004") and "AWS" not in md("c004")
    headings = re.findall(r"^## (\d+)\.", "\n".join("".join(c["source"]) for c in cells()), flags=re.M)
    assert headings == [str(n) for n in range(1, 11)]


# ------------------------------------------------------------------------------------------------ the one helper
@pytest.mark.parametrize("gpus,nic", [(512, "ib-ndr"), (1024, "ib-ndr"), (1024, "roce-400g"), (8, "ib-ndr")])
@pytest.mark.parametrize("lang", ["en", "fr"])
def test_monitoring_text_entry_and_table_share_one_formatting_of_the_thresholds(gpus, nic, lang, monkeypatch):
    monkeypatch.setenv("NVCOURSE_LANG", lang)
    rep = capstone.evaluate(capstone.Design("dgx-h100", gpus, tp=8, pp=1), targets())
    mon = cg.monitoring_requirements(cg.fabric_gate(rep, cg.FabricChoice(nic=nic)))
    fields = mon.threshold_fields()
    text, entry, html = mon.text(), ch.monitoring_entry(mon), ch.monitoring_html(mon)
    if mon.thresholds is None:
        assert fields == {}
        return
    assert set(fields) == {"c", "loss", "warn", "critical", "step_warn", "step_critical"}
    for key, value in fields.items():
        assert value in text and value in entry, key
        assert value in html, key
    # one home: the three texts print the same six figures, so a changed format changes all three
    assert fields["warn"] == (f"{mon.thresholds.busbw_ratio_warn:.3f}" if lang == "en"
                              else f"{mon.thresholds.busbw_ratio_warn:.3f}".replace(".", ","))
