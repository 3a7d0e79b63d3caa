"""Chapters 04, 04b and 07b speak the learner's language in their outputs: the workers' lines, the notes under the
measured sweeps, the ring replay, the formulas and prediction dashboards (controls, readouts, figure labels), the
published-run figures and the overlap dashboard, in French under NVCOURSE_LANG=fr and in English otherwise.

Each walk runs in a fresh interpreter (tests/i18n_walks.py); every entry these three modules mark for translation
must be shown, and in French no English one is left."""

from __future__ import annotations

import pytest
from i18n_walks import speaks as _speaks
from i18n_walks import walk
from test_i18n_prints_p3 import CH07B as _P3_07B

_FRAME = """
import sys
import matplotlib
matplotlib.use("Agg")
out = []


def labels(fig):
    fig = getattr(fig, "figure", fig)  # a dashboard's LiveFigure holds its Figure
    for ax in fig.axes:
        out.extend([ax.get_title(), ax.get_xlabel(), ax.get_ylabel()])
        out.extend(t.get_text() for t in [*ax.get_xticklabels(), *ax.get_yticklabels(), *ax.texts])
        out.extend(line.get_label() for line in ax.get_lines())
        out.extend(c.get_label() for c in ax.containers)
        legend = ax.get_legend()
        if legend is not None:
            out.extend(t.get_text() for t in legend.get_texts())
            out.append(legend.get_title().get_text())
    for legend in fig.legends:
        out.extend(t.get_text() for t in legend.get_texts())


def controls(board):
    for w in board.controls.values():
        out.extend([str(w.description), str(getattr(w, "tooltip", None) or "")])
        out.extend(str(o[0] if isinstance(o, tuple) else o) for o in getattr(w, "options", ()))
"""

_CH04 = """
from nvcourse.chapters import ch04_collectives as ch
from nvcourse.collectives import ProcessGroup
from nvcourse.collectives.group import LinkEmulation

with ProcessGroup(2) as pg:
    traced = pg.run("allreduce", 64, algo="ring", iters=1, warmup=1, trace=True)
    out.append(ch.workers_started(pg))
    out.append(ch.workers_stopped(pg))  # still running
out.append(ch.workers_stopped(pg))
replay = ch.RingReplay.from_result(traced)
ring = ch.ring_dashboard(replay)
controls(ring)
for step in (0, 1, replay.nsteps):  # before the call, reduce-scatter, all-gather
    live, text = ring._render(step)
    out.append(text)
    labels(live)


class Segments:  # a group whose shared memory was left behind, and whose workers are gone
    pids, closed = [2**30], True

    def segment_names(self):
        return ["nvc_0"]


out.append(ch.workers_stopped(Segments()))


class PingPong:  # a stand-in group: times that fall with size (a busy machine: the fit gives up), or a line
    def __init__(self, time):
        self.time = time

    def pingpong(self, nbytes, *, iters, warmup):
        return self.time(nbytes)


sizes = [2**k for k in range(6, 25, 2)]
for time in (lambda n: 1e-3 / n, lambda n: 1e-5 + n / 5e9):
    alpha, beta, note = ch.fit_link(PingPong(time), sizes)
    out.append(ch.machine_line(alpha, beta, 25e9, note))
    out.append(ch.ordering_note([{"op": "allreduce", "procs": 4, "algo": "ring", "bytes": 64, "time_s": 1.0}],
                                alpha, beta))
rows = [{"op": "allreduce", "procs": 4, "algo": a, "bytes": s, "time_s": t * s * 1e-9 + 1e-5}
        for a, t in (("ring", 1.0), ("tree", 2.0)) for s in (2**10, 2**20)]
labels(ch.plot_measured_vs_model(rows, 1e-5, 1e9))
out.append(ch.ordering_note(rows, 1e-5, 1e9))  # the same order
swapped = [{**r, "algo": {"ring": "tree", "tree": "ring"}[r["algo"]]} for r in rows]
out.append(ch.ordering_note(swapped, 1e-5, 1e9))  # this run measured the tree faster: a different order
emu = {"slow link": LinkEmulation(latency_s=1e-3, bandwidth_Bps=1e8)}
trade = {"slow link": [{"op": "allreduce", "procs": 4, "algo": "ring", "bytes": 2**18, "time_s": 0.01},
                       {"op": "allreduce", "procs": 4, "algo": "tree", "bytes": 2**18, "time_s": 0.02}]}
labels(ch.plot_link_tradeoff(trade, emu))
out.append(ch.tradeoff_note(trade))
out.append(ch.tradeoff_lines(trade))
formulas = ch.formulas_dashboard()  # its controls' labels, and the α/β line its readout prints where they hide theirs
controls(formulas)
out.append(ch.formula_settings(3.4, 370.8))
view = ch.FormulasView()
for args in ((4, 3.4, 370.8, 2**18), (8, 1000.0, 0.1, 2**30), (4, 0.1, 1000.0, 64), (64, 1000.0, 1000.0, 64)):
    live, text = view(*args)
    out.append(text)
    labels(live)
    fig, text = ch.render_formulas(*args)
    out.append(text)
    labels(fig)
out.append(ch.FormulasView("broadcast")(3, 3.4, 370.8, 2**18)[1])  # the tree wins: its assumption in brackets
"""

_CH04B = """
from nvcourse.chapters import ch04b_predicting as ch
board = ch.predict_dashboard()
controls(board)
for args in (("allreduce", "auto", "dgx-h100", 8, 1, "device", "plain"),
             ("allreduce", "auto", "dgx-h100", 8, 1, "device", "registered"),  # a symmetric kernel runs
             ("allreduce", "auto", "dgx-h100", 8, 2, "single-process", "registered"),  # none runs: why
             ("allreduce", "auto", "dgx-h100", 8, 1, "cuda-graphs", "plain"),  # no host time per call
             ("allreduce", "auto", "dgx-h100", 2, 1, "process-per-gpu", "plain"),
             ("broadcast", "auto", "pcie-8gpu", 8, 256, "single-process", "plain"),
             ("allreduce", "auto", "gb200-nvl72", 72, 1, "device", "plain")):  # the pick is the same at both sizes
    live, text = board._render(*args)
    out.append(text)
    labels(live)
out.append(ch.registered_gain_text("allgather", "gb200-nvl72", 72))  # the largest gain at 8 B: said once
out.append(ch.picks_table([("dgx-h100", 8, 1)], [2**10, 2**30]))
out.append(ch.hw_latency_lines())
out.append(ch.building_blocks_html())  # section 2's table and its fold
for fig in (ch.protocol_kinks_figure(), ch.runs_error_figure()):
    labels(fig)
"""

_CH07B = """
from nvcourse import overlap
from nvcourse.chapters import ch07b_overlap as ch
toy = overlap.dp_bucket_timeline(100e6, 1.0, 25e6, lambda nbytes: 0.3)
labels(ch.timeline_figure(toy, unit=1.0, unit_label="s", setting="15 %"))
labels(ch.bucket_sweep_figure({"8B": overlap.dp_scenario("llama3-8b", "dgx-h100", 64)}, [4, 25, 256]))
out.append(ch.roofline_table_html())
slow = overlap.dp_scenario("llama3-70b", "dgx-h100", 256, tp=8, global_batch_tokens=2**16)  # a tiny batch
out.append(ch.bucket_hint(slow))
out.append(ch.bucket_bound(slow))  # no bucket size hides it: the DDP readout's details
board = ch.overlap_dashboard()
controls(board)
for args in (("DDP gradient buckets", "llama3-8b", "dgx-h100", 64, 25, 1, 4, 0.15),
             ("DDP gradient buckets", "llama3-70b", "dgx-h100", 1, 25, 1, 4, 0.0),  # one replica
             ("FSDP prefetch", "llama3-8b", "dgx-h100", 8, 25, 2, 4, 0.15),
             ("TP + SP overlap", "llama3-70b", "dgx-h100", 8, 25, 1, 4, 0.15),
             ("TP + SP overlap", "llama3-70b", "dgx-h100", 8, 25, 1, 1, 0.0),
             ("TP + SP overlap", "llama3-8b", "dgx-h100", 8, 25, 1, 8, 0.0)):  # 8 chunks expose more than none
    fig, text = board._render(*args)
    out.append(text)
    labels(fig)
out.append(ch.sm_cost_html(overlap.dp_scenario("llama3-8b", "dgx-h100", 64)))
out.append(ch.tp_split_details_html())  # §5's full printout, behind its toggle
"""


def _walk(script: str, language: str) -> str:
    return walk(_FRAME, script, language)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch04_workers_notes_and_formulas_dashboard_speak_the_language(language):
    shown = _walk(_CH04, language)
    # every algorithm the formulas dashboard draws is listed in ASSUMES: the fallback words never show
    _speaks(shown, language, ("nvcourse/chapters/ch04_collectives.py", "nvcourse/collectives/draw_ring.py"),
            frozenset({"what its row says"}), least=40)
    if language == "fr":
        assert "processus de calcul démarrés" in shown and "le plus rapide est" in shown
        assert "segments de mémoire partagée restants\u00a0: 1 (nvc_0)" in shown and "Déplacez le curseur." in shown
        assert "worker processes" not in shown and "the fastest is" not in shown
    else:
        assert "2 worker processes started (ranks 0, 1), one per simulated GPU" in shown
        assert "the fastest is" in shown


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch04b_prediction_dashboard_and_published_runs_speak_the_language(language):
    shown = _walk(_CH04B, language)
    # 8 B is latency-bound on every system the dashboard offers, and 1 GiB bandwidth-bound: those words never show
    never = frozenset({"no size is latency-bound here", "latency-bound"})
    _speaks(shown, language, ("nvcourse/chapters/ch04b_predicting.py",), never, least=40)
    if language == "fr":
        assert "Regardez comment le choix change" in shown and "tampons enregistrés" in shown
        assert "limité par l'hôte" in shown and "(mise de côté)" in shown
        assert "Look at how the pick" not in shown and "held out" not in shown
    else:
        assert "Look at how the pick changes from 8 B to 1 GiB" in shown and "(held out)" in shown


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch07b_overlap_dashboard_and_figures_speak_the_language(language):
    shown = _walk(_CH07B + _P3_07B, language)
    _speaks(shown, language, ("nvcourse/chapters/ch07b_overlap.py",), least=30)
    if language == "fr":
        assert "passe arrière" in shown and "paquets de gradients DDP" in shown and "SM pris par la comm." in shown
        assert "keep up with the backward" not in shown and "exposed DP time" not in shown
    else:
        assert "keep up with the backward" in shown and "SMs taken by comm" in shown


def test_assumptions_read_the_same_as_the_public_table(monkeypatch):
    """The formulas readout's words on each algorithm (translated) are, in English, ASSUMES (tests read it)."""
    from nvcourse.chapters import ch04_collectives as ch

    monkeypatch.setenv("NVCOURSE_LANG", "en")
    assert {a: ch._assumes(a) for a in ch.ASSUMES} == ch.ASSUMES
