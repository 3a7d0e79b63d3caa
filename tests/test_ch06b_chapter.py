"""Chapter 06b's module: the paste boxes answer every shipped sample and never show a traceback."""

import re

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
    box.controls["sample"].value = "H20 node: the topology search's ring graph, crossNic 1"
    assert "ring: 4 channels x 24 GB/s = 96 GB/s (paths NVL/PIX)" in box.readout.value
    assert ">search graphs</td>" in box.readout.value and ">ring 4 x 24 GB/s</td>" in box.readout.value
    box.controls["text"].value = "nothing from NCCL here"
    assert "expected NCCL_DEBUG=INFO lines" in box.last_error
    assert box.plot.layout.display == "none"  # no figure, so no empty plot area under the readout


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


def test_paste_boxes_show_no_maintainer_notes_and_read_the_same():
    # the files' %% lines hold notes for maintainers ("stored-copy id ...; repository path not recovered");
    # the box keeps the output, the system line and a source URL only, and the readers report the same
    from nvcourse.nccl.ncclog import read_text as read_log
    from nvcourse.nccl.nccltests import read_text as read_tests

    for name in ch.SAMPLES:
        shown = ch.box_text(name)
        assert "stored-copy" not in shown and "not recovered" not in shown and "%% noise" not in shown
        assert read_tests(shown).rows == read_tests(ch.sample_text(name)).rows
    for name in ch.LOGS:
        assert read_log(ch.box_text(name)).to_json() == read_log(ch.sample_text(name)).to_json()
    assert all("%%" not in ch.box_text(name) for name in (*ch.SAMPLES, *ch.LOGS))
    caption = ch.sample_caption("8x H800: NVLS not available")
    assert "system: a container, 8x H800 on NVSwitch" in caption and "036260b61d3a" not in caption
    assert 'source: <a href="https://github.com/NVIDIA/nccl/issues/892">' in caption
    box = ch.nccl_tests_box()
    assert box.controls["text"].value == ch.box_text(next(iter(ch.SAMPLES)))


def test_log_table_says_nvls_in_words_and_aligns_left():
    from nvcourse.nccl.ncclog import read_text as read_log

    html = ch.log_html(read_log(ch.sample_text("8x H800: NVLS not available")))
    assert "NOT supported (0 channels" in html and "{'supported'" not in html and "text-align:right" not in html


def test_diagnosis_png_is_the_overlay_figure_and_the_verdicts_as_text():
    import io

    import matplotlib.pyplot as plt
    from figure_audit import figure_problems
    from PIL import Image

    from nvcourse.nccl import read_nccl_tests

    run = read_nccl_tests(ch.sample_text("a100_2nodes_16ranks_oke.txt"))
    diag = diagnose(run)
    open_before = plt.get_fignums()
    png, text = ch.diagnosis_png(run, diag)
    assert plt.get_fignums() == open_before  # closed: the inline backend does not show it a second time
    fig = ch.overlay_figure(run, diag)
    try:
        assert figure_problems(fig) == []
        w, h = fig.get_size_inches() * fig.dpi
        assert Image.open(io.BytesIO(png)).size == (round(w), round(h))
    finally:
        plt.close(fig)

    for line in text.splitlines():
        assert len(line) <= ch.TEXT_WIDTH or line.strip().startswith("case: "), line
    lines = re.sub(r"\n {12,}(?! |likely: |case: )", " ", text).splitlines()  # the wrapped lines joined again
    assert len(lines) == sum(1 + 2 * len(b["causes"]) for b in diag.bands) and lines
    assert text == ch.diagnosis_text(diag)
    for b in diag.bands:
        assert f"{b['band']:>10}: {ch._verdict(b)}" in lines and ch._verdict(b).startswith(b["verdict"])
        for c in b["causes"]:
            assert f"            likely: {c['cause']}" in lines and f"                    case: {c['source']}" in lines
    # the 2-node A100 sample's tree pushes busbw above the NICs' rate; the diagnosis says so with its numbers
    assert "busbw 238 GB/s is above the 192 GB/s" in " ".join(lines) and "nccl-tests/issues/196" in text


def test_report_of_a_rows_only_paste_has_no_raw_none_and_names_the_box_controls():
    from nvcourse.chapters import ch06b_nccl_in_practice as ch
    from nvcourse.nccl import diagnose, read_nccl_tests

    rows = "\n".join(line for line in ch.sample_text("a100_2nodes_16ranks_oke.txt").splitlines()
                     if line.strip() and line.strip()[0].isdigit())
    run = read_nccl_tests(rows)
    html = ch.report_html(run, diagnose(run))
    assert "None" not in html and "Avg bus bandwidth</b> not printed" in html
    assert "--system" not in html
