"""The capstone's report and decision log speak the learner's language (nvcourse/capstone.py): the gate names, the
pass/FAIL words beside the marks (nvcourse/markup.py's mark_html too), the plural of the failed-gates line, and the
whole decision log (field names, what to write in each, the rows the model fills: decision, targets, evidence), in
French under NVCOURSE_LANG=fr. In English the text is unchanged, and the stable keys stay English: ``Gate.name``,
``DECISION_LOG_FIELDS`` (the decision log's keyword names) and ``as_dict``.

The walk (tests/i18n_walks.py) evaluates designs that pass and fail every gate; every catalog entry of the module
must be shown, and in French no English one is left."""

from __future__ import annotations

import pytest
from i18n_walks import speaks, walk

NBSP = "\u00a0"
_FRAME = """
import sys
from nvcourse import capstone as cs
out = []
"""

_CAPSTONE = """
from nvcourse import capstone as cs
t = cs.Targets(model="llama3-70b", training_tokens=15e12, max_days=30, max_usd=3e6, min_goodput=0.9,
               min_efficiency=0.7, max_MW=3)
for d in (cs.Design(system="dgx-h100", gpus=512, tp=8, pp=2), cs.Design(system="dgx-h100", gpus=1024, tp=8, pp=1),
          cs.Design(system="dgx-h100", gpus=64, tp=16, pp=1, placement="dp-first"),
          cs.Design(system="gb200-nvl72", gpus=512, tp=8, pp=1)):
    try:
        r = cs.evaluate(d, t)
    except ValueError as e:
        out.append(str(e))
        continue
    out += [r.text(), r.html(), cs.decision_log(r), cs.decision_log(r, risks="price may rise")]
t2 = cs.Targets(model="llama3-8b", training_tokens=1e12, max_days=30, max_usd=2e6)
r = cs.evaluate(cs.Design(system="dgx-h100", gpus=256, tp=1, pp=1), t2)
out += [r.text(), r.html(), cs.decision_log(r), cs.decision_log_template()]
# one gate failing (the singular), and a model that does not fit the GPUs' memory
out.append(cs.evaluate(cs.Design(system="dgx-h100", gpus=256, tp=1, pp=1), cs.Targets(
    model="llama3-8b", training_tokens=1e12, max_days=30, max_usd=1e3)).text())
out.append(cs.evaluate(cs.Design(system="dgx-h100", gpus=64, tp=1, pp=1, zero_stage=0), t).text())
# every other gate failing: goodput, efficiency, power
out.append(cs.evaluate(cs.Design(system="dgx-h100", gpus=1024, tp=8, pp=1, failure_rate_factor=50), cs.Targets(
    model="llama3-70b", training_tokens=15e12, max_days=30, max_usd=3e6, min_goodput=0.999, min_efficiency=0.99,
    max_MW=0.01)).text())
from nvcourse.markup import mark_html
out += [mark_html(True), mark_html(False)]
"""


@pytest.fixture(scope="module", params=["en", "fr"])
def shown(request):
    return request.param, walk(_FRAME, _CAPSTONE, request.param)


def test_every_capstone_entry_is_shown_in_each_language(shown):
    language, text = shown
    speaks(text, language, ("nvcourse/capstone.py", "nvcourse/markup.py"), least=40)


def test_the_decision_log_reads_in_the_language(shown):
    language, text = shown
    if language == "en":
        assert "| **Decision** | 512 GPUs of dgx-h100, TP 8 × PP 2 × DP 32 (tp-first), checkpoint every" in text
        assert "| **Evidence** | memory pass (" in text and "time FAIL (" in text
        assert "2 gate(s) fail: time, budget" in text
        assert "| **Risks** | price may rise |" in text
    else:
        assert "| champ | contenu |" in text
        assert "| **Décision** | 512 GPU dgx-h100, TP 8 × PP 2 × DP 32 (tp-first), point de reprise toutes les" in text
        assert f"| **Preuves** | mémoire{NBSP}: validé (" in text and f"durée{NBSP}: ÉCHEC (" in text
        assert f"2 critères non satisfaits{NBSP}: durée, budget" in text and "TP 8 sur 1 nœud " in text
        assert "| **Risques** | price may rise |" in text  # the learner's own words, untouched
        for english in ("| field | entry |", "Owner and review date", "what could make this wrong", " pass (",
                        "gate(s)", "node(s)", "✔ pass"):
            assert english not in text


def test_the_stable_keys_stay_english(monkeypatch):
    monkeypatch.setenv("NVCOURSE_LANG", "fr")
    from nvcourse import capstone as cs
    r = cs.evaluate(cs.Design(system="dgx-h100", gpus=256, tp=1, pp=1),
                    cs.Targets(model="llama3-8b", training_tokens=1e12, max_days=30, max_usd=2e6))
    assert [g.name for g in r.gates][:3] == ["memory", "placement", "time"]
    assert cs.DECISION_LOG_FIELDS[-1][0] == "Owner and review date"
    assert "| **Risques** | low |" in cs.decision_log(r, risks="low")  # English keyword names in every language
