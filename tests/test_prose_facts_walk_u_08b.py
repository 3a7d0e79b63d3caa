"""Chapter 08b after a density pass: every ``## `` section opens with its question, the link and error-counter
alert rules moved from §4.1 to the reference section (6.2), §1.4's "what this model leaves out" is one paragraph,
and §1.3's tools table leaves the tag sizes to the table the data prints. Each sentence that states a number, an
order or a trend is recomputed here from the model over its dashboard's range. Markdown line breaks read as spaces."""

import json
import re
from functools import cache
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from nvcourse import isolation
from nvcourse.chapters import ch08b_security_and_observability as ch
from nvcourse.observability import counters

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "08b_security_and_observability.ipynb"
SIZES = range(20, 33)  # the noisy-neighbour size slider: 1 MiB .. 4 GiB
DUTIES = [round(0.1 * i, 1) for i in range(1, 11)]  # the neighbour-duty slider, while the neighbour sends


@cache
def _nb() -> list[dict]:
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def cell(cid: str) -> str:
    return next(re.sub(r"\s+", " ", "".join(c["source"])) for c in _nb() if c["id"] == cid)


def order() -> list[str]:
    return [c["id"] for c in _nb()]


def test_every_numbered_section_opens_with_its_question():
    md = "\n".join("".join(c["source"]) for c in _nb() if c["cell_type"] == "markdown")
    sections = re.split(r"^(?=## \d)", md, flags=re.M)[1:]
    assert [s.split(".", 1)[0] for s in sections] == [f"## {n}" for n in range(1, 7)]
    for s in sections:
        body = [line for line in s.splitlines()[1:] if line.strip()]
        assert body[0].startswith("*The question:*"), s.splitlines()[0]


def test_section_1_answers_its_question_before_the_subsections():
    text = cell("c002")
    answer = text.split("### 1.1")[0]
    assert "Partitions decide who can talk to whom; they do not divide bandwidth." in answer
    # the tenancy readout says the same in every state: full per-GPU bandwidth, reach lost
    dash = ch.tenancy_dashboard()
    for trays, exp in ((1, 16), (9, 26), (17, 32)):
        fig, out = dash._render(trays_a=trays, nbytes=2**exp)
        plt.close(fig)
        assert "keeps its GPUs' full NVLink bandwidth" in out and "loses is reach" in out


def test_a_split_rack_tenant_takes_the_racks_time_for_1_gib():
    # §1.1: "so in the model a 1 GiB all-reduce takes as long on 36 GPUs as on 72"
    assert "so in the model a 1 GiB all-reduce takes as long on 36 GPUs as on 72" in cell("c006")
    whole = isolation.nvl72_split([18], 2**30)[0]
    for t in isolation.nvl72_split([9, 9], 2**30):
        assert t.gpus == 36 and t.time_s == pytest.approx(whole.time_s, rel=1e-3)
        assert t.busbw_GBps < whole.busbw_GBps  # "only the printed bus bandwidth differs"


@pytest.mark.parametrize("exp", SIZES)
def test_why_not_8x_holds_at_every_size(exp):
    # §1.4: each victim flow gets 1/8 of the link; the NVLink steps "at large sizes, take about half its time
    # alone ... at most about 1 + 7/2 = 4.5×. At 1 MiB latency and NVLink dominate, so it barely moves."
    text = cell("c014")
    assert "each victim flow gets 1/8 of the link" in text
    assert "at large sizes, take about half its time alone" in text and "at most about 1 + 7/2 = 4.5×" in text
    assert "At 1 MiB latency and NVLink dominate, so it barely moves." in text
    for duty in DUTIES:
        r = isolation.noisy_neighbour(2**exp, qos="none", duty=duty)
        assert r.alone_rate_GBps / r.shared_rate_GBps == pytest.approx(8)
        assert r.slowdown < 1 + 7 / 2
    full = isolation.noisy_neighbour(2**exp, qos="none")
    network = (full.slowdown - 1) / 7  # the share of the victim's time alone that runs 8× slower
    if exp >= 30:  # large sizes: the network part is about half, so is the NVLink part
        assert 0.45 < network < 0.5
    if exp == 20:
        assert full.slowdown < 1.2  # 1 MiB "barely moves"


@pytest.mark.parametrize("exp", SIZES)
def test_per_port_sharing_keeps_half_the_link_and_is_the_readouts_lower_end(exp):
    # §1.4 "What this model leaves out": InfiniBand's per-port sharing "so the victim keeps about half the link:
    # the dashboard's lower end"; the NCCL remark names the ×4.45 the table prints at 4 GiB
    text = cell("c014")
    assert "so the victim keeps about half the link: the dashboard's lower end" in text
    assert "What this model leaves out" in text and "for a real NCCL job ×4.45 likely understates" in text
    assert f"{isolation.noisy_neighbour(2**32, qos='none').slowdown:.2f}" == "4.45"
    dash = ch.noisy_neighbour_dashboard()
    for duty in (0.5, 1.0):
        port = isolation.noisy_neighbour(2**exp, qos="ets", victim_share=0.5, duty=duty)
        flow = isolation.noisy_neighbour(2**exp, qos="none", duty=duty)
        assert port.shared_rate_GBps == pytest.approx(port.alone_rate_GBps / 2)
        assert port.slowdown <= flow.slowdown
        fig, out = dash._render(qos="none", share=0.5, duty=duty, nbytes=2**exp)
        plt.close(fig)
        assert f"×{port.slowdown:.2f}–×{flow.slowdown:.2f}" in out  # the readout's range, lower end first


def test_the_ethernet_tools_table_leaves_the_tag_sizes_to_the_data():
    # a figure appears once: the bit counts are printed by ethernet_ids_table, not retyped in §1.3's Markdown
    text = cell("c010")
    tools = text.split("### 1.3")[1]
    assert not re.search(r"\b(12|24)[- ]bits?\b", tools)
    eth = isolation.raw()["ethernet"]
    ids = ch.ethernet_ids_table().data
    assert f"{eth['vlan_id_bits']} bits" in ids and f"{eth['vxlan_vni_bits']} bits" in ids
    # "the tags below tell thousands to millions of tenants apart ... a link has only eight classes to share"
    assert "tell thousands to millions of tenants apart" in tools and "only eight classes to share" in tools
    assert 1_000 <= eth["vlan_ids_usable"] < 1_000_000 and 2 ** eth["vxlan_vni_bits"] >= 1_000_000
    assert eth["priorities"] == 8 == 2 ** eth["pcp_bits"]
    assert "| **QoS class** | one of 8 priorities" in tools


def test_the_link_and_error_counter_rules_live_in_the_reference_section():
    ids = order()
    assert ids.index("c034") < ids.index("c025") < ids.index("c033")  # 6.1, then 6.2, then the key points
    ref = cell("c025")
    assert ref.startswith("### 6.2 Link and error-counter alerts (section 4)")
    assert "**Know what a counter has already forgiven.**" in ref and "alert on **any** width or speed" in ref
    assert "A link that trains at half width" not in cell("c029") and "Error counters are different" not in cell("c029")
    assert "section 6.2" in cell("c025h")  # section 4 says where they went


@pytest.mark.parametrize("c", [0.001, 0.05, 0.0999, 0.1001, 0.3, 0.9])
def test_half_width_sentence_in_6_2_holds_for_every_share(c):
    # 6.2: a half-width link "is past the tolerable loss of any job whose bandwidth-bound share $c$ is above the
    # 10 % target ($f^* < 1/2$ exactly when $c > s$)"
    assert "$c$ is above the 10 % target ($f^* < 1/2$ exactly when $c > s$)" in cell("c025")
    s = counters.alert_policy().max_job_slowdown
    assert s == pytest.approx(0.10)
    assert (counters.alert_thresholds(c).tolerable_loss < 0.5) == (c > s)


def test_key_point_on_counters_is_the_alert_rule():
    # "page on flaps and on symbol errors that keep rising; the raw pre-FEC BER is a margin to trend"
    text = cell("c033")
    assert "page on flaps and on symbol errors that keep rising; the raw pre-FEC BER is a margin to trend" in text
    rows = {r[0]: r for r in counters.alert_thresholds(0.3).rows()}
    assert rows["SymbolError growth on a port"][2] and rows["LinkDowned (flaps) on a port"][2]  # both have a page
    ber = rows["raw or effective BER on a port (mlxlink -c)"]
    assert ber[1] == "rising trend" and ber[2] == "" and "do not page" in ber[3]


def test_the_drill_defines_raw_ber_where_it_first_appears():
    # 6.2 (which spells out raw BER too) now comes after §5, so the drill's intro defines it
    drill = cell("c029")
    assert "raw bit error rate (raw BER: errors FEC is correcting)" in drill
    ids = order()
    first = next(i for i in ids if "raw BER" in cell(i))
    assert first == "c029"
    fec = next(i for i in ids if "FEC" in cell(i))
    assert "[FEC](../docs/glossary.md#fec)" in cell(fec)


def test_check_yourself_2_half_the_time_is_nvlink_at_large_sizes():
    # "at large sizes, about half of the hierarchical all-reduce's time is NVLink steps the neighbour does not share"
    assert ("at large sizes, about half of the hierarchical all-reduce's time is NVLink steps the neighbour does not "
            "share") in cell("c033")
    for exp in (30, 31, 32):
        r = isolation.noisy_neighbour(2**exp, qos="none")
        nvlink = 1 - (r.slowdown - 1) / 7
        assert 0.5 <= nvlink < 0.55
