"""Generated Markdown and HTML that renders as written: escaping, tables and pass/fail marks.

Two traps of notebook front-ends, both seen by learners:

* **TeX.** JupyterLab, nbviewer and GitHub typeset ``$...$`` as maths. JupyterLab cuts the maths out of
  Markdown *before* parsing it, so two prices in a table ("≤ $3.00 M" ... "($2.76 M)") swallow the rows
  between them; and it runs MathJax on the rendered page afterwards, so even ``\\$`` (which Markdown turns
  back into ``$``) becomes maths when two of them share a paragraph or cell (checked in JupyterLab 4.6).
  Hence: text is backslash-escaped (``\\$ \\* \\_ \\| \\<``) *and* generated blocks sit in an element with the
  classes MathJax 2 and 3 skip (``tex2jax_ignore``, ``mathjax_ignore``); in HTML ``$`` is ``&#36;``.
* **Fonts.** ✅/❌ are emoji: on a machine without an emoji font (a plain Debian + Chromium) they are empty
  boxes. The marks here (✔ ✘ ⚠) are in DejaVu Sans, and the word beside them carries the meaning.

This module has no plotting or widget imports: models and checkers can use it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

__all__ = [
    "PASS_MARK", "FAIL_MARK", "WARN_MARK", "NO_MATH", "md_escape", "md_cell", "md_table", "md_no_math", "html_escape",
    "html_table", "mark_html", "align_cells",
]

PASS_MARK = "\u2714"  # ✔ HEAVY CHECK MARK (DejaVu Sans has it; ✅ is an emoji and needs an emoji font)
FAIL_MARK = "\u2718"  # ✘ HEAVY BALLOT X (not ❌)
WARN_MARK = "\u26a0"  # ⚠ without the emoji variation selector U+FE0F
#: Attribute that keeps MathJax 2 (nbviewer, classic notebook) and 3 (JupyterLab) off an element's text.
NO_MATH = 'class="tex2jax_ignore mathjax_ignore"'

# Characters that Markdown (CommonMark + GFM tables + Jupyter's TeX) would read as markup.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|$#~])")


def md_escape(text: object) -> str:
    """``text`` as literal Markdown: ``$ * _ | < ` [ ] # ~ \\`` backslash-escaped, newlines as spaces."""
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\r", " ").replace("\n", " ")


def md_cell(markdown: object) -> str:
    """Author-written Markdown made safe for one table cell: keeps ``**bold**``/``_italic_``, escapes
    what breaks a table row or starts maths (``|``, ``$``), and joins lines."""
    text = re.sub(r"(?<!\\)([|$])", r"\\\1", str(markdown))
    return text.replace("\r", " ").replace("\n", " ")


def md_no_math(markdown: str) -> str:
    """A Markdown block inside a ``<div>`` MathJax skips (the blank lines keep it Markdown inside the HTML block)."""
    return f"<div {NO_MATH}>\n\n{markdown}\n\n</div>"


def md_table(header: Sequence[object], rows: Iterable[Sequence[object]], *, markdown_cols: Iterable[int] = ()) -> str:
    """A GitHub-flavoured Markdown table (in :func:`md_no_math`); cells are escaped as text except
    ``markdown_cols`` (see :func:`md_cell`)."""
    keep = set(markdown_cols)
    lines = ["| " + " | ".join(md_escape(h) for h in header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [md_cell(c) if i in keep else md_escape(c) for i, c in enumerate(row)]
        lines.append("| " + " | ".join(cells) + " |")
    return md_no_math("\n".join(lines))


def html_escape(text: object) -> str:
    """``text`` for HTML: ``& < > " '`` as entities and ``$`` as ``&#36;`` (nothing for TeX to find in the source)."""
    return html.escape(str(text)).replace("$", "&#36;")


def html_table(header: Sequence[object], rows: Iterable[Sequence[object]], *, html_cols: Iterable[int] = (),
               align_numbers: bool = True) -> str:
    """An HTML table that MathJax leaves alone; cells escaped as text except ``html_cols`` (already HTML).

    Text cells are left-aligned (a right-aligned sentence is hard to read); with ``align_numbers`` a cell
    that starts with a digit, sign or currency is right-aligned so columns of figures line up.
    """
    keep = set(html_cols)

    def cell(i: int, value: object, tag: str) -> str:
        text = str(value) if i in keep else html_escape(value)
        numeric = align_numbers and tag == "td" and re.match(r"^[-+−~≈≤≥$€]?\s?\d", str(value)) is not None
        return f'<{tag} style="text-align:{"right" if numeric else "left"}">{text}</{tag}>'

    head = "<tr>" + "".join(cell(-1, h, "th") for h in header) + "</tr>"
    body = "".join("<tr>" + "".join(cell(i, v, "td") for i, v in enumerate(row)) + "</tr>" for row in rows)
    return f"<table {NO_MATH}>{head}{body}</table>"


_NUMERIC = re.compile(r"^[-+−~≈≤≥$€]?\s?\d")
_BARE_CELL = re.compile(r"<(td|th)>(.*?)</\1>", re.S)


def align_cells(table: str) -> str:
    """Give every bare ``<td>``/``<th>`` of an HTML table an explicit alignment: text left, figures right.

    JupyterLab right-aligns table cells by default, which turns a column of sentences ("data parallel
    (gradients)", a source note) into a ragged right edge that is hard to read. Cells that already carry
    attributes are left alone.
    """
    def fix(m: re.Match) -> str:
        tag, content = m.group(1), m.group(2)
        text = html.unescape(re.sub(r"<[^>]+>", "", content)).strip()
        side = "right" if tag == "td" and _NUMERIC.match(text) else "left"
        return f'<{tag} style="text-align:{side};padding:2px 14px 2px 0">{content}</{tag}>'

    return _BARE_CELL.sub(fix, table)


def mark_html(passed: bool, word: str | None = None) -> str:
    """A pass/fail mark in colour *and* words: ``✔ pass`` in green, ``✘ FAIL`` in red (or ``word``)."""
    colour, mark = ("#2e7d32", PASS_MARK) if passed else ("#c62828", FAIL_MARK)
    text = word if word is not None else ("pass" if passed else "FAIL")
    return f'<span style="color:{colour};font-weight:600;white-space:nowrap">{mark} {html_escape(text)}</span>'
