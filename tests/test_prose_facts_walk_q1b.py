"""Chapters 06c, 07 and 08 after a fresh learner's walkthrough (Q1): a ratio stated once under one definition, each
word defined or linked where it is first used, no course API names in the prose, and the long tables collapsed.

Markdown cannot compute: the sentence must appear in the chapter as written (line breaks read as spaces).
"""

import json
import re
from functools import cache

from test_prose_facts_core import ROOT

from nvcourse import catalog


@cache
def cells(notebook: str) -> dict[str, str]:
    nb = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    return {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"]}


@cache
def shown(notebook: str) -> dict[str, str]:
    """What each code cell printed (text and HTML), as stored."""
    nb = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    out = {}
    for c in nb["cells"]:
        parts = []
        for o in c.get("outputs", []):
            parts.append("".join(o.get("text", "")))
            parts.append("".join(o.get("data", {}).get("text/html", "")))
        out[c["id"]] = "\n".join(parts)
    return out


# ---------------------------------------------------------------- 06c

N06C = "06c_multinode_lab.ipynb"


def test_06c_nvlink_against_nic_is_eight_achievable_and_nine_at_line_rate_as_in_01_and_02():
    # 01 and 02 say "eight times" (achievable rates); 06c printed 9x (line rates) alone: it now prints both, and
    # its prose and check-yourself give achievable first, like the other chapters
    h100 = catalog.get_system("dgx-h100")
    nvl = catalog.get_link(h100.scale_up_link).achievable_GBps_dir * h100.links_per_gpu
    nic = catalog.get_link(h100.nic_link).achievable_GBps_dir
    assert round(nvl / nic) == 8 and round(h100.scaleup_GBps_dir / h100.scaleout_GBps_dir_per_gpu) == 9
    line = shown(N06C)["ad98be07"]
    assert (f"NVLink {nvl:.0f} vs NIC {nic:.0f} GB/s achievable, about 8x (9x at line rate: "
            f"{h100.scaleup_GBps_dir:.0f} vs {h100.scaleout_GBps_dir_per_gpu:.0f} GB/s)") in line
    c = cells(N06C)
    assert "about 8× the NIC per GPU at achievable rates, 9× at line rates" in c["2aed01e9"]
    assert "about 8× the NIC per GPU at achievable rates (9× at line rates)" in c["c182191a"]
    assert "about 9× the NIC" not in " ".join(c.values())


def test_06c_defines_verbs_bulk_synchronous_and_tbf_where_first_used():
    c = cells(N06C)
    order = list(c)
    first = next(cid for cid in order if "verbs" in c[cid])
    assert first == "a10209e9" and "[verbs](../docs/glossary.md#verbs) (the RDMA programming interface)" in c[first]
    assert ("(a collective step is bulk-synchronous: every rank waits for the slowest before the next step starts)"
            in c["ab0d5c40"])
    # "tbf" is printed by the recorded run's note (cell 71f41ac1): the prose before it says what it is
    assert "rate shaped with tbf" in shown(N06C)["71f41ac1"]
    assert "**tbf**, token-bucket filter" in c["360ff868"]
    assert order.index("360ff868") < order.index("71f41ac1")
    assert all("tbf" not in c[cid] for cid in order[:order.index("360ff868")])


def test_06c_facts_tables_are_collapsed_and_the_tc_arithmetic_sits_in_a_box():
    out = shown(N06C)
    for cid in ("3c80faaf", "07b7263b"):
        assert out[cid].strip().startswith("<details><summary>Details and sources: "), cid
    box = cells(N06C)["a10209e9"]
    opened, closed = box.index("<details><summary>Setting NCCL_IB_TC and the GID</summary>"), box.index("</details>")
    assert opened < box.index("DSCP × 4 plus the two ECN bits") < box.index("NCCL picks by itself since version 2.21") \
        < closed
    assert box.index("**NCCL's settings**: on RoCE, NCCL must also be told the traffic class") < opened


def test_06c_ends_with_its_exercises_and_the_next_chapter_like_every_chapter():
    last = list(cells(N06C).values())[-1]
    assert last.rstrip().endswith(
        "**Practice:** [exercises/06c_multinode_lab_exercises.ipynb](../exercises/06c_multinode_lab_exercises.ipynb)"
        " · next: [06d — bring-up and fault runbook](06d_bringup_and_fault_runbook.ipynb)")
    assert (ROOT / "exercises" / "06c_multinode_lab_exercises.ipynb").is_file()
    assert (ROOT / "notebooks" / "06d_bringup_and_fault_runbook.ipynb").is_file()
