"""Generated Markdown/HTML renders as written: the cells survive a Markdown renderer, nothing turns into TeX."""

from __future__ import annotations

import re

import pytest
from markdown_roundtrip import jupyter_math_spans, math_is_fenced, table_cells

from nvcourse import capstone as cs
from nvcourse.markup import FAIL_MARK, PASS_MARK, mark_html, md_escape, md_table
from nvcourse.tables import table_html

NASTY = ["≤ $3.00 M", "($2.76 M)", "a | b", "*not bold*", "snake_case_name", "x < y > z", "`tick`", "100 % [1]"]


def test_md_table_cells_round_trip_through_a_markdown_renderer():
    table = md_table(["what", "value"], [[s, s] for s in NASTY])
    assert table_cells(table) == [["what", "value"], *[[s, s] for s in NASTY]]
    assert jupyter_math_spans(table) == [] and math_is_fenced(table)


def test_md_escape_keeps_text_literal_inside_a_paragraph():
    from markdown_roundtrip import _RENDER

    text = " ".join(NASTY)
    assert "<em>" not in _RENDER(md_escape(text)) and jupyter_math_spans(md_escape(text)) == []


def test_html_table_escapes_text_and_fences_maths():
    page = table_html(["gate", "$ target"], [["budget", "≤ $3.00 M"], ["<b>x</b>", "($2.76 M)"]], escape=True)
    assert table_cells(page, markdown=False) == [["gate", "$ target"], ["budget", "≤ $3.00 M"],
                                                 ["<b>x</b>", "($2.76 M)"]]
    assert "$" not in page and math_is_fenced(page)
    assert re.search(r'text-align:left[^"]*">budget', page)  # sentences are not right-aligned


def test_html_table_keeps_html_columns_and_trusted_cells():
    page = table_html(["mark", "what"], [[mark_html(True), "<b>x</b>"]], escape=True, html_cols=[0])
    assert "<span" in page and "&lt;b&gt;x" in page
    trusted = table_html(["what"], [["<b>x</b>"]], caption="costs $1")
    assert "<b>x</b>" in trusted and "$" not in trusted and math_is_fenced(trusted)


def test_marks_are_in_dejavu_and_carry_words():
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    charmap = FT2Font(font_manager.findfont("DejaVu Sans")).get_charmap()
    assert ord(PASS_MARK) in charmap and ord(FAIL_MARK) in charmap
    assert "pass" in mark_html(True) and "FAIL" in mark_html(False) and "#c62828" in mark_html(False)


@pytest.fixture(scope="module")
def report():
    targets = cs.Targets(model="llama3-70b", training_tokens=2e12, max_days=30, max_usd=3e6, min_goodput=0.9,
                         min_efficiency=0.7, max_MW=3.0)
    return cs.evaluate(cs.Design("dgx-h100", 512, tp=8, pp=2), targets)


def test_capstone_decision_log_keeps_every_row_and_no_tex(report):
    log = cs.decision_log(report, risks="price | supply may move by $1 M")
    rows = table_cells(log)
    assert [r[0] for r in rows] == ["field", *[name for name, _ in cs.DECISION_LOG_FIELDS]]
    targets, evidence = rows[2][1], rows[4][1]
    assert "≤ $3.00 M" in targets and "budget pass ($" in evidence and "(42 GB per GPU)" in evidence
    assert rows[6][1] == "price | supply may move by $1 M"
    assert jupyter_math_spans(log) == [] and math_is_fenced(log)


def test_capstone_gate_table_has_no_emoji_and_no_tex(report):
    page = report.html()
    assert "✅" not in page and "❌" not in page and "$" not in page and math_is_fenced(page)
    cells = table_cells(page, markdown=False)
    assert cells[0] == ["", "gate", "design", "target", "what to try"]
    assert all(r[0] in {f"{PASS_MARK} pass", f"{FAIL_MARK} FAIL"} for r in cells[1:])


def test_capstone_survey_table_round_trips(report):
    from nvcourse.chapters.ch09_capstone import comparison_table_html

    page = comparison_table_html([report])
    cells = table_cells(page, markdown=False)
    assert cells[0][4] == "$M" and cells[1][:3] == ["dgx-h100", "512", "8×2×32"] and cells[1][8] == f"{FAIL_MARK} time"
    assert "$" not in page and "✅" not in page and math_is_fenced(page)


def test_paste_box_example_has_no_maintainer_notes():
    from nvcourse.chapters.ch03_topology import example_text

    text = example_text("hgx-h20-nvswitch")
    assert not text.lstrip().startswith("#") and "not identified" not in text and "GPU0" in text.splitlines()[0]


def test_table_cells_put_sentences_left_and_figures_right():
    out = table_html(["kind", "volume"], [["data parallel (gradients)", "1.2 GB"], ["<i>kept</i>", "—"],
                                          ["price", "<b>$2.76 M</b>"]])
    assert '<td style="text-align:left;padding:2px 14px 2px 0">data parallel (gradients)</td>' in out
    assert '<td style="text-align:right;padding:2px 14px 2px 0">1.2 GB</td>' in out
    assert '<td style="text-align:left;padding:2px 14px 2px 0">—</td>' in out
    assert '<td style="text-align:right;padding:2px 14px 2px 0"><b>$2.76 M</b></td>' in out  # decided on the text shown
    assert '<th style="text-align:left;padding:2px 14px 2px 0">volume</th>' in out
    plain = table_html(["what"], [["42 GB per GPU"]], align_numbers=False)
    assert 'text-align:left;padding:2px 14px 2px 0">42 GB' in plain


def test_dashboard_tables_say_how_to_align():
    from nvcourse.chapters import ch01_one_gpu

    _fig, text = ch01_one_gpu._render("llama3-70b", "h100", 8, 1, 8, 1)
    assert "<td>" not in text and re.search(r'text-align:left[^"]*">data parallel', text)
