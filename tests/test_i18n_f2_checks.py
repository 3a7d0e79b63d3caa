"""The chapter 04 checker (nvcourse/checks/ch04.py) answers in the learner's language: every message, hint and note
of algbw_busbw, ring_schedule, ring_time, record_prediction, prediction_vs_measurement and the chapter's question, in
French under NVCOURSE_LANG=fr, in English otherwise (the English wording unchanged).

The walk (tests/i18n_walks.py) tries each checker with the right answer and with one learner function per mistake
the checker recognises, so every catalog entry of the module must be shown, and in French no English one is left."""

from __future__ import annotations

import pytest
from i18n_walks import speaks, walk

NBSP = "\u00a0"
_FRAME = """
import sys
from types import SimpleNamespace
from nvcourse import collectives, reliability
from nvcourse.checks import ch04 as c
from nvcourse.checks._answers import questions
out = []


def show(r):
    out.extend([r.message, r._repr_html_()])
"""

_CH04 = """

def ref(op, nbytes, t, n):
    a = nbytes / t / 1e9
    return a, a * collectives.busbw_factor(op, n)
show(c.algbw_busbw(ref))
for fn in (lambda op, s, t, n: (1.0, 2.0, 3.0), lambda op, s, t, n: 7.0, lambda op, s, t, n: 1 / 0,
           lambda op, s, t, n: (ref(op, s, t, n)[1], ref(op, s, t, n)[0]),
           lambda op, s, t, n: (t / s * 1e9, ref(op, s, t, n)[1]),
           lambda op, s, t, n: (ref(op, s, t, n)[0], ref(op, s, t, n)[0]),
           lambda op, s, t, n: (ref(op, s, t, n)[0], ref(op, s, t, n)[0] * (n - 1) / n),
           lambda op, s, t, n: (ref(op, s, t, n)[0], ref(op, s, t, n)[0] * 2 * n / (n - 1)),
           lambda op, s, t, n: (ref(op, s, t, n)[0], ref(op, s, t, n)[0] * 1.37),
           lambda op, s, t, n: ("a", "b"), lambda op, s, t, n: (1.0, "b"), "not a function"):
    show(c.algbw_busbw(fn))
show(c.algbw_busbw(lambda op, s, t, n: ref(op, s, t, n) if op == "allreduce" else (1.0, 1.0)))

def ring(p):
    rs = [[(r, (r + 1) % p, (r - s) % p) for r in range(p)] for s in range(p - 1)]
    ag = [[(r, (r + 1) % p, (r + 1 - t) % p) for r in range(p)] for t in range(p - 1)]
    return rs + ag
def ring_shifted(p):
    return [[(r, (r + 1) % p, (c_ + 1) % p) for r, _d, c_ in step] for step in ring(p)]
def wrong_ag(p):
    sched = ring(p)
    return sched[:p - 1] + [[(r, (r + 1) % p, r) for r in range(p)] for _t in range(p - 1)]
def wrong_rs(p):
    return [[(r, (r + 1) % p, r) for r in range(p)] for _s in range(p - 1)] + ring(p)[p - 1:]
for fn in (ring, lambda p: "x", lambda p: ring(p)[:p - 1], lambda p: ring(p)[:3] if p != 2 else ring(p)[:1] * 5,
           lambda p: ["x"] + ring(p)[1:], lambda p: [[("a", 1, 2)]] + ring(p)[1:], lambda p: [[(0, 1)]] + ring(p)[1:],
           lambda p: [[(0, 1, 99)]] + ring(p)[1:], lambda p: [[(0, 0, 0)]] + ring(p)[1:],
           lambda p: [[(0, 1, 0)]] + ring(p)[1:], wrong_rs, wrong_ag, lambda p: 1 / 0):
    show(c.ring_schedule(fn))
step = SimpleNamespace(trace=None, algo="ring", op="allreduce")
show(c.ring_schedule(ring, trace=step))
from nvcourse.collectives import ProcessGroup
with ProcessGroup(3) as pg:
    traced = pg.run("allreduce", 48, algo="ring", iters=1, warmup=1, trace=True)
show(c.ring_schedule(ring, trace=traced))
show(c.ring_schedule(ring_shifted, trace=traced))
show(c.ring_schedule(ring_shifted))

def rt(n, p, a, b):
    return reliability.ring_allreduce_time(n, p, alpha_s=a, beta_Bps=b)
variants = [lambda n, p, a, b: (p - 1) * (a + n / p / b), lambda n, p, a, b: 2 * (p - 1) * (a + 8 * n / p / b),
            lambda n, p, a, b: 2 * (p - 1) * (a + n / b), lambda n, p, a, b: 2 * p * (a + n / p / b),
            lambda n, p, a, b: a + 2 * (p - 1) * n / p / b, lambda *a: 1.2345e-7, lambda *a: "1 ms"]
show(c.ring_time(rt))
for v in variants:
    show(c.ring_time(v))
for pred in (0.0125, -1.0, lambda: 0.01, lambda: 1 / 0, "x"):
    show(c.record_prediction(pred))
model = reliability.ring_allreduce_time(2**20, 4, alpha_s=200e-6, beta_Bps=1e9)
for measured in (model * 0.5, model * 1.2, model * 3):
    res = SimpleNamespace(time_s=measured, procs=4, nbytes=2**20, correct=True)
    for pred in (model, model * 1.1, model * 5, 3 * (200e-6 + 2**20 / 4 / 1e9), lambda: 1 / 0):
        show(c.prediction_vs_measurement(pred, res, alpha_s=200e-6, beta_Bps=1e9))
show(c.prediction_vs_measurement(model, "nope", alpha_s=200e-6, beta_Bps=1e9))
show(c.prediction_vs_measurement(model, SimpleNamespace(time_s=model, procs=4, nbytes=2**20, correct=False),
                                 alpha_s=200e-6, beta_Bps=1e9))
for qid, q in sorted(questions().items()):
    if qid.startswith("04."):
        out.extend([q.prompt, q.hint, *q.choices.values()])
        for value in list(q.choices):
            show(c.answer(qid, value))
"""

#: English shows the run's ``correct`` flag as Python writes it (True/False); French says oui/non
_UNREACHABLE = frozenset({"yes", "no"})


@pytest.fixture(scope="module", params=["en", "fr"])
def shown(request):
    return request.param, walk(_FRAME, _CH04, request.param)


def test_every_ch04_checker_message_is_shown_in_each_language(shown):
    language, text = shown
    speaks(text, language, ("nvcourse/checks/ch04.py",), unreachable=_UNREACHABLE, least=60)


def test_ch04_feedback_reads_the_same_in_english_and_french_in_french(shown):
    language, text = shown
    if language == "en":  # the wording learners have always read
        assert "wrong on 6 of 10 inputs." in text
        assert "p=2: 1 steps, expected 2(p−1) = 2" in text
        assert "(within 15% counts as right)" in text
        assert "measured 1.386 ms = 0.50 × the model (correct result: True)." in text
    else:
        assert "faux sur 6 des 10 entrées." in text
        assert f"p=2{NBSP}: nombre d'étapes 1, au lieu de 2(p−1) = 2" in text
        assert f"(à 15{NBSP}% près, elle compte comme juste)" in text
        assert f"mesuré{NBSP}: 1,386{NBSP}ms = 0,50 × le modèle (résultat correct{NBSP}: oui)." in text
        assert "wrong on" not in text and "expected 2(p−1)" not in text
