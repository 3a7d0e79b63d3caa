"""Ctrl-C on the long-running project commands (``python3 tasks.py lab|hub|test``, the classroom hub), and how
``tasks.py lab`` starts JupyterLab as root.

A terminal's Ctrl-C reaches the whole foreground process group. ``tasks.py`` must let its command finish
stopping (JupyterLab's confirmation, the hub's shutdown of the learners' servers) and then exit 130 with one
line, never a traceback; the hub's own shutdown must survive a second Ctrl-C (it then kills at once).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(os.name != "posix", reason="sends POSIX signals to process groups")


def _start(script: Path, cwd: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, str(script)], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _wait_for(path: Path, timeout_s: float = 120) -> None:
    # generous: on a loaded 2-core machine two Python start-ups (driver, then child) can take tens of seconds
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


@contextlib.contextmanager
def _group(p: subprocess.Popen):
    """``p``, whose process group is killed on the way out if still running: a failing test leaves nothing."""
    try:
        yield p
    finally:
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(30)


def test_tasks_run_lets_the_command_clean_up_then_exits_130(tmp_path: Path):
    # the command needs 1 s to clean up after Ctrl-C: subprocess.call would have killed it after 0.25 s
    child = tmp_path / "child.py"
    child.write_text(textwrap.dedent("""
        import pathlib, time
        pathlib.Path("started").touch()
        try:
            time.sleep(60)
        except KeyboardInterrupt:
            time.sleep(1.0)
            pathlib.Path("cleaned").touch()
            raise SystemExit(1)
    """))
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        import tasks
        tasks.run([sys.executable, "child.py"])
        print("not reached")
    """))
    with _group(_start(driver, tmp_path)) as p:
        _wait_for(tmp_path / "started")
        os.killpg(p.pid, signal.SIGINT)  # what the terminal does
        out, err = p.communicate(timeout=120)
    assert (tmp_path / "cleaned").exists(), "the command was killed before it could clean up"
    assert p.returncode == 130
    assert "Traceback" not in err and "not reached" not in out
    assert "[tasks] interrupted (the command exited with status 1)" in out


def test_tasks_py_interrupted_while_creating_its_venv_prints_one_line(tmp_path: Path):
    # Ctrl-C while tasks.py itself works (creating .venv, before any command runs)
    env = dict(os.environ, NVCOURSE_VENV=str(tmp_path / "venv"))
    p = subprocess.Popen([sys.executable, str(ROOT / "tasks.py"), "lint"], cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    with _group(p):
        first = p.stdout.readline()
        assert first.startswith("[tasks] creating virtual environment"), first
        time.sleep(0.3)
        os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=300)
    assert p.returncode == 130 and "Traceback" not in err, err
    assert out.strip().splitlines()[-1] == "[tasks] interrupted"


def test_hub_survives_a_second_ctrl_c_and_kills_at_once(tmp_path: Path):
    # a stand-in hub that ignores SIGTERM: the first Ctrl-C would wait 20 s for it; the second kills it now
    hub_dir = tmp_path / "hub"
    (hub_dir / "homes").mkdir(parents=True)
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent(f"""
        import sys
        from nvcourse.devtools import hub
        hub.prepare = lambda *a, **k: hub.Prepared(env={{"PATH": ""}}, accounts=False, cert=None, fingerprint="",
                                                   instructor_file=hub.Path({str(hub_dir)!r}) / "instructor",
                                                   limits="none (test)")
        hub.hub_command = lambda: [sys.executable, "-c",
            "import pathlib, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "pathlib.Path('hub-started').touch(); time.sleep(120)"]
        sys.exit(hub.main(["--dir", {str(hub_dir)!r}]))
    """))
    p = _start(driver, tmp_path)
    _wait_for(hub_dir / "hub-started")
    fake_hub = [c for c in psutil.Process(p.pid).children(recursive=True)]
    assert fake_hub
    os.kill(p.pid, signal.SIGINT)
    time.sleep(0.5)
    t0 = time.monotonic()
    os.kill(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert time.monotonic() - t0 < 10
    assert p.returncode == 0 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == "hub: stopped"
    gone, alive = psutil.wait_procs(fake_hub, timeout=5)
    assert not alive, "the hub's process outlived the second Ctrl-C"


@pytest.mark.parametrize(("euid", "passed"), [(0, True), (1000, False)])
def test_tasks_lab_as_root_passes_allow_root(monkeypatch, euid, passed):
    # JupyterLab exits at once as root ("Running as root is not recommended. Use --allow-root to bypass.")
    sys.path.insert(0, str(ROOT))
    import tasks

    calls = []
    monkeypatch.setattr(tasks, "ensure_env", lambda **kw: Path("py"))
    monkeypatch.setattr(tasks, "run", lambda cmd, **kw: calls.append(cmd) or 0)
    monkeypatch.setattr(tasks.os, "geteuid", lambda: euid)
    assert tasks.cmd_lab(["--no-browser"]) == 0
    assert ("--allow-root" in calls[0]) is passed and calls[0][-2 if passed else -1] == "--no-browser"
    calls.clear()
    tasks.cmd_lab(["--allow-root"])
    assert calls[0].count("--allow-root") == 1


def test_a_third_ctrl_c_kills_a_command_that_will_not_stop(tmp_path: Path):
    child = tmp_path / "child.py"
    child.write_text(textwrap.dedent("""
        import pathlib, signal, time
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        pathlib.Path("started").touch()
        time.sleep(120)
    """))
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        import tasks
        tasks.run([sys.executable, "child.py"])
    """))
    with _group(_start(driver, tmp_path)) as p:
        _wait_for(tmp_path / "started")
        stubborn = psutil.Process(p.pid).children()
        # One Ctrl-C at a time, a second apart: signals sent faster than a loaded machine schedules the driver
        # merge into one. Three are needed; a few more are allowed for merged ones, never a hang.
        for _ in range(6):
            os.killpg(p.pid, signal.SIGINT)
            try:
                p.wait(1.0)
                break
            except subprocess.TimeoutExpired:
                continue
        out, err = p.communicate(timeout=120)
    assert p.returncode == 130 and "Traceback" not in err
    assert "[tasks] interrupted (the command exited with status -9)" in out
    assert not psutil.wait_procs(stubborn, timeout=5)[1]
