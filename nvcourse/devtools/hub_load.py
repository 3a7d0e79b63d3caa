"""Simulated learners on the classroom hub, as a browser would drive it.

Used by ``benchmarks/hub_load.py`` (the figures) and by a small test. Each learner, in a thread of its own:

1. logs in through the hub's login form with its own password (over TLS, trusting the hub's certificate),
   which starts their server, and opens JupyterLab (the OAuth hand-over sets the server's cookie);
2. opens chapter 04, its exercises and the misconceptions quiz: one session, hence one kernel, each, and runs
   each notebook's first code cell (its imports) in it, as a learner reading on does;
3. runs chapter 04 in its kernel: every code cell (``full_chapter``) or none, then the chapter's live demo
   (real multi-process all-reduces, checked against numpy) and the isolation probe below.

The isolation probe runs in the learner's own kernel, so with the learner's uid: it tries to list and read
another learner's home, the hub's secrets and the hub's process environment (``/proc/PID/environ``), and
reports the environment and control groups its kernel got. :func:`usage` measures memory (PSS) and CPU time
of each learner's processes while every kernel is still up.
"""

from __future__ import annotations

import json
import random
import re
import ssl
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .hub import Hub, HubError

# Seconds without a message for a request before the simulator asks the kernel's state (a lost message).
SILENCE_S = 60.0

CHAPTER = "notebooks/04_collectives_and_allreduce.ipynb"
EXERCISES = "exercises/04_collectives_and_allreduce_exercises.ipynb"
QUIZ = "exercises/quiz_misconceptions_exercises.ipynb"

# What a learner runs in chapter 04 (§ "a real all-reduce on your CPU"), reporting what the benchmark checks.
DEMO_CODE = """
import json, os, resource
from nvcourse.collectives import ProcessGroup
checks = []
with ProcessGroup(4) as pg:
    for algo in ("ring", "tree"):
        r = pg.run("allreduce", "1MiB", algo=algo, iters=3, warmup=1)
        checks.append({"algo": algo, "correct": bool(r.correct), "busbw_GBps": r.busbw_GBps})
    names = sorted(n for n in os.listdir('/dev/shm') if n.startswith(pg.name_prefix))  # this group's own
print(json.dumps({"checks": checks, "shm_during": names,
                  "maxrss_MiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

# Run as the learner: what can this uid see of the others and of the hub? One JSON line.
PROBE_CODE = """
import json, os
def tries(fn):
    try:
        fn()
        return True
    except OSError:
        return False
targets = json.loads({targets!r})
out = {{"uid": os.getuid(), "env": dict(os.environ), "cgroups": open("/proc/self/cgroup").read()}}
out["list_other_home"] = tries(lambda: os.listdir(targets["other_home"]))
out["read_other_file"] = tries(lambda: open(targets["other_file"]).read(1))
out["read_secrets"] = tries(lambda: open(targets["secrets"]).read(1))
out["read_hub_environ"] = tries(lambda: open(f"/proc/{{targets['hub_pid']}}/environ").read(1))
out["write_course"] = tries(lambda: open(os.path.join(targets["course"], "x.txt"), "w").close())
print(json.dumps(out))
"""


@dataclass
class LearnerRun:
    name: str
    login_s: float = 0.0
    open_s: float = 0.0
    demo_s: float = 0.0
    correct: bool = False
    news_off: bool = False
    kernels: int = 0
    retries: int = 0
    reconnects: int = 0  # kernel websockets the server dropped and the learner reopened (a browser does it)
    shm_names: list[str] = field(default_factory=list)
    kernel_maxrss_MiB: float = 0.0
    probe: dict = field(default_factory=dict)
    error: str = ""


def _notebook_code(course: Path, rel: str, first_only: bool) -> list[str]:
    nb = json.loads((course / rel).read_text(encoding="utf-8"))
    cells = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
             for c in nb["cells"] if c["cell_type"] == "code"]
    return cells[:1] if first_only else cells


class _Learner:
    """One simulated learner: a logged-in browser session (cookies) and its kernels."""

    def __init__(self, hub: Hub, name: str) -> None:
        import requests

        self.hub, self.name = hub, name
        self.http = requests.Session()
        self.http.trust_env = False  # REQUESTS_CA_BUNDLE and proxies in the environment would override these
        self.http.verify = hub.cert
        self.base = f"{hub.url}/user/{name}"

    def login(self, timeout_s: float) -> int:
        """Log in through the form and wait for the server; returns how many times its start was asked again."""
        self.http.get(f"{self.hub.url}/hub/login", timeout=60).raise_for_status()
        xsrf = self.http.cookies.get("_xsrf", path="/hub/") or self.http.cookies.get("_xsrf") or ""
        r = self.http.post(f"{self.hub.url}/hub/login?next=", timeout=120, allow_redirects=False,
                           data={"username": self.name, "password": self.hub.password_of(self.name),
                                 "_xsrf": xsrf})
        if r.status_code != 302 or "login" in r.headers.get("Location", ""):
            raise HubError(f"{self.name}: the login form answered {r.status_code}")
        retries, missing = 0, 0
        asked = time.monotonic()
        self.http.get(f"{self.hub.url}/hub/spawn", timeout=120)  # what the browser follows: starts the server
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            server = (self.hub.api("GET", f"/users/{self.name}") or {}).get("servers", {}).get("")
            if server and server.get("ready"):
                return retries
            # No server, not even a pending one: the start failed (the hub logs why). A learner reloads the page,
            # which asks again; so does this one, twice at most.
            missing = missing + 1 if not server and time.monotonic() - asked > 5 else 0
            if missing >= 2:
                if retries == 2:
                    raise HubError(f"{self.name}'s server failed to start three times (see the hub's log)")
                retries, missing, asked = retries + 1, 0, time.monotonic()
                self.http.get(f"{self.hub.url}/hub/spawn", timeout=120)
            time.sleep(1.0)
        raise HubError(f"{self.name}'s server was not ready after {timeout_s:.0f} s")

    def open_lab(self) -> bool:
        """JupyterLab's page (OAuth hand-over included); True when its news extension is disabled."""
        r = self.http.get(f"{self.base}/lab", timeout=120)
        r.raise_for_status()
        return "@jupyterlab/apputils-extension:announcements" in r.text and "disabledExtensions" in r.text

    def _xsrf(self) -> str:
        for c in self.http.cookies:
            if c.name == "_xsrf" and c.path.startswith(f"/user/{self.name}"):
                return c.value
        return self.http.cookies.get("_xsrf") or ""

    def open_notebook(self, path: str) -> str:
        """A session for ``path`` (what opening a notebook does); returns its kernel's id."""
        r = self.http.post(f"{self.base}/api/sessions", timeout=120, headers={"X-XSRFToken": self._xsrf()},
                           json={"path": path, "name": Path(path).name, "type": "notebook",
                                 "kernel": {"name": "python3"}})
        r.raise_for_status()
        return r.json()["kernel"]["id"]

    def connect(self, kernel: str, timeout_s: float) -> _KernelSocket:
        """The kernel's websocket, opened once per notebook and kept, as JupyterLab does."""
        return _KernelSocket(self, kernel, uuid.uuid4().hex, timeout_s)

    def open_socket(self, kernel: str, session: str, timeout_s: float):
        """A websocket to ``kernel`` for ``session`` (the same session again after a drop: the server replays
        what the kernel sent meanwhile)."""
        import websocket

        url = f"{self.base.replace('https', 'wss', 1)}/api/kernels/{kernel}/channels?session_id={session}"
        cookie = "; ".join(f"{c.name}={c.value}" for c in self.http.cookies)
        return websocket.create_connection(url, timeout=timeout_s, header=[f"Cookie: {cookie}"],
                                           sslopt={"ca_certs": self.hub.cert, "cert_reqs": ssl.CERT_REQUIRED})

    def execute(self, ws: _KernelSocket, code: str, timeout_s: float, silence_s: float = SILENCE_S) -> str:
        """Run ``code`` over the kernel's websocket ``ws``; returns its stdout.

        Every wait is bounded by what is left of ``timeout_s`` (seconds). After ``silence_s`` seconds with no
        message for the request, the kernel's state is asked over HTTP: still busy, the wait goes on; idle, a
        message was lost on the way (the reply, or the request itself), so the request is sent again, as a
        learner runs a cell again (the simulated cells can run twice without harm). Past ``timeout_s`` the
        learner fails with the reason."""
        msg_id, resent = self._send_execute(ws, code), 0
        out: list[str] = []
        deadline, replied, idle = time.monotonic() + timeout_s, False, False
        heard = time.monotonic()
        while (left := deadline - time.monotonic()) > 0:
            raw = ws.recv(min(left, silence_s))
            if raw is None:  # silence: nothing at all for min(left, silence_s) seconds
                if time.monotonic() - heard < silence_s:
                    continue
                heard = time.monotonic()
                if ws.state(min(left, 60.0)) != "idle":
                    continue  # busy (a long cell on a loaded machine) or unknown: keep waiting
                if replied:
                    return "".join(out)  # only the idle status was lost
                msg_id, out, idle, resent = self._send_execute(ws, code), [], False, resent + 1
                continue
            msg = json.loads(raw)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            heard = time.monotonic()
            kind = msg["header"]["msg_type"]
            # The reply (shell channel) can overtake the output (iopub): done once the kernel says idle too.
            idle = idle or (kind == "status" and msg["content"].get("execution_state") == "idle")
            replied = replied or kind == "execute_reply"
            if idle and replied:
                return "".join(out)
            if kind == "stream":
                out.append(msg["content"]["text"])
            elif kind == "error":
                where = [ln for ln in msg["content"].get("traceback", []) if "File " in ln or "line " in ln]
                raise HubError(f"{msg['content']['ename']}: {msg['content']['evalue']} "
                               f"({_plain(where[-1]) if where else 'no traceback'})")
        raise HubError(f"{self.name}: no reply from the kernel within {timeout_s:.0f} s"
                       f" (request sent {resent + 1} times, {'reply' if replied else 'no reply'} received)")

    def _send_execute(self, ws: _KernelSocket, code: str) -> str:
        """Send an execute request for ``code``; returns its message id."""
        msg_id = uuid.uuid4().hex
        ws.send(json.dumps({
            "header": {"msg_id": msg_id, "username": self.name, "session": ws.session,
                       "msg_type": "execute_request", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        return msg_id

    def kernel_state(self, kernel: str, timeout_s: float) -> str:
        """The kernel's execution state as its server tracks it ("idle", "busy", ...; "" when not known)."""
        try:
            r = self.http.get(f"{self.base}/api/kernels/{kernel}", timeout=max(1.0, timeout_s))
            return str(r.json().get("execution_state", "")) if r.ok else ""
        except (OSError, ValueError):  # requests' errors are OSErrors; a page that is not JSON: not known
            return ""


class _KernelSocket:
    """A kernel's websocket that reconnects when the server drops it, as JupyterLab does (up to
    :data:`RECONNECTS` times per socket): with the same session id the server replays the kernel's messages
    it kept while no client was connected, so a cell in flight still gets its output."""

    RECONNECTS = 5

    def __init__(self, learner: _Learner, kernel: str, session: str, timeout_s: float) -> None:
        import websocket

        self.learner, self.kernel, self.session, self.timeout_s = learner, kernel, session, timeout_s
        self.reconnects = 0
        try:
            self.ws = learner.open_socket(kernel, session, timeout_s)
        except (websocket.WebSocketException, OSError) as exc:  # the handshake itself lost: try again
            self._reopen(exc)

    def send(self, text: str) -> None:
        import websocket

        while True:
            try:
                self.ws.send(text)
                return
            except (websocket.WebSocketConnectionClosedException, OSError) as exc:  # OSError: reset, broken pipe
                self._reopen(exc)

    def _reopen(self, exc: Exception) -> None:
        """Open the socket again after the server dropped it, as a browser does after a moment: at most
        :data:`RECONNECTS` opens per socket, waiting 1, 2, 4, 8, 8 s before each (a loaded server needs a
        moment); an open whose handshake is lost too counts as one and is tried again."""
        import websocket

        while True:
            if self.reconnects >= self.RECONNECTS:
                raise exc
            self.reconnects += 1
            time.sleep(min(2.0 ** (self.reconnects - 1), 8.0))
            try:
                self.ws = self.learner.open_socket(self.kernel, self.session, min(self.timeout_s, 120.0))
                return
            except (websocket.WebSocketException, OSError) as again:
                exc = again

    def recv(self, timeout_s: float) -> str | None:
        """The next message, or None after ``timeout_s`` seconds of silence."""
        import websocket

        while True:
            try:
                self.ws.settimeout(max(0.01, timeout_s))
                return self.ws.recv()
            except websocket.WebSocketTimeoutException:
                return None
            except (websocket.WebSocketConnectionClosedException, OSError) as exc:  # lost while waiting: reopen
                self._reopen(exc)  # the server replays what the kernel sent meanwhile to the same session

    def state(self, timeout_s: float) -> str:
        """The kernel's execution state, asked over HTTP (see :meth:`_Learner.kernel_state`)."""
        return self.learner.kernel_state(self.kernel, timeout_s)

    def close(self) -> None:
        """Close the socket; one the server already dropped closes without error."""
        import websocket

        try:
            self.ws.close()
        except (websocket.WebSocketException, OSError):  # already gone: nothing left to close
            pass


def _plain(text: str) -> str:
    """A traceback line without its terminal colours."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text).strip().splitlines()[0][:200]


def _one_learner(hub: Hub, name: str, other: str, full_chapter: bool, timeout_s: float) -> LearnerRun:
    run = LearnerRun(name)
    course = hub.hub_dir / "course"
    step = "login"  # named in the error: where a learner failed
    try:
        t0 = time.monotonic()
        learner = _Learner(hub, name)
        run.retries = learner.login(timeout_s)
        run.news_off = learner.open_lab()
        run.login_s = time.monotonic() - t0
        t1, step = time.monotonic(), "opening the notebooks"
        kernels = {path: learner.open_notebook(path) for path in (CHAPTER, EXERCISES, QUIZ)}
        run.kernels = len(set(kernels.values()))
        # One websocket at a time, opened when its notebook is used: a socket this client leaves unread would not
        # answer the server's pings (a browser does), and the server would close it under load.
        sockets = {}
        try:
            for path in (EXERCISES, QUIZ):
                step = f"running {path}"
                sockets[path] = learner.connect(kernels[path], timeout_s)
                learner.execute(sockets[path], _notebook_code(course, path, True)[0], timeout_s)
                run.reconnects += sockets[path].reconnects
                sockets.pop(path).close()
            run.open_s = time.monotonic() - t1
            t2, step = time.monotonic(), f"running {CHAPTER}"
            chapter = sockets[CHAPTER] = learner.connect(kernels[CHAPTER], timeout_s)
            for cell in _notebook_code(course, CHAPTER, not full_chapter):
                learner.execute(chapter, cell, timeout_s)
            step = "the shared-memory demo"
            report = json.loads(learner.execute(chapter, DEMO_CODE, timeout_s).strip().splitlines()[-1])
            run.demo_s = time.monotonic() - t2
            run.correct = bool(report["checks"]) and all(c["correct"] for c in report["checks"])
            run.shm_names = report["shm_during"]
            run.kernel_maxrss_MiB = report["maxrss_MiB"]
            homes = hub.hub_dir / "homes"
            targets = {"other_home": str(homes / other), "other_file": str(homes / other / CHAPTER),
                       "secrets": str(hub.hub_dir / "secrets" / "hub.json"), "hub_pid": hub.proc.pid,
                       "course": str(course)}
            step, code = "the isolation probe", PROBE_CODE.format(targets=json.dumps(targets))
            run.probe = json.loads(learner.execute(chapter, code, timeout_s).strip().splitlines()[-1])
            run.reconnects += chapter.reconnects
        finally:
            for ws in sockets.values():
                ws.close()
    except Exception as exc:  # noqa: BLE001 - one learner's failure is a result, not a crash of the benchmark
        run.error = f"{type(exc).__name__}: {exc}".splitlines()[0] + f" ({step})"
    return run


def simulate(hub: Hub, learners: int, *, full_chapter: bool = False, arrival_s: float = 0.0,
             timeout_s: float = 900) -> list[LearnerRun]:
    """``learners`` learners, arriving at random within ``arrival_s`` seconds, each doing the steps above."""
    names = [f"learner{i:02d}" for i in range(1, learners + 1)]
    runs: dict[str, LearnerRun] = {}
    rng = random.Random(0)
    delays = sorted(rng.uniform(0, arrival_s) for _ in names)

    def work(i: int, name: str) -> None:
        time.sleep(delays[i])
        other = names[(i + 1) % len(names)] if len(names) > 1 else name
        runs[name] = _one_learner(hub, name, other, full_chapter, timeout_s)

    threads = [threading.Thread(target=work, args=(i, n), name=f"learner-{n}") for i, n in enumerate(names)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [runs[n] for n in names]


def usage(hub: Hub) -> dict[str, dict[str, float]]:
    """Per learner: PSS (MiB) and CPU time (s, their processes and the children they waited for) right now."""
    import psutil

    out: dict[str, dict[str, float]] = {}
    for proc in psutil.process_iter(["pid"]):
        try:
            env = proc.environ()
            user = env.get("JUPYTERHUB_USER")
            if not user or not str(proc.cwd()).startswith(str(hub.hub_dir)):
                continue
            cpu = proc.cpu_times()
            row = out.setdefault(user, {"pss_MiB": 0.0, "cpu_s": 0.0, "processes": 0})
            row["pss_MiB"] += proc.memory_full_info().pss / 2**20
            row["cpu_s"] += cpu.user + cpu.system + cpu.children_user + cpu.children_system
            row["processes"] += 1
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
            continue
    return out


def secrets_seen(hub: Hub, runs: list[LearnerRun]) -> list[str]:
    """Names of learners whose kernel environment holds a hub secret (the admin password, the API token)."""
    secret = json.loads((hub.hub_dir / "secrets" / "hub.json").read_text())
    values = [v for k, v in secret.items() if isinstance(v, str) and v]  # the admin password, the API token
    others = secret.get("passwords", {})  # and another learner's password
    return [r.name for r in runs if any(v in json.dumps(r.probe.get("env", {}))
                                        for v in values + [pw for n, pw in others.items() if n != r.name])]
