"""Chapter 04's ping-pong fit on a machine too busy to time: the fit gives up with a one-line ValueError after
FIT_TRIES sweeps, and the chapter's helpers turn it into a one-line note (the notebook never shows a traceback)."""

import json
import re
from pathlib import Path

import pytest

from nvcourse.chapters import ch04_collectives as ch
from nvcourse.collectives import fit

ROOT = Path(__file__).resolve().parents[1]
SIZES = [2**k for k in range(6, 25, 2)]


class _Group:
    """A stand-in for a ProcessGroup: ``pingpong`` returns ``time(n)`` and counts the sweeps asked for."""

    def __init__(self, time):
        self.time = time
        self.calls = 0

    def pingpong(self, nbytes: int, *, iters: int, warmup: int) -> float:
        self.calls += 1
        return self.time(nbytes)


def _busy(nbytes: int) -> float:
    return 1e-3 / nbytes  # other programs took the CPU at the small sizes: times fall as the size grows


def test_a_busy_machine_gets_a_one_line_note_not_a_traceback():
    group = _Group(_busy)
    with pytest.raises(ValueError, match=f"in {fit.FIT_TRIES} sweeps"):
        fit.fit_alpha_beta(_Group(_busy), sizes=SIZES)
    alpha, beta, note = ch.fit_link(group, SIZES)
    assert group.calls == fit.FIT_TRIES * len(SIZES)  # it did try every sweep before giving up
    assert alpha is None and beta is None
    assert note.startswith("⚠ no ping-pong fit this time: ") and "\n" not in note
    assert "run the cell again when the machine is quieter" in note
    line = ch.machine_line(alpha, beta, 25e9, note)
    assert "\n" not in line and note in line and "gamma (numpy add) = 25" in line
    rows = [{"op": "allreduce", "procs": 4, "algo": a, "bytes": 2**20, "time_s": t}
            for a, t in (("ring", 2e-3), ("tree", 3e-3))]
    assert ch.ordering_note(rows, alpha, beta, 25e9).startswith("No model to rank the algorithms by")


def test_a_quiet_machine_gets_its_alpha_and_beta():
    alpha_s, beta_Bps = 10e-6, 5e9
    alpha, beta, note = ch.fit_link(_Group(lambda n: alpha_s + n / beta_Bps), SIZES)
    assert note is None
    assert alpha == pytest.approx(alpha_s, rel=1e-6) and beta == pytest.approx(beta_Bps, rel=1e-6)
    line = ch.machine_line(alpha, beta, 25e9)
    assert "ping-pong fit alpha = 10 µs, beta = 5 GB/s" in line and "\n" not in line


def test_the_notebook_cells_go_through_the_helpers():
    nb = json.loads((ROOT / "notebooks" / "04_collectives_and_allreduce.ipynb").read_text(encoding="utf-8"))
    src = {c["id"]: re.sub(r"\s+", " ", "".join(c["source"])) for c in nb["cells"]}
    assert "fit_alpha_beta(" not in src["c023"] and "ch.fit_link(pg," in src["c023"]
    assert "print(ch.machine_line(alpha, beta, gamma, fit_note))" in src["c023"]
    assert "if fit_note is None else None" in src["c024"]  # no model line to draw without a fit
