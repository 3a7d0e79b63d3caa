"""Chapters 06b, 06d and 10 speak the learner's language in their outputs: the checkers' feedback (each known
mistake's hint, the hints, the successes, the questions), the paste boxes' readouts, the runbook's tables and the
numerics lab, in French under NVCOURSE_LANG=fr and in English otherwise.

Each walk runs in a fresh interpreter (questions are registered, so their _() strings read, when their module is
imported). Texts that come from the data files (the runbook's checks, the NCCL variables) and the readers'
verdicts (nvcourse.nccl) are not this file's: the walks look only for the entries extracted from these modules."""

from __future__ import annotations

import pytest
from i18n_walks import speaks as _speaks
from i18n_walks import walk
from test_i18n_prints import CH10 as _PRINTS_CH10  # the chapter's printed lines, also in its module
from test_i18n_prints_p2 import CH06B as _PRINTS_CH06B
from test_i18n_prints_p2 import CH06D as _PRINTS_CH06D

#: Shared by every walk: a checker's result, the chapter's questions, a figure's labels, a dashboard's controls.
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
            out.extend([q.prompt, q.hint, *q.choices.values(), *q.explanation()])
            tries = list(q.choices) if q.choices else [expected_answer(qid), *q.variants().values(), 1e9]
            for value in tries:
                show(module.answer(qid, value))


def labels(fig):
    for ax in fig.axes:
        out.extend([ax.get_title(), ax.get_xlabel(), ax.get_ylabel()])
        out.extend(t.get_text() for t in ax.texts)
    out.extend(t.get_text() for t in fig.texts)


def controls(board):
    for w in board.controls.values():
        out.extend([str(w.description), str(getattr(w, "placeholder", "")), str(getattr(w, "tooltip", ""))])
        out.extend(str(o[0] if isinstance(o, tuple) else o) for o in getattr(w, "options", ()))
"""

_CH06B = """
from nvcourse.checks import ch06b as c
from nvcourse.chapters import ch06b_nccl_in_practice as ch
from nvcourse.nccl.diagnose import diagnose
from nvcourse.nccl.ncclog import read_text as read_log
from nvcourse.nccl.nccltests import read_text as read_run
ask("06b.", c)
raises = lambda *args: 1 / 0
for fn in (lambda t: read_log(t).gdr, lambda t: True, lambda t: False, lambda t: None, raises, lambda t: "yes"):
    show(c.gdr_state(fn))
gdr = lambda t: read_log(t).gdr  # noqa: E731
for fn in (lambda t: False if gdr(t) is None else gdr(t), lambda t: None if gdr(t) is False else gdr(t),
           lambda t: False if gdr(t) else gdr(t)):  # each mistake alone, so its own hint is the one given
    show(c.gdr_state(fn))
nvls = lambda t: c._nvls(read_log(t))  # noqa: E731
for fn in (lambda t: c._nvls(read_log(t)), lambda t: "on", lambda t: "off", lambda t: "unknown", raises,
           lambda t: 3, lambda t: "off" if nvls(t) == "unknown" else nvls(t),
           lambda t: "unknown" if nvls(t) == "on" else nvls(t)):
    show(c.nvls_state(fn))


def right_node(pairs):
    names = {n for p in pairs for n in p}
    return min(names, key=lambda n: sum(v for p, v in pairs.items() if n in p) / sum(n in p for p in pairs))


for fn in (right_node, lambda pairs: min(pairs, key=pairs.get), lambda pairs: min(pairs, key=pairs.get)[1], raises):
    show(c.slow_node(fn))
out += [ch.flags_table_html(), ch.env_table_html(), ch.ladder_html()]
for name in ch.SAMPLES:
    run = ch.read_sample(name)
    diag = diagnose(run)
    out += [ch.report_html(run, diag), ch.diagnosis_text(diag)]
# the reader's own notes, as the CLI prints them (the box swaps their flag words for its controls)
plain = ch.read_sample(next(n for n in ch.SAMPLES if "T4" in n))  # GPUs the reader does not recognise
out += diagnose(plain).notes
plain.nranks = None  # a paste whose rank count was not printed
out += diagnose(plain, system="dgx-h100").notes
out.append(ch.report_html(plain, diagnose(plain, system="dgx-h100")))  # the box's words for the same note
run.op, run.op_source, run.op_candidates = None, "", ["all_reduce_perf", "reduce_scatter_perf"]  # op not printed
run.nranks, run.nccl_version, run.avg_busbw_GBps = None, "", None
out += [ch.report_html(run, diag)]
for name in ch.LOGS:
    out.append(ch.log_html(read_log(ch.sample_text(name))))
out += [ch._nvls_words(None), ch._nvls_words({"supported": True, "channels": 16, "heads": 4}),
        ch._nvls_words({"supported": False})]
board = ch.nccl_tests_box()
controls(board)
first = next(iter(ch.SAMPLES))
for sample, system, gpus, nodes in ((first, "auto", 0, 0), (ch._PASTE, "dgx-h100", 0, 0),
                                    (first, "dgx-h100", 8, 2)):  # the last: controls that disagree with the paste
    fig, text = board._render(sample, ch.box_text(first), system, gpus, nodes)
    out.append(text)
cut = ("# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
       "validation: 1 graph: 0\\n")  # a paste cut before its first result row
for box, args in ((board, ("x", " ", "auto", 0, 0)), (board, ("x", cut, "auto", 0, 0)), (ch.ncclog_box(), ("x", " "))):
    try:
        box._render(*args)
    except ValueError as exc:
        out.append(str(exc))
logbox = ch.ncclog_box()
controls(logbox)
out.append(logbox._render(ch._PASTE, ch.box_text(next(iter(ch.LOGS)))))
res, fig, legend = ch.hopper_topology()
labels(fig)
out.append(ch.affinity_table_html(res))
res.codes = {}  # no NIC on any GPU's PCIe switch
out.append(ch.affinity_table_html(res))
"""

_CH06D = """
from nvcourse.checks import ch06d as c
from nvcourse.chapters import ch06d_runbook as ch
from nvcourse.runbook import link_fraction
raises = lambda *args: 1 / 0
for fn in (lambda line: "ReqRedir+" in line or "CmpltRedir+" in line, lambda line: "SrcValid+" in line,
           lambda line: "ReqRedir+" in line, lambda line: None, raises):
    show(c.acs_redirects(fn))
for fn in (link_fraction, lambda a, b, s, w: s * w / (a * b), lambda *x: 1 / link_fraction(*x),
           lambda a, b, s, w: link_fraction(a, b, s, b), lambda *x: 0.123456):
    show(c.lane_fraction(fn))
for fn in (lambda rows: {0: 3, 4: 5}[rows[0][0]], lambda rows: rows[-1][0], lambda rows: {0: 2, 4: 4}[rows[0][0]],
           lambda rows: 99, raises):
    show(c.gid_index(fn))
for args in ((None, None), ("not_a_signature", ["nccl_log"]), ("no_peermem", ["reboot"]), ("xid", ["nccl_log"]),
             ("no_peermem", ["nccl_log"]), ("no_peermem", ["nccl_log", "acs"])):
    show(c.drill(*args))
show(c.drill(lambda: 5))
show(c.drill(lambda: ("no_peermem", ["nccl_log"])))
for layer in ch.LAYERS:
    if layer != "cloud":
        out += [ch.checks_html(layer), ch.checks_table_html(layer)]
out += [ch.cloud_html(), ch.ib_tc_text(), ch.drill_story_html(), ch.sources_html()]
board = ch.drill_box()
controls(board)
for _label, step in board.controls["step"].options:  # (the command shown, the step's name)
    out.append(board._render(step))
real = ch.raw()
ch.raw = lambda: {**real, "sources": dict(list(real["sources"].items())[:1])}  # the singular: one source
out.append(ch.sources_html())
out.append(ch.ib_link_rule_html())
"""

_CH10 = """
from nvcourse.chapters import ch10_other_interconnects as ch
out += [r["system"] for r in ch.pair_bandwidth_rows()]
out += [ch.contrast_table_html(), ch.sources_html()]
board = ch.numerics_box()
controls(board)
for ranks in (2, 8, 72):
    out.append(board._render(ranks))
"""


def _walk(script: str, language: str) -> str:
    return walk(_FRAME, script, language)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch06b_checkers_questions_paste_boxes_and_tables_speak_the_language(language):
    shown = _walk(_CH06B + _PRINTS_CH06B, language)
    _speaks(shown, language, ("nvcourse/checks/ch06b.py", "nvcourse/chapters/ch06b_nccl_in_practice.py"), least=120)
    if language == "fr":
        assert "cause probable\u00a0:" in shown and "la zone est vide" in shown and "rangs" in shown
        assert "448,212\u00a0GB/s" in shown  # the footer's busbw, written the French way
        assert "the box is empty" not in shown and "right on all" not in shown
    else:
        assert "the box is empty" in shown and "likely: " in shown and "448.212 GB/s" in shown


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch06d_checkers_and_runbook_tables_speak_the_language(language):
    shown = _walk(_CH06D + _PRINTS_CH06D, language)
    _speaks(shown, language, ("nvcourse/checks/ch06d.py", "nvcourse/chapters/ch06d_runbook.py"), least=60)
    if language == "fr":
        assert "Guide de dépannage\u00a0:" in shown and "correctif" in shown and "lien-local" in shown
        assert "broken looks like" not in shown and "link-local address" not in shown
    else:
        assert "broken looks like" in shown and "link-local address" in shown


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch10_contrast_table_and_numerics_readout_speak_the_language(language):
    shown = _walk(_CH10 + _PRINTS_CH10, language)
    _speaks(shown, language, ("nvcourse/chapters/ch10_other_interconnects.py",), least=18)
    if language == "fr":
        assert "maillage complet" in shown and "2,2× moins" in shown and "62\u00a0%" in shown
        assert "of results change" not in shown
    else:
        assert "2.2x less" in shown and "62% of results change" in shown
