"""exercises/ is generated from solutions/ and in sync; exercise notebooks have work to do and checks to run."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from nvcourse.devtools.make_exercises import ROOT, render, sync

SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
MINE = sorted(SOLUTIONS.glob("*_exercises.ipynb"))
CHECK_CALL = re.compile(r"\bcheck\.\w+\(")


def test_exercises_are_in_sync_with_solutions():
    problems = sync(SOLUTIONS, EXERCISES, check=True)
    assert problems == [], "\n".join(problems) + "\nrun: python3 tasks.py exercises"


def test_there_are_exercise_notebooks():
    assert len(MINE) >= 2


@pytest.mark.parametrize("path", MINE, ids=lambda p: p.name)
def test_solution_notebook_has_checks_and_markers(path: Path):
    nb = nbformat.read(path, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert len(CHECK_CALL.findall(code)) >= 2, "every solution notebook needs at least two check calls"
    assert "### BEGIN SOLUTION" in code
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")
    # executed and committed with outputs: every check cell shows its feedback
    for cell in nb.cells:
        if cell.cell_type == "code" and CHECK_CALL.search(cell.source.splitlines()[-1] if cell.source else ""):
            assert cell.outputs, f"{path.name}: check cell not executed: {cell.source[:60]!r}"
            assert "Traceback" not in str(cell.outputs)


@pytest.mark.parametrize("path", MINE, ids=lambda p: p.name)
def test_solutions_pass_their_own_checks(path: Path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code" or "nbval-ignore-output" in cell.metadata.get("tags", []):
            continue
        for out in cell.outputs:
            plain = out.get("data", {}).get("text/plain", "") if out.get("output_type") != "stream" else ""
            if "Not quite" in plain or "Not done yet" in plain or "Cannot check" in plain:
                pytest.fail(f"{path.name}: a check fails in the solution: {plain[:200]}")


@pytest.mark.parametrize("path", MINE, ids=lambda p: p.name)
def test_exercise_notebook_has_work_and_no_solutions(path: Path):
    ex = EXERCISES / path.name
    nb = nbformat.read(ex, as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert "# YOUR CODE HERE" in text or "YOUR ANSWER HERE" in text
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    # every stub sits in a cell that ends with a check call, so the learner gets feedback, not a traceback
    for cell in nb.cells:
        if cell.cell_type == "code" and "raise NotImplementedError()" in cell.source:
            last = cell.source.strip().splitlines()[-1]
            assert CHECK_CALL.search(last), f"{ex.name}: a stub cell does not end with a check: {cell.source[:80]!r}"


def test_stub_never_at_top_level():
    """A top-level ``raise NotImplementedError()`` would stop the cell before its check runs."""
    for path in MINE:
        for cell in nbformat.reads(render(path), as_version=4).cells:
            if cell.cell_type == "code":
                for line in cell.source.splitlines():
                    assert line.strip() != "raise NotImplementedError()" or line.startswith((" ", "\t")), \
                        f"{path.name}: top-level stub in {cell.source[:80]!r}"


def test_chapter_links_to_exercises_resolve():
    """Chapters link to ../exercises/<chapter>_exercises.ipynb: the names must match the solutions' names."""
    link = re.compile(r"\.\./exercises/([\w.-]+\.ipynb)")
    have = {p.name for p in MINE}
    numbers = {name[:2] for name in have}
    for chapter in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for target in link.findall(chapter.read_text(encoding="utf-8")):
            if target[:2] in numbers:
                assert target in have, f"{chapter.name} links to exercises/{target}, which does not exist"


@pytest.mark.slow
@pytest.mark.parametrize("path", MINE, ids=lambda p: p.name)
def test_exercise_notebook_runs_without_a_traceback(path: Path, tmp_path: Path):
    """Run the learner's version top to bottom: every stub must give 'not done yet' feedback, no error."""
    from nvcourse.devtools.kernel_run import notebook_client  # nbclient's, without its lost wake-up

    nb = nbformat.read(EXERCISES / path.name, as_version=4)
    notebook_client(nb, timeout=120, kernel_name="python3", allow_errors=False,
                    resources={"metadata": {"path": str(EXERCISES)}}).execute()
    text = "\n".join(str(o) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "Traceback" not in text
    assert "Not done yet" in text
