"""Data-file texts a learner reads, in the learner's language (nvcourse/_data.py ``DISPLAYED``): chapter 08's alert
rules (metric, counter, unit, action: ``reliability.alerts()``, the 08 §5 table), the failure record's name
(``reliability.failure_record()``), the kind of each fault signal (``observability.counters.signals()``), chapter
10's sources (``interconnects.toml``) and the price and power sources (``costs.toml``), read through
``_data.shown``. The data files stay English, the one source; English readers see them byte for byte.

The walk (tests/i18n_walks.py) shows every displayed field of these tables; each catalog entry must be shown in
its language, and in French no English one is left."""

from __future__ import annotations

from pathlib import Path

import pytest
from i18n_walks import speaks, walk

from nvcourse._data import DISPLAYED, load_file

ROOT = Path(__file__).resolve().parents[1]
NBSP = "\u00a0"
#: (file, table, fields) added for chapters 08 and 10
MINE = (("reliability.toml", "alerts", ("metric", "counter", "unit", "action")),
        ("reliability.toml", "runs", ("name",)),
        ("observability.toml", "signals", ("kind",)),
        ("interconnects.toml", "sources", ("title",)),
        ("costs.toml", "sources", ("title",)))

_FRAME = """
import sys
from nvcourse import _data, reliability
from nvcourse.observability import counters
from nvcourse.chapters import ch08_reliability
out = []
"""

_DATA = """
for a in reliability.alerts():
    out += [a.metric, a.counter, a.unit, a.action]
out.append(reliability.failure_record().name)
out += [s["kind"] for s in counters.signals()]
for name in ("interconnects", "costs"):
    out += [_data.shown(name, "sources", s)["title"] for s in _data.load(name)["sources"].values()]
out.append(ch08_reliability.alerts_table_html())
"""


def _occurrences() -> tuple[str, ...]:
    out = []
    for name, table, fields in MINE:
        assert set(fields) <= set(dict(DISPLAYED[name])[table]), (name, table)  # displayed, so extracted
        records = load_file(ROOT / "nvcourse" / "data" / name)[table]
        for key, record in records.items() if isinstance(records, dict) else enumerate(records):
            out += [f"nvcourse/data/{name}:{table}.{key}.{f}" for f in fields if record.get(f)]
    return tuple(out)


@pytest.fixture(scope="module", params=["en", "fr"])
def shown(request):
    return request.param, walk(_FRAME, _DATA, request.param)


def test_every_displayed_field_is_shown_in_each_language(shown):
    language, text = shown
    speaks(text, language, _occurrences(), least=40)


def test_the_alert_rules_read_in_the_language(shown):
    language, text = shown
    if language == "en":
        assert "warn: ticket to check the cable/transceiver; critical: take the port out of service" in text
        assert "Llama 3 405B pre-training (Meta), 54-day snapshot" in text
    else:
        rule = f"avertissement{NBSP}: ticket pour vérifier le câble ou l'émetteur-récepteur{NBSP}; critique{NBSP}:"
        assert rule in text
        assert "pré-entraînement de Llama 3 405B (Meta), relevé sur 54 jours" in text
        assert "flaps per day per port" not in text and "54-day snapshot" not in text


def test_the_data_stays_english_and_the_counter_name_still_folds(monkeypatch):
    monkeypatch.setenv("NVCOURSE_LANG", "fr")
    from nvcourse import _data, reliability
    from nvcourse.chapters import ch08_reliability
    assert _data.load("reliability")["alerts"][3]["unit"] == "flaps per day per port"  # the file is not touched
    assert reliability.alerts()[3].unit == "décrochages par jour et par port"
    # the chapter keeps the counter's name before its first ": " as code and folds the rest
    assert "<code style=\"overflow-wrap:anywhere\">SymbolErrorCounter (UFM Symbol_Errors)</code><details>" in \
        ch08_reliability.alerts_table_html()
