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

HTML tables are built by :func:`nvcourse.tables.table_html` (escaping with :func:`html_escape`, fenced with
:data:`NO_MATH_CLASSES`). This module has no plotting or widget imports: models and checkers can use it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

from .i18n import translate as _

__all__ = [
    "PASS_MARK", "FAIL_MARK", "WARN_MARK", "NO_MATH", "NO_MATH_CLASSES", "md_escape", "md_cell", "md_table",
    "md_no_math", "html_escape", "mark_html", "details_html",
]

PASS_MARK = "\u2714"  # ✔ HEAVY CHECK MARK (DejaVu Sans has it; ✅ is an emoji and needs an emoji font)
FAIL_MARK = "\u2718"  # ✘ HEAVY BALLOT X (not ❌)
WARN_MARK = "\u26a0"  # ⚠ without the emoji variation selector U+FE0F
#: Classes that keep MathJax 2 (nbviewer, classic notebook) and 3 (JupyterLab) off an element's text.
NO_MATH_CLASSES = "tex2jax_ignore mathjax_ignore"
#: The same as an attribute.
NO_MATH = f'class="{NO_MATH_CLASSES}"'

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


def details_html(summary: str, body: str, *, body_style: str = "") -> str:
    """``body`` (HTML) behind a collapsed toggle whose line is ``summary`` (plain text, escaped): the full detail a
    readout keeps without showing it first; ``body_style`` wraps the body in a styled ``<div>``."""
    inner = f"<div style='{body_style}'>{body}</div>" if body_style else body
    return f"<details><summary>{html_escape(summary)}</summary>{inner}</details>"


def mark_html(passed: bool, word: str | None = None) -> str:
    """A pass/fail mark in colour *and* words: ``✔ pass`` in green, ``✘ FAIL`` in red (or ``word``)."""
    colour, mark = ("#2e7d32", PASS_MARK) if passed else ("#c62828", FAIL_MARK)
    text = word if word is not None else (_("pass") if passed else _("FAIL"))
    return f'<span style="color:{colour};font-weight:600;white-space:nowrap">{mark} {html_escape(text)}</span>'
