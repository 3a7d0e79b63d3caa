"""The reading-time tool measures what it says: words at the stated rate, the stated allowance per code cell,
dashboard and exercise, and the core path's reference sections left out."""

import json
import subprocess
import sys

import pytest

from nvcourse.devtools import reading_time as rt


def _nb(path, cells):
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))


def _md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": [text]}


def _code(text, outputs=()):
    return {"cell_type": "code", "metadata": {}, "source": [text], "outputs": list(outputs), "execution_count": None}


def test_words_leave_out_link_targets_tags_and_urls():
    assert rt.count_words("A [link](https://x.org/a b) and <b>bold</b> — see https://y.org/z $t = α$") == 7


def test_an_import_that_names_dashboard_is_not_a_dashboard():
    # 03's and 04's import cells once counted as dashboards (+3 min each) because they import the Dashboard class.
    assert not rt._is_dashboard(_code("%matplotlib inline\nfrom nvcourse.widgets import Dashboard, log_slider"))
    assert rt._is_dashboard(_code("from nvcourse.widgets import Dashboard\nDashboard({}, view)"))
    assert rt._is_dashboard(_code("ch.sweep_dashboard()"))


def test_a_chapter_is_words_at_the_rate_plus_the_cell_allowances(tmp_path, monkeypatch):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "exercises").mkdir()
    words = " ".join(["word"] * 300)
    _nb(tmp_path / "notebooks" / "07_x.ipynb", [
        _md(f"# 07 — A title\n\n{words}"), _code("print(1)"), _md(f"## 1. One\n{words}"),
        _code("ch.some_dashboard()"), _md(f"Text\n## 2. Two\n{words}"), _code("x = 2"),
    ])  # fmt: skip
    _nb(tmp_path / "exercises" / "07_x_exercises.ipynb", [
        _md(words), _code("def f():\n    # YOUR CODE HERE\n    raise NotImplementedError()"), _md("YOUR ANSWER HERE"),
        _code("import math"),
    ])  # fmt: skip
    monkeypatch.setitem(rt.PATH, "07", ("## 2.",))
    (row,) = rt.measure(tmp_path)
    assert row.title == "A title" and row.words == 3 * 300 + 3 + 2 + 1 + 2  # headings and "Text" count
    assert (row.code_cells, row.dashboards) == (3, 1)
    expected = row.words / rt.WORDS_PER_MINUTE + 2 * rt.CODE_CELL_MIN + rt.DASHBOARD_CELL_MIN
    assert row.reading_min == -(-expected // 1)
    core = (300 + 3 + 2 + 300 + 1) / rt.WORDS_PER_MINUTE + rt.CODE_CELL_MIN + rt.DASHBOARD_CELL_MIN
    assert row.core_min == -(-core // 1)  # section 2 (from its heading inside a cell) and its code cell left out
    ex = (300 + 3) / rt.WORDS_PER_MINUTE + rt.EXERCISE_CODE_MIN + rt.EXERCISE_TEXT_MIN + rt.CODE_CELL_MIN
    assert row.exercise_min == -(-ex // 1) and row.exercise_notebook == "exercises/07_x_exercises.ipynb"
    assert row.path == "part" and "core except §2" in rt.markdown_table([row])


def test_a_reference_chapter_has_no_core_minutes(tmp_path, monkeypatch):
    (tmp_path / "notebooks").mkdir()
    _nb(tmp_path / "notebooks" / "08b_x.ipynb", [_md("# 08b — T\n\nsome words here")])
    monkeypatch.setitem(rt.PATH, "08b", "reference")
    (row,) = rt.measure(tmp_path)
    assert row.core_min == 0 and row.reading_min == 1 and row.exercise_notebook is None


def test_every_chapter_of_the_course_has_a_path():
    rows = rt.measure()
    assert {r.chapter for r in rows} <= set(rt.PATH)
    for r in rows:
        rule = rt.PATH[r.chapter]
        assert rule in ("core", "reference") or all(s.startswith("## ") for s in rule)


@pytest.mark.parametrize("args", [["--json"], ["--markdown"], []])
def test_cli_prints_each_form(args):
    out = subprocess.run([sys.executable, "-m", "nvcourse.devtools.reading_time", *args], capture_output=True,
                         text=True, check=True).stdout
    if args == ["--json"]:
        data = json.loads(out)
        assert data["totals"]["core_min"] == sum(c["core_min"] for c in data["chapters"])
        assert {"chapter", "notebook", "title", "reading_min", "core_min", "exercise_min", "path"} <= set(
            data["chapters"][0]
        )
    else:
        assert "00" in out and ("allowances" in out or "| **total** |" in out)


def test_cli_bad_argument_exits_2():
    r = subprocess.run([sys.executable, "-m", "nvcourse.devtools.reading_time", "--bogus"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
