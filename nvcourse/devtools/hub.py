"""A classroom JupyterHub on one machine: ``sudo python3 tasks.py hub [--users 30] [--ip 0.0.0.0] [--port 8000]``.

Prepares a state folder outside the course (``/var/lib/nvcourse-hub`` as root, else
``~/.local/state/nvcourse-hub``; ``--dir`` to choose): configurable-http-proxy from the npm registry, a learner
copy of the course without solutions, a self-signed TLS certificate, the secrets in 0600 files. As root it makes
one Unix account per learner (``nvc-learner01`` …, home ``DIR/homes/learnerNN`` mode 0700, memory and CPU
limits in a control group where the machine allows: :mod:`nvcourse.devtools.hub_accounts`). Then it runs
JupyterHub with ``deploy/jupyterhub_config.py`` in the foreground until Ctrl-C (or a kill, or SIGHUP when its
terminal or SSH session closes), which stops the hub, the proxy and every learner's server, keeps the files
learners changed in ``DIR/collected/TIME/`` and removes the accounts, their homes and the secrets. Not root,
every learner's server would run as your own user, able to read the others' files: that is allowed on loopback
only (a hub to try on your own machine).

Each learner logs in with a password of their own, printed on a slip to cut out (``DIR/slips/slips.html`` or
``slips.txt``, root only; the console names them, never the passwords); the board line has the address and the
learner names. The instructor's password is in a file only its owner reads (the path is printed).
:class:`Hub` starts the same hub in the background for the load benchmark (``benchmarks/hub_load.py``) and the tests.

One hub per state folder: a second start is refused while one runs; ``--stop`` stops a hub of ``--dir`` started
earlier, even one whose terminal is gone, and cleans up after it (:mod:`nvcourse.devtools.hub_stop`).

Exit status: 0 after Ctrl-C or --stop; 1 when npm, openssl, an account, JupyterHub or the proxy fails, or a hub
of that folder already runs; 2 for bad usage.
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
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from ..units import parse_size
from . import hub_accounts as accounts
from . import hub_protect, hub_secrets
from . import hub_stop as stopping
from .hub_stop import group_alive, stop_proxy, stop_strays, teardown  # noqa: F401 (the hub's API)
from .release import release_learners

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "deploy" / "jupyterhub_config.py"
PROXY_PACKAGE = "configurable-http-proxy@5"
NEWS_OFF = {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}


class HubError(RuntimeError):
    """The hub could not be prepared or started (exit status 1)."""


def default_dir() -> Path:
    """The state folder: /var/lib/nvcourse-hub as root, else $XDG_STATE_HOME (~/.local/state)/nvcourse-hub."""
    if accounts.is_root():
        return Path("/var/lib/nvcourse-hub")
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "nvcourse-hub"


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


@dataclass
class Prepared:
    """What :func:`prepare` made: the hub's environment and what the console tells the instructor."""

    env: dict[str, str]
    accounts: bool
    cert: Path | None
    fingerprint: str
    instructor_file: Path
    limits: str
    passwords: dict[str, str] = field(default_factory=dict)
    slips: Path | None = None
    closed: list[Path] = field(default_factory=list)


def _check_reachable(path: Path) -> None:
    """Learners' servers run this Python: every folder above it must be open to other users (o+x)."""
    for d in [path, *path.parents]:
        if d.exists() and not d.stat().st_mode & 0o001:
            raise HubError(f"learners' accounts cannot reach {path}: {d} is not open to other users "
                           f"(chmod o+x {d}, or install the course outside a private home)")


def _check_learners_can_run() -> None:
    """Start the learners' interpreter as an unprivileged user (nobody), importing what their servers import."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return  # util-linux absent: the folder check above is all there is
    proc = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
                           "import jupyterhub.singleuser, nvcourse"], cwd="/", capture_output=True, text=True,
                          timeout=120)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise HubError(f"learners' accounts cannot run {sys.executable}: {tail} (install the course where other "
                       "users can read it)")


def _check_usage(users: int, ip: str, port: int, tls: bool) -> None:
    if not 1 <= users <= 99:
        raise ValueError(f"--users must be between 1 and 99, not {users}")
    if not 1 <= port <= 65535:
        raise ValueError(f"--port must be between 1 and 65535, not {port}")
    if not accounts.is_root() and not ip.startswith("127.") and ip != "localhost":
        raise ValueError(f"--ip {ip}: a room needs one Unix account per learner, which needs root: run "
                         "'sudo python3 tasks.py hub ...' (or keep --ip 127.0.0.1 to try the hub alone)")
    if not tls and not ip.startswith("127."):
        raise ValueError(f"--no-tls is for loopback only; --ip {ip} would send passwords in clear")


def _check_dir(hub_dir: Path) -> None:
    """The state folder holds the learners' copy and homes: never inside the checkout they must not read."""
    hub_dir = Path(hub_dir).resolve()
    if hub_dir == ROOT or ROOT in hub_dir.parents:
        raise ValueError(f"--dir {hub_dir} is inside the course checkout {ROOT}, which is closed to learners "
                         f"while the hub runs: choose a folder outside it (default {default_dir()})")


def prepare(hub_dir: Path, *, users: int, ip: str = "127.0.0.1", port: int = 8000,
            token: str | None = None, tls: bool = True, mem: str = "2GiB", cpus: float = 1.0,
            kernel_idle_s: int = 1800, idle_s: int = 3600) -> Prepared:
    """Lay out ``hub_dir`` (accounts, certificate, secrets, settings) and return what the hub needs."""
    _check_usage(users, ip, port, tls)
    mem_bytes = parse_size(mem, what="mem")
    if cpus <= 0:
        raise ValueError(f"--cpus must be > 0, not {cpus}")
    _check_dir(hub_dir)
    hub_dir = hub_dir.resolve()
    hub_dir.mkdir(parents=True, exist_ok=True)
    hub_dir.chmod(0o755)  # learners pass through to their homes and read the course copy and the lab settings
    use_accounts = accounts.is_root()
    closed = []
    if use_accounts:
        _check_reachable(Path(sys.executable).parent)
        closed = hub_protect.close_checkout()  # solutions, .git, the answer key: out of the learners' reach
        _check_learners_can_run()
        _check_reachable(hub_dir)
    proxy = ensure_proxy(hub_dir)
    course = hub_dir / "course"
    shutil.rmtree(course, ignore_errors=True)  # a fresh learner copy of the checkout as it is now
    release_learners(course)
    labconfig = hub_dir / "jupyter-config" / "labconfig"
    labconfig.mkdir(parents=True, exist_ok=True)
    (labconfig / "page_config.json").write_text(json.dumps(NEWS_OFF, indent=1) + "\n")
    admin = os.environ.get("NVCOURSE_HUB_ADMIN_PASSWORD") or secrets.token_urlsafe(24)
    learners = accounts.learner_names(users)
    passwords = hub_secrets.learner_passwords(hub_dir, learners)
    instructor_file = hub_secrets.write_secrets(hub_dir, passwords=passwords, admin_password=admin, api_token=token)
    slips = hub_secrets.write_slips(hub_dir, passwords, board_urls(ip, port, tls))
    cert, key, fingerprint = hub_secrets.make_certificate(hub_dir, ip) if tls else (None, None, "")
    cgroups, limits = {}, "limits not enforced (learners share your user: no accounts without root)"
    if use_accounts:
        accounts.create(hub_dir, learners, course)
        cgroups, limits = accounts.make_limits(hub_dir, learners, mem_bytes, cpus)
    else:
        (hub_dir / "homes").mkdir(exist_ok=True)
    settings = {"ip": ip, "port": port, "learners": learners, "proxy": str(proxy), "accounts": use_accounts,
                "account_prefix": accounts.PREFIX, "cgroup_procs": cgroups, "mem": mem_bytes, "cpus": cpus,
                "kernel_idle_s": kernel_idle_s, "idle_s": idle_s,
                # the hub's own API and the proxy's, on loopback: free ports, so two hubs on a machine never collide
                "hub_port": free_port(), "proxy_api_port": free_port(),
                "ssl_cert": str(cert) if cert else "", "ssl_key": str(key) if key else ""}
    (hub_dir / "hub-settings.json").write_text(json.dumps(settings, indent=1) + "\n")
    # No secret and nothing of the instructor's hub settings in the environment the hub hands down.
    env = {k: v for k, v in os.environ.items() if not k.startswith("NVCOURSE_HUB_")}
    env["NVCOURSE_HUB_DIR"] = str(hub_dir)
    return Prepared(env, use_accounts, cert, fingerprint, instructor_file, limits, passwords, slips, closed)


def board_urls(ip: str, port: int, tls: bool = True) -> list[str]:
    """The addresses learners type (loopback left out when the hub has another: learners are not on this machine)."""
    hosts = hub_secrets.addresses(ip)
    room = [h for h in hosts if not h.startswith("127.")] or hosts
    return [f"{'https' if tls else 'http'}://{h}:{port}/" for h in room[:3]]


def hub_command() -> list[str]:
    return [sys.executable, "-m", "jupyterhub", "-f", str(CONFIG)]


class Hub:
    """A hub in the background, in its own process group, stopped with everything it started.

    ``with Hub(dir, users=8) as hub: hub.api("GET", "/users")`` — ``hub.url`` is the public URL (TLS, its
    certificate ``hub.cert``), ``hub.token`` the instructor token the benchmark uses and
    ``hub.password_of(name)`` the password learner ``name`` logs in with. ``prepare_kw`` go to :func:`prepare`
    (``mem``, ``cpus``, ...).
    """

    def __init__(self, hub_dir: Path, *, users: int, port: int | None = None, startup_s: float = 120,
                 **prepare_kw) -> None:
        self.hub_dir, self.users, self.port = Path(hub_dir).resolve(), users, port or free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        self.token = secrets.token_hex(16)
        self.startup_s = startup_s
        self.prepare_kw = prepare_kw
        self.prepared: Prepared | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.lock: int | None = None

    @property
    def cert(self) -> str:
        """The hub's self-signed certificate (PEM path): clients trust it to talk TLS to the hub."""
        assert self.prepared is not None and self.prepared.cert is not None
        return str(self.prepared.cert)

    def password_of(self, name: str) -> str:
        """Learner ``name``'s own password (what their slip says)."""
        assert self.prepared is not None
        return self.prepared.passwords[name]

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=self.cert)

    def __enter__(self) -> Hub:
        self.lock = stopping.acquire(self.hub_dir)  # one hub per folder: refused while another runs
        try:
            self.prepared = prepare(self.hub_dir, users=self.users, port=self.port,
                                    token=self.token, **self.prepare_kw)
        except BaseException:
            teardown(self.hub_dir)
            stopping.release(self.hub_dir, self.lock)
            raise
        log = open(self.hub_dir / "jupyterhub.log", "wb")  # noqa: SIM115 - closed with the process
        self.proc = subprocess.Popen(hub_command(), cwd=self.hub_dir, env=self.prepared.env, stdout=log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        stopping.record(self.lock, jupyterhub=self.proc.pid)
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
            with urllib.request.urlopen(req, timeout=30, context=self.ssl_context()) as resp:
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
            while time.monotonic() < end and group_alive(self.proc.pid):
                time.sleep(0.2)
            if not group_alive(self.proc.pid):
                break
        self.proc = None
        teardown(self.hub_dir)
        stopping.release(self.hub_dir, self.lock)
        self.lock = None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tasks.py hub", description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=30, help="learner accounts learner01..NN (default 30)")
    parser.add_argument("--ip", default="127.0.0.1", help="address learners connect to (0.0.0.0 for a room)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--dir", type=Path, default=None,
                        help="state folder (default /var/lib/nvcourse-hub as root, else ~/.local/state/nvcourse-hub)")
    parser.add_argument("--mem", default="2GiB", help="memory per learner, enforced where the machine allows (2GiB)")
    parser.add_argument("--cpus", type=float, default=1.0, help="CPUs per learner, enforced likewise (default 1)")
    parser.add_argument("--kernel-idle", type=int, default=1800, help="idle kernels are shut down after (s, 1800)")
    parser.add_argument("--idle", type=int, default=3600, help="idle servers are stopped after (s, default 3600)")
    parser.add_argument("--no-tls", action="store_true", help="plain HTTP (loopback only)")
    parser.add_argument("--stop", action="store_true",
                        help="stop a hub of --dir started earlier (even one whose terminal is gone) and clean up")
    return parser


def _announce(args: argparse.Namespace, prep: Prepared) -> None:
    """The board line on stdout; everything only the instructor should read on stderr."""
    where = " or ".join(board_urls(args.ip, args.port, not args.no_tls))
    err = sys.stderr
    print(f"\n{'=' * 30} the hub is up: for the instructor (not the board) {'=' * 30}", file=err)
    print(f"hub: the slips (one per learner, with their own password: print, cut, hand out; root only) are "
          f"{prep.slips} and {prep.slips.with_suffix('.txt') if prep.slips else ''}", file=err)
    if prep.cert is not None:
        print(f"hub: the browser warns once about the hub's own certificate (made now; SHA-256 "
              f"{prep.fingerprint[:23]}...): continue to the site", file=err)
    print(f"hub: instructor: log in as 'instructor' with the password in {prep.instructor_file} (readable by "
          "you only: do not project it)", file=err)
    who = (f"one Unix account per learner ({accounts.PREFIX}learnerNN, private homes), removed at Ctrl-C, a closed "
           "terminal or --stop" if prep.accounts else
           "every learner's server runs as your user (not root): for trying the hub alone, not for a room")
    print(f"hub: {who}; {prep.limits}; Ctrl-C stops everything", file=err, flush=True)
    if prep.closed:
        print(f"hub: this checkout is now closed to other users, learners included (solutions, .git, artifacts: "
              f"all but {', '.join(sorted(hub_protect.runtime_entries()))}); after the session reopen it with: "
              f"{hub_protect.reopen_command()}", file=err)
    print(f"{'=' * 30} for the board: the line below {'=' * 30}", file=err,
          flush=True)
    print(f"hub: learners open {where} and log in as learner01 ... learner{args.users:02d} with the password "
          "on their own slip", flush=True)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    hub_dir = (args.dir or default_dir()).resolve()
    if args.stop:
        return _stop_earlier(hub_dir)
    # Ctrl-C, a plain kill and a closed terminal or SSH session (SIGHUP) all stop everything (a launcher may
    # have started us with SIGINT ignored).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    signal.signal(signal.SIGHUP, lambda *_: _hung_up(hub_dir))
    try:
        _check_usage(args.users, args.ip, args.port, not args.no_tls)
        _check_dir(hub_dir)
        lock = stopping.acquire(hub_dir)  # before anything is written: never under a hub that runs
    except ValueError as exc:
        print(f"hub: error: {exc}", file=sys.stderr)
        return 2
    except (stopping.HubRunning, OSError) as exc:
        print(f"hub: error: {exc}", file=sys.stderr)
        return 1
    try:
        return _serve(args, hub_dir, lock)
    finally:
        stopping.release(hub_dir, lock)


def _stop_earlier(hub_dir: Path) -> int:
    """``--stop``: stop the hub of ``hub_dir`` started earlier and clean up after it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the clean-up must not be cut short
    try:
        note = stopping.stop_running(hub_dir)
    except (stopping.HubRunning, OSError) as exc:
        print(f"hub: error: {exc}", file=sys.stderr)
        return 1
    print(f"hub: stopped; {note}", file=sys.stderr)
    return 0


def _hung_up(hub_dir: Path) -> None:
    """SIGHUP: the console is gone. Its output goes to ``DIR/hub-console.log`` from now on (a write to a closed
    terminal would fail and cut the clean-up short); then stop as on Ctrl-C."""
    fd = os.open(hub_dir / "hub-console.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    raise KeyboardInterrupt


def _serve(args: argparse.Namespace, hub_dir: Path, lock: int) -> int:
    try:
        prep = prepare(hub_dir, users=args.users, ip=args.ip, port=args.port,
                       tls=not args.no_tls, mem=args.mem, cpus=args.cpus, kernel_idle_s=args.kernel_idle,
                       idle_s=args.idle)
    except ValueError as exc:
        print(f"hub: error: {exc}", file=sys.stderr)
        return 2
    except (HubError, accounts.AccountError, hub_secrets.SecretsError, OSError) as exc:
        teardown(hub_dir)
        print(f"hub: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        teardown(hub_dir)
        print("hub: interrupted while preparing; nothing left running", file=sys.stderr)
        return 130
    print(f"hub: starting (state in {hub_dir})", file=sys.stderr, flush=True)
    proc = subprocess.Popen(hub_command(), cwd=hub_dir, env=prep.env, start_new_session=True)
    try:
        stopping.record(lock, jupyterhub=proc.pid)
        if _wait_up(proc, args, prep):
            _announce(args, prep)
        code = proc.wait()
        print(f"hub: jupyterhub exited with status {code}; see the lines above", file=sys.stderr)
        _finish(proc, hub_dir, grace_s=5)
        return 1
    except KeyboardInterrupt:
        print("hub: stopping the hub and the learners' servers (Ctrl-C again to kill them now)", file=sys.stderr)
        try:
            _finish(proc, hub_dir, grace_s=20)
        except KeyboardInterrupt:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a third Ctrl-C must not interrupt the kill itself
            _finish(proc, hub_dir, grace_s=0)
        return 0


def _wait_up(proc: subprocess.Popen, args: argparse.Namespace, prep: Prepared, timeout_s: float = 180) -> bool:
    """Wait until the hub serves its login page on loopback (the board line is printed only then)."""
    scheme = "http" if prep.cert is None else "https"
    context = ssl.create_default_context(cafile=str(prep.cert)) if prep.cert else None
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"{scheme}://127.0.0.1:{args.port}/hub/login", timeout=5, context=context):
                return True
        except (OSError, ssl.SSLError):
            time.sleep(0.5)
    return False


def _finish(proc: subprocess.Popen, hub_dir: Path, *, grace_s: float) -> None:
    _stop(proc, grace_s=grace_s)
    note = teardown(hub_dir)
    print(f"hub: stopped{'; ' + note if note else ''}", file=sys.stderr)


def _stop(proc: subprocess.Popen, *, grace_s: float) -> None:
    """Stop the hub's process group (SIGTERM, then SIGKILL after ``grace_s``)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM if grace_s else signal.SIGKILL)
    try:
        proc.wait(timeout=grace_s or 5)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


if __name__ == "__main__":
    sys.exit(main())
