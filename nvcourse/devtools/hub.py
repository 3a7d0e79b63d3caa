"""A classroom JupyterHub on one machine: ``python3 tasks.py hub [--users 30] [--ip 0.0.0.0] [--port 8000]``.

Prepares ``artifacts/hub/`` (configurable-http-proxy from the npm registry, a learner copy of the course
without solutions, one home per learner), then runs JupyterHub with ``deploy/jupyterhub_config.py`` in the
foreground until Ctrl-C, which stops the hub, the proxy and every learner's server. The shared workshop
password is printed (or taken from ``NVCOURSE_HUB_PASSWORD``). :class:`Hub` starts the same hub in the
background for the load benchmark (``benchmarks/hub_load.py``).

Exit status: 0 after Ctrl-C; 1 when npm, JupyterHub or the proxy fails; 2 for bad usage.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from .release import release_learners

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "deploy" / "jupyterhub_config.py"
DEFAULT_DIR = ROOT / "artifacts" / "hub"
PROXY_PACKAGE = "configurable-http-proxy@5"


class HubError(RuntimeError):
    """The hub could not be prepared or started (exit status 1)."""


def free_port() -> int:
    """A TCP port free on loopback now (for tests and benchmarks that start their own hub)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ensure_proxy(hub_dir: Path) -> Path:
    """configurable-http-proxy installed under ``hub_dir/proxy`` from the npm registry; returns its path."""
    exe = hub_dir / "proxy" / "node_modules" / ".bin" / "configurable-http-proxy"
    if exe.exists():
        return exe
    npm = shutil.which("npm")
    if npm is None:
        raise HubError("npm is needed once to install configurable-http-proxy (apt-get install npm)")
    prefix = hub_dir / "proxy"
    prefix.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "npm_config_cache": str(prefix / ".npm-cache")}  # a private cache: see offline_web
    proc = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--no-save", "--prefix", str(prefix),
                           PROXY_PACKAGE], capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0 or not exe.exists():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise HubError(f"npm install {PROXY_PACKAGE} failed: {tail[0]}")
    return exe


def prepare(hub_dir: Path, *, users: int, password: str, ip: str = "127.0.0.1", port: int = 8000,
            token: str | None = None) -> dict[str, str]:
    """Lay out ``hub_dir`` and return the environment ``deploy/jupyterhub_config.py`` reads."""
    if not 1 <= users <= 999:
        raise ValueError(f"--users must be between 1 and 999, not {users}")
    hub_dir.mkdir(parents=True, exist_ok=True)
    proxy = ensure_proxy(hub_dir)
    course = hub_dir / "course"
    shutil.rmtree(course, ignore_errors=True)  # a fresh learner copy of the checkout as it is now
    release_learners(course)
    (hub_dir / "homes").mkdir(exist_ok=True)
    env = {**os.environ, "NVCOURSE_HUB_DIR": str(hub_dir.resolve()), "NVCOURSE_HUB_USERS": str(users),
           "NVCOURSE_HUB_PASSWORD": password, "NVCOURSE_HUB_IP": ip, "NVCOURSE_HUB_PORT": str(port),
           "NVCOURSE_HUB_PROXY": str(proxy),
           "NVCOURSE_HUB_ADMIN_PASSWORD": os.environ.get("NVCOURSE_HUB_ADMIN_PASSWORD") or secrets.token_urlsafe(24)}
    if token:
        env["NVCOURSE_HUB_ADMIN_TOKEN"] = token
    return env


def hub_command() -> list[str]:
    return [sys.executable, "-m", "jupyterhub", "-f", str(CONFIG)]


class Hub:
    """A hub in the background, in its own process group, stopped with everything it started.

    ``with Hub(dir, users=8) as hub: hub.api("GET", "/users")`` — ``hub.url`` is the public URL and
    ``hub.token`` the instructor token the benchmark uses.
    """

    def __init__(self, hub_dir: Path, *, users: int, port: int | None = None, startup_s: float = 120) -> None:
        self.hub_dir, self.users, self.port = hub_dir, users, port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = secrets.token_hex(16)
        self.password = secrets.token_urlsafe(9)
        self.startup_s = startup_s
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Hub:
        env = prepare(self.hub_dir, users=self.users, password=self.password, port=self.port, token=self.token)
        log = open(self.hub_dir / "jupyterhub.log", "wb")  # noqa: SIM115 - closed with the process
        self.proc = subprocess.Popen(hub_command(), cwd=self.hub_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        log.close()
        deadline = time.monotonic() + self.startup_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                code = self.proc.returncode
                self.stop()
                tail = (self.hub_dir / "jupyterhub.log").read_text(errors="replace").strip().splitlines()[-1:]
                raise HubError(f"jupyterhub exited with {code}: {tail[0] if tail else 'no log'}")
            try:
                self.api("GET", "/")
                return self
            except (OSError, HubError):
                time.sleep(0.5)
        self.stop()
        raise HubError(f"the hub did not answer within {self.startup_s:.0f} s; see {self.hub_dir}/jupyterhub.log")

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def api(self, method: str, path: str, body: dict | None = None) -> dict | list | None:
        """One call to the hub's REST API (``/hub/api`` + ``path``) with the instructor token."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"{self.url}/hub/api{path}", data=data, method=method,
                                     headers={"Authorization": f"token {self.token}"})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            raise HubError(f"{method} {path}: HTTP {exc.code}") from exc
        return json.loads(raw) if raw else None

    def stop(self) -> None:
        """SIGTERM the hub's process group (hub, proxy, servers, kernels), then SIGKILL what is left."""
        if self.proc is None:
            return
        for sig, wait_s in ((signal.SIGTERM, 20), (signal.SIGKILL, 5)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                continue
            # The hub is gone; its children may still be stopping: give them the same time.
            end = time.monotonic() + wait_s
            while time.monotonic() < end and _group_alive(self.proc.pid):
                time.sleep(0.2)
            if not _group_alive(self.proc.pid):
                break
        self.proc = None
        stop_strays(self.hub_dir)


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
    for proc in strays:
        try:
            proc.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(strays, timeout=wait_s)
    for proc in alive:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=wait_s)
    return [p.pid for p in strays]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tasks.py hub", description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=30, help="learner accounts learner01..NN (default 30)")
    parser.add_argument("--ip", default="127.0.0.1", help="address learners connect to (0.0.0.0 for a room)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="state folder (default artifacts/hub)")
    args = parser.parse_args(argv)
    password = os.environ.get("NVCOURSE_HUB_PASSWORD") or secrets.token_urlsafe(6)
    try:
        env = prepare(args.dir, users=args.users, password=password, ip=args.ip, port=args.port)
    except ValueError as exc:
        print(f"hub: error: {exc}", file=sys.stderr)
        return 2
    except (HubError, OSError) as exc:
        print(f"hub: error: {exc}", file=sys.stderr)
        return 1
    print(f"hub: http://{args.ip}:{args.port}/  users learner01..learner{args.users:02d}  "
          f"shared password: {password}  instructor: log in as 'instructor' with "
          f"{env['NVCOURSE_HUB_ADMIN_PASSWORD']}",
          flush=True)
    proc = subprocess.Popen(hub_command(), cwd=args.dir, env=env, start_new_session=True)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        print("hub: stopping the hub and the learners' servers (Ctrl-C again to kill them now)", file=sys.stderr)
        try:
            _stop(proc, args.dir, grace_s=20, strays_wait_s=10)
        except KeyboardInterrupt:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a third Ctrl-C must not interrupt the kill itself
            _stop(proc, args.dir, grace_s=0, strays_wait_s=0)
        print("hub: stopped", file=sys.stderr)
        return 0


def _stop(proc: subprocess.Popen, hub_dir: Path, *, grace_s: float, strays_wait_s: float) -> None:
    """Stop the hub's process group (SIGTERM, then SIGKILL after ``grace_s``) and what still runs in the homes."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM if grace_s else signal.SIGKILL)
    try:
        proc.wait(timeout=grace_s or 5)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    stop_strays(hub_dir, wait_s=strays_wait_s)


if __name__ == "__main__":
    sys.exit(main())
