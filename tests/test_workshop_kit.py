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

from nvcourse import checks as check
from nvcourse.devtools import answer_key, cheatsheet, deck_plan, deck_split, handouts, slides

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = handouts.find_chromium()
needs_browser = pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium: apt-get install chromium")

PNG_OUTPUT = {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBORw0KGgo=", "text/plain": "x"}}


def test_a_heading_inside_a_cell_starts_a_slide_and_prose_goes_to_the_notes():
    prose = ("Every byte that moves pays twice: a fixed cost to start and a cost per byte. " * 6).strip()
    nb = new_notebook(cells=[new_markdown_cell(f"# 02 — Title\n\n{prose}\n\n## 1. A section\n\nShort text."),
                             new_markdown_cell("- first point: with detail after the colon\n- second point")])
    planned = deck_plan.plan(nb)
    assert [s.title for s in planned] == ["02 — Title", "1. A section", "1. A section"]
    first = planned[0]
    assert first.lead.startswith("Every byte that moves pays twice") and first.visible_words() <= deck_plan.WORD_LIMIT
    assert prose in first.notes[0]  # the whole paragraph is in the speaker notes
    assert planned[2].lead == "- first point: with detail after the colon\n- second point"


def test_a_slide_keeps_its_sections_display_equations():
    nb = new_notebook(cells=[new_markdown_cell(
        "## 2. The alpha-beta model\n\nA message costs a start-up time plus the bytes at bandwidth $\\beta$:\n\n"
        "$$t(n) = \\alpha + \\frac{n}{\\beta}$$\n\nThe effective bandwidth is\n\n$$B_\\text{eff}(n) = n / t(n)$$\n\n"
        "and half of it is reached at\n$$n_{1/2} = \\alpha\\,\\beta .$$\nwhich grows with the link.")])
    planned = deck_plan.plan(nb)
    shown = deck_plan.deck_notebook(planned).cells[0].source
    for eq in ("$$t(n) = \\alpha + \\frac{n}{\\beta}$$", "$$B_\\text{eff}(n) = n / t(n)$$",
               "$$n_{1/2} = \\alpha\\,\\beta .$$"):
        assert eq in shown, eq
    assert shown.index("start-up time") < shown.index("$$t(n)")  # the lead, then its equations


def test_list_items_keep_their_first_sentence_and_questions_appear_whole():
    questions = "\n".join(
        f"{i}. A datasheet says \"NVLink 5: 1.8 TB/s per GPU\". How many bytes per second can GPU {i} send?\n"
        f"   <details><summary>Answer</summary>900 GB/s per direction.</details>" for i in range(1, 6))
    places = ("- under the **same PCIe switch** (`PIX`): GPU → switch → GPU, one x16 link's bandwidth, shared\n"
              "  with every other transfer through that switch. More detail follows in a second sentence here.")
    nb = new_notebook(cells=[new_markdown_cell(f"## Check yourself\n{questions}\n\n## 4. Paths\n\n{places}")])
    planned = deck_plan.plan(nb)
    asked = "\n".join(s.lead for s in planned if s.title == "Check yourself")
    for i in range(1, 6):  # every question, whole, and no answer on the slide
        whole = f'{i}. A datasheet says "NVLink 5: 1.8 TB/s per GPU". How many bytes per second can GPU {i} send?'
        assert whole in asked
    assert "900 GB/s" not in asked and "900 GB/s" in "\n".join(planned[0].notes)
    assert all(s.visible_words() <= deck_plan.WORD_LIMIT + 40 for s in planned)
    path = [s.lead for s in planned if s.title == "4. Paths"][-1]
    assert path == ("- under the same PCIe switch (`PIX`): GPU → switch → GPU, one x16 link's bandwidth, shared with "
                    "every other transfer through that switch.")


def test_long_tables_go_on_over_continuation_slides_with_their_header():
    rows = "\n".join(f"| {i:02d} | chapter {i} | how to read a bandwidth with its unit and direction, and why |"
                     for i in range(20))
    printed = ("<table><thead><tr><th>link</th><th>GB/s</th></tr></thead><tbody>"
               + "".join(f"<tr><td>link {i}</td><td>{i}</td></tr>" for i in range(40)) + "</tbody></table>")
    out = {"output_type": "display_data", "metadata": {}, "data": {"text/html": printed}}
    table = f"| # | notebook | you leave knowing |\n|---|---|---|\n{rows}"
    nb = new_notebook(cells=[new_markdown_cell(f"## The path\n\n{table}"),
                             new_code_cell("table()", outputs=[nbformat.from_dict(out)])])
    planned = deck_plan.plan(nb)
    md = [s.visual for s in planned if s.visual.startswith("| #")]
    html = [s.visual for s in planned if "<table>" in s.visual]
    assert len(md) >= 2 and len(html) >= 2
    assert all(t.startswith("| # | notebook | you leave knowing |\n|---|---|---|") for t in md)
    assert sum(t.count("\n| ") for t in md) == 20  # every row once
    assert all("<th>link</th>" in t for t in html) and sum(t.count("<tr><td>") for t in html) == 40
    assert all(s.continued for s in planned[1:])


def test_long_prose_printed_after_a_table_gets_a_continuation_slide_of_its_own():
    prose = "<p>" + "What the rows assume is configured on the fabric, switch by switch. " * 30 + "</p>"
    printed = ("<table><thead><tr><th>fabric</th><th>share</th></tr></thead><tbody>"
               "<tr><td>RoCE</td><td>100%</td></tr></tbody></table>" + prose)
    pieces = deck_split.split_html_table(printed)
    assert len(pieces) == 2 and pieces[0].endswith("</table>") and "<table" not in pieces[1]
    assert pieces[1] == prose


def test_pictures_and_printed_tables_get_slides_of_their_own_with_notes():
    stream = {"output_type": "stream", "name": "stdout", "text": "n½ = 1.2 MiB"}
    png = {**PNG_OUTPUT, "metadata": {"image/png": {"alt": "Figure: 2 lines: ring, tree.", "tick_px": 19.4}}}
    table = {"output_type": "display_data", "metadata": {}, "data": {"text/html": "<table><tr><td>x</td></tr></table>"}}
    static = '<div class="nvcourse-dashboard-static">settings<img alt="Figure: a bar chart." src="data:x"/></div>'
    dashboard = {"output_type": "display_data", "metadata": {}, "data": {"text/html": static}}
    nb = new_notebook(cells=[new_markdown_cell("## 3. Results\n\nPredict first: which is faster?"),
                             new_code_cell("plot()", outputs=[nbformat.from_dict(o) for o in (stream, png)]),
                             new_code_cell("table()", outputs=[nbformat.from_dict(table)]),
                             new_code_cell("Dashboard()", outputs=[nbformat.from_dict(dashboard)])])
    planned = deck_plan.plan(nb)
    assert len(planned) == 4 and all(s.title == "3. Results" for s in planned)
    figure, tab, dash = planned[1:]
    assert 'alt="Figure: 2 lines: ring, tree."' in figure.visual and 'data-tick-px="19.4"' in figure.visual
    assert "Predict first" in "\n".join(figure.notes) and "n½ = 1.2 MiB" in "\n".join(figure.notes)
    assert "<table>" in tab.visual and 'alt="Figure: a bar chart."' in dash.visual
    cells = deck_plan.deck_notebook(planned).cells
    assert [c.metadata["slideshow"]["slide_type"] for c in cells] == ["slide", "notes"] * 4


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
    """Every chapter's deck from the committed outputs (quick); the deck style is checked on a sample below."""
    out = tmp_path_factory.mktemp("slides")
    assert slides.main(["--out", str(out), "--no-execute"]) == 0
    return out


#: The sample built as an instructor builds it (each chapter run in the deck style): a chapter of figures and
#: dashboards, one of wide tables and fabric drawings.
DECK_SAMPLE = ("02_pcie_vs_nvlink", "06_multinode_fabrics")


@pytest.fixture(scope="module")
def sample_decks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("slides_sample")
    args = [str(ROOT / "notebooks" / f"{stem}.ipynb") for stem in DECK_SAMPLE]
    assert slides.main(["--out", str(out), *args]) == 0
    return out


#: How far below the 1280×720 slide a slide's content reaches (px of the slide), and how much a table box
#: scrolls: a slide that is cut or must be scrolled shows a positive number. Folded <details> and the notes
#: are not shown, so they do not count.
OVERFLOW_JS = """() => {
  const s = document.querySelector('.slides > section.present');
  const box = document.querySelector('.reveal .slides').getBoundingClientRect();
  const scale = box.width / 1280;
  const shown = [...s.querySelectorAll('*')].filter(e => e.getClientRects().length
                 && !e.closest('aside.notes, details:not([open]) > :not(summary)'));
  const bottom = Math.max(box.top, ...shown.map(e => e.getBoundingClientRect().bottom));
  const scrolled = [...s.querySelectorAll('.nvcourse-deck-table')].map(t => t.scrollHeight - t.clientHeight);
  return Math.max((bottom - box.top) / scale - 720, ...scrolled);
}"""


def _measure_slides(deck: Path, shots: Path) -> list[dict]:
    """Each slide at 1280×720: visible words (notes and tables aside), notes length, slide number, and each
    picture's shown width against its own width and its tick labels' size in pixels of the file."""
    from playwright.sync_api import sync_playwright

    measure = """() => {
      const s = document.querySelector('.slides > section.present');
      const clone = s.cloneNode(true);
      clone.querySelectorAll('aside.notes, table, .nvcourse-deck-table').forEach(e => e.remove());
      return {words: (clone.textContent || '').split(/\\s+/).filter(w => /\\w/.test(w)).length,
              notes: (s.querySelector('aside.notes') || {textContent: ''}).textContent.trim().length,
              number: (document.querySelector('.slide-number') || {textContent: ''}).textContent.replace(/\\s+/g, ''),
              images: [...s.querySelectorAll('img')].map(i => ({natural: i.naturalWidth,
                        shown: i.getBoundingClientRect().width, tick: parseFloat(i.dataset.tickPx || '0'),
                        alt: i.alt}))};
    }"""
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.goto(deck.as_uri())
            page.wait_for_selector(".reveal.ready", timeout=30_000)
            count = page.evaluate("document.querySelectorAll('.slides > section').length")
            seen = []
            for i in range(count):
                page.wait_for_timeout(100)
                seen.append({**page.evaluate(measure), "overflow": page.evaluate(OVERFLOW_JS)})
                if i % 5 == 0:
                    page.screenshot(path=str(shots / f"{deck.stem}_{i:02d}.png"))
                page.keyboard.press("Space")
            return seen
        finally:
            browser.close()


@needs_browser
@pytest.mark.parametrize("stem", DECK_SAMPLE)
def test_sample_decks_are_slides_a_room_can_read(sample_decks: Path, stem: str, tmp_path: Path):
    import statistics

    import numpy as np
    from PIL import Image

    seen = _in_thread(lambda: _measure_slides(sample_decks / f"{stem}.slides.html", tmp_path))
    count = len(seen)
    assert count >= 10
    assert statistics.median(s["words"] for s in seen) <= deck_plan.WORD_LIMIT  # one idea a slide
    assert max(s["words"] for s in seen) <= deck_plan.WORD_LIMIT + 40  # a title and a list's whole sentences
    assert all(s["notes"] > 0 for s in seen), "a slide without speaker notes"
    assert [i + 1 for i, s in enumerate(seen) if s["overflow"] > 2] == []  # nothing runs off the slide
    assert [s["number"] for s in seen] == [f"{i + 1}/{count}" for i in range(count)]
    pictures = [im for s in seen for im in s["images"]]
    assert len(pictures) >= 3  # figures and dashboard pictures are kept
    for im in pictures:
        assert im["alt"].startswith("Figure") and "No description" not in im["alt"]
        if im["tick"]:  # a chart with ticks: at least 18 px where it is projected
            assert im["tick"] * im["shown"] / im["natural"] >= 18, im
    for shot in tmp_path.glob("*.png"):  # the screenshots show something (not a blank or a scrolled-off page)
        grey = np.asarray(Image.open(shot).convert("L"))
        assert (grey < 200).mean() > 0.005, shot.name




def _page_through(deck: Path) -> dict:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
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
            overflow = {page.evaluate(where): page.evaluate(OVERFLOW_JS)}
            for _ in range(600):
                if page.evaluate(where) == count - 1:
                    break
                page.keyboard.press("Space")
                page.wait_for_timeout(30)  # reveal.js lays the new slide out
                visited.add(page.evaluate(where))
                overflow[page.evaluate(where)] = page.evaluate(OVERFLOW_JS)
            images = page.evaluate("[...document.querySelectorAll('.slides img')].map(i => i.naturalWidth)")
            maths = page.evaluate("document.querySelectorAll('.MathJax_CHTML, .MathJax').length")
            return {"count": count, "visited": visited, "outside": outside, "failed": failed,
                    "images": images, "maths": maths, "overflow": overflow}
        finally:
            browser.close()


@needs_browser
def test_every_chapter_deck_opens_offline_pages_through_and_fits_the_slide(decks: Path):
    built = sorted(decks.glob("*.slides.html"))
    assert [p.name.removesuffix(".slides.html") for p in built] == [p.stem for p in slides.chapters()]
    total_images = 0
    for deck in built:
        seen = _in_thread(lambda d=deck: _page_through(d))
        assert seen["count"] >= 2, deck.name
        assert seen["visited"] == set(range(seen["count"])), f"{deck.name}: not every slide reached"
        assert seen["outside"] == [] and seen["failed"] == [], f"{deck.name}: {seen['outside'] + seen['failed']}"
        assert all(w > 0 for w in seen["images"]), f"{deck.name}: a figure did not load"
        over = {i + 1: round(px) for i, px in seen["overflow"].items() if px > 2}
        assert not over, f"{deck.name}: slides (number: px) run off the bottom of 1280×720: {over}"
        total_images += len(seen["images"])
        if deck.name.startswith("02_"):  # its display equations are on its slides, typeset offline
            assert seen["maths"] >= 3, deck.name
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


def test_the_cheat_sheet_is_fresh_and_prints_on_one_page(pdfs: Path):
    assert cheatsheet.main(["--check"]) == 0  # docs/cheatsheet.md is what the catalog and models give today
    facts = _pdf_facts(pdfs / "cheatsheet.pdf")
    assert facts["pages"] == 1
    for words in ("n½ = αβ", "busbw", "2(n−1)/n", "Young", "per direction"):
        assert words in facts["text"], words


def test_the_answer_key_lists_every_checked_question_with_its_computed_answer(tmp_path: Path):
    key = answer_key.answer_key()
    assert key.startswith("# nvcourse answer key (for helpers; do not hand out)")
    # every question a solution checks is in the key, with the value the models give
    for qid in ("02.ndr_GBps", "01.nodes_405b", "quiz.gbps", "quiz.post.gbps"):
        value = check.expected_answer(qid)
        assert f"`{qid}`: **{value:.4g}" in key or f"`{qid}`: **{value}" in key, qid
    assert "### BEGIN SOLUTION" not in key and "<!-- BEGIN SOLUTION -->" not in key
    assert answer_key.main(["--out", str(tmp_path / "key.md")]) == 0 and (tmp_path / "key.md").stat().st_size > 5000


@pytest.mark.parametrize("form", ["quiz_misconceptions_exercises", "quiz_misconceptions_post_exercises"])
def test_quiz_handouts_have_the_questions_answer_lines_and_no_answers(pdfs: Path, form: str):
    facts = _pdf_facts(pdfs / f"{form}.pdf")
    assert "Question 11" in facts["text"] and "Misconceptions quiz" in facts["text"]
    assert facts["text"].count("Your answer:") == 11  # a line to write on under each question
    assert "/ 8" not in facts["text"] and "BEGIN SOLUTION" not in facts["text"]  # no solution is printed


def test_handouts_refuse_a_missing_notebook(capsys: pytest.CaptureFixture[str]):
    assert handouts.main(["no/such.ipynb"]) == 2
    assert "no such notebook" in capsys.readouterr().err
    assert slides.main(["no/such.ipynb"]) == 2


def test_the_deck_build_is_quiet_but_reports_a_failing_cell(tmp_path: Path, capfd: pytest.CaptureFixture[str]):
    kernel = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    good, bad = tmp_path / "good.ipynb", tmp_path / "bad.ipynb"
    nbformat.write(new_notebook(cells=[new_markdown_cell("# Good\n\nText."), new_code_cell("print(1)")],
                                metadata=kernel), good)
    nbformat.write(new_notebook(cells=[new_code_cell("raise ValueError('boom in a cell')")], metadata=kernel), bad)
    assert slides.main(["--out", str(tmp_path / "out"), str(good)]) == 0
    out, err = capfd.readouterr()
    assert "[IPKernelApp]" not in out + err and "WARNING" not in out + err, err  # the kernel's log noise is off
    assert slides.main(["--out", str(tmp_path / "out"), str(bad)]) == 1
    err = capfd.readouterr().err
    assert "slides: error: bad.ipynb failed to execute" in err and "boom in a cell" in err
    assert "Traceback" not in err


def test_chapter_04s_cpu_run_is_projected_with_the_chapters_reason_it_is_off_the_model():
    nb = nbformat.read(ROOT / "notebooks" / "04_collectives_and_allreduce.ipynb", as_version=4)
    run = [s for s in deck_plan.plan(nb) if "nvcourse-deck-captioned" in s.visual]
    assert len(run) == 1, "the measured-vs-model figure has lost its caption (did the chapter's sentence change?)"
    assert "this CPU stand-in breaks two things they assume of a GPU" in run[0].lead
    assert "a fact about this machine, not about GPUs" in run[0].lead
    assert run[0].visible_words() <= deck_plan.WORD_LIMIT + 25


def test_the_answer_key_refuses_a_copy_without_solutions(tmp_path: Path, monkeypatch, capsys):
    # a learner copy (or a closed solutions/) used to give an empty key and status 0
    monkeypatch.setattr(answer_key, "ROOT", tmp_path)
    assert answer_key.main(["--out", str(tmp_path / "key.md")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no solutions" in err and not (tmp_path / "key.md").exists()
