"""Checkers of chapters 01, 04 and 04b: a wrong row shows two different numbers, a hint names the mistake it
points at, and a prediction within the model's own stated error is accepted."""

from nvcourse import checks as check


def test_ring_protocol_time_never_shows_a_wrong_row_with_equal_numbers():
    def busbw_as_algbw(n, s, b, st, bw):
        return (b + 2 * (n - 1) * st) * 1e-6 + s / (bw * 1e9)

    r = check.ring_protocol_time(busbw_as_algbw)
    assert not r.passed and r.wrong
    for row in r.wrong:
        if " returned " in row:
            got, expected = row.split(" returned ", 1)[1].split(", expected ")
            assert got != expected, row


def test_ring_protocol_time_accepts_a_formula_equal_to_the_last_digits():
    def reordered(n, s, b, st, bw):  # the same formula, another float order
        return s * 2 * (n - 1) / (n * bw * 1e9) + (b + 2 * (n - 1) * st) / 1e6

    assert check.ring_protocol_time(reordered).passed


def test_twelve_bytes_per_parameter_hint_names_the_master_copy():
    r = check.model_state_bytes(lambda p: 12 * p)
    assert not r.passed and "FP32 master copy" in r.hint


class _Run:
    """What ProcessGroup.run returns, as far as the prediction check reads it."""

    def __init__(self, time_s):
        self.time_s, self.procs, self.nbytes, self.correct = time_s, 4, 4 * 2**20, True


def test_a_prediction_within_the_models_error_is_right():
    kw = {"alpha_s": 200e-6, "beta_Bps": 1e9}  # the exercise's link: the model gives 2·3·(α + S/4/β) = 7.49 ms
    assert check.prediction_vs_measurement(8e-3, _Run(8.51e-3), **kw).passed  # 7 % off the model, nearer the run
    assert check.prediction_vs_measurement(7.49e-3, _Run(8.51e-3), **kw).passed
    assert check.prediction_vs_measurement(9.3e-3, _Run(9.5e-3), **kw).passed  # between the model and the run
    r = check.prediction_vs_measurement(9.5e-3, _Run(8.51e-3), **kw)  # 27 % above the model, above the run
    assert not r.passed and "15%" in " ".join(r.wrong)
    assert not check.prediction_vs_measurement(3.7e-3, _Run(8.51e-3), **kw).passed  # p−1 steps: half the model
