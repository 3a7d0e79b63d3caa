"""The last English of the package modules speaks the learner's language: chapter 08b's drill (its hints, the
evidence a right answer gets, the fault signatures, the seed error: nvcourse/observability/drill.py), the capstone's
fabric, serving, isolation and monitoring gates (their names, what the design gives, the targets, the fabric in
words and what it needs, the decision log's rows: nvcourse/capstone_gates.py, capstone_serving.py and chapter 09's
tables, price labels and monitoring entry: nvcourse/chapters/ch09_capstone.py) and the process group's errors
(nvcourse/collectives/group.py), in French under NVCOURSE_LANG=fr and in English otherwise.

The messages come from a fresh extraction of the modules (nvcourse.devtools.i18n_catalog.python_template), not
from the French catalog, so a string newly wrapped in ``_()`` is checked in English at once and fails in French
until it is translated. Each walk (tests/i18n_walks.py) reaches every path of its module but the few listed in
``UNREACHABLE``. The stable keys stay English in every language: ``Gate.name``, ``drill.FAULTS``,
``drill.SIGNATURES``, ``capstone_gates.NEEDS`` and ``ROUTING_WORDS``."""

from __future__ import annotations

import polib
import pytest
from i18n_walks import fragments, run_walk, walk
from test_i18n_prints_p3 import CH09 as _P3_09
from test_i18n_rest import _CH09  # chapter 09's survey, dashboards and gate tables
from test_i18n_rest import _FRAME as _REST_FRAME  # its helpers: controls(), labels()

from nvcourse.devtools import i18n_catalog

DRILL = "nvcourse/observability/drill.py"
GATES = ("nvcourse/capstone_gates.py", "nvcourse/capstone_serving.py", "nvcourse/chapters/ch09_capstone.py")
GROUP = "nvcourse/collectives/group.py"
#: the names of the gates of capstone_gates and capstone_serving (the training gates': test_i18n_f2_capstone.py)
GATE_NAMES = ("fabric busbw", "fabric step", "serving memory", "token latency", "TTFT", "neighbour", "control plane")

#: Messages no walk reaches without interrupting a call or breaking a worker's pipe (the paths exist for a
#: Ctrl-C during a collective and for a worker that closes its end; test_collectives covers their behaviour).
UNREACHABLE = frozenset({
    "rank {rank} died while abandoning the interrupted call",
    "a worker died while abandoning the interrupted call",
    "workers did not abandon the interrupted call in time",
    "rank {rank} (pid {pid}) stopped listening before {what}",
})

_FRAME = """
import sys
import matplotlib
matplotlib.use("Agg")
out = []
"""

_DRILL = """
from nvcourse.observability import drill
for seed in range(4):
    for name in drill.INCIDENTS:
        run = drill.incident(name, seed)
        comps = drill.components()
        node = run.component.split("/")[0]
        tries = [run.component, node, node + "/gpu0", node + "/gpu3", node + "/mlx5_0", "node7/mlx5_3", "leaf0",
                 "leaf7", *[g for g, r in run.gpus.items() if "ecc_sbe" in r],
                 *[p for p, r in run.ports.items() if r.get("raw_ber", 0) >= drill.RAW_BER_SHOWN]]
        for fault in drill.FAULTS:
            for component in tries:
                v = drill.verdict(run, fault, component)
                out += [*v.evidence, v.mistake]
out += [drill.signature(f) for f in drill.FAULTS]
out += list(drill.fault_labels().values())  # the drill dashboard's fault menu
try:
    drill.incident("A", -1)
except ValueError as e:
    out.append(str(e))
"""

_GATES = """
from nvcourse import capstone as cs, capstone_gates as g
from nvcourse.chapters import ch09_capstone as ch
t = cs.Targets(model="llama3-70b", training_tokens=15e12, max_days=30, max_usd=3e6, min_goodput=0.9,
               min_efficiency=0.7, max_MW=3)
big = cs.evaluate(cs.Design(system="dgx-h100", gpus=1024, tp=8, pp=1), t)
mid = cs.evaluate(cs.Design(system="dgx-h100", gpus=512, tp=4, pp=2), t)
one = cs.evaluate(cs.Design(system="dgx-h100", gpus=8, tp=8, pp=1), t)
fabs = {"ar": g.FabricChoice(), "static": g.FabricChoice(routing="dmodk"),
        "sharp": g.FabricChoice(sharp=True, placement="packed"), "roce": g.FabricChoice(nic="roce-400g"),
        "spray": g.FabricChoice(nic="roce-400g", routing="ideal", layout="tor", oversubscription=4)}
for f in fabs.values():
    out += [f.describe(), *f.needs]
for r in (big, mid, one):
    for f in fabs.values():
        fr = g.fabric_gate(r, f)
        out += [ch.gates_html(fr.gates), g.decision_log_entries(fabric=fr, monitoring=g.monitoring_requirements(fr))]
        m = g.monitoring_requirements(fr)
        out += [m.text(), ch.monitoring_entry(m)]
    out += [ch.fabric_options_html(r, fabs)]
for addr in ("10.0.0.1", "127.0.0.1", "0.0.0.0", "8.8.8.8"):
    for shared in (True, False):
        for fab in ("ar", "roce"):
            iso = g.isolation_requirements(cs.evaluate(cs.Design(system="gb200-nvl72", gpus=512, tp=8, pp=1), t),
                                           fabs[fab], g.IsolationTargets(master_addr=addr, shared_fabric=shared))
            out += [ch.gates_html(iso.gates), g.decision_log_entries(isolation_result=iso)]
ok = g.ServingTargets(model="llama3-70b", max_token_ms=30, max_ttft_ms=500, tokens_per_s=20000)
hard = g.ServingTargets(model="llama3-70b", max_token_ms=1, max_ttft_ms=5, tokens_per_s=20000)
for system in ("dgx-h100", "pcie-8gpu"):
    for st in (ok, hard):
        for batch in (1, 512):
            sp = g.serving_plan(st, system, batch=batch)
            out += [ch.serving_html(sp), g.decision_log_entries(serving=sp)]
fr = g.fabric_gate(big, fabs["roce"], min_busbw_fraction=0.99)
out.append(ch.decision_log_rows(fabric=fr, serving=g.serving_plan(ok, "dgx-h100"), isolation_result=iso,
                                monitoring=g.monitoring_requirements(fr)))
out.append(ch.decision_log_rows(fabric=g.fabric_gate(one), serving=sp, isolation_result=iso,
                                monitoring=g.monitoring_requirements(g.fabric_gate(one))))
out += [ch.prices_html(list(ch.SYSTEMS)), ch.comparison_summary_html([big, mid, one]), ch.comparison_table_html([mid])]
out.append(ch.design_view(t, 512, "dgx-h100", 8, 2, 60, 10, 0)[1])
for bad in (dict(sharp=True, nic="roce-400g"), dict(sharp=True, nic="nvlink4")):
    try:
        g.FabricChoice(**bad)
    except ValueError as e:
        out.append(str(e))
"""

_GROUP = """
from nvcourse.collectives.group import ProcessGroup
from nvcourse.collectives.results import Fault
for kw in (dict(nprocs=0), dict(nprocs=2, timeout_s=0)):
    try:
        ProcessGroup(**kw)
    except ValueError as e:
        out.append(str(e))
with ProcessGroup(1) as g1:
    try:
        g1.run("pingpong", 64)
    except ValueError as e:
        out.append(str(e))
with ProcessGroup(2, timeout_s=1) as g:
    for kw in (dict(iters=0), dict(fault="x"), dict(fault=Fault(rank=5, iteration=0, step=0, action="hang"))):
        try:
            g.run("allreduce", 64, **kw)
        except ValueError as e:
            out.append(str(e))
    try:
        g.kill_worker(9)
    except ValueError as e:
        out.append(str(e))
    g.kill_worker(1)
    for _ in range(2):  # the dead rank, then the closed group
        try:
            g.run("allreduce", 64)
        except Exception as e:
            out.append(str(e))
for action in ("raise", "exit", "hang"):
    with ProcessGroup(2, timeout_s=1) as g:
        try:
            g.run("allreduce", 64, fault=Fault(rank=1, iteration=0, step=0, action=action))
        except Exception as e:
            out.append(str(e))
"""

_WALKS = {"drill": _DRILL, "gates": _GATES + _CH09 + _P3_09, "group": _GROUP}


@pytest.fixture(scope="module")
def template() -> polib.POFile:
    return i18n_catalog.python_template()


def _entries(template: polib.POFile, *paths: str) -> list[polib.POEntry]:
    return [e for e in template if any(o[0] in paths for o in e.occurrences) and e.msgid not in UNREACHABLE]


@pytest.fixture(scope="module")
def french() -> dict[str, polib.POEntry]:
    po = polib.pofile(str(i18n_catalog.po_path("fr", "nvcourse")))
    return {e.msgid: e for e in po if not e.obsolete}


def _forms(entry: polib.POEntry, language: str, french: dict[str, polib.POEntry]) -> list[str]:
    """What the learner reads of ``entry`` in ``language``: its English forms, or its French translation."""
    if language == "en":
        return [entry.msgid, *([entry.msgid_plural] if entry.msgid_plural else [])]
    done = french.get(entry.msgid)
    assert done is not None and i18n_catalog.done(done), f"not translated: {entry.msgid!r}"
    return list(done.msgstr_plural.values()) if done.msgid_plural else [done.msgstr]


def _speaks(shown: str, language: str, entries: list[polib.POEntry], french: dict[str, polib.POEntry]) -> None:
    """Every entry is shown in ``language`` (its fixed parts); in French no English sentence is left."""
    for e in entries:
        for form in _forms(e, language, french):
            for fragment in fragments(form):
                assert fragment in shown, f"{language}: never shown: {fragment!r} (of {e.msgid!r})"
        if language == "fr" and "{" not in e.msgid and len(e.msgid) > 20 and french[e.msgid].msgstr != e.msgid:
            assert e.msgid not in shown, f"English left: {e.msgid!r}"


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("name, paths, least", [("drill", (DRILL,), 25), ("gates", GATES, 60),
                                                ("group", (GROUP,), 10)])
def test_every_message_is_shown_in_each_language(template, french, name, paths, least, language):
    entries = _entries(template, *paths)
    assert len(entries) >= least
    _speaks(walk(_REST_FRAME, _WALKS[name], language), language, entries, french)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_gates_names_are_shown_in_each_language(template, french, language):
    names = [e for e in _entries(template, "nvcourse/capstone_gates.py") if e.msgid in GATE_NAMES]
    assert len(names) == len(GATE_NAMES)
    script = "from nvcourse.capstone_gates import gate_name\nout = [gate_name(n) for n in %r]\n" % (GATE_NAMES,)
    shown = run_walk(script + "print('\\n'.join(out))", language).splitlines()
    assert shown[:len(GATE_NAMES)] == [_forms(e, language, french)[0] for e in sorted(
        names, key=lambda e: GATE_NAMES.index(e.msgid))]


def test_english_reads_as_before():
    """A few whole English lines, as the chapters and the English notebooks print them."""
    text = walk(_FRAME, _GATES + _DRILL, "en")
    assert "| requirement | entry |\n|---|---|\n| **Fabric gate** | InfiniBand NDR" in text
    assert "fabric busbw pass (" in text and "; target ≥ 80% of non-blocking + adaptive routing, 128 nodes, " in text
    assert "neighbour" in text and "MASTER_ADDR 10.0.0.1: private network" in text
    assert "Right node, wrong GPU: read the per-GPU rows." in text
    assert "Check the signature: congestion is a steady step-time rise with PortXmitWait high" in text
    assert "seed must be an integer >= 0; got -1" in text


def test_the_stable_keys_stay_english():
    script = """
from nvcourse import capstone as cs, capstone_gates as g
from nvcourse.observability import drill
t = cs.Targets(model="llama3-70b", training_tokens=15e12, max_days=30, max_usd=3e6)
r = cs.evaluate(cs.Design(system="dgx-h100", gpus=1024, tp=8, pp=1), t)
fr = g.fabric_gate(r, g.FabricChoice(nic="roce-400g"))
st = g.ServingTargets(model="llama3-70b", max_token_ms=30, max_ttft_ms=500, tokens_per_s=2e4)
sp = g.serving_plan(st, "dgx-h100")
iso = g.isolation_requirements(r)
print([x.name for x in (*fr.gates, *sp.gates, *iso.gates)])
print(sorted(g.NEEDS), g.NEEDS["packed"], g.ROUTING_WORDS["ecmp"], drill.FAULTS, drill.SIGNATURES["mis-set P_Key"])
"""
    lines = run_walk(script, "fr").splitlines()
    assert lines[0] == str(["fabric busbw", "fabric step", "serving memory", "token latency", "TTFT", "neighbour",
                            "control plane"])
    assert lines[1].startswith("['SHARP', 'adaptive routing', 'packed', 'packet spraying'] a topology-aware "
                               "scheduler that gives the job nodes under as few leaf switches as it can ECMP hashing "
                               "('flapping link', ")
    assert lines[1].endswith("a wrong partition stops the job before its first step: PortRcvConstraintErrors on all "
                             "of one node's ports and a watchdog timeout, no step times.")
