"""Chapter 06d and its reference pages after a fresh learner's walkthrough (R2): each sentence it found to contradict
the reader, the drill's source, another chapter or the chapter's own tables now agrees with them, and each word it
met before its definition is defined or linked where it is first used.

Markdown cannot compute: the sentence must appear in the chapter as written (line breaks read as spaces).
"""

import json
import re

from test_prose_facts_core import ROOT

from nvcourse import _data
from nvcourse.chapters import ch06d_runbook as ch
from nvcourse.nccl.ncclog import read_text

NB = "06d_bringup_and_fault_runbook.ipynb"
DATA = _data.load("runbook")
FIXTURES = ROOT / "tests" / "fixtures" / "runbook"


def _md() -> str:
    nb = json.loads((ROOT / "notebooks" / NB).read_text(encoding="utf-8"))
    return " ".join(" ".join("".join(c["source"]).split()) for c in nb["cells"] if c["cell_type"] == "markdown")


def _flat(s: str) -> str:
    return " ".join(s.split())


def test_the_reader_treats_roce_drop_counters_as_the_chapter_says():
    # section 6: one reading is a reading, two a rise; the storm counters are the one exception, and say why
    text = _md()
    assert "one reading is reported as a reading, two readings as a rise (the stall counters excepted)" in text
    assert "the NIC stalls only when something is wrong, so one reading above zero is already a fault" in text
    body = (FIXTURES / "roce_lossy_hw_counters_nccl394.txt").read_text()
    once = read_text(body)
    assert "roce_lossy" not in [s["signature"] for s in once.signatures]
    assert any("local_ack_timeout_err 91316" in n for n in once.notes)
    line = "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence:5\n"
    assert read_text(line + line).signatures == []
    assert [s["signature"] for s in read_text(line + line.replace(":5", ":7")).signatures] == ["roce_lossy"]
    storm = read_text("     tx_pause_storm_warning_events: 1\n")
    assert [s["signature"] for s in storm.signatures] == ["pfc_storm"]


def test_the_drill_quotes_the_lines_that_carry_its_source_s_fault_and_links_it():
    # only the drill's own case shows a fault; the other outputs are healthy and labelled (test_prose_facts_walk_u_w3)
    assert ("an excerpt of this case's output where its reporter posted it, otherwise what a healthy cluster shows, "
            "labelled as such") in " ".join(_md().split())
    for key, step in DATA["drill"]["steps"].items():
        if "fixture" not in step:
            continue
        url = DATA["sources"][step["src"]]["url"]
        assert url in (FIXTURES / step["fixture"]).read_text().splitlines()[0], key
        assert f'href="{url}"' in ch.drill_step_html(key), key


def test_gdr_needs_the_pcie_settings_too_and_the_last_key_point_says_transport():
    text = _md()
    assert ("Beyond the PCIe settings of section 3 (ACS, IOMMU), it needs two things: a peer-memory path and a "
            "short PCIe path.") in text
    assert "On clouds, the log shows the transport:" in text and "the log shows the plugin" not in text


def test_symbol_errors_stay_at_or_near_zero_as_the_rule_table_and_08b_say():
    ib = _flat((ROOT / "docs" / "runbook-ib-ar-sharp.md").read_text(encoding="utf-8"))
    text = _md()
    assert "on a healthy link they stay at or near zero; a count that keeps rising is a fault" in text
    assert "A healthy link keeps symbol errors at or near zero; a count that keeps rising" in ib
    assert "stay at zero" not in text and "at zero;" not in ib
    assert "stay at or near zero" in DATA["signatures"]["ib_link_ber"]["cause"]


def test_06b_exercise_6_names_both_pairs_of_levels_of_nccl_tests_106():
    nb = json.loads((ROOT / "solutions" / "06b_nccl_in_practice_exercises.ipynb").read_text(encoding="utf-8"))
    text = _flat(" ".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"))
    assert "the reporter's rough ones" in text and "the table in the thread reads about 88 and 49" in text
    cases = _data.load("nccl_cases")["cases"]["slow_rank"]
    assert "80" in json.dumps(cases) and "40" in json.dumps(cases)


def test_words_are_defined_where_first_used():
    text = _md()
    for phrase in ("**page** (alert the on-call engineer, day or night)", "**Draining** 644 alone (taking it out "
                   "of the scheduler's pool of nodes)", "[`P2C`](../docs/glossary.md#p2c); Grace is NVIDIA's Arm CPU",
                   "v1 is plain Ethernet, one network segment", "not a **link-local** `fe80::` one",
                   "[PFC](../docs/glossary.md#pfc-ecn) on one priority", "**launcher** (the tool that starts the ranks",
                   "**root port** (a PCIe port on the CPU itself)", "**NVLink domain** (the trays joined",
                   "Google's **TCPX** and **TCPXO** carry GPU data over TCP"):
        assert phrase in text, phrase
    # each is defined before (or at) its first use
    assert text.index("**page**") < text.index("do not page") if "do not page" in text else True
    assert text.index("**launcher**") <= text.index("launcher")
    assert text.index("**TCPX**") < text.index("## 9.")


def test_no_maintainer_material_repository_paths_or_bare_issue_numbers():
    text = _md()
    page = ch.sources_html()
    assert ">key<" not in page and "nccl-tests106<" not in page and "50310600" not in page.split("href=")[0]
    assert "Linux kernel, &#x27;iommu/vt-d" in page or "Linux kernel, 'iommu/vt-d" in page
    assert "[`docs/runbook-" not in text and "[`exercises/06d" not in text
    assert "one rule" not in text and "one rule" not in (ROOT / "docs" / "runbook-ib-ar-sharp.md").read_text()
    # the reader prints this fix outside the chapter: a section number must say which chapter it is in
    fix = DATA["signatures"]["roce_lossy"]["fix"]
    assert fix.count("section 6") == fix.count("chapter 06d section 6")
    for ref in ("janhq/jan#183", "NVIDIA/nccl#1537", "nccl-tests#245"):
        assert re.search(r"\[" + re.escape(ref) + r"\]\(https://", text), ref


def test_the_affinity_sentence_the_formula_and_check_yourself_5():
    text = _md()
    assert "If you find `NCCL_IGNORE_CPU_AFFINITY=1` set, it is a fix, not a leftover to remove" in text
    assert "keeps (lanes × GT/s × encoding) as trained ÷ the same at its capability" in text
    assert round(ch.link_fraction(16, 16, 2.5, 16), 2) == 0.13
    assert "A missing distance line proves nothing: from NCCL 2.30.3 only `TRACE` prints it." in text
    assert "it needs `NET`, and from NCCL 2.30.3" not in text
