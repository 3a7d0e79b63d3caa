"""Chapters 05, 06, 06c, 07, 07b and 09 speak the learner's language in their outputs: every checker's feedback
(each known mistake's hint, the hints, the successes, the questions), the chapters' readouts, tables and figure
labels, in French under NVCOURSE_LANG=fr and in English otherwise (the ch01-03 tests are in test_i18n.py).

Each walk runs in a fresh interpreter: questions are registered, so their _() strings read, when their module is
imported. A learner function for each known mistake returns that mistake's value (the reference where the
mistake does not apply to an input), so every hint a checker can give is reached."""

from __future__ import annotations

from pathlib import Path

import pytest
from i18n_walks import speaks as _speaks
from i18n_walks import walk
from test_i18n_prints import CH07 as _PRINTS_CH07  # the chapter's printed lines, also in its module
from test_i18n_prints_p2 import CH06 as _PRINTS_CH06
from test_i18n_prints_p2 import CH06C as _PRINTS_CH06C

ROOT = Path(__file__).resolve().parents[1]

#: Shared by every walk: the attempts at a checker and at the chapter's questions.
_FRAME = """
import sys
import matplotlib
matplotlib.use("Agg")
from nvcourse.checks._answers import questions, expected_answer
out = []


def show(r):
    out.extend([r.message, r._repr_html_()])


def mistakes(check, reference, variants, *samples):
    # the right answer, a wrong one no mistake explains (the hint), then one learner function per known mistake
    # that the sample inputs give: it makes that mistake wherever it applies and is right elsewhere
    show(check(reference))
    show(check(lambda *args: 1.2345e-7))
    keys = list(dict.fromkeys(k for args in samples for k, v in variants(*args).items() if v is not None))
    for key in keys:
        def fn(*args, key=key):
            value = variants(*args).get(key)
            return reference(*args) if value is None else value
        show(check(fn))


def ask(prefix, module):
    for qid, q in sorted(questions().items()):
        if qid.startswith(prefix):
            out.extend([q.prompt, q.hint, *q.choices.values()])
            tries = list(q.choices) if q.choices else [expected_answer(qid), *q.variants().values(), 1e9]
            for value in tries:
                show(module.answer(qid, value))


def labels(fig):
    for ax in fig.axes:
        out.extend([ax.get_title(), ax.get_xlabel(), ax.get_ylabel()])
        out.extend(t.get_text() for t in [*ax.get_xticklabels(), *ax.get_yticklabels(), *ax.texts])
        out.extend(line.get_label() for line in ax.get_lines())
        legend = ax.get_legend()
        if legend is not None:
            out.extend(t.get_text() for t in legend.get_texts())
    for legend in fig.legends:
        out.extend(t.get_text() for t in legend.get_texts())


def controls(board):
    for w in board.controls.values():
        out.append(str(w.description))
        out.extend(str(o[0] if isinstance(o, tuple) else o) for o in getattr(w, "options", ()))
"""

_CH05 = """
from nvcourse.checks import ch05 as c
from nvcourse.chapters import ch05_nvl72 as ch
from nvcourse.fabric.moe import MoEConfig, alltoall_bytes_per_gpu
mistakes(c.moe_dispatch_bytes, lambda t, h, k, b, ep: alltoall_bytes_per_gpu(c._cfg(t, h, k, b, ep), ep),
         c._dispatch_variants, (4096, 7168, 8, 2, 64))
mistakes(c.moe_network_bytes, c._net, c._network_variants, (4096, 7168, 8, 2, 64, 8), (1024, 8192, 4, 2, 4, 8))
mistakes(c.alltoall_time, c._a2a, c._a2a_variants, (1e8, 1e9, 1e-5, 1e12, 5e10))
mistakes(c.domain_allreduce, c._ar, c._ar_variants, (2**30, 72, 1e-6, 8e11, True, 25e-6, 0.74),
         (2**30, 72, 1e-6, 8e11, False, 25e-6, 0.74))
ask("05.", c)
_moe = MoEConfig(hidden=7168, tokens=4096, experts=256, top_k=8, bytes_per_elem=2, moe_layers=58)
out += [ch.domain_text(), ch.tp_allreduce_lines(), ch.moe_alltoall_lines(_moe, ep=64)]
out += [control.description for control in ch.moe_dashboard().controls.values()]  # the MoE sliders' labels
fig, text = ch.ring_vs_nvls_figure()
out.append(text)
labels(fig)
fig, text = ch.ring_vs_nvls_summary()
out.append(text)
labels(fig)
for args in ((7168, 4096, 256, 8, 64, 58), (7168, 4096, 48, 8, 64, 58), (4096, 2048, 24, 2, 16, 10)):
    fig, readout = ch.moe_view(*args)
    out.append(readout)
    labels(fig)
labels(ch.moe_figure(MoEConfig(hidden=7168, tokens=4096, experts=256, top_k=8, bytes_per_elem=2)))
out.append(ch.published_runs_text())  # section 6's published runs against the model, named in words
"""


_CH06 = """
from nvcourse.checks import ch06 as c
from nvcourse.chapters import ch06_fabrics as ch
from nvcourse.fabric.builders import fat_tree
from nvcourse.fabric.collectives import allreduce_on_fabric
mistakes(c.hierarchical_allreduce_time, c._hier, c._variants, (2**30, 8, 4, 1e-6, 3e11, 5e-6, 5e10))
e = c.ecmp
for fn in (e.collision_probability, lambda m, k: e.any_collision_probability(m, k) if m > 2 else
           e.collision_probability(m, k), lambda m, k: 1 - e.collision_probability(m, k),
           lambda m, k: 1 - (1 - 1 / k) ** m, lambda m, k: m / k, lambda m, k: 0.987654):
    show(c.ecmp_collision_probability(fn))
ask("06.", c)
labels(ch.scaling_figure([2, 4, 8], 2**26)[0])
labels(ch.ecmp_figure(32, sim_mean=([8, 16], [0.9, 0.8]), sim_slowest=([8, 16], [0.5, 0.4])))
for algo, nic, routing, nodes, over in (("tree", "ib-ndr", "dmodk", 2, 1.0), ("ring", "ib-ndr", "dmodk", 128, 1.0),
                                        ("hierarchical", "roce-400g", "ecmp", 64, 2.0),
                                        ("sharp", "ib-ndr", "ideal", 128, 1.0), ("tree", "ib-ndr", "ideal", 64, 4.0),
                                        ("ring", "roce-400g", "ecmp", 512, 1.0)):
    out.append(ch.allreduce_view(nodes, nic, over, routing, "random", algo, 2**30)[1])
for nodes, algo in ((2, "tree"), (512, "ring"), (2, "ring")):  # small and packed: latency or NVLink sets the pace
    out.append(ch.allreduce_view(nodes, "ib-ndr", 1.0, "ideal", "packed", algo, 2**16)[1])
out.append(ch.allreduce_view(128, "roce-400g", 1.0, "ecmp", "random", "tree", 2**16)[1])  # latency sets the pace
for routing in ("ecmp", "dmodk", "ideal"):
    for nodes in (2, 4, 32):
        est = allreduce_on_fabric(fat_tree(nodes, rails=8, port_GBps_dir=50.0), 2**28, algorithm="ring",
                                  system="dgx-h100", nic_link="ib-ndr", routing=routing, placement="random", seed=0)
        out.append(ch.routing_title(routing, est.sim))


class OneFlowPerCable:  # hashing rarely leaves every cable one flow: the singular, from a stub simulation
    def tier_summary(self):
        return {"leaf→spine": {"max_flows": 1, "max_util": 0.5}}


out += [ch.cable_sharing(OneFlowPerCable(), routing) for routing in ("ecmp", "dmodk")]
board = ch.fabric_dashboard()
controls(board)
board.controls["nic"].value = "roce-400g"  # the Ethernet routing choices
controls(board)
"""

_CH06C = """
from nvcourse.checks import ch06c as c
from nvcourse.chapters import ch06c_multinode_lab as ch
from nvcourse.cluster import model as cm
for fn in (lambda b: cm.payload_Bps(b / 8), lambda b: cm.payload_Bps(b / 8) * 8, lambda b: b / 8,
           lambda b: b / 8 * 1448 / 1500, lambda b: 1.2345e-7):
    show(c.payload_rate(fn))
for fn in (cm.flat_ring_s, lambda S, n, r, a, b: cm.flat_ring_s(S, n, r, a, b) - 2 * (n * r - 1) * a,
           lambda S, n, r, a, b: cm.hier_network_s(S, n, a, b) if r > 1 else cm.flat_ring_s(S, n, r, a, b),
           lambda S, n, r, a, b: 2 * (n * r - 1) * a + 2 * (n * r - 1) * S / b,
           lambda S, n, r, a, b: (n * r - 1) * a + (n * r - 1) / (n * r) * S / b, lambda *args: 1.2345e-7):
    show(c.flat_ring_time(fn))
for fn in (cm.hier_network_s, lambda S, n, a, b: cm.hier_network_s(S, n, a, b) - 2 * (n - 1) * a,
           lambda S, n, a, b: (n - 1) * a + (n - 1) / n * S / b, lambda *args: 1.2345e-7):
    show(c.hier_network_time(fn))
rec = ch.recorded()
out += [ch.facts_table(), ch.facts_table(collapsed=True), ch.nvlink_vs_nic(), ch.llama3_case(), ch.lab_table(rec),
        ch.lab_reading(rec), ch.contention_html(rec),
        ch.straggler_html(rec)]
for wins, share in (([1, 2], 0.3), ([], 0.7), ([1], 1.5)):  # every verdict and every share of the gain
    ch.hier_verdict = lambda rec, key="hier", wins=wins, share=share: {
        "sizes": [1, 2], "wins": [2**20 * w for w in wins], "gain": [0.9, 1.2], "local_share": [share]}
    out.append(ch.lab_reading(rec))
labels(ch.ecmp_qp_figure(16, 16, (1, 2, 4), seed=0)[0])
labels(ch.lab_figure(rec))
for board, tries in ((ch.ecmp_qp_dashboard(), ((32, 32, 4), (8, 16, 1))),
                     (ch.lab_dashboard(rec), ((2, 2, 1.0, 250), (16, 8, 400.0, 5)))):
    controls(board)
    for args in tries:
        fig, text = board._render(*args)
        out.append(text)
        labels(fig)
try:
    ch.ecmp_qp_dashboard()._render(128, 32, 16)
except ValueError as exc:
    out.append(str(exc))
"""

_CH07 = """
from nvcourse import training
from nvcourse.checks import ch07 as c
from nvcourse.chapters import ch07_training as ch
mistakes(c.training_compute_time, c._compute_s, c._compute_variants, (70e9, 15e12, 1024, 989.0, 0.4))
mistakes(c.bubble_fraction, lambda p, m, v: training.pipeline_bubble_fraction(p, m, virtual_stages=v),
         c._bubble_variants, (4, 8, 2), (8, 16, 1))
mistakes(c.exposed_dp_time, c._exposed, c._exposed_variants, (2.0, 3.0, 4), (0.01, 3.0, 4), (5.0, 3.0, 1))
st = training.step_time("llama3-70b", "dgx-h100", 1024, tp=8, pp=4)
floor = st.compute_s + st.bubble_s
f = training.pipeline_bubble_fraction(st.pp, st.micro_batches)
for pred in (floor, st.compute_s, st.compute_s * (1 + f), st.total_s, floor / 3, floor / 2, floor * st.dp, -1.0,
             floor * 7.7, floor / 7.7):
    show(c.step_prediction(pred, st))
show(c.step_prediction(floor, "not a step"))
ask("07.", c)
out.append(c._placement_explain())
labels(ch.step_breakdown_bar(st))
labels(ch.placement_figure(st, training.step_time("llama3-70b", "dgx-h100", 1024, tp=8, pp=4, placement="dp-first"),
                           "title"))
labels(ch.scaling_efficiency_figure(["llama3-8b"], ["dgx-h100"], [8, 64])[0])
out.append(ch._part("EP comm"))  # a part of MoE steps only
out += [ch.price_source_html("mercatus-2026"), ch.price_source_html("assumption:a reason")]
for args in ((1024, "llama3-70b", "dgx-h100", 8, 4, "tp-first", 0.4, 15.6, 0.0),
             (8, "llama3-405b", "dgx-h100", 1, 1, "tp-first", 0.4, 15.6, 2.5)):
    fig, text = ch._render(*args)
    out.append(text)
    labels(fig)
controls(ch.step_dashboard(models=["llama3-8b", "llama3-70b"], systems=["dgx-h100"], compute_efficiency=0.4))
"""

_CH07B = """
from nvcourse import catalog, rooflines
from nvcourse.checks import ch07b as c
mistakes(c.bucket_exposed, c._exposed, c._exposed_variants, (17.5e9, 0.53, 2**28, 214e-6, 23.5e9))
for fn in (c._min_bucket, lambda g, tb, a, spb: g * a / tb, lambda g, tb, a, spb: (tb - g * spb) / a,
           lambda *args: 1.2345e-7):
    show(c.min_bucket(fn))
for fn in (c._pipe, lambda g, t, k: max(g, t) if k > 1 else c._pipe(g, t, k), lambda g, t, k: g + t,
           lambda *args: 1.2345e-7):
    show(c.tp_pipeline(fn))


def rates(sid):
    return rooflines.gpu_rates(sid, link="nic")


for fn in (lambda sid, r: rooflines.dp_roofline(1.0, *rates(sid), per_node=r).threshold,
           lambda sid, r: rates(sid)[0] / rates(sid)[1] if r > 1 else
           rooflines.dp_roofline(1.0, *rates(sid), per_node=r).threshold,
           lambda sid, r: rates(sid)[0] / (r * catalog.get_system(sid).scaleout_GBps_dir_per_gpu * 1e9),
           # with 8 ranks per node, bytes read as bits give the same number as C/W: only the 1-rank input tells
           lambda sid, r: rates(sid)[0] / (r * rates(sid)[1] / 8) if r == 1 else
           rooflines.dp_roofline(1.0, *rates(sid), per_node=r).threshold, lambda *args: 1.2345e-7):
    show(c.dp_threshold(fn))
"""

_CH09 = """
import dataclasses
from nvcourse import capstone, capstone_gates as gates
from nvcourse.chapters import ch09_capstone as ch
targets = capstone.Targets(model="llama3-70b", training_tokens=2e12, max_days=30, max_usd=3e6, min_goodput=0.90,
                           min_efficiency=0.70, max_MW=3.0)
reports = capstone.compare_systems(targets, ["pcie-8gpu", "dgx-h100", "gb200-nvl72"], [256, 512, 1024, 2048])
out.append(ch.comparison_summary_html(reports))
out.append(ch.comparison_summary_html(reports[:1]))  # no design passes
date = capstone.common_price_date(["pcie-8gpu", "dgx-h100", "gb200-nvl72"])  # the second price basis
ch.price_basis = lambda reports: (date, list(reports))  # the same designs pass at that month's prices
out.append(ch.comparison_summary_html(reports))
ch.price_basis = lambda reports: (date, [reports[-1] for r in reports])  # other designs pass
out.append(ch.comparison_summary_html(reports))
ch.price_basis = lambda reports: (date, [None for r in reports])
out.append(ch.comparison_summary_html(reports))
out.append(ch.comparison_summary_html(reports[:1]))
board = ch.design_dashboard(targets)
controls(board)
for args in ((512, "dgx-h100", 8, 2, 60, 10, 0.0), (64, "pcie-8gpu", 1, 1, 600, 60, 9.0),
             (512, "dgx-h100", 16, 1, 60, 10, 0.0),  # TP across nodes: the placement gate fails
             (2048, "dgx-h100", 8, 2, 1200, 120, 0.0),  # slow checkpoints and restarts: the goodput gate fails
             (1024, "dgx-h100", 8, 1, 60, 10, 0.0)):  # the last one passes every gate
    fig, text = ch.design_view(targets, *args)
    out.append(text)
    labels(fig)
report = capstone.evaluate(capstone.Design(system="dgx-h100", gpus=512, tp=8, pp=2), targets)
out += [r.text() for r in reports]
out += [capstone.decision_log(report), capstone.decision_log_template()]  # the decision log: field names and hints
dear = capstone.evaluate(capstone.Design(system="dgx-h100", gpus=512, tp=8, pp=2, usd_per_gpu_hour=20.0), targets)
out += [ch.prices_html(["pcie-8gpu", "dgx-h100", "gb200-nvl72"]), ch.price_headroom_html(report),
        ch.price_headroom_html(dear)]
fabrics = {"IB": gates.FabricChoice(nic="ib-ndr"), "IB static": gates.FabricChoice(nic="ib-ndr", routing="dmodk"),
           "IB SHARP": gates.FabricChoice(nic="ib-ndr", sharp=True), "RoCE": gates.FabricChoice(nic="roce-400g"),
           "RoCE 2": gates.FabricChoice(nic="roce-800g")}
out.append(ch.fabric_compare_html({"big": report, "dear": dear}, fabrics))
board = ch.fabric_dashboard(report)
controls(board)
for args in (("ib-ndr", "rail", 1.0, "default", False, "random"), ("roce-400g", "tor", 2.0, "dmodk", True, "packed"),
             ("ib-ndr", "rail", 1.0, "ideal", True, "random")):
    fig, text = board._render(*args)
    out.append(text)
    labels(fig)
fabric = gates.fabric_gate(report, gates.FabricChoice(nic="ib-ndr"), min_busbw_fraction=0.8)
out.append(ch.gates_html(fabric.gates))
serving = gates.ServingTargets(model="llama3-70b", max_token_ms=30, max_ttft_ms=1000, tokens_per_s=20_000,
                               prompt_tokens=4096)
plans = [gates.serving_plan(serving, s, batch=32) for s in ("dgx-h100", "gb200-nvl72")]
impossible = gates.ServingTargets(model="llama3-70b", max_token_ms=0.01, max_ttft_ms=1, tokens_per_s=20_000,
                                  prompt_tokens=4096)
out.append(ch.serving_summary_html(plans + [gates.serving_plan(impossible, "dgx-h100", batch=32)]))
out.append(ch.gates_html(gates.serving_plan(gates.ServingTargets(model="llama3-405b", max_token_ms=30, max_ttft_ms=1000,
                                                                 tokens_per_s=1000), "pcie-8gpu", batch=256).gates))
for fabric_choice in (gates.FabricChoice(nic="roce-400g", oversubscription=4.0, routing="ecmp", layout="tor"),):
    out.append(ch.gates_html(gates.fabric_gate(dear, fabric_choice, min_busbw_fraction=0.99).gates))
isolation = gates.IsolationTargets(shared_fabric=True, max_slowdown=0.001, qos="none", master_addr="203.0.113.7")
out.append(ch.gates_html(gates.isolation_requirements(report, gates.FabricChoice(nic="roce-400g"), isolation).gates))
monitoring = gates.monitoring_requirements(fabric)
out.append(ch.monitoring_html(monitoring))
out.append(ch.monitoring_html(dataclasses.replace(monitoring, thresholds=None)))  # no inter-node traffic
out.append(ch._part("EP comm"))  # a part of MoE steps only
"""

def _walk(script: str, language: str) -> str:
    return walk(_FRAME, script, language)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch05_checkers_questions_readouts_and_figures_speak_the_language(language):
    shown = _walk(_CH05, language)
    # adding the NVLink and network times gives 13.7x against the model's 13.6x: inside the answer's 2 % tolerance,
    # so that hint is never reached
    summed = frozenset({"You added the NVLink and the network times of the 8-GPU system: they run at the same time "
                        "(max)."})
    _speaks(shown, language, ("nvcourse/checks/ch05.py", "nvcourse/chapters/ch05_nvl72.py"), summed, least=80)
    if language == "fr":
        assert "dans le commutateur (NVLS)" in shown and "limité par" in shown and "octets par GPU" in shown
        assert "1\u00a0GiB sur 72\u00a0GPU" in shown or "1\u00a0GiB sur 72 GPU" in shown
        assert "faster for this layer" not in shown and "bytes per GPU" not in shown
    else:
        assert "faster for this layer" in shown and "1 GiB over 72 GPUs (NCCL's model)" in shown


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch06_checkers_questions_readouts_and_figures_speak_the_language(language):
    shown = _walk(_CH06 + _PRINTS_CH06, language)
    _speaks(shown, language, ("nvcourse/checks/ch06.py", "nvcourse/chapters/ch06_fabrics.py"), least=70)
    if language == "fr":
        # the glossary's words: leaf/spine as « feuille–spine » (docs/fr/glossaire.md), never « épine »
        assert "bande passante" in shown and "routage adaptatif" in shown and "feuille–spine" in shown
        assert "épine" not in shown
        assert "Look at the time" not in shown and "slowest flow" not in shown
    else:
        assert "Look at the time and where it goes" in shown and "slowest flow" in shown


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch06c_checkers_lab_readouts_and_figures_speak_the_language(language):
    shown = _walk(_CH06C + _PRINTS_CH06C, language)
    _speaks(shown, language, ("nvcourse/checks/ch06c.py", "nvcourse/chapters/ch06c_multinode_lab.py"), least=60)
    if language == "fr":
        assert "anneau à plat" in shown and "liaisons montantes" in shown and "119,5\u00a0MB/s" in shown
        assert "In this run" not in shown and "flat ring" not in shown
    else:
        assert "In this run" in shown and "119.5 MB/s" in shown


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch07_checkers_questions_readouts_and_figures_speak_the_language(language):
    shown = _walk(_CH07 + _PRINTS_CH07, language)
    # no input of exposed_dp_time has an all-reduce longer than the backward pass of the whole step (4/6 of the
    # compute), the only inputs where these two mistakes give a number that is not 0
    whole_step = frozenset({"Not the whole step: gradients are final only during the backward pass of the last "
                            "micro-batch (compute / m), the earlier micro-batches only accumulate.",
                            "Divide by the micro-batches: only the last one's backward overlaps (compute / m × 4/6)."})
    _speaks(shown, language, ("nvcourse/checks/ch07.py", "nvcourse/chapters/ch07_training.py"), whole_step,
            least=70)
    if language == "fr":
        assert "bulle du pipeline" in shown and "ne tient pas" in shown and "passe arrière" in shown
        assert "seconds per step" not in shown and "does not fit" not in shown
    else:
        assert "seconds per step" in shown and "does not fit" in shown


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch07b_checkers_speak_the_language(language):
    shown = _walk(_CH07B, language)
    _speaks(shown, language, ("nvcourse/checks/ch07b.py",), least=19)
    if language == "fr":
        assert "passe arrière" in shown and "paquet" in shown and "the backward" not in shown
    else:
        assert "the backward" in shown


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ch09_survey_dashboards_and_gate_tables_speak_the_language(language):
    shown = _walk(_CH09, language)
    # chapter 09's module and the gates' modules: every message, with this walk and more, in test_i18n_leftovers.py
    _speaks(shown, language, ("nvcourse/capstone.py",), least=40)
    if language == "fr":
        assert "critères" in shown and "que tenter" in shown and "secondes par pas" in shown
        assert "what to try" not in shown and "every gate passes" not in shown
    else:
        assert "what to try" in shown and "seconds per step" in shown
