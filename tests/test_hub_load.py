"""The load simulator's kernel conversation (``nvcourse.devtools.hub_load``) when messages are lost: every wait
is bounded, a lost reply makes it ask the kernel's state and send the request again, and a kernel that never
answers fails the learner with the reason instead of hanging the benchmark. No hub needed: a fake socket."""

from __future__ import annotations

import json

import pytest
import websocket

from nvcourse.devtools import hub_load
from nvcourse.devtools.hub import HubError


class FakeKernel:
    """Answers each execute request as a kernel does over the websocket (busy, its output, the reply, idle),
    leaving out the messages named in ``drop`` as ``(request number, message type)``."""

    session = "session-1"

    def __init__(self, drop=(), state="idle", answer=True):
        self.drop, self.kernel_state, self.answer = set(drop), state, answer
        self.queue: list[str] = []
        self.requests: list[str] = []
        self.waits: list[float] = []

    def send(self, text: str) -> None:
        req = json.loads(text)
        self.requests.append(req["content"]["code"])
        if not self.answer:
            return
        parent = {"msg_id": req["header"]["msg_id"]}
        n = len(self.requests)
        msgs = [("status", {"execution_state": "busy"}), ("stream", {"name": "stdout", "text": "42\n"}),
                ("execute_reply", {"status": "ok"}), ("status", {"execution_state": "idle"})]
        for kind, content in msgs:
            if (n, kind) in self.drop or (n, content.get("execution_state")) in self.drop:
                continue
            self.queue.append(json.dumps({"header": {"msg_type": kind}, "parent_header": parent,
                                          "content": content}))

    def recv(self, timeout_s: float) -> str | None:
        self.waits.append(timeout_s)
        return self.queue.pop(0) if self.queue else None

    def state(self, timeout_s: float) -> str:
        return self.kernel_state


def _learner() -> hub_load._Learner:
    learner = object.__new__(hub_load._Learner)  # no hub: only the websocket conversation is exercised
    learner.name = "learner01"
    return learner


def test_a_lost_reply_sends_the_request_again_and_gets_the_output():
    ws = FakeKernel(drop={(1, "execute_reply")})
    assert _learner().execute(ws, "print(42)", timeout_s=30, silence_s=0.0) == "42\n"
    assert ws.requests == ["print(42)", "print(42)"]


def test_a_lost_idle_status_after_the_reply_does_not_run_the_cell_again():
    ws = FakeKernel(drop={(1, "idle")})
    assert _learner().execute(ws, "print(42)", timeout_s=30, silence_s=0.0) == "42\n"
    assert ws.requests == ["print(42)"]


def test_a_busy_kernel_is_waited_for_within_the_deadline_only():
    ws = FakeKernel(state="busy", answer=False)
    with pytest.raises(HubError, match=r"learner01: no reply from the kernel within 0 s \(request sent 1 times"):
        _learner().execute(ws, "print(42)", timeout_s=0.2, silence_s=0.05)
    assert ws.requests == ["print(42)"]  # busy: never sent again
    assert max(ws.waits) <= 0.2  # no single wait longer than what was left


def test_a_kernel_that_never_answers_fails_the_learner_with_the_reason():
    ws = FakeKernel(answer=False)
    with pytest.raises(HubError, match="no reply from the kernel within .* no reply received"):
        _learner().execute(ws, "print(42)", timeout_s=0.2, silence_s=0.05)
    assert len(ws.requests) >= 2  # idle and silent: the request was sent again


class _SilentSocket:
    """A websocket that never receives anything: it times out after whatever timeout it was given."""

    def __init__(self):
        self.timeouts: list[float] = []

    def settimeout(self, seconds: float) -> None:
        self.timeouts.append(seconds)

    def recv(self) -> str:
        raise websocket.WebSocketTimeoutException("timed out")


def test_one_receive_waits_only_the_time_it_is_given():
    sock = object.__new__(hub_load._KernelSocket)
    sock.ws, sock.reconnects = _SilentSocket(), 0
    assert sock.recv(3.0) is None
    assert sock.ws.timeouts == [3.0]


class _DroppedOnce:
    """A websocket the server closes on the first send."""

    def __init__(self, sent: list[str]):
        self.sent = sent

    def send(self, text: str) -> None:
        if not self.sent:
            self.sent.append("dropped")
            raise websocket.WebSocketConnectionClosedException("Connection to remote host was lost.")
        self.sent.append(text)


def test_a_socket_dropped_on_send_is_reopened_as_a_browser_does(monkeypatch):
    sent: list[str] = []
    opened = []
    learner = type("L", (), {"open_socket": lambda self, *a: opened.append(a) or _DroppedOnce(sent)})()
    sock = object.__new__(hub_load._KernelSocket)
    sock.learner, sock.kernel, sock.session, sock.timeout_s = learner, "k1", "s1", 30.0
    sock.ws, sock.reconnects = _DroppedOnce(sent), 0
    monkeypatch.setattr(hub_load.time, "sleep", lambda s: None)
    sock.send("hello")
    assert sent == ["dropped", "hello"] and sock.reconnects == 1 and opened == [("k1", "s1", 30.0)]
    sock.reconnects = hub_load._KernelSocket.RECONNECTS
    sent.clear()
    with pytest.raises(websocket.WebSocketConnectionClosedException):  # past its reconnects: the learner fails
        sock.send("again")


class _LostWhileWaiting:
    """A websocket the server closes while the client waits for a reply (seen once in 3 loaded suite runs)."""

    def settimeout(self, seconds: float) -> None:
        pass

    def recv(self) -> str:
        raise websocket.WebSocketConnectionClosedException("Connection to remote host was lost.")


class _Replaying:
    """The same session reopened: the server replays what the kernel sent meanwhile."""

    def __init__(self, messages: list[str]):
        self.messages = messages

    def settimeout(self, seconds: float) -> None:
        pass

    def recv(self) -> str:
        return self.messages.pop(0)


def _socket(learner) -> hub_load._KernelSocket:
    sock = object.__new__(hub_load._KernelSocket)
    sock.learner, sock.kernel, sock.session, sock.timeout_s, sock.reconnects = learner, "k1", "s1", 30.0, 0
    return sock


def test_a_socket_lost_while_waiting_is_reopened_and_the_reply_still_arrives(monkeypatch):
    replay = _Replaying(["the kernel's reply"])
    learner = type("L", (), {"open_socket": lambda self, *a: replay})()
    sock = _socket(learner)
    sock.ws = _LostWhileWaiting()
    monkeypatch.setattr(hub_load.time, "sleep", lambda s: None)
    assert sock.recv(5.0) == "the kernel's reply"
    assert sock.ws is replay and sock.reconnects == 1


def test_a_reopen_whose_handshake_is_lost_too_is_tried_again_then_gives_up(monkeypatch):
    tries = []

    def open_socket(self, *args):
        tries.append(args)
        if len(tries) < 3:  # the loaded server drops the handshake twice
            raise websocket.WebSocketConnectionClosedException("Connection to remote host was lost.")
        return _Replaying(["late but whole"])

    waits: list[float] = []
    monkeypatch.setattr(hub_load.time, "sleep", waits.append)
    sock = _socket(type("L", (), {"open_socket": open_socket})())
    sock.ws = _LostWhileWaiting()
    assert sock.recv(5.0) == "late but whole"
    assert len(tries) == 3 and sock.reconnects == 3 and waits == [1.0, 2.0, 4.0]  # a browser's backing off
    def never_opens(self, *args):
        raise websocket.WebSocketConnectionClosedException("Connection to remote host was lost.")

    sock.ws, sock.learner = _LostWhileWaiting(), type("L", (), {"open_socket": never_opens})()
    with pytest.raises(websocket.WebSocketConnectionClosedException):  # every open lost: the learner fails
        sock.recv(5.0)
    assert sock.reconnects == hub_load._KernelSocket.RECONNECTS


def test_a_handshake_lost_on_the_first_open_is_tried_again(monkeypatch):
    tries = []

    def open_socket(self, *args):
        tries.append(args)
        if len(tries) == 1:
            raise ConnectionResetError("reset by peer")
        return _Replaying([])

    monkeypatch.setattr(hub_load.time, "sleep", lambda s: None)
    sock = hub_load._KernelSocket(type("L", (), {"open_socket": open_socket})(), "k1", "s1", 30.0)
    assert sock.reconnects == 1 and tries == [("k1", "s1", 30.0), ("k1", "s1", 30.0)]
