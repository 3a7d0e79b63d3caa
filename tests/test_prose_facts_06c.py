"""Chapter 06c agrees with itself and with 06d: the facts table, the prose and the runbook give one rule for the
RoCE GID, and the words the tables use are defined before them. Markdown line breaks read as spaces."""

import json
import re
from functools import cache
from pathlib import Path

from nvcourse.chapters import ch06c_multinode_lab as ch

ROOT = Path(__file__).resolve().parents[1]


@cache
def cells(notebook: str) -> dict[str, str]:
    nb = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    return {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"]}


def test_one_gid_rule_in_the_facts_table_the_prose_and_06d():
    row = ch.facts_table(["NCCL on RoCE"])
    assert "needs the right GID" not in row and "usually the RoCEv2 IPv4 GID" not in row
    assert "NCCL 2.21 and later picks itself, a RoCE v2 one" in row
    assert "set the index only on older NCCL or when its choice is wrong" in row
    c06c = cells("06c_multinode_lab.ipynb")
    assert "NCCL picks by itself since version 2.21 (a RoCE v2 one" in c06c["a10209e9"]
    # the stored output of the table is the table the module renders now (the lab notebook is not re-run here)
    nb = json.loads((ROOT / "notebooks" / "06c_multinode_lab.ipynb").read_text(encoding="utf-8"))
    out = next(c for c in nb["cells"] if c["id"] == "3c80faaf")["outputs"][0]["data"]["text/html"]
    assert "set the index only on older NCCL or when its choice is wrong" in "".join(out)
    text06d = " ".join(cells("06d_bringup_and_fault_runbook.ipynb").values())
    assert "a hard-coded index left in a job script is a cause in itself" in text06d


def test_e_ecmp_is_defined_before_the_tables_use_it():
    c06c = cells("06c_multinode_lab.ipynb")
    order = list(c06c)
    defined = order.index("ab0d5c40")
    assert "**E-ECMP** (enhanced ECMP), has the switch hash fields inside the RoCE header too" in c06c["ab0d5c40"]
    assert all("E-ECMP" not in c06c[cid] for cid in order[:defined])
    assert "E-ECMP" in ch.facts_table(["Entropy fixes"])  # the table right after the definition


def test_one_qp_share_of_the_fabric_is_about_28_percent():
    """06c §2: with one QP on 32 uplinks the step runs at "a little over a quarter (about 28 %)" of the fabric."""
    from nvcourse.fabric import ecmp_qp

    share = 1 / ecmp_qp.expected_slowdown(32, 32, 1)
    assert f"{share:.0%}" == "28%" and 0.25 < share < 1 / 3
    text = cells("06c_multinode_lab.ipynb")["12947629"]
    assert "runs at a little over a quarter (about 28 %) of the fabric's speed" in text
    assert "roughly a third of the fabric's speed" not in text
