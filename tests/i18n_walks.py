"""Helpers of the tests that walk what a chapter shows in each language (tests/test_i18n.py, test_i18n_rest.py).

A walk is a small script run in a fresh interpreter (questions are registered, so their ``_()`` strings read, when
their module is imported) that writes everything a learner could be shown; a catalog entry is shown when each of
its fixed parts (between ``{field}`` placeholders) is found in that text.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import polib

from nvcourse.devtools import i18n_catalog

ROOT = Path(__file__).resolve().parents[1]


def run_walk(script: str, language: str) -> str:
    """What ``script`` writes to stdout with the kernel's language set to ``language``, HTML entities read too."""
    env = {**os.environ, "NVCOURSE_LANG": language, "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout + html.unescape(done.stdout)


def entries(*paths: str) -> list[polib.POEntry]:
    """The French catalog's live entries extracted from any of ``paths`` (``nvcourse/...py``)."""
    po = polib.pofile(str(i18n_catalog.po_path("fr", "nvcourse")))
    return [e for e in po if not e.obsolete and any(o[0] in paths for o in e.occurrences)]


def fragments(text: str) -> list[str]:
    """The fixed parts of a message (between its ``{field}`` placeholders), those long enough to look for."""
    return [f for f in re.split(r"\{\w+\}", text) if len(f.strip()) > 2]
