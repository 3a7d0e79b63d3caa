"""Build a reveal.js deck per chapter, openable offline: slides that are slides, with speaker notes.

    python3 tasks.py slides [--lang fr] [--out DIR] [--no-execute] [NOTEBOOK ...]   # default: every chapter

Each chapter is executed afresh in the deck style (``NVCOURSE_DECK=1``: figures at 100 dpi, every label,
legend and annotation at least 13 pt, 18 px on a 1280×720 slide, tick labels thinned where they would touch,
shown at their own size; see :func:`nvcourse.plots.deck_fonts`), then cut into slides by
:mod:`.deck_plan`: a slide at every heading with the section's first sentence and display equations, one
slide per figure, dashboard picture or printed table (long ones go on over continuation slides), the
notebook's prose as speaker notes (press ``S`` in the deck), slide numbers.
``--no-execute`` uses the notebooks' committed outputs instead (quicker; their figures are sized for a notebook
column, so tick labels come out smaller). reveal.js, MathJax, jQuery and require.js are served from
``DIR/_vendor`` (fetched once from the npm registry), so copy DIR whole onto a USB stick and open ``index.html``.

``--lang fr`` builds the French edition (the chapters of ``notebooks/fr/``, executed with the kernels in French)
into ``artifacts/slides/fr/``, beside the English decks of ``artifacts/slides/``; the words the deck adds itself
(a continuation slide's title, the notes' labels, the index page) come from :mod:`nvcourse.deck_words`, and the
page says ``<html lang="fr">``.

Exit status: 0; 2 for a notebook that does not exist or a ``--lang`` that is not an edition; 1 when npm,
nbconvert or a chapter's execution fails.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import sys
from pathlib import Path

import nbformat

from ..deck_words import deck_index
from .deck_plan import deck_notebook, plan
from .kernel_run import notebook_client  # nbclient's NotebookClient, without its lost wake-up
from .kit_edition import add_lang_option, checked_lang, folder, not_translated, speaking
from .offline_web import OfflineAssetsError, ensure_assets, exporter_urls

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = Path(__file__).resolve().parent / "templates"
DEFAULT_OUT = ROOT / "artifacts" / "slides"
SLIDE_WIDTH, SLIDE_HEIGHT = 1280, 720  # the projector size the deck is laid out for (reveal.js scales it)
#: The kernel's own log quiet: its per-start warning (a local kernel "running over TCP without encryption")
#: and its "KeyboardInterrupt caught in kernel" would print once per chapter. Real failures do not go through
#: that log: a cell's error or a dead kernel still fails the build (exit 1) with a one-line message.
KERNEL_QUIET = ["--IPKernelApp.log_level=CRITICAL"]
KERNEL_TRIES = 2  # a chapter whose kernel dies is run once more in a fresh kernel before the build fails


class DeckError(RuntimeError):
    """A chapter could not be executed or exported (exit status 1)."""


def chapters(root: Path = ROOT, lang: str = "en") -> list[Path]:
    """The chapter notebooks of the ``lang`` edition in course order (a translation: those translated so far)."""
    return sorted(folder(root / "notebooks", lang).glob("[0-9]*.ipynb"))


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _why(exc: BaseException, timeout: int) -> str:
    """One line on what stopped a chapter: the cell's exception (name: value), a cell that ran past ``timeout``
    seconds (nbclient's message ends with a ruler, not the reason), or the error's last non-empty line."""
    from nbclient.exceptions import CellExecutionError

    if isinstance(exc, CellExecutionError) and getattr(exc, "ename", ""):
        return _ANSI.sub("", f"{exc.ename}: {exc.evalue}".strip().splitlines()[0])
    if isinstance(exc, TimeoutError):
        lines = [ln for ln in str(exc).splitlines() if ln.strip() and not set(ln.strip()) <= {"-"}]
        preview = lines[3].strip() if len(lines) > 3 else ""
        return f"a cell ran past its {timeout} s limit ({preview})" if preview else f"a cell ran past {timeout} s"
    lines = [ln for ln in _ANSI.sub("", str(exc)).splitlines() if ln.strip()]
    return lines[-1].strip() if lines else type(exc).__name__


def executed_in_deck_style(notebook: Path, timeout: int = 600) -> nbformat.NotebookNode:
    """A fresh run of ``notebook`` (in memory; the file is not changed) with the deck style's figures."""
    from nbclient.exceptions import DeadKernelError  # imported here: nbclient is a test/teaching extra

    previous = os.environ.get("NVCOURSE_DECK")
    os.environ["NVCOURSE_DECK"] = "1"  # the kernel inherits it: nvcourse.plots applies the deck style
    try:
        for attempt in range(KERNEL_TRIES):
            nb = nbformat.read(notebook, as_version=4)
            try:
                notebook_client(nb, timeout=timeout, kernel_name="python3", extra_arguments=KERNEL_QUIET,
                                resources={"metadata": {"path": str(notebook.parent)}}).execute()
                break
            except DeadKernelError:
                # A kernel that dies (killed from outside, a port taken between choosing it and binding it on a
                # busy machine) says nothing about the chapter: start a fresh one. A cell's error is not retried.
                if attempt == KERNEL_TRIES - 1:
                    raise
    except Exception as exc:  # nbclient raises several types; one line for the instructor, never a traceback
        raise DeckError(f"{notebook.name} failed to execute for its deck: {_why(exc, timeout)[:200]}") from exc
    finally:
        if previous is None:
            os.environ.pop("NVCOURSE_DECK", None)
        else:
            os.environ["NVCOURSE_DECK"] = previous
    return nb


def build_deck(notebook: Path, out_dir: Path, modules: Path, *, execute: bool = True, lang: str = "en") -> Path:
    """Write ``out_dir/<notebook stem>.slides.html`` from ``notebook`` of the ``lang`` edition (its kernel and the
    deck's own words in that language); returns its path."""
    with speaking(lang):
        return _build_deck(notebook, out_dir, modules, execute=execute, lang=lang)


def _build_deck(notebook: Path, out_dir: Path, modules: Path, *, execute: bool, lang: str) -> Path:
    from nbconvert import SlidesExporter  # imported here: nbconvert is a test/teaching extra

    nb = executed_in_deck_style(notebook) if execute else nbformat.read(notebook, as_version=4)
    exporter = SlidesExporter(template_name="nvcourse_reveal", extra_template_basedirs=[str(TEMPLATES)],
                              language_code=lang,
                              exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True,
                              reveal_scroll=True, reveal_transition="none", reveal_theme="white",
                              reveal_number="c/t", reveal_width=str(SLIDE_WIDTH), reveal_height=str(SLIDE_HEIGHT),
                              **exporter_urls(modules, out_dir))
    body, _ = exporter.from_notebook_node(deck_notebook(plan(nb)), resources={"metadata": {"name": notebook.stem}})
    target = out_dir / f"{notebook.stem}.slides.html"
    target.write_text(body, encoding="utf-8")
    return target


def write_index(decks: list[Path], out_dir: Path, lang: str = "en") -> Path:
    """Write ``out_dir/index.html``, a link to each deck, in ``lang``; returns its path."""
    items = "\n".join(f'<li><a href="{html.escape(d.name)}">{html.escape(d.stem.removesuffix(".slides"))}</a></li>'
                      for d in decks)
    with speaking(lang):
        title, heading, keys = deck_index()
    page = (f"<!doctype html><html lang='{lang}'><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<h1>{html.escape(heading)}</h1><ul>\n{items}\n</ul>"
            f"<p>{html.escape(keys)}</p>\n")
    index = out_dir / "index.html"
    index.write_text(page, encoding="utf-8")
    return index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tasks.py slides", description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="chapters to build (default: all)")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default: artifacts/slides, artifacts/slides/fr for --lang fr)")
    parser.add_argument("--no-execute", action="store_true",
                        help="use the committed outputs instead of running each chapter in the deck style")
    add_lang_option(parser)
    args = parser.parse_args(argv)
    lang = checked_lang("slides", args.lang)
    if lang is None:
        return 2
    notebooks = args.notebooks or chapters(lang=lang)
    missing = [str(p) for p in notebooks if not p.is_file()] or ([] if notebooks else [f"{lang} edition's chapters"])
    if missing:
        print(f"slides: error: no such notebook: {', '.join(missing)}", file=sys.stderr)
        return 2
    out = args.out or folder(DEFAULT_OUT, lang)
    out.mkdir(parents=True, exist_ok=True)
    try:
        modules = ensure_assets(out)
        decks = []
        for nb in notebooks:
            print(f"slides: {nb.stem} ...", flush=True)
            decks.append(build_deck(nb, out, modules, execute=not args.no_execute, lang=lang))
    except (OfflineAssetsError, DeckError, OSError, ValueError) as exc:
        print(f"slides: error: {exc}", file=sys.stderr)
        return 1
    index = write_index(decks, out, lang)
    print(f"slides: {len(decks)} decks in {out} (open {index.name}; works offline)")
    left_out = "" if args.notebooks or lang == "en" else not_translated(chapters(), notebooks)
    if left_out:
        print(f"slides: {left_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
