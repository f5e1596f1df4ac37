"""``gateway.serve.protocol``: uvicorn's own h11 protocol, as ``hookgate serve`` configures it, driven by
real request bytes; the transport records what is written (the part under test is what reaches it)."""

from __future__ import annotations

import asyncio
from typing import Any

import uvicorn
from uvicorn.server import ServerState

from gateway.serve.protocol import read_deadline_protocol

REQUEST = b"POST /hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


class Recorder(asyncio.Transport):
    """A transport that keeps each ``write`` apart."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5555), "sockname": ("127.0.0.1", 8787)}.get(name, default)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def _served(app: Any, requests: bytes, transport: Recorder) -> Recorder:
    config = uvicorn.Config(app, http=read_deadline_protocol(5.0), log_level="warning", lifespan="off")
    config.load()
    protocol: Any = config.http_protocol_class(config=config, server_state=ServerState(), app_state={})  # type: ignore[call-arg]
    protocol.connection_made(transport)
    protocol.data_received(requests)
    for _ in range(20):
        await asyncio.sleep(0)
    protocol.connection_lost(None)
    return transport


def test_a_response_leaves_in_one_write() -> None:
    """uvicorn writes a response's head and its body apart (two sends, two TCP segments); behind hookgate's
    protocol they leave together, and two pipelined requests get two whole responses."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"11")]  # as serve's routes send
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b'{"ok":true}'})

    transport = asyncio.run(_served(app, REQUEST + REQUEST, Recorder()))
    assert len(transport.writes) == 2, transport.writes
    for written in transport.writes:
        assert written.startswith(b"HTTP/1.1 200 OK\r\n") and written.endswith(b'\r\n\r\n{"ok":true}')


def test_a_head_whose_body_comes_later_is_written_at_once_and_the_body_after() -> None:
    """A streamed answer (the head now, the body after a wait) is not held up until its body comes."""
    seen: list[int] = []
    transport = Recorder()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        seen.append(len(transport.writes))
        await send({"type": "http.response.body", "body": b"late"})

    asyncio.run(_served(app, REQUEST, transport))
    assert seen == [1]  # the head was out before the body was sent
    assert transport.writes[0].startswith(b"HTTP/1.1 200 OK") and b"late" in transport.writes[1]
