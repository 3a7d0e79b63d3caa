"""Build a reveal.js deck per chapter from the executed notebooks, openable offline.

    python3 tasks.py slides [--out DIR] [NOTEBOOK ...]     # default: every chapter, into artifacts/slides/

Which cells become slides: a cell's own ``metadata.slideshow.slide_type`` wins (authors can tune a deck in
JupyterLab's property inspector); otherwise a ``#``/``##`` heading starts a slide, a ``###`` heading a
sub-slide (reveal.js's vertical slides), other prose continues the current slide, and a code cell shows
only its figures (its code and text output are left out; a cell without a picture is skipped). A
Dashboard appears as the static picture it stores next to its widget. reveal.js, MathJax, jQuery and
require.js are served from ``DIR/_vendor`` (fetched once from the npm registry), so copy DIR whole onto a
USB stick and open ``index.html``.

Exit status: 0; 2 for a notebook that does not exist; 1 when npm or nbconvert fails.
"""

from __future__ import annotations

import argparse
import copy
import html
import sys
from pathlib import Path

import nbformat

from .offline_web import OfflineAssetsError, ensure_assets, exporter_urls

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = Path(__file__).resolve().parent / "templates"
DEFAULT_OUT = ROOT / "artifacts" / "slides"
FIGURE_MIMES = ("image/png", "image/svg+xml", "image/jpeg")


def chapters(root: Path = ROOT) -> list[Path]:
    """The chapter notebooks in course order."""
    return sorted((root / "notebooks").glob("[0-9]*.ipynb"))


def _has_figure(cell: nbformat.NotebookNode) -> bool:
    return any(any(m in out.get("data", {}) for m in FIGURE_MIMES) for out in cell.get("outputs", []))


def slide_type(cell: nbformat.NotebookNode) -> str:
    """The reveal.js role of one cell: 'slide', 'subslide', '-', or 'skip' (see the module docstring)."""
    chosen = cell.get("metadata", {}).get("slideshow", {}).get("slide_type")
    if chosen:
        return chosen
    if cell.cell_type == "markdown":
        first = cell.source.lstrip().split("\n", 1)[0]
        if first.startswith(("# ", "## ")):
            return "slide"
        return "subslide" if first.startswith("### ") else "-"
    if cell.cell_type == "code" and _has_figure(cell):
        return "-"
    return "skip"


def deck_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` with slide roles set and code cells reduced to their figures."""
    out = copy.deepcopy(nb)
    for cell in out.cells:
        role = slide_type(cell)
        cell.setdefault("metadata", {})["slideshow"] = {"slide_type": role}
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.get("outputs", []) if any(m in o.get("data", {}) for m in FIGURE_MIMES)]
    return out


def build_deck(notebook: Path, out_dir: Path, modules: Path) -> Path:
    """Write ``out_dir/<notebook stem>.slides.html``; returns its path."""
    from nbconvert import SlidesExporter  # imported here: nbconvert is a test/teaching extra

    nb = nbformat.read(notebook, as_version=4)
    exporter = SlidesExporter(template_name="nvcourse_reveal", extra_template_basedirs=[str(TEMPLATES)],
                              exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True,
                              reveal_scroll=True, reveal_transition="none", reveal_theme="white",
                              **exporter_urls(modules, out_dir))
    body, _ = exporter.from_notebook_node(deck_notebook(nb), resources={"metadata": {"name": notebook.stem}})
    target = out_dir / f"{notebook.stem}.slides.html"
    target.write_text(body, encoding="utf-8")
    return target


def write_index(decks: list[Path], out_dir: Path) -> Path:
    items = "\n".join(f'<li><a href="{html.escape(d.name)}">{html.escape(d.stem.removesuffix(".slides"))}</a></li>'
                      for d in decks)
    page = (f"<!doctype html><meta charset='utf-8'><title>nvcourse decks</title>"
            f"<h1>nvcourse — one deck per chapter</h1><ul>\n{items}\n</ul>"
            "<p>Arrows or space to page; Esc for the overview.</p>\n")
    index = out_dir / "index.html"
    index.write_text(page, encoding="utf-8")
    return index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tasks.py slides", description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="chapters to build (default: all)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: artifacts/slides)")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or chapters()
    missing = [str(p) for p in notebooks if not p.is_file()]
    if missing:
        print(f"slides: error: no such notebook: {', '.join(missing)}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        modules = ensure_assets(args.out)
        decks = [build_deck(nb, args.out, modules) for nb in notebooks]
    except (OfflineAssetsError, OSError, ValueError) as exc:
        print(f"slides: error: {exc}", file=sys.stderr)
        return 1
    index = write_index(decks, args.out)
    print(f"slides: {len(decks)} decks in {args.out} (open {index.name}; works offline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
