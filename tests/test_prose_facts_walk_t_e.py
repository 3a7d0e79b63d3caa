"""Chapter 08b, a fresh learner's walkthrough: what the drill's verdict cites is on screen, the noisy-neighbour
readout's absolute rate says which rate it is, and the words a learner meets first (PCP, ECC) are defined there.
Each test reads the sentence or readout and recomputes what the dashboard shows across its controls."""

import json
import re
from functools import cache
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from nvcourse import catalog
from nvcourse.chapters import ch08b_security_and_observability as ch
from nvcourse.observability import counters, drill

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "08b_security_and_observability.ipynb"


@cache
def _cell(cid: str) -> str:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return next("".join(c["source"]) for c in nb["cells"] if c["id"] == cid)


FLAPS = [(i, s) for s in range(12) for i in drill.INCIDENTS if drill.incident(i, s).fault == "flapping link"]


@pytest.mark.parametrize(("name", "seed"), FLAPS)
def test_the_drill_shows_every_log_line_the_flap_verdict_cites(name, seed):
    run = drill.incident(name, seed)
    # the verdict: "isolated step-time spikes at the same steps as the 'link down' log lines"; the counters:
    # LinkDownedCounter N. The log window must show a 'link down' line at every spiking step, N of them.
    ev = drill.verdict(run, run.fault, run.component).evidence
    assert any("'link down' log lines" in e for e in ev)
    _, text = ch.drill_view(run)
    logs = text.split("</b><div style='font-family:monospace", 1)[1]
    down_steps = {int(m) for m in re.findall(r"\[step (\d+)\][^<]*link down", logs)}
    assert len(down_steps) == run.ports[run.component]["LinkDownedCounter"]
    spikes = {k for k in range(run.step_s.size) if run.step_s[k] > 1.5 * run.baseline_s}
    assert spikes and spikes == down_steps


def test_the_noisy_neighbour_readout_names_line_rate_and_the_achievable_rate_other_chapters_use():
    # 07c/08/09 quote the 400 Gb/s NIC at its achievable 47 GB/s; this readout's 50.0 is its line rate. Both
    # columns are shown and labelled, in every state of the controls, and scale alike.
    nic = catalog.get_link(catalog.get_system("dgx-h100").nic_link)
    dash = ch.noisy_neighbour_dashboard()
    for qos in ("none", "ets", "strict"):
        for share in (0.1, 0.9):
            for duty in (0.0, 1.0):
                for exp in (20, 28, 32):
                    fig, text = dash._render(qos=qos, share=share, duty=duty, nbytes=2**exp)
                    plt.close(fig)
                    head = re.search(r"network rate per victim flow.*?</thead>", text).group(0)
                    assert "GB/s, line rate" in head and "GB/s, achievable" in head
                    alone = re.search(r"<td[^>]*>alone</td><td[^>]*>([\d.]+)</td><td[^>]*>([\d.]+)</td>", text)
                    assert float(alone.group(1)) == pytest.approx(nic.line_GBps_dir, abs=0.05)
                    assert float(alone.group(2)) == pytest.approx(nic.achievable_GBps_dir, abs=0.05)
    assert round(nic.achievable_GBps_dir) == 47  # the figure chapters 07c, 08 and 09 print for this NIC
    code = _cell("c013")
    assert "ch.noisy_neighbour_lines(" in code
    assert "GB/s line rate (alone {alone})" in Path(ch.__file__).read_text(encoding="utf-8")


def test_pcp_and_ecc_are_spelled_out_where_a_learner_first_meets_them():
    ids = ch.ethernet_ids_table().data
    assert "priority code point (PCP)" in ids and "priority (PCP)" not in ids
    drill_intro = re.sub(r"\s+", " ", _cell("c029"))
    assert ("one corrected ECC error on a GPU (`ecc_sbe`: a single-bit error that the memory's error-correcting "
            "code, ECC, fixed)") in drill_intro
    words = ch._signal_words_html()
    assert "<b>ECC</b>, the error-correcting code on GPU memory" in words and "ecc_sbe" in words
    # the drill's GPU table shows that very counter name, so the word list explains what the learner reads there
    run = next(drill.incident(i, 0) for i in drill.INCIDENTS)
    assert any("ecc_sbe" in row for row in run.gpus.values())


def test_the_drill_fault_labels_are_translated_and_the_values_stay_the_english_keys():
    dash = ch.drill_dashboard()
    labels = drill.fault_labels()
    assert set(labels) == set(drill.FAULTS) and all(labels[f] == f for f in drill.FAULTS)  # English: same words
    options = dash.controls["fault"].options
    assert [v for _label, v in options][1:] == list(drill.FAULTS)
    assert [label for label, _v in options][1:] == [labels[f] for f in drill.FAULTS]


def test_the_saturated_counter_print_is_built_in_the_chapter_and_reads_as_before():
    assert "print(ch.counter_delta_text(d))" in _cell("c026")
    top = (1 << counters.counter_bits("LinkDownedCounter")) - 1
    assert ch.counter_delta_text(counters.counter_delta("LinkDownedCounter", 3, top)) == (
        f"LinkDowned grew by {top - 3} or more (saturated: reset and read again)")
    assert ch.counter_delta_text(counters.counter_delta("LinkDownedCounter", 3, 6)) == "LinkDowned grew by 3"
