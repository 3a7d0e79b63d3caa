"""Helpers for tests: render generated Markdown/HTML as a notebook front-end would and read the tables back.

* :func:`table_cells` renders Markdown with mistune (CommonMark + GFM tables; nbconvert's renderer, so it is
  installed with Jupyter) or takes HTML as is, and returns the text of every table cell, row by row.
* :func:`jupyter_math_spans` finds what JupyterLab would typeset as TeX: its Markdown renderer cuts
  ``$...$`` out of a block (text between blank lines) *before* Markdown parsing; an escaped ``\\$`` is not
  a delimiter. MathJax then runs on the rendered page unless an ancestor has a class it ignores, so
  :func:`math_is_fenced` says whether the block sits in such an element (behaviour checked in JupyterLab 4.6).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import mistune

_RENDER = mistune.create_markdown(escape=False, plugins=["table"])
MATHJAX_IGNORE = re.compile(r'class="[^"]*\b(?:tex2jax_ignore|mathjax_ignore)\b')


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in {"td", "th"}:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in {"td", "th"} and self._cell is not None:
            self.rows[-1].append(re.sub(r"\s+", " ", "".join(self._cell)).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def table_cells(text: str, *, markdown: bool = True) -> list[list[str]]:
    """The text of each table cell, row by row, after rendering ``text`` (Markdown, or HTML if not ``markdown``)."""
    parser = _Cells()
    parser.feed(_RENDER(text) if markdown else text)
    return parser.rows


def jupyter_math_spans(markdown: str) -> list[str]:
    """Stretches of ``markdown`` that JupyterLab's pre-pass would take as inline TeX (``$...$`` in one block)."""
    spans = []
    for block in re.split(r"\n\s*\n", markdown):
        unescaped = re.sub(r"\\.", "", block)  # \$ \| ... are not delimiters
        spans += re.findall(r"\$[^$]+\$", unescaped)
    return spans


def math_is_fenced(markup: str) -> bool:
    """Whether ``markup`` is wrapped in an element MathJax skips (its first tag has an ignore class)."""
    first = re.match(r"\s*<[a-z]+[^>]*>", markup)
    return bool(first and MATHJAX_IGNORE.search(first.group(0)))
