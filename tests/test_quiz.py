"""The misconceptions quiz: one checked question per row of the instructor guide's misconceptions table."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from nvcourse import catalog
from nvcourse import checks as check
from nvcourse.checks import _answers, quiz, quiz_results
from nvcourse.devtools import quiz_report, quiz_text

ROOT = Path(__file__).resolve().parents[1]


def _guide_misconceptions() -> list[str]:
    text = (ROOT / "docs" / "instructor-guide.md").read_text(encoding="utf-8")
    table = text.split("## 3. Common misconceptions", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| \*\*(.+?)\*\*", table, flags=re.MULTILINE)


@pytest.fixture(autouse=True)
def _quiz_dir(tmp_path, monkeypatch):
    """Every test saves its answers in a folder of its own (never in the home folder of the machine)."""
    monkeypatch.setenv("NVCOURSE_QUIZ_DIR", str(tmp_path / "quiz"))


ALL_QIDS = [quiz.qid_for(k, form) for form in quiz.FORMS for k in quiz.MISCONCEPTIONS]


def test_one_question_per_misconception_of_the_guide():
    rows = _guide_misconceptions()
    assert len(rows) >= 10
    assert len(quiz.MISCONCEPTIONS) == len(rows)
    for qid in ALL_QIDS:
        assert qid in check.questions()


@pytest.mark.parametrize("key", list(quiz.MISCONCEPTIONS))
def test_the_post_test_asks_the_same_misconception_with_other_numbers(key: str):
    pre, post = (check.questions()[quiz.qid_for(key, form)] for form in quiz.FORMS)
    assert pre.prompt != post.prompt
    assert check.expected_answer(pre.qid) != check.expected_answer(post.qid)  # other numbers, or another letter
    # the same misconception: each form's tell-tale answer is recognised by its own check
    for q in (pre, post):
        if q.choices:
            assert any(why.startswith("Misconception") for why in q.wrong_choice.values())
        else:
            assert any(h.startswith("Misconception") for h in q.variants())


@pytest.mark.parametrize("qid", ALL_QIDS)
def test_the_tell_tale_wrong_answer_names_its_misconception(qid: str):
    q = check.questions()[qid]
    if q.choices:
        wrong = next(letter for letter, why in q.wrong_choice.items() if why.startswith("Misconception"))
        result = _answers.verdict(qid, wrong)
    else:
        hint, value = next((h, v) for h, v in q.variants().items() if h.startswith("Misconception"))
        result = _answers.verdict(qid, value)
    assert not result.passed
    assert "Misconception" in result.hint


@pytest.mark.parametrize("qid", ALL_QIDS)
def test_the_expected_answer_passes(qid: str):
    assert _answers.verdict(qid, check.expected_answer(qid)).passed


@pytest.mark.parametrize("key", list(quiz.MISCONCEPTIONS))
def test_the_pre_test_gives_no_feedback(key: str):
    """A pre-test that says "right" or names the misconception teaches the answers it should measure."""
    q = check.questions()[key]
    good = check.expected_answer(key)
    bad = (next(iter(q.wrong_choice)) if q.choices
           else next(v for h, v in q.variants().items() if h.startswith("Misconception")))
    results = [quiz.record(key, good), quiz.record(key, bad)]
    for r in results:
        assert r.status == "recorded" and r.hint == "" and not r.right and not r.wrong
        assert "Misconception" not in r.message and "Correct" not in r.message and "model" not in r.message
    # both say the same thing but for the value echoed back
    assert results[0].summary.split(" — ")[1:] == results[1].summary.split(" — ")[1:]
    saved = quiz_results.load("pre")[key]
    assert saved["class"] == "misconception"  # the last answer given is the one kept


def test_the_pre_test_refuses_post_ids_and_the_post_test_pre_ids():
    assert quiz.record("quiz.post.gbps", 100).status == "error"
    assert quiz.answer("quiz.gbps", 50).status == "error"


def test_a_stub_is_not_recorded_as_an_answer():
    def stub():
        raise NotImplementedError()

    assert quiz.record("quiz.gbps", stub).status == "todo"
    assert quiz_results.load("pre") == {}


def test_the_achievable_question_accepts_the_rule_of_thumb_the_course_teaches():
    """The course teaches "plan for about 0.9 of line rate"; the catalog's PCIe efficiency is 0.88."""
    for form, link in (("pre", "pcie4"), ("post", "pcie5")):
        line = catalog.get_link(link).line_GBps_dir
        qid = quiz.qid_for("quiz.achievable", form)
        assert _answers.verdict(qid, 0.9 * line).passed
        assert _answers.verdict(qid, 0.85 * line).passed
        assert not _answers.verdict(qid, line).passed  # the misconception
        assert "Misconception" in _answers.verdict(qid, line).hint


def test_the_benchmark_options_cannot_be_guessed_by_their_length():
    for form in quiz.FORMS:
        q = check.questions()[quiz.qid_for("quiz.benchmark", form)]
        lengths = [len(text) for text in q.choices.values()]
        assert max(lengths) / min(lengths) < 1.25, lengths
    assert check.expected_answer("quiz.benchmark") != check.expected_answer("quiz.post.benchmark")


def test_finish_pre_gives_a_count_and_a_code_but_no_verdict():
    quiz.record("quiz.gbps", 400)  # the misconception
    quiz.record("quiz.mib", check.expected_answer("quiz.mib"))  # right
    result = quiz.finish("pre")
    assert result.status == "recorded" and result.summary.startswith("2 of 11 answered")
    assert not result.right and not result.wrong and "held" not in result.message
    code = re.search(r"NVQ1-pre-\S+", result.message).group(0)
    form, classes = quiz_results.decode_code(code)
    expected = ["open"] * len(quiz.MISCONCEPTIONS)
    expected[0], expected[list(quiz.MISCONCEPTIONS).index("quiz.mib")] = "misconception", "right"
    assert (form, classes) == ("pre", expected)


def test_finish_post_scores_and_names_what_is_still_held():
    for key in quiz.MISCONCEPTIONS:
        qid = quiz.qid_for(key, "post")
        quiz.answer(qid, check.expected_answer(qid))
    quiz.answer("quiz.post.gbps", 800)  # the bits-vs-bytes slip, given last
    result = quiz.finish("post")
    assert result.status == "fail" and result.summary.startswith("10 of 11 right")
    assert result.wrong == [f"still held: {quiz.MISCONCEPTIONS['quiz.gbps']}"]


def test_the_report_builds_the_pre_post_table_from_files_and_codes(tmp_path, monkeypatch):
    # two learners' homes on a hub: one held the Gb/s misconception before and not after
    for learner, pre_gbps in (("a", 400), ("b", 50)):
        monkeypatch.setenv("NVCOURSE_QUIZ_DIR", str(tmp_path / learner / ".nvcourse" / "quiz"))
        quiz.record("quiz.gbps", pre_gbps)
        quiz.answer("quiz.post.gbps", 100)
    sheets = quiz_report.collect([tmp_path])
    rows = quiz_report.table(sheets)
    assert (len(sheets["pre"]), len(sheets["post"])) == (2, 2)
    first = rows[0]
    assert (first["pre_right_pct"], first["post_right_pct"], first["change_pct_points"]) == (50, 100, 50)
    assert (first["pre_misconception_pct"], first["post_misconception_pct"]) == (50, 0)
    assert rows[1]["pre_answered"] == 0 and rows[1]["pre_right_pct"] is None
    # a learner on a laptop pastes the code into a form; the export is read as it is
    code = quiz_results.score_code("pre", ["misconception"] + ["right"] * 10)
    (tmp_path / "form.csv").write_text(f"timestamp,code\n2026-12-05 09:10,{code}\n", encoding="utf-8")
    assert quiz_report.collect([tmp_path / "form.csv"])["pre"] == [["misconception"] + ["right"] * 10]


def test_the_report_command_exits_2_on_nothing_readable(tmp_path, capsys):
    assert quiz_report.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no quiz file" in err


def test_the_pre_notebook_never_calls_a_check_that_gives_feedback():
    for path, verb in zip(quiz_text.QUIZZES, ("record", "answer")):
        nb = nbformat.read(path, as_version=4)
        calls = re.findall(r"check\.(record|answer|score)\(", "\n".join(c.source for c in nb.cells))
        assert calls and set(calls) == {verb}, (path.name, calls)


def test_score_counts_and_names_what_is_left():
    answers = {qid: check.expected_answer(qid) for qid in quiz.MISCONCEPTIONS}
    assert quiz.score(answers).passed
    answers["quiz.gbps"] = 400  # the bits-vs-bytes slip
    del answers["quiz.mib"]  # not answered
    result = quiz.score(answers)
    assert not result.passed
    assert result.summary == f"{len(quiz.MISCONCEPTIONS) - 2} of {len(quiz.MISCONCEPTIONS)} right (1 not answered yet)."
    assert "still held: 400G means 400 GB/s (GB/s vs Gb/s)" in result.wrong
    assert "not answered yet: 64 MiB = 64 MB" in result.wrong


def test_score_of_an_unanswered_quiz_does_not_say_you_hold_every_misconception():
    """Run All on the quiz before answering (the exercise walkthrough): the score said "Not quite — 0 of 11 right"
    and listed all eleven misconceptions as "still to unlearn", though none had been answered."""

    def stub():
        raise NotImplementedError()

    result = quiz.score({qid: stub for qid in quiz.MISCONCEPTIONS})
    assert result.status == "todo" and not result.passed
    assert not [w for w in result.wrong if "still held" in w]
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
    b200 = catalog.get_gpu("b200")
    assert f"{b200.bf16_sparse_TFLOPS:,.0f} TFLOPS" in qs["quiz.post.dense_tflops"].prompt


@pytest.mark.parametrize("module", ["quiz.py", "ch02.py"])
def test_question_modules_type_no_hardware_figure(module: str):
    # the figures these questions quote (NDR 400 Gb/s, NVLink 900 GB/s bidir and 18 links, 1,979 sparse TFLOPS,
    # 31.5 GB/s) may only reach them through the catalog
    source = (ROOT / "nvcourse" / "checks" / module).read_text(encoding="utf-8")
    typed = re.findall(r"(?<![\w.])(400|800|600|900|1,?979|1,?978|989|18|31\.5|63|450|4,?500|2,?250)(?![\w.])", source)
    assert typed == []


@pytest.mark.parametrize("path", quiz_text.QUIZZES, ids=lambda p: p.stem)
def test_notebook_question_cells_are_rendered_from_the_questions(tmp_path, path):
    assert quiz_text.refresh(check=True) == []
    nb = nbformat.read(path, as_version=4)
    cells = quiz_text.question_cells(nb)
    form = "post" if "post" in path.stem else "pre"
    assert sorted(cells.values()) == sorted(quiz.qid_for(k, form) for k in quiz.MISCONCEPTIONS)
    # a figure typed into a question cell is stale, and refreshing puts the catalog's back
    first = min(cells)
    nb.cells[first].source = nb.cells[first].source.replace("G** (", "0G** (")
    copy = tmp_path / "quiz.ipynb"
    nbformat.write(nb, copy)
    assert quiz_text.refresh(copy, check=True) == [f"STALE quiz text (run `python3 tasks.py exercises`): "
                                                  f"quiz.ipynb {cells[first]}"]
    assert quiz_text.refresh(copy) == [] and quiz_text.refresh(copy, check=True) == []
    assert nbformat.read(copy, as_version=4).cells[first].source == quiz.question_markdown(cells[first])


@pytest.mark.parametrize("form", quiz.FORMS)
def test_finish_before_any_answer_is_not_done_yet(form: str):
    """Run All on the unanswered notebook (the browser test): the last box says 'not done yet', as every stub's."""
    result = quiz.finish(form)
    assert result.status == "todo" and "none of the 11" in result.summary and "Answer the questions" in result.hint



def test_the_report_piped_into_head_ends_quietly(tmp_path, monkeypatch):
    # `quiz_report DIR | head -3`: the reader closes the pipe mid-table; no BrokenPipeError traceback, status 0
    monkeypatch.setenv("NVCOURSE_QUIZ_DIR", str(tmp_path / "a" / ".nvcourse" / "quiz"))
    quiz.record("quiz.gbps", 400)
    quieted = []

    def closed_pipe(*args, **kwargs):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr("builtins.print", closed_pipe)
    monkeypatch.setattr(quiz_report, "quiet_stdout", lambda: quieted.append(True))
    assert quiz_report.main([str(tmp_path)]) == 0 and quieted == [True]


def test_the_pre_test_gives_no_verdict_through_the_generic_checker():
    """A learner who types ``check.answer("quiz.gbps", …)`` during the pre-test learns nothing from it."""
    pre = check.answer("quiz.gbps", 400)  # the misconception's tell-tale answer
    assert pre.status == "error" and "pre-test question" in pre.message
    assert "Misconception" not in pre.hint and "GB/s" not in pre.message
    assert check.answer("quiz.post.gbps", 1).status == "fail"  # the post-test keeps its feedback


def test_the_quiz_key_is_not_in_a_learner_copy(monkeypatch, tmp_path):
    """Where ``solutions/`` cannot be read (a learner copy, a learner's account on the hub), the quiz's expected
    answers are refused in one line; an exercise's answer is not (its checker explains it anyway)."""
    assert check.expected_answer("quiz.gbps") == catalog.get_link("ib-ndr").line_GBps_dir  # instructor's checkout
    monkeypatch.setattr(_answers, "SOLUTIONS", tmp_path / "solutions")  # what a learner copy has: none
    for qid in ("quiz.gbps", "quiz.post.benchmark"):
        with pytest.raises(_answers.AnswerWithheld, match=f"the answer to {qid} is for instructors"):
            check.expected_answer(qid)
    assert check.expected_answer("02.ndr_GBps") == catalog.get_link("ib-ndr").line_Gbps_dir / 8
    assert quiz.record("quiz.mib", 64).status == "recorded"  # the pre-test still records, with its class
    assert quiz_results.load("pre")["quiz.mib"]["class"] in ("right", "misconception", "other")
