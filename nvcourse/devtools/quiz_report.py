"""The room's pre/post table of the misconceptions quiz, from the learners' files or pasted codes.

    python -m nvcourse.devtools.quiz_report /home/*/.nvcourse/quiz      # on the classroom hub (as root)
    python -m nvcourse.devtools.quiz_report codes.txt                    # codes pasted into a form, one a line
    python -m nvcourse.devtools.quiz_report DIR --csv table.csv          # also a CSV for a spreadsheet

Each argument is a quiz folder, a ``pre.json``/``post.json`` file, or a text file whose lines hold codes
(``NVQ1-pre-11-…``; anything else on a line is ignored, so a form's export can be given as is). For each
misconception the table gives the share of the room that answered right before and after, the share that gave
the misconception's tell-tale answer, and the change. Learners are anonymous; a pre and a post file of the same
learner pair up by the id they carry (codes do not pair: their shares are taken over all codes of each form).
Exit status: 0, or 2 when nothing readable was given (one line on stderr).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

from ..checks import quiz
from ..checks.quiz_results import CLASSES, decode_code
from ..textio import quiet_stdout

CODE = re.compile(r"NVQ1-(?:pre|post)-\d+-[0-9a-f]+")


def _from_json(path: Path) -> tuple[str, list[str]] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        form, answers = data["form"], data["answers"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if form not in quiz.FORMS or not isinstance(answers, dict):
        return None
    classes = [answers.get(quiz.qid_for(k, form), {}).get("class", "open") for k in quiz.MISCONCEPTIONS]
    return form, [c if c in CLASSES else "open" for c in classes]


def collect(paths: list[Path]) -> dict[str, list[list[str]]]:
    """{form: [verdicts of one learner, in the quiz's order], ...} from folders, JSON files and code files."""
    sheets: dict[str, list[list[str]]] = {form: [] for form in quiz.FORMS}
    for path in paths:
        files = sorted(path.rglob("*.json")) if path.is_dir() else [path]
        for file in files:
            found = _from_json(file) if file.suffix == ".json" else None
            if found:
                sheets[found[0]].append(found[1])
                continue
            try:
                text = file.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for code in CODE.findall(text):
                form, classes = decode_code(code)
                if len(classes) == len(quiz.MISCONCEPTIONS):
                    sheets[form].append(classes)
    return sheets


def table(sheets: dict[str, list[list[str]]]) -> list[dict[str, object]]:
    """One row per misconception: the share right and the share with the tell-tale answer, pre and post (%)."""
    rows = []
    for i, text in enumerate(quiz.MISCONCEPTIONS.values()):
        row: dict[str, object] = {"question": i + 1, "misconception": text}
        for form in quiz.FORMS:
            answered = [s[i] for s in sheets[form] if s[i] != "open"]
            n = len(answered)
            row[f"{form}_answered"] = n
            row[f"{form}_right_pct"] = round(100 * answered.count("right") / n) if n else None
            row[f"{form}_misconception_pct"] = round(100 * answered.count("misconception") / n) if n else None
        pre, post = row["pre_right_pct"], row["post_right_pct"]
        row["change_pct_points"] = post - pre if isinstance(pre, int) and isinstance(post, int) else None
        rows.append(row)
    return rows


def markdown(rows: list[dict[str, object]], sheets: dict[str, list[list[str]]]) -> str:
    def pct(v: object) -> str:
        return "—" if v is None else f"{v} %"

    def change(v: object) -> str:
        return "—" if v is None else f"{v:+d} points"

    lines = [f"Misconceptions quiz: {len(sheets['pre'])} pre-tests, {len(sheets['post'])} post-tests.", "",
             "| # | misconception | right before | right after | change | tell-tale answer before → after |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['question']} | {r['misconception']} | {pct(r['pre_right_pct'])} | "
                     f"{pct(r['post_right_pct'])} | {change(r['change_pct_points'])} | "
                     f"{pct(r['pre_misconception_pct'])} → {pct(r['post_misconception_pct'])} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nvcourse.devtools.quiz_report",
                                     description="The room's pre/post table of the misconceptions quiz.")
    parser.add_argument("paths", nargs="+", type=Path, help="quiz folders, pre/post JSON files, or files of codes")
    parser.add_argument("--csv", type=Path, help="also write the table as CSV to this file")
    args = parser.parse_args(argv)
    sheets = collect(args.paths)
    if not sheets["pre"] and not sheets["post"]:
        print("quiz_report: paths hold no quiz file (pre.json/post.json) and no NVQ1 code; "
              f"got {', '.join(map(str, args.paths))}", file=sys.stderr)
        return 2
    rows = table(sheets)
    try:
        print(markdown(rows, sheets), flush=True)
    except BrokenPipeError:  # `quiz_report ... | head`: the reader has what it wanted
        quiet_stdout()
    if args.csv:
        with args.csv.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
