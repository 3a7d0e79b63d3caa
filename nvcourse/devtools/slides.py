"""Build a reveal.js deck per chapter, openable offline: slides that are slides, with speaker notes.

    python3 tasks.py slides [--out DIR] [--no-execute] [NOTEBOOK ...]   # default: every chapter, artifacts/slides/

Each chapter is executed afresh in the deck style (``NVCOURSE_DECK=1``: figures at 100 dpi, every label,
legend and annotation at least 13 pt, 18 px on a 1280×720 slide, tick labels thinned where they would touch,
shown at their own size; see :func:`nvcourse.plots.deck_fonts`), then cut into slides by
:mod:`.deck_plan`: a slide at every heading with the section's first sentence and display equations, one
slide per figure, dashboard picture or printed table (long ones go on over continuation slides), the
notebook's prose as speaker notes (press ``S`` in the deck), slide numbers.
``--no-execute`` uses the notebooks' committed outputs instead (quicker; their figures are sized for a notebook
column, so tick labels come out smaller). reveal.js, MathJax, jQuery and require.js are served from
``DIR/_vendor`` (fetched once from the npm registry), so copy DIR whole onto a USB stick and open ``index.html``.

Exit status: 0; 2 for a notebook that does not exist; 1 when npm, nbconvert or a chapter's execution fails.
"""

from __future__ import annotations

import argparse
import html
import os
import sys
from pathlib import Path

import nbformat

from .deck_plan import deck_notebook, plan
from .offline_web import OfflineAssetsError, ensure_assets, exporter_urls

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = Path(__file__).resolve().parent / "templates"
DEFAULT_OUT = ROOT / "artifacts" / "slides"
SLIDE_WIDTH, SLIDE_HEIGHT = 1280, 720  # the projector size the deck is laid out for (reveal.js scales it)
#: The kernel's own log quiet: its per-start warning (a local kernel "running over TCP without encryption")
#: and its "KeyboardInterrupt caught in kernel" would print once per chapter. Real failures do not go through
#: that log: a cell's error or a dead kernel still fails the build (exit 1) with a one-line message.
KERNEL_QUIET = ["--IPKernelApp.log_level=CRITICAL"]


class DeckError(RuntimeError):
    """A chapter could not be executed or exported (exit status 1)."""


def chapters(root: Path = ROOT) -> list[Path]:
    """The chapter notebooks in course order."""
    return sorted((root / "notebooks").glob("[0-9]*.ipynb"))


def executed_in_deck_style(notebook: Path, timeout: int = 600) -> nbformat.NotebookNode:
    """A fresh run of ``notebook`` (in memory; the file is not changed) with the deck style's figures."""
    from nbclient import NotebookClient  # imported here: nbclient is a test/teaching extra

    nb = nbformat.read(notebook, as_version=4)
    previous = os.environ.get("NVCOURSE_DECK")
    os.environ["NVCOURSE_DECK"] = "1"  # the kernel inherits it: nvcourse.plots applies the deck style
    try:
        NotebookClient(nb, timeout=timeout, kernel_name="python3", extra_arguments=KERNEL_QUIET,
                       resources={"metadata": {"path": str(notebook.parent)}}).execute()
    except Exception as exc:  # nbclient raises several types; one line for the instructor, never a traceback
        raise DeckError(f"{notebook.name} failed to execute for its deck: {str(exc).splitlines()[-1][:200]}") from exc
    finally:
        if previous is None:
            os.environ.pop("NVCOURSE_DECK", None)
        else:
            os.environ["NVCOURSE_DECK"] = previous
    return nb


def build_deck(notebook: Path, out_dir: Path, modules: Path, *, execute: bool = True) -> Path:
    """Write ``out_dir/<notebook stem>.slides.html``; returns its path."""
    from nbconvert import SlidesExporter  # imported here: nbconvert is a test/teaching extra

    nb = executed_in_deck_style(notebook) if execute else nbformat.read(notebook, as_version=4)
    exporter = SlidesExporter(template_name="nvcourse_reveal", extra_template_basedirs=[str(TEMPLATES)],
                              exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True,
                              reveal_scroll=True, reveal_transition="none", reveal_theme="white",
                              reveal_number="c/t", reveal_width=str(SLIDE_WIDTH), reveal_height=str(SLIDE_HEIGHT),
                              **exporter_urls(modules, out_dir))
    body, _ = exporter.from_notebook_node(deck_notebook(plan(nb)), resources={"metadata": {"name": notebook.stem}})
    target = out_dir / f"{notebook.stem}.slides.html"
    target.write_text(body, encoding="utf-8")
    return target


def write_index(decks: list[Path], out_dir: Path) -> Path:
    items = "\n".join(f'<li><a href="{html.escape(d.name)}">{html.escape(d.stem.removesuffix(".slides"))}</a></li>'
                      for d in decks)
    page = (f"<!doctype html><meta charset='utf-8'><title>nvcourse decks</title>"
            f"<h1>nvcourse — one deck per chapter</h1><ul>\n{items}\n</ul>"
            "<p>Arrows or space to page; Esc for the overview; S opens the speaker notes.</p>\n")
    index = out_dir / "index.html"
    index.write_text(page, encoding="utf-8")
    return index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tasks.py slides", description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="chapters to build (default: all)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: artifacts/slides)")
    parser.add_argument("--no-execute", action="store_true",
                        help="use the committed outputs instead of running each chapter in the deck style")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or chapters()
    missing = [str(p) for p in notebooks if not p.is_file()]
    if missing:
        print(f"slides: error: no such notebook: {', '.join(missing)}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        modules = ensure_assets(args.out)
        decks = []
        for nb in notebooks:
            print(f"slides: {nb.stem} ...", flush=True)
            decks.append(build_deck(nb, args.out, modules, execute=not args.no_execute))
    except (OfflineAssetsError, DeckError, OSError, ValueError) as exc:
        print(f"slides: error: {exc}", file=sys.stderr)
        return 1
    index = write_index(decks, args.out)
    print(f"slides: {len(decks)} decks in {args.out} (open {index.name}; works offline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
