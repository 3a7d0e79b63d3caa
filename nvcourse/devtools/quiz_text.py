"""Render the misconceptions quiz's question cells from the registered questions (figures from the catalog).

A Markdown cell cannot compute, and the printed quiz (``tasks.py handouts``) shows Markdown only, so the
question text is written once in :mod:`nvcourse.checks.quiz` and copied here into the notebook's question
cells: the Markdown cell just before each ``check.record("quiz.…", …)`` / ``check.answer("quiz.post.…", …)``
cell. Only those cells' sources change; outputs and every other cell stay as they are. ``make_exercises`` runs
this first, so

    python3 tasks.py exercises           # refreshes the quiz text, then regenerates exercises/
    python3 tasks.py exercises --check   # exit 1 if a catalog change left the quiz text stale
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from ..checks.quiz import question_markdown

ROOT = Path(__file__).resolve().parents[2]
QUIZZES = (ROOT / "solutions" / "quiz_misconceptions_exercises.ipynb",
           ROOT / "solutions" / "quiz_misconceptions_post_exercises.ipynb")
#: the check call under a question: ``check.record("quiz.NAME", …)`` (pre-test) or ``check.answer("quiz.post.NAME",
#: …)`` (post-test), the notebooks importing the quiz as ``check``
ANSWER_CALL = re.compile(r"""check\.(?:record|answer)\(\s*["'](quiz\.[\w.]+)["']""")


def question_cells(nb: nbformat.NotebookNode) -> dict[int, str]:
    """{index of a question's Markdown cell: its qid}: the Markdown cell before each ``check.answer`` cell."""
    out = {}
    for i, cell in enumerate(nb.cells):
        m = ANSWER_CALL.search(cell.source) if cell.cell_type == "code" else None
        if m and i > 0 and nb.cells[i - 1].cell_type == "markdown":
            out[i - 1] = m.group(1)
    return out


def refresh(path: Path | None = None, *, check: bool = False) -> list[str]:
    """Rewrite (or with ``check``, compare) the question cells of ``path`` (default: both forms of the quiz);
    return the problems found."""
    if path is None:
        return [problem for quiz in QUIZZES for problem in refresh(quiz, check=check)]
    nb = nbformat.read(path, as_version=4)
    cells = question_cells(nb)
    stale = [qid for i, qid in cells.items() if nb.cells[i].source != question_markdown(qid)]
    if not cells:
        return [f"no quiz question cells found in {path.name}"]
    if check:
        return [f"STALE quiz text (run `python3 tasks.py exercises`): {path.name} {qid}" for qid in stale]
    if stale:
        for i, qid in cells.items():
            nb.cells[i].source = question_markdown(qid)
        nbformat.write(nb, path)
    return []
