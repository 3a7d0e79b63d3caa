"""Generate ``exercises/`` from ``solutions/``: solutions are the single source.

Markers (nbgrader-compatible, so nbgrader can be adopted later):

* in code cells, lines between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` become
  ``# YOUR CODE HERE`` + ``raise NotImplementedError()`` (indentation kept);
* in markdown cells, text between ``<!-- BEGIN SOLUTION -->`` and ``<!-- END SOLUTION -->`` becomes
  ``YOUR ANSWER HERE``;
* only ``solutions/*_exercises.ipynb`` get a twin (a worked design such as the capstone reference stays a solution);
* cells tagged ``solution-only`` are dropped; outputs, execution counts and widget state are cleared;
* each exercise's heading is followed by its measured time, ``*About N min.*`` (:func:`.agenda.stamp_times`);
* first, the misconceptions quiz's question cells are refreshed from ``nvcourse.checks.quiz`` (:mod:`.quiz_text`).

    python3 tasks.py exercises           # regenerate
    python3 tasks.py exercises --check   # exit 1 if any exercise is stale or orphaned (used by the tests)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

from . import agenda, generated, quiz_text

ROOT = Path(__file__).resolve().parents[2]
CODE_RE = re.compile(
    r"^([ \t]*)### BEGIN SOLUTION[^\n]*\n.*?^[ \t]*### END SOLUTION[^\n]*(\n|$)", re.MULTILINE | re.DOTALL
)
MD_RE = re.compile(r"<!-- BEGIN SOLUTION -->.*?<!-- END SOLUTION -->", re.DOTALL)


def strip_solution(nb: nbformat.NotebookNode, name: str = "") -> nbformat.NotebookNode:
    cells = []
    for cell in nb.cells:
        if "solution-only" in cell.metadata.get("tags", []):
            continue
        cell.metadata.pop("execution", None)  # timestamps of the solution's last run
        if cell.cell_type == "code":
            src = CODE_RE.sub(
                lambda m: f"{m.group(1)}# YOUR CODE HERE\n{m.group(1)}raise NotImplementedError()\n", cell.source
            )
            if "### BEGIN SOLUTION" in src or "### END SOLUTION" in src:
                raise ValueError(f"{name}: unbalanced solution markers in cell starting {cell.source[:60]!r}")
            cell.source = src.rstrip("\n")
            cell.outputs, cell.execution_count = [], None
        elif cell.cell_type == "markdown":
            cell.source = MD_RE.sub("YOUR ANSWER HERE", cell.source)
        cells.append(cell)
    nb.cells = cells
    nb.metadata.pop("widgets", None)
    return nb


def render(path: Path) -> str:
    nb = strip_solution(nbformat.read(path, as_version=4), path.name)
    agenda.stamp_times(nb, path.name.split("_")[0])  # "*About N min.*" under each exercise's heading
    return nbformat.writes(nb) + "\n"


def sync(src_dir: Path, dst_dir: Path, check: bool) -> list[str]:
    """Write (or with ``check``, compare) every exercise; return the problems found."""
    problems: list[str] = []
    expected: set[Path] = set()
    # Only *_exercises notebooks have an exercise twin; worked designs (the capstone reference) do not.
    for src in sorted(src_dir.glob("*_exercises.ipynb")):
        dst = dst_dir / src.name
        expected.add(dst)
        if generated.refresh(dst, render(src), check) and check:
            problems.append(f"STALE exercise (run `python3 tasks.py exercises`): {dst.relative_to(ROOT)}")
    for orphan in sorted(set(dst_dir.glob("*.ipynb")) - expected):
        problems.append(f"ORPHAN exercise without a solution: {orphan.relative_to(ROOT)}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only check; exit 1 if exercises/ is out of date")
    args = parser.parse_args(argv)
    # the quiz's question cells are rendered from nvcourse.checks.quiz (catalog figures) before the exercises
    problems = quiz_text.refresh(check=args.check)
    problems += sync(ROOT / "solutions", ROOT / "exercises", args.check)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
