"""How long each chapter and exercise notebook takes: the course's measured reading and exercise times.

    python -m nvcourse.devtools.reading_time            # a table, one row per chapter
    python -m nvcourse.devtools.reading_time --json     # the same rows as JSON (fields below)
    python -m nvcourse.devtools.reading_time --markdown # the table chapter 00 and the README show

What is counted (the allowances are stated here once, and printed with the table):

* **reading**: the words of every Markdown cell (answers in ``<details>`` included, URLs and HTML tags left out)
  at :data:`WORDS_PER_MINUTE` (technical text read carefully, formulas included); plus
  :data:`CODE_CELL_MIN` per code cell (run it, read its output or figure) and :data:`DASHBOARD_CELL_MIN` per
  dashboard (predict, then move its controls);
* **exercises**: the words of the chapter's exercise notebook at the same rate; plus :data:`EXERCISE_CODE_MIN`
  per cell where the learner writes code (``# YOUR CODE HERE``), :data:`EXERCISE_TEXT_MIN` per written answer
  (``YOUR ANSWER HERE``) and :data:`CODE_CELL_MIN` per other code cell.

The **core path** is what a learner must read to do the capstone (chapter 09); the rest is reference, read when
a question needs it. :data:`PATH` says it per chapter: ``"core"``, ``"reference"``, or the ``## `` headings of a
core chapter's reference sections (a section runs to the next ``## `` heading).

JSON fields per chapter: ``chapter``, ``notebook``, ``title``, ``words``, ``code_cells``, ``dashboards``,
``reading_min``, ``core_min``, ``exercise_min``, ``exercise_notebook`` (null when none), ``path``
(``core``/``reference``/``part``), ``reference_sections``, ``sections``; and a ``totals`` object with ``reading_min``,
``core_min``, ``exercise_min`` and ``allowances``. Exit status 0; 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Reading rate for technical prose with formulas, words per minute.
WORDS_PER_MINUTE = 150
#: Minutes per code cell of a chapter (run it, read its output or figure).
CODE_CELL_MIN = 1.0
#: Minutes per dashboard (predict first, then move its controls and read the readout).
DASHBOARD_CELL_MIN = 4.0
#: Minutes per exercise cell where the learner writes code and runs its check.
EXERCISE_CODE_MIN = 4.0
#: Minutes per written answer in an exercise notebook.
EXERCISE_TEXT_MIN = 2.0

#: The core path: "core", "reference", or the "## " headings (prefixes) of a core chapter's reference sections.
PATH: dict[str, str | tuple[str, ...]] = {
    "00": "core",
    "01": "core",
    "02": ("## 3.", "## 5."),
    "03": ("## 1.", "## 3.", "## 4.", "## 5.", "## 6.", "## 7.", "## 8."),
    "04": ("## 5.", "## 6."),
    "04b": ("## 1.", "## 3.", "## 4.", "## 5.", "## 6.", "## 8.", "## 10.", "## 11.", "## 12."),
    "05": ("## 5.", "## 6."),
    "06": ("## 7.",),
    "06b": "reference",
    "06c": "reference",
    "06d": "reference",
    "07": ("## 5.", "## 8."),
    "07b": "reference",
    "07c": "reference",
    "08": ("## 4.", "## 6.", "## 7."),
    "08b": "reference",
    "09": ("## 8.", "## 10."),
    "10": "reference",
}

_DASHBOARD = re.compile(r"\b\w*[Dd]ashboard\(|\binteract\(|_box\b|\bDashboard\b")
_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@dataclass
class Chapter:
    """One chapter's measured times, minutes."""

    chapter: str
    notebook: str
    title: str
    words: int
    code_cells: int
    dashboards: int
    reading_min: int
    core_min: int
    exercise_min: int
    exercise_notebook: str | None
    path: str
    reference_sections: list[str] = field(default_factory=list)
    #: the numbers of the chapter's "## N." sections, in order ("1", "2", "2b", ...)
    sections: list[str] = field(default_factory=list)


def count_words(markdown: str) -> int:
    """Words a reader reads: link targets, HTML tags and bare URLs dropped; tokens with a letter or digit."""
    text = re.sub(r"\]\([^)]*\)", "]", markdown)
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"https?://\S+", " ", text)
    return sum(1 for tok in text.split() if re.search(r"\w", tok))


def _is_dashboard(cell: dict) -> bool:
    src = "".join(cell["source"])
    if any(_WIDGET_MIME in o.get("data", {}) for o in cell.get("outputs", [])):
        return True
    # An import line names Dashboard without showing one: only the cell's other lines count.
    body = "\n".join(line for line in src.splitlines() if not line.lstrip().startswith(("import ", "from ")))
    return bool(_DASHBOARD.search(body)) and not src.lstrip().startswith(("def ", "class "))


def _blocks(cells: list[dict]) -> list[tuple[str, str, dict]]:
    """(section heading, kind, cell) with Markdown cells split at their "## " lines, so a section that starts
    inside a cell is counted from there; kind is "md" (with the text in cell["source"]) or "code"."""
    out, section = [], ""
    for cell in cells:
        if cell["cell_type"] != "markdown":
            if cell["cell_type"] == "code":
                out.append((section, "code", cell))
            continue
        part: list[str] = []
        for line in "".join(cell["source"]).splitlines(keepends=True):
            if line.startswith("## "):
                if part:
                    out.append((section, "md", {"source": part}))
                section, part = line.strip(), []
            part.append(line)
        if part:
            out.append((section, "md", {"source": part}))
    return out


def _minutes(blocks: list[tuple[str, str, dict]]) -> tuple[float, int, int, int]:
    """(minutes, words, code cells, dashboards) of some blocks of a chapter."""
    words = sum(count_words("".join(c["source"])) for _, kind, c in blocks if kind == "md")
    code = [c for _, kind, c in blocks if kind == "code"]
    dash = sum(_is_dashboard(c) for c in code)
    minutes = words / WORDS_PER_MINUTE + (len(code) - dash) * CODE_CELL_MIN + dash * DASHBOARD_CELL_MIN
    return minutes, words, len(code), dash


def section_minutes(path: Path) -> dict[str, float]:
    """Reading minutes of each ``## `` section of a chapter (same allowances as the chapter's total), keyed by
    its heading line ("" for what comes before the first); the instructor guide's agendas add these up."""
    blocks = _blocks(json.loads(path.read_text(encoding="utf-8"))["cells"])
    sections = list(dict.fromkeys(section for section, _, _ in blocks))
    return {s: _minutes([b for b in blocks if b[0] == s])[0] for s in sections}


def exercise_minutes(path: Path) -> int:
    """Minutes for an exercise notebook: its words, each code exercise, each written answer, other code cells."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    words = sum(count_words("".join(c["source"])) for c in cells if c["cell_type"] == "markdown")
    minutes = words / WORDS_PER_MINUTE
    for c in cells:
        src = "".join(c["source"])
        if c["cell_type"] == "code":
            minutes += EXERCISE_CODE_MIN if "YOUR CODE HERE" in src else CODE_CELL_MIN
        elif "YOUR ANSWER HERE" in src:
            minutes += EXERCISE_TEXT_MIN
    return math.ceil(minutes)


def _title(cells: list[dict], fallback: str) -> str:
    for c in cells:
        if c["cell_type"] == "markdown" and (m := re.match(r"#\s+\S+\s+[—-]\s+(.+)", "".join(c["source"]))):
            return m.group(1).strip()
    return fallback


def measure_chapter(path: Path, root: Path = ROOT) -> Chapter:
    """The measured times of one chapter notebook (``notebooks/NN_topic.ipynb``) and its exercises."""
    number = path.name.split("_")[0]
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    blocks = _blocks(cells)
    total, words, code, dash = _minutes(blocks)
    rule = PATH.get(number, "reference")
    refs = list(rule) if isinstance(rule, tuple) else []
    core_blocks = [b for b in blocks if not any(b[0].startswith(r) for r in refs)]
    core = 0.0 if rule == "reference" else _minutes(core_blocks)[0]
    exercises = sorted((root / "exercises").glob(f"{number}_*.ipynb"))
    return Chapter(
        chapter=number, notebook=f"notebooks/{path.name}", title=_title(cells, path.stem), words=words,
        code_cells=code, dashboards=dash, reading_min=math.ceil(total), core_min=math.ceil(core),
        exercise_min=exercise_minutes(exercises[0]) if exercises else 0,
        exercise_notebook=f"exercises/{exercises[0].name}" if exercises else None,
        path="part" if refs else str(rule), reference_sections=refs,
        sections=list(dict.fromkeys(m.group(1) for s, _, _ in blocks if (m := re.match(r"## (\w+)\.", s)))),
    )  # fmt: skip


def measure(root: Path = ROOT) -> list[Chapter]:
    """Every chapter in ``notebooks/``, in course order."""
    return [measure_chapter(p, root) for p in sorted((root / "notebooks").glob("*.ipynb"))]


def totals(rows: list[Chapter]) -> dict:
    return {
        "reading_min": sum(r.reading_min for r in rows),
        "core_min": sum(r.core_min for r in rows),
        "exercise_min": sum(r.exercise_min for r in rows),
        "allowances": {
            "words_per_minute": WORDS_PER_MINUTE, "code_cell_min": CODE_CELL_MIN,
            "dashboard_cell_min": DASHBOARD_CELL_MIN, "exercise_code_min": EXERCISE_CODE_MIN,
            "exercise_text_min": EXERCISE_TEXT_MIN,
        },
    }  # fmt: skip


def hours(minutes: float) -> str:
    """Minutes as the course writes a duration: '3 h 50 min', '45 min'."""
    h, m = divmod(int(round(minutes)), 60)
    return f"{h} h {m:02d} min" if h else f"{m} min"


def path_label(r: Chapter) -> str:
    """How the tables write a chapter's place on the path: "core", "reference", "core except §3, §5", or, when
    most numbered sections are reference, "core: §2 only"."""
    if r.path != "part":
        return r.path
    ref = [s.removeprefix("## ").rstrip(".") for s in r.reference_sections]
    core = [s for s in r.sections if s not in ref]
    if len(core) < len(ref):
        return "core: " + ", ".join("§" + s for s in core) + " only"
    return "core except " + ", ".join("§" + s for s in ref)


def markdown_table(rows: list[Chapter]) -> str:
    """The table chapter 00 and the README show: reading, core and exercise minutes and the path per chapter."""
    lines = ["| # | chapter | path | reading (min) | core path (min) | exercises (min) |", "|---|---|---|--:|--:|--:|"]
    for r in rows:
        ex = str(r.exercise_min) if r.exercise_notebook else "—"
        lines.append(f"| {r.chapter} | {r.title} | {path_label(r)} | {r.reading_min} | {r.core_min} | {ex} |")
    t = totals(rows)
    lines.append(f"| | **total** | | **{t['reading_min']}** | **{t['core_min']}** | **{t['exercise_min']}** |")
    return "\n".join(lines)


def text_table(rows: list[Chapter]) -> str:
    cols = ("words", "code", "dash", "read", "core", "exer")
    lines = [f"{'ch':4s} {'path':9s} " + " ".join(f"{c:>{6 if c == 'words' else 5}s}" for c in cols) + "  title"]
    for r in rows:
        lines.append(f"{r.chapter:4s} {r.path:9s} {r.words:6d} {r.code_cells:5d} {r.dashboards:5d} {r.reading_min:5d} "
                     f"{r.core_min:5d} {r.exercise_min:5d}  {r.title}")
    t = totals(rows)
    a = t["allowances"]
    lines.append(f"total reading {hours(t['reading_min'])}, core path {hours(t['core_min'])}, "
                 f"exercises {hours(t['exercise_min'])} (minutes, rounded up per chapter)")
    lines.append(f"allowances: {a['words_per_minute']} words/min; {a['code_cell_min']:g} min per code cell, "
                 f"{a['dashboard_cell_min']:g} per dashboard; exercises {a['exercise_code_min']:g} min per code "
                 f"exercise, {a['exercise_text_min']:g} per written answer")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="rows and totals as JSON")
    out.add_argument("--markdown", action="store_true", help="the Markdown table of chapter 00 and the README")
    args = parser.parse_args(argv)  # argparse exits with status 2 on a bad argument
    rows = measure()
    if args.json:
        print(json.dumps({"chapters": [asdict(r) for r in rows], "totals": totals(rows)}, indent=1))
    elif args.markdown:
        print(markdown_table(rows))
    else:
        print(text_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
