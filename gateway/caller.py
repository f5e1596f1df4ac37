"""Whether the caller still waits for the answer to the event being dispatched.

``hookgate serve`` puts the ASGI ``receive`` of the request that carried the event in ``RECEIVE`` for the
dispatch (``gateway.serve.routes``); handler tasks inherit it (``contextvars``). ``await gone()`` is True
once that HTTP client has hung up, as Claude Code's ``http`` hook does at its timeout. Elsewhere
(``hookgate run``, the Python API) nobody is watched and ``gone()`` is False: a ``hookgate run`` process
whose host gave up is killed instead.

For a handler that waits long and hands something out once: an approval (``handlers.approval``) must not
be consumed by a wait whose host stopped listening, or the retry, which the README promises the answer
to, would find it used.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

RECEIVE: ContextVar[Any] = ContextVar("hookgate_caller_receive", default=None)
"""The ASGI ``receive`` callable of the request being answered (``hookgate serve``), or None."""

PROBE_SECONDS = 0.005
"""How long ``gone`` listens for the client's disconnect before it answers "still there"."""


def watched() -> bool:
    """True when an HTTP caller is watched (``hookgate serve``)."""
    return RECEIVE.get() is not None


async def gone() -> bool:
    """True when the HTTP client that sent the event has disconnected (its request body was read whole
    before dispatch, so the only message left to receive is ``http.disconnect``)."""
    receive = RECEIVE.get()
    if receive is None:
        return False
    import asyncio

    try:
        async with asyncio.timeout(PROBE_SECONDS):
            message = await receive()
    except TimeoutError:
        return False
    return isinstance(message, dict) and message.get("type") == "http.disconnect"
