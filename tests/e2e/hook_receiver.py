"""A minimal endpoint for Claude Code ``type: "http"`` hooks: records each POST, answers fixed JSON.

Stands in for ``hookgate serve`` in the control scenario; serve it on ``sandbox.bind_loopback()``.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class HookCall:
    path: str
    headers: dict[str, str]
    body: Any


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.receiver.record(HookCall(self.path, headers, json.loads(raw or b"null")))
        payload = json.dumps(self.server.receiver.answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    receiver: HookReceiver


class HookReceiver:
    """``with HookReceiver(sock, answer) as r: ... r.url, r.calls``."""

    def __init__(self, sock: socket.socket, answer: Mapping[str, Any], path: str = "/hooks") -> None:
        self.answer = dict(answer)
        self.path = path
        self.calls: list[HookCall] = []
        self._lock = threading.Lock()
        self._server = _Server(sock.getsockname()[:2], _Handler, bind_and_activate=False)
        self._server.socket.close()
        self._server.socket = sock
        self._server.receiver = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.socket.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    def record(self, call: HookCall) -> None:
        with self._lock:
            self.calls.append(call)

    def __enter__(self) -> HookReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
