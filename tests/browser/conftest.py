"""Fixtures for the real-browser widget test: a throw-away JupyterLab server and headless Chromium.

* Chromium is Debian's (``apt-get install chromium``), found through ``NVCOURSE_CHROMIUM`` or the usual
  paths; Playwright never downloads a browser here. Without it the browser tests skip locally and
  FAIL in CI (``CI=true``), so a CI image that lost its browser cannot go green silently.
* JupyterLab runs on 127.0.0.1 on a free port with a random token and throw-away config, data, runtime,
  settings and workspace folders. Its root is a temporary mirror of the repository in which
  ``notebooks/`` holds copies of the course notebooks with every output, execution count and saved
  widget state removed (stale outputs cannot fake a pass). It is started in its own session and, at the
  end, stopped together with every kernel it started: no processes are left behind, also when the run is
  ended by Ctrl-C or SIGTERM (``ctrl_c_stops_the_session``, ``sigterm_stops_the_session``).

Environment knobs: ``NVCOURSE_CHROMIUM`` (browser executable), ``NVCOURSE_BROWSER_NOTEBOOKS`` (another
folder of notebooks to test instead of ``notebooks/``, for testing the test), ``NVCOURSE_BROWSER_HEADED=1``
(watch it run).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from nvcourse.errors import Terminated

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "browser"
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
CHROMIUM_ARGS = [
    "--no-sandbox",  # CI containers run as root
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Cell tags whose cells nbval does not run; a browser "Run All" would run them, so the copy blanks them.
SKIP_TAGS = {"nbval-skip", "skip-execution"}
HOW_TO_ENABLE = (
    "the browser test needs Chromium: `apt-get install chromium` (Debian/Ubuntu), or run "
    "`python3 tasks.py test` as root (it installs it); or point NVCOURSE_CHROMIUM at a Chromium/Chrome binary"
)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def find_chromium() -> str | None:
    for path in (os.environ.get("NVCOURSE_CHROMIUM"), *CHROMIUM_CANDIDATES):
        if path and Path(path).exists():
            return path
    return shutil.which("chromium")


def skip_or_fail(reason: str) -> None:
    """Skip on a contributor's machine; fail in CI, where a missing browser is a broken image."""
    if in_ci():
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


def source_notebooks() -> list[Path]:
    """The notebooks under test, listed at collection time (sorted, checkpoints excluded)."""
    folder = Path(os.environ.get("NVCOURSE_BROWSER_NOTEBOOKS", ROOT / "notebooks"))
    return sorted(p for p in folder.glob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def pytest_generate_tests(metafunc):
    """One test per notebook, from the glob at collection time."""
    if "notebook" in metafunc.fixturenames:
        notebooks = source_notebooks()
        metafunc.parametrize("notebook", notebooks, ids=[p.stem for p in notebooks])


def stripped_copy(src: Path, dst: Path) -> None:
    """Copy a notebook without outputs, execution counts or saved widget state."""
    nb = json.loads(src.read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        cell["outputs"], cell["execution_count"] = [], None
        tags = set(cell.get("metadata", {}).get("tags", []))
        if tags & SKIP_TAGS:
            cell["source"] = f"# (not run by the browser test: tagged {', '.join(sorted(tags & SKIP_TAGS))})"
    nb.get("metadata", {}).pop("widgets", None)
    dst.write_text(json.dumps(nb, indent=1, ensure_ascii=False), encoding="utf-8")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (kernels live in their own sessions, so killpg alone misses them)."""
    try:
        import psutil

        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except ImportError:
        pass
    except Exception:
        return []
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie counts as gone
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


@dataclass
class Lab:
    base: str
    token: str
    root: Path
    log: Path
    proc: subprocess.Popen

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}{path}{sep}token={self.token}"

    def api(self, method: str, path: str) -> object:
        req = urllib.request.Request(self.url(path), method=method)
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else None

    def shutdown_sessions(self) -> None:
        """Shut every session down (and its kernel) between notebooks, so memory stays flat."""
        try:
            for s in self.api("GET", "/api/sessions") or []:
                self.api("DELETE", f"/api/sessions/{s['id']}")
            for k in self.api("GET", "/api/kernels") or []:
                self.api("DELETE", f"/api/kernels/{k['id']}")
        except (urllib.error.URLError, OSError):
            pass

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""


def _mirror_repo(dest: Path, notebooks: list[Path]) -> None:
    """``dest`` looks like the repo (symlinks) except ``notebooks/``: a real folder with stripped copies."""
    for entry in ROOT.iterdir():
        if entry.name in {"notebooks", ".git", ".venv", "artifacts"}:
            continue
        (dest / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    nb_dir = dest / "notebooks"
    nb_dir.mkdir()
    src_dir = notebooks[0].parent if notebooks else ROOT / "notebooks"
    for extra in src_dir.iterdir() if src_dir.is_dir() else []:  # data files next to the notebooks
        if extra.suffix != ".ipynb" and not extra.name.startswith("."):
            (nb_dir / extra.name).symlink_to(extra, target_is_directory=extra.is_dir())
    for nb in notebooks:
        stripped_copy(nb, nb_dir / nb.name)


def _write_settings(settings_dir: Path) -> None:
    settings = {
        # start the kernel without the "Select Kernel" dialog; keep every cell in the DOM
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
            "autoStartDefaultKernel": True,
            "windowingMode": "none",
        },
        # no "get notified about Jupyter news?" toast over the page
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"},
        # never write to the copies: what ran is what the test reads from the page
        "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    }
    for rel, value in settings.items():
        path = settings_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = find_chromium()
    if not path:
        skip_or_fail(HOW_TO_ENABLE)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        skip_or_fail(
            "the Python package `playwright` is missing: `pip install -e .[test]` (or `python3 tasks.py test`)"
        )
    return path


@pytest.fixture(scope="session")
def lab(chromium_path):
    """A JupyterLab server serving a stripped copy of the course; stopped with its kernels at the end."""
    tmp = Path(tempfile.mkdtemp(prefix="nvcourse-browser-"))
    root = tmp / "root"
    root.mkdir()
    _mirror_repo(root, source_notebooks())
    settings_dir = tmp / "settings"
    _write_settings(settings_dir)
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp / "config"),
        "JUPYTER_DATA_DIR": str(tmp / "data"),
        "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "IPYTHONDIR": str(tmp / "ipython"),
        "PYTHONHASHSEED": "0",
    }
    env.pop("MPLBACKEND", None)  # a learner's kernel uses the inline backend (tasks.py test sets Agg)
    cmd = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
        "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={settings_dir}",
        f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: read outputs from the notebook model
        "--ServerApp.shutdown_no_activity_timeout=0",
        "--MappingKernelManager.cull_idle_timeout=0",
    ]
    log_path = tmp / "lab.log"
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, env=env, cwd=root, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    server = Lab(f"http://127.0.0.1:{port}", token, root, log_path, proc)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                server.api("GET", "/api/status")
                break
            except (urllib.error.URLError, OSError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start (exit {proc.poll()}):\n{server.log_tail()}", pytrace=False)
                time.sleep(0.2)
        yield server
    finally:
        _stop(server)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _stop(server: Lab) -> None:
    server.shutdown_sessions()
    pids = descendants(server.proc.pid)  # kernels first: they are in sessions of their own
    try:
        os.killpg(server.proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    try:
        server.proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(server.proc.pid, signal.SIGKILL)
        server.proc.wait(timeout=5)
    deadline = time.monotonic() + 10
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in pids:
        if alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture(scope="session", autouse=True)
def ctrl_c_stops_the_session(request):
    """Ctrl-C during a browser test stops the run after that test, as it does anywhere else.

    The terminal's SIGINT also reaches Playwright's driver (a child in our process group), which dies of it, and a
    KeyboardInterrupt raised while Playwright's sync API runs its event loop comes back as "Target page, context or
    browser has been closed": the test failed, the next ones errored, and pytest went on with the rest of the suite.
    So the Ctrl-C is remembered, and pytest stops (status 2, "Interrupted") once the current test is torn down.
    """
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):  # SIGINT ignored (a background job): Ctrl-C means nothing to this run
        yield
        return

    def on_sigint(signum, frame):
        request.session.shouldstop = "interrupted (Ctrl-C) during the browser tests"
        previous(signum, frame)  # KeyboardInterrupt, as before

    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="session", autouse=True)
def sigterm_stops_the_session(request):
    """SIGTERM (``kill PID``, ``timeout``, a cancelled CI job) ends the run with every fixture's teardown, as Ctrl-C
    does.

    Python's default for SIGTERM ends the process at once, no ``finally`` run: the JupyterLab server, started in a
    session of its own (so a signal to pytest's process group never reaches it), and its kernels outlived the run.
    While the browser fixtures live, the first SIGTERM raises :class:`~nvcourse.errors.Terminated` (a
    KeyboardInterrupt: pytest stops, status 2, and tears every fixture down, ``lab`` stopping the server); where a
    library turns it into an error of its own (Playwright's sync API, see :func:`ctrl_c_stops_the_session`),
    ``shouldstop`` still ends the run once the current test is torn down. A SIGTERM after the first one lets that
    clean-up finish (:func:`_stop`'s waits are bounded; SIGKILL still ends everything at once).
    """
    previous = signal.getsignal(signal.SIGTERM)
    if previous is signal.SIG_IGN:  # whoever started pytest chose to have SIGTERM ignored: keep it so
        yield
        return
    fired = False

    def on_sigterm(signum, frame):
        nonlocal fired
        if fired:
            return
        fired = True
        request.session.shouldstop = "terminated (SIGTERM) during the browser tests"
        if callable(previous):
            previous(signum, frame)  # a handler installed before ours (a plugin's) runs first, as it did before
        raise Terminated()

    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@pytest.fixture(scope="session")
def chromium(chromium_path):
    from playwright.sync_api import sync_playwright

    headed = os.environ.get("NVCOURSE_BROWSER_HEADED") == "1"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path, headless=not headed, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def browser_context(chromium):
    """One context for the session, so JupyterLab's static files come from the HTTP cache after the first page."""
    context = chromium.new_context(viewport={"width": 1400, "height": 900})  # the size a learner's laptop window has
    context.set_default_timeout(30_000)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def lab_page(browser_context, lab):
    """A fresh page for one notebook; its kernel is shut down afterwards."""
    page = browser_context.new_page()
    page.console_errors = []
    page.on("pageerror", lambda e: page.console_errors.append(str(e)))
    try:
        yield page
    finally:
        page.close()  # no beforeunload prompt
        lab.shutdown_sessions()


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
