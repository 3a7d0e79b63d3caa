"""The misconceptions quiz: one checked question per row of the instructor guide's misconceptions table."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from nvcourse import catalog
from nvcourse import checks as check
from nvcourse.checks import quiz
from nvcourse.devtools import quiz_text

ROOT = Path(__file__).resolve().parents[1]


def _guide_misconceptions() -> list[str]:
    text = (ROOT / "docs" / "instructor-guide.md").read_text(encoding="utf-8")
    table = text.split("## 3. Common misconceptions", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| \*\*(.+?)\*\*", table, flags=re.MULTILINE)


def test_one_question_per_misconception_of_the_guide():
    rows = _guide_misconceptions()
    assert len(rows) >= 10
    assert len(quiz.MISCONCEPTIONS) == len(rows)
    for qid in quiz.MISCONCEPTIONS:
        assert qid in check.questions()


@pytest.mark.parametrize("qid", list(quiz.MISCONCEPTIONS))
def test_the_tell_tale_wrong_answer_names_its_misconception(qid: str):
    q = check.questions()[qid]
    if q.choices:
        wrong = next(letter for letter in q.choices if letter != q.expected())
        result = check.answer(qid, wrong)
    else:
        hint, value = next((h, v) for h, v in q.variants().items() if h.startswith("Misconception"))
        result = check.answer(qid, value)
    assert not result.passed
    assert "Misconception" in result.hint


@pytest.mark.parametrize("qid", list(quiz.MISCONCEPTIONS))
def test_the_expected_answer_passes(qid: str):
    assert check.answer(qid, check.expected_answer(qid)).passed


def test_score_counts_and_names_what_is_left():
    answers = {qid: check.expected_answer(qid) for qid in quiz.MISCONCEPTIONS}
    assert quiz.score(answers).passed
    answers["quiz.gbps"] = 400  # the bits-vs-bytes slip
    del answers["quiz.mib"]  # not answered
    result = quiz.score(answers)
    assert not result.passed
    assert result.summary == f"{len(quiz.MISCONCEPTIONS) - 2} of {len(quiz.MISCONCEPTIONS)} right (1 not answered yet)."
    assert "still to unlearn: 400G means 400 GB/s (GB/s vs Gb/s)" in result.wrong
    assert "not answered yet: 64 MiB = 64 MB" in result.wrong


def test_score_of_an_unanswered_quiz_does_not_say_you_hold_every_misconception():
    """Run All on the quiz before answering (the exercise walkthrough): the score said "Not quite — 0 of 11 right"
    and listed all eleven misconceptions as "still to unlearn", though none had been answered."""

    def stub():
        raise NotImplementedError()

    result = quiz.score({qid: stub for qid in quiz.MISCONCEPTIONS})
    assert result.status == "todo" and not result.passed
    assert not [w for w in result.wrong if "still to unlearn" in w]
    assert len([w for w in result.wrong if w.startswith("not answered yet: ")]) == len(quiz.MISCONCEPTIONS)
    assert "instructor guide" not in result.hint


def test_score_rejects_unknown_ids():
    result = quiz.score({"quiz.nope": 1})
    assert result.status == "error" and "quiz.nope" in result.summary


def test_hardware_figures_in_the_questions_come_from_the_catalog():
    ndr, h100 = catalog.get_link("ib-ndr"), catalog.get_gpu("h100")
    qs = check.questions()
    assert f"**{ndr.line_Gbps_dir:g}G**" in qs["quiz.gbps"].prompt
    assert f"**{h100.nvlink_GBps_bidir:g} GB/s**" in qs["quiz.nvlink_direction"].prompt
    assert f"{h100.bf16_sparse_TFLOPS:,.0f} TFLOPS" in qs["quiz.dense_tflops"].prompt
    assert f"{catalog.get_link('pcie4').line_GBps_dir:g} GB/s" in qs["quiz.achievable"].prompt
    assert f"their {h100.nvlink_links} NVLink" in qs["quiz.faster_link"].prompt
    # the headline the misconception quotes is the datasheet's sparse figure, not 2 x the rounded dense one
    assert h100.bf16_sparse_TFLOPS in qs["quiz.dense_tflops"].variants().values()


@pytest.mark.parametrize("module", ["quiz.py", "ch02.py"])
def test_question_modules_type_no_hardware_figure(module: str):
    # the figures these questions quote (NDR 400 Gb/s, NVLink 900 GB/s bidir and 18 links, 1,979 sparse TFLOPS,
    # 31.5 GB/s) may only reach them through the catalog
    source = (ROOT / "nvcourse" / "checks" / module).read_text(encoding="utf-8")
    typed = re.findall(r"(?<![\w.])(400|900|1,?979|1,?978|989|18|31\.5|450)(?![\w.])", source)
    assert typed == []


def test_notebook_question_cells_are_rendered_from_the_questions(tmp_path):
    assert quiz_text.refresh(check=True) == []
    nb = nbformat.read(quiz_text.QUIZ, as_version=4)
    cells = quiz_text.question_cells(nb)
    assert sorted(cells.values()) == sorted(quiz.MISCONCEPTIONS)
    # a figure typed into a question cell is stale, and refreshing puts the catalog's back
    first = min(cells)
    nb.cells[first].source = nb.cells[first].source.replace("400G", "800G")
    copy = tmp_path / "quiz.ipynb"
    nbformat.write(nb, copy)
    assert quiz_text.refresh(copy, check=True) == [f"STALE quiz text (run `python3 tasks.py exercises`): "
                                                  f"quiz.ipynb {cells[first]}"]
    assert quiz_text.refresh(copy) == [] and quiz_text.refresh(copy, check=True) == []
    assert nbformat.read(copy, as_version=4).cells[first].source == quiz.question_markdown("quiz.gbps")
