"""Chapter 00 and the README give the path the reading-time tool measures: every chapter, its place on the core
path, and its reading, core and exercise minutes (fresh within a few minutes); the core path stays within 4 h."""

import json
import re
from pathlib import Path

import pytest

from nvcourse.devtools import reading_time as rt

ROOT = Path(__file__).resolve().parents[1]


def _table(text: str) -> dict[str, tuple[str, int, int, int]]:
    """chapter -> (path, reading, core, exercises) from the course table (minutes; "—" reads as 0)."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and re.fullmatch(r"\d\d\w?", cells[0]):
            rows[cells[0]] = (cells[3], *(0 if c == "—" else int(c) for c in cells[4:]))
    return rows


def _start_here() -> str:
    cells = json.loads((ROOT / "notebooks" / "00_start_here.ipynb").read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


@pytest.fixture(scope="module")
def measured() -> dict[str, rt.Chapter]:
    return {r.chapter: r for r in rt.measure()}


def _fresh(stated: int, actual: int, slack: float = 0.15, floor: int = 3) -> bool:
    return abs(stated - actual) <= max(floor, slack * actual)


@pytest.mark.parametrize("where", ["00", "README"])
def test_the_course_table_is_fresh(where, measured):
    text = _start_here() if where == "00" else (ROOT / "README.md").read_text(encoding="utf-8")
    table = _table(text)
    assert set(table) == set(measured), f"{where}: rows {sorted(table)} vs chapters {sorted(measured)}"
    for ch, (path, reading, core, exercises) in table.items():
        r = measured[ch]
        assert path == rt.path_label(r), f"{where} {ch}: path {path!r}, the tool says {rt.path_label(r)!r}"
        for name, stated, actual in (("reading", reading, r.reading_min), ("core", core, r.core_min),
                                     ("exercises", exercises, r.exercise_min)):
            assert _fresh(stated, actual), f"{where} {ch}: {name} {stated} min, measured {actual} min (re-run the tool)"


def test_00_and_readme_say_the_same(measured):
    assert _table(_start_here()) == _table((ROOT / "README.md").read_text(encoding="utf-8"))


def _minutes(text: str) -> int:
    h, m = re.fullmatch(r"(?:(\d+) h )?(\d+) min", text).groups()
    return int(h or 0) * 60 + int(m)


def test_00_states_the_core_path_and_the_allowances_the_tool_uses(measured):
    text = re.sub(r"\s+", " ", _start_here())
    t = rt.totals(list(measured.values()))
    core = _minutes(re.search(r"\*\*((?:\d+ h )?\d+ min) of reading\*\* \(the \*core\* column\)", text).group(1))
    total = _minutes(re.search(r"All chapters: ((?:\d+ h )?\d+ min) of reading", text).group(1))
    assert _fresh(core, t["core_min"], 0.05, 5) and _fresh(total, t["reading_min"], 0.05, 10)
    a = t["allowances"]
    assert (f"at {a['words_per_minute']} words per minute (technical text, formulas included) and adds "
            f"{a['code_cell_min']:g} minute per code cell and {a['dashboard_cell_min']:g} per dashboard") in text
    assert "devtools" not in text  # the tool is the maintainers' (README names it); 00 says what it counts


def test_the_core_path_is_at_most_four_hours(measured):
    core = sum(r.core_min for r in measured.values())
    assert core <= 240, f"the core path is {rt.hours(core)} of reading: move a section to reference (reading_time.PATH)"


def test_every_chapter_says_what_it_needs():
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        first = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
        if path.name.startswith(("00_", "01_", "02_", "03_", "04_", "04b_")):
            assert re.search(r"\*\*You need:?\*\*", first), f"{path.name}: no 'You need' in its first cell"
            assert "../docs/glossary.md" in first, f"{path.name}: its first cell does not link the glossary"


def test_readme_states_the_path_and_allowances_the_tool_uses(measured):
    text = re.sub(r"\s+", " ", (ROOT / "README.md").read_text(encoding="utf-8"))
    t = rt.totals(list(measured.values()))
    a = t["allowances"]
    core = _minutes(re.search(r"what the capstone needs: ((?:\d+ h )?\d+ min) of reading", text).group(1))
    assert _fresh(core, t["core_min"], 0.05, 5)
    assert (f"`python -m nvcourse.devtools.reading_time` ({a['words_per_minute']} words per minute, "
            f"{a['code_cell_min']:g} min per code cell, {a['dashboard_cell_min']:g} per dashboard; "
            f"{a['exercise_code_min']:g} per code exercise)") in text
