"""Chapter 06d after walkthrough Y: §5 (GPU to NIC) keeps one idea per part (the two pieces GDR needs, the log
lines and their table, the order of the fixes) and sends the read policy of sends, the worked fault and the
peer-memory module's old name to §10; §6 sends the GID index's version rule and lossy RoCE to §10; the runbook's
data defines PLX, ComputeDomain and SHM where the chapter first shows them."""

import json
import re

from test_prose_facts_core import ROOT

from nvcourse import _data
from nvcourse.chapters import ch06d_runbook as ch
from nvcourse.devtools import reading_time

NB = "06d_bringup_and_fault_runbook.ipynb"
WORDS_BEFORE_Y = 3920  # the chapter's Markdown words before walkthrough Y's pass (reading 43 min, core 0)


def _cells() -> dict[str, str]:
    nb = json.loads((ROOT / "notebooks" / NB).read_text(encoding="utf-8"))
    return {c["id"]: "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"}


def _flat(s: str) -> str:
    return " ".join(s.split())


def test_the_chapter_got_shorter():
    row = reading_time.measure_chapter(ROOT / "notebooks" / NB)
    assert row.words < WORDS_BEFORE_Y and row.reading_min <= 42 and row.core_min == 0


def test_section5_holds_one_idea_per_part_and_its_detail_lives_in_section10_once():
    c = _cells()
    s5, ref = _flat(c["c009"]), _flat(c["c06dref"])
    rest = _flat(" ".join(v for k, v in c.items() if k not in ("c009", "c06dref")))
    moved = ("**Sends without `/GDRDMA`** are NCCL's read policy", "`nvcourse ncclog` flags such sends as a problem",
             "<details><summary>A worked fault</summary>", "NCCL INFO GPU Direct RDMA Disabled for GPU ca000",
             "`nv_peer_mem`", "`NCCL_DMABUF_ENABLE`", "the maintainer warned that GDR across the CPU may not be faster")
    for phrase in moved:
        assert phrase in ref and phrase not in s5 and phrase not in rest, phrase
    # the answer, the two pieces, the log lines, the table and the order of the fixes stay in §5, in that order
    marks = ("This section answers:", "**A peer-memory path**", "**A short PCIe path**", "**channel line**",
             "**NIC line**", "| channel lines | NIC line | what it means |", "**The order of the fixes matters.**",
             "**Reference:** section 10")
    assert [s5.index(m) for m in marks] == sorted(s5.index(m) for m in marks)
    assert "sends follow NCCL's read policy (section 10), not a missing module" in s5
    assert ref.index("**GPU to NIC (section 5): sends, a worked fault") < ref.index("**Sends without `/GDRDMA`**")
    assert len(re.findall(r"\*\*\w[^*]*\*\*", s5.split("### ")[0])) <= 4  # few bold terms before the log part


def test_the_order_of_the_fixes_is_the_readers():
    # §5: the level helps a distance only; a NIC line that says Disabled is the peer-memory path, whatever the level
    s5 = _flat(_cells()["c009"])
    assert ("`NCCL_NET_GDR_LEVEL` is the knob for a distance only. For a missing peer-memory path (the NIC line's "
            "`Disabled for HCA`) raising it does nothing") in s5
    assert "So check the module (or DMA-BUF) and ACS first, and raise the level last." in s5
    look = re.sub(r"<[^>]+>", "", ch.LOOK_AT["gpu_nic"])
    assert "Disabled for HCA is the peer-memory path, Enabled for HCA a distance" in look


def test_section6_sends_the_gid_version_rule_and_lossy_roce_to_section10():
    c = _cells()
    s6, ref = _flat(c["c011"]), _flat(c["c06dref"])
    assert "Which index NCCL picks by itself, and when a hard-coded one is the fault: section 10." in s6
    for phrase in ("NCCL 2.21 and later pick one themselves when `NCCL_IB_GID_INDEX` is unset",
                   "A lossless class is the usual design; NICs that tolerate loss exist"):
        assert phrase in ref and phrase not in s6, phrase
    assert ref.index("**Fabric (section 6): the GID index") < ref.index("NCCL 2.21 and later pick one themselves")


def test_the_runbook_defines_plx_computedomain_and_shm_where_the_chapter_first_shows_them():
    raw = _data.load("runbook")
    assert "ACS on the PLX (Broadcom) PCIe switches" in raw["sources"]["nccl304"]["title"]
    cause = raw["signatures"]["imex_mnnvl"]["cause"]
    assert ("a ComputeDomain (the Kubernetes resource of NVIDIA's Dynamic Resource Allocation (DRA) driver that sets "
            "up an IMEX domain for a job)") in cause
    broken = raw["signatures"]["p2p_forced_off"]["broken"]
    assert "SHM being NCCL's shared-memory transport through host memory" in broken
    # first learner-visible use: the NVLink cards (§4) come before the sources list, the NCCL cards' broken field
    # before their nccl-tests field
    html_nvlink, html_nccl = ch.checks_html("nvlink"), ch.checks_html("nccl")
    assert "ComputeDomain (the Kubernetes resource" in html_nvlink.replace("&#x27;", "'")
    shm = html_nccl.replace("&#x27;", "'")
    assert shm.index("SHM being NCCL's shared-memory transport") < shm.index("host-memory (SHM) plateau")
