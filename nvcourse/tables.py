"""The one HTML table of the course: dashboards' readouts, chapter tables and the capstone report use it.

No UI library: models may render a table (``capstone.Report.html``) without importing ipywidgets.

Two things every table does, because learners saw them go wrong (see :mod:`nvcourse.markup`):

* **Alignment.** JupyterLab right-aligns every cell, which turns a column of sentences into a ragged right
  edge; each cell says how it is aligned: text left, figures (a cell starting with a digit, sign or currency)
  right.
* **No TeX.** The table carries the classes MathJax 2 and 3 skip, and escaped text has ``$`` as ``&#36;``, so
  two prices in one table do not become maths.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

from .markup import NO_MATH_CLASSES, html_escape

__all__ = ["table_html"]

#: A cell that starts like a figure ("1.2 GB", "−3 %", "$2.76 M", "≈ 40"): right-aligned.
_NUMERIC = re.compile(r"^[-+−~≈≤≥$€]?\s?\d")
#: Right padding so that adjacent left-aligned columns do not run together.
_PAD = "padding:2px 14px 2px 0"


def table_html(headers: Sequence[object], rows: Iterable[Sequence[object]], *, caption: str = "",
               escape: bool = False, html_cols: Iterable[int] = (), align_numbers: bool = True) -> str:
    """A course-styled HTML table (``class="nvcourse-table"``) that MathJax leaves alone.

    ``headers`` and ``caption`` are plain text (escaped). Cells are trusted HTML (escape what you did not
    write), unless ``escape``: then every cell is escaped as text except the columns in ``html_cols``.
    Floats are written with 4 significant digits. Text cells are left-aligned; with ``align_numbers`` a cell
    that starts with a digit, sign or currency is right-aligned so that columns of figures line up.

    >>> t = table_html(["a", "b"], [["<b>x</b>", 2.0]])
    >>> t[t.index("<tbody>"):].replace(_PAD, "..")
    '<tbody><tr><td style="text-align:left;.."><b>x</b></td><td style="text-align:right;..">2</td></tr></tbody></table>'
    """
    keep = set(html_cols)

    def td(i: int, value: object) -> str:
        text = _cell(value)
        if escape and i not in keep:
            text = html_escape(text)
        shown = html.unescape(re.sub(r"<[^>]+>", "", text)).strip()  # what the reader sees decides the side
        side = "right" if align_numbers and _NUMERIC.match(shown) else "left"
        return f'<td style="text-align:{side};{_PAD}">{text}</td>'

    head = "".join(f'<th style="text-align:left;{_PAD}">{html_escape(h)}</th>' for h in headers)
    body = "".join("<tr>" + "".join(td(i, c) for i, c in enumerate(r)) + "</tr>" for r in rows)
    cap = f"<caption style='caption-side:bottom;text-align:left'>{html_escape(caption)}</caption>" if caption else ""
    return (f'<table class="nvcourse-table {NO_MATH_CLASSES}">{cap}<thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")



def _cell(value: object) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
