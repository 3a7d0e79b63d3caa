"""Numeric and multiple-choice questions, checked with ``check.answer("02.ndr", value)``.

Each question is registered once by its chapter module with a function that *computes* the expected
answer from the package's models or the catalog (never a typed-in number), the known wrong-but-plausible
answers with their hints, and a short explanation shown once the answer is right.

The learner passes a value or, in the exercise notebooks, a function returning it (so the stub
``raise NotImplementedError()`` can sit inside a function and the check still reports "not done yet").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..i18n import translate as _
from ._core import (
    ERROR,
    FAIL,
    PASS,
    CheckError,
    Result,
    close,
    diagnose,
    fmt,
    learner_value,
    safe_checker,
    to_number,
)

__all__ = ["Question", "register", "questions", "answer", "expected_answer"]


@dataclass(frozen=True)
class Question:
    """A numeric question (``choices`` empty) or a multiple-choice one (``choices``: letter → text).

    ``expected`` computes the answer (a number, or the right letter); ``variants`` computes
    {hint: wrong value} for numeric questions or {letter: why it is wrong} for choices. ``misconception`` gives
    the hint (one of those texts, in the current language) that names the misconception the question tests, so
    the quiz can class an answer without reading the hint's words.
    """

    qid: str
    prompt: str
    expected: Callable[[], Any]
    unit: str = ""
    rtol: float = 0.01
    variants: Callable[[], dict[str, float]] = field(default=lambda: {})
    choices: dict[str, str] = field(default_factory=dict)
    wrong_choice: dict[str, str] = field(default_factory=dict)
    explain: str | Callable[[], str] = ""
    hint: str = ""
    misconception: Callable[[], str] = field(default=lambda: "")

    def explanation(self) -> list[str]:
        text = self.explain() if callable(self.explain) else self.explain
        return [text] if text else []


_QUESTIONS: dict[str, Question] = {}


def register(q: Question) -> Question:
    if q.qid in _QUESTIONS:
        raise ValueError(f"question {q.qid!r} registered twice")
    _QUESTIONS[q.qid] = q
    return q


def questions() -> dict[str, Question]:
    """Every registered question, by id."""
    return dict(_QUESTIONS)


#: Questions whose answers are instructor material (the misconceptions quiz): :func:`expected_answer` gives them
#: only where the worked solutions can be read, and :func:`answer` gives no verdict on a pre-test one.
WITHHELD: set[str] = set()
#: Pre-test questions: recorded without a verdict (``quiz.record``), so the pre-test teaches nothing.
NO_FEEDBACK: set[str] = set()
SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"


class AnswerWithheld(ValueError):
    """A withheld question's answer asked for where the solutions cannot be read (a learner copy or session)."""


def instructor_copy() -> bool:
    """Whether this is the instructor's checkout: its ``solutions/`` can be read. A learner copy (``tasks.py
    release``) has none, and on the classroom hub the learners' accounts cannot open it."""
    try:
        return any(SOLUTIONS.glob("*_exercises.ipynb"))
    except OSError:
        return False


def expected_answer(qid: str) -> Any:
    """The expected answer of a question (computed by the models): for tests and instructors. A quiz question's
    only in the instructor's checkout (:class:`AnswerWithheld` elsewhere)."""
    if qid in WITHHELD and not instructor_copy():
        raise AnswerWithheld(f"the answer to {qid} is for instructors: not in a learner copy (no readable "
                             f"{SOLUTIONS.name}/ here)")
    return _QUESTIONS[qid].expected()


def _normalise_choice(value: Any) -> str:
    if not isinstance(value, str):
        raise CheckError(_("your answer is {value} ({type}); this question wants a letter.").format(
            value=fmt(value), type=type(value).__name__),
            _('Answer with the letter of your choice as a string, e.g. `"b"`.'))
    text = value.strip().strip("()[].").strip().lower()
    return text


@safe_checker
def answer(qid: str, value: Any) -> Result:
    """Check the answer to question ``qid`` (``value`` may be a function that returns it). A pre-test question
    gets no verdict here: its cell records it (``quiz.record``)."""
    if qid in NO_FEEDBACK:
        return Result(_("answer {qid}").format(qid=qid), ERROR,
                      _("{qid} is a pre-test question: it is recorded, not checked.").format(qid=qid),
                      hint=_("Run its cell as written (check.record); the answers come with the post-test."))
    return verdict(qid, value)


@safe_checker
def verdict(qid: str, value: Any) -> Result:
    """The verdict on ``value`` for ``qid``, any question (the quiz records a pre-test answer's class with it)."""
    if not isinstance(qid, str) or qid not in _QUESTIONS:
        known = ", ".join(sorted(_QUESTIONS))
        raise CheckError(_("there is no question {qid}.").format(qid=repr(qid)),
                         _("Use the id written in the exercise; known ids: {known}.").format(known=known), status=ERROR)
    q = _QUESTIONS[qid]
    name = _("answer {qid}").format(qid=qid)
    value = learner_value(value, name)
    if isinstance(value, Result):
        return value
    expected = q.expected()
    if q.choices:
        try:
            letter = _normalise_choice(value)
        except CheckError as err:
            return Result(name, ERROR, err.message, hint=err.hint)
        if letter not in q.choices:
            return Result(name, ERROR, _("{value} is not one of the choices.").format(value=fmt(value)),
                          hint=_("Answer with one of: {choices}.").format(
                              choices=", ".join(repr(c) for c in q.choices)))
        if letter == expected:
            return Result(name, PASS, f"({letter}) {q.choices[letter]}", notes=q.explanation())
        why = q.wrong_choice.get(letter, "")
        return Result(name, FAIL, _("({letter}) is not the best answer.").format(letter=letter),
                      wrong=[f"({letter}) {q.choices[letter]}"],
                      hint=why or q.hint)
    try:
        got = to_number(value)
    except CheckError as err:
        return Result(name, ERROR, err.message, hint=err.hint)
    unit = f" {q.unit}" if q.unit else ""
    if close(got, expected, q.rtol):
        return Result(name, PASS, _("{got} (model: {expected}).").format(got=f"{fmt(got)}{unit}",
                                                                         expected=f"{fmt(expected)}{unit}"),
                      notes=q.explanation())
    hint = diagnose(got, expected, q.variants(), what=q.unit) or q.hint
    said = _("{got} is too large.") if got > expected else _("{got} is too small.")
    return Result(name, FAIL, said.format(got=f"{fmt(got)}{unit}"),
                  wrong=[_("your answer: {got}").format(got=f"{fmt(got)}{unit}")],
                  hint=hint)
