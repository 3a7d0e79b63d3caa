"""Chapter 04b's checkers: the solution passes, a stub is 'not done yet', typical mistakes get their hint."""

import pytest

from nvcourse import checks as check
from nvcourse.checks import expected_answer


def ring(n, nbytes, base_us, step_us, busbw_GBps):  # written from the formula, not from the package
    return (base_us + 2 * (n - 1) * step_us) * 1e-6 + nbytes / (busbw_GBps * 1e9 * n / (2 * (n - 1)))


def cross(la, ba, lb, bb):
    return (lb - la) / (1 / ba - 1 / bb)


def switch(sizes, times, min_bytes):
    r = [(times[i] / times[i - 1], sizes[i]) for i in range(1, len(sizes)) if sizes[i - 1] >= min_bytes]
    return min(r)[1]


def stub(*args):
    raise NotImplementedError()


@pytest.mark.parametrize("checker, solution", [(check.ring_protocol_time, ring), (check.crossover_bytes, cross),
                                               (check.protocol_switch, switch)])
def test_solution_passes_and_stub_is_todo(checker, solution):
    assert checker(solution).passed
    r = checker(stub)
    assert not r.passed and r.status == "todo"


@pytest.mark.parametrize("mistake, words", [
    (lambda n, s, b, st, bw: 2 * (n - 1) * st * 1e-6 + s / (bw * 1e9 * n / (2 * (n - 1))), "base latency"),
    (lambda n, s, b, st, bw: (b + (n - 1) * st) * 1e-6 + s / (bw * 1e9 * n / (2 * (n - 1))), "2(n−1)"),
    (lambda n, s, b, st, bw: (b + 2 * (n - 1) * st) * 1e-6 + s / (bw * 1e9), "busbw is not algbw"),
])
def test_ring_mistakes_are_named(mistake, words):
    r = check.ring_protocol_time(mistake)
    assert not r.passed and words in r.message


def test_crossover_and_switch_mistakes_are_named():
    r = check.crossover_bytes(lambda la, ba, lb, bb: (lb - la) * (bb - ba))
    assert not r.passed and "inverses" in r.message
    r = check.protocol_switch(lambda s, t, m: switch(s, t, 0))
    assert not r.passed and "min_bytes" in r.message
    r = check.protocol_switch(lambda s, t, m: s[s.index(switch(s, t, m)) - 1])
    assert not r.passed and "just before the bend" in r.message


def test_questions_are_computed_by_the_model():
    assert expected_answer("04b.pick_1k") == "a"  # ring/LL: 15 µs against NVLS's 25 µs
    assert expected_answer("04b.kink_protocol") == "a"
    assert 2 < expected_answer("04b.nvls_speedup_72") < 6  # a few times, not ~19x
    assert check.answer("04b.nvls_speedup_72", expected_answer("04b.nvls_speedup_72")).passed
    r = check.answer("04b.pick_1k", "b")
    assert not r.passed and "25 µs" in r.message
