"""Chapter 09: the comparison table and the design dashboard drive nvcourse.capstone."""

import html
import math
import re

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


def test_survey_summary_names_exactly_the_designs_that_pass_and_keeps_the_full_table():
    reports = capstone.compare_systems(TARGETS, ["dgx-h100", "gb200-nvl72"], [512, 1024])
    html = ch09_capstone.comparison_summary_html(reports)
    short, full = html.split("<details>")
    ok = [r for r in reports if r.passed]
    assert f"{len(ok)} of {len(reports)} designs pass every gate" in short
    for r in reports:
        assert (f"{r.design.gpus:,} GPUs of {r.design.system}" in short) == r.passed
    assert short.count("<tr>") == 1 + len(reports) and "TP×PP×DP" not in short
    assert ch09_capstone.comparison_table_html(reports) in full  # nothing dropped: the whole table behind the toggle
    assert "$" not in html


def test_survey_prices_every_design_on_both_bases_and_gives_the_verdict_on_each():
    from nvcourse import training

    reports = capstone.compare_systems(TARGETS, ["pcie-8gpu", "dgx-h100", "gb200-nvl72"], [1024, 2048])
    date = capstone.common_price_date(["pcie-8gpu", "dgx-h100", "gb200-nvl72"])
    page = ch09_capstone.comparison_summary_html(reports)
    assert "$" not in page
    short = html.unescape(page.split("<details>")[0])
    assert "$M at the course's prices" in short and f"$M at {date} prices" in short
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", tr) for tr in re.findall(r"<tr>(.*?)</tr>", short)[1:]]
    assert len(rows) == len(reports)
    for r, cells in zip(reports, rows, strict=True):  # the data file's cost, then the same GPU-hours at the month's
        again = capstone.at_price_date(r, date)
        assert cells[:5] == [r.design.system, str(r.design.gpus), f"{r.cost.hours / 24:.1f}",
                             f"{r.cost.usd / 1e6:.2f}", f"{again.cost.usd / 1e6:.2f}"]
    h100 = training.system_costs("dgx-h100")
    assert f"The course's price table prices dgx-h100 as of {h100['usd_date']} ({h100['usd_label']}) and the " \
           f"others as of {date}" in short
    # the verdict on both bases: the 2,048-GPU H100 design fails the budget at the list price only
    big = next(r for r in reports if r.design.system == "dgx-h100" and r.design.gpus == 2048)
    assert "budget" in [g.name for g in big.failed]
    assert "budget" not in [g.name for g in capstone.at_price_date(big, date).failed]
    assert f"at {date} prices: " in short
    ok = [r for r in reports if r.passed]
    ok_date = [a for a in (capstone.at_price_date(r, date) for r in reports) if a.passed]
    assert f"{len(ok)} of {len(reports)} designs pass every gate at the course's prices" in short
    same = [(a.design.system, a.design.gpus) for a in ok_date] == [(r.design.system, r.design.gpus) for r in ok]
    assert same == (f"At {date} prices the same designs pass" in short)


def test_the_price_table_shows_the_price_used_and_the_same_month_price():
    from nvcourse import training

    systems = ["pcie-8gpu", "dgx-h100", "gb200-nvl72"]
    html = ch09_capstone.prices_html(systems)
    date = capstone.common_price_date(systems)
    assert f"price of {date}" in html and "$" not in html
    for s in systems:
        c = training.system_costs(s)
        price, label = capstone.price_on(s, date)
        assert f"&#36;{c['usd_per_gpu_hour']:.2f}" in html and f"{c['usd_label']}, {c['usd_date']}" in html
        assert f"&#36;{price:.2f} ({label})" in html


def test_price_headroom_is_the_price_at_which_the_budget_gate_flips():
    for design in (capstone.Design("dgx-h100", 512, tp=8, pp=2), capstone.Design("dgx-h100", 1024, tp=8, pp=2)):
        r = capstone.evaluate(design, TARGETS)
        limit = TARGETS.max_usd / r.cost.gpu_hours
        text = ch09_capstone.price_headroom_html(r)
        # rounded down to the cent, so that the printed price typed back in passes (walk V: $5.20 failed)
        assert f"&#36;{math.floor(limit * 100) / 100:.2f}/GPU-h" in text and "$" not in text
        assert ("holds up to" in text) == (r.cost.usd <= TARGETS.max_usd)
        # just above the limit the budget gate fails, just below it passes
        for price, passes in ((limit * 0.999, True), (limit * 1.001, False)):
            d = capstone.Design(design.system, design.gpus, tp=design.tp, pp=design.pp, usd_per_gpu_hour=price)
            assert ("budget" not in [g.name for g in capstone.evaluate(d, TARGETS).failed]) == passes


def test_design_dashboard_says_first_which_gates_fail():
    fig, text = ch09_capstone.design_view(TARGETS, 512, "dgx-h100", 8, 2, 60, 10, 0)
    assert text.startswith("<p>") and "1 gate(s) fail" in text.split("</p>")[0] and "time (" in text.split("</p>")[0]
    fig, text = ch09_capstone.design_view(TARGETS, 1024, "dgx-h100", 8, 1, 60, 10, 0)
    assert "every gate passes" in text.split("</p>")[0]
