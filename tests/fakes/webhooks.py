"""Webhook receivers for the ``http`` handler tests: real servers on 127.0.0.1, started by the test.

``Receiver`` is a Starlette app under uvicorn in a thread (its own event loop). Routes (all POST):

- ``/answer/{name}``: answers ``receiver.answers[name]`` = ``(status, body bytes, headers)``
- ``/signed``: verifies the Standard Webhooks signature with the ``standardwebhooks`` package
  (secret ``receiver.secret``); 200 with an ``additionalContext`` naming the verified id, else 401
- ``/flaky/{status}``: ``receiver.fail_first`` times ``status`` (with ``Retry-After: 0``), then a deny
- ``/slow-body``: starts a 200 JSON body, then stalls for 30 s
- ``/big``: 2 MiB of JSON-looking bytes (``Content-Length`` declared)
- ``/chunked/deny``, ``/chunked/big``: a deny in small chunks, 2 MiB in 64 KiB chunks (chunked
  transfer encoding, no ``Content-Length``)
- ``/redirect``: 307 to ``/answer/deny``
- ``/hold``: waits until ``receiver.release`` is set, then answers ``{}``

Every request is recorded in ``receiver.calls`` (path, lowercased headers, body bytes, the client's port) before it is
answered; ``receiver.done`` lists paths whose answer completed. ``ClosingServer`` accepts a connection,
reads the request head and closes without answering.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

DENY = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "denied by the webhook",
    }
}


@dataclass(frozen=True)
class Call:
    path: str
    headers: dict[str, str]
    body: bytes
    peer_port: int = 0

    def json(self) -> Any:
        return json.loads(self.body)


def wait_for(predicate: Any, timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


class Receiver:
    """``with Receiver(secret=...) as r: r.url("/answer/deny"), r.calls``."""

    def __init__(self, secret: str | None = None, tls: tuple[str, str] | None = None) -> None:
        self.secret = secret
        self.tls = tls  # (certfile, keyfile): serve https
        self.calls: list[Call] = []
        self.done: list[str] = []
        self.answers: dict[str, tuple[int, bytes, dict[str, str]]] = {
            "deny": (200, json.dumps(DENY).encode(), {"content-type": "application/json"}),
            "empty": (200, b"", {}),
            "garbage": (200, b"hello, I am not JSON", {"content-type": "text/plain"}),
            "array": (200, b"[1, 2]", {"content-type": "application/json"}),
            "error500": (500, b"internal trouble\nsecond line", {"content-type": "text/plain"}),
            "notfound": (404, b"no such hook", {}),
        }
        self.fail_first = 1
        self.release = threading.Event()
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.port = 0

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}{path}"

    def calls_to(self, path: str) -> list[Call]:
        return [c for c in self.calls if c.path == path]

    def _app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import Response, StreamingResponse
        from starlette.routing import Route

        async def record(request: Request) -> Call:
            headers = {k.lower(): v for k, v in request.headers.items()}
            call = Call(request.url.path, headers, await request.body(), request.client.port if request.client else 0)
            self.calls.append(call)
            return call

        async def answer(request: Request) -> Response:
            await record(request)
            status, body, headers = self.answers[request.path_params["name"]]
            self.done.append(request.url.path)
            return Response(body, status_code=status, headers=headers)

        async def signed(request: Request) -> Response:
            from standardwebhooks import Webhook

            call = await record(request)
            try:
                Webhook(self.secret or "").verify(call.body, call.headers)
            except Exception as exc:
                return Response(json.dumps({"error": str(exc)}).encode(), status_code=401)
            return Response(
                json.dumps(
                    {
                        "hookSpecificOutput": {
                            "hookEventName": call.json()["hook_event_name"],
                            "additionalContext": f"verified {call.headers['webhook-id']}",
                        }
                    }
                ).encode()
            )

        async def flaky(request: Request) -> Response:
            await record(request)
            if len(self.calls_to(request.url.path)) <= self.fail_first:
                return Response(
                    b"try again", status_code=int(request.path_params["status"]), headers={"retry-after": "0"}
                )
            return Response(json.dumps(DENY).encode(), headers={"content-type": "application/json"})

        async def slow_body(request: Request) -> Response:
            await record(request)

            async def drip() -> AsyncIterator[bytes]:
                yield b'{"systemMessage": "'
                await asyncio.sleep(30)
                yield b'late"}'

            return StreamingResponse(drip(), media_type="application/json")

        async def big(request: Request) -> Response:
            await record(request)
            return Response(
                b'{"systemMessage": "' + b"x" * (2 * 1024 * 1024) + b'"}', headers={"content-type": "application/json"}
            )

        async def chunked(request: Request) -> Response:
            await record(request)
            if request.path_params["name"] == "deny":
                text = json.dumps(DENY).encode()
                parts = [text[i : i + 16] for i in range(0, len(text), 16)]
            else:
                parts = [b'{"systemMessage": "'] + [b"x" * 65536] * 32 + [b'"}']

            async def stream() -> AsyncIterator[bytes]:
                for part in parts:
                    yield part

            return StreamingResponse(stream(), media_type="application/json")

        async def redirect(request: Request) -> Response:
            await record(request)
            return Response(b"", status_code=307, headers={"location": "/answer/deny"})

        async def late(request: Request) -> Response:
            await record(request)
            await asyncio.sleep(0.5)
            return Response(json.dumps(DENY).encode(), headers={"content-type": "application/json"})

        async def hold(request: Request) -> Response:
            await record(request)
            while not self.release.is_set():
                await asyncio.sleep(0.01)
            self.done.append(request.url.path)
            return Response(b"{}", headers={"content-type": "application/json"})

        return Starlette(
            routes=[
                Route("/answer/{name}", answer, methods=["POST"]),
                Route("/signed", signed, methods=["POST"]),
                Route("/flaky/{status}", flaky, methods=["POST"]),
                Route("/slow-body", slow_body, methods=["POST"]),
                Route("/big", big, methods=["POST"]),
                Route("/chunked/{name}", chunked, methods=["POST"]),
                Route("/redirect", redirect, methods=["POST"]),
                Route("/hold", hold, methods=["POST"]),
                Route("/late", late, methods=["POST"]),
            ]
        )

    def __enter__(self) -> Receiver:
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # so asyncio sets NODELAY
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        tls: dict[str, Any] = {"ssl_certfile": self.tls[0], "ssl_keyfile": self.tls[1]} if self.tls else {}
        self._server = uvicorn.Server(uvicorn.Config(self._app(), log_level="warning", lifespan="off", **tls))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        wait_for(lambda: self._server.started, what="the receiver to start")
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)


def self_signed(directory: str, name: str) -> tuple[str, str]:
    """A self-signed certificate for DNS name ``name``: ``(certfile, keyfile)`` written to ``directory``."""
    import datetime
    import os

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    certfile, keyfile = os.path.join(directory, f"{name}.crt"), os.path.join(directory, f"{name}.key")
    with open(certfile, "wb") as fh:
        fh.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(keyfile, "wb") as fh:
        fh.write(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    return certfile, keyfile


def read_head(conn: socket.socket) -> bytes:
    """What ``conn`` sends up to and including the end of an HTTP head (less when it closes first)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


class ClosingServer:
    """Accepts connections on 127.0.0.1, reads the request head, answers ``answer`` (raw bytes; default:
    not a byte) and closes."""

    def __init__(self, answer: bytes = b"") -> None:
        self.answer = answer
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.2)
        self.port = self._sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            with conn:
                conn.settimeout(5)
                read_head(conn)
                if self.answer:
                    conn.sendall(self.answer)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ClosingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()
