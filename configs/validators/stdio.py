"""Serve an ``MCPServer`` over this process's stdin/stdout without a worker thread per message.

The SDK's own stdio transport (``mcp.server.stdio.stdio_server()`` with no arguments) reads and writes through
``anyio.wrap_file``: every line read, every write and every flush is a hop to a worker thread and back. Under
concurrent calls those hops (and the GIL hand-offs between the threads) bound a small, fast server such as the
policy validator: measured with ``tests/bench/bench_serve.py``, one warm ``mcp_tool`` doubled its throughput
without them. ``serve_stdio`` keeps the SDK's transport and server and only hands ``stdio_server`` explicit
streams (its documented parameters) that read and write the pipes on the event loop (``asyncio`` pipe
transports), and runs the server's tools through its public ``list_tools``/``call_tool`` behind the SDK's
low-level ``Server``, without the SDK's per-message OpenTelemetry span (nothing exports it here).

As the SDK does for its own streams, the descriptors 0 and 1 are moved out of the way while serving (stdin reads
``/dev/null``, stdout writes to stderr), so a stray ``print`` cannot corrupt the protocol. When stdin or stdout is
not a pipe, socket or terminal (a regular file), the SDK's thread-backed transport is used as it is.
"""

from __future__ import annotations

import asyncio
import os
import stat
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
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", "replace")


class PipeWriter:
    """The write side ``stdio_server`` uses: ``write(text)`` buffers in the transport, ``flush()`` waits
    until the pipe has taken it (flow control)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


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


async def serve_stdio(app: Any) -> None:
    """Serve ``app`` (an ``MCPServer``) over stdin/stdout until stdin ends (see module docstring)."""
    from mcp.server.stdio import stdio_server

    async with pipe_streams() as streams:
        if streams is None:  # not pipes: the SDK's transport as it is
            await app.run_stdio_async()
            return
        server = lowlevel_server(app)
        async with stdio_server(*streams) as (read_stream, write_stream):  # type: ignore[arg-type]
            await server.run(read_stream, write_stream, server.create_initialization_options())
