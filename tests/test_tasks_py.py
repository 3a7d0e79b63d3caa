"""tasks.py, the two-command promise: every sub-command explains itself with --help before anything is installed,
and the one helper that installs system packages says what and why first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import tasks  # noqa: E402  (tasks.py is a script at the repository root, not a package module)


@pytest.mark.parametrize("command", sorted(tasks.COMMANDS))
def test_every_command_has_help_and_installs_nothing_to_show_it(command: str, tmp_path: Path):
    venv = tmp_path / "no-venv"
    done = subprocess.run([sys.executable, str(ROOT / "tasks.py"), command, "--help"], cwd=tmp_path,
                          env={**os.environ, "NVCOURSE_VENV": str(venv)}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: python3 tasks.py {command}")
    assert tasks.COMMANDS[command][1] in done.stdout  # its one-line summary
    assert f"python3 tasks.py {command} -- --help" in done.stdout  # how to reach the tool's own options
    assert not venv.exists() and "[tasks]" not in done.stdout


def test_top_level_help_lists_every_command_and_no_command_is_a_usage_error(tmp_path: Path):
    env = {**os.environ, "NVCOURSE_VENV": str(tmp_path / "no-venv")}
    done = subprocess.run([sys.executable, str(ROOT / "tasks.py"), "--help"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and all(name in done.stdout for name in tasks.COMMANDS)
    bad = subprocess.run([sys.executable, str(ROOT / "tasks.py"), "frobnicate"], env=env, capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "python3 tasks.py test" in bad.stdout


def test_arguments_after_the_command_go_to_the_tool(monkeypatch):
    seen = []
    monkeypatch.setitem(tasks.COMMANDS, "lint", (lambda args: seen.append(args) or 0, *tasks.COMMANDS["lint"][1:]))
    assert tasks.main(["lint", "--fix", "nvcourse/cli.py"]) == 0
    assert tasks.main(["lint", "--", "--help"]) == 0
    assert seen == [["--fix", "nvcourse/cli.py"], ["--help"]]


def test_system_packages_are_installed_by_one_helper_that_says_what_and_why(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(tasks, "run", lambda cmd, **kw: calls.append(cmd) or 0)
    monkeypatch.setattr(tasks.shutil, "which", lambda name: "/usr/bin/apt-get" if name == "apt-get" else None)
    monkeypatch.setattr(tasks.os, "geteuid", lambda: 0, raising=False)
    assert tasks.apt_install("Open MPI (mpirun)", tasks.OPENMPI_PACKAGES, "the MPI engine tests")
    out = capsys.readouterr().out
    assert "installing Open MPI (mpirun) from Debian's packages (openmpi-bin, libopenmpi-dev) for the MPI engine " \
           "tests" in out
    assert calls[0] == ["apt-get", "update", "-q"] and calls[1][-2:] == list(tasks.OPENMPI_PACKAGES)
    monkeypatch.setattr(tasks.os, "geteuid", lambda: 1000, raising=False)
    calls.clear()
    assert not tasks.apt_install("Chromium", tasks.CHROMIUM_PACKAGES, "the browser test")
    assert calls == [] and "Chromium not found and cannot install it (needs root and apt-get); the browser test " \
                           "will skip" in capsys.readouterr().out
