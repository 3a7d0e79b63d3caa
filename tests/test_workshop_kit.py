"""The workshop kit: reveal.js decks that open offline and page through, PDF handouts with text and figures.

The decks and handouts are built once per test session for every chapter (about two minutes); the browser
checks need Chromium (``tasks.py test`` installs Debian's as root) and skip with the reason elsewhere.
"""

from __future__ import annotations

import threading
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from nvcourse.devtools import handouts, slides

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = handouts.find_chromium()
needs_browser = pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium: apt-get install chromium")

PNG_OUTPUT = {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBORw0KGgo=", "text/plain": "x"}}


def test_slide_roles_follow_headings_and_figures():
    cells = [new_markdown_cell("# 02 — Title"), new_markdown_cell("## 1. A section"),
             new_markdown_cell("### a sub-section"), new_markdown_cell("prose"),
             new_code_cell("x = 1"), new_code_cell("plot()", outputs=[nbformat.from_dict(PNG_OUTPUT)])]
    roles = [slides.slide_type(c) for c in cells]
    assert roles == ["slide", "slide", "subslide", "-", "skip", "-"]
    chosen = new_markdown_cell("# kept off", metadata={"slideshow": {"slide_type": "skip"}})
    assert slides.slide_type(chosen) == "skip"


def test_deck_keeps_only_figures_of_code_cells():
    stream = {"output_type": "stream", "name": "stdout", "text": "numbers"}
    cell = new_code_cell("plot()", outputs=[nbformat.from_dict(stream), nbformat.from_dict(PNG_OUTPUT)])
    deck = slides.deck_notebook(new_notebook(cells=[cell]))
    assert [o["output_type"] for o in deck.cells[0].outputs] == ["display_data"]
    assert deck.cells[0].metadata["slideshow"]["slide_type"] == "-"
    assert [o["output_type"] for o in cell.outputs] == ["stream", "display_data"]  # the source is untouched


def _in_thread(fn):
    """Run Playwright's sync API off the main thread (the browser test may leave an asyncio loop there)."""
    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = exc

    t = threading.Thread(target=work)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]


@pytest.fixture(scope="module")
def decks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("slides")
    assert slides.main(["--out", str(out)]) == 0
    return out


def _page_through(deck: Path) -> dict:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            outside, failed = [], []
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:")
                       else (outside.append(r.request.url), r.abort()))
            page.on("requestfailed", lambda r: failed.append(r.url))
            page.on("pageerror", lambda e: failed.append(f"page error: {e}"))
            page.goto(deck.as_uri())
            page.wait_for_selector(".reveal.ready", timeout=30_000)
            count = page.evaluate("document.querySelectorAll('.slides > section').length")
            where = ("[...document.querySelectorAll('.slides > section')]"
                     ".findIndex(s => s.classList.contains('present'))")
            visited = {page.evaluate(where)}
            for _ in range(600):
                if page.evaluate(where) == count - 1:
                    break
                page.keyboard.press("Space")
                visited.add(page.evaluate(where))
            images = page.evaluate("[...document.querySelectorAll('.slides img')].map(i => i.naturalWidth)")
            maths = page.evaluate("document.querySelectorAll('.MathJax_CHTML, .MathJax').length")
            return {"count": count, "visited": visited, "outside": outside, "failed": failed,
                    "images": images, "maths": maths}
        finally:
            browser.close()


@needs_browser
def test_every_chapter_deck_opens_offline_and_pages_through(decks: Path):
    built = sorted(decks.glob("*.slides.html"))
    assert [p.name.removesuffix(".slides.html") for p in built] == [p.stem for p in slides.chapters()]
    total_images = 0
    for deck in built:
        seen = _in_thread(lambda d=deck: _page_through(d))
        assert seen["count"] >= 2, deck.name
        assert seen["visited"] == set(range(seen["count"])), f"{deck.name}: not every slide reached"
        assert seen["outside"] == [] and seen["failed"] == [], f"{deck.name}: {seen['outside'] + seen['failed']}"
        assert all(w > 0 for w in seen["images"]), f"{deck.name}: a figure did not load"
        total_images += len(seen["images"])
    assert total_images >= 10  # the chapters' stored figures are in the decks
    assert (decks / "index.html").read_text().count("<li>") == len(built)


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if CHROMIUM is None:
        pytest.skip("needs Chromium: apt-get install chromium")
    out = tmp_path_factory.mktemp("handouts")
    assert handouts.main(["--out", str(out)]) == 0
    return out


def _pdf_facts(path: Path) -> dict:
    import numpy as np
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(path))
    text, images, ink = [], 0, []
    for page in doc:
        text.append(page.get_textpage().get_text_range())
        images += sum(1 for o in page.get_objects() if o.type == pdfium.raw.FPDF_PAGEOBJ_IMAGE)
        grey = np.asarray(page.render(scale=0.5).to_pil().convert("L"))
        ink.append(float((grey < 200).mean()))
    return {"pages": len(doc), "text": "\n".join(text), "images": images, "ink": ink}


def test_every_handout_has_text_and_the_chapters_have_figures(pdfs: Path):
    expected = [p.stem for p in handouts.default_notebooks()]
    assert sorted(p.stem for p in pdfs.glob("*.pdf")) == sorted(expected)
    figures = 0
    for stem in expected:
        facts = _pdf_facts(pdfs / f"{stem}.pdf")
        assert facts["pages"] >= 1 and len(facts["text"]) > 500, stem
        assert min(facts["ink"]) > 0.0003, f"{stem}: a blank page"  # one line of text is ~0.001
        figures += facts["images"]
    assert figures >= 10


def test_quiz_handout_has_the_questions_and_no_answers(pdfs: Path):
    facts = _pdf_facts(pdfs / "quiz_misconceptions_exercises.pdf")
    assert "Question 11" in facts["text"] and "Misconceptions quiz" in facts["text"]
    assert "400 / 8" not in facts["text"]  # the solution's expression is not printed


def test_handouts_refuse_a_missing_notebook(capsys: pytest.CaptureFixture[str]):
    assert handouts.main(["no/such.ipynb"]) == 2
    assert "no such notebook" in capsys.readouterr().err
    assert slides.main(["no/such.ipynb"]) == 2
