"""Chapter 06b's module: the paste boxes answer every shipped sample and never show a traceback."""

from nvcourse.chapters import ch06b_nccl_in_practice as ch
from nvcourse.nccl import diagnose


def test_nccl_tests_box_answers_every_sample_and_explains_bad_paste():
    box = ch.nccl_tests_box()
    for label in ch.SAMPLES:
        box.controls["sample"].value = label
        assert box.last_error is None, label
        assert "<b>op</b>" in box.readout.value
    box.controls["text"].value = "not an nccl-tests output"
    assert box.last_error and "expected result rows" in box.last_error
    box.controls["text"].value = ch.sample_text("a100_2nodes_16ranks_oke.txt")
    box.controls["system"].value = "dgx-h100"  # forcing another system still answers (its model)
    assert box.last_error is None and "dgx-h100" in box.readout.value


def test_ncclog_box_answers_every_sample_and_explains_bad_paste():
    box = ch.ncclog_box()
    for label in ch.LOGS:
        box.controls["sample"].value = label
        assert box.last_error is None, label
    box.controls["text"].value = "nothing from NCCL here"
    assert "expected NCCL_DEBUG=INFO lines" in box.last_error


def test_report_escapes_pasted_text():
    run = ch.read_sample("h100_8gpu_single_node_markdown_indented.txt")
    run.ranks[0]["gpu"] = "<b>x</b>"
    html = ch.report_html(run, diagnose(run))
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_tables_and_affinity():
    assert "NCCL_NET_GDR_LEVEL" in ch.env_table_html() and "-G, --cudagraph" in ch.flags_table_html()
    res, fig, legend = ch.hopper_topology()
    table = ch.affinity_table_html(res)
    assert "mlx5_1" in table and "0-47,96-143" in table  # GPU0's PIX NIC and CPU affinity in the topo file
    assert ch.in_place_gap(ch.read_sample("2 nodes x 8 H100 (InfiniBand)")) < 0.05
