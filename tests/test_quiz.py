"""The misconceptions quiz: one checked question per row of the instructor guide's misconceptions table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nvcourse import checks as check
from nvcourse.checks import quiz

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
