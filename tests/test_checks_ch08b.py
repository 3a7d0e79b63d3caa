"""Chapter 08b checkers: a solution passes, the stub is 'not done yet', typical mistakes get their hint."""

from __future__ import annotations

from nvcourse import checks
from nvcourse.checks import ch08b
from nvcourse.observability import drill


def _stub(*_args):
    raise NotImplementedError()


def test_tolerable_loss():
    assert ch08b.tolerable_loss(lambda c, s: s / (c + s)).passed
    assert ch08b.tolerable_loss(_stub).status == "todo"
    bad = ch08b.tolerable_loss(lambda c, s: s / c)
    assert not bad.passed and "s / c" in bad.hint


def test_pkeys_can_talk():
    def right(a, b):
        return (a & 0x7FFF) == (b & 0x7FFF) and bool((a | b) & 0x8000)

    assert ch08b.pkeys_can_talk(right).passed
    assert "low 15 bits" in ch08b.pkeys_can_talk(lambda a, b: a == b).hint
    assert "full member" in ch08b.pkeys_can_talk(lambda a, b: (a & 0x7FFF) == (b & 0x7FFF)).hint
    assert ch08b.pkeys_can_talk(lambda a, b: 1).status == "fail"  # an int is not a bool


def test_xmit_data_bytes():
    assert ch08b.xmit_data_bytes(lambda a, b: (b - a) * 4).passed
    assert "4-byte words" in ch08b.xmit_data_bytes(lambda a, b: b - a).hint


def test_questions():
    assert checks.answer("08b.noisy_rate", checks.expected_answer("08b.noisy_rate")).passed
    assert "alone" in checks.answer("08b.noisy_rate", 50.0).hint
    assert checks.answer("08b.bind", "c").passed and not checks.answer("08b.bind", "a").passed


def test_drill_answer():
    run = drill.incident("B", 2)
    assert ch08b.drill_answer("B", run.fault, run.component, seed=2).passed
    wrong = next(f for f in drill.FAULTS if f != run.fault)
    r = ch08b.drill_answer("B", wrong, run.component, seed=2)
    assert not r.passed and any("the fault is not" in w for w in r.wrong)
    assert ch08b.drill_answer("B", "gremlins", "node0").status == "error"


def test_drill_answer_takes_a_function_and_reports_the_stub():
    run = drill.incident("C", 0)
    assert ch08b.drill_answer("C", lambda: (run.fault, run.component)).passed
    assert ch08b.drill_answer("C", _stub).status == "todo"
    assert ch08b.drill_answer("C", lambda: "node2").status == "error"


def test_pkeys_can_talk_shows_true_and_false_not_numbers():
    """The exercise walkthrough answered 08b exercise 1 wrongly: the box said "returned 0.0, expected 1" for a
    question whose answers are True and False."""
    r = ch08b.pkeys_can_talk(lambda a, b: not ((a & 0x7FFF) == (b & 0x7FFF) and (a >> 15 or b >> 15)))
    assert not r.passed and r.wrong
    for line in r.wrong[:3]:
        assert "returned False, expected True" in line or "returned True, expected False" in line, line


def test_drill_wrong_answer_on_the_ecc_red_herring_names_the_mistake():
    """Walkthrough of 08b exercise 6: answering incident C with the GPU that shows only the one corrected ECC error
    (the drill's red herring) got "not a NVLink errors" and the generic hint, though the notebook promises that
    "a wrong answer names the likely mistake"."""
    run = drill.incident("C", seed=0)
    herring = [c for c, row in run.gpus.items() if row and set(row) == {"ecc_sbe"}]
    assert herring and herring[0] != run.component
    r = checks.drill_answer("C", lambda: ("NVLink errors", herring[0]), seed=0)
    assert not r.passed
    assert "ECC" in r.hint and "noise" in r.hint, r.message
    assert not any(w.startswith("not a ") for w in r.wrong), r.wrong
    assert "the fault is not 'NVLink errors'" in r.wrong
