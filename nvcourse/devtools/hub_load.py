"""Simulated learners on the classroom hub: log in through the REST API, start servers, run chapter 04's demos.

Used by ``benchmarks/hub_load.py`` (the figures) and by a small test. Each learner: a server started
through ``POST /hub/api/users/NAME/server``, a kernel started through that server's REST API, and the
demo code sent over the kernel's websocket as a notebook would send it. The code runs real
multi-process collectives over shared memory and prints one JSON line that is checked here.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from dataclasses import dataclass, field

from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import websocket_connect

from .hub import Hub, HubError

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


@dataclass
class LearnerRun:
    name: str
    start_s: float = 0.0
    demo_s: float = 0.0
    correct: bool = False
    shm_names: list[str] = field(default_factory=list)
    kernel_maxrss_MiB: float = 0.0
    error: str = ""


def _headers(hub: Hub) -> dict[str, str]:
    return {"Authorization": f"token {hub.token}", "Content-Type": "application/json"}


async def _execute(hub: Hub, user: str, code: str, timeout_s: float = 300, keep: bool = False) -> str:
    """Start a kernel on ``user``'s server, run ``code``, return its stdout.

    The kernel is shut down after, unless ``keep`` (a learner's kernel stays up while they read on; the
    benchmark measures memory with it); stopping the hub ends it then.
    """
    http = AsyncHTTPClient()
    base = f"{hub.url}/user/{user}/api/kernels"
    resp = await http.fetch(HTTPRequest(base, method="POST", body="{}", headers=_headers(hub), request_timeout=60))
    kernel = json.loads(resp.body)["id"]
    try:
        ws = await websocket_connect(HTTPRequest(f"{base.replace('http', 'ws', 1)}/{kernel}/channels",
                                                 headers=_headers(hub)))
        msg_id = uuid.uuid4().hex
        ws.write_message(json.dumps({
            "header": {"msg_id": msg_id, "username": user, "session": uuid.uuid4().hex,
                       "msg_type": "execute_request", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": False, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        out, deadline = [], time.monotonic() + timeout_s
        while True:
            raw = await asyncio.wait_for(ws.read_message(), timeout=max(1.0, deadline - time.monotonic()))
            if raw is None:
                raise HubError("the kernel's websocket closed")
            msg = json.loads(raw)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = msg["header"]["msg_type"]
            if kind == "stream":
                out.append(msg["content"]["text"])
            elif kind == "error":
                raise HubError(f"{msg['content']['ename']}: {msg['content']['evalue']}")
            elif kind == "execute_reply":
                ws.close()
                return "".join(out)
    finally:
        if not keep:
            await http.fetch(HTTPRequest(f"{base}/{kernel}", method="DELETE", headers=_headers(hub)),
                             raise_error=False)


async def _wait_ready(hub: Hub, user: str, timeout_s: float) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        info = await asyncio.to_thread(hub.api, "GET", f"/users/{user}")
        server = (info or {}).get("servers", {}).get("", {})
        if server.get("ready"):
            return
        await asyncio.sleep(0.5)
    raise HubError(f"{user}'s server was not ready after {timeout_s:.0f} s")


async def _one_learner(hub: Hub, user: str, timeout_s: float) -> LearnerRun:
    run = LearnerRun(user)
    t0 = time.monotonic()
    try:
        await asyncio.to_thread(hub.api, "POST", f"/users/{user}/server")
        await _wait_ready(hub, user, timeout_s)
        run.start_s = time.monotonic() - t0
        t1 = time.monotonic()
        report = json.loads((await _execute(hub, user, DEMO_CODE, timeout_s, keep=True)).strip().splitlines()[-1])
        run.demo_s = time.monotonic() - t1
        run.correct = bool(report["checks"]) and all(c["correct"] for c in report["checks"])
        run.shm_names = report["shm_during"]
        run.kernel_maxrss_MiB = report["maxrss_MiB"]
    except Exception as exc:  # noqa: BLE001 - one learner's failure is a result, not a crash of the benchmark
        run.error = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return run


def simulate(hub: Hub, learners: int, timeout_s: float = 600) -> list[LearnerRun]:
    """Create ``learners`` users, start all their servers and run the demo in each at once."""
    names = [f"learner{i:02d}" for i in range(1, learners + 1)]
    existing = {u["name"] for u in hub.api("GET", "/users") or []}  # the hub creates its allowed users itself
    missing = [n for n in names if n not in existing]
    if missing:
        hub.api("POST", "/users", {"usernames": missing})

    async def everyone() -> list[LearnerRun]:
        return list(await asyncio.gather(*(_one_learner(hub, n, timeout_s) for n in names)))

    # In a thread of its own: asyncio.run refuses to start where an event loop already runs (a Jupyter kernel,
    # or pytest after the browser test, whose Playwright loop stays in the main thread).
    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["runs"] = asyncio.run(everyone())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=work, name="nvcourse-hub-load")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["runs"]  # type: ignore[return-value]
