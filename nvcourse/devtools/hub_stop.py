"""Stopping the classroom hub and cleaning up after it, and the lock that keeps one hub per state folder.

A running hub holds ``DIR/hub.lock`` (an advisory lock, released by the kernel when its process dies, so a
killed hub never leaves a stale lock) which names its pid and its JupyterHub's. A second start of the same
folder is refused while that lock is held or that JupyterHub still runs (:func:`acquire`). ``tasks.py hub
--stop`` (:func:`stop_running`) stops a hub of that folder started earlier, even one whose console is gone:
it asks the hub to stop as Ctrl-C does (SIGTERM), ends its JupyterHub if it outlived it, then runs
:func:`teardown` (learners' files collected, accounts, homes, control groups and secrets removed).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

from . import hub_accounts as accounts

LOCK = "hub.lock"


class HubRunning(RuntimeError):
    """A hub of this state folder is running (exit status 1)."""


def stop_command(hub_dir: Path) -> str:
    return f"sudo python3 tasks.py hub --stop --dir {Path(hub_dir).resolve()}"


def acquire(hub_dir: Path) -> int:
    """Take ``DIR/hub.lock`` for this process; returns its descriptor (keep it open while the hub runs).

    Raises :class:`HubRunning` (naming the stop command) when a hub of this folder holds it or its JupyterHub
    still runs; nothing is changed then."""
    hub_dir = Path(hub_dir)
    hub_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(hub_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        pid = _read(hub_dir).get("pid", "?")
        raise HubRunning(f"a hub of {hub_dir} is already running (pid {pid}); stop it with: "
                         f"{stop_command(hub_dir)}") from None
    orphan = _jupyterhub_alive(hub_dir)
    if orphan:
        os.close(fd)
        raise HubRunning(f"the JupyterHub of an earlier hub of {hub_dir} is still running (pid {orphan}); stop "
                         f"it with: {stop_command(hub_dir)}")
    record(fd, jupyterhub=None)
    return fd


def record(fd: int, *, jupyterhub: int | None) -> None:
    """Write this process's pid and its JupyterHub's into the held lock file."""
    data = json.dumps({"pid": os.getpid(), "jupyterhub": jupyterhub}).encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)


def release(hub_dir: Path, fd: int | None) -> None:
    if fd is None:
        return
    with contextlib.suppress(OSError):
        (Path(hub_dir) / LOCK).unlink()
    with contextlib.suppress(OSError):
        os.close(fd)


def _read(hub_dir: Path) -> dict:
    try:
        data = json.loads((Path(hub_dir) / LOCK).read_text() or "{}")
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _jupyterhub_alive(hub_dir: Path) -> int | None:
    """The pid of a JupyterHub of this folder still running (from the lock file or JupyterHub's own pid file)."""
    import psutil

    pids = [_read(hub_dir).get("jupyterhub")]
    with contextlib.suppress(OSError, ValueError):
        pids.append(int((Path(hub_dir) / "jupyterhub.pid").read_text().strip()))
    for pid in pids:
        try:
            proc = psutil.Process(int(pid))
            if any("jupyterhub" in part for part in proc.cmdline()) and proc.cwd() == str(Path(hub_dir).resolve()):
                return proc.pid
        except (TypeError, ValueError, psutil.Error):
            continue
    return None


def stop_running(hub_dir: Path, wait_s: float = 90) -> str:
    """Stop a hub of ``hub_dir`` started earlier (Ctrl-C's way first: SIGTERM to its console process), end its
    JupyterHub if that outlived it, and tear everything down. Returns a sentence for the console."""
    hub_dir = Path(hub_dir).resolve()
    if not hub_dir.is_dir():
        raise HubRunning(f"--dir {hub_dir}: no such hub folder")
    pid = _read(hub_dir).get("pid") if _locked(hub_dir) else None
    what = []
    if pid:
        os.kill(int(pid), signal.SIGTERM)  # the hub stops as on Ctrl-C and cleans up itself
        end = time.monotonic() + wait_s
        while time.monotonic() < end and _locked(hub_dir):
            time.sleep(0.5)
        if _locked(hub_dir):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
        what.append(f"the hub (pid {pid}) stopped")
    orphan = _jupyterhub_alive(hub_dir)
    if orphan:
        end_group(orphan, grace_s=20)
        what.append(f"its JupyterHub (pid {orphan}) ended")
    note = teardown(hub_dir)
    (hub_dir / LOCK).unlink(missing_ok=True)
    if note:
        what.append(note)
    return "; ".join(what) or f"no hub of {hub_dir} was running; nothing was left"


def _locked(hub_dir: Path) -> bool:
    """Whether a live process holds ``DIR/hub.lock``."""
    try:
        fd = os.open(Path(hub_dir) / LOCK, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def end_group(pgid: int, *, grace_s: float) -> None:
    """SIGTERM a process group, then SIGKILL what is left after ``grace_s``."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        end = time.monotonic() + wait_s
        while time.monotonic() < end and group_alive(pgid):
            time.sleep(0.2)
        if not group_alive(pgid):
            return


def teardown(hub_dir: Path) -> str:
    """After the hub stopped: stray servers ended, learners' changed files kept, accounts, homes, control
    groups and secrets removed. Returns a sentence for the console."""
    hub_dir = Path(hub_dir).resolve()
    stop_strays(hub_dir)
    stop_proxy(hub_dir)
    note = ""
    if accounts.is_root() and accounts.ours(hub_dir):
        dest = hub_dir / "collected" / time.strftime("%Y%m%d-%H%M%S")
        print(f"hub: removing {len(accounts.ours(hub_dir))} learner accounts", file=sys.stderr, flush=True)
        gone = accounts.remove(hub_dir, collect_to=dest)
        note = f"{len(gone)} learner accounts and homes removed"
        if dest.exists():
            (hub_dir / "collected").chmod(0o700)
            note += f"; the files they changed are in {dest}"
    accounts.remove_limits(hub_dir)
    shutil.rmtree(hub_dir / "secrets", ignore_errors=True)
    return note


def stop_proxy(hub_dir: Path, wait_s: float = 5) -> bool:
    """End the hub's proxy if it outlived the hub (it runs in a session of its own: a hub stopped while it was
    still starting leaves it). Found by its pid file and checked by its command line. True if one was ended."""
    import psutil

    pid_file = Path(hub_dir) / "proxy.pid"
    try:
        proc = psutil.Process(int(pid_file.read_text().strip()))
        if not any("configurable-http-proxy" in part for part in proc.cmdline()):
            return False
        proc.terminate()
        try:
            proc.wait(wait_s)
        except psutil.TimeoutExpired:
            proc.kill()
        return True
    except (OSError, ValueError, psutil.NoSuchProcess, psutil.AccessDenied):
        return False
    finally:
        pid_file.unlink(missing_ok=True)


def stop_strays(hub_dir: Path, wait_s: float = 10) -> list[int]:
    """Terminate, then kill, what still runs from ``hub_dir``; returns their pids.

    The learners' servers run in sessions of their own (JupyterHub's local spawner starts them so), out of reach
    of the hub's process group. The hub stops them when it shuts down, but on a loaded machine it can run out of
    time before its own SIGKILL. A process is the hub's when it works in a learner's home (``hub_dir/homes``) and
    carries the ``JUPYTERHUB_USER`` the hub gives every server (its kernels and their workers inherit it): a shell
    the instructor opened in a home is left alone.
    """
    import psutil

    root = str((Path(hub_dir) / "homes").resolve()) + os.sep
    strays = []
    for proc in psutil.process_iter(["pid"]):
        try:
            mine = proc.pid != os.getpid() and (proc.cwd() + os.sep).startswith(root)
            if mine and "JUPYTERHUB_USER" in proc.environ():
                strays.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    accounts.end_processes(strays, wait_s)
    return [p.pid for p in strays]


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False

