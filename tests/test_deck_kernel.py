"""Building a deck survives a kernel that dies (a busy room's machine, a kernel killed from outside): the chapter
runs once more in a fresh kernel. A cell's own error, or a kernel that dies every time, still fails the build
with one line."""

from __future__ import annotations

from pathlib import Path

import nbclient
import nbformat
import pytest
from nbclient.exceptions import CellExecutionError, DeadKernelError

from nvcourse.devtools import slides


@pytest.fixture
def chapter(tmp_path: Path) -> Path:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    path = tmp_path / "01_tiny.ipynb"
    nbformat.write(nb, path)
    return path


def _client_failing(monkeypatch: pytest.MonkeyPatch, failures: list[Exception]) -> list[int]:
    """Replace nbclient's client by one that raises ``failures`` in turn, then succeeds; returns the run count."""
    runs: list[int] = []

    class Client:
        def __init__(self, nb, **kwargs):
            self.nb = nb

        def execute(self):
            runs.append(1)
            if len(runs) <= len(failures):
                raise failures[len(runs) - 1]
            self.nb.cells[0].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"},
                                                               execution_count=1)]
            return self.nb

    monkeypatch.setattr(nbclient, "NotebookClient", Client)
    return runs


def test_a_kernel_that_dies_once_is_replaced_and_the_deck_is_built(chapter, monkeypatch):
    runs = _client_failing(monkeypatch, [DeadKernelError("Kernel died")])
    nb = slides.executed_in_deck_style(chapter)
    assert len(runs) == 2
    assert nb.cells[0].outputs[0]["data"]["text/plain"] == "2"  # the second run's outputs, not the first's


def test_a_kernel_that_dies_every_time_fails_with_one_line(chapter, monkeypatch):
    runs = _client_failing(monkeypatch, [DeadKernelError("Kernel died")] * slides.KERNEL_TRIES)
    with pytest.raises(slides.DeckError, match=r"^01_tiny.ipynb failed to execute for its deck: Kernel died$"):
        slides.executed_in_deck_style(chapter)
    assert len(runs) == slides.KERNEL_TRIES


def test_a_cells_error_is_not_retried(chapter, monkeypatch):
    runs = _client_failing(monkeypatch, [CellExecutionError("trace", "ZeroDivisionError", "division by zero")])
    with pytest.raises(slides.DeckError, match="01_tiny.ipynb failed to execute"):
        slides.executed_in_deck_style(chapter)
    assert len(runs) == 1


def test_the_one_line_names_what_stopped_the_chapter(chapter, monkeypatch):
    # nbclient's messages end with a ruler or a coloured traceback line: the instructor gets the reason instead
    from nbclient.exceptions import CellTimeoutError

    cell = nbformat.v4.new_code_cell("with ProcessGroup(4) as pg:\n    pg.run('allreduce', 64)")
    timeout = CellTimeoutError.error_from_timeout_and_cell("Cell execution timed out", 600, cell)
    _client_failing(monkeypatch, [timeout])
    with pytest.raises(slides.DeckError) as err:
        slides.executed_in_deck_style(chapter)
    assert str(err.value) == ("01_tiny.ipynb failed to execute for its deck: a cell ran past its 600 s limit "
                              "(with ProcessGroup(4) as pg:)")
    coloured = CellExecutionError("\x1b[0;31m----------\x1b[0m\n\x1b[0;31mValueError\x1b[0m: bad size", "ValueError",
                                  "bad size 'x'")
    _client_failing(monkeypatch, [coloured])
    with pytest.raises(slides.DeckError, match=r"for its deck: ValueError: bad size 'x'$"):
        slides.executed_in_deck_style(chapter)
