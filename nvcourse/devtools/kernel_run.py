"""The NotebookClient our notebook runs use (execute_notebooks, slides, i18n_build): nbclient's, with one fix.

The fix: a notebook run could sit idle for the whole cell timeout (600 s), then finish as if nothing happened.
nbclient waits for a cell's ``execute_reply`` by polling the shell socket (zmq.asyncio, woken by the socket's
edge-triggered ZMQ_FD). While it waits, its stand-in for an ipywidgets ``Output`` widget (nvcourse's explorers
have one) answers each output it captures with a ``comm_msg`` sent on that same shell socket. jupyter_client's
``Session.send`` sends it raw, through a plain shadow of the asyncio socket; the send runs libzmq's command
processing, which consumes the wake-up of a reply that has just arrived, and zmq.asyncio never hears of the send,
so it does not look again. The reply sits unread in the client until the poll's timeout, whose last zmq_poll finds
it. (Upstream: jupyter/nbclient#312, open; jupyter_client keeps the raw send on purpose, jupyter_client#1059.)

Here every send on a channel the client also reads (shell, control, stdin) is followed by reading ZMQ_EVENTS through
the asyncio socket: pyzmq then schedules a check of the socket, so a pending poll sees a reply that is already
there. Nothing else changes.
"""

from __future__ import annotations

from typing import Any

import zmq
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.manager import AsyncKernelManager
from traitlets import DottedObjectName, Type


class RearmedChannel(AsyncZMQSocketChannel):
    """A channel whose sends cannot hide a message that arrived meanwhile from a pending ``get_msg``."""

    def send(self, msg: dict[str, Any]) -> None:
        super().send(msg)  # Session.send: a raw send on a sync shadow of this socket (may drain the ZMQ_FD edge)
        if self.socket is not None and not self.socket.closed:
            self.socket.get(zmq.EVENTS)  # zmq.asyncio reads the events and wakes a pending poll if one is ready


class RearmedKernelClient(AsyncKernelClient):
    shell_channel_class = Type(RearmedChannel)
    control_channel_class = Type(RearmedChannel)
    stdin_channel_class = Type(RearmedChannel)


class RearmedKernelManager(AsyncKernelManager):
    client_class = DottedObjectName("nvcourse.devtools.kernel_run.RearmedKernelClient")
    client_factory = Type(klass=RearmedKernelClient)


def notebook_client(nb, **kwargs: Any):
    """``nbclient.NotebookClient(nb, **kwargs)`` whose kernel client is a :class:`RearmedKernelClient`."""
    import nbclient  # looked up at call time: nbclient is a test/teaching extra (and tests replace its client)

    kwargs.setdefault("kernel_manager_class", RearmedKernelManager)
    return nbclient.NotebookClient(nb, **kwargs)
