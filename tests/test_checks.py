"""The exercise checkers: pass the right answer, fail the stub and broken code with guidance, never raise,
and give the specific hint for a wrong-but-plausible answer."""

from __future__ import annotations

import math

import pytest

from nvcourse import catalog, checks
from nvcourse.checks import Result

# ------------------------------------------------------------------------------------------------
# hand-written reference solutions (independent of the package) and plausible mistakes


def nvls_chunk(nbytes, channels, heads, first_match_only=False):
    """NCCL's NVLS chunk rule as a learner would write it (src/enqueue.cc, per channel): 128 KiB, then three shrinks
    in order."""
    chunk = 128 * 1024
    for m, c in ((64, 65536), (8, 32768), (2, 16384)):
        if nbytes / channels < m * heads * chunk and chunk > c:
            chunk = c
            if first_match_only:
                break
    return chunk


def ring(p):
    rs = [[(r, (r + 1) % p, (r - s) % p) for r in range(p)] for s in range(p - 1)]
    ag = [[(r, (r + 1) % p, (r + 1 - t) % p) for r in range(p)] for t in range(p - 1)]
    return rs + ag


def hier(S, g, k, ai, bi, an, nic):
    return 2 * ((g - 1) * ai + (g - 1) / g * S / bi) + 2 * (k - 1) * an + 2 * (k - 1) / k * (S / g) / nic


BUSBW = {"allreduce": lambda n: 2 * (n - 1) / n, "reducescatter": lambda n: (n - 1) / n,
         "allgather": lambda n: (n - 1) / n, "broadcast": lambda n: 1.0}

# checker -> (right solution, [(plausible mistake, words the hint must contain)])
CASES = {
    "model_state_bytes": (
        lambda p: 16 * p,
        [(lambda p: 2 * p, "BF16 weights"), (lambda p: 4 * p, "optimizer states"), (lambda p: 16 * p / 1e9, "bytes")],
    ),
    "min_gpus": (
        lambda p, m, h: math.ceil(16 * p / (h * m * 1e9)),
        [
            (lambda p, m, h: math.ceil(16 * p / (h * m * 2**30)), "GiB"),
            (lambda p, m, h: math.ceil(16 * p / (m * 1e9)), "headroom"),
            (lambda p, m, h: 16 * p / (h * m * 1e9), "round"),
        ],
    ),
    "dp_bytes_per_step": (
        lambda p, d, g: 2 * (d - 1) / d * p * g,
        [(lambda p, d, g: (d - 1) / d * p * g, "reduce-scatter"), (lambda p, d, g: 2 * p * g if d > 1 else 0, "d−1")],
    ),
    "half_bandwidth_size": (
        lambda a, b: a * b,
        [(lambda a, b: a * b / 2, "β/2"), (lambda a, b: a * 1e6 * b, "µs"), (lambda a, b: 8 * a * b, "bits")],
    ),
    "effective_bandwidth": (
        lambda n, a, b: n / (a + n / b),
        [(lambda n, a, b: b, "latency α is missing"), (lambda n, a, b: 8 * n / (a + n / b), "Bits")],
    ),
    "switch_bisection": (lambda g, L, b: g / 2 * L * b, [(lambda g, L, b: g * L * b, "one side")]),
    "ring_bisection": (lambda n, b: 2 * b, [(lambda n, b: b, "two links")]),
    "algbw_busbw": (
        lambda op, n, t, p: (n / t / 1e9, n / t / 1e9 * BUSBW[op](p)),
        [
            (lambda op, n, t, p: (n / t / 1e9, n / t / 1e9), "factor"),
            (lambda op, n, t, p: (n / t / 2**30, n / t / 2**30 * BUSBW[op](p)), "GiB"),
            (lambda op, n, t, p: (n / t / 1e9 * BUSBW[op](p), n / t / 1e9), "swapped"),
            (lambda op, n, t, p: n / t / 1e9, "tuple"),
        ],
    ),
    "ring_schedule": (
        ring,
        [
            (lambda p: ring(p)[: p - 1], "2(p−1)"),
            (lambda p: [[(r, (r + 2) % p, r) for r in range(p)] for _ in range(2 * p - 2)], "neighbour"),
        ],
    ),
    "ring_time": (
        lambda n, p, a, b: 2 * (p - 1) * (a + n / p / b),
        [
            (lambda n, p, a, b: (p - 1) * (a + n / p / b), "reduce-scatter"),
            (lambda n, p, a, b: 2 * (p - 1) * (a + n / b), "S/p"),
            (lambda n, p, a, b: 2 * (p - 1) * (a + n / p / b) * 1e3, "ms"),
        ],
    ),
    "hierarchical_allreduce_time": (
        hier,
        [
            (
                lambda S, g, k, ai, bi, an, nic: hier(S, g, k, ai, bi, an, nic) - ((g - 1) * ai + (g - 1) / g * S / bi),
                "all-gather",
            )
        ],
    ),
    "ecmp_collision_probability": (
        lambda m, k: 1 - (1 - 1 / k) ** (m - 1),
        [(lambda m, k: (1 - 1 / k) ** (m - 1), "not"), (lambda m, k: 1 - (1 - 1 / k) ** m, "m−1")],
    ),
    "young_interval": (
        lambda d, m: math.sqrt(2 * d * m),
        [(lambda d, m: math.sqrt(d * m), "factor 2"), (lambda d, m: math.sqrt(2 * d * m) / 60, "minutes")],
    ),
    "cluster_mtbf_hours": (lambda n, r: 1 / (n * r), [(lambda n, r: n / r, "1/(N·λ)"), (lambda n, r: 1 / r, "any")]),
    "ring_protocol_time": (lambda n, s, b, st, bw: (b + 2 * (n - 1) * st) * 1e-6 + s / (bw * 1e9 * n / (2 * (n - 1))), [
        (lambda n, s, b, st, bw: 2 * (n - 1) * st * 1e-6 + s / (bw * 1e9 * n / (2 * (n - 1))), "base latency"),
        (lambda n, s, b, st, bw: (b + 2 * (n - 1) * st) * 1e-6 + s / (bw * 1e9), "algbw")]),
    "crossover_bytes": (lambda la, ba, lb, bb: (lb - la) / (1 / ba - 1 / bb), [
        (lambda la, ba, lb, bb: (lb - la) * (bb - ba), "inverses")]),
    "protocol_switch": (lambda s, t, m: min((t[i] / t[i - 1], s[i]) for i in range(1, len(s)) if s[i - 1] >= m)[1], [
        (lambda s, t, m: min((t[i] / t[i - 1], s[i]) for i in range(1, len(s)))[1], "min_bytes")]),
    "nvls_chunk_bytes": (lambda s, c, h: nvls_chunk(s, c, h), [
        (lambda s, c, h: nvls_chunk(s, c, h, first_match_only=True), "one after another"),
        (lambda s, c, h: nvls_chunk(s, 1, h), "channels")]),
}

#: the checkers of one learner function of plain numbers, run with a solution, a stub and mistakes below
ALL = list(CASES)
#: every checker of the course, by name (nvcourse.checks.CHECKERS)
EVERY = {f.__name__: f for fs in checks.CHECKERS.values() for f in fs}


def test_every_exported_checker_is_registered_and_every_case_names_one():
    assert set(CASES) <= set(EVERY)
    not_checkers = {"Result", "Question", "answer", "expected_answer", "questions", "CHECKERS"}
    assert set(checks.__all__) - not_checkers == set(EVERY)


def test_every_chapter_with_exercises_has_its_checkers_registered():
    from nvcourse.chapters import CHAPTERS

    with_checker = {c.number for c in CHAPTERS if c.checker}
    assert with_checker == set(checks.CHECKERS)
    for c in CHAPTERS:
        if c.checker:
            mod = __import__(f"nvcourse.checks.{c.checker}", fromlist=["__all__"])
            assert {f.__name__ for f in checks.CHECKERS[c.number]} <= set(mod.__all__), c.number


def _stub_raising(exc):
    def f(*args, **kwargs):
        raise exc
    return f


#: what a learner may pass instead of an answer: every checker explains it, none raises or blames itself
JUNK = {
    "a number": 42, "None": None, "a string": "1.2 GB/s", "a list": [1, 2, 3], "an object": object(), "...": ...,
    "the stub": _stub_raising(NotImplementedError()), "code that raises": _stub_raising(ZeroDivisionError("boom")),
    "a function returning None": lambda *a, **k: None,
}


@pytest.mark.parametrize("junk", list(JUNK))
@pytest.mark.parametrize("name", sorted(EVERY))
def test_every_checker_explains_junk_and_never_raises(name, junk):
    import inspect

    fn, value = EVERY[name], JUNK[junk]
    args, kwargs = [], {}
    for p in inspect.signature(fn).parameters.values():
        if p.default is inspect.Parameter.empty:
            (kwargs.__setitem__(p.name, value) if p.kind == p.KEYWORD_ONLY else args.append(value))
    r = fn(*args, **kwargs)
    _assert_result(r)
    assert r.status != "pass", r.message
    assert "the checker itself failed" not in r.message, r.message


@pytest.mark.parametrize("qid", sorted(q for q in checks.questions() if not q.startswith("quiz.")))
def test_every_wrong_answer_to_a_question_gets_a_hint(qid):
    """The quiz (quiz.*) is left out: it measures what a learner thinks, so it does not coach."""
    q = checks.questions()[qid]
    expected = q.expected()
    wrongs = [c for c in q.choices if c != expected] if q.choices else [3 * expected + 1]
    for wrong in wrongs:
        r = checks.answer(qid, wrong)
        assert not r.passed and r.hint, f"{qid} answered {wrong!r}: {r.message}"


def _arity(name):
    import inspect
    return len(inspect.signature(CASES[name][0]).parameters)


def _stub(name, exc):
    n = _arity(name)

    def f(*args):
        assert len(args) == n
        raise exc
    return f


def _assert_result(r):
    assert isinstance(r, Result)
    assert isinstance(r.message, str) and r.message
    assert "Traceback" not in r.message
    html = r._repr_html_()
    assert html.startswith("<div") and html.endswith("</div>")
    assert repr(r) == r.message


@pytest.mark.parametrize("name", ALL)
def test_solution_passes(name):
    r = getattr(checks, name)(CASES[name][0])
    _assert_result(r)
    assert r.passed, r.message
    assert r.status == "pass"


@pytest.mark.parametrize("name", ALL)
def test_stub_says_not_done_yet(name):
    r = getattr(checks, name)(_stub(name, NotImplementedError()))
    _assert_result(r)
    assert not r.passed and r.status == "todo"
    assert "not done yet" in r.message.lower() and "raise NotImplementedError()" in r.message


@pytest.mark.parametrize("name", ALL)
def test_other_exception_is_reported_not_raised(name):
    r = getattr(checks, name)(_stub(name, ZeroDivisionError("division by zero")))
    _assert_result(r)
    assert not r.passed
    assert "ZeroDivisionError" in r.message and "division by zero" in r.message


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("value", [None, "1.2 GB/s", [1, 2, 3], object()])
def test_wrong_type_is_explained(name, value):
    n = _arity(name)

    def f(*args):
        assert len(args) == n
        return value
    r = getattr(checks, name)(f)
    _assert_result(r)
    assert not r.passed
    if value is None:
        assert "None" in r.message and "return" in r.message
    elif isinstance(value, str):
        assert "string" in r.message or "list" in r.message


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
    assert words in r.hint or words in r.message, r.message


def test_learner_exception_inside_checker_arguments_is_contained():
    def nasty(*args):
        raise KeyError("alpha")
    r = checks.half_bandwidth_size(nasty)
    assert not r.passed and "KeyError" in r.message and "key" in r.hint


def test_feedback_is_deterministic():
    wrong = lambda a, b: a * b / 2  # noqa: E731
    assert checks.half_bandwidth_size(wrong).message == checks.half_bandwidth_size(wrong).message


# ------------------------------------------------------------------------------------------------
# answers


def test_every_question_has_a_computed_answer_that_passes():
    # the verdict itself: checks.answer gives none on a pre-test question of the quiz (tests/test_quiz.py)
    for qid, q in checks.questions().items():
        exp = checks.expected_answer(qid)
        r = checks._answers.verdict(qid, exp)
        _assert_result(r)
        assert r.passed, (qid, r.message)
        r = checks._answers.verdict(qid, lambda exp=exp: exp)  # a function returning it works too
        assert r.passed
        if q.choices:
            assert exp in q.choices
            for letter in q.choices:
                if letter != exp:
                    assert not checks._answers.verdict(qid, letter).passed


def test_answer_values_come_from_the_catalog():
    assert checks.expected_answer("02.ndr_GBps") == catalog.get_link("ib-ndr").line_Gbps_dir / 8
    assert checks.expected_answer("02.h100_nvlink_dir") == catalog.get_gpu("h100").nvlink_GBps_bidir / 2
    s = catalog.get_system("dgx-h100")
    assert checks.expected_answer("03.dgx_h100_bisection") == s.gpus_per_domain / 2 * s.scaleup_GBps_dir


@pytest.mark.parametrize("qid,value,words", [
    ("02.ndr_GBps", lambda: catalog.get_link("ib-ndr").line_Gbps_dir, "gigabits"),
    ("02.h100_nvlink_dir", lambda: catalog.get_gpu("h100").nvlink_GBps_bidir, "both directions"),
    ("03.dgx_h100_bisection", lambda: 2 * checks.expected_answer("03.dgx_h100_bisection"), "direction"),
    ("08.interval_100k", lambda: 60 * checks.expected_answer("08.interval_100k"), "seconds"),
    ("01.nodes_405b", lambda: 8 * checks.expected_answer("01.nodes_405b"), None),
    ("06.ecmp_32", lambda: 1 - checks.expected_answer("06.ecmp_32"), "busy"),
    ("04b.bigger_is_faster", lambda: "b", "loops"),
    ("04b.bigger_is_faster", lambda: "c", "loops"),
])
def test_plausible_wrong_answers(qid, value, words):
    r = checks.answer(qid, value())
    assert not r.passed
    if words:
        assert words in r.hint, r.message


def test_answer_bad_inputs_never_raise():
    def stub():
        raise NotImplementedError()
    r = checks.answer("02.ndr_GBps", stub)
    assert r.status == "todo" and "not done yet" in r.message.lower()
    r = checks.answer("02.ndr_GBps", lambda: 1 / 0)
    assert r.status == "error" and "ZeroDivisionError" in r.message
    assert checks.answer("02.ndr_GBps", "fifty").status == "error"
    assert checks.answer("02.ndr_GBps", None).status == "error"
    assert checks.answer("02.bound_64k", 3).status == "error"
    assert checks.answer("02.bound_64k", "z").status == "error"
    assert checks.answer("02.bound_64k", " (A) ").passed
    assert checks.answer("no-such-question", 1).status == "error"
    assert checks.answer("02.ndr_GBps", ...).status == "todo"


def test_numeric_answer_does_not_reveal_the_value_when_wrong():
    r = checks.answer("02.ndr_GBps", 7.0)
    assert f"{checks.expected_answer('02.ndr_GBps'):g}" not in r.message


# ------------------------------------------------------------------------------------------------
# chapter 04 extras: trace comparison and predict-then-measure (with fake results: no processes)


class _Ev:
    def __init__(self, rank, step, peer, chunk):
        self.rank, self.step, self.peer, self.chunk, self.iteration = rank, step, peer, chunk, 0


class _Run:
    op, algo, procs, nbytes, correct = "allreduce", "ring", 4, 4 * 2**20, True

    def __init__(self, time_s=0.01, trace=()):
        self.time_s, self.trace = time_s, list(trace)


def test_ring_schedule_matches_a_trace():
    events = [_Ev(dst, s, src, c) for s, step in enumerate(ring(4)) for src, dst, c in step]
    r = checks.ring_schedule(ring, trace=_Run(trace=events))
    assert r.passed and any("identical" in x for x in r.right)
    shifted = [_Ev(dst, s, src, (c + 1) % 4) for s, step in enumerate(ring(4)) for src, dst, c in step]
    r = checks.ring_schedule(ring, trace=_Run(trace=shifted))
    assert r.passed and any("differently" in n for n in r.notes)


def test_prediction_vs_measurement():
    a, b = 200e-6, 1e9
    run = _Run(time_s=0.02)
    model = 2 * 3 * (a + run.nbytes / 4 / b)
    r = checks.prediction_vs_measurement(model, run, alpha_s=a, beta_Bps=b)
    assert r.passed and "measured" in r.message
    r = checks.prediction_vs_measurement(3 * (a + run.nbytes / 4 / b), run, alpha_s=a, beta_Bps=b)
    assert not r.passed and "2(p−1)" in r.hint

    def stub():
        raise NotImplementedError()
    r = checks.prediction_vs_measurement(stub, run, alpha_s=a, beta_Bps=b)
    assert r.status == "todo"
    r = checks.prediction_vs_measurement(model, "not a run", alpha_s=a, beta_Bps=b)
    assert not r.passed and "pg.run" in r.message


def test_record_prediction():
    assert checks.record_prediction(lambda: 0.0075).passed
    assert "7.5 ms" in checks.record_prediction(0.0075).message

    def stub():
        raise NotImplementedError()
    assert checks.record_prediction(stub).status == "todo"
    assert not checks.record_prediction(lambda: None).passed
    assert not checks.record_prediction(-1).passed
    assert checks.record_prediction(lambda: 1 / 0).status == "error"
