"""The classroom hub: two simulated learners log in through the REST API, start servers and run chapter 04's
real multi-process demos at once; every result is correct and nothing is left behind.

The full load (8 learners) is ``benchmarks/hub_load.py``; this is its small sample (about a minute).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from nvcourse.devtools import hub as hubmod
from nvcourse.devtools.hub_load import simulate

pytestmark = pytest.mark.slow
needs_npm = pytest.mark.skipif(shutil.which("npm") is None,
                               reason="the hub's proxy comes from npm: apt-get install npm")


def _processes_in(folder: Path) -> list[int]:
    """Processes whose working directory is under ``folder`` (the hub, its servers and their kernels)."""
    found = []
    for proc in psutil.process_iter(["pid"]):
        try:
            if proc.cwd().startswith(str(folder)):
                found.append(proc.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def test_prepare_refuses_a_bad_user_count(tmp_path: Path):
    with pytest.raises(ValueError, match="--users must be between 1 and 999"):
        hubmod.prepare(tmp_path, users=0, password="x" * 8)


def test_stop_strays_stops_the_hubs_processes_in_the_homes_and_nothing_else(tmp_path: Path):
    # a learner's server runs in a session of its own, out of the hub's process group
    home = tmp_path / "homes" / "learner01"
    home.mkdir(parents=True)
    sleep = [sys.executable, "-c", "import time; time.sleep(60)"]
    env = {**os.environ, "JUPYTERHUB_USER": "learner01"}  # what the hub gives every server
    server = subprocess.Popen(sleep, cwd=home, env=env, start_new_session=True)
    other = subprocess.Popen(sleep, cwd=tmp_path, env=env, start_new_session=True)
    shell = subprocess.Popen(sleep, cwd=home, start_new_session=True)  # the instructor's own, in a learner's home
    try:
        assert hubmod.stop_strays(tmp_path, wait_s=5) == [server.pid]
        assert server.wait(timeout=5) is not None
        assert other.poll() is None  # the hub folder itself (and anything outside the homes) is left alone
        assert shell.poll() is None  # not started by the hub
    finally:
        for proc in (server, other, shell):
            proc.kill()
            proc.wait()


@needs_npm
def test_two_learners_run_the_chapter_04_demo_at_once(tmp_path: Path):
    shm_before = set(os.listdir("/dev/shm"))
    with hubmod.Hub(tmp_path, users=2) as hub:
        pid = hub.proc.pid
        runs = simulate(hub, 2)
        running = _processes_in(tmp_path)
        homes = sorted(p.name for p in (tmp_path / "homes").iterdir())
        users = hub.api("GET", "/users")
    assert [r.error for r in runs] == ["", ""]
    assert all(r.correct for r in runs)
    names = [n for r in runs for n in r.shm_names]
    assert names and len(names) == len(set(names)), "two learners used the same shared-memory name"
    assert homes == ["learner01", "learner02"]
    for home in homes:  # each learner got the learner copy: chapters, no solutions
        assert (tmp_path / "homes" / home / "notebooks" / "04_collectives_and_allreduce.ipynb").is_file()
        assert not (tmp_path / "homes" / home / "solutions").exists()
    assert {u["name"] for u in users} >= {"learner01", "learner02", "instructor"}
    assert set(os.listdir("/dev/shm")) - shm_before == set()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert len(running) >= 3  # hub + two servers (+ kernels): the check below can see them
    assert _processes_in(tmp_path) == []
