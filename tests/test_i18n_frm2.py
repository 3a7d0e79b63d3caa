"""Chapters 08 and 08b speak the learner's language in their outputs: every checker's feedback (each known
mistake's hint, the hints, the successes, the questions), the chapters' readouts, tables, dashboard controls and
figure labels, in French under NVCOURSE_LANG=fr and in English otherwise.

Each walk runs in a fresh interpreter (questions are registered, so their _() strings read, when their module is
imported). A learner function for each known mistake returns that mistake's value, so every hint is reached."""

from __future__ import annotations

import pytest
from i18n_walks import speaks as _speaks
from i18n_walks import walk
from test_i18n_prints import CH08 as _PRINTS_CH08  # the chapter's printed lines, also in its module
from test_i18n_prints_p3 import CH07C as _P3_07C
from test_i18n_prints_p3 import CH08B as _P3_08B

#: Shared by every walk: the attempts at a checker and at the chapter's questions.
_FRAME = """
import sys
import matplotlib
matplotlib.use("Agg")
from nvcourse.checks._answers import questions, expected_answer
out = []


def show(r):
    out.extend([r.message, r._repr_html_()])


def ask(prefix, module):
    for qid, q in sorted(questions().items()):
        if qid.startswith(prefix):
            out.extend([q.prompt, q.hint, *q.choices.values()])
            tries = list(q.choices) if q.choices else [expected_answer(qid), *q.variants().values(), 1e9]
            for value in tries:
                show(module.answer(qid, value))


def labels(fig):
    fig = getattr(fig, "figure", fig)
    for ax in fig.axes:
        out.extend([ax.get_title(), ax.get_xlabel(), ax.get_ylabel()])
        out.extend(t.get_text() for t in [*ax.get_xticklabels(), *ax.get_yticklabels(), *ax.texts])
        out.extend(line.get_label() for line in ax.get_lines())
        legend = ax.get_legend()
        if legend is not None:
            out.extend(t.get_text() for t in legend.get_texts())


def controls(board):
    for w in board.controls.values():
        out.append(str(w.description))
        out.extend(str(o[0] if isinstance(o, tuple) else o) for o in getattr(w, "options", ()))


def html(obj):
    out.append(getattr(obj, "data", obj))
"""

_CH08 = """
import math
from nvcourse import reliability as rel
from nvcourse.checks import ch08 as c
from nvcourse.chapters import ch08_reliability as ch
for fn in (rel.young_interval, lambda d, m: math.sqrt(d * m), lambda d, m: 2 * d * m, rel.daly_interval,
           lambda *args: 1.2345e-7):
    show(c.young_interval(fn))
for fn in (lambda n, r: 1 / (n * r), lambda n, r: n / r, lambda n, r: 1 / r, lambda n, r: n * r, lambda *a: 1.2345e-7):
    show(c.cluster_mtbf_hours(fn))
ask("08.", c)
fig, line = ch.mtbf_figure()
out.append(line)
labels(fig)
labels(ch.goodput_by_size_figure())
labels(ch.hero_busbw_figure())
fig, line = ch.drift_alert_figure()
out.append(line)
labels(fig)
out.extend(ch.quiet_failure_lines())
out += [ch.alerts_table_html(), ch.signals_table_html(), ch.more_signals_html()]
board = ch.goodput_dashboard()
controls(board)
for args in ((16384, 60, 10, 1.0), (131072, 1200, 120, 10.0)):  # the second is outside Daly's formula
    fig, text = board._render(*args)
    out.append(text)
    labels(fig)
"""

_CH08B = """
from nvcourse.checks import ch08b as c
from nvcourse.chapters import ch08b_security_and_observability as ch
from nvcourse.observability import counters, drill
from nvcourse import isolation
tl = counters.tolerable_link_loss
for fn in (tl, lambda cc, s: s / cc, lambda cc, s: s, lambda cc, s: s / (1 + s), lambda *a: 0.987654):
    show(c.tolerable_loss(fn))
pc, pp = isolation.pkeys_can_talk, isolation.pkey_partition
for fn in (pc, lambda a, b: pp(a)[0] == pp(b)[0], lambda a, b: a == b, lambda a, b: "yes",
           lambda a, b: (not pc(a, b)) if (a, b) == (0x8001, 0x8002) else pc(a, b)):  # no known mistake: the hint
    show(c.pkeys_can_talk(fn))
for fn in (lambda a, b: (b - a) * 4, lambda a, b: b - a, lambda a, b: (b - a) * 8.0, lambda a, b: (a - b) * 4,
           lambda *a: 1.2345e-7):
    show(c.xmit_data_bytes(fn))
for fault in drill.FAULTS:
    for comp in ("leaf1", "node1", "gpu0"):
        show(c.drill_answer("A", fault, comp))
show(c.drill_answer("A", lambda: 3))
show(c.drill_answer("A", "no such fault", "leaf1"))
ask("08b.", c)
html(ch.ethernet_ids_table())
html(ch.exposure_table())
html(ch.cc_table())
html(ch.signals_table())
out.append(ch.diag_levels_text())
for before, after in ((3, 7), (0, 255)):  # a plain rise, then a saturated 8-bit LinkDownedCounter
    out.append(ch.counter_delta_text(counters.counter_delta("LinkDownedCounter", before, after)))
html(ch.table(["a", "b"], [[1, 2]]))
for name, args in (("tenancy_dashboard", ((9, 2**26), (1, 2**16), (16, 2**32), (3, 2**26), (1, 2**32))),
                   ("noisy_neighbour_dashboard", (("none", 0.5, 1.0, 2**28),
                                                  ("none", 0.5, 0.0, 2**28),  # only the range
                                                  ("ets", 0.3, 0.5, 2**30),
                                                  ("ets", 0.1, 1.0, 2**28),  # a share below fairness: worse
                                                  ("ets", 0.125, 1.0, 2**28),  # exactly fairness's 1/8: the same
                                                  ("strict", 0.5, 0.0, 2**20))),
                   ("thresholds_dashboard", ((0.05, 2**30, 4), (0.001, 2**33, 64))),
                   ("drill_dashboard", (("A", "(choose)", "(choose)"), ("B", drill.FAULTS[0], "(choose)"),
                                        ("C", "(choose)", "leaf1"),
                                        *[(i, f, comp) for i in drill.INCIDENTS for f in drill.FAULTS
                                          for comp in ("leaf1",)]))):
    board = getattr(ch, name)()
    controls(board)
    for a in args:
        fig, text = board._render(*a)
        out.append(text)
        labels(fig)
"""

_CH07C = """
from nvcourse.checks import ch07c as c
from nvcourse.chapters import ch07c_inference as ch
from nvcourse.fabric.moe import remote_nodes_per_token as rn
kv, xf, dec, pt = c._kv, c._xfer, c._decode, c.params_term
for fn in (kv, lambda *a: kv(*a) / 2, lambda *a: kv(*a) * 8, lambda *a: kv(*a) / a[0], lambda *a: 1.2345e-7):
    show(c.kv_bytes(fn))
for fn in (xf, lambda *a: xf(*a) / 8, lambda *a: xf(*a) * a[3], lambda *a: xf(*a) * a[4], lambda *a: 1.2345e-7):
    show(c.kv_transfer(fn))
for fn in (dec, lambda *a: dec(*a) - (a[4] * a[5] if a[1] > 1 else 0),
           lambda *a: dec(*a) + (2 * a[4] * a[5] if a[1] > 1 else 0), lambda *a: dec(*a) - pt(a) / 2,
           lambda *a: dec(*a) + pt(a) * (a[1] - 1), lambda *a: 1.2345e-7):
    show(c.decode_time(fn))
for fn in (lambda e, k, n: rn(e, k, n, 1), lambda e, k, n: k * (n - 1) / n if k > 1 and n > 1 else rn(e, k, n, 1),
           lambda e, k, n: rn(e, k, n, 1) * n / (n - 1) if n > 1 else 0.0,
           lambda e, k, n: (n - 1) * (1 - (1 - 1 / n) ** k), lambda *a: 1.2345e-7):
    show(c.remote_nodes(fn))
for fn in (lambda L, r, q, b: L * (r + q) * b, lambda L, r, q, b: 2 * L * (r + q) * b, lambda L, r, q, b: L * r * b,
           lambda *a: 1.2345e-7):
    show(c.mla_kv_bytes(fn))


def tokens(L, k, a):
    return (1 - a ** (k + 1)) / (1 - a)


for fn in (lambda L, k, a: 2 * L / tokens(L, k, a), lambda L, k, a: 2 * L / (k + 1),
           lambda L, k, a: L / tokens(L, k, a), lambda L, k, a: 2 * L if k else 2 * L / tokens(L, k, a),
           lambda *a: 1.2345e-7):
    show(c.spec_allreduces(fn))
labels(ch.decode_tp_figure("llama3-405b", "dgx-h100"))
labels(ch.decode_tp_figure("llama3-70b", "dgx-h100", batch=64))
labels(ch.allreduce_vs_measured_figure())
labels(ch.kv_transfer_figure())
out += ch.measured_vs_model_lines() + ch.allreduce_latency_lines()
out += [ch.measured_vs_model_html(), ch.tp_question_html(), ch.batch_html(),
        ch.batch_html(context=0, batches=(1, 4096)), ch.batch_html("llama3-8b", context=0, batches=(16384,)),
        ch.layouts_html(models=("llama3-405b", "llama3-8b")), ch.moe_dispatch_html(), ch.serving_html()]
board = ch.inference_dashboard()
controls(board)
paths = list(ch.KV_PATHS)
for args in (("llama3-70b", "dgx-h100", 1, 4096, "nccl", 32768, paths[0]),
             ("llama3-405b", "dgx-h100", 512, 131072, "oneshot", 131072, paths[1]),
             ("llama3-8b", "gb200-nvl72", 512, 0, "twoshot", 1024, paths[2]),
             ("llama3-405b", "dgx-h100", 1, 4096, "nccl", 1024, paths[0]),
             ("llama3-70b", "dgx-h100", 1, 4096, "nccl", 32768, paths[2])):  # NVL72's NVLink from a DGX: the note
    fig, text = board._render(*args)
    out.append(text)
    labels(fig)
"""


def _walk(script: str, language: str) -> str:
    return walk(_FRAME, script, language)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch08_checkers_questions_readouts_and_figures_speak_the_language(language):
    shown = _walk(_CH08 + _PRINTS_CH08, language)
    _speaks(shown, language, ("nvcourse/checks/ch08.py", "nvcourse/chapters/ch08_reliability.py"), least=55)
    if language == "fr":
        assert "131\u202f072\u00a0GPU" in shown or "131\u202f072 GPU" in shown
        assert "point de reprise" in shown and "interruptions par jour" in shown and "85,3\u00a0%" in shown
        assert "interruptions per day" not in shown and "GPUs in the job" not in shown
    else:
        assert "131,072 GPUs: one interruption every" in shown and "85.3%" in shown


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch08b_checkers_questions_dashboards_and_tables_speak_the_language(language):
    shown = _walk(_CH08B + _P3_08B, language)
    _speaks(shown, language, ("nvcourse/checks/ch08b.py", "nvcourse/chapters/ch08b_security_and_observability.py"),
            least=120)
    if language == "fr":
        assert "locataire A" in shown and "liaisons montantes" in shown and "(choisir)" in shown
        assert "Your answer so far" not in shown and "whole rack" not in shown
        assert "congested uplink" in shown  # a fault's name is the value the checker compares: it stays
    else:
        assert "Your answer so far" in shown and "whole rack" in shown


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch07c_checkers_readouts_dashboard_and_figures_speak_the_language(language):
    shown = _walk(_CH07C + _P3_07C, language)
    # no input multiplies by the heads: that known mistake has no value, its hint is never given
    heads = frozenset({"You multiplied by the number of heads: the latent is shared by all heads, that is the point "
                       "of MLA."})
    _speaks(shown, language, ("nvcourse/checks/ch07c.py", "nvcourse/chapters/ch07c_inference.py",
                             "nvcourse/chapters/ch07c_serving.py"), heads, least=100)
    if language == "fr":
        assert "limité par la mémoire" in shown and "préremplissage" in shown and "ne tient pas" in shown
        assert "tok/s per user" not in shown and "per step, " not in shown and "does not fit" not in shown
        assert "décodage spéculatif" in shown and "limité par les descripteurs" in shown
    else:
        assert "tok/s per user" in shown and "does not fit" in shown and "per step, " in shown
