"""The readers' and the command line's output in real French (``nvcourse nccl-tests``, ``ncclog``, ``predict``,
``systems``, ``links``, the runbook drill's verdict): French numbers, counts that agree with their noun in both
languages (no "(s)"), the multiplication sign, the size bands' names, and "step" read in its context.

* French numbers: decimal comma, thousands grouped by U+202F, U+00A0 between a number and its unit, ``×`` for a
  multiplier (docs/fr/glossaire.md); English keeps Python's writing (``8388608``, ``155.57``, ``x2``).
* Counts: ``ngettext`` everywhere a count meets its noun: "1 host seen" / "2 hosts seen", "1 hôte vu" / "2 hôtes vus".
* ``--json`` is a stable interface: the same bytes in every language.
* ``pgettext``: an entry is its context and its English (``msgctxt``), so "step" can be *étape* in the runbook.

The walk (tests/i18n_walks.py) shows both forms of every plural message these modules gained and every entry of
nvcourse/runbook.py, in each language.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import polib
import pytest
from i18n_walks import entries, fragments, run_walk

from nvcourse.devtools import i18n_catalog

ROOT = Path(__file__).resolve().parents[1]
NBSP, NNBSP = "\u00a0", "\u202f"
NCCL_TESTS = "tests/fixtures/nccl_tests/allreduce_h100_2nodes_srun_label_nccltests290.txt"
NCCLOG = "tests/fixtures/ncclog/ib_error4_gdr_vm_nccl660.log"
#: the messages this change made plural, or new, outside the modules test_i18n_data_readers.py walks
NEW = {
    "nvcourse/nccl/cli.py": ("model: {system}, {gpus} per node x {nodes}", "{band} ({first}-{last} B): {verdict}",
                             "rows: {sizes}, {first} to {last} B; largest-size busbw {busbw} GB/s (out-of-place)",
                             "{n} GPU", "{n} node", "{n} size"),
    "nvcourse/costmodel/cli.py": ("# nvcourse predict: {op} on {system}, {gpus} per node x {nodes} = {ranks}, NIC "
                                  "{nic}, algo {algo}{launch}, NCCL {version}", "{n} GPU", "{n} node", "{n} rank"),
    "nvcourse/nccl/diagnose.py": ("latency", "transition", "bandwidth"),
}


def _cli(args: list[str], language: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("LC_ALL", "LC_MESSAGES", "LANG")}
    return subprocess.run([sys.executable, "-m", "nvcourse", *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**env, "NVCOURSE_LANG": language})


WALK = r'''
import contextlib, glob, io, sys
from nvcourse import cli
from nvcourse.nccl import ncclog, nccltests
from nvcourse.nccl.cli import format_report
from nvcourse.nccl.diagnose import diagnose
from nvcourse.runbook import drill_data, drill_verdict
out = []
for f in sorted(glob.glob("tests/fixtures/nccl_tests/*") + glob.glob("nvcourse/data/nccl/*.txt")):
    run = nccltests.read_text(open(f, encoding="utf-8").read())
    for gpus, nodes in ((1, 1), (8, 2)):
        out.append(format_report(run, diagnose(run, system="dgx-h100", gpus=gpus, nodes=nodes)))
for f in sorted(glob.glob("tests/fixtures/ncclog/*") + glob.glob("nvcourse/data/nccl/*.log")):
    try:
        out.append(ncclog.explain(ncclog.read_text(open(f, encoding="utf-8", errors="replace").read())))
    except ValueError:
        pass
for gpus, nodes in (("1", "2"), ("2", "1"), ("8", "2")):
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        cli.main(["predict", "allreduce", "--system", "dgx-h100", "--gpus", gpus, "--nodes", nodes, "--bytes", "1MiB"])
    out.append(shown.getvalue())
d = drill_data()
best = list(d["best_steps"])
others = [s for s in d["steps"] if s not in best]
out += [drill_verdict(d["answer"], best)[1], drill_verdict(d["answer"], best + others[:1])[1],
        drill_verdict(d["answer"], best * 2)[1], drill_verdict(others[0] if others else "x", best)[1]]
sys.stdout.write("\n".join(out))
'''


@pytest.fixture(scope="module", params=["en", "fr"])
def walked(request) -> tuple[str, str]:
    return request.param, run_walk(WALK, request.param)


def _forms(e: polib.POEntry, language: str) -> list[str]:
    if language == "en":
        return [e.msgid, *([e.msgid_plural] if e.msgid_plural else [])]
    assert e.msgstr or any(e.msgstr_plural.values()), f"not translated: {e.msgid!r}"
    return list(e.msgstr_plural.values()) if e.msgid_plural else [e.msgstr]


def test_every_new_message_shows_both_its_forms_in_each_language(walked):
    language, shown = walked
    wanted = [e for path, ids in NEW.items() for e in entries(path) if e.msgid in ids]
    wanted += entries("nvcourse/runbook.py")
    assert len(wanted) >= 15
    for e in wanted:
        for form in _forms(e, language):
            for fragment in fragments(form):
                assert fragment in shown, f"{language}: never shown: {fragment!r} (of {e.msgid!r})"
    if language == "fr":
        assert "étape" in shown and " step" not in shown


def test_no_count_reads_noun_s_in_either_language(walked):
    """The readers' and predict's output never write "(s)" after a noun: ngettext picks the form."""
    language, shown = walked
    assert re.findall(r"\w\(s\)", shown) == [], language


def test_counts_agree_with_their_noun():
    en, fr = _cli(["ncclog", NCCLOG], "en"), _cli(["ncclog", NCCLOG], "fr")
    assert en.returncode == fr.returncode == 0, en.stderr + fr.stderr
    assert "with 2 ranks on 2 hosts seen (vm2, vm1)" in en.stdout and "2 WARN lines: " in en.stdout
    assert "avec 2 rangs sur 2 hôtes vus (vm2, vm1)" in fr.stdout and f"2 lignes WARN{NBSP}: " in fr.stdout
    single = "tests/fixtures/ncclog/socket_v2_19_single_rank_nccl1267.log"  # one rank on one host, one device
    en, fr = _cli(["ncclog", single], "en").stdout, _cli(["ncclog", single], "fr").stdout
    assert "with 1 rank on 1 host seen (" in en and "over 1 device (" in en
    assert "avec 1 rang sur 1 hôte vu (" in fr and "sur 1 périphérique (" in fr


def test_nccl_tests_report_writes_french_numbers_and_english_as_before():
    args = ["nccl-tests", NCCL_TESTS, "--system", "dgx-h100"]
    en, fr = _cli(args, "en"), _cli(args, "fr")
    assert en.returncode == fr.returncode == 0, en.stderr + fr.stderr
    # English: Python's numbers, the band's stable name, x for a multiplier; only the plurals changed
    assert "rows: 11 sizes, 8388608 to 8589934592 B; largest-size busbw 155.57 GB/s (out-of-place)" in en.stdout
    assert "Avg bus bandwidth (as printed): 142.735 GB/s; out of bounds: 0" in en.stdout
    assert "model: dgx-h100, 8 GPUs per node x 2 nodes" in en.stdout
    assert " bandwidth (33554432-8589934592 B): well below the model (0.34x)" in en.stdout
    assert "transition (8388608-16777216 B): " in en.stdout
    # French: grouped thousands (U+202F), decimal comma, U+00A0 before units and colons, ×, the bands named
    big = f"8{NNBSP}589{NNBSP}934{NNBSP}592"
    assert (f"lignes{NBSP}: 11 tailles, de 8{NNBSP}388{NNBSP}608 à {big}{NBSP}B{NBSP}; busbw à la plus grande "
            f"taille 155,57{NBSP}GB/s") in fr.stdout
    assert f"Avg bus bandwidth (tel qu'affiché){NBSP}: 142,735{NBSP}GB/s" in fr.stdout
    assert f"modèle{NBSP}: dgx-h100, 8 GPU par nœud × 2 nœuds" in fr.stdout
    assert f"bande passante (33{NNBSP}554{NNBSP}432-{big}{NBSP}B){NBSP}: nettement sous le modèle (0,34×)" \
        in fr.stdout
    assert f"transition (8{NNBSP}388{NNBSP}608-16{NNBSP}777{NNBSP}216{NBSP}B){NBSP}: " in fr.stdout
    assert "la bande «" in fr.stdout and "« bandwidth »" not in fr.stdout.replace(NBSP, " ")
    assert not re.search(r"\d\.\d+ ?GB/s|\d{4,} ?B\b|\dx\b| x \d", fr.stdout)


def test_transports_and_predict_use_the_multiplication_sign_in_french():
    log = "tests/fixtures/ncclog/ib_gdrdma_2nodes_p2p_read_nccltests133.log"
    en, fr = _cli(["ncclog", log], "en").stdout, _cli(["ncclog", log], "fr").stdout
    assert re.search(r"Connections by transport: [^.]* x\d", en)
    assert re.search(r"Connexions par transport[^.]* ×\d", fr) and not re.search(r" x\d", fr)
    pred = ["predict", "allreduce", "--system", "dgx-h100", "--gpus", "8", "--bytes", "64MiB"]
    en, fr = _cli(pred, "en").stdout, _cli(pred, "fr").stdout
    assert en.startswith("# nvcourse predict: allreduce on dgx-h100, 8 GPUs per node x 1 node = 8 ranks, NIC")
    assert fr.startswith(f"# nvcourse predict{NBSP}: allreduce sur dgx-h100, 8 GPU par nœud × 1 nœud = 8 rangs")
    assert re.search(r"# latency-bound: latency \d+\.\d\d us \+ bandwidth \d+\.\d\d us|# bandwidth-bound: latency "
                     r"\d+\.\d\d us", en)
    assert re.search(rf"latence \d+,\d\d{NBSP}us \+ bande passante \d+,\d\d{NBSP}us", fr)


def test_catalog_tables_write_decimal_commas_in_french_and_keep_their_width():
    en, fr = _cli(["links"], "en").stdout, _cli(["links"], "fr").stdout
    assert "pcie4      pcie               31.50      0.880      27.72      5.7    154 KiB" in en
    assert f"pcie4      pcie               31,50      0,880      27,72      5,7    154{NBSP}KiB" in fr
    assert [len(r) for r in en.splitlines()[2:6]] == [len(r) for r in fr.splitlines()[2:6]]
    assert " 450,0 " in _cli(["systems"], "fr").stdout and " 450.0 " in _cli(["systems"], "en").stdout


@pytest.mark.parametrize("args", [["ncclog", NCCLOG], ["nccl-tests", NCCL_TESTS, "--system", "dgx-h100"],
                                  ["predict", "allreduce", "--system", "dgx-h100", "--gpus", "8", "--nodes", "2",
                                   "--min-bytes", "1KiB", "--max-bytes", "1MiB"], ["systems"], ["links"]],
                         ids=["ncclog", "nccl-tests", "predict", "systems", "links"])
def test_json_is_the_same_bytes_in_every_language(args):
    en, fr = _cli([*args, "--json"], "en"), _cli([*args, "--json"], "fr")
    assert en.returncode == fr.returncode == 0, en.stderr + fr.stderr
    assert en.stdout == fr.stdout
    json.loads(en.stdout)
    assert "(s)" not in en.stdout or args[0] in ("systems", "links")


def test_step_reads_in_its_context():
    """The catalog keeps an entry per (context, English): the runbook's "step" is an étape, and the size band
    "bandwidth" has its own entry (msgctxt), apart from any other "bandwidth"."""
    po = polib.pofile(str(i18n_catalog.po_path("fr", "nvcourse")))
    ctx = {(e.msgctxt, e.msgid): e for e in po if not e.obsolete and e.msgctxt}
    step = ctx[("runbook", "found in {n} step; the fewest is {best} ({names})")]
    assert "étape" in step.msgstr_plural[0] and "étapes" in step.msgstr_plural[1]
    assert ctx[("size band", "bandwidth")].msgstr == "bande passante"
    walked = run_walk("from nvcourse import i18n\nprint(i18n.pgettext('runbook', 'not {cause}: look again at what the "
                      "first step that names a layer says'), i18n.npgettext('runbook', 'found in {n} step; the "
                      "fewest is {best} ({names})', 'found in {n} steps; the fewest is {best} ({names})', 3))", "fr")
    assert "première étape" in walked and "trouvé en {n} étapes" in walked


def test_the_extractor_and_merge_keep_one_entry_per_context():
    template = i18n_catalog.python_template()
    contexts = {(e.msgctxt, e.msgid) for e in template if e.msgctxt}
    assert ("runbook", "; not needed: {names}") in contexts and ("size band", "latency") in contexts
    pot = polib.POFile()
    for ctx in ("training", "algorithm"):
        pot.append(polib.POEntry(msgid="step", msgctxt=ctx, msgstr=""))
    old = polib.POFile()
    old.append(polib.POEntry(msgid="step", msgctxt="training", msgstr="pas"))
    old.append(polib.POEntry(msgid="step", msgctxt="algorithm", msgstr="étape"))
    merged = {e.msgctxt: e.msgstr for e in i18n_catalog.merge(pot, old, "fr")}
    assert merged == {"training": "pas", "algorithm": "étape"}


def test_scientific_numbers_take_the_french_decimal_comma(monkeypatch):
    # chapter 10's error figures (1.81e-03): the mantissa is a decimal like any other; English stays as Python prints
    from nvcourse import i18n

    monkeypatch.setenv("NVCOURSE_LANG", "en")
    assert i18n.number(1.8123e-3, ".2e") == "1.81e-03"
    monkeypatch.setenv("NVCOURSE_LANG", "fr")
    assert i18n.number(1.8123e-3, ".2e") == "1,81e-03"
    assert i18n.number(12345.5, ",.1f") == "12\u202f345,5"
