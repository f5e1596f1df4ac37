"""In-process fake of the Anthropic Messages API, for unit tests and the Claude Code e2e suite.

API::

    from tests.fakes.anthropic_api import FakeAnthropic, bash, error, text, tool_use, verdict

    with FakeAnthropic() as fake:                  # serves on 127.0.0.1:<free port> in a thread
        fake.script(bash("rm -rf /tmp/victim"), text("done"))  # queued replies, one per scripted call
        fake.script(lambda body: text(f"{len(body['messages'])} messages"))  # built from the request
        client = anthropic.Anthropic(base_url=fake.base_url, api_key="sk-test")
        client.messages.create(...)                # streaming or not
        fake.requests           # every request in order: RecordedRequest(method, path, headers, body, kind)
        fake.message_requests   # only POST /v1/messages
        fake.pending            # script items not consumed yet

Replies: ``text(s)``, ``tool_use(name, input)``, ``bash(command)``, ``verdict(ok, reason)`` (a JSON
verdict as text, as prompt hooks and LLM judges expect), ``json_text(obj)``, ``error(status, type)``;
``delayed(reply, seconds)`` answers late (for timeout tests).

Which calls consume the script: every ``POST /v1/messages`` except side calls. By default a side call
is a Claude Code CLI request (User-Agent ``claude-cli/...``) with no tools and no JSON-schema output
format, e.g. title generation; pass ``is_side_call=`` to change that. Side calls, calls made after the
script ran out (kind ``"exhausted"``) and ``count_tokens`` are answered with ``fake.fallback`` or an
estimate, and never consume the script. ``fake.responder`` (``body -> Reply | None``), when set, is
asked first for every scripted call.

Also served: ``?beta=true``, ``x-api-key`` or ``Authorization: Bearer`` auth (``api_key=`` to require
one value), ``role: "system"`` messages, ``HEAD /`` and ``GET /`` (the CLI's preflight),
``POST /v1/messages/count_tokens``, ``GET /v1/models[/{id}]``. Anything else gets an Anthropic-style 404.
Pass ``sock=`` (a bound, listening socket) to serve on a socket made elsewhere, e.g. in a network namespace.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.fakes.serving import ServerThread, listening_socket

JSON = dict[str, Any]

__all__ = [
    "FakeAnthropic",
    "RecordedRequest",
    "Reply",
    "TextBlock",
    "ToolUseBlock",
    "bash",
    "delayed",
    "error",
    "is_cli_side_call",
    "json_text",
    "text",
    "tool_results",
    "tool_use",
    "verdict",
]


@dataclass(frozen=True)
class TextBlock:
    text: str


@dataclass(frozen=True)
class ToolUseBlock:
    name: str
    input: JSON
    id: str | None = None  # None: a fresh ``toolu_fake_...`` id per answer


Block = TextBlock | ToolUseBlock


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``status != 200`` makes it an Anthropic error response."""

    content: tuple[Block, ...] = ()
    stop_reason: str | None = None  # None: "tool_use" if a tool is called, else "end_turn"
    status: int = 200
    error_type: str = ""
    error_message: str = ""
    delay: float = 0.0


ScriptItem = Reply | Callable[[JSON], Reply]
Responder = Callable[[JSON], Reply | None]
SideCallPredicate = Callable[[JSON, Mapping[str, str]], bool]


def text(value: str, *, stop_reason: str | None = None) -> Reply:
    return Reply(content=(TextBlock(value),), stop_reason=stop_reason)


def tool_use(name: str, input: JSON, *, preamble: str | None = None, id: str | None = None) -> Reply:
    blocks: tuple[Block, ...] = (ToolUseBlock(name, dict(input), id),)
    if preamble is not None:
        blocks = (TextBlock(preamble), *blocks)
    return Reply(content=blocks)


def bash(command: str, description: str = "run a shell command") -> Reply:
    return tool_use("Bash", {"command": command, "description": description})


def json_text(value: Any) -> Reply:
    return text(json.dumps(value))


def verdict(ok: bool, reason: str = "", **extra: Any) -> Reply:
    return json_text({"ok": ok, "reason": reason, **extra})


def error(status: int = 529, type: str = "overloaded_error", message: str = "Overloaded") -> Reply:
    return Reply(status=status, error_type=type, error_message=message)


def tool_results(body: JSON) -> list[JSON]:
    """All ``tool_result`` blocks in a Messages request body, oldest first."""
    found: list[JSON] = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            found.extend(b for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
    return found


def _wants_json_schema(body: JSON) -> bool:
    output_config = body.get("output_config") or {}
    fmt = output_config.get("format") if isinstance(output_config, dict) else None
    return isinstance(fmt, dict) and fmt.get("type") == "json_schema"


def is_cli_side_call(body: JSON, headers: Mapping[str, str]) -> bool:
    """Default side-call test: a claude-cli request without tools that is not a prompt hook."""
    if not headers.get("user-agent", "").startswith("claude-cli/"):
        return False
    return not body.get("tools") and not _wants_json_schema(body)


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    raw: bytes
    body: Any = None  # parsed JSON, or None
    kind: str = "other"  # scripted | exhausted | side | count_tokens | preflight | models | other
    status: int = 0
    reply: JSON | None = None  # the message sent back, for POST /v1/messages

    @property
    def api_key(self) -> str:
        """The key sent as ``x-api-key`` or ``Authorization: Bearer`` (SDK 2.x sends the latter)."""
        return _api_key(self.headers)

    @property
    def stream(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True


# --------------------------------------------------------------------------- rendering


def _api_key(headers: Mapping[str, str]) -> str:
    bearer = headers.get("authorization", "")
    return headers.get("x-api-key") or (bearer[7:].strip() if bearer[:7].lower() == "bearer " else "")


def _new_id(prefix: str) -> str:
    return f"{prefix}_fake_{uuid.uuid4().hex[:24]}"


def _render_block(block: Block) -> JSON:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    return {"type": "tool_use", "id": block.id or _new_id("toolu"), "name": block.name, "input": block.input}


def _default_stop_reason(content: tuple[Block, ...]) -> str:
    return "tool_use" if any(isinstance(b, ToolUseBlock) for b in content) else "end_turn"


def render_message(reply: Reply, model: str, input_tokens: int) -> JSON:
    content = [_render_block(b) for b in reply.content]
    output_tokens = max(1, sum(len(json.dumps(b)) for b in content) // 4)
    return {
        "id": _new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": reply.stop_reason or _default_stop_reason(reply.content),
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def _chunks(value: str, size: int) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value), size)] or [""]


def _block_events(index: int, block: JSON, chunk_size: int) -> Iterator[JSON]:
    if block["type"] == "text":
        yield {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
        for piece in _chunks(block["text"], chunk_size):
            yield {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": piece},
            }
    else:
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        yield {"type": "content_block_start", "index": index, "content_block": start}
        for piece in _chunks(json.dumps(block["input"]), chunk_size):
            delta = {"type": "input_json_delta", "partial_json": piece}
            yield {"type": "content_block_delta", "index": index, "delta": delta}
    yield {"type": "content_block_stop", "index": index}


def sse_events(message: JSON, chunk_size: int = 40) -> Iterator[JSON]:
    """The Anthropic streaming event sequence for a finished message."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield {"type": "message_start", "message": start}
    yield {"type": "ping"}
    for index, block in enumerate(message["content"]):
        yield from _block_events(index, block, chunk_size)
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield {"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage["output_tokens"]}}
    yield {"type": "message_stop"}


def encode_sse(events: Iterator[JSON]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _error_body(error_type: str, message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": error_type, "message": message}}).encode()


# --------------------------------------------------------------------------- HTTP plumbing


@dataclass
class _Response:
    status: int
    body: bytes = b""
    content_type: str = "application/json"
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


def _json_response(status: int, value: Any) -> _Response:
    return _Response(status, json.dumps(value).encode())


def _api_error(status: int, error_type: str, message: str) -> _Response:
    return _Response(status, _error_body(error_type, message))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30  # idle keep-alive connections end after this
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_HEAD(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            return self._read_chunked()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _read_chunked(self) -> bytes:
        parts: list[bytes] = []
        while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
            parts.append(self.rfile.read(size))
            self.rfile.readline()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass
        return b"".join(parts)

    def _serve(self) -> None:
        url = urlsplit(self.path)
        request = RecordedRequest(
            method=self.command,
            path=url.path,
            query=dict(parse_qsl(url.query)),
            headers={k.lower(): v for k, v in self.headers.items()},
            raw=self._read_body(),
        )
        response = self.server.fake.handle(request)
        if response.delay:
            time.sleep(response.delay)
        self._send(response)

    def _send(self, response: _Response) -> None:
        self.send_response(response.status)
        self.send_header("content-type", response.content_type)
        self.send_header("content-length", str(len(response.body)))
        self.send_header("request-id", _new_id("req"))
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, sock: socket.socket, fake: FakeAnthropic) -> None:
        super().__init__(sock.getsockname()[:2], _Handler, bind_and_activate=False)
        self.socket.close()
        self.socket = sock
        self.server_address = sock.getsockname()[:2]
        self.fake = fake
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with contextlib.suppress(OSError):
            request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms Nagle stall per reply
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-reply (e.g. it timed out) is expected; anything else is printed."""
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


# --------------------------------------------------------------------------- the fake


MODELS = ("claude-opus-4-8", "claude-sonnet-4-6", "claude-haiku-4-5")


class FakeAnthropic:
    """A scripted Anthropic Messages API on 127.0.0.1. Use as a context manager."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        sock: socket.socket | None = None,
        api_key: str | None = None,
        fallback: Reply | None = None,
        is_side_call: SideCallPredicate = is_cli_side_call,
        chunk_size: int = 40,
    ) -> None:
        self._sock = sock or listening_socket(host, port)
        self.api_key = api_key
        self.fallback = fallback or text("ok")
        self.is_side_call = is_side_call
        self.chunk_size = chunk_size
        self.responder: Responder | None = None
        self._queue: deque[ScriptItem] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._serving: ServerThread | None = None

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> FakeAnthropic:
        self._serving = ServerThread(_Server(self._sock, self), "fake-anthropic")
        return self

    def stop(self) -> None:
        if self._serving is not None:
            self._serving.stop()
            self._serving = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----------------------------------------------------------------- test-facing API

    @property
    def port(self) -> int:
        return int(self._sock.getsockname()[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def script(self, *items: ScriptItem) -> None:
        """Queue replies; each scripted call consumes one. A callable item gets the request body."""
        with self._lock:
            self._queue.extend(items)

    def clear_script(self) -> None:
        with self._lock:
            self._queue.clear()

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.method == "POST" and r.path == "/v1/messages"]

    def requests_of(self, *kinds: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind in kinds]

    # ----------------------------------------------------------------- request handling

    def handle(self, request: RecordedRequest) -> _Response:
        response = self._route(request)
        request.status = response.status
        with self._lock:
            self._requests.append(request)
        return response

    def _route(self, request: RecordedRequest) -> _Response:
        method, path = request.method, request.path.rstrip("/") or "/"
        if path == "/" and method in ("HEAD", "GET"):
            request.kind = "preflight"
            return _json_response(200, {}) if method == "GET" else _Response(200)
        if path.startswith("/v1/") and (denied := self._check_auth(request.headers)):
            return denied
        if method == "POST" and path == "/v1/messages":
            return self._messages(request)
        if method == "POST" and path == "/v1/messages/count_tokens":
            return self._count_tokens(request)
        if method == "GET" and path.startswith("/v1/models"):
            return self._models(request, path.removeprefix("/v1/models").strip("/"))
        return _api_error(404, "not_found_error", f"fake: no route for {method} {request.path}")

    def _check_auth(self, headers: Mapping[str, str]) -> _Response | None:
        key = _api_key(headers)
        if not key:
            return _api_error(401, "authentication_error", "x-api-key header is required")
        if self.api_key is not None and key != self.api_key:
            return _api_error(401, "authentication_error", "invalid x-api-key")
        return None

    def _parse(self, request: RecordedRequest) -> JSON | _Response:
        try:
            body = json.loads(request.raw or b"null")
        except ValueError:
            return _api_error(400, "invalid_request_error", "body is not JSON")
        request.body = body
        if not isinstance(body, dict):
            return _api_error(400, "invalid_request_error", "body must be a JSON object")
        return body

    def _messages(self, request: RecordedRequest) -> _Response:
        body = self._parse(request)
        if isinstance(body, _Response):
            return body
        if problem := _invalid_messages_body(body):
            return _api_error(400, "invalid_request_error", problem)
        request.kind, reply = self._pick_reply(body, request.headers)
        if reply.status != 200:
            return _Response(reply.status, _error_body(reply.error_type, reply.error_message), delay=reply.delay)
        message = render_message(reply, str(body["model"]), max(1, len(request.raw) // 4))
        request.reply = message
        if body.get("stream") is True:
            payload = encode_sse(sse_events(message, self.chunk_size))
            return _Response(200, payload, "text/event-stream; charset=utf-8", reply.delay)
        return _Response(200, json.dumps(message).encode(), delay=reply.delay)

    def _pick_reply(self, body: JSON, headers: Mapping[str, str]) -> tuple[str, Reply]:
        if self.is_side_call(body, headers):
            return "side", self.fallback
        if self.responder is not None and (reply := self.responder(body)) is not None:
            return "scripted", reply
        with self._lock:
            item = self._queue.popleft() if self._queue else None
        if item is None:
            return "exhausted", self.fallback
        return "scripted", item if isinstance(item, Reply) else item(body)

    def _count_tokens(self, request: RecordedRequest) -> _Response:
        request.kind = "count_tokens"
        body = self._parse(request)
        if isinstance(body, _Response):
            return body
        return _json_response(200, {"input_tokens": max(1, len(request.raw) // 4)})

    def _models(self, request: RecordedRequest, model_id: str) -> _Response:
        request.kind = "models"
        entries = [{"type": "model", "id": m, "display_name": m, "created_at": "2026-01-01T00:00:00Z"} for m in MODELS]
        if not model_id:
            return _json_response(
                200, {"data": entries, "has_more": False, "first_id": MODELS[0], "last_id": MODELS[-1]}
            )
        found = [e for e in entries if e["id"] == model_id]
        if not found:
            return _api_error(404, "not_found_error", f"model: {model_id}")
        return _json_response(200, found[0])


def _invalid_messages_body(body: JSON) -> str | None:
    if not isinstance(body.get("model"), str):
        return "model: field required"
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: field required"
    messages = body.get("messages")
    if not isinstance(messages, list):
        return "messages: field required"
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant", "system"):
            return f"messages.{i}.role: must be user, assistant or system"
    return None


def delayed(reply: Reply, seconds: float) -> Reply:
    """The same reply, sent ``seconds`` late."""
    return replace(reply, delay=seconds)
