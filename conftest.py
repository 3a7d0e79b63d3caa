"""Session-wide test setup that must reach the notebooks too (nbval's kernels inherit this environment)."""

from __future__ import annotations

import os
import shutil
import tempfile

_QUIZ_DIR: str | None = None


def pytest_configure(config) -> None:
    """The quiz notebooks save a learner's answers in the home folder; under test they go to a folder of the
    session's own, removed at the end, so a test run leaves nothing in the home folder of the machine."""
    global _QUIZ_DIR
    if "NVCOURSE_QUIZ_DIR" not in os.environ:
        _QUIZ_DIR = tempfile.mkdtemp(prefix="nvcourse-quiz-")
        os.environ["NVCOURSE_QUIZ_DIR"] = _QUIZ_DIR


def pytest_unconfigure(config) -> None:
    if _QUIZ_DIR:
        shutil.rmtree(_QUIZ_DIR, ignore_errors=True)
        os.environ.pop("NVCOURSE_QUIZ_DIR", None)
