"""Checkers of chapters 05 and 07: the solution passes, the stub, a raising function and wrong types get guidance
(never a traceback), and each plausible mistake gets its specific hint. Reference solutions are written by hand
here, independent of the package."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from nvcourse import checks, training
from nvcourse.checks import Result


def _exposed(d, c, m):
    return max(0.0, d - c / m * 4 / 6)


def _ar(n, g, a, b, insw, lat, eff, *, insw_bytes=lambda n, g: n * (g + 1) / g, insw_lat=None, insw_eff=None,
        ring_steps=lambda g: 2 * (g - 1)):
    """Ring 2(g−1)α + 2(g−1)/g·n/β; NVLS (NCCL's cost model) L + (g+1)/g·n/(β·η). The keywords make mistakes."""
    if g == 1:
        return 0.0
    if insw:
        latency = lat if insw_lat is None else insw_lat(g, a, lat)
        e = eff if insw_eff is None else insw_eff(eff)
        return latency + insw_bytes(n, g) / (b * e)
    return ring_steps(g) * a + ring_steps(g) / g * n / b


# checker -> (right solution, [(plausible mistake, words the hint must contain)])
CASES = {
    "moe_dispatch_bytes": (lambda t, h, k, b, g: t * h * k * b * (g - 1) / g, [
        (lambda t, h, k, b, g: t * h * k * b, "(G−1)/G"),
        (lambda t, h, k, b, g: t * h * b * (g - 1) / g, "top_k experts"),
        (lambda t, h, k, b, g: 2 * t * h * k * b * (g - 1) / g, "dispatch and combine"),
        (lambda t, h, k, b, g: t * h * k * (g - 1) / g, "elements"),
        (lambda t, h, k, b, g: 8 * t * h * k * b * (g - 1) / g, "bits")]),
    "moe_network_bytes": (lambda t, h, k, b, g, d: t * h * k * b * (g - min(g, d)) / g, [
        (lambda t, h, k, b, g, d: t * h * k * b * (g - d) / g, "min(G, domain)"),
        (lambda t, h, k, b, g, d: t * h * k * b * (g - 1) / g, "outside the NVLink domain"),
        (lambda t, h, k, b, g, d: t * h * k * b * (min(g, d) - 1) / g, "NVLink part"),
        (lambda t, h, k, b, g, d: t * h * k * b * (g - min(g, d)) / max(g - 1, 1), "Divide by G")]),
    "alltoall_time": (lambda v1, v2, a, b1, b2: a + max(v1 / b1, v2 / b2), [
        (lambda v1, v2, a, b1, b2: a + v1 / b1 + v2 / b2, "max of the two"),
        (lambda v1, v2, a, b1, b2: max(v1 / b1, v2 / b2), "latency α is missing"),
        (lambda v1, v2, a, b1, b2: a + (v1 + v2) / b1, "NIC at its own"),
        (lambda v1, v2, a, b1, b2: 2 * a + max(v1 / b1, v2 / b2), "One α")]),
    "domain_allreduce": (_ar, [
        # the old ideal model α + n/β
        (lambda n, g, a, b, s, L, e: _ar(n, g, a, b, s, L, e, insw_bytes=lambda n, g: n, insw_lat=lambda g, a, L: a,
                                         insw_eff=lambda e: 1.0), "ideal"),
        (lambda n, g, a, b, s, L, e: _ar(n, g, a, b, s, L, e, insw_eff=lambda e: 1.0), "η is missing"),
        (lambda n, g, a, b, s, L, e: _ar(n, g, a, b, s, L, e, insw_eff=lambda e: 1 / e), "do not multiply"),
        (lambda n, g, a, b, s, L, e: _ar(n, g, a, b, s, L, e, insw_bytes=lambda n, g: n), "(g+1)/g·n per GPU, not n"),
        (lambda n, g, a, b, s, L, e: _ar(n, g, a, b, s, L, e, insw_bytes=lambda n, g: 2 * n * (g + 1) / g),
         "opposite directions"),
        (lambda n, g, a, b, s, L, e: _ar(n, g, a, b, s, L, e, insw_bytes=lambda n, g: 2 * n * (g - 1) / g),
         "ring's byte count"),
        (lambda n, g, a, b, s, L, e: _ar(n, g, a, b, s, L, e, insw_lat=lambda g, a, L: 2 * (g - 1) * a), "one step"),
        (lambda n, g, a, b, s, L, e: _ar(n, g, a, b, s, L, e, insw_lat=lambda g, a, L: a), "not one NVLink step α"),
        (lambda n, g, a, b, s, L, e: _ar(n, g, a, b, s, L, e, ring_steps=lambda g: g - 1),
         "reduce-scatter and an all-gather"),
        (lambda n, g, a, b, s, L, e: _ar(n, g, a, b, not s, L, e), "That is the"),
        (lambda n, g, a, b, s, L, e: _ar(n, g, a, b, s, L, e) if s or g == 1
         else 2 * (g - 1) * a + 2 * (g - 1) / g * n / (b * e), "ring runs at β")]),
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
    params = inspect.signature(CASES[name][0]).parameters.values()
    return sum(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params)


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
    assert r.status == "todo" and "not done yet" in r.message.lower() and "raise NotImplementedError()" in r.message


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
    value = {
        "compute": compute,
        "times": compute * (1 + 3 / (m + 3)),
        "total": st.total_s,
        "forward": floor / 3,
        "sparse": floor / 2,
    }[how]
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
    assert {"07.days_70b_b200", "07.tp_placement", "05.moe_speedup", "05.ep64_bottleneck"} <= set(_mine())


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
    good = training.step_time("llama3-70b", "dgx-h100", 1024, tp=8, pp=4, placement="tp-first").total_s
    bad = training.step_time("llama3-70b", "dgx-h100", 1024, tp=8, pp=4, placement="dp-first").total_s
    assert good < bad and checks.expected_answer("07.tp_placement") == "a"


def test_moe_speedup_by_hand():
    from nvcourse import catalog
    s = catalog.get_system("dgx-b200")
    nvl, nic = s.scaleup_achievable_GBps_dir * 1e9, s.scaleout_GBps_dir_per_gpu * s.nic.efficiency * 1e9
    routed = 4096 * 8 * 7168 * 2
    slow = 2 * s.nic.alpha_s + max(routed * 7 / 64 / nvl, routed * 56 / 64 / nic)  # rendezvous: 2 crossings
    fast = catalog.get_system("gb200-nvl72").link.alpha_s + routed * 63 / 64 / nvl
    assert checks.expected_answer("05.moe_speedup") == pytest.approx(slow / fast)
    assert checks.expected_answer("05.ep64_bottleneck") == "b"


def test_in_switch_checker_expects_nvls_as_nccl_charges_it():
    """By hand: 1 GiB over the 72 GPUs of an NVL72 (β = 18 × 50 GB/s × 0.802 = 721.8 GB/s, α = 3.4 µs; Blackwell
    NVLS: η = 0.74, L = 25 µs). Ring 142 × 3.4 µs + 2·71/72 · 2^30 B / 721.8 GB/s = 3.417 ms; NVLS
    25 µs + 73/72 · 2^30 B / (721.8 GB/s × 0.74) = 2.063 ms. A learner's function with these numbers passes only
    if it gives them, and the checker feeds it the catalog's and NCCL's values."""
    n, g, a, b = 2**30, 72, 3.4e-6, 721.8e9
    ring = 142 * a + 2 * 71 / 72 * n / b
    nvls = 25e-6 + 73 / 72 * n / (b * 0.74)
    assert ring == pytest.approx(3.417e-3, rel=1e-3) and nvls == pytest.approx(2.063e-3, rel=1e-3)
    seen = []

    def spy(n_, g_, a_, b_, s_, lat_, eff_):
        seen.append((n_, g_, a_, b_, s_, lat_, eff_))
        return _ar(n_, g_, a_, b_, s_, lat_, eff_)
    assert checks.domain_allreduce(spy).passed
    nvl = [x for x in seen if x[:2] == (n, g)]
    assert {x[4] for x in nvl} == {False, True}
    for x in nvl:
        assert x[2] == pytest.approx(a) and x[3] == pytest.approx(b) and x[5] == pytest.approx(25e-6)
        assert x[6] == pytest.approx(0.74)
    # Hopper's NVLS efficiency is NCCL's 0.85
    assert any(x[6] == pytest.approx(0.85) for x in seen if x[3] == pytest.approx(370.8e9))
    # NVLS never asked below NCCL's minimum GPU count (catalog nvls_min_gpus: 5 on Hopper, 6 on Blackwell)
    assert all(x[1] >= 5 for x in seen if x[4])
    assert any(x[1] == 2 and not x[4] for x in seen)  # the 2-GPU ring is still checked


def test_in_switch_checker_rejects_the_ideal_model():
    def ideal(n, g, a, b, s, lat, eff):
        if g == 1:
            return 0.0
        return a + n / b if s else 2 * (g - 1) * a + 2 * (g - 1) / g * n / b
    r = checks.domain_allreduce(ideal)
    assert not r.passed and "ideal" in r.hint and "(g+1)/g" in r.hint


@pytest.mark.parametrize("qid,factor,words", [
    ("05.moe_speedup", None, "link rates"), ("05.moe_speedup", -1, "Inverted"),
    ("07.days_70b_b200", 0.5, "sparse"), ("07.days_70b_b200", 1 / 3, "forward"),
    ("07.days_70b_b200", 24, "hours"), ("07.days_70b_b200", 86400, "seconds"),
])
def test_plausible_wrong_answers(qid, factor, words):
    from nvcourse import catalog
    exp = checks.expected_answer(qid)
    if factor is None:  # the raw NVLink / NIC rate ratio
        s = catalog.get_system("dgx-b200")
        value = s.scaleup_GBps_dir / s.scaleout_GBps_dir_per_gpu
    elif factor == -1:
        value = 1 / exp
    else:
        value = factor * exp
    r = checks.answer(qid, value)
    _assert_result(r)
    assert not r.passed and words in r.hint, r.message


def test_every_checker_is_run_with_a_right_answer_somewhere():
    """Beyond the generic tests on junk (tests/test_checks.py), each checker is called by name, with a right or
    a wrong answer, in a test of checkers or of its chapter."""
    tests = [*Path(__file__).parent.glob("test_checks*.py"), *Path(__file__).parent.glob("test_ch*.py")]
    text = "\n".join(p.read_text(encoding="utf-8") for p in tests)
    names = {f.__name__ for fs in checks.CHECKERS.values() for f in fs}
    untested = sorted(n for n in names if n not in CASES and f"{n}(" not in text and f'"{n}"' not in text)
    assert untested == []


def test_step_prediction_default_hint_names_the_right_exercises(st):
    """Walkthrough of 07's exercises: a prediction 3 % low got "divide by 1 − your exercise-2 bubble share", but
    the bubble is exercise 3 of the notebook (exercise 2 is the days on a Blackwell cluster)."""
    import nbformat

    _, floor, _ = _floor_by_hand()
    r = checks.step_prediction(floor * 0.97, st)
    assert not r.passed and "bubble" in r.hint, r.message
    nb = nbformat.read(Path(__file__).resolve().parents[1] / "solutions" / "07_training_at_scale_exercises.ipynb", 4)
    titles = [c.source.splitlines()[0] for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("## Ex")]
    bubble_ex = next(t for t in titles if "bubble" in t).split("—")[0].split()[-1]  # "## Exercise 3 — the ..." -> 3
    compute_ex = next(t for t in titles if "6·N·D" in t).split("—")[0].split()[-1]
    assert f"exercise-{bubble_ex} bubble" in r.hint and f"exercise-{compute_ex} function" in r.hint, (titles, r.hint)
