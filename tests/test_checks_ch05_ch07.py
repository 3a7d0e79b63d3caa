"""Checkers of chapters 05 and 07: the solution passes, the stub, a raising function and wrong types get guidance
(never a traceback), and each plausible mistake gets its specific hint. Reference solutions are written by hand
here, independent of the package."""

from __future__ import annotations

import inspect

import pytest

from nvcourse import checks, training
from nvcourse.checks import Result


def _exposed(d, c, m):
    return max(0.0, d - c / m * 4 / 6)


# checker -> (right solution, [(plausible mistake, words the hint must contain)])
CASES = {
    "training_compute_time": (lambda n, d, g, f, e: 6 * n * d / (g * f * 1e12 * e), [
        (lambda n, d, g, f, e: 2 * n * d / (g * f * 1e12 * e), "forward pass only"),
        (lambda n, d, g, f, e: 6 * n * d / (g * 2 * f * 1e12 * e), "sparse"),
        (lambda n, d, g, f, e: 8 * n * d / (g * f * 1e12 * e), "recomputation"),
        (lambda n, d, g, f, e: 6 * n * d / (g * f * e), "TFLOPS"),
        (lambda n, d, g, f, e: 6 * n * d / (f * 1e12 * e), "number of GPUs"),
        (lambda n, d, g, f, e: 6 * n * d / (g * f * 1e12), "efficiency"),
        (lambda n, d, g, f, e: 6 * n * d * e / (g * f * 1e12), "instead of dividing"),
        (lambda n, d, g, f, e: 6 * n * d / (g * f * 1e12 * e) / 86400, "days")]),
    "bubble_fraction": (lambda p, m, v: (p - 1) / (v * m + p - 1), [
        (lambda p, m, v: (p - 1) / (v * m), "relative to the compute"),
        (lambda p, m, v: (p - 1) / (m + p - 1), "Interleaving"),
        (lambda p, m, v: (p - 1) / (v * (m + p - 1)), "not (p−1)/(v·(m + p − 1))"),
        (lambda p, m, v: p / (v * m + p), "p − 1 steps"),
        (lambda p, m, v: 1 - (p - 1) / (v * m + p - 1), "busy share")]),
    "exposed_dp_time": (_exposed, [
        (lambda d, c, m: d, "No overlap"),
        (lambda d, c, m: d - c / m * 4 / 6, "cannot be negative"),
        (lambda d, c, m: max(0.0, d - c), "last"),
        (lambda d, c, m: max(0.0, d - c * 4 / 6), "last"),
        (lambda d, c, m: max(0.0, d - c / m / 3), "not the forward")]),
}

ALL = list(CASES)


def _arity(name):
    return len(inspect.signature(CASES[name][0]).parameters)


def _assert_result(r):
    assert isinstance(r, Result)
    assert isinstance(r.message, str) and r.message
    assert "Traceback" not in r.message
    html = r._repr_html_()
    assert html.startswith("<div") and html.endswith("</div>")
    assert repr(r) == r.message


def test_checkers_are_exported():
    for name in ALL + ["step_prediction"]:
        assert name in checks.__all__ and callable(getattr(checks, name))


@pytest.mark.parametrize("name", ALL)
def test_solution_passes(name):
    r = getattr(checks, name)(CASES[name][0])
    _assert_result(r)
    assert r.passed, r.message


@pytest.mark.parametrize("name", ALL)
def test_stub_says_not_done_yet(name):
    n = _arity(name)

    def stub(*args):
        assert len(args) == n
        raise NotImplementedError()
    r = getattr(checks, name)(stub)
    _assert_result(r)
    assert r.status == "todo" and "not done yet" in r.message and "raise NotImplementedError()" in r.message


@pytest.mark.parametrize("name", ALL)
def test_other_exception_is_reported_not_raised(name):
    def boom(*args):
        raise ZeroDivisionError("division by zero")
    r = getattr(checks, name)(boom)
    _assert_result(r)
    assert not r.passed and "ZeroDivisionError" in r.message and "division by zero" in r.message


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("value", [None, "1.2 s", [1, 2, 3], object(), True])
def test_wrong_type_is_explained(name, value):
    r = getattr(checks, name)(lambda *args: value)
    _assert_result(r)
    assert not r.passed
    if value is None:
        assert "None" in r.message and "return" in r.message
    elif isinstance(value, str):
        assert "string" in r.message


@pytest.mark.parametrize("name", ALL)
def test_not_a_function(name):
    r = getattr(checks, name)(42)
    _assert_result(r)
    assert not r.passed and "function" in r.message


@pytest.mark.parametrize("name,mistake,words", [(n, m, w) for n, (_, ms) in CASES.items() for m, w in ms])
def test_plausible_mistake_gets_specific_hint(name, mistake, words):
    r = getattr(checks, name)(mistake)
    _assert_result(r)
    assert not r.passed
    assert words in r.hint, r.message


def test_feedback_is_deterministic():
    for name, (_, mistakes) in CASES.items():
        f = mistakes[0][0]
        assert getattr(checks, name)(f).message == getattr(checks, name)(f).message


# ------------------------------------------------------------------------------------------------
# chapter 07: predict, then run the model


def _floor_by_hand():
    spec = training.get_model("llama3-70b")
    from nvcourse import catalog
    compute = 6 * spec.params * spec.global_batch_tokens / (1024 * catalog.get_gpu("h100").bf16_TFLOPS * 1e12 * 0.55)
    m = spec.global_batch_tokens // spec.seq // 32
    return compute, compute / (1 - 3 / (m + 3)), m


@pytest.fixture(scope="module")
def st():
    return training.step_time("llama3-70b", "dgx-h100", 1024, tp=8, pp=4, compute_efficiency=0.55)


def test_step_prediction_right(st):
    compute, floor, m = _floor_by_hand()
    assert m == 16
    r = checks.step_prediction(floor, st)
    _assert_result(r)
    assert r.passed and "TP" in r.message
    assert checks.step_prediction(lambda: floor, st).passed


@pytest.mark.parametrize("how,words", [
    ("compute", "bubble"), ("times", "compute / (1 − f)"), ("total", "communication included"),
    ("forward", "forward pass only"), ("sparse", "sparse"),
])
def test_step_prediction_mistakes(st, how, words):
    compute, floor, m = _floor_by_hand()
    value = {"compute": compute, "times": compute * (1 + 3 / (m + 3)), "total": st.total, "forward": floor / 3, "sparse": floor / 2}[how]
    r = checks.step_prediction(value, st)
    _assert_result(r)
    assert not r.passed and words in r.hint, r.message


def test_step_prediction_bad_inputs(st):
    def stub():
        raise NotImplementedError()
    assert checks.step_prediction(stub, st).status == "todo"
    assert checks.step_prediction(lambda: 1 / 0, st).status == "error"
    assert checks.step_prediction(None, st).status == "error"
    assert checks.step_prediction(..., st).status == "todo"
    assert checks.step_prediction("3 s", st).status == "error"
    assert not checks.step_prediction(-1.0, st).passed
    r = checks.step_prediction(3.0, "not a step")
    _assert_result(r)
    assert r.status == "error" and "step_time" in r.message


# ------------------------------------------------------------------------------------------------
# questions of chapters 05 and 07


def _mine():
    return {qid: q for qid, q in checks.questions().items() if qid[:3] in ("05.", "07.")}


def test_questions_registered():
    assert {"07.days_70b_b200", "07.tp_placement"} <= set(_mine())


def test_every_question_passes_with_its_computed_answer():
    for qid, q in _mine().items():
        exp = checks.expected_answer(qid)
        assert checks.answer(qid, exp).passed, qid
        assert checks.answer(qid, lambda exp=exp: exp).passed, qid
        if q.choices:
            assert exp in q.choices
            for letter in q.choices:
                if letter != exp:
                    r = checks.answer(qid, letter)
                    assert not r.passed and r.hint, (qid, letter)


def test_days_70b_b200_by_hand():
    from nvcourse import catalog
    days = 6 * 70e9 * 15e12 / (4096 * catalog.get_gpu("b200").bf16_TFLOPS * 1e12 * 0.4) / 86400
    assert checks.expected_answer("07.days_70b_b200") == pytest.approx(days)


def test_tp_placement_answer_follows_the_model():
    good = training.step_time("llama3-70b", "dgx-h100", 1024, tp=8, pp=4, placement="tp-first").total
    bad = training.step_time("llama3-70b", "dgx-h100", 1024, tp=8, pp=4, placement="dp-first").total
    assert good < bad and checks.expected_answer("07.tp_placement") == "a"


@pytest.mark.parametrize("qid,factor,words", [
    ("07.days_70b_b200", 0.5, "sparse"), ("07.days_70b_b200", 1 / 3, "forward"),
    ("07.days_70b_b200", 24, "hours"), ("07.days_70b_b200", 86400, "seconds"),
])
def test_plausible_wrong_answers(qid, factor, words):
    r = checks.answer(qid, factor * checks.expected_answer(qid))
    _assert_result(r)
    assert not r.passed and words in r.hint, r.message
