"""Serve an ``MCPServer`` over this process's stdin/stdout without a worker thread or a task per message.

The SDK's own stdio transport (``mcp.server.stdio.stdio_server()`` with no arguments) reads and writes through
``anyio.wrap_file``: every line read, every write and every flush is a hop to a worker thread and back, and two
tasks bridge the file to the server through memory streams. Under concurrent calls those hops bound a small,
fast server such as the policy validator. ``serve_stdio`` keeps the SDK's server and its drivers and gives them
streams of its own (``ReadStream``/``WriteStream``, the SDK's stream protocols, which ``Server.run`` and
``serve_loop`` take from any transport) over ``asyncio`` pipe transports:

- ``MessageIn.receive`` reads a line and parses it with the SDK's ``jsonrpc_message_adapter`` in the
  dispatcher's own task (a line that does not parse is handed on as an exception value, as ``stdio_server``
  does);
- ``MessageOut.send`` serializes the message into a buffer written once per event-loop iteration: the answers
  to calls that arrived together leave in one ``write`` (and wake the client once);
- a connection that opens with ``initialize`` (the handshake era; hookgate's default ``protocol: legacy``) is
  served by the SDK's ``serve_loop`` (its handshake-only driver) inside the server's lifespan, and any other
  by ``Server.run`` (the dual-era driver, which also serves the 2026-07-28 protocol). ``Server.run`` peeks at
  the first request by relaying every message through a task and a memory stream of its own; the peek here
  is one buffered message in ``MessageIn``.

The server's tools run through its public ``list_tools``/``call_tool`` behind the SDK's low-level ``Server``,
without the SDK's per-message OpenTelemetry span (nothing exports it here).

As the SDK does for its own streams, the descriptors 0 and 1 are moved out of the way while serving (stdin reads
``/dev/null``, stdout writes to stderr), so a stray ``print`` cannot corrupt the protocol. When stdin or stdout is
not a pipe, socket or terminal (a regular file), the SDK's thread-backed transport is used as it is.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

MAX_LINE = 1 << 28
"""Longest message line read (bytes): far above any hook event (``hookgate serve`` caps those at 64 MiB)."""


class PipeLines:
    """The read side ``stdio_server`` iterates: one decoded line (with its newline) per message."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        line = await self.readline()
        if not line:
            raise StopAsyncIteration
        return line

    async def readline(self) -> str:
        """The next line, with its newline ('' at EOF; a partial last line comes without one)."""
        return (await self._reader.readline()).decode("utf-8", "replace")


class PipeWriter:
    """The write side ``stdio_server`` uses: ``write(text)`` buffers in the transport, ``flush()`` waits
    until the pipe has taken it (flow control)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()

    def write_now(self, data: bytes) -> bool:
        """Hand ``data`` to the pipe transport; False when the pipe is gone (the client closed it)."""
        if self._writer.transport.is_closing():
            return False
        self._writer.write(data)
        return True

    @property
    def backlog(self) -> int:
        """Bytes the transport holds because the pipe is full."""
        return self._writer.transport.get_write_buffer_size()

    @property
    def broken(self) -> bool:
        """Whether the pipe is gone."""
        return self._writer.transport.is_closing()


FLUSH_AT = 1 << 18
"""Buffered bytes at which ``MessageOut.send`` writes at once instead of at the end of the loop iteration."""
BACKLOG = 1 << 20
"""Bytes held by the pipe transport past which ``MessageOut.send`` waits for the pipe to take them."""


class MessageIn:
    """The server's read stream (``ReadStream[SessionMessage | Exception]``): one parsed line per ``receive``,
    ``EndOfStream`` at EOF. ``first_request`` reads ahead to the first request and keeps what it read."""

    def __init__(self, lines: PipeLines) -> None:
        from mcp.shared.message import SessionMessage
        from mcp.types import jsonrpc_message_adapter

        self._lines = lines
        self._parse = jsonrpc_message_adapter.validate_json
        self._message = SessionMessage
        self._ahead: deque[Any] = deque()
        self._ended = False
        self._closed = False

    async def _next(self) -> Any:
        import anyio

        while True:
            line = await self._lines.readline()
            if not line:
                raise anyio.EndOfStream
            try:
                return self._message(self._parse(line, by_name=False))
            except Exception as exc:  # as stdio_server: the dispatcher logs it and reads on
                return exc

    async def first_request(self, limit: int = 8) -> Any:
        """The first JSON-RPC request (None when the stream ends first or ``limit`` other items come
        first); everything read stays queued for ``receive``."""
        import anyio
        from mcp.types import JSONRPCRequest

        while len(self._ahead) < limit:
            try:
                item = await self._next()
            except anyio.EndOfStream:
                self._ended = True
                return None
            self._ahead.append(item)
            if isinstance(item, self._message) and isinstance(item.message, JSONRPCRequest):
                return item.message
        return None

    async def receive(self) -> Any:
        import anyio

        if self._closed:
            raise anyio.ClosedResourceError
        if self._ahead:
            return self._ahead.popleft()
        if self._ended:
            raise anyio.EndOfStream
        return await self._next()

    def __aiter__(self) -> MessageIn:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> MessageIn:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class MessageOut:
    """The server's write stream (``WriteStream[SessionMessage]``): ``send`` serializes into a buffer written
    to the pipe once per event-loop iteration (at once past ``FLUSH_AT`` bytes); it waits only while the pipe
    holds more than ``BACKLOG`` bytes, and raises ``BrokenResourceError`` once the client closed the pipe."""

    def __init__(self, writer: PipeWriter) -> None:
        self._writer = writer
        self._loop = asyncio.get_running_loop()
        self._chunks: list[bytes] = []
        self._size = 0
        self._scheduled = False
        self._closed = False

    async def send(self, item: Any) -> None:
        import anyio

        if self._closed:
            raise anyio.ClosedResourceError
        if self._writer.broken:
            raise anyio.BrokenResourceError
        data = item.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
        self._chunks.append(data)
        self._size += len(data)
        if self._size >= FLUSH_AT:
            self.flush()
        elif not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self.flush)
        if self._writer.backlog > BACKLOG:
            await self._writer.flush()

    def flush(self) -> None:
        """Hand what is buffered to the pipe (dropped when the pipe is gone)."""
        self._scheduled = False
        if self._chunks:
            data = self._chunks[0] if len(self._chunks) == 1 else b"".join(self._chunks)
            self._chunks.clear()
            self._size = 0
            self._writer.write_now(data)

    async def aclose(self) -> None:
        self.flush()
        self._closed = True
        if not self._writer.broken:
            await self._writer.flush()

    async def __aenter__(self) -> MessageOut:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _streamable(fd: int) -> bool:
    """Whether asyncio's pipe transports accept ``fd`` (a pipe, socket or character device)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


@asynccontextmanager
async def pipe_streams() -> AsyncIterator[tuple[PipeLines, PipeWriter] | None]:
    """``(lines, writer)`` on private duplicates of fds 0 and 1 (which point at ``/dev/null`` and stderr
    meanwhile, restored on exit), or None when either is not a pipe, socket or terminal."""
    if not (_streamable(0) and _streamable(1)):
        yield None
        return
    loop = asyncio.get_running_loop()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    reader = asyncio.StreamReader(limit=MAX_LINE)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
    )
    write_transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
    try:
        yield PipeLines(reader), PipeWriter(writer)
    finally:
        read_transport.close()
        write_transport.close()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


def lowlevel_server(app: Any) -> Any:
    """The SDK's low-level ``Server`` answering ``tools/list`` and ``tools/call`` through ``app``'s public
    ``list_tools``/``call_tool`` (an ``MCPServer``); a tool that fails answers ``isError`` with its message,
    as ``MCPServer`` itself does."""
    from mcp import MCPError
    from mcp.server.lowlevel import Server
    from mcp.types import CallToolRequestParams, CallToolResult, ListToolsResult, TextContent

    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=await app.list_tools())

    async def call_tool(ctx: Any, params: CallToolRequestParams) -> Any:
        try:
            return await app.call_tool(params.name, params.arguments or {})
        except MCPError:
            raise
        except Exception as exc:  # ToolError (unknown tool, bad arguments) or a failing tool
            return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)

    server = Server(app.name, instructions=app.instructions, on_list_tools=list_tools, on_call_tool=call_tool)
    # The SDK wraps every message in an OpenTelemetry span (``Server.middleware`` starts as
    # ``[OpenTelemetryMiddleware()]``; its documented opt-out is dropping it from that list). This process never
    # installs an exporter, so the spans only cost time: about 10% of a call's CPU here.
    server.middleware = [m for m in server.middleware if type(m).__name__ != "OpenTelemetryMiddleware"]
    return server


def _modern(request: Any) -> bool:
    """Whether ``request`` opens a 2026-07-28 connection (the SDK's rule: a request other than ``initialize``
    whose ``_meta`` carries the protocol-version key)."""
    from mcp.types import PROTOCOL_VERSION_META_KEY

    if request is None or request.method == "initialize":
        return False
    meta = (request.params or {}).get("_meta")
    return isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta


async def serve_stdio(app: Any) -> None:
    """Serve ``app`` (an ``MCPServer``) over stdin/stdout until stdin ends (see module docstring)."""
    async with pipe_streams() as streams:
        if streams is None:  # not pipes: the SDK's transport as it is
            await app.run_stdio_async()
            return
        from mcp.server.runner import serve_loop

        server = lowlevel_server(app)
        lines, writer = streams
        read_stream, write_stream = MessageIn(lines), MessageOut(writer)
        options = server.create_initialization_options()
        if _modern(await read_stream.first_request()):
            await server.run(read_stream, write_stream, options)
            return
        async with server.lifespan(server) as state:  # what Server.run enters around its driver
            await serve_loop(server, read_stream, write_stream, lifespan_state=state, init_options=options)
