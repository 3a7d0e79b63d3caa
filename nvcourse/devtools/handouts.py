"""Print each chapter, the misconceptions quiz and the cheat sheet to PDF through Chromium: handouts for a room.

    python3 tasks.py handouts [--lang fr] [--out DIR] [--answer-key] [NOTEBOOK|PAGE.md ...]

Each notebook is turned into HTML without its code (prose, figures with their descriptions, tables, stored
Dashboard pictures), with MathJax served locally (see :mod:`offline_web`), then printed to A4 by headless
Chromium once the formulas are typeset. Both quiz forms are printed from ``exercises/`` (no answers in them), each
question with a line to write on; ``docs/cheatsheet.md`` fits one page. ``--answer-key`` adds the helpers' key
(:mod:`.answer_key`), which is instructor material: it goes to ``OUT/answer-key/`` (mode 0700, its files 0600), so
learners' accounts on the same machine cannot read it. Default folder: ``artifacts/handouts/``.

``--lang fr`` prints the French edition into ``artifacts/handouts/fr/`` (beside the English, never over it): the
chapters of ``notebooks/fr/`` with their French outputs, the quiz forms of ``exercises/fr/`` and the key from
``solutions/fr/`` where they have been translated, the cheat sheet when ``docs/fr/cheatsheet.md`` exists; the
words the handout adds itself (the answer line, the key's heading) come from :mod:`nvcourse.deck_words`, and each
page says ``<html lang="fr">``.

Exit status: 0; 2 for a notebook that does not exist or a ``--lang`` that is not an edition; 1 when Chromium,
npm or nbconvert fails.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import threading
from pathlib import Path

import nbformat

from ..deck_words import answer_key_header, answer_line, figure_fallback
from .answer_key import answer_key, notebook_key
from .kit_edition import add_lang_option, checked_lang, folder, not_translated, speaking
from .offline_web import OfflineAssetsError, ensure_assets, exporter_urls

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = Path(__file__).resolve().parent / "templates"
DEFAULT_OUT = ROOT / "artifacts" / "handouts"
QUIZ_FORMS = ("quiz_misconceptions_exercises.ipynb", "quiz_misconceptions_post_exercises.ipynb")  # pre, post
QUIZZES = tuple(ROOT / "exercises" / form for form in QUIZ_FORMS)  # the English edition's
ANSWER_LINE = "**Your answer:** ________________________________"  # the English of deck_words.answer_line()
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
# MathJax 2 has typeset the page when its queue is empty and its startup promise has run.
MATHJAX_DONE = "() => !window.MathJax || (MathJax.Hub && MathJax.Hub.queue && MathJax.Hub.queue.pending === 0)"


class HandoutError(RuntimeError):
    """Chromium or Playwright is missing, or printing failed (exit status 1)."""


def find_chromium() -> str | None:
    """The browser executable: ``NVCOURSE_CHROMIUM``, Debian's paths, then ``PATH``."""
    for path in (os.environ.get("NVCOURSE_CHROMIUM"), *CHROMIUM_CANDIDATES):
        if path and Path(path).exists():
            return path
    return shutil.which("chromium")


CHEATSHEET = ROOT / "docs" / "cheatsheet.md"
#: A translated cheat sheet, when there is one: docs/<lang>/cheatsheet.md.
CHEATSHEET_NAME = CHEATSHEET.name
ONE_PAGE_CSS = ("body, .jp-RenderedMarkdown p, .jp-RenderedMarkdown li { font-size: 9pt !important; "
                "line-height: 1.3; } "
                ".jp-RenderedMarkdown h1 { font-size: 15pt; margin: 0 0 4px; } "
                ".jp-RenderedMarkdown h2 { font-size: 11pt; margin: 8px 0 2px; } "
                ".jp-RenderedMarkdown table { font-size: 8.5pt; } .jp-RenderedMarkdown td, "
                ".jp-RenderedMarkdown th { padding: 1px 6px; }")


def default_notebooks(root: Path = ROOT, lang: str = "en") -> list[Path]:
    """Every chapter, both quiz forms and the one-page cheat sheet of the ``lang`` edition (a translation: what
    has been translated so far)."""
    quiz = [q for q in (folder(root / "exercises", lang) / form for form in QUIZ_FORMS) if q.is_file()]
    cheatsheet = folder(root / "docs", lang) / CHEATSHEET_NAME
    sheet = [cheatsheet] if cheatsheet.is_file() else []
    return sorted(folder(root / "notebooks", lang).glob("[0-9]*.ipynb")) + quiz + sheet


def _read(path: Path) -> nbformat.NotebookNode:
    """A notebook, or a Markdown page (the cheat sheet, the answer key) as a notebook of one cell."""
    if path.suffix == ".md":
        text = path.read_text(encoding="utf-8")
        if path.name == CHEATSHEET_NAME:  # one page: small type, tight tables (the English or a translation)
            text = (f"<style>{ONE_PAGE_CSS}</style>\n\n") + text
        return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    return nbformat.read(path, as_version=4)


def _on_paper(nb: nbformat.NotebookNode, *, quiz: bool) -> nbformat.NotebookNode:
    """Code is not printed, so a code cell without output would print as an empty box (a blank last page); on a
    printed quiz each answer cell becomes a line to write the answer on."""
    cells = []
    for cell in nb.cells:
        if quiz and cell.cell_type == "code" and ("check.record(" in cell.source or "check.answer(" in cell.source):
            cells.append(nbformat.v4.new_markdown_cell(answer_line()))
        elif cell.cell_type != "code" or cell.get("outputs"):
            cells.append(cell)
    nb.cells = cells
    return nb


def handout_html(notebook: Path, out_dir: Path, modules: Path, lang: str = "en") -> Path:
    """Write the printable HTML of ``notebook`` (of the ``lang`` edition) into ``out_dir``; returns its path."""
    from nbconvert import HTMLExporter

    with speaking(lang):
        nb = _on_paper(_read(notebook), quiz=notebook.stem.startswith("quiz_"))
        no_alt = figure_fallback()
    exporter = HTMLExporter(template_name="nvcourse_handout", extra_template_basedirs=[str(TEMPLATES)],
                            exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True,
                            embed_images=True, language_code=lang,
                            **{k: v for k, v in exporter_urls(modules, out_dir).items() if k != "reveal_url_prefix"})
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": notebook.stem},
                                                         "nvcourse_no_alt": no_alt})
    page = out_dir / f"{notebook.stem}.html"
    page.write_text(body, encoding="utf-8")
    return page


def _print_pages(pages: list[Path], chromium: str) -> list[Path]:
    from playwright.sync_api import sync_playwright

    pdfs = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            # Offline by construction: a handout never needs the network, so any request outside file: fails.
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort())
            for html_page in pages:
                page.goto(html_page.resolve().as_uri())
                page.wait_for_function(MATHJAX_DONE, timeout=60_000)
                pdf = html_page.with_suffix(".pdf")
                page.pdf(path=str(pdf), format="A4", print_background=True,
                         margin={"top": "15mm", "bottom": "15mm", "left": "12mm", "right": "12mm"})
                _drop_blank_last_pages(pdf)
                pdfs.append(pdf)
        finally:
            browser.close()
    return pdfs


def _drop_blank_last_pages(pdf: Path) -> None:
    """Remove trailing pages with neither text nor ink (Chromium ends some prints with one, after the last
    widget's empty output box). Needs pypdfium2 (the test extra); without it the PDF is left as printed."""
    try:
        import pypdfium2 as pdfium
    except ImportError:
        return
    doc = pdfium.PdfDocument(str(pdf))
    blank = 0
    for i in range(len(doc) - 1, 0, -1):  # never the first page
        page = doc[i]
        grey = page.render(scale=0.25).to_pil().convert("L")
        if page.get_textpage().get_text_range().strip() or grey.getextrema()[0] < 200:  # text or any ink
            break
        blank += 1
    if blank:
        for i in range(len(doc) - 1, len(doc) - 1 - blank, -1):
            doc.del_page(i)
        tmp = pdf.with_suffix(".tmp.pdf")
        doc.save(str(tmp))
        doc.close()
        tmp.replace(pdf)
    else:
        doc.close()


def print_pdfs(pages: list[Path], chromium: str) -> list[Path]:
    """Print ``pages`` to PDFs beside them. Runs Playwright in a thread of its own, because its sync API
    refuses to start inside a running asyncio loop (a Jupyter kernel, pytest with an async plugin)."""
    result: dict[str, object] = {}

    def work() -> None:
        try:
            result["pdfs"] = _print_pages(pages, chromium)
        except Exception as exc:  # noqa: BLE001 - reported as one line by the caller
            result["error"] = exc

    thread = threading.Thread(target=work, name="nvcourse-handouts")
    thread.start()
    thread.join()
    if "error" in result:
        raise HandoutError(f"printing with Chromium failed: {result['error']}".splitlines()[0])
    return result["pdfs"]  # type: ignore[return-value]


def edition_key(lang: str, root: Path = ROOT) -> str:
    """The helpers' key of the ``lang`` edition: the English key, or the same key read from the translated
    solutions (``solutions/<lang>/``) under a heading in that language."""
    if lang == "en":
        return answer_key(root)
    source = folder(root / "solutions", lang)
    with speaking(lang):
        head = answer_key_header(f"python3 tasks.py handouts --lang {lang} --answer-key",
                                 f"{source.relative_to(root).as_posix()}/")
        return "\n".join(head + [notebook_key(p) for p in sorted(source.glob("*_exercises.ipynb"))])


def write_answer_key(out: Path, lang: str = "en") -> Path:
    """Write the helpers' key (of the ``lang`` edition) to ``out/answer-key/answer-key.md``: a folder only its
    owner enters (0700) and a file only its owner reads (0600), so learners' accounts on a shared machine (the
    classroom hub) cannot read it. Returns its path."""
    for old in ("md", "html", "pdf"):  # where earlier versions left it, readable by all
        (out / f"answer-key.{old}").unlink(missing_ok=True)
    key_dir = out / "answer-key"
    key_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    key_dir.chmod(0o700)
    key = key_dir / "answer-key.md"
    key.unlink(missing_ok=True)
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(edition_key(lang))
    return key


def make_private(folder: Path) -> None:
    """Every file in ``folder`` mode 0600 and the folder 0700 (what the printing wrote with the default umask)."""
    folder.chmod(0o700)
    for f in folder.iterdir():
        if f.is_file():
            f.chmod(0o600)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tasks.py handouts", description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks or Markdown pages to print (default: chapters, quiz, cheat sheet)")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default: artifacts/handouts, artifacts/handouts/fr for --lang fr)")
    parser.add_argument("--answer-key", action="store_true",
                        help="also print the helpers' answer key (answer-key.pdf; instructor material)")
    add_lang_option(parser)
    args = parser.parse_args(argv)
    lang = checked_lang("handouts", args.lang)
    if lang is None:
        return 2
    args.out = args.out or folder(DEFAULT_OUT, lang)
    notebooks = args.notebooks or default_notebooks(lang=lang)
    key = write_answer_key(args.out, lang) if args.answer_key else None
    if key is not None:
        notebooks = [*notebooks, key]
    missing = [str(p) for p in notebooks if not p.is_file()]
    if missing:
        print(f"handouts: error: no such notebook: {', '.join(missing)}", file=sys.stderr)
        return 2
    chromium = find_chromium()
    if chromium is None:
        print("handouts: error: Chromium not found (apt-get install chromium, or set NVCOURSE_CHROMIUM)",
              file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        modules = ensure_assets(args.out)
        pdfs = print_pdfs([handout_html(nb, nb.parent if nb == key else args.out, modules, lang)
                           for nb in notebooks], chromium)
    except (OfflineAssetsError, HandoutError, OSError, ValueError) as exc:
        print(f"handouts: error: {exc}", file=sys.stderr)
        return 1
    finally:
        if key is not None:
            make_private(key.parent)
    plural = "" if len(pdfs) == 1 else "s"
    print(f"handouts: {len(pdfs)} PDF{plural} in {args.out}" + (f" (the answer key, readable by you only, in "
                                                                 f"{key.parent})" if key is not None else ""))
    left_out = "" if args.notebooks or lang == "en" else not_translated(default_notebooks(), notebooks)
    if left_out:
        print(f"handouts: {left_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
