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
    code = sources()["g9-02"]
    assert '"IB, adaptive routing (the default)": capstone_gates.FabricChoice(nic="ib-ndr"),' in code
    assert '"IB, AR off in the switches (static routes)": capstone_gates.FabricChoice(nic="ib-ndr", routing="dmodk")' \
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
    text = said("g9-03")
    for words in ("NCCL does not use it by default", "Aggregation Manager (`sharp_am`)",
                  "`nccl-rdma-sharp-plugins`, from HPC-X", "`NCCL_COLLNET_ENABLE=1`", "shared by every job",
                  "runs without SHARP"):
        assert words in text, words
    assert "(../docs/runbook-ib-ar-sharp.md)" in text and (ROOT / "docs" / "runbook-ib-ar-sharp.md").is_file()
    runbook = (ROOT / "docs" / "runbook-ib-ar-sharp.md").read_text(encoding="utf-8")
    assert "sharp_am" in runbook and "NCCL_COLLNET_ENABLE=1" in runbook and "HPC-X" in runbook
    # the gate's own words say the same (the list under the table, the dashboard and the decision log use them)
    assert all(w in cg.NEEDS["SHARP"] for w in ("Aggregation Manager", "HPC-X", "NCCL_COLLNET_ENABLE=1"))
