"""Shared machinery for the fake model servers used by the end-to-end tests.

A fake is an in-process HTTP server on 127.0.0.1 (a free port, or a listening socket handed in,
e.g. one created inside a network namespace). Each test scripts the model's replies:

* a queue of steps, consumed one per *main* request (a request that offers tools to the model);
* a step is a reply (``Text``, ``ToolCall``, ``CustomToolCall``, ``Calls``, ``HttpError``), a
  plain ``str`` (text), a list of tool calls (parallel calls), or a callable that gets the parsed
  request body and returns one of those (or ``None`` for the default text);
* and/or one responder callable (``fake.respond_with(fn)``) for main requests the queue does
  not cover.

Side requests (routers, titles, JSON-schema checks, token counts...) never consume the script.
When the queue runs dry the fake answers ``default_text`` and counts it in ``exhausted``, so a
CLI that asks once more than scripted ends its turn instead of hanging.
Every request is recorded (``fake.requests``) for assertions.
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self
from urllib.parse import parse_qs, urlsplit

from tests.fakes.serving import ServerThread, server_on

JsonDict = dict[str, Any]


@dataclass(frozen=True)
class Text:
    """A plain assistant text answer (ends the model turn)."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """A function/tool call. ``call_id`` is generated when omitted (OpenAI) or left out (Gemini)."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    call_id: str | None = None


@dataclass(frozen=True)
class CustomToolCall:
    """An OpenAI Responses *custom* (freeform) tool call, e.g. Codex ``apply_patch``."""

    name: str
    input: str
    call_id: str | None = None


@dataclass(frozen=True)
class Calls:
    """Several tool calls in one model turn (parallel calls)."""

    calls: tuple[ToolCall | CustomToolCall, ...]


@dataclass(frozen=True)
class HttpError:
    """Answer the request with an HTTP error instead of a model reply."""

    status: int = 500
    message: str = "scripted failure"


Reply = Text | ToolCall | CustomToolCall | Calls | HttpError
ReplyLike = Reply | str | Sequence[ToolCall | CustomToolCall]
Responder = Callable[[JsonDict], ReplyLike | None]
Step = ReplyLike | Responder


def as_reply(value: ReplyLike) -> Reply:
    """Normalise the shorthand forms (``str``, list of calls) into a ``Reply``."""
    if isinstance(value, str):
        return Text(value)
    if isinstance(value, Text | ToolCall | CustomToolCall | Calls | HttpError):
        return value
    calls = tuple(value)
    for call in calls:
        if not isinstance(call, ToolCall | CustomToolCall):
            raise TypeError(f"not a tool call: {call!r}")
    return Calls(calls)


def reply_calls(reply: Reply) -> tuple[ToolCall | CustomToolCall, ...]:
    if isinstance(reply, Calls):
        return reply.calls
    if isinstance(reply, ToolCall | CustomToolCall):
        return (reply,)
    return ()


@dataclass
class RecordedRequest:
    """One HTTP request as the fake saw it (the API key header is masked)."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    kind: str  # "main" (scripted), "side" (fallback), "other" (listing, 404...)
    reply: Reply | None
    status: int
    at: float

    @property
    def json(self) -> JsonDict:
        return self.body if isinstance(self.body, dict) else {}


_SECRET_HEADERS = frozenset({"authorization", "x-goog-api-key", "x-api-key", "api-key"})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            raw = b"".join(chunks)
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            raw = gzip.decompress(raw)
        return raw

    def _handle(self) -> None:
        raw = self._read_body()
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        url = urlsplit(self.path)
        headers = {k.lower(): ("***" if k.lower() in _SECRET_HEADERS else v) for k, v in self.headers.items()}
        fake = self.server.fake
        answer = fake._dispatch(self.command, url.path, parse_qs(url.query), headers, body)
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        self.wfile.write(answer.body)
        self.wfile.flush()

    do_GET = _handle
    do_POST = _handle
    do_PUT = _handle
    do_DELETE = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeModelServer


@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    body: bytes

    @classmethod
    def json(cls, obj: object, status: int = 200) -> Answer:
        return cls(status, "application/json", json.dumps(obj).encode())

    @classmethod
    def sse(cls, text: str) -> Answer:
        return cls(200, "text/event-stream", text.encode())


class FakeModelServer:
    """Base class: HTTP plumbing, the script queue and the request log."""

    api_name: ClassVar[str] = "fake"

    def __init__(
        self,
        *,
        sock: socket.socket | None = None,
        default_text: str = "done",
        side_text: str = "ok",
    ) -> None:
        self.default_text = default_text
        self.side_text = side_text
        self.exhausted = 0
        self._sock = sock
        self._lock = threading.Lock()
        self._steps: deque[Step] = deque()
        self._responder: Responder | None = None
        self._requests: list[RecordedRequest] = []
        self._serving: ServerThread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> Self:
        if self._serving is not None:
            return self
        server = server_on(self._sock or socket.create_server(("127.0.0.1", 0)), _Handler, _Server)
        server.fake = self  # type: ignore[attr-defined]
        self._serving = ServerThread(server, f"fake-{self.api_name}")
        return self

    def close(self) -> None:
        if self._serving is not None:
            self._serving.stop()
            self._serving = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._serving is None:
            raise RuntimeError("fake server not started")
        return self._serving.port

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.origin

    # -- scripting -------------------------------------------------------------------------
    def script(self, *steps: Step) -> Self:
        """Queue replies for the next main requests, one step per request.

        ``fake.script(ToolCall("run_shell_command", {"command": "ls"}), "done")``. A list of tool
        calls as one step means parallel calls in one turn. A callable step gets the request
        body and answers that one request.
        """
        with self._lock:
            self._steps.extend(steps)
        return self

    def respond_with(self, responder: Responder | None) -> Self:
        """Answer every main request the queue does not cover with ``responder(body)``."""
        with self._lock:
            self._responder = responder
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._steps)

    def _next_reply(self, body: JsonDict) -> Reply:
        with self._lock:
            step: Step | None = self._steps.popleft() if self._steps else self._responder
            if step is None:
                self.exhausted += 1
                return Text(self.default_text)
        value = step(body) if callable(step) else step
        return Text(self.default_text) if value is None else as_reply(value)

    # -- log -------------------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def main_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == "main"]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _dispatch(
        self,
        method: str,
        path: str,
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: Any,
    ) -> Answer:
        try:
            kind, reply, answer = self.route(method, path, query, headers, body)
        except Exception as exc:  # a broken fake must show up in the log, not hang the CLI
            kind, reply = "error", None
            answer = Answer.json({"error": {"code": 500, "message": f"fake crashed: {exc!r}"}}, 500)
        self._record(RecordedRequest(method, path, query, headers, body, kind, reply, answer.status, time.time()))
        return answer

    def route(
        self,
        method: str,
        path: str,
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: Any,
    ) -> tuple[str, Reply | None, Answer]:
        raise NotImplementedError


def sse_event(data: object, event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n"
