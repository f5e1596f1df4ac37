"""hookgate's stdio transport for MCP servers: a ``mcp.client._transport.Transport`` (the SDK's documented
transport protocol: an async context manager yielding a read and a write stream of ``SessionMessage``) that
runs the server as a subprocess and speaks newline-delimited JSON-RPC over its stdin and stdout, like the SDK's
own ``stdio_client``, with the same process handling and without its two pipe tasks.

Why: ``stdio_client`` bridges the pipes to the session through two anyio memory streams and two tasks (a
reader and a writer), so every message crosses a task switch and a memory stream on its way, and every
request is written with a syscall of its own. Here the session's dispatcher reads a line and parses it in its
own ``receive()``, and ``send()`` serializes the message into a buffer that is written once per event-loop
iteration (16 calls sent at once are one ``write``, which also wakes the server once). Measured with
``tests/bench/bench_mcp.py --loop``: see README, Performance.

The contract is ``stdio_client``'s:

- the server starts in a session (process group) of its own, with ``get_default_environment()`` plus the
  configured ``env``, its stderr going to ``errlog``; a failed start raises ``OSError`` (``FileNotFoundError``
  for a missing command);
- each stdout line is one message, parsed with the SDK's ``jsonrpc_message_adapter``; a line that does not
  parse is dropped here (``stdio_client`` hands it to the session as an exception value, which drops it
  too): the first one of a session is logged as one line, redacted with the audit record's patterns
  (``handlers.mcp_logs``; a startup banner can hold a key, and ``hookgate run``'s stderr reaches the model
  on exit 2), never as the parser's multi-line dump of it; a call waiting for an answer that never came
  runs into its deadline. A partial last line at EOF is dropped;
- the read stream ends (``anyio.EndOfStream``) when stdout ends (the server exited or closed it), and
  ``on_end`` is called then (hookgate marks the session dead: its calls in flight fail, the next call starts
  a new server); a send after the server closed its stdin raises ``anyio.BrokenResourceError`` (the
  dispatcher answers ``CONNECTION_CLOSED``, and hookgate replaces the session). When the server closes its
  stdin but is still running ``STDIN_GRACE`` seconds later, the session ends as well (``on_end``: its calls in
  flight fail instead of waiting for answers to requests it never read); the grace lets the answers of a
  server that wrote them and exited be read first (the SDK's ``stdio_client`` ends the read side at the
  first failed write);
- shutdown follows the MCP spec: stdin is closed, the server gets ``PROCESS_TERMINATION_TIMEOUT`` seconds
  to exit, then its whole process group gets SIGTERM and, ``FORCE_KILL_TIMEOUT`` seconds later, SIGKILL.
  Shutdown runs to its end even when the owning task is cancelled meanwhile (the cancellation is re-raised
  afterwards), so no server outlives its session; every wait in it is bounded.

A line longer than ``MAX_LINE`` bytes ends the stream (the session is dead; the next call starts anew).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import tempfile
from collections.abc import AsyncIterator, Callable
from typing import IO, Any, Self

logger = logging.getLogger(__name__)

MAX_LINE = 1 << 24
"""Longest line read from a server (bytes, 16 MiB, the cap on a command hook's stdout): far above any tool
answer; a longer one ends the session (its call fails, a deny with ``failClosed``) instead of being held in
memory whole, once per call in flight."""
PROCESS_TERMINATION_TIMEOUT = 2.0
"""Seconds a server gets to exit on its own after its stdin is closed (the SDK's value)."""
FORCE_KILL_TIMEOUT = 2.0
"""Seconds between SIGTERM and SIGKILL to the server's process group (the SDK's value)."""
KILL_REAP_TIMEOUT = 2.0
"""Seconds to wait for the server to be reaped after SIGKILL (only an unkillable process runs this out)."""
POLL_INTERVAL = 0.01
"""Seconds between checks while waiting for the server or its process group to exit."""
STDIN_GRACE = 0.5
"""Seconds after the server closed its stdin before a server that still runs is given up (see above)."""
STDERR_TAIL = 4096
"""Bytes of a stdio server's stderr read back to explain why it died."""
ERRLOG_CAP = 1 << 20
"""A stdio server's stderr file is emptied when it grows past this many bytes (when ``ErrLog.trim`` runs)."""
MAX_IGNORED = 1000
"""Lines in a row that are not JSON-RPC messages after which a stdio server is given up (its session ends,
its calls fail, the next call starts it again): a server that floods stdout (a log written there, ``yes``)
would otherwise be read for ever, holding its calls past their deadline."""
FLUSH_AT = 1 << 18
"""Buffered bytes at which ``send`` writes at once instead of at the end of the loop iteration."""


class ErrLog:
    """A stdio server's stderr: an unlinked temp file in append mode (``file``, handed to the server). Its last
    line says why a server died (``tail``); ``trim`` empties it past ``ERRLOG_CAP`` bytes."""

    def __init__(self) -> None:
        fd, path = tempfile.mkstemp(prefix="hookgate-mcp-", suffix=".stderr")
        with contextlib.suppress(OSError):
            os.unlink(path)
        with contextlib.suppress(ImportError, OSError):
            import fcntl

            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)
        self.file = os.fdopen(fd, "w", encoding="utf-8")
        self.fd = fd

    def tail(self) -> str:
        """The last non-empty line written (at most 300 characters), or ''."""
        try:
            size = os.fstat(self.fd).st_size
            data = os.pread(self.fd, STDERR_TAIL, max(0, size - STDERR_TAIL))
        except (OSError, ValueError, AttributeError):
            return ""
        for line in reversed(data.decode("utf-8", "replace").splitlines()):
            if line.strip():
                return line.strip()[:300]
        return ""

    def trim(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            if os.fstat(self.fd).st_size > ERRLOG_CAP:
                os.ftruncate(self.fd, 0)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.file.close()


class _Out(asyncio.BaseProtocol):
    """The protocol of the stdin pipe: flow control (``drain``) and the pipe's end (``lost``)."""

    def __init__(self, on_lost: Callable[[], None]) -> None:
        self._on_lost = on_lost
        self.paused = False
        self._waiters: list[asyncio.Future[None]] = []
        self.lost = False

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self._wake()
        self._on_lost()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def drain(self) -> None:
        """Wait while the pipe is full (returns at once when the pipe is gone)."""
        while self.paused and not self.lost:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter


class ReadStreamBase:
    """What the SDK's ``ReadStream`` protocol asks beyond ``receive`` and ``aclose`` (which a subclass
    defines): async iteration, up to ``anyio.EndOfStream``, and use as an async context manager that
    closes the stream on exit."""

    async def receive(self) -> Any:
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class MessageReader(ReadStreamBase):
    """The read stream (``ReadStream[SessionMessage | Exception]``): one parsed stdout line per ``receive``."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        on_end: Callable[[], None],
        *,
        name: str = "",
        redact: tuple[str, ...] = (),
    ) -> None:
        from mcp.shared.message import SessionMessage
        from mcp.types import jsonrpc_message_adapter

        self._reader = reader
        self._on_end = on_end
        self._parse = jsonrpc_message_adapter.validate_json
        self._message = SessionMessage
        self._ended = False
        self._closed = False
        self._name = name
        self._redact = redact
        self.ignored = 0
        """Lines read that were not JSON-RPC messages (dropped)."""
        self._garbage = 0  # such lines since the last message

    async def receive(self) -> Any:
        import anyio

        if self._closed:
            raise anyio.ClosedResourceError
        while not self._ended:
            try:
                line = await self._reader.readline()
            except ValueError:  # longer than MAX_LINE: the stream cannot be read on
                logger.warning("an MCP server wrote a line longer than %d bytes; the session is closed", MAX_LINE)
                line = b""
            if not line.endswith(b"\n"):  # EOF (a partial last line is dropped, as the SDK does)
                self._ended = True
                self._on_end()
                break
            try:
                message = self._message(self._parse(line, by_name=False))
            except ValueError:  # pydantic's ValidationError: dropped here, never handed to the SDK
                self._ignore(line)
                self._garbage += 1
                if self._garbage >= MAX_IGNORED:  # `yes`, a log to stdout: no answer is coming
                    self._give_up()
                    break
                if self._garbage % 64 == 0:
                    await asyncio.sleep(0)  # a buffered flood must not hold the loop (deadlines, other calls)
                continue
            self._garbage = 0
            return message
        raise anyio.EndOfStream

    def _give_up(self) -> None:
        who = f"MCP server {self._name!r}" if self._name else "an MCP server"
        logger.warning(
            "%s wrote %d lines in a row that are not JSON-RPC messages; the session is closed", who, self._garbage
        )
        self._ended = True
        self._on_end()

    def _ignore(self, line: bytes) -> None:
        """Drop a stdout line that is not a JSON-RPC message (a banner, a stray print): the first one of the
        session is logged as one redacted line, later ones at debug level only."""
        from handlers.mcp_logs import one_line

        self.ignored += 1
        level = logging.WARNING if self.ignored == 1 else logging.DEBUG
        if logger.isEnabledFor(level):
            who = f"MCP server {self._name!r}" if self._name else "an MCP server"
            text = one_line(line.decode("utf-8", "replace"), self._redact, limit=200)
            more = " (later ones are not logged)" if self.ignored == 1 else ""
            logger.log(level, "%s wrote a line that is not a JSON-RPC message, ignored%s: %s", who, more, text)

    async def aclose(self) -> None:
        self._closed = True


class MessageWriter:
    """The write stream (``WriteStream[SessionMessage]``): ``send`` serializes into a buffer that is written
    to the pipe once per event-loop iteration (or at once past ``FLUSH_AT`` bytes), waiting only while the
    pipe is full."""

    def __init__(
        self, transport: asyncio.WriteTransport, protocol: _Out, on_broken: Callable[[], None] | None = None
    ) -> None:
        self._transport = transport
        self._protocol = protocol
        self._on_broken = on_broken
        self._loop = asyncio.get_running_loop()
        self._chunks: list[bytes] = []
        self._size = 0
        self._scheduled = False
        self._closed = False

    async def send(self, item: Any) -> None:
        import anyio

        if self._closed:
            raise anyio.ClosedResourceError
        if self._protocol.lost or self._transport.is_closing():
            if self._on_broken is not None:
                self._on_broken()
            raise anyio.BrokenResourceError
        data = item.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
        self._chunks.append(data)
        self._size += len(data)
        if self._size >= FLUSH_AT:
            self.flush()
        elif not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self.flush)
        if self._protocol.paused:
            await self._protocol.drain()

    def flush(self) -> None:
        """Write what is buffered (dropped when the pipe is gone: the read side ends then)."""
        self._scheduled = False
        if not self._chunks:
            return
        data = self._chunks[0] if len(self._chunks) == 1 else b"".join(self._chunks)
        self._chunks.clear()
        self._size = 0
        if not (self._protocol.lost or self._transport.is_closing()):
            self._transport.write(data)

    async def aclose(self) -> None:
        self.flush()
        self._closed = True

    async def __aenter__(self) -> MessageWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


# ---------------------------------------------------------------------------- the process


async def _exited(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Whether ``proc`` exited (and was reaped) within ``timeout`` seconds (polled every millisecond at
    first, then less often up to ``POLL_INTERVAL``: ``hookgate run`` waits for its server's exit)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    delay = 0.001
    while proc.poll() is None:
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(delay)
        delay = min(delay * 1.5, POLL_INTERVAL)
    return True


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to process group ``pgid``; False when the group is gone."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # some member is not ours to signal (or a zombie): never proof the group is gone
        pass
    return True


async def _terminate_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server's process group, SIGKILL what is left after ``FORCE_KILL_TIMEOUT`` seconds (the
    SDK's ``terminate_posix_process_tree``; the leader's pid is the group id, as it started a session)."""
    pgid = proc.pid
    if not _signal_group(pgid, signal.SIGTERM):
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + FORCE_KILL_TIMEOUT
    while loop.time() < deadline:
        proc.poll()  # reap the leader: a zombie leader keeps the group alive
        if not _signal_group(pgid, 0):
            return
        await asyncio.sleep(POLL_INTERVAL)
    _signal_group(pgid, signal.SIGKILL)


async def _stop(proc: subprocess.Popen[bytes], writer: MessageWriter, stdin: asyncio.WriteTransport) -> None:
    """Close stdin (after what is buffered), let the server exit, else terminate its process group."""
    writer.flush()
    stdin.close()
    if not await _exited(proc, PROCESS_TERMINATION_TIMEOUT):
        await _terminate_group(proc)
        if not await _exited(proc, KILL_REAP_TIMEOUT):
            logger.warning("MCP server process %d is still alive after SIGKILL; abandoning it", proc.pid)


async def _finish(stop: asyncio.Task[None]) -> None:
    """Wait for ``stop`` even when this task is cancelled meanwhile (re-raised at the end)."""
    cancelled = False
    while not stop.done():
        try:
            await asyncio.shield(stop)
        except asyncio.CancelledError:
            if stop.done():
                break
            cancelled = True
    with contextlib.suppress(Exception):
        stop.result()
    if cancelled:
        raise asyncio.CancelledError


@contextlib.asynccontextmanager
async def stdio_transport(
    command: str,
    args: list[str],
    env: dict[str, str] | None,
    cwd: str | None,
    errlog: IO[str],
    on_end: Callable[[], None],
    *,
    name: str = "",
    redact: tuple[str, ...] = (),
    on_broken: Callable[[], None] | None = None,
) -> AsyncIterator[tuple[MessageReader, MessageWriter]]:
    """Start ``command args`` and yield ``(read stream, write stream)`` of its MCP messages (module docstring).
    ``name`` (the server's) and ``redact`` (``audit.redact`` patterns) are for the log line about a stdout
    line that is not JSON-RPC. ``on_broken`` is called when a send is refused because the server's stdin is
    gone (the SDK answers that call with its connection-closed error).

    Raises OSError (or ValueError for arguments the OS refuses) when the server cannot be started.
    """
    from mcp.client.stdio import get_default_environment

    proc = subprocess.Popen(
        [command, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errlog,
        env=get_default_environment() | (env or {}),
        cwd=cwd,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    loop = asyncio.get_running_loop()
    lines = asyncio.StreamReader(limit=MAX_LINE, loop=loop)
    stdout: asyncio.ReadTransport | None = None
    stopping = False
    timers: list[asyncio.TimerHandle] = []

    def deaf() -> None:
        if not stopping and proc.poll() is None:
            logger.warning("MCP server process %d closed its stdin but still runs; the session is closed", proc.pid)
            on_end()

    def stdin_closed() -> None:
        if not stopping:
            timers.append(loop.call_later(STDIN_GRACE, deaf))

    try:
        stdout, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(lines, loop=loop), proc.stdout)
        stdin, protocol = await loop.connect_write_pipe(lambda: _Out(stdin_closed), proc.stdin)
    except BaseException:  # the pipes could not be set up (or a cancellation came first): no grace
        _signal_group(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(KILL_REAP_TIMEOUT)
        proc.stdin.close()
        if stdout is not None:
            stdout.close()
        else:
            proc.stdout.close()
        raise
    writer = MessageWriter(stdin, protocol, on_broken)
    try:
        yield MessageReader(lines, on_end, name=name, redact=redact), writer
    finally:
        stopping = True
        for timer in timers:
            timer.cancel()
        try:
            await _finish(asyncio.ensure_future(_stop(proc, writer, stdin)))
        finally:
            if not stdin.is_closing():  # _stop did not get to close it
                stdin.abort()
            stdout.close()
