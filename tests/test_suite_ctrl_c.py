"""Ctrl-C stops the test suite even where a library turns the KeyboardInterrupt into an error of its own, as
Playwright's sync API does during the browser tests (tests/browser/conftest.py, ``ctrl_c_stops_the_session``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SWALLOWING_TESTS = """
import os, signal

def test_first():
    try:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, turned into another error as Playwright does
    except KeyboardInterrupt:
        raise RuntimeError("Target page, context or browser has been closed") from None

def test_second():
    pass
"""


def run_pytest(tmp_path: Path, with_fixture: bool) -> subprocess.CompletedProcess:
    conftest = f"""
        import importlib.util, sys
        spec = importlib.util.spec_from_file_location("browser_conftest", {str(ROOT / "tests/browser/conftest.py")!r})
        browser = sys.modules["browser_conftest"] = importlib.util.module_from_spec(spec)  # its dataclass looks it up
        spec.loader.exec_module(browser)
        ctrl_c_stops_the_session = browser.ctrl_c_stops_the_session
    """
    (tmp_path / "conftest.py").write_text(textwrap.dedent(conftest) if with_fixture else "", encoding="utf-8")
    (tmp_path / "test_swallow.py").write_text(SWALLOWING_TESTS, encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), "-c", "/dev/null", str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(sys.platform == "win32", reason="sends a POSIX signal to itself")
def test_ctrl_c_in_a_browser_test_stops_the_run(tmp_path):
    p = run_pytest(tmp_path, with_fixture=True)
    assert p.returncode == 2, p.stdout[-2000:]  # pytest's "interrupted"
    assert "interrupted (Ctrl-C) during the browser tests" in p.stdout
    assert "test_second" not in p.stdout and "1 failed" in p.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="sends a POSIX signal to itself")
def test_without_it_the_run_would_go_on(tmp_path):
    # the case the fixture exists for: the swallowed Ctrl-C leaves pytest running the next test
    p = run_pytest(tmp_path, with_fixture=False)
    assert p.returncode == 1 and "1 failed, 1 passed" in p.stdout, p.stdout[-2000:]
