"""Write docs/architecture.md's chapter table from the chapter registry (:data:`nvcourse.chapters.CHAPTERS`).

    python -m nvcourse.devtools.architecture           # rewrite the table between its markers
    python -m nvcourse.devtools.architecture --check   # exit 1 (and say so) when the table is stale

The table sits between ``<!-- chapters:begin -->`` and ``<!-- chapters:end -->``; the rest of the page is prose.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..chapters import CHAPTERS, Chapter

__all__ = ["chapter_table", "render", "main"]

BEGIN, END = "<!-- chapters:begin -->", "<!-- chapters:end -->"
DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def _code(text: str | None) -> str:
    return "—" if not text else f"`{text}`"


def _row(c: Chapter) -> str:
    notebook = c.notebook.removeprefix("notebooks/").removesuffix(".ipynb")
    models = ", ".join(f"`{m}`" for m in c.models) or "—"
    checker = _code(f"checks/{c.checker}" if c.checker else None)
    tests = ", ".join(t.removeprefix("tests/test_").removesuffix(".py") for t in c.tests) or "—"
    return f"| {c.number} | `{notebook}` | {_code(c.module)} | {models} | {checker} | {tests} |"


def chapter_table() -> str:
    """The Markdown table: one row per chapter, in the course's order."""
    head = ("| ch | notebook | chapter module | models | checker | tests (`tests/test_*.py`) |\n"
            "|---|---|---|---|---|---|")
    return "\n".join([head, *(_row(c) for c in CHAPTERS)])


def render(text: str) -> str:
    """``text`` (the page) with the part between the markers replaced by :func:`chapter_table`."""
    if BEGIN not in text or END not in text:
        raise ValueError(f"the page must hold the markers {BEGIN} and {END}")
    before, rest = text.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    return f"{before}{BEGIN}\n{chapter_table()}\n{END}{after}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nvcourse.devtools.architecture",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/architecture.md's table is stale")
    args = parser.parse_args(argv)
    text = DOC.read_text(encoding="utf-8")
    new = render(text)
    if args.check:
        if new != text:
            print(f"{DOC.name}: the chapter table is stale; run python -m nvcourse.devtools.architecture",
                  file=sys.stderr)
            return 1
        print(f"{DOC.name}: the chapter table matches nvcourse.chapters.CHAPTERS")
        return 0
    if new != text:
        DOC.write_text(new, encoding="utf-8")
        print(f"{DOC.name}: chapter table rewritten ({len(CHAPTERS)} chapters)")
    else:
        print(f"{DOC.name}: already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
