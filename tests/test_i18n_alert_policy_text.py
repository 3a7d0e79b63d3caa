"""The alert policy's words (the symbol-error window, the link-health rule's 'when' column) are data-file text shown
to learners: a French reader sees them in French, an English one byte for byte as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = """
from nvcourse.observability import counters
pol = counters.alert_policy()
print(pol.symbol_errors_window)
for r in counters.ib_link_rule():
    print(r["when"])
print(next(r[1] for r in counters.alert_thresholds(0.5).rows() if "SymbolError" in r[0]))
"""


def _shown(language: str) -> list[str]:
    env = {"NVCOURSE_LANG": language, "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()


def test_english_keeps_the_data_files_words():
    lines = _shown("en")
    assert lines[0] == "three hours running"
    assert lines[1] == "warn at ≥ 1 new per hour per port, three hours running; critical at ≥ 100 per hour"
    assert lines[2] == "warn at the first flap in a day (1), critical at 3 in a day"
    assert lines[3] == "rising trend: the link's margin shrinking"
    assert lines[-1] == "≥ 1 new per hour, three hours running"


def test_french_reads_the_window_and_every_when_in_french():
    lines = _shown("fr")
    assert lines[0] == "trois heures d'affilée"
    assert "trois heures d'affilée" in lines[1] and "par heure et par port" in lines[1]
    assert lines[2].startswith("avertissement au premier décrochage")
    assert lines[-1].endswith("trois heures d'affilée")
    shown = "\n".join(lines)
    for english in ("three hours running", "rising trend", "read beside", "warn at", "per hour"):
        assert english not in shown, english
