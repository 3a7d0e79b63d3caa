"""Chapter 06c: every fact has a source, the Llama 3 numbers are consistent, the lab shows the recorded run."""

from __future__ import annotations

from nvcourse.chapters import ch06c_multinode_lab as ch


def test_every_fact_names_known_sources():
    d = ch.facts()
    assert len(d["facts"]) >= 10
    for f in d["facts"]:
        assert f["src"] and all(s in d["sources"] and d["sources"][s]["url"].startswith("https://") for s in f["src"])
    assert set(d["llama3_roce"]["src"].values()) == {"llama3"}


def test_llama3_pod_arithmetic():
    c = ch.facts()["llama3_roce"]
    assert c["racks_per_pod"] * c["gpus_per_rack"] == c["gpus_per_pod"]  # 192 racks x 16 GPUs (paper's figures)
    assert "24,576 GPUs" in ch.llama3_case() and "$" not in ch.facts_table()


def test_lab_views_render_the_recorded_run():
    rec = ch.recorded()
    table = ch.lab_table(rec)
    assert table.count("<tr>") == 1 + len(rec["hier"]["rows"]) and "median |error|" in table
    assert "max-min" in ch.contention_html(rec) and "slowest edge" in ch.straggler_html(rec)
    dash = ch.lab_dashboard(rec)
    assert dash.last_error is None
    dash.controls["nodes"].value = 16
    assert dash.last_error is None and "1.88" in dash.readout.value  # 2(P-1)/P with P = 32
    qp = ch.ecmp_qp_dashboard()
    assert qp.last_error is None and "with 4" in qp.readout.value


def test_checkers_accept_the_model_and_name_typical_mistakes():
    from nvcourse.checks import ch06c as check
    from nvcourse.cluster import model as cm

    assert check.flat_ring_time(cm.flat_ring_s).passed
    assert check.hier_network_time(cm.hier_network_s).passed
    assert check.payload_rate(lambda bits: cm.payload_Bps(bits / 8)).passed
    wrong = check.flat_ring_time(lambda S, n, r, a, b: 2 * (n * r - 1) / (n * r) * S / b)
    assert not wrong.passed and "α term is missing" in wrong.message
    bits = check.payload_rate(lambda x: x * 1448 / 1514)
    assert not bits.passed and "divide the rate by 8" in bits.message

    def stub(*args):
        raise NotImplementedError()

    assert check.hier_network_time(stub).status == "todo"


def test_06c_defines_the_words_its_fact_tables_use():
    import json
    from pathlib import Path

    nb = Path(__file__).resolve().parents[1] / "notebooks" / "06c_multinode_lab.ipynb"
    md = {c["id"]: "".join(c["source"]) for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]}
    assert "queue pairs (QPs: a connection's send and receive queues" in md["a10209e9"]
    assert "glossary.md#queue-pair" in md["a10209e9"]
    assert "go-back-N: after a lost packet the sender resends it and every packet sent after it" in md["a10209e9"]
    routing = " ".join(md["ab0d5c40"].split())
    assert "destination LID, the local identifier the subnet manager gives each port" in routing
    assert "LMC, LID mask control, a port gets 2^LMC LIDs" in routing
    assert "*5-tuple*: source and destination IP address, source and destination port, protocol" in routing
