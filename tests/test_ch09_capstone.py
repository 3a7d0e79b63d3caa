"""Chapter 09: the comparison table and the design dashboard drive nvcourse.capstone."""

from nvcourse import capstone
from nvcourse.chapters import ch09_capstone
from nvcourse.markup import mark_html

TARGETS = capstone.Targets(model="llama3-70b", training_tokens=2e12, max_days=30, max_usd=3e6, min_goodput=0.9,
                           min_efficiency=0.7, max_MW=3)


def test_comparison_table_has_one_row_per_report_and_names_failed_gates():
    reports = capstone.compare_systems(TARGETS, ["dgx-h100"], [64, 1024])
    table = ch09_capstone.comparison_table_html(reports)
    assert table.count("<tr>") == 1 + len(reports)
    small = next(r for r in reports if r.design.gpus == 64)
    assert not small.passed  # 64 GPUs cannot hold 70B with its optimizer states at TP 8 x PP 1 (memory gate)
    assert mark_html(False, ", ".join(g.name for g in small.failed)) in table  # a mark in words, not an emoji
    assert "❌" not in table and "✅" not in table


def test_design_dashboard_follows_its_controls():
    d = ch09_capstone.design_dashboard(TARGETS)
    first = d.readout.value
    d.controls["gpus"].value = 64
    d.controls["tp"].value, d.controls["pp"].value = 1, 1
    assert d.readout.value != first
    assert capstone.evaluate(capstone.Design("dgx-h100", 64, tp=1, pp=1), TARGETS).html() in d.readout.value
