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


def _as_a_terminal_would() -> None:
    """In the child, before exec: Ctrl-C's default action, as a terminal's foreground job has it. A suite started in
    the background of a non-interactive shell (a CI script's `cmd &`) inherits SIGINT ignored, and Python then never
    raises KeyboardInterrupt: the tests would measure the harness, not tasks.py."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(script: Path, cwd: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, str(script)], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_as_a_terminal_would)


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
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=_as_a_terminal_would)
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


def _stand_in_hub(tmp_path: Path, name: str = "driver.py") -> tuple[Path, Path]:
    """A driver running ``hub.main`` with a stand-in JupyterHub (its own session, as the real one; its command
    line names jupyterhub) and a ``secrets/`` folder the teardown must remove."""
    hub_dir = tmp_path / "hub"
    (hub_dir / "homes").mkdir(parents=True, exist_ok=True)
    driver = tmp_path / name
    driver.write_text(textwrap.dedent(f"""
        import pathlib, sys
        from nvcourse.devtools import hub
        def prepare(*a, **k):
            pathlib.Path({str(hub_dir)!r}, "secrets").mkdir()
            pathlib.Path({str(hub_dir)!r}, "prepared-by-" + str(__import__("os").getpid())).touch()
            return hub.Prepared(env={{"PATH": ""}}, accounts=False, cert=None, fingerprint="",
                                instructor_file=hub.Path({str(hub_dir)!r}) / "instructor", limits="none (test)")
        hub.prepare = prepare
        hub.hub_command = lambda: [sys.executable, "-c",
            "import pathlib, time; pathlib.Path('hub-started').touch(); time.sleep(120)", "jupyterhub"]
        sys.exit(hub.main(sys.argv[1:] + ["--dir", {str(hub_dir)!r}]))
    """))
    return hub_dir, driver


def _run_hub_main(driver: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, str(driver), *args], cwd=driver.parent, env=env, capture_output=True,
                          text=True, timeout=300)


def test_hub_closed_terminal_stops_everything_and_a_second_start_is_refused(tmp_path: Path):
    hub_dir, driver = _stand_in_hub(tmp_path)
    with _group(_start(driver, tmp_path)) as p:
        _wait_for(hub_dir / "hub-started")
        fake_hub = psutil.Process(p.pid).children(recursive=True)
        # A second start of the same folder: one line naming the stop command; nothing prepared or torn down.
        second = _run_hub_main(driver)
        assert second.returncode == 1 and "Traceback" not in second.stderr
        assert len(second.stderr.strip().splitlines()) == 1 and "--stop --dir" in second.stderr
        assert second.stdout == "" and (hub_dir / "secrets").is_dir() and all(f.is_running() for f in fake_hub)
        assert [f.name for f in hub_dir.glob("prepared-by-*")] == [f"prepared-by-{p.pid}"]
        os.killpg(p.pid, signal.SIGHUP)  # the terminal or the SSH session closes
        p.communicate(timeout=120)
    assert p.returncode == 0
    assert not psutil.wait_procs(fake_hub, timeout=10)[1], "the hub outlived its closed terminal"
    assert not (hub_dir / "secrets").exists() and not (hub_dir / "hub.lock").exists()
    assert (hub_dir / "hub-console.log").read_text().strip().splitlines()[-1] == "hub: stopped"


@pytest.mark.parametrize("parent", ["alive", "killed"])
def test_hub_stop_stops_a_hub_started_earlier(tmp_path: Path, parent: str):
    hub_dir, driver = _stand_in_hub(tmp_path)
    with _group(_start(driver, tmp_path)) as p:
        _wait_for(hub_dir / "hub-started")
        fake_hub = psutil.Process(p.pid).children(recursive=True)
        if parent == "killed":  # its console died without a word: its JupyterHub, in a session of its own, runs on
            os.kill(p.pid, signal.SIGKILL)
            p.wait(30)
            assert all(f.is_running() for f in fake_hub)
            refused = _run_hub_main(driver)
            assert refused.returncode == 1 and "--stop --dir" in refused.stderr
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        stop = subprocess.run([sys.executable, "-m", "nvcourse.devtools.hub", "--stop", "--dir", str(hub_dir)],
                              env=env, capture_output=True, text=True, timeout=300)
        assert stop.returncode == 0 and stop.stderr.startswith("hub: stopped"), stop.stderr
        if parent == "alive":
            p.communicate(timeout=60)
            assert p.returncode == 0
    assert not psutil.wait_procs(fake_hub, timeout=10)[1], "--stop left the hub running"
    assert not (hub_dir / "secrets").exists() and not (hub_dir / "hub.lock").exists()
    again = subprocess.run([sys.executable, "-m", "nvcourse.devtools.hub", "--stop", "--dir", str(hub_dir)],
                           env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "no hub" in again.stderr


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
