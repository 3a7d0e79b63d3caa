"""Workshop agendas timed from the course's measured reading and exercise times.

    python -m nvcourse.devtools.agenda            # rewrite the agenda and exercise tables of the instructor guide
    python -m nvcourse.devtools.agenda --check    # exit 1 if they are stale or a slot is shorter than it needs

The agendas are written once, in ``nvcourse/data/agendas.toml``: for each slot its length, what to teach (chapters or
their numbered sections) and which exercises run in the room. What a slot *needs* is measured, not guessed:
:data:`TEACH_FACTOR` × the reading minutes of what it teaches (``reading_time``: words at 150 a minute, a minute
per code cell, four per dashboard) plus each exercise's own minutes (:func:`exercise_times`), plus
:data:`QUIZ_MIN` for a quiz. The guide's tables are generated from both, between ``<!-- agenda:NAME -->`` and
``<!-- /agenda:NAME -->`` markers (and ``<!-- exercise-times -->`` for the per-exercise table); ``--check`` also
fails when a slot is shorter than it needs, so an agenda that does not fit cannot be committed.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .. import _data
from .._validate import choice
from . import reading_time as rt

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "instructor-guide.md"
#: Teaching a section takes longer than reading it: the instructor explains, learners run cells and ask. 1.5×
#: is the low end of what the instructor trial measured (1.5–2× reading, plus the exercises done in the room).
TEACH_FACTOR = 1.5
#: The misconceptions quiz: eleven questions at about a minute each, plus handing it out.
QUIZ_MIN = 14
_EXERCISE = re.compile(r"^##\s+Exercise\s+(\d+)\s*[—-]?\s*(.*)$")
#: The line ``make_exercises`` puts under each exercise's heading in ``exercises/``.
TIME_STAMP = re.compile(r"^\*About \d+ min\.\*\n\n?", re.MULTILINE)


@dataclass(frozen=True)
class Exercise:
    chapter: str
    number: int
    title: str
    minutes: int


def _notebook(chapter: str, folder: str = "notebooks") -> Path:
    found = sorted((ROOT / folder).glob(f"{chapter}_*.ipynb"))
    if not found:
        numbers = sorted(p.name.split("_")[0] for p in (ROOT / folder).glob("[0-9]*_*.ipynb"))
        choice("chapter", chapter, numbers, note=f"(the notebooks in {folder}/)")
    return found[0]


def exercise_times(chapter: str) -> list[Exercise]:
    """Each ``## Exercise N`` section of a chapter's exercise notebook with its minutes (its words at the reading
    rate, :data:`reading_time.EXERCISE_CODE_MIN` per code exercise, ``EXERCISE_TEXT_MIN`` per written answer,
    ``CODE_CELL_MIN`` per other code cell), rounded up."""
    cells = json.loads(_notebook(chapter, "exercises").read_text(encoding="utf-8"))["cells"]
    return times_of_cells(cells, chapter)


def times_of_cells(cells: list[dict], chapter: str = "") -> list[Exercise]:
    """:func:`exercise_times` of a notebook's cells (dicts or nbformat nodes); a stamped time line is skipped."""
    out: list[Exercise] = []
    current: tuple[int, str] | None = None
    minutes = 0.0

    def close() -> None:
        if current:
            out.append(Exercise(chapter, current[0], current[1], math.ceil(minutes)))

    for cell in cells:
        src = "".join(cell["source"])
        src = TIME_STAMP.sub("", src)
        head = _EXERCISE.match(src.splitlines()[0]) if cell["cell_type"] == "markdown" and src else None
        if head:
            close()
            current, minutes = (int(head.group(1)), head.group(2).strip()), 0.0
        if current is None:
            continue
        if cell["cell_type"] == "markdown":
            minutes += rt.count_words(src) / rt.WORDS_PER_MINUTE
            minutes += rt.EXERCISE_TEXT_MIN * src.count("YOUR ANSWER HERE")
        elif cell["cell_type"] == "code":
            minutes += rt.EXERCISE_CODE_MIN if "YOUR CODE HERE" in src else rt.CODE_CELL_MIN
    close()
    return out


def part_minutes(spec: str) -> float:
    """Reading minutes of a part: ``"04"`` (the chapter), ``"04:core"`` (its core path) or ``"04:1,2,4"`` (its
    introduction, those numbered ``## `` sections and its key points)."""
    chapter, _, which = spec.partition(":")
    path = _notebook(chapter)
    if not which:
        return float(rt.measure_chapter(path).reading_min)
    if which == "core":
        return float(rt.measure_chapter(path).core_min)
    numbers = {n.strip() for n in which.split(",")}
    sections = rt.section_minutes(path)
    chosen = [m for head, m in sections.items()
              if head == "" or head.startswith("## Key points")
              or (re.match(r"## (\w+)\.", head) and re.match(r"## (\w+)\.", head).group(1) in numbers)]
    return sum(chosen)


def exercise_minutes(spec: str) -> int:
    """Minutes of ``"02:1,3"``: exercises 1 and 3 of chapter 02."""
    chapter, _, which = spec.partition(":")
    wanted = {int(n) for n in which.split(",")} if which else None
    times = [e.minutes for e in exercise_times(chapter) if wanted is None or e.number in wanted]
    if wanted and len(times) != len(wanted):
        raise ValueError(f"exercises must exist in exercises/{chapter}_*; got {spec!r}")
    return sum(times)


def slot_need(slot: dict) -> int:
    """The minutes a slot needs: TEACH_FACTOR × reading of what it teaches + its exercises (+ the quiz)."""
    teach = sum(part_minutes(p) for p in slot.get("teach", []))
    return math.ceil(TEACH_FACTOR * teach + sum(exercise_minutes(e) for e in slot.get("exercises", []))
                     + (QUIZ_MIN if slot.get("quiz") else 0))


def _clock(minutes: int) -> str:
    return f"{minutes // 60}:{minutes % 60:02d}"


def agenda_table(name: str, agenda: dict) -> tuple[str, list[str]]:
    """The Markdown table of one agenda, and the slots that are shorter than they need."""
    start = agenda.get("start_min", 0)
    lines = ["| time | module | what to do | exercises in the room | needs (min) |", "|---|---|---|---|--:|"]
    short = []
    for slot in agenda["slots"]:
        end = start + slot["minutes"]
        need = slot_need(slot) if not slot.get("break") else 0
        if need > slot["minutes"]:
            short.append(f"{name}: {slot['module']} has {slot['minutes']} min and needs {need}")
        exercises = "; ".join(f"{e.split(':')[0]} ex. {e.split(':')[1].replace(',', ', ')} ({exercise_minutes(e)} min)"
                              for e in slot.get("exercises", [])) or "—"
        lines.append(f"| {_clock(start)}–{_clock(end)} | {slot['module']} | {slot.get('what', '')} | "
                     f"{exercises if not slot.get('break') else ''} | {need or ''} |")
        start = end
    return "\n".join(lines), short


def exercises_table() -> str:
    """Every exercise of every chapter with its measured minutes (the guide's §6)."""
    lines = ["| chapter | exercise | minutes |", "|---|---|--:|"]
    for path in sorted((ROOT / "exercises").glob("[0-9]*_exercises.ipynb")):
        for e in exercise_times(path.name.split("_")[0]):
            lines.append(f"| {e.chapter} | {e.number}. {e.title} | {e.minutes} |")
    return "\n".join(lines)


def _replace(text: str, tag: str, body: str) -> str:
    pattern = re.compile(rf"(<!-- {re.escape(tag)} -->\n).*?(<!-- /{re.escape(tag)} -->)", re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"docs/instructor-guide.md has no <!-- {tag} --> ... <!-- /{tag} --> markers")
    return pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)


def load_agendas() -> dict:
    """``nvcourse/data/agendas.toml``: each agenda's title, length and slots."""
    return _data.load("agendas")


def render_guide(text: str) -> tuple[str, list[str]]:
    """The guide with every agenda and the exercise table regenerated, and the problems found."""
    agendas = load_agendas()
    problems: list[str] = []
    for name, agenda in agendas.items():
        table, short = agenda_table(name, agenda)
        problems += short
        total = sum(s["minutes"] for s in agenda["slots"])
        if "length_min" in agenda and total != agenda["length_min"]:
            problems.append(f"{name}: slots add up to {total} min, the day is {agenda['length_min']}")
        text = _replace(text, f"agenda:{name}", table)
    return _replace(text, "exercise-times", exercises_table()), problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nvcourse.devtools.agenda", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the tables are stale or a slot is short")
    args = parser.parse_args(argv)
    old = GUIDE.read_text(encoding="utf-8")
    try:
        new, problems = render_guide(old)
    except (ValueError, KeyError) as exc:
        print(f"agenda: {exc}", file=sys.stderr)
        return 2
    for p in problems:
        print(f"agenda: {p}", file=sys.stderr)
    if args.check:
        if new != old:
            print("agenda: docs/instructor-guide.md is stale; run python -m nvcourse.devtools.agenda", file=sys.stderr)
        return 1 if problems or new != old else 0
    GUIDE.write_text(new, encoding="utf-8")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())


def stamp_times(nb: dict, chapter: str = "") -> None:
    """Write each exercise's measured minutes under its heading (``*About N min.*``), in place; a stamp already
    there is replaced, so generating twice gives the same notebook."""
    times = {e.number: e.minutes for e in times_of_cells(nb["cells"], chapter)}
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        src = TIME_STAMP.sub("", "".join(cell["source"]))
        lines = src.split("\n", 1)
        head = _EXERCISE.match(lines[0])
        if head and int(head.group(1)) in times:
            rest = lines[1].lstrip("\n") if len(lines) > 1 else ""
            src = f"{lines[0]}\n\n*About {times[int(head.group(1))]} min.*\n\n{rest}".rstrip("\n")
        cell["source"] = src
