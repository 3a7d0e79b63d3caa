"""One rule for InfiniBand link-health counters, in chapters 06d, 08 and 08b.

The rule lives once in ``data/observability.toml`` (``[[ib_link_rule]]`` and the symbol-error levels of
``[alert_policy]``): page on rising symbol errors and on link flaps; trend the raw and effective BER (errors FEC
corrected, or left for the link's retransmission) and never page on them. On HDR and NDR links the symbol errors are
the errors the application sees (NVIDIA ibdiagnet documentation, Bit Error Rate). Each chapter's sentence must say
the same, and each chapter's table must print the same levels, at every setting of 08b's thresholds dashboard.
"""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from nvcourse import reliability, runbook
from nvcourse.chapters import ch06d_runbook as ch06d
from nvcourse.chapters import ch08b_security_and_observability as ch08b
from nvcourse.observability import counters

ROOT = Path(__file__).resolve().parents[1]


def _cells(name: str) -> dict[str, tuple[str, str]]:
    """Cell id → (source, text of its outputs), whitespace collapsed, tags stripped from HTML outputs."""
    nb = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
    out = {}
    for c in nb["cells"]:
        texts = []
        for o in c.get("outputs", []):
            data = o.get("data", {})
            texts.append("".join(data.get("text/html", data.get("text/plain", o.get("text", "")))))
        flat = re.sub(r"<[^>]+>", " ", " ".join(texts)).replace("&#x27;", "'").replace("&gt;", ">")
        out[c["id"]] = (re.sub(r"\s+", " ", "".join(c["source"])), re.sub(r"\s+", " ", flat))
    return out


def _everything(name: str) -> str:
    return " ".join(s + " " + o for s, o in _cells(name).values())


def test_the_rule_in_the_data_pages_on_symbol_errors_and_flaps_only():
    rule = counters.ib_link_rule()
    alert = [r["counter"] for r in rule if r["action"] == "alert"]
    trend = " ".join(r["counter"] for r in rule if r["action"] == "trend")
    assert len(alert) == 2 and alert[0].startswith("SymbolErrorCounter") and alert[1].startswith("LinkDownedCounter")
    assert "Effective BER" in trend and "Raw BER" in trend and "PortRcvErrors" in trend
    pol = counters.alert_policy()
    assert f"≥ {pol.symbol_errors_warn_per_hour:g} new per hour" in rule[0]["when"]
    assert f"≥ {pol.symbol_errors_critical_per_hour:g} per hour" in rule[0]["when"]


def test_06d_says_the_rule_and_prints_its_table():
    cells = _cells("06d_bringup_and_fault_runbook.ipynb")
    assert ("So **page** (alert the on-call engineer, day or night) on symbol errors that keep rising and on link "
            "flaps (the link went down and retrained: `LinkDownedCounter` rose); trend the raw and effective BER as "
            "the link's margin.") in cells["c011c"][0]
    assert "the rule chapters 08 and 08b use too" in cells["c011c"][0]
    table = cells["c011d"][1]
    for r in counters.ib_link_rule():
        assert r["when"].replace("≥", "≥") in table
    # the runbook card says the same: no alert on the effective BER anywhere in the chapter
    sig = runbook.raw()["signatures"]["ib_link_ber"]
    assert "trend the raw and effective BER" in sig["fix"] and "do not page" in sig["fix"]
    text = _everything("06d_bringup_and_fault_runbook.ipynb")
    assert not re.search(r"(alert|page)[^.;]{0,40}effective BER", text, re.I), "06d pages on the effective BER"
    assert "Effective BER above zero" not in text


def test_08_sentence_and_alert_table_use_the_same_levels():
    src, _ = _cells("08_reliability_and_operations.ipynb")["c016"]
    assert "one link-health rule" in src and "The bit error rate (BER) before FEC (raw) and after it (effective)" in src
    assert "trend it, do not page" in " ".join(src.split()) and "judged as a rate, not one increment" in src
    sym = next(a for a in reliability.alerts() if a.counter.startswith("SymbolErrorCounter"))
    pol = counters.alert_policy()
    assert (sym.warn, sym.critical) == (pol.symbol_errors_warn_per_hour, pol.symbol_errors_critical_per_hour)
    assert pol.symbol_errors_window in sym.unit
    table = _cells("08_reliability_and_operations.ipynb")["c017"][1]
    # the window goes with the warn level, critical is any one hour: as 08b's rule table and 06d's rule write it
    assert (f"≥ {sym.warn:g}, {pol.symbol_errors_window} ≥ {sym.critical:g} in any one hour new errors per hour per "
            "port (a rate, not one increment)") in table


@pytest.mark.parametrize("share", np.linspace(0.01, 0.99, 25))
def test_08b_alert_rules_agree_at_every_setting(share):
    """The thresholds dashboard's full rule table (behind its toggle) at every bandwidth-bound share it can show."""
    t = counters.alert_thresholds(float(share))
    rows = {r[0]: r for r in t.rows()}
    pol = counters.alert_policy()
    sym = rows["SymbolError growth on a port"]
    assert sym[1] == f"≥ {pol.symbol_errors_warn_per_hour:g} new per hour, {pol.symbol_errors_window}"
    assert sym[2] == f"≥ {pol.symbol_errors_critical_per_hour:g} new per hour"
    ber = rows["raw or effective BER on a port (mlxlink -c)"]
    assert ber[1] == "rising trend" and ber[2] == "" and "do not page" in ber[3]
    html = ch08b.thresholds_readout(float(share), t)
    assert sym[1] in html and "do not page" in html


def test_06d_card_and_08b_signal_reading_agree():
    """The 06d card and 08b's signals table both call the raw BER a margin to trend, the symbol errors the fault."""
    reading = next(s for s in counters.signals() if s["fault"] == "flapping link")["reading"]
    assert "to trend, not to page on" in reading and "judged as a rate" in reading
    assert "rising across readings" in runbook.raw()["signatures"]["ib_link_ber"]["broken"]
    assert ch06d.ib_link_rule_html().split("</table>")[0].count("<b>alert</b>") == 2


def test_the_ib_runbook_doc_and_the_log_reader_follow_the_rule():
    """docs/runbook-ib-ar-sharp.md (linked from 06d) says the same, and ``nvcourse ncclog`` never calls an effective
    or raw BER a fault, nor one reading of a cumulative symbol-error count."""
    from nvcourse.nccl.ncclog import read_text

    doc = (ROOT / "docs" / "runbook-ib-ar-sharp.md").read_text(encoding="utf-8")
    assert "they trend up: the margin is shrinking (trend them, do not page)" in doc
    assert "they are above zero: the link passes errors on" not in doc
    rec = runbook.raw()["signatures"]["ib_link_ber"]
    assert rec["log_patterns"] == [] and any("Symbol Errors" in p for p in rec["counter_patterns"])
    paste = "Effective Physical Errors : 42\nEffective Physical BER : 3E-12\nRaw Physical BER : 2E-7\n"
    log = read_text(paste)
    assert log.signatures == [] and any("not a fault to page on" in n for n in log.notes)
    assert read_text("Symbol Errors : 5\n").signatures == []
    assert [s["signature"] for s in read_text("Symbol Errors : 5\nSymbol Errors : 9\n").signatures] == ["ib_link_ber"]


def test_08b_error_counter_threshold_is_the_rule_not_any_growth():
    """08b §6.2 (the link and error-counter rules §4 sends there): error counters alert on a growth rate (the
    SymbolError row, the 06d rule), not on any increment."""
    src, out = _cells("08b_security_and_observability.ipynb")["c025"][0], _cells(
        "08b_security_and_observability.ipynb")["c028"][1]
    assert "symbol errors that keep rising (the table's SymbolError row, the course's one InfiniBand link-health " \
           "rule from chapter 06d) and any flap" in src
    # (the effective BER is defined in passing, so the sentence carries a parenthesis now)
    assert "The raw and effective BER (effective: errors left after FEC" in src and "are only trended." in src
    assert '"growing at all"' not in src
    row = next(r for r in counters.alert_thresholds(0.5).rows() if r[0] == "SymbolError growth on a port")
    assert row[1] in out and "do not page" in out  # the stored dashboard output prints the same rule
