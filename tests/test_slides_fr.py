"""The workshop kit in French: ``tasks.py slides --lang fr`` and ``tasks.py handouts --lang fr``.

A French deck is built from the French edition (notebooks/fr/) into its own folder, says ``<html lang="fr">``,
shows the chapter's French prose on its slides with the prose in the speaker notes, and leaves the English deck
of the same chapter as it was. The expected French text is read from the French notebook, never typed here.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import nbformat
import pytest

from nvcourse import deck_words
from nvcourse.devtools import handouts, kit_edition, slides

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = "01_why_one_gpu_is_not_enough"
FR_NOTEBOOK = ROOT / "notebooks" / "fr" / f"{CHAPTER}.ipynb"
EN_NOTEBOOK = ROOT / "notebooks" / f"{CHAPTER}.ipynb"
NOTES = re.compile(r'<aside class="notes">(.*?)</aside>', flags=re.S)

pytestmark = pytest.mark.skipif(not FR_NOTEBOOK.is_file(), reason="no French edition (tasks.py i18n build)")


def _title(notebook: Path) -> str:
    """The chapter's ``# `` title, as its first slide shows it."""
    first = nbformat.read(notebook, as_version=4).cells[0].source
    return re.match(r"#\s+(.+)", first).group(1).strip()


def _without_cell_ids(page: str) -> str:
    return re.sub(r'id="cell-id=[^"]*"', "", page)  # nbconvert's cells get fresh random ids on every build


def _html_lang(page: str) -> str:
    return re.search(r"<html lang=[\"']([a-z]+)[\"']", page).group(1)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The chapter's English deck, built with the default folders (under a scratch DEFAULT_OUT) before and after
    its French deck, and the French one: {"en": ..., "en_after": ..., "fr": ..., "fr_path": ...}."""
    out = tmp_path_factory.mktemp("slides")
    mp = pytest.MonkeyPatch()
    mp.setattr(slides, "DEFAULT_OUT", out)
    mp.delenv("NVCOURSE_LANG", raising=False)
    try:
        assert slides.main(["--no-execute", str(EN_NOTEBOOK)]) == 0
        en_deck = out / f"{CHAPTER}.slides.html"
        en = en_deck.read_text(encoding="utf-8")
        assert slides.main(["--lang", "fr", "--no-execute", str(FR_NOTEBOOK)]) == 0
        assert "NVCOURSE_LANG" not in os.environ  # the build's language is restored after it
        fr_deck = out / "fr" / f"{CHAPTER}.slides.html"
        return {"en": en, "en_after": en_deck.read_text(encoding="utf-8"), "fr": fr_deck.read_text(encoding="utf-8"),
                "fr_index": (out / "fr" / "index.html").read_text(encoding="utf-8"),
                "en_index": (out / "index.html").read_text(encoding="utf-8")}
    finally:
        mp.undo()


def test_the_french_deck_is_french_with_its_prose_on_slides_and_in_the_notes(built: dict[str, str]):
    fr = built["fr"]
    assert _html_lang(fr) == "fr" and _html_lang(built["fr_index"]) == "fr"
    slides_only = NOTES.sub("", fr)
    title = _title(FR_NOTEBOOK)
    assert title in slides_only, "the French chapter's title is not on a slide"
    assert _title(EN_NOTEBOOK) not in fr, "the English title is in the French deck"
    notes = NOTES.findall(fr)
    assert len(notes) >= 10, "speaker notes missing"
    # the chapter's first French paragraph (its opening words) is in the speaker notes
    opening = nbformat.read(FR_NOTEBOOK, as_version=4).cells[0].source.split("\n\n")[1].split()[:6]
    assert any(" ".join(opening) in " ".join(n.split()) for n in notes), opening


def test_the_english_deck_stays_english_and_is_not_overwritten(built: dict[str, str]):
    assert built["en"] == built["en_after"], "building the French deck touched the English one"
    en = built["en"]
    assert _html_lang(en) == "en" and _title(EN_NOTEBOOK) in NOTES.sub("", en)
    assert _title(FR_NOTEBOOK) not in en
    assert "<li>" in built["en_index"] and f"{CHAPTER}.slides.html" in built["en_index"]


def test_an_english_deck_built_in_a_french_session_is_the_english_deck(built: dict[str, str], tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("NVCOURSE_LANG", "fr")  # an instructor whose course speaks French builds the English decks
    assert slides.main(["--no-execute", "--out", str(tmp_path), str(EN_NOTEBOOK)]) == 0
    again = (tmp_path / f"{CHAPTER}.slides.html").read_text(encoding="utf-8")
    assert _without_cell_ids(again) == _without_cell_ids(built["en"])
    assert os.environ["NVCOURSE_LANG"] == "fr"  # restored


def test_the_decks_own_words_go_through_the_catalog(built: dict[str, str], monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("NVCOURSE_LANG", "fr")
    if deck_words.continued("X") == "X (continued)":
        pytest.skip("the French entries of nvcourse/deck_words.py are not in locales/fr/LC_MESSAGES/nvcourse.mo yet")
    fr = built["fr"]
    assert deck_words.continued("").strip() in fr and " (continued)" not in fr
    _, heading, _ = deck_words.deck_index()
    assert all(w not in built["fr_index"] for w in ("nvcourse decks", "one deck per chapter", "speaker notes"))
    assert f"<h1>{heading}</h1>" in built["fr_index"]
    assert deck_words.answer_line() != handouts.ANSWER_LINE


def test_the_english_words_are_what_the_kit_always_wrote(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("NVCOURSE_LANG", "en")
    assert deck_words.answer_line() == handouts.ANSWER_LINE
    assert deck_words.continued("Memory") == "Memory (continued)"
    assert deck_words.deck_index()[0] == "nvcourse decks"


def test_lang_refuses_an_edition_that_does_not_exist(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    for main in (slides.main, handouts.main):
        assert main(["--lang", "de", "--out", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--lang" in err and "'en', 'fr'" in err and "'de'" in err, err
    assert not any(tmp_path.iterdir())  # nothing written
    sys.path.insert(0, str(ROOT))
    import tasks

    for command in ("slides", "handouts"):
        assert tasks.lab_edition(["--lang", "de"], command) is None
        assert f"{command} --lang must be one of en, fr" in capsys.readouterr().out
        assert tasks.lab_edition(["--no-execute", "--lang", "fr"], command) == ("fr", ["--no-execute"])


def test_the_french_handouts_read_the_french_edition():
    found = handouts.default_notebooks(lang="fr")
    chapters = [p for p in found if p.suffix == ".ipynb" and not p.stem.startswith("quiz_")]
    assert chapters and all(p.parent == ROOT / "notebooks" / "fr" for p in chapters)
    assert all(p.parent == kit_edition.folder(p.parent.parent, "fr") for p in found)  # notebooks/fr, exercises/fr...
    key = handouts.edition_key("fr")
    assert _title(ROOT / "solutions" / "fr" / f"{CHAPTER}_exercises.ipynb") in key  # read from solutions/fr/
    assert _title(ROOT / "solutions" / f"{CHAPTER}_exercises.ipynb") not in key
    assert "BEGIN SOLUTION" not in key


@pytest.mark.skipif(handouts.find_chromium() is None, reason="needs Chromium: apt-get install chromium")
def test_a_french_handout_prints_in_french(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pdfium = pytest.importorskip("pypdfium2")
    monkeypatch.setattr(handouts, "DEFAULT_OUT", tmp_path)
    assert handouts.main(["--lang", "fr", str(FR_NOTEBOOK)]) == 0
    page = (tmp_path / "fr" / f"{CHAPTER}.html").read_text(encoding="utf-8")
    assert _html_lang(page) == "fr" and not (tmp_path / f"{CHAPTER}.pdf").exists()  # not over the English
    doc = pdfium.PdfDocument(str(tmp_path / "fr" / f"{CHAPTER}.pdf"))
    text = " ".join(" ".join(p.get_textpage().get_text_range().split()) for p in doc)
    doc.close()
    assert " ".join(_title(FR_NOTEBOOK).split()[-4:]) in text, "the French title is not printed"


def test_french_no_break_spaces_stay_on_the_slides():
    """French typography puts a no-break space before : ; ? ! and % and between a number and its unit; a slide's
    lead and its bullets keep it (a line must not start with the colon), as the chapter writes it."""
    from nvcourse.devtools import deck_plan

    nb = nbformat.read(ROOT / "notebooks" / "fr" / "02_pcie_vs_nvlink.ipynb", as_version=4)
    planned = deck_plan.plan(nb)
    first_paragraph = nb.cells[0].source.split("\n\n")[1]
    assert "\u00a0:" in first_paragraph and "\u00a0:" in planned[0].lead
    bullets = [s.lead for s in planned if deck_plan.LIST_ITEM.match(s.lead)]
    assert any("\u00a0" in b for b in bullets) and not any(" :" in b or " ?" in b for b in bullets)
