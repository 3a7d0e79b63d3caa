"""The French edition: templates fresh, catalogs complete for the chapters in the edition, translations that keep
numbers, units, code, URLs and LaTeX, an English edit that re-opens its paragraph, built notebooks whose code is
the English code, and checker feedback in French under NVCOURSE_LANG=fr (English otherwise)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import polib
import pytest
from i18n_walks import entries as catalog_entries
from i18n_walks import fragments, run_walk, speaks

from nvcourse import i18n
from nvcourse.devtools import i18n_build, i18n_catalog, i18n_checks, i18n_cli
from nvcourse.devtools.i18n_markdown import join, split, units

ROOT = Path(__file__).resolve().parents[1]
LANG = "fr"
#: The chapters translated so far: 100 % and nothing fuzzy (every chapter, exercise notebook and quiz form now).
COMPLETE = tuple(p.relative_to(ROOT).as_posix() for p in i18n_catalog.source_notebooks(ROOT))


def catalog(domain: str) -> polib.POFile:
    return polib.pofile(str(i18n_catalog.po_path(LANG, domain)))


# -- the store ------------------------------------------------------------------------------------------------
def test_templates_are_fresh():
    assert i18n_catalog.extract(check=True) == [], "run: python3 tasks.py i18n extract && python3 tasks.py i18n update"


def test_catalogs_hold_every_template_entry():
    for domain in i18n_catalog.DOMAINS:
        pot = {e.msgid for e in polib.pofile(str(ROOT / "locales" / f"{domain}.pot"))}
        po = {e.msgid for e in catalog(domain) if not e.obsolete}
        assert pot == po, f"{domain}.po is behind its template: run python3 tasks.py i18n update"


def test_markdown_units_rebuild_every_cell_exactly():
    for path in i18n_catalog.source_notebooks():
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                assert "".join(p.text for p in split(cell.source)) == cell.source, (path.name, cell.id)
                assert join(cell.source, lambda _: None)[0] == cell.source


def test_units_are_paragraphs_items_headings_and_tables_not_cells():
    source = ("## Title\n\nOne paragraph\non two lines.\n\n- item one\n  continued\n- item two\n\n"
              "| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nx = 1\n```\n\n$$a+b$$\n\n<!-- BEGIN SOLUTION -->")
    got = [(u.kind, u.text) for u in units(source)]
    assert got == [("heading", "Title"), ("paragraph", "One paragraph\non two lines."),
                   ("item", "item one\n  continued"), ("item", "item two"),
                   ("table", "| a | b |\n|---|---|\n| 1 | 2 |")]


def test_chapters_in_the_edition_are_fully_translated_and_not_fuzzy():
    status = i18n_cli.chapter_status(catalog("notebooks"))
    for chapter in COMPLETE:
        units_, done, fuzzy = status[chapter]
        assert units_ > 0 and done == units_ and fuzzy == 0, (chapter, status[chapter])
    po = catalog("nvcourse")
    assert not po.untranslated_entries() and not po.fuzzy_entries()


def test_every_edition_notebook_is_fully_translated():
    table = i18n_build.translations(LANG)
    for path in [p for d in ("notebooks", "solutions") for p in sorted((ROOT / d / LANG).glob("*.ipynb"))]:
        english = path.parent.parent / path.name
        left = [u.text[:60] for c in nbformat.read(english, as_version=4).cells if c.cell_type == "markdown"
                for u in units(c.source) if u.text not in table]
        assert not left, f"{path.relative_to(ROOT)}: untranslated or fuzzy: {left}"


# -- what a translation must keep ----------------------------------------------------------------------------
def test_translations_keep_numbers_units_code_urls_latex_and_placeholders():
    for domain in i18n_catalog.DOMAINS:
        assert i18n_checks.catalog_problems(catalog(domain)) == [], domain


@pytest.mark.parametrize("target, problem", [
    ("Soit 17 octets à 900 GB/s, `x = 1`, $N$, https://a.example/b", "numbers"),
    ("Soit 16 octets à 900 Gb/s, `x = 1`, $N$, https://a.example/b", "units"),
    ("Soit 16 octets à 900 GB/s, `x = 2`, $N$, https://a.example/b", "code spans"),
    ("Soit 16 octets à 900 GB/s, `x = 1`, $M$, https://a.example/b", "LaTeX"),
    ("Soit 16 octets à 900 GB/s, `x = 1`, $N$, https://a.example/c", "urls"),
])
def test_the_check_catches_a_changed_number_unit_code_latex_or_url(target, problem):
    source = "That is 16 bytes at 900 GB/s, `x = 1`, $N$, https://a.example/b"
    assert i18n_checks.entry_problems(source, source.replace("That is", "Soit").replace("bytes at", "octets à")) == []
    assert any(p.startswith(problem) for p in i18n_checks.entry_problems(source, target))


def test_a_code_span_may_wrap_and_a_dollar_sign_is_not_latex():
    # Markdown reads a line break inside a code span as a space; `\$` is a price's dollar sign
    source = "logs `NET/IB: Data Direct DMA Interface is detected\n  for device ...` and `x`; \\$2.84 M"
    target = "journalise `NET/IB: Data Direct DMA Interface is detected for device ...` et `x` ; 2,84 M\\$"
    assert i18n_checks.entry_problems(source, target) == []
    assert i18n_checks.entry_problems(source, target.replace("for device", "for the device")) == ["code spans differ"]


def test_french_number_style_is_allowed_by_the_check():
    assert i18n_checks.entry_problems("1.12 TB, 16,384 GPUs, 90 %", "1,12\u00a0TB, 16\u202f384 GPU, 90\u00a0%") == []


# -- an English edit ------------------------------------------------------------------------------------------
def _notebook(path: Path, markdown: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(markdown, id="intro"), nbformat.v4.new_code_cell("x = 1", id="code")]
    nb.cells[1].metadata["tags"] = ["nbval-ignore-output"]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def test_a_changed_english_paragraph_becomes_fuzzy_and_a_new_one_untranslated(tmp_path):
    (tmp_path / "solutions").mkdir()
    nb = tmp_path / "notebooks" / "01_x.ipynb"
    _notebook(nb, "# Title\n\nThe ring sends 2 chunks per step.\n\nA second paragraph.")
    old = i18n_catalog.merge(i18n_catalog.notebooks_template(tmp_path), i18n_catalog._new_file(LANG), LANG)
    for e in old:
        e.msgstr = {"Title": "Titre", "The ring sends 2 chunks per step.": "L'anneau envoie 2 fragments par pas.",
                    "A second paragraph.": "Un second paragraphe."}[e.msgid]
    _notebook(nb, "# Title\n\nThe ring sends 2 chunks per GPU per step.\n\nA second paragraph.\n\nBrand new text.")
    new = i18n_catalog.merge(i18n_catalog.notebooks_template(tmp_path), old, LANG)
    by_id = {e.msgid: e for e in new}
    changed = by_id["The ring sends 2 chunks per GPU per step."]
    assert "fuzzy" in changed.flags and changed.previous_msgid == "The ring sends 2 chunks per step."
    assert changed.msgstr == "L'anneau envoie 2 fragments par pas."  # offered, not used
    assert by_id["Brand new text."].msgstr == "" and by_id["A second paragraph."].translated()
    table = {e.msgid: e.msgstr for e in new if i18n_catalog.done(e)}
    out, total, done = join(nbformat.read(nb, as_version=4).cells[0].source, table.get)
    assert (total, done) == (4, 2)
    assert "The ring sends 2 chunks per GPU per step." in out and "Un second paragraphe." in out


def test_build_keeps_code_cells_ids_tags_and_metadata(tmp_path):
    (tmp_path / "solutions").mkdir()
    _notebook(tmp_path / "notebooks" / "01_x.ipynb", "# Title\n\nSee [02](02_y.ipynb) and [docs](../docs/a.md).")
    po = i18n_catalog.merge(i18n_catalog.notebooks_template(tmp_path), i18n_catalog._new_file(LANG), LANG)
    for e in po:
        e.msgstr = {"Title": "Titre"}.get(e.msgid, "Voir [02](02_y.ipynb) et [docs](../docs/a.md).")
    path = i18n_catalog.po_path(LANG, "notebooks", tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(str(po), encoding="utf-8")
    built = i18n_build.build(LANG, tmp_path)
    assert [(b.units, b.translated) for b in built] == [(2, 2)]
    en, fr = (nbformat.read(p, as_version=4) for p in (tmp_path / "notebooks/01_x.ipynb", built[0].path))
    assert fr.cells[1] == en.cells[1] and fr.cells[1].metadata["tags"] == ["nbval-ignore-output"]
    assert fr.cells[0].source == "# Titre\n\nVoir [02](../02_y.ipynb) et [docs](../../docs/a.md)."


def test_committed_edition_is_what_the_build_writes():
    table = i18n_build.translations(LANG)
    sources, present = i18n_build.edition(LANG, table)
    assert {ROOT / p for p in COMPLETE} <= set(sources)
    for src in sources:
        dst = i18n_build.edition_path(src, LANG)
        want, _, _ = i18n_build.translated(src, dst, table, LANG, present)
        have = nbformat.read(dst, as_version=4)
        assert [c.get("id") for c in have.cells] == [c.get("id") for c in want.cells]
        for a, b in zip(have.cells, want.cells):
            assert (a.cell_type, a.source, a.metadata) == (b.cell_type, b.source, b.metadata), (dst.name, a.get("id"))


def test_french_exercises_are_generated_from_the_french_solutions():
    from nvcourse.devtools.make_exercises import sync

    assert (ROOT / "exercises" / LANG / "01_why_one_gpu_is_not_enough_exercises.ipynb").exists()
    assert sync(ROOT / "solutions" / LANG, ROOT / "exercises" / LANG, check=True) == []


def test_compiled_catalog_is_fresh(tmp_path):
    po = i18n_catalog.po_path(LANG, "nvcourse", tmp_path)
    po.parent.mkdir(parents=True)
    shutil.copy(i18n_catalog.po_path(LANG, "nvcourse"), po)
    fresh = i18n_catalog.compile_mo(LANG, tmp_path)
    assert fresh.read_bytes() == po_mo().read_bytes(), "run: python3 tasks.py i18n build"


def po_mo() -> Path:
    return i18n_catalog.po_path(LANG, "nvcourse").with_suffix(".mo")


# -- the runtime -----------------------------------------------------------------------------------------------
@pytest.fixture
def lang(monkeypatch):
    for var in ("NVCOURSE_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


@pytest.mark.parametrize("env, want", [
    ({}, "en"), ({"NVCOURSE_LANG": "fr"}, "fr"), ({"NVCOURSE_LANG": "en", "LANG": "fr_FR.UTF-8"}, "en"),
    ({"LANG": "fr_CA.UTF-8"}, "fr"), ({"LC_ALL": "C.UTF-8", "LANG": "fr_FR.UTF-8"}, "en"),
    ({"LC_MESSAGES": "fr_BE"}, "fr"), ({"LANG": "de_DE.UTF-8"}, "en"),
])
def test_language_choice(lang, env, want):
    for k, v in env.items():
        lang.setenv(k, v)
    assert i18n.language() == want


def test_gettext_gives_french_and_falls_back_to_english_without_a_catalog(lang, tmp_path):
    lang.setenv("NVCOURSE_LANG", "fr")
    assert i18n._("weights") == "poids"
    assert i18n._("a string nobody translated") == "a string nobody translated"
    lang.setattr(i18n, "LOCALES", tmp_path)  # no catalog there
    assert i18n._("weights") == "weights"
    assert i18n.ngettext("one GPU", "{n} GPUs", 3) == "{n} GPUs"


def test_french_numbers(lang):
    assert i18n.number(16384.5, ",.1f") == "16,384.5"
    lang.setenv("NVCOURSE_LANG", "fr")
    assert i18n.number(16384.5, ",.1f") == "16\u202f384,5"
    assert i18n.localize_numbers("59.5 GB, 90 %, NVLink 4") == "59,5\u00a0GB, 90\u00a0%, NVLink 4"


def _feedback(result) -> str:
    return "\n".join([result.message, result._repr_html_()])


def _ch01_attempts():
    """A learner function for every path of ch01's checkers: right, each known mistake, a fraction of a GPU."""
    import math

    from nvcourse.checks import ch01
    from nvcourse.training import training_memory_bytes

    def states(p):
        return training_memory_bytes(p).model_states

    def ring(p, d, g):
        return 2 * (d - 1) / d * p * g

    return [
        (ch01.model_state_bytes, [lambda p: 16 * p, lambda p: 2 * p, lambda p: 4 * p, lambda p: 12 * p,
                                  lambda p: 16 * p / 1e9, lambda p: 1.0]),
        (ch01.min_gpus, [lambda p, m, h: ch01._min_gpus_reference(p, m, h),
                         lambda p, m, h: max(1, math.floor(states(p) / (h * m * 1e9))),
                         lambda p, m, h: math.ceil(states(p) / (m * 1e9)),
                         lambda p, m, h: math.ceil(states(p) / (h * m * 2**30)),
                         lambda p, m, h: states(p) / (h * m * 1e9) + 0.5,
                         lambda p, m, h: ch01._min_gpus_reference(p, m, h) + 12345]),
        (ch01.dp_bytes_per_step, [ring, lambda p, d, g: p * g, lambda p, d, g: 2 * p * g,
                                  lambda p, d, g: (d - 1) / d * p * g, lambda p, d, g: (d - 1) * p * g,
                                  lambda p, d, g: 1.0]),
    ]


def _walk_ch01() -> str:
    return "\n".join(_feedback(check(fn)) for check, fns in _ch01_attempts() for fn in fns)


# the _() strings of the questions are read when the module is imported; a fresh interpreter walks them
_QUESTIONS_WALK = """
import sys
from nvcourse.checks import ch01
from nvcourse.checks._answers import questions, expected_answer
out = []
for qid in ("01.nodes_405b", "01.ring_growth"):
    q = questions()[qid]
    out.append(q.prompt)
    tries = [expected_answer(qid), *q.variants().values()] if not q.choices else list(q.choices)
    for value in tries:
        r = ch01.answer(qid, value)
        out += [r.message, r._repr_html_()]
    out += list(q.choices.values()) + [q.hint]
sys.stdout.write("\\n".join(out))
"""


@pytest.mark.parametrize("language", ["en", "fr"])
def test_every_ch01_checker_message_speaks_the_language(lang, language):
    lang.setenv("NVCOURSE_LANG", language)
    env = {**os.environ, "NVCOURSE_LANG": language}
    shown = _walk_ch01() + subprocess.run([sys.executable, "-c", _QUESTIONS_WALK], env=env, cwd=ROOT, check=True,
                                          capture_output=True, text=True).stdout
    import html

    shown += html.unescape(shown)
    entries = catalog_entries("nvcourse/checks/ch01.py")
    assert len(entries) > 25
    for e in entries:
        text = e.msgstr if language == "fr" else e.msgid
        text = text.split("{")[0]  # a formatted message: its fixed start
        assert text in shown, f"{language}: never shown: {text!r}"
        if language == "fr":
            assert e.msgid.split("{")[0] not in shown or e.msgid == e.msgstr, f"English left: {e.msgid!r}"


def test_ch01_dashboard_and_figures_in_french(lang):
    from nvcourse.chapters import ch01_one_gpu as ch

    english_fig, english = ch._render("llama3-70b", "h100", 1, 1, 64, 3)
    lang.setenv("NVCOURSE_LANG", "fr")
    _, french = ch._render("llama3-70b", "h100", 1, 1, 64, 3)
    fig = ch.plot_gpus_needed()
    assert fig.axes[0].get_xlabel() == "paramètres" and "octets par paramètre" in fig.axes[0].get_title()
    assert "ne tient pas" in french and "parallélisme de données (gradients)" in french and "ZeRO-3 rassemble" in french
    assert "does not fit" in english and "does not fit" not in french
    assert "109\u00a0GB" in french and "109 GB" in english


# -- the French notebooks run in French ------------------------------------------------------------------------
@pytest.mark.slow
def test_french_notebooks_pass_nbval_in_french():
    paths = [str(p) for d in ("notebooks", "solutions") for p in sorted((ROOT / d / LANG).glob("*.ipynb"))]
    env = {**os.environ, "NVCOURSE_LANG": LANG, "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *paths], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=2400)
    assert done.returncode == 0, done.stdout[-3000:]


def test_french_notebook_outputs_are_french():
    nb = json.loads((ROOT / "notebooks" / LANG / "01_why_one_gpu_is_not_enough.ipynb").read_text(encoding="utf-8"))
    text = json.dumps([c.get("outputs", []) for c in nb["cells"]], ensure_ascii=False)
    assert "parallélisme de tenseurs" in text and "par GPU de 80" in text


# -- the frame every checker, figure and dashboard shares ----------------------------------------------------
def _walk_core() -> str:
    """Every learner-facing path of the checker machinery: each verdict, each junk answer, each known ratio."""
    import numpy as np

    from nvcourse.checks import _core as c

    shown = []
    for status in (c.PASS, c.FAIL, c.TODO, c.ERROR, c.RECORDED):
        r = c.Result("f", status, "s", right=["r"], wrong=["w"], hint="h", notes=["n"])
        shown.append(_feedback(r))
    for junk in (None, True, "text", np.arange(2), [1], float("nan"), object()):
        for what in ("a number", "a probability", "a fraction", "a fraction between 0 and 1", "hours",
                     "a time in seconds", "a number of bytes", "a size in bytes", "a chunk in bytes",
                     "a rate in bytes per second", "GB/s per direction", "a whole number of GPUs",
                     "a number of nodes", "a number of all-reduces", "True or False"):
            try:
                c.to_number(junk, what)
            except c.CheckError as err:
                shown += [err.message, err.hint]
    for ratio, _hint in c._ratios():
        shown += [c.diagnose(ratio * 3.0, 3.0), c.diagnose(ratio * 3.0, 3.0, what="GB/s per direction")]
    shown += [c.best_hint([c.diagnose(1.5, 0.5, what=w)]) for w in ("a probability", "a fraction")]
    for exc in (NameError(), TypeError(), ZeroDivisionError(), KeyError(), ValueError()):
        shown.append(c.exception_hint(exc))
    for value in (3, "f"):
        try:
            c.require_callable("g", value, "g")
        except c.CheckError as err:
            shown += [err.message, err.hint]

    def todo():
        raise NotImplementedError()

    shown += [_feedback(c.learner_value(v, "q")) for v in (..., todo, lambda: 1 / 0)]
    cases = [c.Case((x,), 2.0 * x) for x in (1.0, 2.0, 3.0, 4.0, 5.0)]
    for fn in (lambda x: 2 * x, lambda x: 2 * x if x < 2 else 4 * x, lambda x: 1 / 0, todo):
        shown.append(_feedback(c.safe_checker(c.check_function)("g", fn, ["x"], cases, success="ok")))
    shown.append(_feedback(c.safe_checker(lambda: 1 / 0)()))
    from nvcourse.checks import ch02
    from nvcourse.checks._answers import expected_answer

    right = expected_answer("02.ndr_GBps")
    for qid, value in (("02.ndr_GBps", right), ("02.ndr_GBps", 3.3 * right), ("02.ndr_GBps", right / 3.3),
                       ("02.bound_64k", "z"), ("02.bound_64k", 3), ("02.bound_64k", "b"), ("no.such", 1)):
        shown.append(_feedback(ch02.answer(qid, value)))
    from nvcourse.checks import quiz  # registers the pre-test, whose questions answer() records, not checks

    shown.append(_feedback(ch02.answer(next(iter(quiz.MISCONCEPTIONS)), 1)))
    return "\n".join(shown)


def _walk_figures_and_dashboard() -> str:
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    from nvcourse.alt_text import describe
    from nvcourse.widgets import Dashboard

    fig, (a, b, d) = plt.subplots(1, 3)
    a.plot([1, 2], [1, 2], label="ring")
    a.plot([1, 2], [2, 3], label="tree")
    a.plot([1, 2], [3, 4])
    a.set(xscale="log", xlabel="size", ylabel="busbw", title="t")
    b.bar(["x"], [1])
    b.plot([1, 2], [1, 2], label="_nolegend_")
    b.scatter([0, 1], [0, 1])
    b.fill_between([0, 1], [0, 1])
    b.imshow([[0, 1]])
    b.legend(["k"])
    d.set_axis_off()
    d.text(0, 0, "GPU 0")
    d.plot([0, 1], [0, 1], label="NVLink")
    d.legend()
    fig.suptitle("whole")
    shown = [describe(fig)]
    fig2, ax2 = plt.subplots()
    ax2.bar(["x", "y"], [1, 2])
    ax2.plot([1, 2], [1, 2], label="_a")
    ax2.plot([1, 2], [1, 2], label="_b")
    ax2.scatter([0], [0])
    ax2.fill_between([0, 1], [0, 1])
    ax2.fill_between([0, 1], [0, 1])
    ax2.set_xlabel("x")
    fig2.suptitle("one panel")
    shown += [describe(fig2), describe(plt.figure()), describe(plt.figure().add_subplot().figure)]
    for labels in ([f"s{i}" for i in range(9)],):
        fig3, ax3 = plt.subplots()
        for lb in labels:
            ax3.plot([1, 2], [1, 2], label=lb)
        shown.append(describe(fig3))
    fig4 = plt.figure()
    fig4.suptitle("only a title")
    shown.append(describe(fig4))
    fig5, (p, q) = plt.subplots(1, 2)
    p.plot([1, 2], [1, 2], label="solo")
    q.bar(["x"], [1])
    shown.append(describe(fig5))
    fig6, ax6 = plt.subplots()
    ax6.bar(["x", "y"], [1, 2])
    ax6.bar(["x", "y"], [1, 1], bottom=[1, 2])
    shown.append(describe(fig6))
    fig7, ax7 = plt.subplots()
    ax7.bar(["x"], [1])
    ax7.bar(["x"], [1], bottom=[1])
    shown.append(describe(fig7))
    plt.close("all")
    board = Dashboard({"n": widgets.FloatSlider(value=1.5, description="n")}, lambda n: "readout")
    shown += [board.alt_text(), board.static_html(), board._repr_mimebundle_()["text/plain"]]
    return "\n".join(shown)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_shared_feedback_figure_and_dashboard_frame_speaks_the_language(lang, language):
    import html

    lang.setenv("NVCOURSE_LANG", language)
    shown = _walk_core() + "\n" + _walk_figures_and_dashboard()
    shown += html.unescape(shown)
    speaks(shown, language, ("nvcourse/checks/_core.py", "nvcourse/checks/_answers.py", "nvcourse/alt_text.py",
                             "nvcourse/widgets.py"), least=101, english_over=12)


def test_the_english_frame_is_unchanged(lang):
    from nvcourse.checks import _core as c

    r = c.Result("f", c.FAIL, "wrong on 1 of 2 inputs.", right=["r"], wrong=["w"], hint="h", notes=["n"])
    assert r.message == "✘ f: Not quite — wrong on 1 of 2 inputs.\n  ✔ r\n  ✘ w\n  Hint: h\n  Note: n"
    assert "<b>Hint:</b> h" in r._repr_html_() and "<i>Note:</i> n" in r._repr_html_()
    lang.setenv("NVCOURSE_LANG", "fr")
    assert r.message == ("✘ f\u00a0: Pas tout à fait — wrong on 1 of 2 inputs.\n  ✔ r\n  ✘ w\n  Indice\u00a0: h\n"
                         "  Remarque\u00a0: n")


# chapter 02: every checker path, question and readout, read in a fresh interpreter (questions are built on import)
_CH02_WALK = """
import sys
from nvcourse.checks import ch02
from nvcourse.checks._answers import questions, expected_answer
from nvcourse.chapters import ch02_links as ch
out = []
for qid, q in sorted(questions().items()):
    if qid.startswith("02."):
        out += [q.prompt, q.hint, *q.choices.values()]
        for value in ([expected_answer(qid), *q.variants().values()] if not q.choices else list(q.choices)):
            r = ch02.answer(qid, value)
            out += [r.message, r._repr_html_()]
for fn in (lambda a, b: a * b, lambda a, b: a * b / 2, lambda a, b: b / a, lambda a, b: a / b, lambda a, b: 2 * a * b,
           lambda a, b: 1.0):
    r = ch02.half_bandwidth_size(fn)
    out += [r.message, r._repr_html_()]
for fn in (lambda n, a, b: n / (a + n / b), lambda n, a, b: b, lambda n, a, b: a + n / b, lambda n, a, b: n / a,
           lambda n, a, b: 8 * n / (a + n / b), lambda n, a, b: 1.0):
    r = ch02.effective_bandwidth(fn)
    out += [r.message, r._repr_html_()]
view = ch._AlphaBetaView()
out += [view(3.4, 371, 4096)[1], view(3.4, 25, 2**28)[1], ch.link_table_html(), ch.spec_vs_measured_html()]
sys.stdout.write("\\n".join(out))
"""


@pytest.mark.parametrize("language", ["en", "fr"])
def test_every_ch02_checker_message_and_readout_speaks_the_language(language):
    shown = run_walk(_CH02_WALK, language)
    entries = catalog_entries("nvcourse/checks/ch02.py")
    assert len(entries) > 25
    for e in entries:
        for fragment in fragments(e.msgstr if language == "fr" else e.msgid):
            assert fragment in shown, f"{language}: never shown: {fragment!r} (of {e.msgid!r})"
    if language == "fr":
        assert "limité par la latence" in shown and "bande passante effective" in shown and "débit de ligne" in shown
        assert "takes" not in shown and "latency-bound" not in shown


_CH03_WALK = """
import sys
from nvcourse.checks import ch03
from nvcourse.checks._answers import questions, expected_answer
from nvcourse.chapters import ch03_topology as ch
out = []
for qid, q in sorted(questions().items()):
    if qid.startswith("03."):
        out += [q.prompt, q.hint]
        for value in [expected_answer(qid), *q.variants().values()]:
            r = ch03.answer(qid, value)
            out += [r.message, r._repr_html_()]
for fn in (lambda g, L, b: g / 2 * L * b, lambda g, L, b: g * L * b, lambda g, L, b: 3.7 * g * L * b + 1.3):
    r = ch03.switch_bisection(fn)
    out += [r.message, r._repr_html_()]
for fn in (lambda n, b: 2 * b, lambda n, b: b, lambda n, b: n / 2 * b, lambda n, b: 1.0):
    r = ch03.ring_bisection(fn)
    out += [r.message, r._repr_html_()]
out += [ch.metrics_table_html(), ch.codes_table_html(), ch.render_system("dgx-1-v100", "ring")[1]]
out += [ch.render_pasted(ch.example_text(name), "nvlink4", "pcie4")[1] for name in ch.example_files()]
sys.stdout.write("\\n".join(out))
"""


@pytest.mark.parametrize("language", ["en", "fr"])
def test_every_ch03_checker_message_table_and_readout_speaks_the_language(language):
    shown = run_walk(_CH03_WALK, language)
    # two known mistakes give the same value (2 × the bisection: both directions added, or every GPU counted), so
    # the first hint of each pair is the one shown and the second cannot be reached
    unreachable = {"That is both directions added; give GB/s per direction.",
                   "That counts all 8 GPUs; only the 4 on one side send across the cut."}
    entries = [e for e in catalog_entries("nvcourse/checks/ch03.py") if e.msgid not in unreachable]
    assert len(entries) > 10
    for e in entries:
        for fragment in fragments(e.msgstr if language == "fr" else e.msgid):
            assert fragment in shown, f"{language}: never shown: {fragment!r} (of {e.msgid!r})"
    if language == "fr":
        assert "bissection" in shown and "ce qui limite une copie" in shown and "par GPU, par sens" in shown
        assert "what bounds a copy" not in shown and "per GPU, per direction" not in shown


# -- opening the edition and saying what it has --------------------------------------------------------------------
def test_readme_fr_lists_exactly_the_chapters_of_the_edition():
    text = (ROOT / "README.fr.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"\(notebooks/fr/(\d\w*\.ipynb)\)", text))
    built = {p.name for p in (ROOT / "notebooks" / "fr").glob("*.ipynb")}
    assert listed == built, f"README.fr.md lists {sorted(listed)}, notebooks/fr/ has {sorted(built)}"


def test_lab_lang_refuses_an_edition_that_does_not_exist(capsys):
    sys.path.insert(0, str(ROOT))
    import tasks

    assert tasks.lab_edition(["--lang", "de"]) is None
    assert tasks.lab_edition(["--lang"]) is None
    err = capsys.readouterr()
    lines = [ln for ln in (err.out + err.err).splitlines() if ln]
    assert len(lines) == 2 and all("--lang must be one of en, fr" in ln for ln in lines)
    assert tasks.lab_edition(["--no-browser", "--lang", "fr"]) == ("fr", ["--no-browser"])
    assert tasks.lab_edition(["--no-browser"]) == ("en", ["--no-browser"])


def test_lab_lang_fr_opens_the_french_edition_in_french(monkeypatch):
    sys.path.insert(0, str(ROOT))
    import tasks

    calls = []
    monkeypatch.setattr(tasks, "ensure_env", lambda **kw: calls.append(("env", kw)) or Path("py"))
    monkeypatch.setattr(tasks, "run", lambda cmd, **kw: calls.append((cmd, kw["env"])) or 0)
    assert tasks.cmd_lab(["--lang", "fr", "--no-browser"]) == 0
    (_, env_kw), (cmd, env) = calls
    assert env_kw["extras"] == "fr"  # the language pack's extra
    assert cmd[3] == "notebooks/fr/00_start_here.ipynb" and (ROOT / cmd[3]).exists()
    assert env["NVCOURSE_LANG"] == "fr"
    plugin = Path(env["JUPYTERLAB_SETTINGS_DIR"]) / "@jupyterlab/translation-extension/plugin.jupyterlab-settings"
    assert json.loads(plugin.read_text()) == {"locale": "fr_FR"}
