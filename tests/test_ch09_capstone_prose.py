"""Chapter 09's sentences about the fabric and the price basis, rebuilt from the gates and the data they use.

Each figure a sentence states is computed here from :mod:`nvcourse.capstone_gates` or :mod:`nvcourse.capstone`
and looked for in the notebook's Markdown (line breaks read as spaces), so a change of model or data that moves the
figure fails here instead of leaving a stale sentence.
"""

import json
import re
from functools import cache
from pathlib import Path

from nvcourse import capstone
from nvcourse import capstone_gates as cg
from nvcourse.chapters import ch09_capstone

ROOT = Path(__file__).resolve().parents[1]
NB = ROOT / "notebooks" / "09_capstone_design_a_cluster.ipynb"


@cache
def sources() -> dict[str, str]:
    return {c["id"]: "".join(c["source"]) for c in json.loads(NB.read_text(encoding="utf-8"))["cells"]}


def said(cell: str) -> str:
    return re.sub(r"\s+", " ", sources()[cell])


def pct(x: float) -> str:
    return f"{x:.0%}".replace("%", " %")


@cache
def targets() -> capstone.Targets:
    ns = {"capstone": capstone}
    exec(sources()["c003"].rsplit("\n", 1)[0], ns)  # the notebook's targets, as written
    return ns["targets"]


def job_1024() -> capstone.Report:
    return capstone.evaluate(capstone.Design("dgx-h100", 1024, tp=8, pp=1), targets())


def test_the_table_names_adaptive_routing_as_the_infiniband_default_and_static_routes_as_the_misconfiguration():
    assert "ch.fabric_choices()" in sources()["g9-02"]  # the rows live in the chapter module, as messages
    code = Path(ch09_capstone.__file__).read_text(encoding="utf-8")
    code = code[code.index("def fabric_choices("):code.index("def compared_jobs(")]
    assert '_("IB, adaptive routing (the default)"): gates.FabricChoice(nic="ib-ndr"),' in code
    assert '_("IB, AR off in the switches (static routes)"): gates.FabricChoice(nic="ib-ndr", routing="dmodk")' \
        in code
    assert "static" not in code.split("AR off in the switches")[0]  # no other row is built on static routes
    assert cg.FabricChoice(nic="ib-ndr").routing_used == "ideal"
    assert 'my_fabric = capstone_gates.FabricChoice(nic="ib-ndr")' in sources()["g9-05"]


def test_the_first_prediction_answer_is_the_gates():
    big = job_1024()
    ar, static, ecmp = (cg.fabric_gate(big, f).ratio for f in (cg.FabricChoice(nic="ib-ndr"),
                                                                 cg.FabricChoice(nic="ib-ndr", routing="dmodk"),
                                                                 cg.FabricChoice(nic="roce-400g")))
    assert (f"With adaptive routing the 1,024-GPU job's all-reduce gets {pct(ar)} of the reference; with AR off in "
            f"the switches it gets {pct(static)}, and on RoCE with ECMP {pct(ecmp)}.") in said("g9-03")
    assert "about 100 %, 70 % or 30 %?" in said("g9-01") and "adaptive routing" in said("g9-01")


def test_the_static_route_dashboard_answer_holds():
    # n9-fabric: with AR off, packed placement and SHARP pass; the 800 Gb/s NIC still fails the bandwidth gate
    big = job_1024()
    packed, sharp, xdr = (cg.fabric_gate(big, cg.FabricChoice(nic=nic, routing="dmodk", **kw)) for nic, kw in (
        ("ib-ndr", {"placement": "packed"}), ("ib-ndr", {"sharp": True}), ("ib-xdr", {})))
    assert packed.passed and sharp.passed and not xdr.passed
    assert not {g.name: g.passed for g in xdr.gates}["fabric busbw"]
    text = said("n9-fabric")
    assert f"With AR off, packed placement ({pct(packed.ratio)}) and SHARP ({pct(sharp.ratio)}) pass." in text
    assert f"it still gets only {pct(xdr.ratio)} of what its NICs give on the reference fabric and fails the " \
           "bandwidth gate" in text
    assert "Set routing to static routes (AR off in the switches)" in said("g9-03")


def test_sharp_is_offered_with_its_preconditions_and_the_runbook():
    text = said("g9-03") + " " + said("n9-fabric")  # the preconditions' toggle follows the dashboard
    for words in ("NCCL does not use it by default", "Aggregation Manager (`sharp_am`)",
                  "`nccl-rdma-sharp-plugins`, from HPC-X", "`NCCL_COLLNET_ENABLE=1`", "shared by every job",
                  "runs without SHARP"):
        assert words in text, words
    assert "(../docs/runbook-ib-ar-sharp.md)" in text and (ROOT / "docs" / "runbook-ib-ar-sharp.md").is_file()
    runbook = (ROOT / "docs" / "runbook-ib-ar-sharp.md").read_text(encoding="utf-8")
    assert "sharp_am" in runbook and "NCCL_COLLNET_ENABLE=1" in runbook and "HPC-X" in runbook
    # the gate's own words say the same (the list under the table, the dashboard and the decision log use them)
    assert all(w in cg.NEEDS["SHARP"] for w in ("Aggregation Manager", "HPC-X", "NCCL_COLLNET_ENABLE=1"))


def test_the_survey_says_which_price_basis_each_column_uses():
    from nvcourse import training

    h100, others = training.system_costs("dgx-h100"), [training.system_costs(s) for s in ("pcie-8gpu", "gb200-nvl72")]
    date = capstone.common_price_date(["pcie-8gpu", "dgx-h100", "gb200-nvl72"])
    assert date == "2026-05" and h100["usd_date"] == "2024-12" and "aws" in h100["src"]["usd_per_gpu_hour"]
    assert all(c["usd_date"] == date for c in others) and h100["usd_market_date"] == date
    assert h100["usd_market_label"] == "est"
    text = said("c09ref")  # §10, the reference section; §3 sends the learner there
    assert "compare systems on the second $M column (§10 says why)" in said("c004")
    assert text.startswith("## 10. Reference:")
    assert "the H100's is AWS's list price of late 2024, the others are of May 2026" in text
    assert "the second column prices every system in May 2026 (the H100 at that month's market median, an estimate)" \
        in text
    assert "ch.comparison_summary_html(reports)" in sources()["c005"]  # the table that has both columns


def test_the_price_conclusion_holds_on_both_bases():
    # c012: "at the course's prices 1,024 H100 GPUs cost $2.84 M and 512 GB200 GPUs $1.50 M, about half; priced in
    # the same month, the H100 design costs $1.70 M, only 13 % more — and GB200's price is an assumption. Both designs
    # pass the budget on either basis"
    h100 = job_1024()
    gb200 = capstone.evaluate(capstone.Design("gb200-nvl72", 512, tp=4, pp=1), targets())
    reports = capstone.compare_systems(targets(), ["dgx-h100", "gb200-nvl72"], [512, 1024])
    surveyed = {(r.design.system, r.design.gpus): r for r in reports}
    assert surveyed[("gb200-nvl72", 512)].cost.usd == gb200.cost.usd  # the survey's layout is the one priced here
    assert surveyed[("dgx-h100", 1024)].cost.usd == h100.cost.usd
    h100_same = capstone.at_price_date(h100, "2026-05")
    text = said("c012")
    assert (f"1,024 H100 GPUs cost \\${h100.cost.usd / 1e6:.2f} M and 512 GB200 GPUs \\${gb200.cost.usd / 1e6:.2f} M, "
            "about half") in text
    assert 0.45 <= gb200.cost.usd / h100.cost.usd <= 0.55
    more = round((h100_same.cost.usd / gb200.cost.usd - 1) * 100)
    assert f"the H100 design costs \\${h100_same.cost.usd / 1e6:.2f} M, only {more} % more" in text
    assert capstone.price_on("gb200-nvl72", "2026-05")[1] == "assumption"
    assert all("budget" not in [g.name for g in r.failed] for r in (h100, h100_same, gb200))
    assert "Both designs pass the budget on either basis" in text


def test_the_reference_design_prices_a_both_ways():
    sol = json.loads((ROOT / "solutions" / "09_capstone_reference_design.ipynb").read_text(encoding="utf-8"))
    text = re.sub(r"\s+", " ", "".join("".join(c["source"]) for c in sol["cells"] if c["id"] == "c006"))
    a = job_1024()
    a_same = capstone.at_price_date(a, "2026-05")
    b = capstone.evaluate(capstone.Design("gb200-nvl72", 512, tp=4, pp=1), targets())
    margin, margin_same = (1 - r.cost.usd / targets().max_usd for r in (a, a_same))
    assert f"A's margin is thin at the list price ({margin:.0%} under budget)".replace("%", " %") in text
    assert f"wide at the market median ({margin_same:.0%})".replace("%", " %") in text
    # "at the market median its break-even is only a little above that assumption"
    breakeven = a_same.cost.usd / b.cost.gpu_hours
    assumed = capstone.price_on("gb200-nvl72", "2026-05")[0]
    assert 1 < breakeven / assumed < 1.25 and "only a little above that assumption" in text
    # "At a compute efficiency of 0.45 ... A runs over the budget at its 2024 list price but not at the 2026 market
    # median, and B still fits in time and money" (the solution's own computation)
    from nvcourse import training

    def at(eff, d, price=None):
        st = training.step_time("llama3-70b", d.system, d.gpus, tp=d.tp, pp=d.pp, compute_efficiency=eff)
        return training.run_cost(st, targets().training_tokens, goodput=capstone.evaluate(d, targets()).goodput,
                                 usd_per_gpu_hour=price)

    assert at(0.45, a.design).usd > targets().max_usd >= at(0.45, a.design, a_same.design.usd_per_gpu_hour).usd
    slow_b = at(0.45, b.design)
    assert slow_b.usd <= targets().max_usd and slow_b.hours / 24 <= targets().max_days
    assert "A runs over the budget at its 2024 list price but not at the 2026 market median" in text


def test_the_check_yourself_answer_on_adaptive_routing_quotes_the_gate():
    text = said("c014")
    static = cg.fabric_gate(job_1024(), cg.FabricChoice(nic="ib-ndr", routing="dmodk")).ratio
    assert f"the static-route row: {pct(static)} of the reference at 1,024 GPUs" in text
    assert "`NCCL_IB_SL`" in text and "(../docs/runbook-ib-ar-sharp.md)" in text
    # the runbook says the same: AR per service level, on by default in NCCL on IB, ibdiagnet reports AR state
    runbook = (ROOT / "docs" / "runbook-ib-ar-sharp.md").read_text(encoding="utf-8")
    assert "per service level (SL)" in runbook and "on by default on IB" in runbook and "AR state" in runbook


def test_the_roce_row_says_it_is_one_flow_per_ring_edge_and_more_qps_lift_it():
    # the capstone's flow model hashes one flow per rail and ring edge; chapter 06c's QP model says what more flows
    # per connection (NCCL's channels, NCCL_IB_QPS_PER_CONNECTION) give, and the remedies name them
    from nvcourse.fabric import ecmp_qp

    assert '_("RoCE, ECMP (1 flow per rail and ring edge)"): gates.FabricChoice(nic="roce-400g")' \
        in Path(ch09_capstone.__file__).read_text(encoding="utf-8")
    share = {q: pct(1 / ecmp_qp.expected_slowdown(32, 32, q)) for q in (1, 4, 16)}
    text = said("g9-03") + " " + said("n9-fabric")  # the flows' toggle follows the dashboard
    assert (f"(32 connections hashed over 32 links) gives {share[1]} of line rate with 1 flow per connection, "
            f"{share[4]} with 4 and {share[16]} with 16") in text
    assert share[1] < share[4] < share[16]
    assert "hashes **one flow per rail and ring edge**" in text and "`NCCL_IB_QPS_PER_CONNECTION`" in text
    assert "Four things restore the bandwidth" in text and "Three things" not in text
    gate = cg.fabric_gate(job_1024(), cg.FabricChoice(nic="roce-400g")).gates[0]
    assert "NCCL_IB_QPS_PER_CONNECTION" in gate.advice
    # adaptive routing: NCCL's default on InfiniBand, the fabric's only when the subnet manager enables it
    assert "Adaptive routing is NCCL's default on InfiniBand, and the fabric's only if the subnet manager" in text
    assert "NVIDIA's reference design for a large DGX cluster" in said("g9-01")
