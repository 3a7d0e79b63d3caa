"""Chapter 06c: every fact has a source, the Llama 3 numbers are consistent, the lab shows the recorded run."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from nvcourse.chapters import ch06c_multinode_lab as ch  # noqa: E402


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
