"""The instructor guide's agendas and exercise times are generated from the course's measured times, and fit."""

from __future__ import annotations

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from nvcourse.devtools import agenda, reading_time


def test_the_guides_tables_are_fresh_and_every_slot_holds_what_it_needs(capsys):
    """A chapter that grew, or a slot cut too short, fails here: regenerate with the command, or fix the TOML."""
    assert agenda.main(["--check"]) == 0, capsys.readouterr().err


def test_each_agenda_fills_its_day_and_teaches_what_it_says():
    agendas = agenda.load_agendas()
    assert set(agendas) == {"half-day", "full-day", "practitioner-day"}
    for name, day in agendas.items():
        assert sum(s["minutes"] for s in day["slots"]) == day["length_min"], name
        quizzes = [s for s in day["slots"] if s.get("quiz")]
        assert len(quizzes) == 2, f"{name}: a pre-test and a post-test"
        for slot in day["slots"]:
            if not slot.get("break"):
                assert agenda.slot_need(slot) <= slot["minutes"], (name, slot["module"])


def test_a_slot_needs_one_and_a_half_times_its_reading_plus_its_exercises():
    slot = {"teach": ["02:core"], "exercises": ["02:1,3"], "quiz": True}
    core = reading_time.measure_chapter(agenda._notebook("02")).core_min
    ex = {e.number: e.minutes for e in agenda.exercise_times("02")}
    expected = agenda.TEACH_FACTOR * core + ex[1] + ex[3] + agenda.QUIZ_MIN
    assert agenda.slot_need(slot) == int(-(-expected // 1))  # rounded up


def test_a_part_by_sections_counts_the_introduction_those_sections_and_the_key_points():
    sections = reading_time.section_minutes(agenda._notebook("04"))
    intro = sections[""]
    first = next(m for head, m in sections.items() if head.startswith("## 1."))
    keys = next(m for head, m in sections.items() if head.startswith("## Key points"))
    assert agenda.part_minutes("04:1") == pytest.approx(intro + first + keys)
    assert agenda.part_minutes("04") >= agenda.part_minutes("04:core") > agenda.part_minutes("04:1")


def test_exercise_times_and_the_stamps_in_the_exercise_notebooks_agree():
    nb = new_notebook(cells=[
        new_markdown_cell("# 99 — Exercises"),
        new_markdown_cell("## Exercise 1 — one\n\n" + "word " * 150),
        new_code_cell("def f():\n    # YOUR CODE HERE\n    raise NotImplementedError()"),
        new_markdown_cell("## Exercise 2 — two\n\nExplain. YOUR ANSWER HERE"),
    ])
    times = agenda.times_of_cells(nb.cells, "99")
    assert [(e.number, e.minutes) for e in times] == [(1, 6), (2, 3)]  # 1 + 4 min; 2 words + 2 min, rounded up
    agenda.stamp_times(nb)
    agenda.stamp_times(nb)  # twice: the same notebook
    assert nb.cells[1].source.startswith("## Exercise 1 — one\n\n*About 6 min.*\n\nword")
    assert nb.cells[3].source == "## Exercise 2 — two\n\n*About 3 min.*\n\nExplain. YOUR ANSWER HERE"
    assert [(e.number, e.minutes) for e in agenda.times_of_cells(nb.cells)] == [(1, 6), (2, 3)]
    # every generated exercise notebook carries its stamps
    for path in sorted(agenda.ROOT.joinpath("exercises").glob("[0-9]*_exercises.ipynb")):
        book = nbformat.read(path, as_version=4)
        for e in agenda.times_of_cells(book.cells):
            assert f"*About {e.minutes} min.*" in "\n".join(c.source for c in book.cells), (path.name, e.number)


def test_a_bad_agenda_is_a_one_line_error(monkeypatch, capsys):
    bad = {"x": {"length_min": 10, "slots": [{"minutes": 10, "module": "m", "teach": ["99"]}]}}
    monkeypatch.setattr(agenda, "load_agendas", lambda: bad)
    assert agenda.main(["--check"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "chapter must be one of" in err
