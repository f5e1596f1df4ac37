"""In-process fake of the OpenAI Chat Completions API (``POST /v1/chat/completions``), for the
``prompt``/``agent`` handler tests and benchmarks. Also what an OpenAI-compatible local server
(Ollama, vLLM, llama.cpp) looks like to the SDK.

API::

    from tests.fakes.openai_chat_api import FakeOpenAIChat, delayed, error, text, tool_call, verdict

    with FakeOpenAIChat() as fake:                   # 127.0.0.1:<free port>, served from a thread
        fake.script(tool_call("Read", {"path": "a.py"}), verdict(True, "fine"))
        client = openai.AsyncOpenAI(base_url=fake.base_url, api_key="sk-test")   # base_url ends in /v1
        fake.chat_requests[0].body                   # every request, parsed

Replies: ``text(s)``, ``verdict(ok, reason, **extra)`` (the verdict as JSON text),
``tool_call(name, args)`` and ``tool_calls([(name, args), ...])``, ``refusal(s)``,
``error(status, message, headers=)``; ``delayed(reply, seconds)`` answers late. Each chat request
consumes one scripted item (a callable item gets the request body); when the script is empty the
fake answers ``fallback``. Auth: any ``Authorization: Bearer`` key (``api_key=`` to require one).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.serving import ServerThread, listening_socket, server_on

JSON = dict[str, Any]


@dataclass(frozen=True)
class ChatReply:
    """One scripted answer; ``status != 200`` makes it an OpenAI-style error response."""

    content: str | None = None
    calls: tuple[tuple[str, Any], ...] = ()
    refusal: str | None = None
    finish_reason: str | None = None
    status: int = 200
    error_message: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0


ScriptItem = ChatReply | Callable[[JSON], ChatReply]


def text(value: str, *, finish_reason: str | None = None) -> ChatReply:
    return ChatReply(content=value, finish_reason=finish_reason)


def verdict(ok: bool, reason: str = "", **extra: Any) -> ChatReply:
    return text(json.dumps({"ok": ok, "reason": reason, **extra}))


def tool_call(name: str, args: Any) -> ChatReply:
    """A function call; ``args`` is sent as JSON (a ``str`` is sent verbatim, e.g. broken JSON)."""
    return ChatReply(calls=((name, args),))


def tool_calls(calls: list[tuple[str, Any]]) -> ChatReply:
    return ChatReply(calls=tuple(calls))


def refusal(value: str) -> ChatReply:
    return ChatReply(refusal=value)


def error(status: int = 500, message: str = "scripted failure", headers: dict[str, str] | None = None) -> ChatReply:
    return ChatReply(status=status, error_message=message, headers=tuple((headers or {}).items()))


def delayed(reply: ChatReply, seconds: float) -> ChatReply:
    return replace(reply, delay=seconds)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any = None
    status: int = 0


def render(reply: ChatReply, model: str, prompt_tokens: int) -> JSON:
    message: JSON = {"role": "assistant", "content": reply.content, "refusal": reply.refusal}
    if reply.calls:
        message["tool_calls"] = [
            {
                "id": f"call_{uuid.uuid4().hex[:16]}",
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for name, args in reply.calls
        ]
    finish = reply.finish_reason or ("tool_calls" if reply.calls else "stop")
    completion_tokens = max(1, len(json.dumps(message)) // 4)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:20]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


@dataclass
class _Response:
    status: int
    body: JSON
    delay: float = 0.0
    headers: tuple[tuple[str, str], ...] = field(default=())


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        request = RecordedRequest(
            self.command, self.path.split("?")[0], {k.lower(): v for k, v in self.headers.items()}
        )
        try:
            request.body = json.loads(raw) if raw else None
        except ValueError:
            request.body = raw.decode("utf-8", "replace")
        response = self.server.fake.handle(request)
        if response.delay:
            time.sleep(response.delay)
        data = json.dumps(response.body).encode()
        try:
            self.send_response(response.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in response.headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            pass  # the client gave up (a timeout test)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOpenAIChat


class FakeOpenAIChat:
    """A scripted Chat Completions API on 127.0.0.1. Use as a context manager."""

    def __init__(self, *, api_key: str | None = None, fallback: ChatReply | None = None) -> None:
        self.api_key = api_key
        self.fallback = fallback or text("ok")
        self.responder: Callable[[JSON], ChatReply | None] | None = None
        self._queue: deque[ScriptItem] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._serving: ServerThread | None = None

    def start(self) -> FakeOpenAIChat:
        server = server_on(listening_socket(), _Handler, _Server)
        server.fake = self  # type: ignore[attr-defined]
        self._serving = ServerThread(server, "fake-openai-chat")
        return self

    def stop(self) -> None:
        if self._serving is not None:
            self._serving.stop()
            self._serving = None

    def __enter__(self) -> FakeOpenAIChat:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._serving is not None, "fake not started"
        return self._serving.port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *items: ScriptItem) -> None:
        with self._lock:
            self._queue.extend(items)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.method == "POST" and r.path == "/v1/chat/completions"]

    def handle(self, request: RecordedRequest) -> _Response:
        response = self._route(request)
        request.status = response.status
        with self._lock:
            self._requests.append(request)
        return response

    def _route(self, request: RecordedRequest) -> _Response:
        auth = request.headers.get("authorization", "")
        key = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
        if not key or (self.api_key is not None and key != self.api_key):
            return _error(401, "invalid api key", "invalid_api_key")
        if request.method == "GET" and request.path == "/v1/models":
            return _Response(
                200,
                {"object": "list", "data": [{"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"}]},
            )
        if request.method != "POST" or request.path != "/v1/chat/completions":
            return _error(404, f"no route for {request.method} {request.path}", "not_found")
        body = request.body
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("model"), str)
            or not isinstance(body.get("messages"), list)
        ):
            return _error(400, "model and messages are required", "invalid_request_error")
        if body.get("stream"):
            return _error(400, "this fake does not stream", "invalid_request_error")
        reply = self._next(body)
        if reply.status != 200:
            return replace(
                _error(reply.status, reply.error_message, "scripted"), delay=reply.delay, headers=reply.headers
            )
        prompt_tokens = max(1, len(json.dumps(body)) // 4)
        return _Response(200, render(reply, body["model"], prompt_tokens), delay=reply.delay, headers=reply.headers)

    def _next(self, body: JSON) -> ChatReply:
        if self.responder is not None and (reply := self.responder(body)) is not None:
            return reply
        with self._lock:
            item = self._queue.popleft() if self._queue else None
        if item is None:
            return self.fallback
        return item if isinstance(item, ChatReply) else item(body)


def _error(status: int, message: str, code: str) -> _Response:
    return _Response(status, {"error": {"message": message, "type": code, "param": None, "code": code}})


def tool_messages(body: JSON) -> list[JSON]:
    """The ``role: tool`` messages of a request, oldest first."""
    return [m for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "tool"]
