"""The HTTP/1.1 protocol ``hookgate serve`` gives uvicorn (``uvicorn.Config(http=<class>)``, its documented
way to choose one): uvicorn's own h11 protocol with a read deadline (``read_deadline_protocol``).

uvicorn bounds only the idle wait between two requests on a kept-alive connection (``timeout_keep_alive``),
and any byte received disarms that timer. A client that connects and sends nothing, sends half a head,
or declares a body it never finishes would otherwise hold its connection, and a file descriptor, for
as long as it likes; enough of them exhaust the server's descriptors, and a Claude Code ``http`` hook
that then cannot connect treats that as a non-blocking error: the policy lapses. With the deadline:

- a request's head must be in within ``read_timeout`` seconds of the connection's opening, or, on a
  kept-alive connection, within ``timeout_keep_alive + read_timeout`` of the previous response's end
  (uvicorn closes a connection idle for ``timeout_keep_alive`` first, as before): else the connection
  is closed (no answer: h11 cannot answer a request it has no head of);
- its body must be in within ``read_timeout`` of its head: else it gets 408 ``{"error": "..."}`` and
  the connection is closed (only closed when the answer has already begun). The app's own reading of
  the body then sees the client gone (``http.disconnect``), as when a client leaves mid-body;
- the rest of a body the app answered without reading (a 401, a 415, an event over ``max_body``) is
  bounded as the next head is.

Time the app takes once a request's body is in (a dispatch, an approval wait) is never bounded here, and
time the loop is held up by other work (``LOOP_LAG``) does not count against a client.

Cost: one ``TimerHandle`` per connection at a time. Each request only moves the deadline (a float); the
timer, when it fires, arms itself again for what is left, or stops while the app has a request (its
response arms it again): a busy connection makes a new timer about once per ``read_timeout``, not per
request, and no task.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from gateway.events import dump_bytes

log = logging.getLogger("hookgate.server")

LOOP_LAG = 0.25
"""Seconds a deadline timer may fire late before the lateness counts as the server's, not the client's: when
the event loop was held up by other work (an in-process handler that holds it), the connection gets a
fresh ``read_timeout`` from then, so a body that arrived meanwhile, and is read only now (in several reads
when it is large), is not cut off with a 408."""


class ReadDeadlineProtocol(H11Protocol):
    """uvicorn's ``H11Protocol`` with the read deadline of the module docstring; build a configured class
    with ``read_deadline_protocol``."""

    read_timeout: ClassVar[float]
    """Seconds a request's head, and then its body, may take to arrive (> 0)."""

    _deadline = 0.0  # loop time by which the current head or body must be in
    _timer: asyncio.TimerHandle | None = None  # the connection's one timer; None while the app has the request
    _armed_for = 0.0  # loop time the timer was set to fire at

    @staticmethod
    def on_timeout(part: str) -> None:
        """Called once per connection cut off by the deadline; ``part`` is ``"head"`` or ``"body"``."""

    def connection_made(  # type: ignore[override]  # uvicorn's own signature (asyncio.Transport)
        self, transport: asyncio.Transport
    ) -> None:
        super().connection_made(transport)
        self.transport = OneWriteResponses(transport, self)  # type: ignore[assignment]  # (a Transport's interface)
        self._deadline = self.loop.time() + self.read_timeout
        self._arm()

    def data_received(self, data: bytes) -> None:
        cycle = self.cycle
        super().data_received(data)
        if self.cycle is not cycle:  # a request's head was parsed: its body is due within read_timeout
            self._deadline = self.loop.time() + self.read_timeout
            if self._timer is None:
                self._arm()

    def on_response_complete(self) -> None:
        cycle = self.cycle
        super().on_response_complete()
        if self.transport.is_closing():
            return
        # The next head (after uvicorn's keep-alive wait) or the rest of a body the app did not read; or,
        # when a pipelined request's head was parsed just now, its body.
        wait = self.read_timeout if self.cycle is not cycle else self.timeout_keep_alive + self.read_timeout
        self._deadline = self.loop.time() + wait
        if self._timer is None:
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _arm(self) -> None:
        self._armed_for = self._deadline
        self._timer = self.loop.call_at(self._deadline, self._check)

    def _check(self) -> None:
        self._timer = None
        now = self.loop.time()
        if now - self._armed_for > LOOP_LAG:  # the loop was held up (a long in-process check): what the client
            self._deadline = now + self.read_timeout  # sent meanwhile is read only now; it gets a fresh budget
        transport = self.transport
        if transport.is_closing() or transport.get_protocol() is not self:  # closed, or now a WebSocket's
            return
        cycle = self.cycle
        in_app = cycle is not None and not cycle.response_complete
        if in_app and not cycle.more_body:
            return  # the request is in: the app takes its time; its response arms the timer again
        if self.loop.time() < self._deadline:
            self._arm()  # the deadline moved on since this timer was set
            return
        part = "body" if in_app else "head"
        log.debug("closing the connection from %s: request %s not in within %gs", self.client, part, self.read_timeout)
        self.on_timeout(part)
        if in_app and not cycle.response_started:
            self._answer_408()
        with contextlib.suppress(h11.LocalProtocolError):
            self.conn.send(h11.ConnectionClosed())
        transport.close()

    def _answer_408(self) -> None:
        body = dump_bytes({"error": f"request body not received within {self.read_timeout:g} s"})
        headers = [
            *self.server_state.default_headers,
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        with contextlib.suppress(h11.LocalProtocolError):
            out = self.conn.send(h11.Response(status_code=408, headers=headers, reason=b"Request Timeout"))
            out = (out or b"") + (self.conn.send(h11.Data(data=body)) or b"")
            out += self.conn.send(h11.EndOfMessage()) or b""
            self.transport.write(out)
        # What connection_lost says a moment later, said now: the app's reads end (http.disconnect) and
        # anything it still sends is dropped, not written after this answer.
        self.cycle.disconnected = True


class OneWriteResponses:
    """The connection's transport, as uvicorn's h11 cycle writes to it, with a response's head held back
    until its body comes: the status line and headers, the body and the end of the message leave in one
    ``write`` (one ``send`` and one TCP segment, where uvicorn makes two), when the app sends the body in
    the same event-loop iteration as the head (``hookgate serve``'s routes do). A head whose body has not come
    by the next iteration is written then (``call_soon``); every other call, ``close`` included, writes
    what is held first, then goes to the transport."""

    __slots__ = ("_held", "_protocol", "_transport")

    def __init__(self, transport: asyncio.Transport, protocol: H11Protocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held + data)
            return
        cycle = self._protocol.cycle
        if cycle is not None and cycle.response_started and not cycle.response_complete and data[:5] == b"HTTP/":
            self._held = data  # a response's head: its body follows
            self._protocol.loop.call_soon(self.flush)
            return
        if data:
            self._transport.write(data)

    def flush(self) -> None:
        """Write a held response head (its body did not come in the same iteration)."""
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> object:  # is_closing, pause_reading, get_extra_info, ...
        self.flush()
        return getattr(self._transport, name)


def read_deadline_protocol(
    read_timeout: float, on_timeout: Callable[[str], None] | None = None
) -> type[ReadDeadlineProtocol]:
    """A ``ReadDeadlineProtocol`` class for ``uvicorn.Config(http=...)``: heads and bodies due within
    ``read_timeout`` seconds (> 0; see module docstring); ``on_timeout(part)`` (``"head"`` or ``"body"``)
    is called for each connection the deadline cuts off. Raises ValueError for a ``read_timeout`` <= 0."""
    if not read_timeout > 0:
        raise ValueError(f"read_timeout must be > 0 (got {read_timeout!r})")
    namespace: dict[str, object] = {"read_timeout": float(read_timeout)}
    if on_timeout is not None:
        namespace["on_timeout"] = staticmethod(on_timeout)
    return type("ReadDeadlineProtocol", (ReadDeadlineProtocol,), namespace)
