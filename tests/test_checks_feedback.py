"""Feedback that says the right thing: a recorded prediction is not "correct", and the four hints a wrong
answer of the walkthrough deserved."""

from __future__ import annotations

from nvcourse import catalog, checks


def test_recording_a_prediction_is_not_shown_as_correct():
    r = checks.record_prediction(0.0075)
    assert r.status == "recorded" and r.passed  # nothing to fix: the comparison comes later
    assert "Correct" not in r.message and "Correct" not in r._repr_html_()
    assert "#2e7d32" not in r._repr_html_()  # not the green of a right answer
    assert "7.5 ms" in r.message and "Recorded" in r.message


def test_stub_message_does_not_repeat_itself():
    def stub(*_args):
        raise NotImplementedError()

    message = checks.ring_time(stub).message.lower()
    assert message.count("not done yet") == 1


def test_ring_time_in_bits_gets_the_bits_hint():
    def in_bits(nbytes, p, alpha_s, beta_Bps):
        return 2 * (p - 1) * (alpha_s + 8 * nbytes / p / beta_Bps)

    r = checks.ring_time(in_bits)
    assert not r.passed and "bits" in r.hint.lower() and "whole buffer" not in r.hint


def test_doubled_nvlink_answer_gets_the_factor_two_hint():
    doubled = 2 * catalog.get_gpu("h100").nvlink_GBps_bidir  # 1800: ×2 where ÷2 was meant
    r = checks.answer("02.h100_nvlink_dir", doubled)
    assert not r.passed and "both directions" in r.hint and "divide" in r.hint.lower()


def test_half_bandwidth_size_factor_two_hint_fits_n_half():
    r = checks.half_bandwidth_size(lambda a, b: 2 * a * b)
    assert not r.passed and "αβ" in r.hint
    for cause in ("per direction", "n−1", "send counted twice"):  # causes of other quantities' ×2, not of n½'s
        assert cause not in r.hint


def test_html_box_renders_backticks_as_code_not_as_raw_backticks():
    """The walkthrough of the exercise notebooks showed "replace the `raise NotImplementedError()` line" with
    literal backticks in every stub's box: the HTML box must show code as code."""

    def stub(*_args):
        raise NotImplementedError()

    html_box = checks.half_bandwidth_size(stub)._repr_html_()
    assert "`" not in html_box
    assert "<code>raise NotImplementedError()</code>" in html_box
    assert "`raise NotImplementedError()`" in checks.half_bandwidth_size(stub).message  # plain text keeps them


def test_html_box_renders_star_emphasis_and_still_escapes():
    box = checks.Result("x", "fail", "a <b> & c", hint="round *up* with `a<b`; 2 * 3 * 4 stays")._repr_html_()
    assert "<em>up</em>" in box and "<code>a&lt;b</code>" in box and "2 * 3 * 4" in box
    assert "a &lt;b&gt; &amp; c" in box


def test_factor_two_hint_names_bandwidth_causes_only_for_bandwidths():
    """Exercise 01 walked with doubled answers: memory, GPU and node counts got "per direction vs bidirectional?
    n vs n−1? a send counted twice?", causes that cannot apply to them. Rates keep the direction cause."""
    doubled = [
        checks.model_state_bytes(lambda p: 32 * p),
        checks.min_gpus(lambda p, m, h: 2 * max(1, -(-16 * p // int(h * m * 1e9)))),
        checks.answer("01.nodes_405b", 24),
    ]
    for r in doubled:
        assert not r.passed and "factor of 2" in r.hint, r.message
        assert "direction" not in r.hint and "n−1" not in r.hint, r.message
    rate = checks.effective_bandwidth(lambda n, a, b: 2 * n / (a + n / b))
    assert not rate.passed and "per direction vs bidirectional" in rate.hint


def test_a_probability_above_one_is_named_as_impossible():
    """06 exercise 2 walked with a doubled answer: 'returned 1.215' for a probability got only the factor-2 hint."""
    r = checks.ecmp_collision_probability(lambda m, k: 2 * (1 - (1 - 1 / k) ** (m - 1)))
    assert not r.passed and "between 0 and 1" in r.hint, r.message
