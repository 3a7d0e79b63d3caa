"""Chapter 06d and its reference pages after a fresh learner's walkthrough (Q3): each sentence it found to contradict
the tables, the data or another chapter now agrees with them, the drill is not the worked fault of section 5, and
each word it met before its definition is defined or linked where it is first used.

Markdown cannot compute: the sentence must appear in the chapter as written (line breaks read as spaces).
"""

import json
import re

from test_prose_facts_core import ROOT, prose

from nvcourse import _data
from nvcourse.chapters import ch06d_runbook as ch

NB = "06d_bringup_and_fault_runbook.ipynb"
DATA = _data.load("runbook")
FIXTURES = ROOT / "tests" / "fixtures" / "runbook"


def _cells() -> dict[str, str]:
    nb = json.loads((ROOT / "notebooks" / NB).read_text(encoding="utf-8"))
    return {c["id"]: "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"}


def _flat(s: str) -> str:
    return " ".join(s.split())


def _section(n: int) -> str:
    """The Markdown of section ``n`` (from its heading to the next numbered or closing heading)."""
    md = "\n".join(_cells().values())
    return md.split(f"\n## {n}. ", 1)[1].split("\n## ", 1)[0]


def test_the_intro_claims_what_the_tables_hold():
    # the broken-output column describes (not every cell is a paste); what is quoted in a code block is a real paste:
    # every line of every fenced block in the chapter is in one of the stored public fixtures
    text = prose(NB)
    assert "Every broken output quoted here is a real paste" not in text
    assert ("Every check comes from a public source (a vendor guide, NCCL's documentation or source, or an issue "
            "thread)") in text
    stored = "\n".join(p.read_text(encoding="utf-8") for p in FIXTURES.iterdir())
    blocks = re.findall(r"```\n(.*?)```", "\n".join(_cells().values()), flags=re.S)
    assert len(blocks) >= 2
    for block in blocks:
        for line in filter(None, (ln.strip() for ln in block.splitlines())):
            assert line in stored, line
    # IMEX's "seen here" is the issue thread whose output is stored, not a repository root
    imex = DATA["signatures"]["imex_mnnvl"]
    assert imex["source_url"] == DATA["sources"]["aicr2641"]["url"]
    assert imex["source_url"] in (FIXTURES / "imex_not_ready_gb300_aicr2641.txt").read_text(encoding="utf-8")
    assert "a vendor guide, NCCL's documentation or source, or an issue thread" in _flat(_cells()["c020"])


def test_the_peer_memory_case_has_one_ratio_and_one_unit():
    # nccl#1676: "~180GB/s to ~10GB/s for 1GB message size": eighteen times, at 1 GB, in the card and in the drill
    fixture = (FIXTURES / "gdr_disabled_peermem_nccl1676.log").read_text(encoding="utf-8")
    assert "~180GB/s to ~10GB/s for 1GB message size" in fixture
    shown = DATA["signatures"]["no_peermem"]["nccl_tests"]
    assert "about 180 -> 10 GB/s for 1 GB messages" in shown and "eighteen times lower" in shown
    assert round(180 / 10) == 18 and "ten times" not in shown
    story = DATA["drill"]["story"]
    assert "about 10 GB/s for 1 GB messages" in story and "about 180 GB/s" in story and "GiB" not in story


def test_the_exercise_points_at_the_drill_section():
    nb = json.loads((ROOT / "solutions" / "06d_bringup_and_fault_runbook_exercises.ipynb").read_text())
    text = _flat(" ".join("".join(c["source"]) for c in nb["cells"]))
    assert "Open chapter 06d's drill box (section 9)" in text
    assert _section(9).startswith("The drill")
    assert "by the step name the box prints under each command's output" in text
    box = ch.drill_box()
    box.controls["step"].value = "nccl_log"
    assert "Step name (for the exercise): <code>nccl_log</code>" in box.readout.value


def test_the_bisection_pointer_says_what_06b_practises():
    # 06b's exercise has one slow node with made-up names and the levels of the first post (80/40), while
    # 06d reads the comment's table (two slow pairs explained by two nodes): 06d does not call it the same case
    from nvcourse.checks import ch06b

    text = _flat(_section(7))
    assert "same public case" not in text
    assert "chapter 06b's exercise practises this on made-up nodes with one slow node" in text
    table = ch06b.pair_table("n2")
    slow = {p for p, v in table.items() if v < 60}
    assert slow and all("n2" in p for p in slow)
    case = _data.load("nccl_cases")["cases"]["slow_rank"]
    assert case["source"] == DATA["signatures"]["slow_node"]["source_url"]


def test_the_cloud_key_point_names_the_line_each_fabric_prints():
    # every log form the key point names is in the cloud table's "how the log shows it", gIB included
    key = _flat(_cells()["c019"].split("## Check yourself")[0])
    logs = " ".join(c["log_says"] for c in DATA["cloud"].values())
    for form in ("Using network Libfabric", "NCCL_FASTRAK_", "NET/Plugin", "NET/IB"):
        assert form in key and form in logs, form
    assert "the `Using network` line names the plugin" not in key
    assert "A3 Ultra, A4, A4X" in key and "A3 Ultra / A4 / A4X" in DATA["cloud"]["gcp_gib"]["name"]
    assert "The <code>Using network</code> line names the plugin" not in ch.LOOK_AT["cloud"]
    assert "Using network ...` line tells you which" not in prose(NB)


def test_the_gid_rule_keeps_a_provider_set_index():
    # §6's rule (unset a hard-coded index) does not tell a Google A3 Ultra/A4 user to unset the profile's index
    assert "NCCL_IB_GID_INDEX=3 set by the profile" in DATA["cloud"]["gcp_gib"]["log_says"]
    text = prose(NB)
    assert ("a hard-coded index left in a job script is a cause in itself (unless the provider's profile set it, as "
            "Google's gIB network plugin does: section 8)") in text
    assert "value; keep one the cloud provider's profile sets) and let NCCL pick" in text


def test_the_roce_key_point_says_usually_as_section_6_does():
    text = prose(NB)
    assert "RoCE usually needs a routable RoCE v2 GID, a lossless class end to end" in text
    assert "A lossless class is the usual design; NICs that tolerate loss exist" in text
    assert "Lossy RoCE" in DATA["signatures"]["roce_lossy"]["cause"]


def test_the_grace_default_names_both_versions():
    # the version table shows the limit 5 (PXB) in 2.27 and 2.28, and 6 (P2C) from 2.29: the sentence says how a NIC
    # behind a Grace CPU gets GDR in each (NCCL_NET_GDR_C2C from 2.27, P2C the default level from 2.29)
    text = prose(NB)
    ref = (ROOT / "docs" / "runbook-reference.md").read_text(encoding="utf-8")
    assert "| 2.27 and 2.28 | the same form, `distance 9 > 5` |" in ref
    assert ("its chip-to-chip link, NVLink-C2C) gets GDR with `NCCL_NET_GDR_C2C=1` from NCCL 2.26, by default from "
            "2.27. NCCL 2.29 changes only the mechanism: the default limit becomes `P2C` while `NCCL_NET_GDR_C2C` is "
            "1.") in " ".join(text.split())
    src = DATA["sources"]["nccl-src"]["title"]
    assert "on by default from 2.27" in src and "from 2.29 P2C while NCCL_NET_GDR_C2C is 1" in src


def test_the_peer_memory_reason_is_the_narrow_one_everywhere():
    # NCCL 2.22 and older look only for MLNX_OFED's peer-memory entries (not: they ignore nvidia-peermem)
    why = DATA["drill"]["why"]
    assert "did not see on that image (they look only for MLNX_OFED's peer-memory entries)" in why
    assert "only through the peer-memory entries of MLNX_OFED" in DATA["signatures"]["no_peermem"]["cause"]
    ref = _flat((ROOT / "docs" / "runbook-reference.md").read_text(encoding="utf-8"))
    assert "they look only for MLNX_OFED's peer-memory entries; 2.23 and later do" in ref
    assert "which NCCL 2.22 and older do not look for" not in prose(NB)


def test_every_drill_output_is_what_its_grep_would_print():
    # a `grep 'X'` step shows only lines holding X (an excerpt, as the section says); the log step has no channel
    # lines because it does not ask for them
    for key, step in DATA["drill"]["steps"].items():
        m = re.fullmatch(r"grep '([^']+)' nccl\.log", step["command"])
        if m:
            assert all(m.group(1) in line for line in step["output"].splitlines()), key
    assert DATA["drill"]["steps"]["nccl_log"]["command"] == "grep 'GPU Direct RDMA' nccl.log"
    assert "Each command in the box shows an excerpt of this case's output where its reporter posted it" in _flat(
        _section(9))
    assert "shows the real output of the public case" not in prose(NB)


def test_the_fabric_sentence_covers_every_infiniband_check():
    look = ch.LOOK_AT["fabric"]
    ib = [s for s in ch.signatures("fabric") if s["id"].startswith("ib_")]
    assert {s["id"] for s in ib} == {"ib_port_state", "ib_link_ber"}
    assert "not Active" in look and "symbol errors or flaps keep rising" in look
    assert "Link Down" in DATA["signatures"]["ib_link_ber"]["broken"]
    assert "State: Down" in DATA["signatures"]["ib_port_state"]["broken"]


def test_the_drill_is_not_the_worked_fault_and_its_choices_are_commands():
    # section 5 teaches on another case (a distance, nccl#1151); nothing before the drill quotes the drill's case
    before = "\n".join(v for k, v in _cells().items() if k < "c017")
    assert "1676" not in before and "180 GB/s" not in before
    outputs = "\n".join(s.get("output", "") for s in DATA["drill"]["steps"].values())
    for block in re.findall(r"```\n(.*?)```", before, flags=re.S):
        for line in filter(None, (ln.strip() for ln in block.splitlines())):
            assert line not in outputs, line
    labels = [label for label, _v in ch.drill_box().controls["step"].options[1:]]
    assert labels == [s["command"] for s in DATA["drill"]["steps"].values()]
    assert "hw_counters" in labels[-1]


def test_the_reference_pages_speak_to_learners():
    for page in ("runbook-reference.md", "runbook-roce-qos.md", "runbook-ib-ar-sharp.md"):
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        assert "nvcourse/" not in text and "runbook.toml" not in text, page
        assert not re.search(r"\(`(roce|pfc|ib)_[a-z_]+`\)", text), page
    assert "chapter 06d" not in DATA["signatures"]["no_peermem"]["fix"]
    assert "its form in each version: the reference page linked in section 5)" in (
        DATA["signatures"]["no_peermem"]["fix"])


def test_words_are_defined_or_linked_where_first_met():
    cells = {k: _flat(v) for k, v in _cells().items()}
    assert "the [bit error rate](../docs/glossary.md#fec) before FEC" in cells["c011c"]
    assert "[HDR and NDR](../docs/glossary.md#ib-generations)" in cells["c011c"]
    assert "[UFM](../docs/glossary.md#ufm)" in cells["c011c"]
    assert "A **subnet manager** (a service on a switch or a host) configures every port" in cells["c011c"]
    # the Xid classes and the IOMMU's VM case moved to §10 (the reference section): defined there, where first met
    assert "**ECC** (the error-correcting code on GPU memory)" in cells["c06dref"]
    assert ("**[ATS](../docs/glossary.md#ats)** (Address Translation Services): the device caches its own address "
            "translations") in cells["c06dref"]
    before = " ".join(v for k, v in cells.items() if k != "c06dref").split("## Key points")[0]
    assert not re.search(r"\b(ECC|ATS)\b", before)
    assert ("built on **[Libfabric](../docs/glossary.md#libfabric)** (an open library with one interface over many "
            "kinds of network)") in cells["c015"]
    assert "[rail](../docs/glossary.md#rail)" in cells["c019"]
    # the data-side words, defined where the "in full" cards show them
    assert "SR-IOV virtual functions (the NIC shows itself as several PCIe devices" in (
        DATA["cloud"]["azure_ib"]["transport"])
    assert "incast (many senders to one receiver at once)" in DATA["signatures"]["pfc_storm"]["healthy"]
    assert "NVLink-C2C, the chip-to-chip link between Grace and the GPU" in (
        DATA["signatures"]["gdr_distance"]["nccl_tests"])
    assert "SM clock (the clock of the GPU's compute cores)" in DATA["signatures"]["clocks_power"]["healthy"]
    # ATS and Libfabric are explained where the glossary says: before the cards and table that use them
    order = [c["id"] for c in json.loads((ROOT / "notebooks" / NB).read_text(encoding="utf-8"))["cells"]]
    assert order.index("c005") < order.index("c008") and order.index("c015") < order.index("c016")
