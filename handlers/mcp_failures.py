"""What a failed ``mcp_tool`` call is, said as a ``HandlerError``, and whether its session is kept.

- The SDK's own "connection closed" (``MCPError`` with ``mcp.types.CONNECTION_CLOSED``, -32000) is told
  apart from a server's JSON-RPC error with the same code (-32000 opens JSON-RPC's range of
  implementation-defined server errors, and servers use it widely) by the transport: the connection is
  closed only when the session's transport really ended (its read side saw EOF: ``_Slot.lost``; a write
  was refused because the pipe or stream is gone: ``_Slot.write_failed``) or the session was being
  closed. Then the session is discarded and the next call starts the server again.
- Any other ``MCPError`` is the server's answer: ``MCP error CODE from SERVER/TOOL: MESSAGE``; a stdio
  session is kept (the server is alive and answered), an HTTP or SSE one is reconnected unless the code
  says the request itself was wrong (a restarted HTTP server no longer knows the session).
- Anything else (a transport failure, an answer that is not a tool result) discards the session.
- A call that got no answer by its deadline (``abandoned``) also gives its session up: the SDK has sent
  the spec's ``notifications/cancelled`` for it (it does so for every request whose caller is cancelled),
  but a server that is stuck in the tool (a single-threaded stdio server blocks its only reader loop)
  would never answer another call, so every later call would time out too. The session is closed (a
  stdio server gets its stdin closed, then SIGTERM and SIGKILL for its process group, as at shutdown) and
  the next call starts a new one. Other calls in flight on it fail with a message that says why.
"""

from __future__ import annotations

from typing import Any, Protocol

from gateway.errors import HandlerError


class _Slot(Protocol):
    """What is read of a session (``handlers.mcp_sessions._Slot``)."""

    name: str
    server: dict[str, Any]
    lost: bool
    write_failed: bool
    why: str

    @property
    def usable(self) -> bool: ...

    def discard(self) -> None: ...

    def note(self) -> str: ...


DEADLINE_SLACK = 0.5
"""Seconds before a call's deadline within which a cancellation counts as the deadline's (the handler's
``asyncio.timeout`` is armed a moment before the handler computes the deadline it passes on)."""


def abandoned(slot: _Slot, tool: str) -> None:
    """A call to ``tool`` on ``slot`` got no answer in time: give the session up (module docstring)."""
    if slot.usable:
        import logging

        slot.why = f"a call to {tool!r} got no answer within its timeout, so the session was replaced"
        slot.discard()
        logging.getLogger("hookgate.mcp").info(
            "MCP server %r: a call to %r got no answer within its timeout; the session is replaced", slot.name, tool
        )


def leaf(exc: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups: the one that says what went wrong."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def connection_closed(exc: Exception, slot: _Slot) -> bool:
    """Whether ``exc`` (an ``MCPError``) says the session's connection is gone, not the server's error."""
    from mcp.types import CONNECTION_CLOSED

    if slot.lost:  # the transport ended (or the session was given up) while the call was in flight
        return True
    return getattr(exc, "code", None) == CONNECTION_CLOSED and (slot.write_failed or not slot.usable)


def call_failed(exc: Exception, name: str, tool: str, slot: _Slot, meta: dict[str, Any]) -> HandlerError:
    """The HandlerError for a failed call (the session is discarded when it may be broken; module docstring)."""
    from mcp import MCPError
    from mcp.types import INVALID_PARAMS, METHOD_NOT_FOUND

    if isinstance(exc, MCPError):
        if connection_closed(exc, slot):
            why = slot.why or "it exited or crashed"
            slot.discard()
            return HandlerError(
                f"MCP server {name!r} closed the connection during the call to {tool!r} "
                f"({why}; it is restarted on the next call){slot.note()}",
                {**meta, "mcp_error": exc.code},
            )
        if slot.server["type"] != "stdio" and exc.code not in (METHOD_NOT_FOUND, INVALID_PARAMS):
            slot.discard()  # e.g. a restarted HTTP server no longer knows our session: reconnect next time
        return HandlerError(f"MCP error {exc.code} from {name}/{tool}: {exc.message}", {**meta, "mcp_error": exc.code})
    # transport failures (anyio, httpx2, OSError), an invalid result (pydantic)
    slot.discard()
    detail = leaf(exc)
    return HandlerError(f"MCP call {name}/{tool} failed: {type(detail).__name__}: {detail}{slot.note()}", meta)
