"""MCP client sessions for ``mcp_tool`` handlers: a pool of up to ``sessions`` per configured server (default
one), shared, restarted when they die; and the server checks behind ``hookgate validate --check-servers``.

Lifetime follows the ``RunContext`` that owns the manager (``sessions_for(ctx)``):

- ``hookgate serve`` and the Python API (``Gateway``): a server is connected on first use and the session is
  kept open and reused by every later event; concurrent calls share it (MCP requests are correlated by id, so
  they are pipelined: no lock). With ``sessions: N`` (N > 1) a server may get up to N sessions (stdio: N
  processes, to use more cores): one more is started in the background while every session has a call in
  flight, and a call goes to the session with the fewest in flight (see ``McpSessions``).
  ``ctx.aclose()`` (server shutdown, ``Gateway.aclose()``) closes them all.
- ``hookgate run``: the context lives for one event, so every run starts the stdio server and does the MCP
  handshake again (measured: about 0.65 s for a Python server such as the shipped validator), then
  stops it. Two ``mcp_tool`` handlers of one event share the session. Use ``hookgate serve`` to pay that
  once: a warm call costs a few milliseconds (``tests/bench/bench_mcp.py``).

Each session is owned by a task of its own (anyio transports must be entered and left in one task), which
opens the transport (stdio subprocess, streamable HTTP or SSE) and the ``mcp.Client``, publishes the client,
and waits until it is told to close or the transport ends. Callers never own the connection, so a caller
cancelled at its deadline never tears down a session others use, and a slow start keeps going in the
background (bounded by the server's ``startTimeout``) so the next event finds it ready. Closing or
cancelling the owner runs the transport's shutdown, which runs to its end even under cancellation and
terminates the stdio server's whole process group when it does not exit on its own: no process outlives
the manager. stdio servers use hookgate's own transport (``handlers.mcp_stdio``: the SDK's ``stdio_client``
contract without its two pipe tasks, writes batched per loop iteration); HTTP and SSE the SDK's.

Protocol: the client speaks the handshake era (the SDK's ``Client(mode="legacy")``: one ``initialize``, then
plain JSON-RPC) unless the server says ``protocol: auto`` (the SDK probes ``server/discover`` and, on a
2026-07-28 server, stamps protocol version, client info and capabilities into every request's ``_meta``,
which the server validates again on every call: measured with the shipped validator, about 10% more CPU
per call in hookgate and 25% more in the server).

Restarts: a stdio server whose stdout ends (it exited or crashed) is marked dead at once; the calls in flight
on it fail with ``HandlerError`` (the handler's ``failClosed`` decides: deny, or a non-blocking error; a
call is never retried, as a tool call need not be idempotent) and the next call starts a new process.
So does a session with a call that ran past its deadline (``handlers.mcp_failures.abandoned``: a server
stuck in a tool would time out every later call too). Starting is retried with tenacity
(``START_ATTEMPTS`` attempts, exponential backoff with jitter, never sleeping past the caller's
deadline); after a start that failed every attempt, calls fail fast for
``BROKEN_COOLDOWN`` seconds, so a broken server does not add its start-up time to every tool call.

Errors: everything is mapped to ``HandlerError`` here (``MCPError``, transport and start-up failures, with
the last line the stdio server wrote to stderr); the ``mcp`` SDK is imported only when a session starts.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from gateway.errors import HandlerError
from handlers.mcp_failures import DEADLINE_SLACK, abandoned, call_failed
from handlers.mcp_failures import leaf as first_leaf
from handlers.mcp_launch import PLACEHOLDERS, env_refs, expand, placeholder_values, stdio_launch
from handlers.mcp_stdio import ReadStreamBase

if TYPE_CHECKING:
    from mcp import Client
    from mcp.types import CallToolResult, Tool

    from gateway.context import RunContext
    from handlers.mcp_stdio import ErrLog

RESOURCE = "mcp_sessions"
"""Name of the manager in ``RunContext.get_resource``."""
START_ATTEMPTS = 3
"""Start attempts per call when a server is down (tenacity; also bounded by the caller's deadline)."""
BROKEN_COOLDOWN = 5.0
"""Seconds during which calls fail fast after a server failed every start attempt."""
ERRLOG_EVERY = 64
"""Calls of a session between two checks of its stderr file's size (one ``fstat`` each)."""

__all__ = [
    "PLACEHOLDERS",
    "RESOURCE",
    "McpSessions",
    "env_refs",
    "expand",
    "placeholder_values",
    "sessions_for",
    "stdio_launch",
]


# ---------------------------------------------------------------------------- one session


class _StartFailed(HandlerError):
    """A server could not be started or connected (retried with backoff)."""


class _WatchedRead(ReadStreamBase):
    """A transport's read stream that reports its end (EOF: the server exited or the connection closed)."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


class _WatchedWrite:
    """A transport's write stream that reports a write refused because the stream is gone."""

    def __init__(self, inner: Any, on_broken: Callable[[], None]) -> None:
        self._inner = inner
        self._on_broken = on_broken

    async def send(self, item: Any) -> None:
        import anyio

        try:
            await self._inner.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_broken()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedWrite:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


@contextlib.asynccontextmanager
async def _watched(
    transport: Any, on_end: Callable[[], None], on_broken: Callable[[], None]
) -> AsyncIterator[tuple[Any, Any]]:
    async with transport as (read_stream, write_stream):
        yield _WatchedRead(read_stream, on_end), _WatchedWrite(write_stream, on_broken)


def _import_sdk() -> None:
    """Import the SDK (in a worker thread: about 0.8 s), then move every object alive now out of the cyclic
    collector's way (``gc.freeze``): the SDK's modules and pydantic models are some 57,000 objects that live
    as long as the process, and every full collection walked them (30-60 ms each under ``hookgate serve``'s
    load, every half second or so: a tenth of serve's CPU and its p99 latency). Frozen objects are still
    freed by reference counting; only cycles among the objects alive at this moment are never collected.
    Done once per process (``_FROZEN``), not on every session start."""
    import gc

    import mcp
    import mcp.client.sse
    import mcp.client.streamable_http  # noqa: F401

    global _FROZEN
    if not _FROZEN:
        _FROZEN = True
        gc.freeze()


_FROZEN = False


class _Slot:
    """One connection to one server, owned by its own task (see module docstring)."""

    def __init__(self, name: str, server: dict[str, Any], redact: Callable[[], tuple[str, ...]] | None = None) -> None:
        loop = asyncio.get_running_loop()
        self.name = name
        self.server = server
        self.redact = redact or tuple
        """The config's ``audit.redact`` patterns (for log lines about the server's output)."""
        self.ready: asyncio.Future[Client] = loop.create_future()
        self.ready.add_done_callback(lambda f: f.cancelled() or f.exception())  # never "not retrieved"
        self.closing = asyncio.Event()
        self.lost = False
        self.in_flight = 0
        """Calls of this session waiting for their answer (the pool sends a call to the least busy)."""
        self.calls = 0
        """Calls made on this session so far."""
        self.write_failed = False
        """A message could not be written: the transport's pipe or stream is gone (``handlers.mcp_failures``)."""
        self.why = ""
        """Why the session was given up while it still ran (said to the calls in flight on it)."""
        self.errlog: ErrLog | None = None
        self._last_stderr = ""
        self._timed_out = False
        self.task = asyncio.create_task(self._own(), name=f"hookgate-mcp-{name}")
        self._timer = loop.call_later(float(server.get("start_timeout") or 30.0), self._start_timed_out)

    @property
    def usable(self) -> bool:
        return not self.lost and not self.closing.is_set()

    def stderr(self) -> str:
        return (self.errlog.tail() if self.errlog is not None else "") or self._last_stderr

    def note(self) -> str:
        line = self.stderr()
        return f" (stderr: {line})" if line else ""

    def discard(self) -> None:
        """Mark dead and let the owner close it (a stdio server is stopped); the next call starts anew."""
        self.lost = True
        self.closing.set()

    def close(self) -> None:
        self.closing.set()
        if not self.ready.done():
            self.task.cancel()

    def _start_timed_out(self) -> None:
        if not self.ready.done():
            self._timed_out = True
            self.task.cancel()

    async def _own(self) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                client = await self._connect(stack)
                self._timer.cancel()
                self.ready.set_result(client)
                await self.closing.wait()
        except asyncio.CancelledError:
            if not self.ready.done():
                why = (
                    f"did not start within {self.server.get('start_timeout')} s (startTimeout)"
                    if self._timed_out
                    else "start cancelled (shutting down)"
                )
                self.ready.set_exception(_StartFailed(f"MCP server {self.name!r} {why}{self.note()}"))
            if not self._timed_out:
                raise
        except BaseException as exc:  # ExceptionGroups from anyio task groups, OSError, MCPError, ...
            if not self.ready.done():
                self.ready.set_exception(_StartFailed(self._start_error(exc)))
            if not isinstance(exc, Exception):
                raise
        finally:
            self.lost = True
            self._timer.cancel()
            if self.errlog is not None:
                self._last_stderr = self.errlog.tail()
                self.errlog.close()
                self.errlog = None

    def _mark_lost(self) -> None:
        self.lost = True
        self.closing.set()

    def _mark_write_failed(self) -> None:
        self.write_failed = True

    async def _connect(self, stack: contextlib.AsyncExitStack) -> Client:
        # import mcp costs ~0.8 s: done in a thread, so deadlines and other events are not held up
        await asyncio.to_thread(_import_sdk)
        from mcp import Client
        from mcp.types import Implementation

        from gateway.wire import VERSION
        from handlers.mcp_logs import install

        redact = self.redact()
        install(redact)  # the SDK's own log records: one redacted line each (never a multi-line dump)
        server = self.server
        kind = server["type"]
        if kind == "stdio":
            from handlers.mcp_stdio import ErrLog, stdio_transport

            command, args, env, cwd = stdio_launch(server)
            self.errlog = ErrLog()
            transport: Any = stdio_transport(
                command,
                args,
                env or None,
                cwd,
                self.errlog.file,
                self._mark_lost,
                name=self.name,
                redact=redact,
                on_broken=self._mark_write_failed,
            )
        else:
            allowed = frozenset(server.get("allowed_env_vars") or ())
            headers = {k: expand(v, {}, allowed, plain=True) for k, v in (server.get("headers") or {}).items()}
            if kind == "sse":
                from mcp.client.sse import sse_client

                transport = sse_client(server["url"], headers=headers or None)
            else:
                import httpx2
                from mcp.client.streamable_http import streamable_http_client

                http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
                )
                transport = streamable_http_client(server["url"], http_client=http)
            transport = _watched(transport, self._mark_lost, self._mark_write_failed)
        client = Client(
            transport,
            client_info=Implementation(name="hookgate", version=VERSION),
            mode=server.get("protocol") or "legacy",
        )
        await stack.enter_async_context(client)
        return client

    def _start_error(self, exc: BaseException) -> str:
        from mcp import MCPError

        leaf = first_leaf(exc)
        if isinstance(leaf, MCPError):
            detail = f"the MCP handshake failed: {leaf.message}"
        elif isinstance(leaf, FileNotFoundError):
            detail = f"command not found: {self.server.get('command')}"
        elif isinstance(leaf, OSError):
            detail = f"cannot start {self.server.get('command')}: {leaf.strerror or leaf}"
        else:
            detail = f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__
        where = self.server.get("url") or self.server.get("command")
        return f"MCP server {self.name!r} ({where}) did not start: {detail}{self.note()}"


# ---------------------------------------------------------------------------- the manager


class McpSessions:
    """Sessions to the configured MCP servers (``RuntimeConfig.mcp_servers``: name -> normalized entry).

    ``call_tool``/``list_tools`` open or reuse a session of the server; ``aclose`` closes every session and
    waits for the owners (stdio servers stopped). Safe for concurrent use from tasks of one event loop.

    Pool: outside ``hookgate run`` (``mode`` other than ``run``) a server may have up to its ``sessions``
    setting of warm sessions (for stdio, server processes). A call goes to the ready session with the fewest
    calls in flight; when every ready session is busy and the pool is not full, one more is started in the
    background (the call does not wait for it). A session that dies leaves the pool (its calls in flight
    fail) and is replaced on demand. ``hookgate run`` keeps one session per server.
    """

    def __init__(
        self, servers: dict[str, Any], *, mode: str = "api", redact: Callable[[], tuple[str, ...]] | None = None
    ) -> None:
        self.servers = servers
        self.mode = mode
        self.redact = redact
        """Returns the config's ``audit.redact`` patterns (read when a session starts)."""
        self._slots: dict[str, list[_Slot]] = {}
        self._owners: set[asyncio.Task[None]] = set()
        self._broken: dict[str, tuple[float, str]] = {}
        self._no_growth: dict[str, float] = {}
        self._started: set[str] = set()
        self._closed = False
        self.starts = 0
        """Sessions started so far (restarts and pool growth included)."""

    def pool_size(self, name: str) -> int:
        """How many sessions server ``name`` may have at once (its ``sessions``; 1 under ``hookgate run``)."""
        if self.mode == "run":
            return 1
        return max(1, int(self.servers.get(name, {}).get("sessions") or 1))

    def sessions(self, name: str) -> list[_Slot]:
        """The usable (ready or starting) sessions of server ``name``; dead ones are dropped."""
        slots = self._slots.get(name)
        if not slots:
            return []
        if not all(s.usable for s in slots):
            slots = self._slots[name] = [s for s in slots if s.usable]
        return slots

    def _start(self, name: str) -> tuple[_Slot, str]:
        if self._closed:
            raise HandlerError("MCP sessions are closed (the gateway is shutting down)")
        server = self.servers.get(name)
        if server is None:
            known = ", ".join(sorted(self.servers)) or "none"
            raise HandlerError(f"no MCP server named {name!r} is configured (configured: {known})")
        how = "restarted" if name in self._started else "new"
        self._started.add(name)
        slot = _Slot(name, server, self.redact)
        self.starts += 1
        self._slots.setdefault(name, []).append(slot)
        self._owners.add(slot.task)
        slot.task.add_done_callback(self._owners.discard)
        return slot, how

    def _slot(self, name: str) -> tuple[_Slot, str]:
        """A session to wait for when none is ready: one that is starting, else a new one."""
        for slot in self.sessions(name):
            return slot, "warm" if slot.ready.done() else "starting"
        return self._start(name)

    def _grow(self, name: str, slots: list[_Slot]) -> None:
        """Start one more session in the background when the pool has room and none is starting."""
        if len(slots) >= self.pool_size(name) or self._closed or any(not s.ready.done() for s in slots):
            return
        loop = asyncio.get_running_loop()
        if loop.time() < self._no_growth.get(name, 0.0):
            return
        slot, _ = self._start(name)

        def started(ready: asyncio.Future[Any]) -> None:
            if ready.cancelled() or ready.exception() is not None:  # e.g. a server that allows one session
                self._no_growth[name] = loop.time() + BROKEN_COOLDOWN

        slot.ready.add_done_callback(started)

    def _ready(self, name: str) -> _Slot | None:
        """The ready session with the fewest calls in flight (growing the pool when all are busy), or None."""
        best: _Slot | None = None
        slots = self._slots.get(name)
        if slots and len(slots) == 1 and self.pool_size(name) == 1:  # the common case: one warm session
            slot = slots[0]
            if slot.usable and slot.ready.done() and not slot.ready.cancelled() and slot.ready.exception() is None:
                return slot
        slots = self.sessions(name)
        for slot in slots:
            ready = slot.ready.done() and not slot.ready.cancelled() and slot.ready.exception() is None
            if ready and (best is None or slot.in_flight < best.in_flight):
                best = slot
        if best is not None and best.in_flight and len(slots) < self.pool_size(name):
            self._grow(name, slots)
        return best

    async def connect(self, name: str, deadline: float | None = None) -> tuple[Client, _Slot, str]:
        """A client of the server, starting it if needed: ``(client, slot, how)``, ``how`` being ``warm``,
        ``starting`` (another call is starting it), ``new`` or ``restarted``.

        deadline: ``loop.time()`` by which the caller gives up (tenacity never sleeps past it).
        Raises HandlerError when the server cannot be started.
        """
        slot = self._ready(name)
        if slot is not None:
            return slot.ready.result(), slot, "warm"  # the common case: no retry machinery
        from tenacity import (
            AsyncRetrying,
            retry_if_exception_type,
            stop_after_attempt,
            stop_before_delay,
            wait_exponential_jitter,
        )

        loop = asyncio.get_running_loop()
        broken = self._broken.get(name)
        if broken is not None and loop.time() < broken[0] and not self.sessions(name):
            raise HandlerError(f"{broken[1]} (not retried for {broken[0] - loop.time():.1f} s more)")
        budget = 3600.0 if deadline is None else max(0.0, deadline - loop.time())
        first_how: str | None = None
        client: Client | None = None
        try:
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(START_ATTEMPTS) | stop_before_delay(budget),
                wait=wait_exponential_jitter(multiplier=0.2, max=2.0, jitter=0.1),
                retry=retry_if_exception_type(_StartFailed),
                reraise=True,
            ):
                with attempt:
                    slot, how = self._slot(name)
                    first_how = first_how or how
                    # shield: a caller cancelled at its deadline must not cancel a start others may use
                    client = await asyncio.shield(slot.ready)
        except _StartFailed as exc:
            self._broken[name] = (loop.time() + BROKEN_COOLDOWN, str(exc))
            raise
        self._broken.pop(name, None)
        assert client is not None and slot is not None and first_how is not None
        return client, slot, first_how

    async def call_tool(
        self, name: str, tool: str, arguments: dict[str, Any], *, deadline: float | None = None
    ) -> tuple[CallToolResult, dict[str, Any]]:
        """Call ``tool`` on server ``name``: ``(result, meta)``; meta has ``server`` and ``session``.

        An ``isError`` result is returned as is (the caller decides). Raises HandlerError for an MCP
        protocol error, a dead server or a transport failure.
        """
        client, slot, how = await self.connect(name, deadline)  # first: it imports the SDK off the event loop
        meta: dict[str, Any] = {"server": name, "session": how}
        slot.in_flight += 1
        slot.calls += 1
        timer = asyncio.timeout_at(deadline)
        try:
            async with timer:
                result = await client.call_tool(tool, arguments)
        except TimeoutError as exc:
            if not timer.expired():
                raise call_failed(exc, name, tool, slot, meta) from None  # the transport's own timeout
            abandoned(slot, tool)
            raise
        except asyncio.CancelledError:  # the handler's deadline (asyncio.timeout), or shutting down
            if deadline is not None and asyncio.get_running_loop().time() >= deadline - DEADLINE_SLACK:
                abandoned(slot, tool)
            raise
        except Exception as exc:
            raise call_failed(exc, name, tool, slot, meta) from None
        finally:
            slot.in_flight -= 1
        if slot.errlog is not None and not slot.calls % ERRLOG_EVERY:
            slot.errlog.trim()
        return result, meta

    async def list_tools(self, name: str, *, deadline: float | None = None) -> list[Tool]:
        """Every tool of server ``name`` (all pages). Raises HandlerError."""
        client, slot, _ = await self.connect(name, deadline)
        from mcp import MCPError

        tools: list[Tool] = []
        cursor: str | None = None
        try:
            for _ in range(100):
                page = await client.list_tools(cursor=cursor)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
        except MCPError as exc:
            raise HandlerError(f"MCP error {exc.code} listing the tools of {name!r}: {exc.message}") from None
        except Exception as exc:
            slot.discard()
            raise HandlerError(f"listing the tools of {name!r} failed: {type(exc).__name__}: {exc}") from None
        return tools

    async def aclose(self) -> None:
        """Close every session and wait until their owners are done (stdio servers stopped)."""
        self._closed = True
        for slots in list(self._slots.values()):
            for slot in slots:
                slot.close()
        owners = list(self._owners)
        if owners:
            await asyncio.gather(*owners, return_exceptions=True)
        self._slots.clear()


def sessions_for(ctx: RunContext) -> McpSessions:
    """The context's shared ``McpSessions`` (created on first use, closed by ``ctx.aclose()``)."""

    async def close(manager: McpSessions) -> None:
        await manager.aclose()

    def make() -> McpSessions:
        return McpSessions(
            ctx.config.mcp_servers, mode=ctx.mode, redact=lambda: tuple(ctx.config.audit.get("redact") or ())
        )

    manager: McpSessions = ctx.get_resource(RESOURCE, make, close)
    return manager
