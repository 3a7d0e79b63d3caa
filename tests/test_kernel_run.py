"""A notebook run must not sit idle for its whole cell timeout when a reply arrives while the client sends.

nbclient waits for a cell's execute_reply with a zmq.asyncio poll on the shell socket; meanwhile its Output-widget
stand-in sends comm_msgs on that socket through jupyter_client's Session.send, a raw send that consumes the socket's
wake-up. These tests replay that order of events on real zmq sockets (no kernel): the reply lands, the client sends,
and the pending poll must still see the reply at once (nvcourse.devtools.kernel_run), not at its timeout.
"""

from __future__ import annotations

import asyncio
import select
import threading
import time

import nbformat
import pytest
import zmq
import zmq.asyncio
from jupyter_client.session import Session

from nvcourse.devtools import execute_notebooks, i18n_build, kernel_run, slides

POLL_TIMEOUT = 5.0  # the poll's own timeout: a lost wake-up would make the reply wait this long
PROMPT = 2.0  # how soon a reply that has arrived must be seen (a loaded machine may take a moment to wake the loop)


async def _reply_lands_while_the_client_sends(channel_class: type) -> float:
    """Seconds a pending ``get_msg`` takes to return a reply that arrived just before a send on its socket."""
    ctx, kernel_ctx = zmq.asyncio.Context(), zmq.Context()
    session = Session(key=b"k")
    kernel = kernel_ctx.socket(zmq.ROUTER)  # the kernel's side, used synchronously
    port = kernel.bind_to_random_port("tcp://127.0.0.1")
    dealer = ctx.socket(zmq.DEALER)
    dealer.connect(f"tcp://127.0.0.1:{port}")
    channel = channel_class(dealer, session)
    try:
        channel.send(session.msg("execute_request", {"code": "1"}))
        identity, _ = session.feed_identities(kernel.recv_multipart())  # the request: who to answer
        start = time.monotonic()
        waiting = asyncio.ensure_future(channel.get_msg(timeout=POLL_TIMEOUT))
        await asyncio.sleep(0.2)  # the poll is registered and the loop is idle in epoll
        session.send(kernel, "execute_reply", {"status": "ok"}, ident=identity)
        # Blocking (the loop does not run) until the reply has reached the client and signalled its ZMQ_FD; select
        # only looks at the fd, it does not consume the signal.
        assert select.select([dealer.FD], [], [], POLL_TIMEOUT)[0], "the reply never reached the client"
        channel.send(session.msg("comm_msg", {"comm_id": "x", "data": {}}))  # nbclient's Output widget sync
        reply = await asyncio.wait_for(waiting, POLL_TIMEOUT + 5)
        assert reply["msg_type"] == "execute_reply"
        return time.monotonic() - start - 0.2
    finally:
        dealer.close(linger=0)
        kernel.close(linger=0)
        ctx.term()
        kernel_ctx.term()


def _waited(channel_class: type) -> float:
    """:func:`_reply_lands_while_the_client_sends` on a fresh event loop in a thread of its own: a test before this
    one may leave an event loop running in the main thread (then asyncio.run refuses to start)."""
    result: dict[str, object] = {}

    def run() -> None:
        try:
            result["waited"] = asyncio.run(_reply_lands_while_the_client_sends(channel_class))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's own thread below
            result["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(POLL_TIMEOUT + 30)
    assert not worker.is_alive(), "the replay did not finish"
    if "error" in result:
        raise result["error"]  # type: ignore[misc]
    return float(result["waited"])  # type: ignore[arg-type]


def test_a_reply_that_lands_while_the_client_sends_is_seen_at_once():
    waited = _waited(kernel_run.RearmedChannel)
    assert waited < PROMPT, f"the reply waited {waited:.1f} s (until the poll's timeout): the wake-up was lost"


@pytest.mark.slow
def test_the_plain_channel_loses_that_wake_up():
    """The upstream behaviour the fix is for (jupyter/nbclient#312): if this starts failing, upstream fixed it."""
    from jupyter_client.channels import AsyncZMQSocketChannel

    waited = _waited(AsyncZMQSocketChannel)
    assert waited > POLL_TIMEOUT - PROMPT


def test_the_clients_channels_that_send_are_rearmed():
    client = kernel_run.RearmedKernelManager(kernel_name="python3").client()
    assert isinstance(client, kernel_run.RearmedKernelClient)
    for name in ("shell", "control", "stdin"):
        assert issubclass(getattr(client, f"{name}_channel_class"), kernel_run.RearmedChannel), name


def test_every_notebook_run_uses_the_rearmed_client(monkeypatch, tmp_path):
    """execute_notebooks, the French build (through it) and the decks build their client with kernel_run."""
    import nbclient

    made: list[dict] = []

    class Client:
        def __init__(self, nb, **kwargs):
            made.append(kwargs)

        def execute(self):
            return None

    monkeypatch.setattr(nbclient, "NotebookClient", Client)
    path = tmp_path / "01_tiny.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]), path)
    monkeypatch.setattr(i18n_build, "ROOT", tmp_path)
    monkeypatch.setenv("NVCOURSE_LANG", "en")  # restored afterwards: the runs below set it (and PYTHONHASHSEED)
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    execute_notebooks.execute(path)
    i18n_build.execute([path], "fr")
    slides.executed_in_deck_style(path)
    assert len(made) == 3
    assert all(kw["kernel_manager_class"] is kernel_run.RearmedKernelManager for kw in made)


def test_no_notebook_run_builds_nbclients_client_itself():
    """Every place that runs a notebook (tools, tests, benchmarks) goes through kernel_run.notebook_client."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    found = [str(p.relative_to(root)) for folder in ("nvcourse", "tests", "benchmarks")
             for p in sorted((root / folder).rglob("*.py"))
             if p.name not in ("kernel_run.py", "test_kernel_run.py") and "NotebookClient(" in p.read_text("utf-8")]
    assert found == []
