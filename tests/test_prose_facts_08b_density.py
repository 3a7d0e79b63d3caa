"""Chapter 08b one idea at a time: §1.2's three keys each get their own paragraph, §1.3's Ethernet tools and §4's
two error readings are short tables, and the full signals table spells out its own abbreviations (they moved there
from the reference section, so they are kept, not lost). Markdown line breaks read as spaces."""

import json
import re
from functools import cache
from pathlib import Path

from nvcourse.chapters import ch08b_security_and_observability as ch
from nvcourse.observability import counters

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "08b_security_and_observability.ipynb"


@cache
def raw(cid: str) -> str:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return next("".join(c["source"]) for c in nb["cells"] if c["id"] == cid)


def flat(cid: str) -> str:
    return re.sub(r"\s+", " ", raw(cid))


def test_each_infiniband_key_has_its_own_paragraph():
    paragraphs = [re.sub(r"\s+", " ", p) for p in raw("c010").split("\n\n")]
    m_key = next(p for p in paragraphs if p.startswith("**The M_Key guards the settings.**"))
    r_key = next(p for p in paragraphs if p.startswith("**The R_Key guards memory.**"))
    assert "R_Key" not in m_key and "M_Key" not in r_key
    assert "sent on the [queue pair](../docs/glossary.md#queue-pair) reserved for subnet management" in m_key
    assert "[glossary](../docs/glossary.md#m-key)" in m_key
    # the P_Key itself and its membership bit are two paragraphs of the section's first cell
    pkey = [p for p in raw("c008").split("\n\n") if "partition" in p]
    assert any("16-bit **partition keys**" in p and "full" not in p for p in pkey)
    assert any("**full** or **limited** membership" in p for p in pkey)


def test_the_ethernet_tools_table_has_one_job_per_row():
    text = flat("c010")
    for row in ("| keep tenants' traffic apart | **VLAN** or **VXLAN** segment |",
                "| keep tenants' routes apart | **VRF** |",
                "| drop what should not cross | **ACLs** (access control lists",
                "| decide who gets a congested link | **QoS class** | one of 8 priorities"):
        assert row in text, row


def test_the_two_error_readings_agree_with_the_signals_table():
    text = flat("c025")
    assert ("| errors *before* FEC, the ones it corrected; every port has some | trend them: they are the link's "
            "margin |") in text
    assert "| `SymbolErrorCounter` | errors that **no** physical-layer mechanism" in text
    assert "a count that keeps rising is a real fault" in text
    reading = next(s for s in counters.signals() if s["fault"] == "flapping link")["reading"]
    assert "to trend, not to page on" in reading and "judged as a rate" in reading  # the same rule, in the toggle


def test_the_full_signals_table_spells_out_its_abbreviations():
    _short, full = ch.signals_table().data.split("<details>")
    words = full.split("</table>")[-1]  # under the full table, inside the toggle
    for term, says in (("GSP", "the GPU System Processor"), ("RMA", "return merchandise authorisation"),
                       ("ICRC/VCRC", "the two checksums of an InfiniBand packet")):
        assert f"<li><b>{term}</b>, {says}" in words, term
    assert "are behind the toggle" in flat("c023") and "(GSP, RMA, ICRC/VCRC;" in flat("c023")
    assert "6.2" not in flat("c023") and "### 6.2" not in raw("c034")


def test_the_neighbour_readout_shows_its_numbers_first_and_folds_the_why():
    dash = ch.noisy_neighbour_dashboard()
    for qos in ("none", "ets", "strict"):
        for duty in (0.0, 0.5, 1.0):
            _fig, text = dash._render(qos=qos, share=0.5, duty=duty, nbytes=2**28)
            shown = re.sub(r"<details>.*?</details>", "", text)
            # visible: the slowdown, the two rates, and at most the one-line comparison or share note
            assert shown.startswith("<p>Victim all-reduce: <b>×") and shown.count("<tr>") == 3
            assert "hierarchical" not in shown and "Range under the two sharing rules" not in shown
            folded = "".join(re.findall(r"<details>.*?</details>", text))
            assert ("Range under the two sharing rules" in folded) == (qos == "none")
            assert ("the all-reduce is hierarchical" in folded) == (qos != "strict" and duty > 0)
