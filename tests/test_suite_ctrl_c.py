"""Ctrl-C stops the test suite even where a library turns the KeyboardInterrupt into an error of its own, as
Playwright's sync API does during the browser tests (tests/browser/conftest.py, ``ctrl_c_stops_the_session``); and
SIGTERM ends it with the fixtures' teardown, so a server the browser tests started in a session of its own is stopped
(``sigterm_stops_the_session``; a sleeping stand-in process takes JupyterLab's place, which starts in tens of
seconds)."""

from __future__ import annotations

import os
import signal
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


# a session fixture that starts a process in a session of its own and stops it in its finally, as the ``lab``
# fixture does JupyterLab; the tests send SIGTERM to pytest itself (``kill PID``), or swallow what it raises
STAND_IN = """
import os, signal, subprocess, sys
from pathlib import Path

import pytest

signal.signal(signal.SIGTERM, signal.SIG_DFL)  # as a shell starts pytest, whatever the outer run was given

@pytest.fixture(scope="session")
def server():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)
    Path("server.pid").write_text(str(proc.pid))
    try:
        yield proc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
        Path("server.stopped").write_text("yes")

def pytest_unconfigure(config):
    Path("handler.after").write_text(repr(signal.getsignal(signal.SIGTERM)))
"""

SIGTERM_TESTS = {
    "killed": """
import os, signal

def test_first(server):
    os.kill(os.getpid(), signal.SIGTERM)

def test_second(server):
    pass
""",
    "swallowed": """
import os, signal

def test_first(server):
    try:
        os.kill(os.getpid(), signal.SIGTERM)
    except KeyboardInterrupt:  # turned into another error, as Playwright's sync API does
        raise RuntimeError("Target page, context or browser has been closed") from None

def test_second(server):
    pass
""",
}


def run_sigterm(tmp_path: Path, case: str, with_fixture: bool) -> tuple[subprocess.CompletedProcess, int]:
    """pytest run on the stand-in, and the stand-in's pid."""
    fixture = f"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("browser_conftest", {str(ROOT / "tests/browser/conftest.py")!r})
browser = sys.modules["browser_conftest"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(browser)
sigterm_stops_the_session = browser.sigterm_stops_the_session
"""
    (tmp_path / "conftest.py").write_text((fixture if with_fixture else "") + STAND_IN, encoding="utf-8")
    (tmp_path / "test_term.py").write_text(SIGTERM_TESTS[case], encoding="utf-8")
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                        "--rootdir", str(tmp_path), "-c", "/dev/null", str(tmp_path)],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    return p, int((tmp_path / "server.pid").read_text())


def gone(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (ProcessLookupError, FileNotFoundError):
        return True


@pytest.mark.skipif(sys.platform != "linux", reason="sends a POSIX signal to itself and reads /proc")
@pytest.mark.parametrize("case", ["killed", "swallowed"])
def test_sigterm_stops_the_run_and_the_server(tmp_path, case):
    p, pid = run_sigterm(tmp_path, case, with_fixture=True)
    out = p.stdout[-2000:] + p.stderr[-2000:]
    stopped = gone(pid)
    if not stopped:
        os.kill(pid, signal.SIGKILL)  # the stand-in this test started, left running by a failure
    assert p.returncode == 2, out  # pytest's "interrupted", after the teardown
    assert stopped and (tmp_path / "server.stopped").exists(), out
    assert "test_second" not in p.stdout and "passed" not in p.stdout, out
    if case == "swallowed":
        assert "terminated (SIGTERM) during the browser tests" in p.stdout and "1 failed" in p.stdout, out
    assert (tmp_path / "handler.after").read_text() == repr(signal.SIG_DFL)  # the previous handler is back


@pytest.mark.skipif(sys.platform != "linux", reason="sends a POSIX signal to itself and reads /proc")
def test_without_it_sigterm_leaves_the_server_running(tmp_path):
    # the case the fixture exists for: Python's default ends pytest at once, no finally runs
    p, pid = run_sigterm(tmp_path, "killed", with_fixture=False)
    try:
        assert p.returncode == -signal.SIGTERM and not (tmp_path / "server.stopped").exists()
        assert not gone(pid)
    finally:
        os.kill(pid, signal.SIGKILL)  # the stand-in this test started
