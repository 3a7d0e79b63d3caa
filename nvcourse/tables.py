"""The one HTML table of the course: dashboards' readouts, chapter tables and the capstone report use it.

No UI library: models may render a table (``capstone.Report.html``) without importing ipywidgets.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

__all__ = ["table_html"]


def table_html(headers: Sequence[str], rows: Iterable[Sequence[object]], *, caption: str = "") -> str:
    """A course-styled HTML table (``class="nvcourse-table"``).

    ``headers`` and ``caption`` are plain text (escaped); cells are trusted HTML (escape what you did not write),
    except floats, which are written with 4 significant digits.

    >>> t = table_html(["a", "b"], [["<b>1</b>", 2.0]])
    >>> t[t.index("<tbody>"):]
    '<tbody><tr><td><b>1</b></td><td>2</td></tr></tbody></table>'
    """
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in r) + "</tr>" for r in rows)
    cap = f"<caption style='caption-side:bottom;text-align:left'>{html.escape(caption)}</caption>" if caption else ""
    return f'<table class="nvcourse-table">{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _cell(value: object) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
