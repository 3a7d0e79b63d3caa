"""Chapter 06d after the density pass (walkthrough U): every numbered section opens with its question and a short
answer, each count or number the answers state is computed here from the runbook, and the edge cases moved to the
reference section (§10) live there once."""

import json
import re

from test_prose_facts_core import ROOT

from nvcourse.chapters import ch06d_runbook as ch
from nvcourse.devtools import reading_time
from nvcourse.runbook import signatures

NB = "06d_bringup_and_fault_runbook.ipynb"
WORDS_BEFORE = 3921  # the chapter's Markdown words before the density pass (reading 43 min, core 0)


def _cells() -> list[dict]:
    return json.loads((ROOT / "notebooks" / NB).read_text(encoding="utf-8"))["cells"]


def _md() -> str:
    return "\n".join("".join(c["source"]) for c in _cells() if c["cell_type"] == "markdown")


def _flat(s: str) -> str:
    return " ".join(s.split())


def _sections() -> dict[int, str]:
    """Each ``## N.`` section's Markdown, keyed by N (code cells left out)."""
    parts = re.split(r"^## ", _md(), flags=re.M)
    return {int(m.group(1)): p for p in parts if (m := re.match(r"(\d+)\. ", p))}


def _paragraphs(section: str) -> list[str]:
    return [p.strip() for p in section.split("\n\n") if p.strip()]


def _sentences(paragraph: str) -> int:
    text = re.sub(r"`[^`]*`|\([^()]*\)", "", _flat(paragraph))  # code and asides hold no sentence ends
    return len(re.findall(r"[.!?:](?:\s|$)", text.rstrip(":") + " ")) if text else 0


def test_the_chapter_reads_no_longer_than_before():
    row = reading_time.measure_chapter(ROOT / "notebooks" / NB)
    assert row.words < WORDS_BEFORE and row.reading_min <= 43 and row.core_min == 0


def test_every_layer_section_opens_with_its_question_then_a_short_answer():
    sections = _sections()
    assert sorted(sections) == list(range(1, 11))
    for n in range(1, 9):
        paras = _paragraphs(sections[n])
        assert paras[1].startswith("This section answers:") and paras[1].endswith("?"), n
        answer = paras[2]
        assert not answer.startswith(("|", "#", "```", "-")), n
        assert _sentences(answer.split("\n\n")[0].replace(": ", " ")) <= 4, (n, answer)


def test_the_counts_the_answers_state_are_the_runbooks():
    sections = {n: _flat(s) for n, s in _sections().items()}
    assert "Three things make one host slower than its peers" in sections[2]
    assert "The table gives one command for each." in sections[2] and len(signatures("host")) == 3
    assert "Three settings decide it: ACS redirect bits" in sections[3]
    pcie = [s["id"] for s in signatures("pcie")]
    assert len(pcie) == 3 and {"acs_redirect", "iommu_translation"} <= set(pcie)
    # §6: "three things right", numbered once each
    assert "RoCE needs three things right" in sections[6]
    assert [n for n in ("**1. ", "**2. ", "**3. ", "**4. ") if n in sections[6]] == ["**1. ", "**2. ", "**3. "]


def test_the_link_fraction_sentences_hold():
    kept = ch.link_fraction(16.0, 16, 2.5, 16)
    assert abs(kept - 1 / 8) < 0.01 and round(2.5 / 16 * 100) == 16 and abs(kept - 2.5 / 16) > 0.02
    text = _flat(_md())
    assert "About an eighth, not the 2.5/16 = 16 % the transfer rates alone suggest." in text
    assert "Gen4 x16 trained at 2.5 GT/s keeps about an eighth (section 3)." in text
    assert "~13 %" not in text  # the figure is printed by the module, not retyped


def test_the_gdr_answer_matches_its_table():
    # §5's answer: the channel lines say whether GDR is in use; when none does, the NIC line names the missing piece
    text = _flat(_sections()[5])
    assert "The log's channel lines say whether GDR is in use; when none does, the NIC line says which" in text
    rows = {r[1]: r[2] for r in (line.split(" | ") for line in _sections()[5].splitlines())
            if r[0].startswith("| none ends")}
    assert "peer-memory path" in rows["**Disabled**"] and "a distance" in rows["Enabled"]
    assert rows["none"].startswith("not known yet")


def test_the_cloud_answer_points_to_the_column_that_names_the_log():
    text = _flat(_sections()[8])
    assert "the plugin decides which checks apply, and the table's last column shows how the log names it" in text
    head = re.findall(r"<th[^>]*>([^<]+)</th>", ch.cloud_html().split("</thead>")[0])
    assert head[-1] == "how the log shows it"


def test_each_dashboard_and_computed_readout_has_its_prediction_first():
    cells = _cells()
    ids = [c["id"] for c in cells]
    before = {cid: "".join(cells[ids.index(cid) - 1]["source"]) for cid in ("c006", "c018")}
    assert before["c006"].rstrip().split("\n\n")[-1].startswith("**Predict:**")
    assert "**Predict first:**" in before["c018"].split("\n\n")[-1]


MOVED = ("**launcher** (the tool that starts the ranks", "If you find `NCCL_IGNORE_CPU_AFFINITY=1` set",
         "**ECC** (the error-correcting code on GPU memory)", "(`iommu=pt` on the kernel command line)",
         "\"DMA-BUF is available on GPU device 0\"", "a log taken with the default subsystems never has it",
         "a NIC behind a Grace CPU ([`P2C`]", "Pause frames on the lossless priority are normal",
         "so one reading above zero is already a fault", "It reports any rise, however small",
         "[InfiniBand adaptive routing and SHARP](../docs/runbook-ib-ar-sharp.md)")


def test_the_edge_cases_moved_to_the_reference_section_once():
    sections = _sections()
    ref = _flat(sections[10])
    assert ref.startswith("10. Reference: the fine print of sections 2, 3, 5 and 6")
    rest = _flat(" ".join(s for n, s in sections.items() if n != 10)) + _flat(_md().split("## Key points")[1])
    for phrase in MOVED:
        assert phrase in ref and phrase not in rest, phrase
    md = _md()
    assert md.index("## 9. ") < md.index("## 10. ") < md.index("## Key points") < md.index("## Check yourself")
    # each section that lost detail says where it went
    for n in (2, 3, 5, 6):
        assert "section 10" in _flat(sections[n]), n
